"""Benchmark: the CPU cost of one pass of each RCD kernel, fitted as ``a nnz + b m``.

:data:`pdsparse.solvers.predict.PASS_COST` holds, for primal RCD, dual RCD and Prox-SDCA (dual RCD
on the elastic net) and each loss, the nanoseconds per nonzero ``a`` and per coordinate drawn
``b`` (m = d for primal, n for the dual kernels) of one pass over nnz(A). This script measures
them: on the calibration sets (six of the generated sets of ``advise_accuracy.py``, from
n << d to n >> d, sparse and dense), thread CPU time of the first ``RUN_PASSES`` passes from
the start (fresh kernels, setup excluded; median of ``--repeats`` samples of at least
``--min-s`` seconds), then a least-squares fit
in relative error per (kernel, loss). It prints the fitted table as the Python literal of
``PASS_COST`` and writes ``results/benchmarks/pass_cost.{parquet,md,json}`` (atomic).

Usage::

    python benchmarks/pass_cost.py            # ~2 min
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import OUT_DIR, Watch, make_log, run_record, versions  # noqa: E402
from advise_accuracy import load  # noqa: E402
from bench.report import write  # noqa: E402

log = make_log("pass_cost")

CALIBRATION = ("zipf-1k-x-20k", "zipf-2k-x-5k", "zipf-10k-x-2k", "zipf-50k-x-1k",
               "gauss-500-x-500", "gauss-5k-x-50")
KERNELS = (("primal_rcd", "primal_rcd", {}, 0.0), ("dual_rcd", "dual_rcd", {}, 0.0),
           ("prox_sdca", "dual_rcd", {"dual_step": "newton"}, 1e-4))
"""(PASS_COST's kernel name, registry method, options, l1: Prox-SDCA is dual RCD at l1 > 0)."""


RUN_PASSES = 8
"""Passes per timed run, each from the start (a fresh kernel): what a solve to 1e-6 runs."""


def seconds_per_pass(problem, method: str, options: dict, repeats: int, min_s: float) -> float:
    """Thread CPU seconds per pass over the first :data:`RUN_PASSES` passes from the start,
    setup excluded: the passes a race or a solve runs. Not passes near the optimum: there the
    exact step's Newton solve takes one sigmoid where the first passes take two or three, and
    Prox-SDCA's pass on zipf-2k-x-5k costs half (127 vs 231 us, measured)."""
    from pdsparse.solvers import make_kernel

    make_kernel(problem, method, options=options).run(problem.nnz)  # warm-up: caches
    samples = []
    for _ in range(repeats):
        passes, spent = 0, 0.0
        while spent < min_s:
            kernel = make_kernel(problem, method, options=options)
            t0 = time.thread_time()
            kernel.run(RUN_PASSES * problem.nnz)
            spent += time.thread_time() - t0
            passes += RUN_PASSES
        samples.append(spent / passes)
    return statistics.median(samples)


def main(argv=None) -> int:
    import pandas as pd

    from pdsparse.losses import LOSSES
    from pdsparse.penalties import ElasticNet
    from pdsparse.problem import Problem

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-s", type=float, default=0.1)
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    opts = ap.parse_args(argv)
    watch = Watch()
    rows = []
    for name in CALIBRATION:
        A, b, _ = load(name, Path("."))
        log(f"{name}: {A.shape[0]} x {A.shape[1]}, {A.nnz} nonzeros")
        for loss in LOSSES:
            for kernel, method, options, l1 in KERNELS:
                p = Problem(A, b, loss, penalty=ElasticNet(1.0 / A.shape[0], l1))
                s = seconds_per_pass(p, method, options, opts.repeats, opts.min_s)
                coords = p.d if method == "primal_rcd" else p.n
                rows.append(dict(dataset=name, loss=loss, kernel=kernel, n=p.n, d=p.d,
                                 nnz=p.nnz, coords=coords, seconds=s))
    df = pd.DataFrame(rows)
    fits, lines = {}, []
    for (kernel, loss), g in df.groupby(["kernel", "loss"], sort=False):
        X = g[["nnz", "coords"]].to_numpy(float) / g["seconds"].to_numpy()[:, None]
        coef = np.linalg.lstsq(X, np.ones(len(g)), rcond=None)[0]
        fitted = g[["nnz", "coords"]].to_numpy(float) @ coef
        df.loc[g.index, "fitted_over_measured"] = fitted / g["seconds"].to_numpy()
        fits[(kernel, loss)] = (round(float(coef[0]) * 1e9, 2), round(float(coef[1]) * 1e9, 1))
        spread = fitted / g["seconds"].to_numpy()
        lines.append(f"| {kernel} | {loss} | {coef[0] * 1e9:.2f} | {coef[1] * 1e9:.1f} | "
                     f"{spread.min():.2f}–{spread.max():.2f} |")
    watched = watch.stop()
    meta = run_record(watch, {k: str(v) for k, v in vars(opts).items()}, versions())
    meta.update(quiet=watched["quiet"], fits={f"{k}|{loss}": v for (k, loss), v in fits.items()})
    md = "\n".join([
        "# One pass of each RCD kernel: ns per nonzero and per coordinate",
        "",
        f"Recorded {time.strftime('%Y-%m-%d')} at commit {meta['versions']['git_commit'][:7]}; "
        f"{meta['machine']['nproc']} CPUs ({meta['machine']['cpu']}); load average "
        f"{meta['loadavg_before']} / {meta['loadavg_after']}; thread CPU time.",
        "",
        "| kernel | loss | ns per nonzero | ns per coordinate | fitted / measured |",
        "|---|---|--:|--:|--:|", *lines, "",
        "As `pdsparse.solvers.predict.PASS_COST`:", "", "```python",
        "PASS_COST = {", *[f"    {k!r}: {v!r}," for k, v in fits.items()], "}", "```", ""])
    print(write(df, meta, Path(opts.out) / "pass_cost", lambda f, m: md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
