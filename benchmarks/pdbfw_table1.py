"""Benchmark: PDBFW's Table 1 measured, time per iteration of the l1-ball methods as d and s vary.

PDBFW (Lei et al. 2019) Table 1 lists the per-iteration cost of each method in O-notation
(:data:`pdsparse.repro.papers.pdbfw.values.TABLE1`), "the time complexity of outer iterations", in
the setting of Corollary 4.1.1: O(nd) for Frank-Wolfe, accelerated PGD and SVRG, O(kappa^2 d +
nd) for STORC, O(kappa^2 #iter^3 / eps^2 d) for SCGS, and O(ns) for PDBFW (Sec. 4.2: the
O(ns) of maintaining A x and the O(dk) = O(ns) of maintaining A^T y with k = ns/d, which
assumes ns >= d; the O(d) and O(n) selections are left out). This script measures the time
of one such iteration on synthetic data while d grows at fixed s and while s grows at fixed d,
and fits the log-log slope: 1 for a cost linear in the varied size, 0 for none.

Data (:func:`planted`, seeded): A with n rows and d columns, i.i.d. N(0, 1/(rho d)) entries
at density rho (``dense``: rho = 1, a C-order array; ``sparse``: a CSR matrix with rho n d
stored entries at uniformly random places), so rows have norm about 1; a planted s-sparse
x0 (s random coordinates, N(0, 1) values); labels b = sign(A x0 + 0.1 std(A x0) N(0, 1)).
Problem: ``Problem(A, b, "smooth_hinge", penalty=L1Ball(r, 10/n))`` with r = ||x0||_1 (the
ball that holds the planted vector).

Methods (the registry's, default options except PDBFW's s): ``pdbfw`` with s = the planted
sparsity (Theorem 4.1: s bounds nnz(x*)) and k = auto (ceil(ns/d), Sec. 4.2), ``acc_pg``,
``fw``, ``svrg``, ``scgs``, ``storc``. One Table 1 iteration ("outer iteration"):

* pdbfw, acc_pg, fw: one iteration of the kernel;
* svrg: one snapshot, its full gradient and m = 2n inner steps (the kernel counts inner
  steps: outer = iterations / m);
* storc: one snapshot t, its full gradient and N_t inner iterations (the kernel counts inner
  iterations: outer = iterations / N_t; N_t = ceil(sqrt(32 L / mu)) is the same for every t);
* scgs: one outer iteration k; its cost grows with k (batch B_k ~ k^3 up to n draws, O(k)
  CndG steps), so the time is the mean over k = 1..20 from a fresh kernel (``--window``):
  every size runs the same indices;
* storc's snapshots grow too (CndG's iteration bound 6 beta_k D^2 / eta_{t,k} doubles with
  t), so the mean over snapshots t = 1, 2 from a fresh kernel.

Timing: the kernel is built outside the timer (its setup time is reported), then a
calibration call (doubling budgets until one outer iteration is done) and ``--repeats``
samples of ``kernel.run(B)``, B sized for >= ``--min-sample-s`` and >= 1 outer iteration;
per sample the time over the outer iterations done (fractional for svrg); the median of
the samples. SCGS and STORC: ``--repeats`` timed windows, each from a fresh kernel.
Clock: thread CPU time (the machine is shared; ``--clock wall`` for wall time; both are
kept). One ``A @ x`` in the same layout is timed beside (one pass over A).
Single-threaded BLAS (the script re-runs itself with OMP/OPENBLAS/MKL_NUM_THREADS=1).

Outputs (atomic, ``bench.report.write``) in ``results/benchmarks/``: ``pdbfw_table1.parquet``
(one row per series x size x method; the PDBFW scorecard's Table 1 row reads it),
``pdbfw_table1.md`` (the measured times, the fitted slopes with R^2 beside
Table 1's O-notation and the slope it implies), ``pdbfw_table1.json`` (machine, quietness,
versions, settings, fits).

The trace-norm ball is not measured here: ``benchmarks/lowrank_step.py`` (Helper TRACE)
times the rank-s step against a full SVD as d and s grow, which is Algorithm 2's part of
Table 1's argument (Sec. 4.4).

Usage::

    python benchmarks/pdbfw_table1.py                       # dense and sparse series
    python benchmarks/pdbfw_table1.py --quick               # small sizes, ~1 min
    python benchmarks/pdbfw_table1.py --series dense --methods pdbfw,fw
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from _harness import (
    OUT_DIR,
    OtherLoad,
    loadavg,
    machine,
    make_log,
    single_thread_env,
    single_threaded,
    snakemake_running,
    versions,
)
from bench.report import write

LOSS = "smooth_hinge"
MU_TIMES_N = 10.0  # mu = 10/n (PDBFW Sec. 5)
NOISE = 0.1
METHODS = ("pdbfw", "acc_pg", "fw", "svrg", "scgs", "storc")
PAPER_ROW = {"pdbfw": "Primal Dual FW (ours)", "acc_pg": "Accelerated PGD",
             "fw": "Frank Wolfe", "svrg": "SVRG", "scgs": "SCGS", "storc": "STORC"}
# the slope in d (at fixed s) and in s (at fixed d) that Table 1's per-iteration cost implies
# for dense data (nnz = nd); SCGS and STORC: the d, nd factors (kappa fixed by the data)
EXPECTED = {"pdbfw": (0.0, 1.0), "acc_pg": (1.0, 0.0), "fw": (1.0, 0.0), "svrg": (1.0, 0.0),
            "scgs": (1.0, 0.0), "storc": (1.0, 0.0)}
OTHER_MAX = 0.25

log = make_log("pdbfw_table1")


@dataclass(frozen=True)
class Series:
    """One sweep: ``vary`` = "d" (d over ``values`` at s = ``fixed``) or "s" (s over
    ``values`` at d = ``fixed``), n rows, density rho."""

    name: str
    vary: str
    n: int
    density: float
    fixed: int
    values: tuple[int, ...]

    def sizes(self) -> list[tuple[int, int]]:
        """(d, s) of each point."""
        return [(v, self.fixed) if self.vary == "d" else (self.fixed, v) for v in self.values]


def default_series(quick: bool) -> list[Series]:
    if quick:
        return [Series("dense", "d", 500, 1.0, 8, (500, 1000, 2000)),
                Series("dense", "s", 500, 1.0, 2000, (4, 16, 64)),
                Series("sparse", "d", 4000, 0.02, 8, (2000, 4000, 8000)),
                Series("sparse", "s", 4000, 0.02, 4000, (4, 16, 64))]
    # dense: the regime of Table 1 (ns >= d, so k = ns/d >= 1); 2000 x 16000 = 256 MB.
    # sparse: rho n s entries per block step against an O(d) selection.
    return [Series("dense", "d", 2000, 1.0, 16, (1000, 2000, 4000, 8000, 16000)),
            Series("dense", "s", 2000, 1.0, 8000, (4, 8, 16, 32, 64, 128, 256)),
            Series("sparse", "d", 20000, 0.01, 16, (5000, 10000, 20000, 40000, 80000)),
            Series("sparse", "s", 20000, 0.01, 20000, (4, 16, 64, 256, 1024))]


def planted(n: int, d: int, density: float, s: int, seed: int = 0):
    """(A, b, x0): N(0, 1/(rho d)) entries at density rho (dense array when rho = 1), an
    s-sparse x0 with N(0, 1) values, b = sign(A x0 + 0.1 std(A x0) N(0, 1))."""
    rng = np.random.default_rng([seed, n, d, s, int(density * 1e6)])
    scale = 1.0 / math.sqrt(density * d)
    if density >= 1.0:
        A = rng.standard_normal((n, d)) * scale
    else:
        nnz = int(round(density * n * d))
        flat = rng.choice(n * d, size=nnz, replace=False)
        rows, cols = np.divmod(flat, d)
        A = sp.csr_matrix((rng.standard_normal(nnz) * scale, (rows, cols)), shape=(n, d))
        A.sum_duplicates()
        A.sort_indices()
    x0 = np.zeros(d)
    x0[rng.choice(d, size=s, replace=False)] = rng.standard_normal(s)
    z = A @ x0
    b = np.sign(z + NOISE * z.std() * rng.standard_normal(n))
    b[b == 0] = 1.0
    return A, b, x0


def clock(kind: str):
    return time.thread_time if kind == "cpu" else time.perf_counter


def per_outer(kernel, method: str) -> float:
    """Kernel iterations per Table 1 iteration."""
    if method == "svrg":
        return float(kernel.m)
    if method == "storc":
        return float(kernel.n_t)
    return 1.0


GROWING = {"scgs": "iterations", "storc": "snapshots"}
"""Methods whose outer iterations grow in cost with their index: timed over a fixed window of
outer iterations from a fresh kernel (``--window``), so every size runs the same indices."""
WINDOW = {"scgs": 20, "storc": 2}


def measure(problem, method: str, options: dict, args) -> dict:
    """Setup time, then the median of ``args.repeats`` timed samples (time per outer
    iteration); :func:`measure_window` for SCGS and STORC."""
    if method in GROWING:
        return measure_window(problem, method, options, args)
    from pdsparse.solvers import make_kernel

    t = time.perf_counter()
    kernel = make_kernel(problem, method, seed=0, options=options)
    setup = time.perf_counter() - t
    # calibration: double the budget until one outer iteration is done (warms the code up)
    budget, its, touched, spent = 1, 0, 0, 0.0
    while True:
        t = time.perf_counter()
        i, w = kernel.run(budget)
        spent += time.perf_counter() - t
        its += i
        touched += w
        if its > 0 and its >= per_outer(kernel, method):
            break
        budget *= 2
    unit = per_outer(kernel, method)
    outers = its / unit
    work_per_outer = touched / outers
    want = max(1.0, args.min_sample_s / max(spent / outers, 1e-9))
    sample_budget = max(1, int(math.ceil(want * work_per_outer)))
    tick = clock(args.clock)
    cpu, wall, done = [], [], []
    k_first = its / unit
    for _ in range(args.repeats):
        t0, w0 = tick(), time.perf_counter()
        i, w = kernel.run(sample_budget)
        t1, w1 = tick(), time.perf_counter()
        o = i / unit
        cpu.append((t1 - t0) / o)
        wall.append((w1 - w0) / o)
        done.append(o)
        its += i
    out = {"seconds": statistics.median(cpu), "wall_s": statistics.median(wall),
           "setup_s": setup, "iters_per_outer": unit, "outer_timed": float(sum(done)),
           "work_per_outer": work_per_outer, "outer_first": k_first,
           "outer_last": its / unit, "samples": " ".join(f"{x:.4g}" for x in cpu)}
    if method == "pdbfw":
        out.update(s_used=int(kernel.s), k_used=int(kernel.k))
    del kernel
    return out


def measure_window(problem, method: str, options: dict, args) -> dict:
    """SCGS: outer iterations 1..W; STORC: snapshots 1..W (W = ``--window`` or
    :data:`WINDOW`; STORC's first call also takes the starting vertex, one pass). Each
    run(1) call is one outer (SCGS) or inner (STORC) iteration; a fresh kernel per sample,
    built outside the timer."""
    from pdsparse.solvers import make_kernel

    window = args.window or WINDOW[method]
    tick = clock(args.clock)
    cpu, wall, setups = [], [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        kernel = make_kernel(problem, method, seed=0, options=options)
        setups.append(time.perf_counter() - t)
        t0, w0 = tick(), time.perf_counter()
        its = touched = 0
        while True:
            i, w = kernel.run(1)
            its += i
            touched += w
            if method == "scgs" and kernel.k >= window:
                break
            if method == "storc" and kernel.t >= window and kernel.k == 0:
                break
        t1, w1 = tick(), time.perf_counter()
        cpu.append((t1 - t0) / window)
        wall.append((w1 - w0) / window)
    out = {"seconds": statistics.median(cpu), "wall_s": statistics.median(wall),
           "setup_s": statistics.median(setups),
           "iters_per_outer": its / window, "outer_timed": float(window),
           "work_per_outer": touched / window, "outer_first": 1.0,
           "outer_last": float(window), "samples": " ".join(f"{x:.4g}" for x in cpu),
           "batch_last": int(kernel.batches[-1]) if kernel.batches else 0,
           "cndg_per_outer": kernel.cndg_iterations / window}
    del kernel
    return out


def matvec_time(A, args) -> float:
    x = np.random.default_rng(1).standard_normal(A.shape[1])
    tick = clock(args.clock)
    times = []
    for _ in range(max(3, args.repeats)):
        inner, t0 = 0, tick()
        while True:
            A @ x
            inner += 1
            if tick() - t0 >= 0.02:
                break
        times.append((tick() - t0) / inner)
    return statistics.median(times)


def run_point(series: Series, d: int, s: int, methods: list[str], args) -> list[dict]:
    from pdsparse.penalties import L1Ball
    from pdsparse.problem import Problem
    from pdsparse.solvers import SOLVERS

    t = time.perf_counter()
    A, b, x0 = planted(series.n, d, series.density, s)
    gen_s = time.perf_counter() - t
    n = series.n
    radius = float(np.abs(x0).sum())
    problem = Problem(A, b, loss=LOSS, penalty=L1Ball(radius, MU_TIMES_N / n))
    stored = int(A.size if isinstance(A, np.ndarray) else A.nnz)
    mv = matvec_time(problem.mat, args)
    base = {"series": series.name, "vary": series.vary, "n": n, "d": d, "s": s,
            "density": series.density, "stored": stored, "radius": radius,
            "matvec_s": mv, "gen_s": gen_s}
    rows = []
    for method in methods:
        if method not in SOLVERS:
            rows.append({**base, "method": method, "note": "not in the registry"})
            continue
        options = {"s": str(s), "k": "auto"} if method == "pdbfw" else {}
        r = measure(problem, method, options, args)
        rows.append({**base, "method": method, "options": ",".join(
            f"{k}={v}" for k, v in options.items()) or "default", **r,
            "per_matvec": r["seconds"] / mv, "note": ""})
        log(f"  {series.name} n={n} d={d} s={s} {method}: {r['seconds'] * 1e3:.4g} ms per "
            f"outer iteration ({r['seconds'] / mv:.3g} A@x), setup {r['setup_s']:.3g} s")
    return rows


def fit(df: pd.DataFrame) -> pd.DataFrame:
    """Log-log least-squares slope of the time per iteration on the varied size."""
    out = []
    for (series, vary, method), g in df.groupby(["series", "vary", "method"], sort=False):
        g = g[np.isfinite(g.seconds)] if "seconds" in g else g.iloc[:0]
        if len(g) < 2:
            continue
        x = np.log(g[vary].to_numpy(float))
        y = np.log(g.seconds.to_numpy(float))
        slope, icpt = np.polyfit(x, y, 1)
        yhat = slope * x + icpt
        ss = float(((y - y.mean()) ** 2).sum())
        r2 = 1.0 - float(((y - yhat) ** 2).sum()) / ss if ss > 0 else float("nan")
        out.append({"series": series, "vary": vary, "method": method, "slope": slope,
                    "r2": r2, "points": len(g),
                    "expected": EXPECTED[method][0 if vary == "d" else 1]})
    return pd.DataFrame(out)


def markdown(df: pd.DataFrame, fits: pd.DataFrame, meta: dict) -> str:
    from pdsparse.repro.papers.pdbfw.values import TABLE1

    m = meta["machine"]
    lines = ["# PDBFW Table 1, measured: time per outer iteration", "",
             f"Machine: {m['nproc']} CPUs ({m['cpu']}); single-threaded BLAS; clock: "
             f"{meta['settings']['clock']} time; "
             f"{'quiet' if meta['quiet'] else 'NOT quiet'} (other processes kept "
             f"{meta['other_cores']:.2f} cores busy on average; load average "
             f"{meta['loadavg_before']} -> {meta['loadavg_after']}).", "",
             "Planted s-sparse problems, smooth hinge, mu = 10/n, r = ||x0||_1; PDBFW with "
             "s = the planted sparsity and k = ceil(ns/d). Milliseconds per Table 1 "
             "iteration (svrg: a snapshot and 2n inner steps; storc: a snapshot and N_t inner "
             "iterations; scgs: the mean over the timed outer iterations, whose cost grows "
             "with k); in parentheses the same in units of one A @ x.", ""]
    if not fits.empty:
        lines += ["## Fitted log-log slopes beside Table 1", "",
                  "Slope of log(time per iteration) on log(d) at fixed s and on log(s) at fixed "
                  "d (R² in parentheses); `expected`: the slope Table 1's cost implies for "
                  "dense data (nnz = nd).", ""]
        cols = [(sr, v) for sr, v in dict.fromkeys(zip(fits.series, fits.vary, strict=True))]
        lines += ["| method | Table 1 per iteration | " + " | ".join(
                      f"{sr}: vs {v} (expected)" for sr, v in cols) + " |",
                  "|:--|:--|" + "--:|" * len(cols)]
        for method in dict.fromkeys(fits.method):
            cells = []
            for sr, v in cols:
                f = fits[(fits.series == sr) & (fits.vary == v) & (fits.method == method)]
                cells.append("" if f.empty else f"{f.slope.iloc[0]:.2f} ({f.r2.iloc[0]:.2f}) "
                             f"[{f.expected.iloc[0]:g}]")
            lines.append(f"| {method} | {TABLE1[PAPER_ROW[method]][0]} | "
                         + " | ".join(cells) + " |")
        lines.append("")
    for (series, vary), g in df.groupby(["series", "vary"], sort=False):
        g = g[g.note.fillna("") == ""]
        if g.empty:
            continue
        first = g.iloc[0]
        fixed = f"s = {first.s}" if vary == "d" else f"d = {first.d:,}"
        lines += [f"## {series}, {vary} varies (n = {first.n:,}, density {first.density:g}, "
                  f"{fixed})", ""]
        sizes = list(dict.fromkeys(g[vary]))
        lines += ["| method | " + " | ".join(f"{vary} = {v:,}" for v in sizes) + " |",
                  "|:--|" + "--:|" * len(sizes)]
        for method, gm in g.groupby("method", sort=False):
            cells = []
            for v in sizes:
                r = gm[gm[vary] == v]
                cells.append("" if r.empty else f"{r.seconds.iloc[0] * 1e3:.3g} "
                             f"({r.per_matvec.iloc[0]:.2g})")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        mv = [f"{g[g[vary] == v].matvec_s.iloc[0] * 1e3:.3g}" for v in sizes]
        lines.append("| one A @ x | " + " | ".join(mv) + " |")
        pd_rows = g[g.method == "pdbfw"]
        if not pd_rows.empty and "k_used" in pd_rows:
            lines.append("| pdbfw k | " + " | ".join(
                f"{int(pd_rows[pd_rows[vary] == v].k_used.iloc[0])}" for v in sizes) + " |")
        lines.append("")
    missing = sorted(set(df.method[df.note.fillna("") != ""]))
    if missing:
        lines += [f"Not in the registry (skipped): {', '.join(missing)}.", ""]
    lines += [f"Runtime {meta['total_seconds']:.0f} s; versions {meta['versions']}.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    if not single_threaded():
        # single-threaded BLAS must be set before NumPy loads it: run again with it set
        return subprocess.run([sys.executable, str(Path(__file__).resolve()),
                               *(sys.argv[1:] if argv is None else argv)],
                              env=single_thread_env()).returncode
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (~1 min)")
    ap.add_argument("--series", default="dense,sparse", help="dense, sparse or both")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-sample-s", type=float, default=0.2)
    ap.add_argument("--clock", default="cpu", choices=["cpu", "wall"])
    ap.add_argument("--window", type=int, default=None,
                    help="SCGS: outer iterations 1..W; STORC: snapshots 1..W (default 20 and "
                         "2: --window sets both)")
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    args = ap.parse_args(argv)

    wanted = set(args.series.split(","))
    series = [s for s in default_series(args.quick) if s.name in wanted]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"--methods: unknown {bad}; choose from {list(METHODS)}")
    t0 = time.perf_counter()
    load0 = loadavg()
    other = OtherLoad()
    quiet = not snakemake_running()
    rows = []
    for sr in series:
        log(f"series {sr.name}, {sr.vary} varies over {sr.values} (n = {sr.n}, density "
            f"{sr.density:g})")
        for d, s in sr.sizes():
            rows += run_point(sr, d, s, methods, args)
    df = pd.DataFrame(rows)
    if "note" not in df:
        df["note"] = ""
    fits = fit(df[df.note.fillna("") == ""])
    other_cores = other.stop()
    quiet = quiet and not snakemake_running() and other_cores < OTHER_MAX
    meta = {"total_seconds": time.perf_counter() - t0, "machine": machine(),
            "versions": versions(env=True), "quiet": quiet, "other_cores": other_cores,
            "loadavg_before": load0, "loadavg_after": loadavg(),
            "settings": {"series": [vars(s) for s in series], "methods": methods,
                         "repeats": args.repeats, "min_sample_s": args.min_sample_s,
                         "clock": args.clock, "quick": args.quick},
            "fits": fits.to_dict(orient="records")}
    print(write(df, meta, Path(args.out_dir) / "pdbfw_table1",
                lambda f, m: markdown(f, fits, m)))
    log(f"total runtime {meta['total_seconds']:.0f} s; quiet: {quiet}; BLAS threads "
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
