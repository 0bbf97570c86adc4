"""Benchmark: ``solve(p, "dual_rcd", sampling="permutation", tol=1e-6)`` end to end vs LIBLINEAR.

The question a user asks: "I call ``solve`` with a tolerance; how long does it take, against
LIBLINEAR's dual coordinate descent stopped at the same accuracy?" Both minimize the same
L2-regularized logistic regression without intercept,

    P(w) = (1/n) sum_j log(1 + exp(-b_j a_j^T w)) + (l2/2) ||w||^2,

scikit-learn's ``LogisticRegression(solver="liblinear", dual=True, C=1/(l2 n),
fit_intercept=False)`` (the mapping is checked in tests/test_peers_mapping.py).

Timed, wall clock, setup included, median of ``--repeats`` (5) runs interleaved across variants:

* ``after``: ``Problem(A, b, "logistic", l2)`` -> ``solve(p, "dual_rcd", sampling="permutation",
  dual_step=step, tol=tol)`` with every other argument at its default (adaptive evaluation
  schedule, no epoch cap, 600 s kernel-time budget). Its w must reach (P - P*)/P* <= tol, and
  its certified relative gap is reported.
* ``before``: the same call with ``pdsparse.solvers`` as of ``--before-commit`` (loaded from
  git; its defaults: a full evaluation after every epoch, ``max_epochs=100``). If git cannot
  give it, the current code with the same schedule (``eval_every=1, max_epochs=100,
  max_seconds=inf``, bit-identical traces by tests/test_stopping.py) stands in (``note``).
* ``ideal``: ``Problem`` -> ``make_kernel`` -> ``kernel.run(T)`` with T the nonzeros touched at
  the first point where the relative gap is <= tol on a trace evaluated every 1/16 epoch: the
  best any stopping rule based on the gap can do (no evaluation cost, perfect foresight).
* ``liblinear``: the fit with the least work that still reaches (P - P*)/P* <= tol, found by two
  searches: ``max_iter`` doubling then bisection (``tol=1e-15``), and ``tol`` in decades then
  quarter decades (``max_iter=100000``); the faster of the two settings is the reference
  (``liblinear_how``). This is an oracle stop for LIBLINEAR, not what its default does.

P(w) is evaluated with ``pdsparse.objective.primal`` outside every timer; P* comes from
``pdsparse.reference.reference_solution(problem, rtol=1e-12)``. Data: the LIBSVM mirror
(``--mirror``, else ``$PDSPARSE_DATA_MIRROR``, else /work/shared/datasets) read with
``pdsparse.data.libsvm.read_libsvm`` and scaled with ``normalize(A, "avg_example_norm")``
(Face-Off Sec. 7, as benchmarks/peers.py). One thread (OMP/OPENBLAS/MKL = 1).

Outputs (atomic): ``results/benchmarks/solve_vs_liblinear.csv`` (one row per data set x l2 x
dual step) and ``solve_vs_liblinear.md`` (table, machine, load average, versions).

Usage::

    python benchmarks/solve_vs_liblinear.py                       # 5 data sets, ~10 min
    python benchmarks/solve_vs_liblinear.py --datasets leu --steps newton --repeats 3
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    first_cap,
    interleaved,
    medians,
    require_peer,
    search_max_iter,
    search_tol,
)

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "results" / "benchmarks"
DATASETS = ("leu", "duke", "colon-cancer", "gisette_scale.t", "ijcnn1.tr")
LAMS = {"1/n": 1.0, "0.1/n": 0.1}
BEFORE_COMMIT = "6339f71"  # pdsparse.solvers before the adaptive schedule (issue 7)
SEED = 0
TRACE_EVAL_EVERY = 1.0 / 16
LL_MAX_ITER = 100_000
BISECT_REL = 0.03


def log(msg: str) -> None:
    print(f"[solve_vs_liblinear {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The timed calls
# ---------------------------------------------------------------------------------------------


def load_before_solvers(commit: str):
    """``pdsparse.solvers`` as of ``commit``, as a separate module (None if git cannot)."""
    try:
        src = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:src/pdsparse/solvers.py"],
                             capture_output=True, text=True, check=True, timeout=30).stdout
        mod = types.ModuleType("pdsparse_solvers_before")
        sys.modules[mod.__name__] = mod  # dataclasses look their module up
        exec(compile(src, f"{commit}:src/pdsparse/solvers.py", "exec"), mod.__dict__)
        return mod
    except Exception as exc:  # noqa: BLE001 - any failure: fall back, and say so
        log(f"cannot load solvers.py at {commit} ({exc}); 'before' = the fixed schedule")
        return None


def run_after(A, b, l2, step, tol):
    from pdsparse.problem import Problem
    from pdsparse.solvers import solve

    p = Problem(A, b, loss="logistic", l2=l2)
    return solve(p, "dual_rcd", sampling="permutation", dual_step=step, tol=tol, seed=SEED)


def run_before(A, b, l2, step, tol, before_mod):
    from pdsparse.problem import Problem

    p = Problem(A, b, loss="logistic", l2=l2)
    if before_mod is not None:
        return before_mod.solve(p, "dual_rcd", sampling="permutation", dual_step=step, tol=tol,
                                seed=SEED)
    from pdsparse.solvers import solve

    return solve(p, "dual_rcd", sampling="permutation", dual_step=step, tol=tol, seed=SEED,
                 eval_every=1.0, max_epochs=100, max_seconds=math.inf)


def run_ideal(A, b, l2, step, budget):
    from pdsparse.problem import Problem
    from pdsparse.solvers import make_kernel

    p = Problem(A, b, loss="logistic", l2=l2)
    k = make_kernel(p, "dual_rcd", "permutation", step, SEED)
    k.run(budget)
    return k.solution().copy()


def liblinear_fit(A, b, l2, max_iter, tol):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    est = LogisticRegression(solver="liblinear", dual=True, C=1.0 / (l2 * A.shape[0]),
                             fit_intercept=False, tol=tol, max_iter=int(max_iter),
                             random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(A, b)
    return est.coef_.ravel().copy()


# ---------------------------------------------------------------------------------------------
# One data set and l2
# ---------------------------------------------------------------------------------------------


def ideal_budget(A, b, l2, step, tol) -> tuple[int, float]:
    """Nonzeros touched (and epochs) at the first 1/16-epoch point with relative gap <= tol."""
    from pdsparse.problem import Problem
    from pdsparse.solvers import solve

    p = Problem(A, b, loss="logistic", l2=l2)
    r = solve(p, "dual_rcd", sampling="permutation", dual_step=step, tol=tol, seed=SEED,
              eval_every=TRACE_EVAL_EVERY, max_epochs=10_000)
    last = r.trace.iloc[-1]
    if r.status != "converged":
        raise RuntimeError(f"trace for the ideal stop did not converge: {r.status}")
    return int(round(last.epoch * p.nnz)), float(last.epoch)


def search_liblinear(A, b, l2, rel, tol) -> list[dict]:
    """Candidate settings reaching rel(w) <= tol: the least max_iter and the loosest tol."""
    found = []
    runs, _ = search_max_iter(lambda cap: {"rel": rel(liblinear_fit(A, b, l2, cap, 1e-15))},
                              [tol], LL_MAX_ITER, bisect_rel=BISECT_REL)
    hi = first_cap(runs, tol)
    if hi is not None:
        found.append({"max_iter": hi, "tol": 1e-15, "how": f"max_iter={hi}, tol=1e-15"})
    best = search_tol(lambda t: rel(liblinear_fit(A, b, l2, LL_MAX_ITER, t)) <= tol)
    if best is not None:
        found.append({"max_iter": LL_MAX_ITER, "tol": best,
                      "how": f"tol={best:.3g}, max_iter={LL_MAX_ITER}"})
    return found


def bench(name, A, b, lam_spec, steps, args, before_mod) -> list[dict]:
    from pdsparse import objective
    from pdsparse.problem import Problem
    from pdsparse.reference import CertificationError, reference_solution

    n = A.shape[0]
    l2 = LAMS[lam_spec] / n
    tol = args.tol
    prob = Problem(A, b, loss="logistic", l2=l2, name=name)
    t = time.perf_counter()
    try:
        ref = reference_solution(prob, rtol=1e-12)
    except CertificationError:
        ref = reference_solution(prob, rtol=1e-10, max_epochs=100000)
    p_star = ref.p_star
    log(f"{name} {lam_spec}: P* = {p_star:.12g} (rel gap {ref.rel_gap:.1e}, "
        f"{time.perf_counter() - t:.1f} s)")

    def rel(w):
        return (objective.primal(prob, w) - p_star) / p_star

    cands = search_liblinear(A, b, l2, rel, tol)
    if not cands:
        raise RuntimeError(f"{name} {lam_spec}: LIBLINEAR never reached {tol:g}")
    budgets = {s: ideal_budget(A, b, l2, s, tol) for s in steps}
    # interleaved repeats: every variant once per round, so that load drifts hit all of them
    jobs = {f"ll:{i}": (lambda c=c: liblinear_fit(A, b, l2, c["max_iter"], c["tol"]))
            for i, c in enumerate(cands)}
    for s in steps:
        jobs[f"after:{s}"] = lambda s=s: run_after(A, b, l2, s, tol)
        jobs[f"before:{s}"] = lambda s=s: run_before(A, b, l2, s, tol, before_mod)
        jobs[f"ideal:{s}"] = lambda s=s: run_ideal(A, b, l2, s, budgets[s][0])
    times, outs = interleaved(jobs, args.repeats)
    med = medians(times)
    ll_key = min((k for k in med if k.startswith("ll:")), key=med.get)
    ll = cands[int(ll_key.split(":")[1])]
    ll_s = med[ll_key]
    ll_rel = rel(outs[ll_key])
    rows = []
    for s in steps:
        after, before = outs[f"after:{s}"], outs[f"before:{s}"]
        la, lb = after.trace.iloc[-1], before.trace.iloc[-1]
        row = {
            "dataset": name, "lam": lam_spec, "dual_step": s, "tol": tol,
            "liblinear_s": ll_s, "before_s": med[f"before:{s}"], "after_s": med[f"after:{s}"],
            "ideal_s": med[f"ideal:{s}"],
            "ratio_before": med[f"before:{s}"] / ll_s, "ratio_after": med[f"after:{s}"] / ll_s,
            "ratio_ideal": med[f"ideal:{s}"] / ll_s,
            "after_status": after.status, "after_rel_subopt": rel(after.w),
            "after_rel_gap": la.gap / abs(la.primal), "after_epochs": la.epoch,
            "after_evals": len(after.trace), "after_eval_s": after.eval_s,
            "after_setup_s": after.setup_s, "after_kernel_s": la.time_s,
            "before_status": before.status, "before_rel_subopt": rel(before.w),
            "before_epochs": lb.epoch, "before_evals": len(before.trace),
            "ideal_epochs": budgets[s][1], "liblinear_how": ll["how"],
            "liblinear_rel_subopt": ll_rel,
            "liblinear_candidates": "; ".join(
                f"{c['how']}: {med[f'll:{i}']:.4g} s" for i, c in enumerate(cands)),
            "p_star": p_star, "ref_rel_gap": ref.rel_gap, "n": n, "d": A.shape[1],
            "nnz": int(A.nnz), "repeats": args.repeats,
            "samples_after": " ".join(f"{x:.5g}" for x in times[f"after:{s}"]),
            "samples_liblinear": " ".join(f"{x:.5g}" for x in times[ll_key]),
            "before_code": (f"solvers.py@{args.before_commit}" if before_mod is not None
                            else "fixed schedule (eval_every=1, max_epochs=100)"),
        }
        rows.append(row)
        log(f"  {s}: LIBLINEAR {ll_s * 1e3:.2f} ms ({ll['how']}); before "
            f"{row['before_s'] * 1e3:.2f} ms ({row['ratio_before']:.2f}x), after "
            f"{row['after_s'] * 1e3:.2f} ms ({row['ratio_after']:.2f}x, {row['after_evals']} "
            f"evals, {row['after_epochs']:.2f} epochs, rel subopt "
            f"{row['after_rel_subopt']:.1e}), ideal {row['ideal_s'] * 1e3:.2f} ms "
            f"({row['ratio_ideal']:.2f}x)")
    return rows


# ---------------------------------------------------------------------------------------------
# Data, outputs, driver
# ---------------------------------------------------------------------------------------------


def load(name: str, mirror: Path):
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize

    path = mirror / f"{name}.bz2"
    if not path.is_file():
        return None, None
    A, y = read_libsvm(path)
    A, _ = normalize(A, "avg_example_norm")
    return A, binarize_labels(y)


def warm_up(before_mod) -> None:
    from pdsparse.data.synthetic import zipf_bow

    A, b = zipf_bow(50, 40, 5, 1.0, 1)
    for s in ("fixed", "newton"):
        run_after(A, b, 0.02, s, 1e-6)
        run_before(A, b, 0.02, s, 1e-6, before_mod)
        run_ideal(A, b, 0.02, s, 5 * A.nnz)
    liblinear_fit(A, b, 0.02, 5, 1e-4)


def fmt_ms(s: float) -> str:
    return f"{s * 1e3:.3g}"


def markdown(df: pd.DataFrame, meta: dict) -> str:
    lines = [
        "# solve() end to end vs LIBLINEAR dual CD, to relative suboptimality "
        f"{df.tol.iloc[0]:g}", "",
        "Wall milliseconds, setup included, median of "
        f"{int(df.repeats.iloc[0])} interleaved runs; ratio = ours / LIBLINEAR (< 1: ours "
        "faster). `before`: solve() as of the issue-7 baseline (full P and D after every "
        "epoch, max_epochs=100); `after`: solve() with its defaults now; `ideal`: the kernel "
        "run to the first 1/16-epoch point with relative gap <= tol (no evaluation cost). "
        "LIBLINEAR: its cheapest oracle setting reaching the tolerance (`liblinear_how` in the "
        "CSV). Ours: dual RCD, permutation sampling, seed 0.", "",
        "| dataset | λ | step | LIBLINEAR ms | before ms (ratio) | after ms (ratio) | "
        "ideal ms (ratio) | after: epochs / evals | after: (P−P*)/P* | status |",
        "|:--|:--|:--|--:|--:|--:|--:|--:|--:|:--|",
    ]
    for r in df.itertuples():
        lines.append(
            f"| {r.dataset} | {r.lam} | {r.dual_step} | {fmt_ms(r.liblinear_s)} | "
            f"{fmt_ms(r.before_s)} ({r.ratio_before:.2f}) | "
            f"**{fmt_ms(r.after_s)} ({r.ratio_after:.2f})** | "
            f"{fmt_ms(r.ideal_s)} ({r.ratio_ideal:.2f}) | {r.after_epochs:.2f} / "
            f"{r.after_evals} | {r.after_rel_subopt:.1e} | {r.after_status} |")
    ok = (df.after_rel_subopt <= df.tol).all()
    lines += ["", f"* every `after` run reached (P − P*)/P* ≤ tol: {'yes' if ok else 'NO'}; "
              f"largest {df.after_rel_subopt.max():.2e}; certified relative gaps "
              f"{df.after_rel_gap.min():.1e}–{df.after_rel_gap.max():.1e}",
              f"* ratio after / LIBLINEAR: {df.ratio_after.min():.2f}–"
              f"{df.ratio_after.max():.2f} (before {df.ratio_before.min():.2f}–"
              f"{df.ratio_before.max():.2f}, ideal {df.ratio_ideal.min():.2f}–"
              f"{df.ratio_ideal.max():.2f})",
              f"* evaluations: before {int(df.before_evals.min())}–"
              f"{int(df.before_evals.max())}, after {int(df.after_evals.min())}–"
              f"{int(df.after_evals.max())} per run",
              f"* machine: {meta['machine']}; load average before/after "
              f"{meta['load_before']} / {meta['load_after']} (shared: other jobs may run)",
              f"* versions: {meta['versions']}; runtime {meta['seconds']:.0f} s", ""]
    return "\n".join(lines)


def machine() -> str:
    from _harness import machine as machine_facts

    facts = machine_facts()
    return f"{facts['nproc']} CPUs, {facts['cpu']}"


def versions() -> str:
    import scipy
    import sklearn

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return (f"Python {platform.python_version()}, numpy {np.__version__}, scipy "
            f"{scipy.__version__}, scikit-learn {sklearn.__version__}, git {commit}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--lams", default="1/n,0.1/n")
    ap.add_argument("--steps", default="fixed,newton", help="dual steps of ours")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before-commit", default=BEFORE_COMMIT)
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    args = ap.parse_args(argv)
    require_peer("sklearn", "solve_vs_liblinear.py")
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.io import atomic_path

    mirror = Path(resolve_mirror(args.mirror) or "/work/shared/datasets")
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    lams = [x.strip() for x in args.lams.split(",") if x.strip()]
    before_mod = load_before_solvers(args.before_commit)
    t0 = time.perf_counter()
    load0 = [round(x, 2) for x in os.getloadavg()]
    warm_up(before_mod)
    rows = []
    for name in [x.strip() for x in args.datasets.split(",") if x.strip()]:
        A, b = load(name, mirror)
        if A is None:
            log(f"{name}: not in the mirror {mirror}; skipped")
            continue
        log(f"{name}: n={A.shape[0]:,} d={A.shape[1]:,} nnz={A.nnz:,}")
        gc.collect()
        gc.freeze()
        for lam_spec in lams:
            rows += bench(name, A, b, lam_spec, steps, args, before_mod)
        gc.unfreeze()
    df = pd.DataFrame(rows)
    meta = {"machine": machine(), "versions": versions(), "load_before": load0,
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "seconds": time.perf_counter() - t0}
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "solve_vs_liblinear.csv") as tmp:
        df.to_csv(tmp, index=False)
    md = markdown(df, meta)
    with atomic_path(out / "solve_vs_liblinear.md") as tmp:
        tmp.write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
