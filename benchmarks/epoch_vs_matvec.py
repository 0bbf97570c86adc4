"""Benchmark: time of one RCD epoch versus one sparse matrix-vector product.

An epoch of a coordinate kernel touches nnz(A) nonzeros, the same work as one
``A @ x``; the ratio ``epoch_s / matvec_s`` measures how far a kernel is from
"as cheap as a pass over the data" (target in the issue: ratio <= 3). Face-Off
(Csiba & Richtarik, Sec. 7) compares primal and dual RCD per epoch, so this ratio
is what makes their wall-clock and epoch plots agree.

For every dataset and configuration the script

* builds ``pdsparse.problem.Problem(A, b, loss, l2=1/n)`` and sets up the kernel with
  ``pdsparse.solvers.make_kernel`` (setup excluded from the timings);
* runs one warm-up epoch, then takes ``--repeats`` samples, each of ``inner`` consecutive
  epochs (``inner`` chosen so that a sample lasts at least ``--min-sample-s``), and reports
  the median time of one epoch (``epoch_s``);
* interleaved with the epoch samples, times scipy's ``A @ x`` (x of length d) on the
  same matrix in the format the kernel walks: ``problem.csc @ x`` for primal RCD
  (Face-Off Algorithm 1, columns), ``problem.csr @ x`` for dual RCD (Algorithm 2, rows),
  median time of one product (``matvec_s``), and ``ratio = epoch_s / matvec_s``.

``Problem`` stores int32 ``indices`` with int64 ``indptr``; scipy then up-casts the index
arrays on every product, which roughly doubles the cost of ``problem.csr @ x``. The extra
columns ``matvec_int32_s`` / ``ratio_int32`` time the same product on a copy with int32
``indptr`` (scipy's fast path), the stricter baseline.

The floor. A coordinate step reads its line twice: a dot product (with phi' of the margins
for primal RCD, with w for dual RCD), then an axpy into the maintained vector (z = A w, or
w = A^T alpha / (l2 n)), so one epoch cannot cost less than one ``M @ x`` plus one
``M.T @ y`` on the matrix the kernel walks (``M.T`` of a CSC matrix is the same arrays read
as CSR rows, and vice versa), plus, for the logistic loss, the exps of phi': one per nonzero
for primal RCD (a vectorized ``numpy.exp`` over nnz values), one per row for dual RCD
(``numpy.exp`` over n values; its Newton step takes a few more, not counted). ``floor_s`` is
the median time of that sequence, timed as one call interleaved with the others, and
``ratio_floor = epoch_s / floor_s``; its parts are stored as ``rmatvec_s`` (``M.T @ y``) and
``exp_s`` (the exp, 0 without one).

Outputs (written atomically by ``bench.report.write``): ``results/benchmarks/epoch_vs_matvec``
``.parquet`` (one row per data set and configuration), ``.json`` (the machine, library
versions, load average and settings) and ``.md`` (the table).

Usage::

    python benchmarks/epoch_vs_matvec.py                 # everything, defaults
    python benchmarks/epoch_vs_matvec.py --datasets leu --repeats 5
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from pdsparse.problem import Problem
from pdsparse.solvers import make_kernel

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path (tests)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import machine, versions  # noqa: E402
from bench.report import write  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "results" / "benchmarks" / "epoch_vs_matvec"
DEFAULT_MIRROR = REPO.parent / "shared" / "datasets"
MIRROR_ENV = "PDSPARSE_DATA_MIRROR"

# name -> (file in the mirror, n_features, positive class or None); LIBSVM text, 1-based
# indices. news20 is multiclass (labels 1..20): one-vs-rest with ``positive`` as +1
# (``--positive news20=K`` picks another class).
MIRROR_DATASETS = {
    "leu": ("leu.bz2", 7129, None),
    "gisette_scale.t": ("gisette_scale.t.bz2", 5000, None),
    "news20": ("news20.bz2", 62061, 1),
}
DATASETS = ("leu", "gisette_scale.t", "news20", "synthetic")

# (solver, sampling, dual_step); dual_step is "" for primal RCD (it has no such option)
CONFIGS = [
    ("dual_rcd", "importance", "fixed"),
    ("dual_rcd", "importance", "newton"),
    ("dual_rcd", "uniform", "fixed"),
    ("dual_rcd", "uniform", "newton"),
    ("dual_rcd", "permutation", "fixed"),
    ("dual_rcd", "permutation", "newton"),
    ("primal_rcd", "importance", ""),
    ("primal_rcd", "uniform", ""),
    ("primal_rcd", "permutation", ""),
]

COLUMNS = [
    "solver", "dataset", "nnz", "epoch_s", "matvec_s", "ratio",
    "matvec_int32_s", "ratio_int32", "floor_s", "ratio_floor", "rmatvec_s", "exp_s",
    "floor_exps", "positive_class", "n", "d", "density", "loss", "l2", "sampling",
    "dual_step", "format", "repeats", "epoch_inner", "matvec_inner", "epoch_min_s",
    "matvec_min_s", "epoch_wall_s", "matvec_wall_s", "clock", "iters_per_epoch", "ns_per_nnz",
    "setup_s", "normalization", "source",
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def avg_row_norm_normalize(A: sp.csr_matrix) -> sp.csr_matrix:
    """Divide all entries by the average example (row) norm (Face-Off Sec. 7; X = A^T)."""
    from pdsparse.data.normalize import normalize

    return normalize(A, "avg_example_norm")[0]


def resolve_mirror(arg: str | None) -> Path:
    """``--mirror`` wins, then ``$PDSPARSE_DATA_MIRROR``, then ``<repo>/../shared/datasets``."""
    for value in (arg, os.environ.get(MIRROR_ENV)):
        if value:
            return Path(os.path.expandvars(os.path.expanduser(value)))
    return DEFAULT_MIRROR


def load_mirror(name: str, mirror: Path, positive: float | None = None
                ) -> tuple[sp.csr_matrix, np.ndarray, str] | None:
    """(A, b in {-1, +1}, source) through ``pdsparse.data.libsvm``; a multiclass set is made
    one-vs-rest with ``positive`` (default: the table's class) as +1."""
    from pdsparse.data.libsvm import binarize_labels, read_libsvm

    fname, n_features, default_positive = MIRROR_DATASETS[name]
    path = mirror / fname
    if not path.is_file():
        log(f"skipping {name}: {path} not found (set --mirror or ${MIRROR_ENV})")
        return None
    A, y = read_libsvm(path, n_features=n_features)
    pos = default_positive if positive is None else positive
    b = binarize_labels(y, pos)
    source = str(path) if pos is None else f"{path} (class {pos:g} vs rest)"
    return A, b, source


def load_synthetic(args) -> tuple[sp.csr_matrix, np.ndarray, str]:
    """Zipf bag of words from ``pdsparse.data.synthetic`` (fallback: skewed scipy.sparse.random)."""
    n, d, m, e, s = args.syn_n, args.syn_d, args.syn_mean_nnz, args.syn_exponent, args.syn_seed
    try:
        from pdsparse.data.synthetic import zipf_bow

        A, b = zipf_bow(n, d, m, e, s)
        src = f"zipf_bow(n={n},d={d},mean_nnz_per_row={m},exponent={e},seed={s})"
        return sp.csr_matrix(A), b, src
    except Exception as exc:  # module missing or broken: documented fallback
        log(f"zipf_bow unavailable ({exc!r}); using scipy.sparse.random with Zipf columns")
    rng = np.random.default_rng(s)
    nnz = int(n * m)
    wts = np.arange(1, d + 1, dtype=np.float64) ** (-e)
    cols = rng.choice(d, size=nnz, p=wts / wts.sum())
    rows = rng.integers(0, n, size=nnz)
    A = sp.csr_matrix((rng.random(nnz) + 0.5, (rows, cols)), shape=(n, d))
    A.sum_duplicates()
    b = np.where(A @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return A, b, f"scipy_random_zipf_columns(n={n},d={d},nnz~{nnz},exponent={e},seed={s})"


def _inner(t_one: float, min_sample_s: float) -> int:
    return max(1, math.ceil(min_sample_s / max(t_one, 1e-9)))


def _sample(f: Callable[[], object], inner: int) -> tuple[float, float]:
    """(thread CPU time, wall time) of one call, averaged over ``inner`` calls."""
    c, t = time.thread_time(), time.perf_counter()
    for _ in range(inner):
        f()
    return (time.thread_time() - c) / inner, (time.perf_counter() - t) / inner


def floor_calls(M: sp.spmatrix, solver: str, loss: str, seed: int = 0
                ) -> tuple[Callable[[], object], Callable[[], object], Callable[[], object], int]:
    """(floor, rmatvec, exp, exps): the epoch's floor on the matrix ``M`` the kernel walks.

    ``floor()`` computes ``M @ x``, ``M.T @ y`` and, for the logistic loss, ``numpy.exp``
    over ``exps`` values (nnz for primal RCD, one per nonzero; n for dual RCD, one per row;
    0 otherwise); ``rmatvec()`` and ``exp()`` are its last two parts alone.
    """
    rng = np.random.default_rng(seed)
    n, d = M.shape
    x, y = rng.standard_normal(d), rng.standard_normal(n)
    MT = M.T  # CSC -> CSR view (or CSR -> CSC) of the same arrays: built outside the timer
    exps = 0 if loss != "logistic" else (M.nnz if solver == "primal_rcd" else n)
    v = -np.abs(rng.standard_normal(exps))  # margins' exps are of -|s|, as in the kernels
    out = np.empty_like(v)

    def rmatvec() -> None:
        MT @ y

    def exp() -> None:
        if exps:
            np.exp(v, out=out)

    def floor() -> None:
        M @ x
        MT @ y
        if exps:
            np.exp(v, out=out)

    return floor, rmatvec, exp, exps


def bench_config(problem: Problem, solver: str, sampling: str, dual_step: str, repeats: int,
                 min_sample_s: float, seed: int, clock: str = "cpu") -> dict:
    fmt = "csc" if solver == "primal_rcd" else "csr"
    M = problem.csc if fmt == "csc" else problem.csr  # cached before the kernel setup
    t0 = time.perf_counter()
    kernel = make_kernel(problem, solver, sampling, dual_step or "fixed", seed)
    setup_s = time.perf_counter() - t0
    nnz = problem.nnz
    x = np.random.default_rng(seed).standard_normal(problem.d)
    cls = sp.csc_matrix if fmt == "csc" else sp.csr_matrix
    M32 = cls((M.data, M.indices.astype(np.int32), M.indptr.astype(np.int32)), shape=M.shape)
    floor, rmatvec, exp, exps = floor_calls(M, solver, problem.loss, seed)

    iters_total = 0

    def epoch() -> None:
        nonlocal iters_total
        iters_total += kernel.run(nnz)[0]

    def matvec() -> None:
        M @ x

    def matvec32() -> None:
        M32 @ x

    # warm-up (also sizes the inner loops); the kernel state carries over between epochs
    t_epoch = _sample(epoch, 1)[1]
    t_mv = _sample(matvec, 3)[1]
    _sample(matvec32, 3)
    t_fl = _sample(floor, 3)[1]
    t_rmv, t_exp = _sample(rmatvec, 3)[1], _sample(exp, 3)[1]
    e_in, m_in = _inner(t_epoch, min_sample_s), _inner(t_mv, min_sample_s)
    f_in, r_in, x_in = (_inner(t, min_sample_s) for t in (t_fl, t_rmv, t_exp))
    iters_total = 0
    ep, mv, mv32, fl, rmv, ex = [], [], [], [], [], []
    for _ in range(repeats):  # interleaved, so background load hits all of them alike
        ep.append(_sample(epoch, e_in))
        mv.append(_sample(matvec, m_in))
        mv32.append(_sample(matvec32, m_in))
        fl.append(_sample(floor, f_in))
        rmv.append(_sample(rmatvec, r_in))
        ex.append(_sample(exp, x_in) if exps else (0.0, 0.0))
    if not np.all(np.isfinite(kernel.iterates()[0])):
        log(f"warning: {solver}/{sampling}/{dual_step}: iterate not finite after the benchmark")
    k = 0 if clock == "cpu" else 1
    epoch_s, matvec_s, mv32_s, floor_s, rmatvec_s, exp_s = (
        statistics.median(s[k] for s in v) for v in (ep, mv, mv32, fl, rmv, ex))
    epoch_w, matvec_w = (statistics.median(s[1] for s in v) for v in (ep, mv))
    return {
        "solver": solver, "nnz": nnz, "epoch_s": epoch_s, "matvec_s": matvec_s,
        "ratio": epoch_s / matvec_s, "matvec_int32_s": mv32_s, "ratio_int32": epoch_s / mv32_s,
        "floor_s": floor_s, "ratio_floor": epoch_s / floor_s, "rmatvec_s": rmatvec_s,
        "exp_s": exp_s, "floor_exps": exps,
        "sampling": sampling, "dual_step": dual_step, "format": fmt, "repeats": repeats,
        "epoch_inner": e_in, "matvec_inner": m_in, "epoch_min_s": min(s[k] for s in ep),
        "matvec_min_s": min(s[k] for s in mv), "epoch_wall_s": epoch_w, "matvec_wall_s": matvec_w,
        "clock": clock, "iters_per_epoch": iters_total / (repeats * e_in),
        "ns_per_nnz": 1e9 * epoch_s / nnz, "setup_s": setup_s,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="the outputs' path without extension: .parquet, .json, .md "
                    "(default: %(default)s)")
    ap.add_argument("--mirror", default=None,
                    help=f"dataset mirror dir (default: ${MIRROR_ENV}, else {DEFAULT_MIRROR})")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--solvers", nargs="+", default=["dual_rcd", "primal_rcd"],
                    choices=["dual_rcd", "primal_rcd"])
    ap.add_argument("--samplings", nargs="+", default=["importance", "uniform", "permutation"],
                    choices=["importance", "uniform", "permutation"])
    ap.add_argument("--positive", action="append", default=[], metavar="DATASET=CLASS",
                    help="positive class of a multiclass set, one-vs-rest (default: news20=1)")
    ap.add_argument("--loss", default="logistic", choices=["logistic", "squared", "smooth_hinge"])
    ap.add_argument("--repeats", type=int, default=11, help="timed samples per row")
    ap.add_argument("--min-sample-s", type=float, default=0.02,
                    help="each sample repeats the call until it lasts at least this long")
    ap.add_argument("--clock", default="cpu", choices=["cpu", "wall"],
                    help="time source of epoch_s/matvec_s: thread CPU time (robust to other "
                         "processes on the machine) or wall time; both are stored")
    ap.add_argument("--seed", type=int, default=0, help="kernel seed")
    ap.add_argument("--syn-n", type=int, default=100_000)
    ap.add_argument("--syn-d", type=int, default=50_000)
    ap.add_argument("--syn-mean-nnz", type=float, default=60.0)
    ap.add_argument("--syn-exponent", type=float, default=1.0)
    ap.add_argument("--syn-seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.min_sample_s < 0:
        ap.error("--repeats must be >= 1 and --min-sample-s >= 0")
    positive = {}
    for item in args.positive:
        name, _, cls = item.partition("=")
        if name not in MIRROR_DATASETS or not cls:
            ap.error(f"--positive {item!r}: expected DATASET=CLASS with DATASET one of "
                     f"{', '.join(MIRROR_DATASETS)}")
        positive[name] = float(cls)

    mirror = resolve_mirror(args.mirror)
    info = {"machine": machine(), "versions": versions(env=True), "mirror": str(mirror),
            "settings": vars(args) | {"out": str(args.out)}, "loadavg_start": os.getloadavg()}
    rows = []
    for name in args.datasets:
        if name == "synthetic":
            A, b, source = load_synthetic(args)
        else:
            got = load_mirror(name, mirror, positive.get(name))
            if got is None:
                continue
            A, b, source = got
        pos_class = positive.get(name, MIRROR_DATASETS.get(name, (None,) * 3)[2])
        A = avg_row_norm_normalize(A)
        n, d = A.shape
        problem = Problem(A, b, loss=args.loss, l2=1.0 / n, name=name)
        problem.csc  # noqa: B018 -- build the cached CSC copy outside every timing
        log(f"{name}: n={n} d={d} nnz={problem.nnz} ({source})")
        for solver, sampling, dual_step in CONFIGS:
            if solver not in args.solvers or sampling not in args.samplings:
                continue
            r = bench_config(problem, solver, sampling, dual_step, args.repeats,
                             args.min_sample_s, args.seed, args.clock)
            r |= {"dataset": name, "n": n, "d": d, "density": problem.nnz / (n * d),
                  "loss": args.loss, "l2": problem.l2, "normalization": "avg_example_norm",
                  "source": source, "positive_class": pos_class}
            rows.append(r)
            log(f"  {solver:10s} {sampling:10s} {dual_step:6s} epoch {r['epoch_s'] * 1e3:9.3f} ms"
                f"  matvec {r['matvec_s'] * 1e3:8.3f} ms  ratio {r['ratio']:5.2f}"
                f"  floor {r['floor_s'] * 1e3:8.3f} ms  ratio {r['ratio_floor']:5.2f}"
                f"  (int32 matvec {r['matvec_int32_s'] * 1e3:8.3f} ms,"
                f" ratio {r['ratio_int32']:5.2f})")
    if not rows:
        log("no dataset available: nothing written")
        return 1
    df = pd.DataFrame(rows)[COLUMNS]
    info["loadavg_end"] = os.getloadavg()
    show = df[["solver", "dataset", "sampling", "dual_step", "nnz", "epoch_s", "matvec_s", "ratio",
               "floor_s", "ratio_floor", "matvec_int32_s", "ratio_int32"]]
    m = info["machine"]
    print(write(df, info, args.out, lambda f, meta: "\n".join([
        "# One RCD epoch against one matrix-vector product", "",
        f"{m['nproc']} CPUs ({m['cpu']}); load average {info['loadavg_start'][0]:.2f} -> "
        f"{info['loadavg_end'][0]:.2f}; commit {info['versions']['git_commit'][:7]}; clock "
        f"{args.clock}.", "", show.to_markdown(index=False, floatfmt=".4g"), ""])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
