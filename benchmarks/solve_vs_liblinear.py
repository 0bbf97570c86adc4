"""Benchmark: ``solve(Problem(A, b, "logistic", l2), "dual_rcd", tol=1e-6)`` against LIBLINEAR.

The question a user asks: "I call ``solve`` with a tolerance and nothing else; how long does it
take, against LIBLINEAR's dual coordinate descent stopped at the same accuracy?" Both minimize
the same L2-regularized logistic regression without intercept,

    P(w) = (1/n) sum_j log(1 + exp(-b_j a_j^T w)) + (l2/2) ||w||^2,

scikit-learn's ``LogisticRegression(solver="liblinear", dual=True, C=1/(l2 n),
fit_intercept=False)`` (the mapping is checked in tests/test_peers_mapping.py).

Timed: CPU time of the process (``time.process_time``; one thread, OMP/OPENBLAS/MKL = 1), end
to end from the same in-memory CSR matrix, median of ``--repeats`` (5) runs interleaved across
the variants of a data set (``gc.collect()`` outside the clock):

* ``ours``: ``Problem(A, b, "logistic", l2)`` -> ``solve(p, "dual_rcd", tol=tol)`` with every
  other argument at its default (a random permutation per epoch and the exact 1-D step,
  LIBLINEAR's own choices, since session 5; adaptive evaluation schedule, no epoch cap, 600 s
  kernel-time budget): problem construction, setup, kernel and
  the certifying evaluations. Its w must reach (P - P*)/P* <= tol (it stops on its own
  certificate, gap <= tol |P|). ``--variants`` adds other options of the same call
  (``sampling/dual_step``, e.g. ``importance/fixed``, the paper's Sec. 7 setting and the
  default before session 5) beside it, for information.
* ``ideal``: ``Problem`` -> ``make_kernel`` -> ``kernel.run(T)`` with the default options, T the
  nonzeros touched at the first point where the relative gap is <= tol on a trace evaluated
  every 1/16 epoch: no evaluation cost, perfect foresight (``--no-ideal``: skipped).
* ``liblinear``: the fit with the least work that still reaches (P - P*)/P* <= tol, found by two
  searches: ``max_iter`` doubling then bisection (``tol=1e-15``), and ``tol`` in decades then
  quarter decades (``max_iter=100000``); the faster of the two settings is the reference
  (``liblinear_how``). This is an oracle stop for LIBLINEAR, not what its default does.

P(w) is evaluated with ``pdsparse.objective.primal`` outside every timer; P* comes from
``pdsparse.reference.reference_solution(problem, rtol=1e-12)``. Data: every binary set of the
LIBSVM mirror (``--mirror``, else ``$PDSPARSE_DATA_MIRROR``, else /work/shared/datasets) read
with ``pdsparse.data.libsvm.read_libsvm``, and generated sets of 1,000-10,000 rows
(``pdsparse.data.synthetic``: dense Gaussian and Zipf bag of words, n >> d, n ~ d, n << d,
labels sign(A w_true + noise) of a planted w_true, seed ``--seed``), all scaled with
``normalize(A, "avg_example_norm")`` (Face-Off Sec. 7, as benchmarks/peers.py). The load
average is recorded with each data set.

Also measured: the fixed cost of one call on a 100 x 10 problem, stage by stage (``Problem``,
option parsing, kernel setup, kernel, evaluations, the trace DataFrame, the rest), each stage
repeated on its own (``--fixed-reps`` calls per batch, the least of 5 batches).

Outputs (atomic): ``results/benchmarks/solve_vs_liblinear.csv`` (one row per data set x l2 x
variant) and ``solve_vs_liblinear.md`` (tables, machine, load average, versions).

Usage::

    python benchmarks/solve_vs_liblinear.py                        # 15 data sets, ~1-2 min
    python benchmarks/solve_vs_liblinear.py --datasets leu,zipf-5000x5000 --repeats 3
    python benchmarks/solve_vs_liblinear.py --datasets none         # the 100 x 10 fixed cost only
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    first_cap,
    interleaved,
    loadavg,
    medians,
    require_peer,
    search_max_iter,
    search_tol,
)

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "results" / "benchmarks"
MIRROR_SETS = ("leu", "leu.t", "duke", "colon-cancer", "gisette_scale.t", "ijcnn1.tr", "ijcnn1",
               "ijcnn1.t", "cod-rna")
"""The binary sets of the mirror (news20, mnist and sector are multiclass)."""
GENERATED = {
    # name: (generator of pdsparse.data.synthetic, its arguments but the seed)
    "gauss-10000x20": ("dense_gaussian", {"n": 10_000, "d": 20}),
    "gauss-1000x1000": ("dense_gaussian", {"n": 1_000, "d": 1_000}),
    "gauss-1000x3000": ("dense_gaussian", {"n": 1_000, "d": 3_000}),
    "zipf-10000x500": ("zipf_bow", {"n": 10_000, "d": 500, "mean_nnz_per_row": 10,
                                    "exponent": 1.0}),
    "zipf-5000x5000": ("zipf_bow", {"n": 5_000, "d": 5_000, "mean_nnz_per_row": 30,
                                    "exponent": 1.0}),
    "zipf-1000x30000": ("zipf_bow", {"n": 1_000, "d": 30_000, "mean_nnz_per_row": 100,
                                     "exponent": 1.0}),
}
"""Generated sets of 1,000-10,000 rows: dense (stored as CSR) and sparse, n >> d, n ~ d, n << d."""
DATASETS = MIRROR_SETS + tuple(GENERATED)
LAMS = {"1/n": 1.0, "0.1/n": 0.1}
DEFAULT = "default"
SEED = 0
TRACE_EVAL_EVERY = 1.0 / 16
LL_MAX_ITER = 100_000
BISECT_REL = 0.03
CLOCK = time.process_time
FIXED_SHAPE = (100, 10)


def log(msg: str) -> None:
    print(f"[solve_vs_liblinear {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The timed calls
# ---------------------------------------------------------------------------------------------


def variant_options(variant: str) -> dict:
    """``solve`` keywords of a variant: none for the default call, else sampling/dual_step."""
    if variant == DEFAULT:
        return {}
    sampling, _, step = variant.partition("/")
    return {"sampling": sampling, "dual_step": step or None}


def run_ours(A, b, l2, tol, variant=DEFAULT):
    """The call of the issue: a Problem from the CSR matrix, then ``solve`` with defaults."""
    from pdsparse.problem import Problem
    from pdsparse.solvers import solve

    return solve(Problem(A, b, "logistic", l2), "dual_rcd", tol=tol, **variant_options(variant))


def timed_ours(A, b, l2, tol, variant=DEFAULT):
    """(Result, its CPU seconds) of :func:`run_ours`: the split of that one run into kernel,
    setup and the rest."""
    t0 = CLOCK()
    res = run_ours(A, b, l2, tol, variant)
    return res, CLOCK() - t0


def run_ideal(A, b, l2, budget):
    from pdsparse.problem import Problem
    from pdsparse.solvers import make_kernel

    k = make_kernel(Problem(A, b, "logistic", l2), "dual_rcd", seed=SEED)
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


def ideal_budget(A, b, l2, tol) -> tuple[int, float]:
    """Nonzeros touched (and epochs) at the first 1/16-epoch point with relative gap <= tol."""
    from pdsparse.problem import Problem
    from pdsparse.solvers import solve

    p = Problem(A, b, loss="logistic", l2=l2)
    r = solve(p, "dual_rcd", tol=tol, seed=SEED, eval_every=TRACE_EVAL_EVERY,
              max_epochs=10_000)
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


def bench(name, kind, A, b, lam_spec, args) -> list[dict]:
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
    budget = ideal_budget(A, b, l2, tol) if args.ideal else None
    # interleaved repeats: every variant once per round, so that load drifts hit all of them
    jobs = {f"ll:{i}": (lambda c=c: liblinear_fit(A, b, l2, c["max_iter"], c["tol"]))
            for i, c in enumerate(cands)}
    for v in args.variants:
        jobs[f"ours:{v}"] = lambda v=v: timed_ours(A, b, l2, tol, v)
    if budget is not None:
        jobs["ideal"] = lambda: run_ideal(A, b, l2, budget[0])
    load0 = loadavg()
    times, outs = interleaved(jobs, args.repeats, clock=CLOCK)
    load1 = loadavg()
    med = medians(times)
    ll_key = min((k for k in med if k.startswith("ll:")), key=med.get)
    ll = cands[int(ll_key.split(":")[1])]
    ll_s = med[ll_key]
    ll_rel = rel(outs[ll_key])
    rows = []
    for v in args.variants:
        res, run_s = outs[f"ours:{v}"]
        last = res.trace.iloc[-1]
        ours_s = med[f"ours:{v}"]
        row = {
            "dataset": name, "kind": kind, "lam": lam_spec, "variant": v, "tol": tol,
            "n": n, "d": A.shape[1], "nnz": int(A.nnz),
            "ours_s": ours_s, "liblinear_s": ll_s, "ratio": ours_s / ll_s,
            "ideal_s": med["ideal"] if budget is not None else np.nan,
            "ratio_ideal": med["ideal"] / ll_s if budget is not None else np.nan,
            "ideal_epochs": budget[1] if budget is not None else np.nan,
            "status": res.status, "rel_subopt": rel(res.w),
            "rel_gap": last.gap / abs(last.primal), "epochs": last.epoch,
            "evals": len(res.trace), "eval_wall_s": res.eval_s, "setup_s": res.setup_s,
            "kernel_s": last.time_s, "run_s": run_s,
            "liblinear_how": ll["how"], "liblinear_rel_subopt": ll_rel,
            "liblinear_candidates": "; ".join(
                f"{c['how']}: {med[f'll:{i}']:.4g} s" for i, c in enumerate(cands)),
            "p_star": p_star, "ref_rel_gap": ref.rel_gap, "repeats": args.repeats,
            "samples_ours": " ".join(f"{x:.5g}" for x in times[f"ours:{v}"]),
            "samples_liblinear": " ".join(f"{x:.5g}" for x in times[ll_key]),
            "loadavg_start": " ".join(map(str, load0)), "loadavg_end": " ".join(map(str, load1)),
        }
        rows.append(row)
        log(f"  {v}: LIBLINEAR {ll_s * 1e3:.2f} ms ({ll['how']}); ours {ours_s * 1e3:.2f} ms "
            f"({row['ratio']:.2f}x, {row['evals']} evals, {row['epochs']:.2f} epochs, rel "
            f"subopt {row['rel_subopt']:.1e}), ideal {row['ideal_s'] * 1e3:.2f} ms "
            f"({row['ratio_ideal']:.2f}x, {row['ideal_epochs']:.2f} epochs); load {load1}")
    return rows


# ---------------------------------------------------------------------------------------------
# The fixed cost of a call: a 100 x 10 problem, stage by stage
# ---------------------------------------------------------------------------------------------


def _per_call_us(fn, reps: int) -> float:
    """CPU microseconds per call of ``fn``: the least of 5 batches of ``reps`` calls."""
    best = np.inf
    for _ in range(5):
        gc.collect()
        t0 = CLOCK()
        for _ in range(reps):
            fn()
        best = min(best, (CLOCK() - t0) / reps * 1e6)
    return best


class _Stages:
    """CPU time spent inside wrapped functions, by stage, and their calls."""

    def __init__(self):
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            t0 = CLOCK()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[stage] = self.spent.get(stage, 0.0) + CLOCK() - t0
                self.calls[stage] = self.calls.get(stage, 0) + 1
        return timed


STAGES = ("Problem(A, b, ...)", "options (registry lookup, parsing, warm start)",
          "setup (make_kernel: row norms, sampling tables, steps)", "kernel (dual RCD calls)",
          "evaluations (P, D, gap)", "trace DataFrame")
REST = "rest (run loop: clock reads, call sizing, schedule; checks, params, Result)"


def fixed_cost(reps: int, tol: float) -> dict:
    """CPU microseconds per ``solve(Problem(A, b, "logistic", 1/n), "dual_rcd", tol=tol)`` on
    a 100 x 10 dense Gaussian problem (stored as CSR), the least of 5 batches of ``reps``
    calls, and where they go: the calls of a further batch run with the stages' functions
    wrapped in CPU clocks (``Problem``; ``get_solver``, ``_call_options`` and ``_start``;
    ``SolverSpec.make_kernel``; the kernel's ``run``; ``objective.evaluate`` or
    ``primal``/``dual``; ``pd.DataFrame`` as ``solve`` sees it), in their context (caches as
    a real call leaves them); the rest is what the wrapped total leaves. The wrappers add
    about a microsecond per wrapped call. Also the first read of ``Result.trace`` when
    ``solve`` leaves the DataFrame to it (timed apart, not part of the call)."""
    import types

    import pdsparse.objective as objective_mod
    import pdsparse.solvers as solvers_mod
    from pdsparse.data.synthetic import dense_gaussian
    from pdsparse.problem import Problem
    from pdsparse.solvers import TRACE_COLUMNS, Result, SolverSpec, solve
    from pdsparse.solvers.rcd import _DualKernel

    n, d = FIXED_SHAPE
    A, b = dense_gaussian(n, d, SEED)
    l2 = 1.0 / n
    lazy = "rows" in {f.name for f in dataclasses.fields(Result)}

    def call():
        return solve(Problem(A, b, "logistic", l2), "dual_rcd", tol=tol)

    for _ in range(200):  # warm up
        r = call()
    rows = list(getattr(r, "rows", None) or r.trace.itertuples(index=False, name=None))
    total = _per_call_us(call, reps)
    first_read = _per_call_us(lambda: pd.DataFrame(rows, columns=TRACE_COLUMNS), reps)

    st = _Stages()
    saved = [(solvers_mod, k, getattr(solvers_mod, k)) for k in
             ("get_solver", "_call_options", "_start", "pd")]
    saved += [(objective_mod, k, getattr(objective_mod, k)) for k in
              ("evaluate", "primal", "dual")]
    saved += [(SolverSpec, "make_kernel", SolverSpec.make_kernel), (_DualKernel, "run",
                                                                    _DualKernel.run)]
    names = dict(zip(["Problem", "options", "setup", "kernel", "evaluations", "frame"], STAGES,
                     strict=True))
    for mod, k, fn in saved:
        stage = {"get_solver": "options", "_call_options": "options", "_start": "options",
                 "make_kernel": "setup", "run": "kernel"}.get(k, "evaluations")
        if k == "pd":
            setattr(mod, k, types.SimpleNamespace(
                DataFrame=st.wrap(names["frame"], pd.DataFrame)))
        else:
            setattr(mod, k, st.wrap(names[stage], fn))
    problem = st.wrap(names["Problem"], Problem)
    try:
        gc.collect()
        t0 = CLOCK()
        for _ in range(reps):
            solve(problem(A, b, "logistic", l2), "dual_rcd", tol=tol)
        wrapped = (CLOCK() - t0) / reps * 1e6
    finally:
        for mod, k, fn in saved:
            setattr(mod, k, fn)
    stages = {s: st.spent.get(s, 0.0) / reps * 1e6 for s in STAGES}
    stages[REST] = wrapped - sum(stages.values())
    return {"total_us": total, "wrapped_us": wrapped, "stages": stages,
            "first_read_us": first_read if lazy else 0.0, "lazy_trace": lazy,
            "kernel_calls": st.calls.get(names["kernel"], 0) / reps,
            "evaluations": len(rows), "epochs": float(r.trace.epoch.iloc[-1]), "reps": reps,
            "loadavg": loadavg()}


# ---------------------------------------------------------------------------------------------
# Data, outputs, driver
# ---------------------------------------------------------------------------------------------


def load(name: str, mirror: Path, seed: int = SEED):
    """(A, b, kind) of a mirror set or a generated one, A scaled to average row norm 1 and in
    the CSR form both solvers get (float64, int32 indices); (None, None, kind) if missing."""
    import scipy.sparse as sp

    from pdsparse.data import synthetic
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize

    if name in GENERATED:
        gen, kw = GENERATED[name]
        A, b = getattr(synthetic, gen)(**kw, seed=seed)
        kind = "generated"
    else:
        path = mirror / f"{name}.bz2"
        if not path.is_file():
            return None, None, "mirror"
        A, y = read_libsvm(path)
        b, kind = binarize_labels(y), "mirror"
    A, _ = normalize(A, "avg_example_norm")
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    A.indices = A.indices.astype(np.int32, copy=False)
    A.indptr = A.indptr.astype(np.int32, copy=False)
    return A, np.ascontiguousarray(b, dtype=np.float64), kind


def warm_up(variants) -> None:
    from pdsparse.data.synthetic import zipf_bow

    A, b = zipf_bow(50, 40, 5, 1.0, 1)
    for v in variants:
        run_ours(A, b, 0.02, 1e-6, v)
    run_ideal(A, b, 0.02, 5 * A.nnz)
    liblinear_fit(A, b, 0.02, 5, 1e-4)


def fmt_ms(s: float) -> str:
    return f"{s * 1e3:.3g}"


def ideal_cell(r) -> str:
    """``ms (ratio)`` of the ideal stop, or a dash when it was not run (``--no-ideal``)."""
    return "—" if np.isnan(r.ideal_s) else f"{fmt_ms(r.ideal_s)} ({r.ratio_ideal:.2f})"


def summary(df: pd.DataFrame, column: str = "ratio") -> str:
    """Median and max of a ratio column, with the set of the max."""
    top = df.loc[df[column].idxmax()]
    return (f"median {df[column].median():.2f}, max {top[column]:.2f} ({top.dataset}), "
            f"{int((df[column] > 1).sum())} of {len(df)} above 1")


def markdown(df: pd.DataFrame, fixed: dict | None, meta: dict) -> str:
    lines = []
    if len(df):
        tol = df.tol.iloc[0]
        lines += [
            f"# solve() end to end vs LIBLINEAR dual CD, to relative suboptimality {tol:g}", "",
            "CPU milliseconds of the process (one thread), end to end from the same in-memory "
            f"CSR matrix, median of {int(df.repeats.iloc[0])} interleaved runs; ratio = ours "
            "/ LIBLINEAR (< 1: ours faster). Ours: `solve(Problem(A, b, \"logistic\", l2), "
            f"\"dual_rcd\", tol={tol:g})` with every other argument at its default (a "
            "permutation per epoch, the exact step, adaptive evaluations), `Problem` "
            "construction, setup, kernel and the certifying evaluations included. LIBLINEAR: "
            "its cheapest oracle setting reaching the tolerance. `ideal`: the kernel run to "
            "the first 1/16-epoch point with relative gap <= tol (no evaluations, perfect "
            "foresight).", "",
            "`kernel / setup / rest`: of one run of ours, the kernel's CPU time, the setup's "
            "(`make_kernel`: row norms, sampling tables, steps) and the rest (`Problem`, "
            "evaluations, Python).", "",
            "| dataset | λ | n | d | nnz | ours ms | LIBLINEAR ms (setting) | ratio | "
            "ideal ms (ratio) | ours: kernel / setup / rest ms | epochs: ours / ideal | "
            "evals | (P−P*)/P* ours / LL | load avg |",
            "|:--|:--|--:|--:|--:|--:|:--|--:|--:|--:|--:|--:|--:|:--|",
        ]
        main = df[df.variant == DEFAULT]
        for r in main.itertuples():
            lines.append(
                f"| {r.dataset} | {r.lam} | {r.n:,} | {r.d:,} | {r.nnz:,} | "
                f"{fmt_ms(r.ours_s)} | {fmt_ms(r.liblinear_s)} ({r.liblinear_how}) | "
                f"**{r.ratio:.2f}** | {ideal_cell(r)} | "
                f"{fmt_ms(r.kernel_s)} / {fmt_ms(r.setup_s)} / "
                f"{fmt_ms(r.run_s - r.kernel_s - r.setup_s)} | "
                f"{r.epochs:.1f} / {r.ideal_epochs:.1f} | {r.evals} | {r.rel_subopt:.0e} / "
                f"{r.liblinear_rel_subopt:.0e} | {r.loadavg_end.split()[0]} |")
        if len(main):
            ok = (main.rel_subopt <= main.tol).all()
            lines += [
                "", f"* ours / LIBLINEAR, all sets: {summary(main)}",
                f"* mirror sets: {summary(main[main.kind == 'mirror'])}"
                if (main.kind == "mirror").any() else "* mirror sets: none run",
                f"* generated sets: {summary(main[main.kind == 'generated'])}"
                if (main.kind == "generated").any() else "* generated sets: none run",
                f"* ideal / LIBLINEAR: {summary(main, 'ratio_ideal')}"
                if main.ratio_ideal.notna().all() else "* ideal: not run",
                f"* every run of ours reached (P − P*)/P* ≤ tol: {'yes' if ok else 'NO'}; "
                f"largest {main.rel_subopt.max():.1e}; certified relative gaps "
                f"{main.rel_gap.min():.1e}–{main.rel_gap.max():.1e}"]
        for v in [v for v in df.variant.unique() if v != DEFAULT]:
            sub = df[df.variant == v]
            lines.append(f"* variant `{v}` (sampling/dual_step given): ours / LIBLINEAR "
                         f"{summary(sub)}; per set: " + ", ".join(
                             f"{r.dataset} {r.ratio:.2f}" for r in sub.itertuples()))
    if fixed is not None:
        lines += ["", f"## Fixed cost of one call on a {FIXED_SHAPE[0]} × {FIXED_SHAPE[1]} "
                  "problem", "",
                  f"`solve(Problem(A, b, \"logistic\", 1/n), \"dual_rcd\", tol=1e-6)` on a "
                  f"dense Gaussian problem: {fixed['total_us']:.0f} µs of CPU per call, the "
                  f"least of 5 batches of {fixed['reps']} ({fixed['evaluations']} evaluations, "
                  f"{fixed['epochs']:.1f} epochs, {fixed['kernel_calls']:.0f} kernel calls); "
                  f"where it goes, from a batch with each stage's functions wrapped in CPU "
                  f"clocks ({fixed['wrapped_us']:.0f} µs per call); load average "
                  f"{fixed['loadavg']}.", "",
                  "| stage | µs |", "|:--|--:|"]
        lines += [f"| {k} | {v:.0f} |" for k, v in fixed["stages"].items()]
        if fixed["lazy_trace"]:
            lines.append(f"| (not in the call: the first read of `Result.trace` builds the "
                         f"DataFrame) | {fixed['first_read_us']:.0f} |")
    lines += ["", f"* machine: {meta['machine']}; load average start/end "
              f"{meta['load_before']} / {meta['load_after']} (shared: other jobs may run)",
              f"* versions: {meta['versions']}; runtime {meta['seconds']:.0f} s", ""]
    return "\n".join(lines)


def machine() -> str:
    from _harness import machine as machine_facts

    facts = machine_facts()
    return f"{facts['nproc']} CPUs, {facts['cpu']}, {facts['mem_gib']:.0f} GiB"


def versions() -> str:
    from _harness import versions as version_facts

    import pdsparse

    v = version_facts("sklearn")
    where = Path(pdsparse.__file__).resolve().parents[1]  # the code measured (PYTHONPATH)
    names = ("python", "numpy", "scipy", "pandas", "sklearn", "pdsparse", "git_commit")
    return ", ".join(f"{k} {v[k]}" for k in names) + f" (pdsparse from {where})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help="mirror sets and generated ones (" + ", ".join(GENERATED) + "); "
                    "'none': the fixed cost only")
    ap.add_argument("--lams", default="1/n", help="l2 settings, of " + ", ".join(LAMS))
    ap.add_argument("--variants", default=DEFAULT,
                    help="'default' (the call with no options) and/or sampling/dual_step "
                    "pairs, e.g. default,permutation/newton")
    ap.add_argument("--steps", default="",
                    help="dual steps to add as permutation/<step> variants (the call of the "
                    "issue-7 table, sampling=\"permutation\"), e.g. fixed,newton")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=SEED, help="seed of the generated sets")
    ap.add_argument("--no-ideal", dest="ideal", action="store_false",
                    help="skip the ideal stop (kernel to the first crossing, no evaluations)")
    ap.add_argument("--fixed-reps", type=int, default=2000,
                    help="calls per batch of the 100 x 10 fixed-cost breakdown (0: skip it)")
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    args = ap.parse_args(argv)
    require_peer("sklearn", "solve_vs_liblinear.py")
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.io import atomic_path

    mirror = Path(resolve_mirror(args.mirror) or "/work/shared/datasets")
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    args.variants += [f"permutation/{x.strip()}" for x in args.steps.split(",")
                      if x.strip() and f"permutation/{x.strip()}" not in args.variants]
    if DEFAULT not in args.variants:
        args.variants.insert(0, DEFAULT)
    lams = [x.strip() for x in args.lams.split(",") if x.strip()]
    names = [x.strip() for x in args.datasets.split(",") if x.strip() and x.strip() != "none"]
    t0 = time.perf_counter()
    load0 = loadavg()
    warm_up(args.variants)
    fixed = fixed_cost(args.fixed_reps, args.tol) if args.fixed_reps > 0 else None
    if fixed is not None:
        log(f"fixed cost on {FIXED_SHAPE}: {fixed['total_us']:.0f} us: " + ", ".join(
            f"{k} {v:.0f}" for k, v in fixed["stages"].items()))
    rows = []
    for name in names:
        A, b, kind = load(name, mirror, args.seed)
        if A is None:
            log(f"{name}: not in the mirror {mirror}; skipped")
            continue
        log(f"{name}: n={A.shape[0]:,} d={A.shape[1]:,} nnz={A.nnz:,}")
        gc.collect()
        gc.freeze()
        for lam_spec in lams:
            rows += bench(name, kind, A, b, lam_spec, args)
        gc.unfreeze()
    df = pd.DataFrame(rows)
    meta = {"machine": machine(), "versions": versions(), "load_before": load0,
            "load_after": loadavg(), "seconds": time.perf_counter() - t0}
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "solve_vs_liblinear.csv") as tmp:
        df.to_csv(tmp, index=False)
    md = markdown(df, fixed, meta)
    with atomic_path(out / "solve_vs_liblinear.md") as tmp:
        tmp.write_text(md)
    print(md)
    if len(df):
        main_rows = df[df.variant == DEFAULT]
        log(f"ours / LIBLINEAR: median {statistics.median(main_rows.ratio):.2f}, "
            f"max {main_rows.ratio.max():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
