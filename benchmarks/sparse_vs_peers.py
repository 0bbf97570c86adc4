"""Benchmark: sparse logistic regression, ``LinearClassifier(solver="auto").fit`` against the
solvers a practitioner would install instead (issue 31's table; issue 32's target).

Every solver minimizes the same objective on the same rows (scaled by the mean row norm,
Face-Off Sec. 7), without intercept:

    P(w) = (1/n) sum_i log(1 + exp(-b_i a_i^T w)) + l1 ||w||_1 + (l2/2) ||w||^2,

or with ``--intercept`` an unpenalized intercept c inside the loss, log(1 + exp(-b_i (a_i^T w
+ c))): ours with ``fit_intercept=True``, the peers that fit one unpenalized (not LIBLINEAR,
which penalizes it, nor celer's logistic regression, which has none), lambda_max at the best
intercept,

pure l1 (l2 = 0) and the elastic net (l2 = 1/n), at l1 = lambda_max/10 and lambda_max/100
(lambda_max = ||grad f(0)||_inf, the smallest l1 with w* = 0). Every solver's P is evaluated by
``pdsparse.objective.primal``:

* ours: ``LinearClassifier(penalty="l1", alpha=l1)`` or ``penalty="elasticnet",
  alpha=l1 + l2, l1_ratio=l1 / (l1 + l2)``, ``fit_intercept=False``, ``tol`` its certified
  relative duality gap;
* the peers of ``pdsparse.peers`` that are installed and fit the cell (their mappings onto
  the objective are there, tested in tests/test_peers.py): scikit-learn's liblinear (pure
  l1), saga and lbfgs, skglm's ProxNewton and AndersonCD, celer (pure l1).

The protocol is the runner's (``benchmarks/bench``): each solver's knob is its stopping
tolerance, tried from 1e-2 down by decades to 1e-14; the first whose fit reaches relative
suboptimality (P(w) - P*) / |P*| <= ``--target`` (1e-6) within ``--cap`` CPU seconds is the
solver's setting, and its time the median CPU time (``time.process_time``, one thread: OMP,
OpenBLAS and MKL at 1) of ``--repeats`` fits at it, interleaved with the other solvers'. A
solver that reaches no target, fails, or misses it on a re-run never counts as faster. P* is
``pdsparse.reference.reference_solution(problem, rtol=1e-10)`` (certified duality gap).

The report (``bench.report``) gives each cell's time of ours, of the best peer, their ratio
(< 1: ours ahead), its range over the repeats and the verdict. Outputs (atomic):
``results/benchmarks/sparse_vs_peers.parquet`` (long format: one row per timed fit), ``.md``
and ``.json``.

Usage::

    python benchmarks/sparse_vs_peers.py                       # six mirror sets, three generated
    python benchmarks/sparse_vs_peers.py --datasets colon-cancer,duke --repeats 1
    python benchmarks/sparse_vs_peers.py --intercept            # the same with an intercept
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench.report import markdown, write  # noqa: E402
from bench.runner import Cell, benchmark  # noqa: E402
from bench.solver import OursEstimator, library_peers  # noqa: E402

DATASETS = ("colon-cancer", "duke", "leu", "gisette_scale.t", "ijcnn1", "cod-rna")
GENERATED = {
    # name: pdsparse.data.synthetic.zipf_bow's (n, d, mean nonzeros a row), Zipf exponent 1,
    # seed 0: bag-of-words rows, labels sign(A w_true + noise) of a planted w_true
    "zipf-20000x200": (20_000, 200, 10),  # n >> d
    "zipf-5000x5000": (5_000, 5_000, 30),  # n ~ d
    "zipf-500x20000": (500, 20_000, 100),  # d >> n
}
KEYS = ["dataset", "n x d", "penalty", "l1"]


def load(name: str, mirror: Path, intercept: bool = False):
    """The mirror's file (``Problem.from_libsvm``: two classes to -1/+1) or a generated set
    (:data:`GENERATED`), rows scaled by the mean row norm, as a problem (with an intercept
    with ``intercept``); each cell takes its penalty with ``with_penalty``."""
    from pdsparse.data.normalize import normalize
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.problem import Problem

    if name in GENERATED:
        n, d, per_row = GENERATED[name]
        A, b = zipf_bow(n, d, per_row, 1.0, 0)
        return Problem(normalize(A, "avg_example_norm")[0], b, "logistic", intercept=intercept)
    path = next((p for p in (mirror / f"{name}.bz2", mirror / name) if p.exists()), None)
    if path is None:
        raise SystemExit(f"sparse_vs_peers: {name} is not in the mirror {mirror} "
                         "(--mirror DIR or $PDSPARSE_DATA_MIRROR)")
    problem = Problem.from_libsvm(path, "logistic", normalization="avg_example_norm")
    return Problem(problem.csr, problem.b, "logistic", intercept=True) if intercept else problem


def cells(args):
    """Each data set's four cells (pure l1 and l2 = 1/n, at lambda_max / each fraction), with
    their certified P*; a set is read once, a cell built when its turn comes."""
    from pdsparse.penalties import ElasticNet
    from pdsparse.reference import reference_solution
    from pdsparse.solvers.predict import lambda_max

    for name in args.datasets.split(","):
        base = load(name, Path(args.mirror), args.intercept)
        n, d = base.shape
        lam = lambda_max(base)
        for l2, pen in ((0.0, "pure l1"), (1.0 / n, "l2 = 1/n")):
            for frac in (float(f) for f in args.fractions.split(",")):
                problem = base.with_penalty(ElasticNet(l2, lam / frac))
                ref = reference_solution(problem, rtol=1e-10, max_seconds=args.ref_seconds)
                yield Cell({"dataset": name, "n x d": f"{n:,} x {d:,}", "penalty": pen,
                            "l1": f"lambda_max/{frac:g}"}, problem, float(ref.p_star),
                           float(ref.rel_gap))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join((*DATASETS, *GENERATED)),
                    help="mirror sets and generated ones (" + ", ".join(GENERATED) + ")")
    ap.add_argument("--mirror", default=os.environ.get("PDSPARSE_DATA_MIRROR",
                                                       "/work/shared/datasets"))
    ap.add_argument("--fractions", default="10,100", help="l1 = lambda_max / each")
    ap.add_argument("--target", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cap", type=float, default=60.0, help="CPU s of one fit, at most")
    ap.add_argument("--ref-seconds", type=float, default=600.0)
    ap.add_argument("--intercept", action="store_true",
                    help="every problem with an unpenalized intercept")
    ap.add_argument("--out", default=None, help="the outputs' path without extension "
                    "(default results/benchmarks/sparse_vs_peers, + _intercept)")
    args = ap.parse_args(argv)
    out = args.out or ("results/benchmarks/sparse_vs_peers"
                       + ("_intercept" if args.intercept else ""))

    solvers = [OursEstimator("auto"), *library_peers()]
    frame, meta = benchmark(cells(args), solvers, [args.target], repeats=args.repeats,
                            cap=args.cap, modules=("sklearn",),
                            log=lambda s: print(s, file=sys.stderr, flush=True))
    title = ("Sparse logistic regression" + (" with an intercept" if args.intercept else "")
             + ": ours (auto) against the peers")
    print(write(frame, meta, out, lambda f, m: markdown(f, m, keys=KEYS, title=title)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
