"""Benchmark: what an epoch and a DGPD iteration cost, on the DGPD paper's data (Lei et al. 2017).

(a) **Epoch vs one product.** One epoch of a coordinate kernel touches nnz(A) stored entries,
    as one ``A @ x`` does. For the DGPD baselines with l1 > 0, ``primal_rcd`` (uniform;
    proximal RCD over the columns) and ``dual_rcd`` (uniform, dual_step=newton: Prox-SDCA over
    the rows), the script reports ``epoch_s / matvec_s`` (target <= 3) on Mnist-RB (sparse,
    d ~ 1.58M), news20 (sparse) and Mnist-RF (dense), with the timing of
    ``benchmarks/epoch_vs_matvec.py``: ``make_kernel`` outside the timer, one warm-up epoch,
    then ``--repeats`` samples of ``kernel.run(nnz)`` interleaved with samples of the
    product in the layout the kernel walks (``problem.csc @ x`` for primal, ``problem.csr @ x``
    for dual; the one dense array for RF), thread CPU time by default (the machine may be
    shared; wall-clock medians are kept too), single-threaded BLAS.

(b) **DGPD's cost per outer iteration.** ``dgpd`` (Algorithm 2, inner=5, eta=x10) on Mnist-RB
    digit 0 at (lambda, mu) = (0.1, 0.01) (Table 2's setting, summed loss: l2 = mu/n,
    l1 = lambda/n), run for ``--dgpd-seconds`` of kernel time in chunks of about
    ``--chunk-ms``; per chunk the wall and CPU time, the outer iterations and the work the
    kernel reports (``kernel.run`` -> (iterations, touched); ``info`` counters "search" and
    "inner"), |A_x| = nnz(x), |A_y| = nnz(y) and the entries of the active submatrix. Least
    squares time = c_iter * iterations + c_work * work over the chunks; the same fit against
    |A_x| n + |A_y| d (what a search would cost with dense gradients) and the cost of one n d
    pass show that the time follows the active-set work, not n d. Also run on news20 (class 1)
    for a second (n, d). Plot: ``results/benchmarks/dgpd_scaling.png``.

Data come from ``benchmarks/dgpd_peers.py``'s cache (``results/benchmarks/data/``; prepared
when missing). Outputs (atomic, ``bench.report.write``): ``results/benchmarks/dgpd_scaling``
``.parquet`` (part a's rows with ``part`` "epochs", part b's with "dgpd_iterations", one per
chunk), ``.md``, ``.json`` (machine, quietness, versions, fits) and ``dgpd_scaling.png``.

Usage::

    python benchmarks/dgpd_scaling.py                    # everything
    python benchmarks/dgpd_scaling.py --quick            # digits-rb and news20, short
    python benchmarks/dgpd_scaling.py --parts a --datasets news20
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _harness import (
    DATA_DIR,
    OTHER_MAX,
    OUT_DIR,
    THREAD_ENV,
    OtherLoad,
    machine,
    snakemake_running,
)
from _harness import versions as harness_versions
from bench.report import write

LAM, MU = 0.1, 0.01  # Table 2's setting
EPOCH_DATASETS = ("mnist-rb", "news20", "mnist-rf")
DGPD_DATASETS = ("mnist-rb", "news20")
KERNELS = (
    ("primal_rcd", {"sampling": "uniform"}, "csc"),
    ("dual_rcd", {"sampling": "uniform", "dual_step": "newton"}, "csr"),
)
DGPD_OPTIONS = {"inner": "5", "eta": "x10"}


QUIET = "quiet (no snakemake running, no other busy process)"
NOT_QUIET = "NOT quiet: snakemake or another job ran during part of the measurement"


def log(msg: str) -> None:
    print(f"[dgpd_scaling {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def peers_module():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import dgpd_peers

    return dgpd_peers


def load(name: str, rf_rows: int | None, mirror: str | None):
    """(A, b, info) of a data set of dgpd_peers.py (its cache), class vs rest."""
    from pdsparse.data.store import load_dataset

    dp = peers_module()
    dd = dp.data_defs(rf_rows)[name]
    prep = dp.prep_data(dd, {"data_dir": str(DATA_DIR), "mirror": mirror})
    if "skipped" in prep:
        return None, None, prep
    t = time.perf_counter()
    ds = load_dataset(prep["path"])
    A = ds.A
    b = np.where(ds.b == dd.cls, 1.0, -1.0)
    return A, b, {**prep, "load_s": time.perf_counter() - t, "cls": dd.cls,
                  "recipe": dd.recipe}


def problem(A, b):
    from pdsparse.problem import Problem

    n = A.shape[0]
    return Problem(A, b, loss="smooth_hinge", l2=MU / n, l1=LAM / n)


# ---------------------------------------------------------------------------------------------
# (a) epoch vs matvec
# ---------------------------------------------------------------------------------------------


def _sample(f, inner: int) -> tuple[float, float]:
    c, t = time.thread_time(), time.perf_counter()
    for _ in range(inner):
        f()
    return (time.thread_time() - c) / inner, (time.perf_counter() - t) / inner


def bench_epoch(prob, method: str, options: dict, fmt: str, repeats: int, min_sample_s: float,
                clock: str) -> dict:
    from pdsparse.solvers import make_kernel

    if prob.dense:
        M, fmt = prob.mat, "dense"
    else:
        M = prob.csc if fmt == "csc" else prob.csr  # cached before the kernel setup
    t0 = time.perf_counter()
    kernel = make_kernel(prob, method, seed=0, options=options)
    setup_s = time.perf_counter() - t0
    nnz = prob.nnz
    x = np.random.default_rng(0).standard_normal(prob.d)
    iters = [0]

    def epoch():
        iters[0] += kernel.run(nnz)[0]

    def matvec():
        M @ x

    t_epoch = _sample(epoch, 1)[1]  # warm-up; the state carries over, as in a run
    t_mv = _sample(matvec, 2)[1]
    e_in = max(1, math.ceil(min_sample_s / max(t_epoch, 1e-9)))
    m_in = max(1, math.ceil(min_sample_s / max(t_mv, 1e-9)))
    iters[0] = 0
    ep, mv = [], []
    for _ in range(repeats):  # interleaved: background load hits both alike
        ep.append(_sample(epoch, e_in))
        mv.append(_sample(matvec, m_in))
    k = 0 if clock == "cpu" else 1
    epoch_s = statistics.median(s[k] for s in ep)
    matvec_s = statistics.median(s[k] for s in mv)
    return {"solver": method, "options": ",".join(f"{a}={v}" for a, v in options.items()),
            "format": fmt, "nnz": nnz, "epoch_s": epoch_s, "matvec_s": matvec_s,
            "ratio": epoch_s / matvec_s,
            "epoch_wall_s": statistics.median(s[1] for s in ep),
            "matvec_wall_s": statistics.median(s[1] for s in mv),
            "ratio_wall": statistics.median(s[1] for s in ep)
            / statistics.median(s[1] for s in mv),
            "ns_per_entry": 1e9 * epoch_s / nnz, "repeats": repeats, "epoch_inner": e_in,
            "matvec_inner": m_in, "iters_per_epoch": iters[0] / (repeats * e_in),
            "setup_s": setup_s, "clock": clock,
            "finite": bool(np.all(np.isfinite(kernel.solution())))}


def part_a(args) -> list[dict]:
    rows = []
    for name in args.epoch_datasets:
        A, b, info = load(name, args.rf_rows, args.mirror)
        if A is None:
            log(f"(a) {name}: skipped: {info['skipped']}")
            continue
        prob = problem(A, b)
        if not prob.dense:
            prob.csc  # noqa: B018 -- the CSC copy outside every timing
        log(f"(a) {name}: n={prob.n:,} d={prob.d:,} stored={prob.nnz:,}"
            f"{' dense' if prob.dense else ''} (load {info['load_s']:.1f} s)")
        for method, options, fmt in KERNELS:
            r = bench_epoch(prob, method, options, fmt, args.repeats, args.min_sample_s,
                            args.clock)
            r.update(dataset=name, n=prob.n, d=prob.d, dense=prob.dense, lam=LAM, mu=MU,
                     l2=prob.l2, l1=prob.l1, data=info["note"])
            rows.append(r)
            log(f"   {method:10s} epoch {r['epoch_s'] * 1e3:10.2f} ms  A@x "
                f"{r['matvec_s'] * 1e3:9.2f} ms  ratio {r['ratio']:6.2f}  (wall "
                f"{r['ratio_wall']:.2f})")
        del prob, A, b
    return rows


# ---------------------------------------------------------------------------------------------
# (b) DGPD per outer iteration
# ---------------------------------------------------------------------------------------------


def part_b_one(name: str, args) -> tuple[list[dict], dict]:
    from pdsparse import objective
    from pdsparse.solvers import make_kernel

    A, b, info = load(name, args.rf_rows, args.mirror)
    if A is None:
        log(f"(b) {name}: skipped: {info['skipped']}")
        return [], {"dataset": name, "skipped": info["skipped"]}
    prob = problem(A, b)
    n, d, nnz = prob.n, prob.d, prob.nnz
    t = time.perf_counter()
    kernel = make_kernel(prob, "dgpd", seed=0, options=DGPD_OPTIONS)
    setup_s = time.perf_counter() - t
    x = np.random.default_rng(0).standard_normal(d)
    mv = []
    for _ in range(5):
        c = time.thread_time()
        prob.mat @ x
        mv.append(time.thread_time() - c)
    matvec_s = statistics.median(mv)
    log(f"(b) {name}: n={n:,} d={d:,} nnz={nnz:,}; setup {setup_s:.2f} s; one A@x "
        f"{matvec_s * 1e3:.1f} ms")
    rows = []
    ktime = 0.0
    iters = work = 0
    chunk_s = args.chunk_ms / 1000.0
    next_eval = 0.0
    gap = rel_gap = np.nan
    while ktime < args.dgpd_seconds:
        if iters == 0 or work == 0:
            budget = 1
        else:
            budget = max(1, int(chunk_s * work / ktime))
        s0, i0 = kernel.counter("search"), kernel.counter("inner")
        c, t = time.thread_time(), time.perf_counter()
        it, tw = kernel.run(budget)
        wall = time.perf_counter() - t
        cpu = time.thread_time() - c
        ktime += wall
        iters += it
        work += tw
        if ktime >= next_eval:  # outside the timer
            w, alpha = kernel.iterates()
            p = objective.primal(prob, w)
            gap = p - objective.dual(prob, alpha)
            rel_gap = gap / abs(p)
            next_eval = ktime + max(1.0, 0.1 * ktime)
        else:
            rel_gap = np.nan
        nx, ny = kernel.counter("nx"), kernel.counter("ny")
        rows.append({"dataset": name, "n": n, "d": d, "nnz": nnz, "chunk": len(rows),
                     "iterations": it, "iterations_total": iters, "wall_s": wall,
                     "cpu_s": cpu, "kernel_s_total": ktime, "work": tw,
                     "search_work": kernel.counter("search") - s0,
                     "inner_work": kernel.counter("inner") - i0, "nx": nx, "ny": ny,
                     "subnnz": kernel.counter("subnnz"), "dense_cost": nx * n + ny * d,
                     "rel_gap": rel_gap})
    w, alpha = kernel.iterates()
    p = objective.primal(prob, w)
    rel_gap = (p - objective.dual(prob, alpha)) / abs(p)
    log(f"(b) {name}: {iters} iterations in {ktime:.1f} s kernel time, |A_x| = "
        f"{kernel.counter('nx')}, |A_y| = {kernel.counter('ny')}, relative gap {rel_gap:.2e}")
    return rows, {"dataset": name, "n": n, "d": d, "nnz": nnz, "setup_s": setup_s,
                  "matvec_s": matvec_s, "iterations": iters, "kernel_s": ktime,
                  "work": work, "final_rel_gap": rel_gap, "data": info["note"],
                  "load_s": info["load_s"]}


def fit(g: pd.DataFrame, clock: str) -> dict:
    """How the time of an outer iteration relates to its work, over the chunks.

    * ``ns_per_work``: median over chunks of time / work (with the 10% and 90% quantiles);
    * ``slope_work``, ``r2_log_work``: least squares log(time per iteration) = a + slope
      log(work per iteration); slope ~ 1: time proportional to the work;
    * ``ns_per_dense_cost``, ``ns_per_nd``: the time per unit that the costs
      |A_x| n + |A_y| d and n d per iteration would imply (median over chunks); far below the
      ~0.3 ns of one cycle, i.e. the iteration cannot be doing that much work.
    """
    g = g[(g.iterations > 0) & (g.work > 0)]
    y = g[f"{clock}_s"].to_numpy()
    it = g.iterations.to_numpy(float)
    wk = g.work.to_numpy(float)
    per = y / wk
    lx, ly = np.log(wk / it), np.log(y / it)
    slope, icpt = np.polyfit(lx, ly, 1)
    n, d = int(g.n.iloc[0]), int(g.d.iloc[0])
    dense = np.maximum(g.dense_cost.to_numpy(float), 1.0)
    return {"ns_per_work": float(np.median(per) * 1e9),
            "ns_per_work_q10": float(np.quantile(per, 0.1) * 1e9),
            "ns_per_work_q90": float(np.quantile(per, 0.9) * 1e9),
            "slope_work": float(slope), "intercept_log": float(icpt),
            "r2_log_work": r2(ly, icpt + slope * lx),
            "ns_per_dense_cost": float(np.median(y / (it * dense)) * 1e9),
            "ns_per_nd": float(np.median(y / (it * n * d)) * 1e9),
            "chunks": int(len(g))}


def r2(y: np.ndarray, yhat: np.ndarray) -> float:
    ss = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - yhat) ** 2).sum()) / ss if ss > 0 else float("nan")


def plot(chunks: pd.DataFrame, fits: dict, infos: list[dict], path: Path, clock: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pdsparse.io import atomic_path

    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    colors = {"mnist-rb": "#1f77b4", "news20": "#d62728", "digits-rb": "#2ca02c"}
    ax = axes[0]
    for ds, g in chunks.groupby("dataset", sort=False):
        info = next(i for i in infos if i["dataset"] == ds)
        f = fits[ds]
        per_it = g[f"{clock}_s"] / g.iterations
        wk = g.work / g.iterations
        col = colors.get(ds, "0.3")
        ax.loglog(wk, per_it, ".", ms=3, alpha=0.4, color=col,
                  label=f"{ds} (n={info['n']:,}, d={info['d']:,})")
        xs = np.logspace(np.log10(max(wk.min(), 1)), np.log10(wk.max()), 50)
        ax.loglog(xs, np.exp(f["intercept_log"]) * xs ** f["slope_work"], "-", color=col,
                  lw=1.2, label=f"{ds}: slope {f['slope_work']:.2f} (R² "
                                f"{f['r2_log_work']:.2f}), median {f['ns_per_work']:.2f} "
                                "ns per unit of work")
        ax.axhline(info["matvec_s"], color=col, ls=":", lw=1)
        ax.axhline(f["ns_per_work"] * 1e-9 * info["n"] * info["d"], color=col, ls="--", lw=1)
    ax.set_xlabel("work per outer iteration (entries read + coordinates scanned/updated)")
    ax.set_ylabel(f"{clock} time per outer iteration, s")
    ax.set_title("DGPD time per iteration vs its work (log-log fit)\n(dotted: one A@x; dashed: "
                 "n·d units at the median ns per unit)", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[1]
    for ds, g in chunks.groupby("dataset", sort=False):
        col = colors.get(ds, "0.3")
        per_it = g[f"{clock}_s"] / g.iterations
        dc = g.dense_cost
        ax.loglog(dc, per_it, ".", ms=3, alpha=0.4, color=col, label=ds)
    ax.set_xlabel("|A_x| n + |A_y| d")
    ax.set_ylabel(f"{clock} time per outer iteration, s")
    ax.set_title("the same times vs |A_x| n + |A_y| d; implied ns per unit: "
                 + ", ".join(f"{ds} {fits[ds]['ns_per_dense_cost']:.3f}" for ds in fits),
                 fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[2]
    g = chunks[chunks.dataset == chunks.dataset.iloc[0]]
    ds0 = g.dataset.iloc[0]
    ax.plot(g.iterations_total, g.nx, label="|A_x| = nnz(x)", color="#1f77b4")
    ax.plot(g.iterations_total, g.ny, label="|A_y| = nnz(y)", color="#ff7f0e")
    ax.set_xlabel("outer iteration")
    ax.set_ylabel("active-set size")
    ax2 = ax.twinx()
    roll = (g[f"{clock}_s"].rolling(20, min_periods=1).sum()
            / g.iterations.rolling(20, min_periods=1).sum())
    ax2.plot(g.iterations_total, roll * 1e3, color="0.3", lw=1, label="ms per iteration")
    ax2.set_ylabel("ms per outer iteration (rolling)")
    ax.set_title(f"{ds0}: active sets and time per iteration", fontsize=9)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Outputs and driver
# ---------------------------------------------------------------------------------------------


def markdown(epochs: pd.DataFrame, chunks: pd.DataFrame, fits: dict, infos: list, meta: dict,
             clock: str) -> str:
    m = meta["machine"]
    lines = ["# DGPD scaling", "",
             f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['mem_gib']:.0f} GiB; single-threaded "
             f"BLAS; {QUIET if meta['quiet'] else NOT_QUIET} (other processes kept "
             f"{meta['other_cores']:.2f} cores busy on average); "
             f"load average before/after {meta['loadavg_before']} / {meta['loadavg_after']}; "
             f"clock: {clock} time.", ""]
    if not epochs.empty:
        lines += ["## (a) One epoch vs one A @ x (target ratio <= 3)", "",
                  f"Smooth hinge, λ = {LAM:g}, μ = {MU:g} (summed loss: l2 = μ/n, l1 = λ/n); "
                  "uniform sampling; primal_rcd walks CSC columns, dual_rcd (Prox-SDCA) CSR rows;"
                  " the product is in the layout the kernel walks (dense: the one C-order "
                  "array, BLAS gemv).", "",
                  "| data set | n | d | stored | solver | epoch ms | A@x ms | ratio | "
                  "wall ratio | ns/entry |", "|:--|--:|--:|--:|:--|--:|--:|--:|--:|--:|"]
        for r in epochs.itertuples():
            lines.append(f"| {r.dataset} | {r.n:,} | {r.d:,} | {r.nnz:,}"
                         f"{' (dense)' if r.dense else ''} | {r.solver} ({r.format}) | "
                         f"{r.epoch_s * 1e3:.4g} | {r.matvec_s * 1e3:.4g} | {r.ratio:.2f} | "
                         f"{r.ratio_wall:.2f} | {r.ns_per_entry:.2f} |")
        lines.append("")
    if fits:
        lines += ["## (b) DGPD: time per outer iteration vs its work", "",
                  f"dgpd (inner=5, eta=x10), λ = {LAM:g}, μ = {MU:g}; chunks of about "
                  f"{meta['settings']['chunk_ms']:g} ms of kernel time; work = the kernel's "
                  "count (entries of A read by the searches and the active-submatrix build, "
                  "coordinates scanned, entries of the active submatrix in the inner passes). "
                  "ns/work: median over chunks of time / work (10%-90% quantiles); slope: "
                  "log-log least squares of time per iteration on work per iteration (1: "
                  "proportional). The last two columns are the time per unit that a cost of "
                  "|A_x| n + |A_y| d or n d per iteration would imply: far below one cycle "
                  "(~0.3 ns), so the iterations do not do that much work.", "",
                  "| data set | n | d | nnz | iterations | kernel s | final \\|A_x\\| | final "
                  "\\|A_y\\| | work / iteration (median) | time / iteration (median) ms | one "
                  "A@x ms | ns / work | slope (R²) | ns per (\\|A_x\\|n + \\|A_y\\|d) | "
                  "ns per n·d | final rel. gap |",
                  "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for info in infos:
            ds = info["dataset"]
            if ds not in fits:
                continue
            f = fits[ds]
            g = chunks[(chunks.dataset == ds) & (chunks.iterations > 0)]
            last = g.iloc[-1]
            wpi = float((g.work / g.iterations).median())
            tpi = float((g[f"{clock}_s"] / g.iterations).median())
            lines.append(
                f"| {ds} | {info['n']:,} | {info['d']:,} | {info['nnz']:,} | "
                f"{info['iterations']:,} | {info['kernel_s']:.1f} | {int(last.nx):,} | "
                f"{int(last.ny):,} | {wpi:,.0f} | {tpi * 1e3:.3g} | "
                f"{info['matvec_s'] * 1e3:.3g} | {f['ns_per_work']:.2f} "
                f"({f['ns_per_work_q10']:.2f}-{f['ns_per_work_q90']:.2f}) | "
                f"{f['slope_work']:.2f} ({f['r2_log_work']:.2f}) | "
                f"{f['ns_per_dense_cost']:.3g} | {f['ns_per_nd']:.2g} | "
                f"{info['final_rel_gap']:.1e} |")
        lines += ["", "Plot: `results/benchmarks/dgpd_scaling.png`.", ""]
    lines += [f"Runtime {meta['total_seconds']:.0f} s; versions {meta['versions']}.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    if any(os.environ.get(k) != "1" for k in THREAD_ENV):
        # single-threaded BLAS must be set before numpy loads it: run again with it set
        env = dict(os.environ, **{k: "1" for k in THREAD_ENV})
        return subprocess.run([sys.executable, str(Path(__file__).resolve()),
                               *(sys.argv[1:] if argv is None else argv)], env=env).returncode
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="a,b", help="a, b or a,b (default)")
    ap.add_argument("--epoch-datasets", default=",".join(EPOCH_DATASETS))
    ap.add_argument("--dgpd-datasets", default=",".join(DGPD_DATASETS))
    ap.add_argument("--quick", action="store_true",
                    help="digits-rb and news20, 2 repeats, 5 s of DGPD")
    ap.add_argument("--rf-rows", type=int, default=None,
                    help="mnist-rf: this many of the 58,000 training rows (default: all)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-sample-s", type=float, default=0.05)
    ap.add_argument("--clock", default="cpu", choices=["cpu", "wall"])
    ap.add_argument("--dgpd-seconds", type=float, default=60.0,
                    help="kernel time of each DGPD run (default %(default)s)")
    ap.add_argument("--chunk-ms", type=float, default=20.0)
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    args = ap.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",")}
    args.epoch_datasets = [x for x in args.epoch_datasets.split(",") if x]
    args.dgpd_datasets = [x for x in args.dgpd_datasets.split(",") if x]
    if args.quick:
        args.epoch_datasets = ["digits-rb", "news20"]
        args.dgpd_datasets = ["digits-rb", "news20"]
        args.repeats, args.dgpd_seconds = 2, 5.0

    t0 = time.perf_counter()
    other = OtherLoad()
    load0 = [round(x, 2) for x in os.getloadavg()]
    quiet = not snakemake_running()
    epochs = pd.DataFrame(part_a(args) if "a" in parts else [])
    quiet = quiet and not snakemake_running()
    chunks, infos, fits = [], [], {}
    if "b" in parts:
        for name in args.dgpd_datasets:
            rows, info = part_b_one(name, args)
            infos.append(info)
            if rows:
                chunks += rows
                fits[name] = fit(pd.DataFrame(rows), args.clock)
                log(f"(b) {name}: fit {fits[name]}")
    chunks = pd.DataFrame(chunks)
    other_cores = other.stop()
    quiet = quiet and not snakemake_running() and other_cores < OTHER_MAX
    out = Path(args.out_dir)
    meta = {"total_seconds": time.perf_counter() - t0, "machine": machine(),
            "versions": harness_versions(env=True), "quiet": quiet, "other_cores": other_cores,
            "loadavg_before": load0,
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "settings": {k: v for k, v in vars(args).items()}, "fits": fits,
            "dgpd_runs": infos}
    if not chunks.empty:
        out.mkdir(parents=True, exist_ok=True)
        plot(chunks, fits, infos, out / "dgpd_scaling.png", args.clock)
    # one long table: part (a)'s epochs and part (b)'s DGPD chunks, told apart by "part"
    frame = pd.concat([epochs.assign(part="epochs"), chunks.assign(part="dgpd_iterations")],
                      ignore_index=True)
    print(write(frame, meta, out / "dgpd_scaling",
                lambda f, m: markdown(epochs, chunks, fits, infos, m, args.clock)))
    log(f"total runtime {meta['total_seconds']:.0f} s; quiet: {quiet}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
