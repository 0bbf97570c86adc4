"""Benchmark: ``solve(Problem(A, b, "logistic", l2), "dual_rcd", tol=1e-6)`` against LIBLINEAR.

The question a user asks: "I call ``solve`` with a tolerance and nothing else; how long does it
take, against LIBLINEAR's dual coordinate descent stopped at the same accuracy?" Both minimize
the same L2-regularized logistic regression without intercept,

    P(w) = (1/n) sum_j log(1 + exp(-b_j a_j^T w)) + (l2/2) ||w||^2,

scikit-learn's ``LogisticRegression(solver="liblinear", dual=True, C=1/(l2 n),
fit_intercept=False)`` (the mapping is checked in tests/test_peers_mapping.py).

Timed by the benchmarks' runner (``benchmarks/bench``): CPU time of the process
(``time.process_time``; one thread, OMP/OPENBLAS/MKL = 1), end to end from the same in-memory
CSR matrix, median of ``--repeats`` (5) rounds interleaved across the solvers of a data set
(``gc.collect()`` outside the clock), each round's iterate judged again:

* ``ours``: ``Problem(A, b, "logistic", l2)`` -> ``solve(p, "dual_rcd", tol=tol)`` with every
  other argument at its default (a random permutation per epoch and the exact 1-D step,
  LIBLINEAR's own choices, since session 5; adaptive evaluation schedule, no epoch cap, 600 s
  kernel-time budget): problem construction, setup, kernel and the certifying evaluations,
  called once at the tolerance (the runner's sampling ``"target"``: no tuning with
  hindsight). Its w must reach (P - P*)/P* <= tol (it stops on its own certificate,
  gap <= tol |P|). ``--variants`` adds other options of the same call
  (``sampling/dual_step``, e.g. ``importance/fixed``, the paper's Sec. 7 setting and the
  default before session 5) beside it, for information.
* ``ideal``: ``Problem`` -> ``make_kernel`` -> ``kernel.run(T)`` with the default options, T the
  nonzeros touched at the first point of the kernel's trace where (P - P*)/P* <= tol (the
  runner's ``"trace"`` sampling): no evaluation cost, perfect foresight (``--no-ideal``:
  skipped).
* ``LIBLINEAR``: the fit with the least work that still reaches (P - P*)/P* <= tol, by two
  searches, two rivals: ``LIBLINEAR (max_iter)`` (``max_iter`` doubling then bisection to
  3 %, ``tol=1e-15``) and ``LIBLINEAR (tol)`` (``tol`` by decades, ``max_iter=100000``); ours
  is set against the faster of the two. This is an oracle stop for LIBLINEAR, not what its
  default does.

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

Outputs (atomic, ``bench.report.write``): ``results/benchmarks/solve_vs_liblinear.parquet``
(the runner's long format: one row per timed run and per search point; ours' epochs,
evaluations and kernel/setup seconds in ``details``), ``.json`` (machine, versions, the watch
of the machine's load, the fixed cost) and ``.md`` (the report's table, the summaries by kind
of set, ideal and variants, the fixed cost).

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
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import loadavg, require_peer  # noqa: E402
from bench.report import against_best, markdown, times, write  # noqa: E402
from bench.runner import Cell, benchmark  # noqa: E402
from bench.solver import OursKernel, OursSolve, Solver  # noqa: E402

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
LL_MAX_ITER = 100_000
LL_CAP_S = 600.0
"""CPU seconds of one fit, at most, in a search."""
CLOCK = time.process_time
FIXED_SHAPE = (100, 10)


def log(msg: str) -> None:
    print(f"[solve_vs_liblinear {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The solvers and the cells
# ---------------------------------------------------------------------------------------------


def variant_options(variant: str) -> dict:
    """``solve`` keywords of a variant: none for the default call, else sampling/dual_step."""
    if variant == DEFAULT:
        return {}
    sampling, _, step = variant.partition("/")
    return {"sampling": sampling, "dual_step": step or None}


def ours_name(variant: str) -> str:
    return "ours" if variant == DEFAULT else f"ours {variant}"


class Liblinear(Solver):
    """LIBLINEAR's dual coordinate descent through scikit-learn, ``C = 1 / (l2 n)``, no
    intercept; its budget ``max_iter`` (``tol=1e-15``) or ``tol`` (``max_iter=100000``)."""

    def __init__(self, sampling: str):
        self.sampling = sampling
        self.name = f"LIBLINEAR ({'max_iter' if sampling == 'iteration' else 'tol'})"

    def run(self, budget) -> None:
        from sklearn.linear_model import LogisticRegression

        p = self.problem
        it, tol = ((int(budget), 1e-15) if self.sampling == "iteration" else
                   (LL_MAX_ITER, float(budget)))
        est = LogisticRegression(solver="liblinear", dual=True, C=1.0 / (p.l2 * p.n),
                                 fit_intercept=False, tol=tol, max_iter=it, random_state=SEED)
        self.result = est.fit(p.mat, p.b).coef_.ravel()


def solvers_of(args) -> list[Solver]:
    out: list[Solver] = [OursSolve("dual_rcd", ours_name(v), tuned=False, seed=SEED,
                                   **variant_options(v)) for v in args.variants]
    if args.ideal:
        out.append(OursKernel("dual_rcd", name="ideal", seed=SEED))
    return out + [Liblinear("iteration"), Liblinear("tolerance")]


def cells(names, lams, mirror: Path, seed: int):
    """Each data set at each l2, with its certified P* (rtol 1e-12, else 1e-10)."""
    from pdsparse.problem import Problem
    from pdsparse.reference import CertificationError, reference_solution

    for name in names:
        A, b, kind = load(name, mirror, seed)
        if A is None:
            log(f"{name}: not in the mirror {mirror}; skipped")
            continue
        log(f"{name}: n={A.shape[0]:,} d={A.shape[1]:,} nnz={A.nnz:,}")
        for lam_spec in lams:
            prob = Problem(A, b, loss="logistic", l2=LAMS[lam_spec] / A.shape[0], name=name)
            t = time.perf_counter()
            try:
                ref = reference_solution(prob, rtol=1e-12)
            except CertificationError:
                ref = reference_solution(prob, rtol=1e-10, max_epochs=100000)
            log(f"{name} {lam_spec}: P* = {ref.p_star:.12g} (rel gap {ref.rel_gap:.1e}, "
                f"{time.perf_counter() - t:.1f} s)")
            yield Cell({"dataset": name, "kind": kind, "lam": lam_spec, "n": A.shape[0],
                        "d": A.shape[1], "nnz": int(A.nnz)}, prob, float(ref.p_star),
                       float(ref.rel_gap))


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


KEYS = ["dataset", "kind", "lam", "n", "d", "nnz"]


def summary(table: pd.DataFrame) -> str:
    """Median and max of the ratio, with the set of the max."""
    if not table.ratio.notna().any():
        return "none timed"
    top = table.loc[table.ratio.idxmax()]
    return (f"median {table.ratio.median():.2f}, max {top.ratio:.2f} ({top.dataset}), "
            f"{int((table.ratio > 1).sum())} of {table.ratio.notna().sum()} above 1")


def report(frame: pd.DataFrame, meta: dict) -> str:
    """The runner's report (ours, the default call, against the faster LIBLINEAR setting),
    then the summaries by kind of set, of the ideal stop and of each variant, ours' own
    account of its runs and the fixed cost of one call."""
    tol = meta["targets"][0]
    lines = [markdown(frame, meta, keys=KEYS, ours="ours",
                      title=f"solve() end to end vs LIBLINEAR dual CD, to relative "
                            f"suboptimality {tol:g}")]
    per = times(frame, KEYS)
    if len(per):
        main = against_best(per, KEYS, "ours")
        lines += ["## Summaries", "", f"* ours / LIBLINEAR, all sets: {summary(main)}"]
        for kind in ("mirror", "generated"):
            lines.append(f"* {kind} sets: {summary(main[main.kind == kind])}")
        for name in [s for s in per.solver.unique() if s.startswith(("ours ", "ideal"))]:
            lines.append(f"* {name} / LIBLINEAR: {summary(against_best(per, KEYS, name))}")
        timed = frame[(frame.solver == "ours") & (frame["round"] >= 0)]
        if len(timed):
            d = pd.DataFrame([json.loads(x) for x in timed.details])
            lines.append(f"* ours' runs: status {sorted(set(d.status))}, epochs "
                         f"{d.epochs.min():.1f}-{d.epochs.max():.1f}, evaluations "
                         f"{d.evaluations.min()}-{d.evaluations.max()}, certified relative "
                         f"gaps {d.rel_gap.min():.1e}-{d.rel_gap.max():.1e}")
    fixed = meta.get("fixed")
    if fixed:
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
    return "\n".join(lines) + "\n"


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

    mirror = Path(resolve_mirror(args.mirror) or "/work/shared/datasets")
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    args.variants += [f"permutation/{x.strip()}" for x in args.steps.split(",")
                      if x.strip() and f"permutation/{x.strip()}" not in args.variants]
    if DEFAULT not in args.variants:
        args.variants.insert(0, DEFAULT)
    lams = [x.strip() for x in args.lams.split(",") if x.strip()]
    names = [x.strip() for x in args.datasets.split(",") if x.strip() and x.strip() != "none"]
    fixed = fixed_cost(args.fixed_reps, args.tol) if args.fixed_reps > 0 else None
    if fixed is not None:
        log(f"fixed cost on {FIXED_SHAPE}: {fixed['total_us']:.0f} us: " + ", ".join(
            f"{k} {v:.0f}" for k, v in fixed["stages"].items()))
    frame, meta = benchmark(cells(names, lams, mirror, args.seed), solvers_of(args),
                            [args.tol], repeats=args.repeats, cap=LL_CAP_S, log=log,
                            modules=("sklearn",))
    meta["fixed"] = fixed
    print(write(frame, meta, Path(args.out_dir) / "solve_vs_liblinear", report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
