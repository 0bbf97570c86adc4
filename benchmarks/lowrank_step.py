"""Benchmark: the rank-s block step (top-s SVD) versus a full SVD as d and s grow.

PDBFW Algorithm 2 and block Frank-Wolfe (Allen-Zhu et al. 2017) replace the projection onto
the trace-norm ball (a full SVD of a d x c matrix) by a top-s SVD (PDBFW Sec. 4.4: "the time
dependence on n, c, d, s is ncs + s^2 (n + c)"). This script measures, for each shape d x c
and rank s, the time of :func:`pdsparse.lowrank.top_singular` with each method
(``lanczos``, ``randomized``, ``full``) and of a full ``numpy.linalg.svd``, the median of
``--repeats`` runs, on two kinds of matrix:

* ``lowrank``: a rank-s matrix (Gaussian factors, singular values ~ sqrt(d c)) plus Gaussian
  noise of standard deviation ``--noise`` -- the shape of X - G/coef near a rank-s optimum,
  with a spectral gap after s;
* ``gaussian``: a standard Gaussian matrix, no spectral gap (the worst case for Lanczos and
  the randomized method).

``err`` is max_j |sigma_j - sigma_j(full)| / sigma_1(full) over the top s, the accuracy of
the singular values the block step projects.

``--solvers`` times instead one iteration of each trace-norm solver
(:mod:`pdsparse.solvers.trace`) on PDBFW's Sec. 5.1 problem: ``lowrank_sensing`` with n =
1000, d = 800, c = 600, rank s in ``--ranks``, ||X0||_* = 1, radius 0.5, mu = 10/n, the
squared loss; block FW with each SVD method (``block_fw[lanczos]`` ...) and ``s`` = the data's
rank. Each kernel is first run ``--warmup`` iterations (the first iterations of SFW, SCGS,
STORC differ: batches and CndG calls grow), then the median of ``--repeats`` single iterations
is printed, with the iterations' mean work in epochs (n d c multiply-adds).

Single-threaded BLAS by default (the house rule of ``benchmarks/_harness.py``; the script
re-runs itself with OMP/OPENBLAS/MKL_NUM_THREADS=1): on this 2-core machine shared with other
jobs, two OpenBLAS threads made an 800 x 600 SVD 6-15x slower (1.2-3.2 s against 0.21 s with
one thread, measured at load average 8). ``--threads all`` keeps the environment's setting.
The last line gives the load: the cores other processes kept busy meanwhile.

Usage::

    python benchmarks/lowrank_step.py                        # 800 x 600, s in 1 10 20 100
    python benchmarks/lowrank_step.py --shapes 400x300 800x600 1600x1200 --ranks 10 100
    python benchmarks/lowrank_step.py --solvers --ranks 10 20 100
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _harness import OtherLoad, loadavg, single_thread_env, single_threaded

from pdsparse.lowrank import METHODS, top_singular


def _matrix(kind: str, d: int, c: int, s: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        return rng.standard_normal((d, c))
    L = rng.standard_normal((d, s)) @ rng.standard_normal((s, c))
    return L + noise * rng.standard_normal((d, c))


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


SOLVER_RUNS = (("acc_pg", {}, "lanczos"), ("fw", {}, "lanczos"), ("svrg", {}, "lanczos"),
               ("scgs", {}, "lanczos"), ("storc", {}, "lanczos"), ("sfw", {}, "lanczos"),
               ("block_fw", {"s": "rank"}, "lanczos"), ("block_fw", {"s": "rank"}, "randomized"),
               ("block_fw", {"s": "rank"}, "full"))


def time_solvers(ranks: list[int], repeats: int, warmup: int) -> None:
    """One iteration of each trace-norm solver on PDBFW's Sec. 5.1 problem (module doc)."""
    from pdsparse.data.synthetic import lowrank_sensing
    from pdsparse.penalties import TraceBall
    from pdsparse.problem import Problem
    from pdsparse.solvers import SOLVERS

    print(f"{'solver':22} {'s':>4} {'iter_s':>9} {'epochs/iter':>12}")
    for s in ranks:
        A, B = lowrank_sensing(rank=s, nuclear_norm=1.0, seed=0)
        p = Problem(A, B, "squared", penalty=TraceBall(0.5, 10 / A.shape[0]))
        epoch = p.nnz * p.k
        for name, opts, svd in SOLVER_RUNS:
            opts = {k: str(s) if v == "rank" else v for k, v in opts.items()}
            kernel = SOLVERS[name].make_kernel(p, opts, 0)
            kernel.svd = svd
            for _ in range(warmup):
                kernel.run(1)
            times, work = [], 0
            for _ in range(repeats):
                t0 = time.perf_counter()
                work += kernel.run(1)[1]
                times.append(time.perf_counter() - t0)
            label = f"{name}[{svd}]" if name == "block_fw" else name
            print(f"{label:22} {s:4d} {statistics.median(times):9.4f} "
                  f"{work / repeats / epoch:12.3f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    keep_threads = any(a.startswith("--threads") for a in args_in)
    if not keep_threads and not single_threaded():
        # single-threaded BLAS must be set before NumPy loads it: run again with it set
        return subprocess.run([sys.executable, str(Path(__file__).resolve()), *args_in],
                              env=single_thread_env()).returncode
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["800x600"],
                        help="matrix shapes d x c (default: PDBFW Sec. 5.1's 800x600)")
    parser.add_argument("--ranks", nargs="+", type=int, default=[1, 10, 20, 100])
    parser.add_argument("--kinds", nargs="+", default=["lowrank", "gaussian"],
                        choices=["lowrank", "gaussian"])
    parser.add_argument("--noise", type=float, default=1e-2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--solvers", action="store_true",
                        help="time one iteration of each trace-norm solver instead")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", choices=["all"],
                        help="all: keep the environment's BLAS threads (default: one)")
    args = parser.parse_args(args_in)
    load = OtherLoad()
    if args.solvers:
        time_solvers(args.ranks, args.repeats, args.warmup)
    else:
        time_svds(args)
    print(f"# BLAS threads: {'environment' if args.threads else 1}; other processes kept "
          f"{load.stop():.2f} cores busy on average; load average {loadavg()}")
    return 0


def time_svds(args) -> None:
    """The top-s SVD by each method against a full SVD (module docstring)."""
    print(f"{'kind':9} {'d x c':>10} {'s':>4} {'full_svd_s':>10} "
          + " ".join(f"{m + '_s':>12} {m[:4] + '_err':>9}" for m in METHODS))
    for kind in args.kinds:
        for shape in args.shapes:
            d, c = (int(v) for v in shape.lower().split("x"))
            for s in args.ranks:
                M = _matrix(kind, d, c, s, args.noise, seed=s)
                full = _median_time(lambda M=M: np.linalg.svd(M, full_matrices=False),
                                    args.repeats)
                ref = np.linalg.svd(M, compute_uv=False)[:s]
                row = f"{kind:9} {shape:>10} {s:4d} {full:10.4f}"
                for method in METHODS:
                    t = _median_time(lambda M=M, s=s, m=method: top_singular(M, s, m),
                                     args.repeats)
                    sig = top_singular(M, s, method)[1]
                    err = float(np.max(np.abs(sig - ref[:sig.size])) / ref[0])
                    row += f" {t:12.4f} {err:9.1e}"
                print(row, flush=True)


if __name__ == "__main__":
    sys.exit(main())
