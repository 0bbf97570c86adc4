"""Benchmark: DGPD and the other elastic-net solvers of the package against copt, time to a target.

Problem (DGPD, Lei et al. ICML 2017, Sec. 5, with ``config/config.yaml`` ``dgpd.loss_sum: true``):

    P(x) = sum_i phi(b_i a_i^T x) + mu/2 ||x||^2 + lambda ||x||_1,

phi the smooth hinge, b in {-1, +1} (one class of a multiclass set against the rest). Every
solver minimizes the averaged form P(x) / n, ``Problem(A, b, "smooth_hinge", l2=mu/n,
l1=lambda/n)``, whose relative suboptimality (P - P*) / P* is the same. P* comes from
``pdsparse.reference.reference_solution(problem, rtol=1e-10)`` (certified duality gap).

Solvers
-------
* ours (``pdsparse.solvers``): ``dgpd`` (Algorithm 2, inner=5; eta=x10, the config's choice,
  and eta=theorem), ``primal_rcd`` (uniform), ``dual_rcd`` (uniform, dual_step=newton:
  Prox-SDCA since l1 > 0), ``spdc``;
* peers: copt 0.9 ``minimize_proximal_gradient`` (FISTA with ``accelerated=True`` and the
  plain proximal gradient method), ``step="backtracking"``, prox ``L1Norm(lambda/n).prox``,
  on f(x) = 1/n sum_i phi(b_i a_i^T x) + (mu/n)/2 ||x||^2 with its gradient in NumPy
  (vectorized smooth hinge, sparse or dense products). scikit-learn has no solver of this
  objective (smooth hinge + elastic net; SGDClassifier's ``modified_huber`` is another loss):
  no scikit-learn peer.

What is timed (the protocol of ``benchmarks/_harness.py``, shared with ``peers.py``)
------------------------------------------------------------------------------------
The wall time of one complete solve from the in-memory A (CSR or dense) and b to an iterate
at the target, setup included; loading the data file is excluded and reported separately.

* ours: ``t0 -> Problem(A, b, ...) -> make_kernel(...) -> kernel.run(T) ->
  x = kernel.solution().copy() -> t1`` (CSC copy, norms, sampling tables, DGPD's buffers
  included). T (work units, the kernel's own count) comes from a trace run of the same
  deterministic kernel evaluated every max(1/64 epoch, 2% of the work done, enough work for
  the kernel to run half of one evaluation's time): the smallest evaluated T with
  (P - P*)/P* <= target. Chunked kernel calls reproduce one call exactly, so the timed re-run
  ends at the traced iterate (its P is recomputed and checked).
* peers: ``t0 -> f_grad closure, L1Norm -> minimize_proximal_gradient(..., tol=1e-15,
  max_iter=cap) -> x.copy() -> t1``. copt is deterministic and calls ``callback(locals())``
  at the start of every iteration with the iterate that ``max_iter = k - 1`` returns after
  the k-th call (checked here on every trace), so one trace run evaluating P in the callback
  (at every iteration, then every 2%; the callback's time is excluded from the trace clock)
  gives the smallest cap at the target directly (``_harness.callback_trace``), where
  ``peers.py`` finds it by doubling and bisecting caps (``_harness.search_max_iter``); the
  timed runs are complete uninstrumented fits with that cap, and their P is checked.
* Short solves are repeated: median of 5 below 0.05 s, of 3 below 1 s, else one run.
* Each solver has a time cap (``--cap``, 120 s): a trace whose time (setup + kernel, or
  the peer's net time) passes it stops, and the row reports "> cap".

Each data set runs in its own subprocess with ``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1``
(one core; the data are prepared in a preceding subprocess), whose peak RSS is reported.

Data (prepared once into ``results/benchmarks/data/``, reused when present)
-----------------------------------------------------------------------------
* ``mnist-rb``: MNIST (mirror ``mnist.bz2``) random binning, 1,000 grids, sigma 39.5, 58,000
  training rows (test_rows 2,000, split_seed 0): DGPD's Mnist-RB (d ~ 1.57M, 58M nonzeros);
* ``mnist-rf``: MNIST random Fourier, 10,000 features, sigma 10, dense (4.6 GB at 58,000
  rows); ``--rf-rows`` subsamples the training rows (documented in the outputs);
* ``news20``: multiclass news20 (mirror), unit_rows, test_rows 1,000 (the config's recipe);
* ``digits-rb``: scikit-learn digits, random binning 100 grids, sigma 5, test_rows 297.
Binary problems: class 0 (digits, MNIST) or 1 (news20) against the rest. Settings
(lambda, mu) in {(0.1, 1.0), (0.01, 0.01)} (the extremes of the paper's grid), targets 1e-3
and 1e-6.

Outputs (atomic) in ``results/benchmarks/``: ``dgpd_peers.csv`` (one row per data set x
setting x target x solver), ``dgpd_peers.md`` (a table per data set, the check "our fastest
is ahead of every peer", an explanation of every row where it is not), ``dgpd_peers.json``
(machine, quietness, versions, settings, per-data-set memory, references, traces).

Usage::

    python benchmarks/dgpd_peers.py                           # everything
    python benchmarks/dgpd_peers.py --quick                   # digits-rb, 10 s caps (~1 min)
    python benchmarks/dgpd_peers.py --datasets news20,digits-rb --cap 60
"""

from __future__ import annotations

import gc
import math
import pickle
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from _harness import (
    PEER_TOL,
    Case,
    Ours,
    Run,
    Watch,
    add_data_args,
    add_ratios,
    add_worker_args,
    bench_parser,
    bench_traced,
    cached_ref,
    callback_trace,
    cells_of,
    fmt_ratio,
    load_prepared,
    log_total,
    machine_line,
    make_log,
    maxrss_mib,
    measure,
    our_setup,
    pass_on,
    pick_datasets,
    prepare_cached,
    require_peer,
    rows_frame,
    rss_mib,
    run_datasets,
    run_record,
    serve_worker,
    solve_reference,
    time_copt,
    time_ours,
    trace_kernel,
    warm_up,
    worker_line,
    worker_records,
    write_outputs,
)
from _harness import smooth_hinge_fgrad as peer_fgrad
from _harness import versions as harness_versions

LOSS = "smooth_hinge"
SETTINGS = ((0.1, 1.0), (0.01, 0.01))  # (lambda, mu): the corners of the paper's grid
TARGETS = (1e-3, 1e-6)
REF_RTOL = 1e-10
SEED = 0
COLUMNS = ["dataset", "lam", "mu", "target", "solver", "config", "seconds", "repeats",
           "reached", "ratio"]


QUIET = "quiet (no snakemake running during the measurement)"

log = make_log("dgpd_peers")


# ---------------------------------------------------------------------------------------------
# Data sets
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataDef:
    """A data set: where its matrix comes from, its recipe, the class against the rest."""

    name: str
    source: str  # "registry:<name>" or "generator:<kind>"
    recipe: dict
    cls: float  # the class against the rest
    paper: str = ""


def data_defs(rf_rows: int | None) -> dict[str, DataDef]:
    rf = {"normalization": "none", "features": "rf", "n_features": 10000, "sigma": 10.0,
          "test_rows": 2000, "split_seed": 0}
    if rf_rows:
        rf["subsample"] = int(rf_rows)
    return {d.name: d for d in (
        DataDef("digits-rb", "generator:digits",
                {"normalization": "none", "features": "rb", "n_grids": 100, "sigma": 5.0,
                 "test_rows": 297}, 0.0, "Mnist-RB stand-in"),
        DataDef("news20", "registry:news20", {"normalization": "unit_rows", "test_rows": 1000},
                1.0, "Sector stand-in"),
        DataDef("mnist-rb", "registry:mnist",
                {"normalization": "none", "features": "rb", "n_grids": 1000, "sigma": 39.5,
                 "test_rows": 2000, "split_seed": 0}, 0.0, "Mnist-RB"),
        DataDef("mnist-rf", "registry:mnist", rf, 0.0, "Mnist-RF"),
    )}


ALL_DATASETS = ("digits-rb", "news20", "mnist-rb", "mnist-rf")


def prep_data(dd: DataDef, opts: dict) -> dict:
    """The cached ``.npz`` of a data set (prepared here when missing)."""
    kind, base = dd.source.split(":", 1)
    return prepare_cached(base, dd.recipe, opts, generator=kind == "generator")


# ---------------------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------------------


OURS = (
    Ours("dgpd", (("inner", "5"), ("eta", "x10"))),
    Ours("dgpd", (("inner", "5"), ("eta", "theorem"))),
    Ours("primal_rcd", (("sampling", "uniform"),)),
    Ours("dual_rcd", (("sampling", "uniform"), ("dual_step", "newton"))),
    Ours("spdc"),
)


@dataclass(frozen=True)
class Peer:
    accelerated: bool

    @property
    def name(self) -> str:
        return "copt_apg" if self.accelerated else "copt_pg"

    @property
    def config(self) -> str:
        return f"accelerated={self.accelerated},step=backtracking"

    @property
    def key(self) -> str:
        return f"{self.name}[{self.config}]"


PEERS = (Peer(True), Peer(False))


def make_problem(A, b, l2: float, l1: float):
    from pdsparse.problem import Problem

    return Problem(A, b, loss=LOSS, l2=l2, l1=l1)


def run_peer(A, b, l2, l1, p: Peer, max_iter: int, callback=None):
    import copt
    import copt.penalty

    f_grad = peer_fgrad(A, b, l2)
    prox = copt.penalty.L1Norm(l1).prox
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return copt.minimize_proximal_gradient(
            f_grad, np.zeros(A.shape[1]), prox=prox, jac=True, accelerated=p.accelerated,
            step="backtracking", tol=PEER_TOL, max_iter=int(max_iter), callback=callback)


def time_peer(A, b, l2, l1, p: Peer, cap: int) -> Run:
    """One complete copt fit (wall s, x, copt's iterations)."""
    return time_copt(lambda: run_peer(A, b, l2, l1, p, cap))


# ---------------------------------------------------------------------------------------------
# Worker: one data set, all settings, all solvers
# ---------------------------------------------------------------------------------------------


def bench_ours(case: Case, v: Ours) -> None:
    def nnz(kernel, x):
        alpha = (int(np.count_nonzero(kernel.iterates()[1])) if v.method != "primal_rcd"
                 else -1)
        return int(np.count_nonzero(x)), alpha

    tr, setup, stop = trace_kernel(lambda: our_setup(make_problem, case.args, v, SEED), case.rel,
                                   min(case.opts["targets"]), cap=case.opts["cap"], extra=nnz,
                                   extra_columns=("nnz_x", "nnz_alpha"))
    bench_traced(case, tr, key=v.key, solver=v.name, config=v.config, ours=True, setup=setup,
                 stop=stop, run=lambda T: time_ours(make_problem, case.args, v, T, SEED),
                 iterations=lambda r, t: int(r.iterations),
                 extra=lambda r, T: {"nnz_alpha": int(r.nnz_alpha)}, log=log)


def bench_peer(case: Case, p: Peer) -> None:
    tr, stop = callback_trace(lambda cb: run_peer(*case.args, p, 10**9, cb), case.rel,
                              min(case.opts["targets"]), case.opts["cap"])
    bench_traced(case, tr, key=p.key, solver=p.name, config=p.config, ours=False,
                 setup=math.nan, stop=stop, run=lambda cap: time_peer(*case.args, p, cap),
                 iterations=lambda r, t: t.runs[0].nit if t is not None else int(r.cap),
                 extra=lambda r, cap: {"nnz_alpha": -1}, log=log)


def reference(ctx_prob, key: str, opts: dict, what: str) -> dict:
    def compute():
        ref, out = solve_reference(ctx_prob, REF_RTOL, opts["ref_max_s"])
        return {**out, "nnz_x": int(np.count_nonzero(ref.w)),
                "nnz_alpha": int(np.count_nonzero(ref.alpha))}

    return cached_ref(Path(opts["data_dir"]) / "dgpd_peers_refs.json", key, opts["fresh_refs"],
                      compute, what)


def worker(dd: DataDef, opts: dict, prep: dict) -> dict:
    watch = Watch()
    mem = {"start_maxrss_mib": maxrss_mib()}
    A, y, meta, load_s, dense = load_prepared(prep["path"])
    b = np.where(y == dd.cls, 1.0, -1.0)
    n, d = A.shape
    stored = int(A.size if dense else A.nnz)
    log(f"{dd.name}: n={n:,} d={d:,} stored={stored:,} {'dense' if dense else 'CSR'}, "
        f"class {dd.cls:g}: {int((b > 0).sum())} positives; loaded in {load_s:.1f} s "
        f"({prep['note']})")
    mem["after_load_rss_mib"] = rss_mib()
    ours = [v for v in OURS if opts["solvers"] is None or v.name in opts["solvers"]
            or v.key in opts["solvers"]]
    peers = [p for p in PEERS if opts["solvers"] is None or p.name in opts["solvers"]]
    warm_up(OURS, lambda A, b, v, T: time_ours(make_problem, (A, b, 0.05, 0.001), v, T, SEED),
            PEERS, lambda A, b, p, cap: time_peer(A, b, 0.05, 0.001, p, cap), dense=True)
    gc.collect()
    gc.freeze()
    refs = []

    def cases():
        for lam, mu in opts["settings"]:
            l2, l1 = mu / n, lam / n
            prob = make_problem(A, b, l2, l1)
            key = (f"{Path(prep['path']).name}|class={dd.cls:g}|lam={lam!r}|mu={mu!r}|"
                   f"rtol={REF_RTOL:g}")
            ref = reference(prob, key, opts, f"{dd.name} ({lam}, {mu})")
            refs.append({"lam": lam, "mu": mu, **ref})
            log(f"{dd.name} lam={lam:g} mu={mu:g}: P* = {ref['p_star']:.12g} (rel gap "
                f"{ref['rel_gap']:.1e}, {ref['method']}, {ref['seconds']:.1f} s"
                f"{', cached' if ref['cached'] else ''}; nnz x* {ref['nnz_x']}, alpha* "
                f"{ref['nnz_alpha']})")
            yield f"{lam:g}_{mu:g}", Case({"dataset": dd.name, "lam": lam, "mu": mu},
                                          {"p_star": ref["p_star"], "ref_rel_gap": ref["rel_gap"]},
                                          (A, b, l2, l1), prob, ref["p_star"], opts)

    rows, traces = measure(cases(), ours, peers, bench_ours, bench_peer, mem)
    mem["peak_rss_mib"] = maxrss_mib()
    for r in rows:
        r.update(n=n, d=d, stored=stored, dense=dense, peak_rss_mib=mem["peak_rss_mib"],
                 load_s=load_s)
    return {"dataset": dd.name, "rows": rows, "traces": traces, "refs": refs, "memory": mem,
            "n": n, "d": d, "stored": stored, "dense": dense, "load_s": load_s,
            "prep": prep, "cls": dd.cls, "recipe": dd.recipe, "paper": dd.paper,
            "split": {k: v for k, v in meta.get("split", {}).items() if k != "test_rows"},
            **watch.stop()}


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


def verdict(g: pd.DataFrame, cap: float) -> tuple[str, str]:
    """(ahead?, explanation) for one data set x setting x target."""
    o = g[g.ours & g.reached]
    p = g[~g.ours]
    if o.empty:
        best_peer = p[p.reached]
        if best_peer.empty:
            return "n/a", "neither ours nor a peer reached the target within the cap"
        k = best_peer.seconds.idxmin()
        return "no", (f"no solver of ours reached the target within {cap:g} s; "
                      f"{best_peer.solver[k]} took {best_peer.seconds[k]:.3g} s")
    k = o.seconds.idxmin()
    ours_s, ours_name = o.seconds[k], f"{o.solver[k]} ({o.config[k]})"
    losers = p[p.reached & (p.seconds <= ours_s)]
    if losers.empty:
        open_ = p[~p.reached & (p.lower_bound_s < ours_s)]
        if not open_.empty:
            return "?", (f"{', '.join(open_.solver)} stopped at the cap before our fastest "
                         f"{ours_name} ({ours_s:.3g} s) finished: undecided")
        return "yes", f"{ours_name} {ours_s:.3g} s"
    j = losers.seconds.idxmin()
    return "no", (f"{losers.solver[j]} {losers.seconds[j]:.3g} s ({int(losers.budget[j])} "
                  f"iterations) vs our fastest {ours_name} {ours_s:.3g} s "
                  f"(setup {o.setup_s[k]:.3g} s, {int(o.iterations[k])} iterations, "
                  f"nnz x {int(o.nnz_x[k])})")


def cell(r) -> str:
    if r.reached and np.isfinite(r.seconds):
        return f"{r.seconds:.3g} ({fmt_ratio(r.ratio)})"
    if np.isfinite(r.lower_bound_s):
        return f"> {r.lower_bound_s:.0f} (rel {r.rel_subopt:.0e})"
    return "—"


def markdown(df: pd.DataFrame, meta: dict) -> str:
    cap = meta["settings"]["cap"]
    lines = ["# DGPD peers: wall seconds to (P - P*)/P* <= target", "",
             "Smooth hinge + elastic net, P(x) = sum_i phi(b_i a_i^T x) + mu/2 ||x||^2 + "
             "lambda ||x||_1, one class against the rest. Wall seconds of a complete solve "
             "from the in-memory matrix (setup included, data load excluded); in parentheses "
             "the ratio to our fastest solver of the row (> 1: slower than ours); **bold** = "
             "fastest of the row; `> t (rel r)`: stopped at the cap after t s at relative "
             f"suboptimality r (cap {cap:g} s per solve). `ahead`: our fastest beats every peer.",
             "", machine_line(meta, QUIET), "",
             "scikit-learn: no solver minimizes this objective (smooth hinge + elastic net; "
             "`SGDClassifier(loss='modified_huber')` is a different loss, and its SGD does not "
             "converge to a 1e-6 target), so it is not a peer.", ""]
    order = [f"{v.name}[{v.config}]" for v in OURS] + [f"{p.name}[{p.config}]" for p in PEERS]
    short = {f"{v.name}[{v.config}]": (v.name if v.name != "dgpd" else
                                       f"dgpd {dict(v.options)['eta']}") for v in OURS}
    short.update({f"{p.name}[{p.config}]": p.name for p in PEERS})
    df = df.assign(key=df.solver + "[" + df.config + "]")
    present = [k for k in order if k in set(df.key)]
    for ds, gd in df.groupby("dataset", sort=False):
        w = next(x for x in meta["datasets"] if x["dataset"] == ds)
        lines += [f"## {ds} (class {w['cls']:g} vs rest; n = {w['n']:,}, d = {w['d']:,}, "
                  f"{'dense' if w['dense'] else 'nnz'} {w['stored']:,})", ""]
        oc = w.get("other_cores")
        seen = w.get("snakemake", not w["quiet"])
        lines += [f"Finished {w.get('finished', '')}: machine "
                  f"{'quiet' if w['quiet'] else 'NOT quiet'} (pgrep -f snakemake at start and "
                  f"end: {'found one' if seen else 'nothing'}"
                  + ("" if oc is None else f"; other processes kept {oc:.2f} cores busy on "
                     "average") + f"), load average {w['loadavg'][0]} -> {w['loadavg'][1]}.", ""]
        if w.get("subsample_note"):
            lines += [f"**{w['subsample_note']}**", ""]
        lines += ["| λ | μ | target | " + " | ".join(short[k] for k in present)
                  + " | ahead |", "|--:|--:|--:|" + "--:|" * len(present) + ":--|"]
        notes = []
        for (lam, mu, target), g in gd.groupby(["lam", "mu", "target"], sort=False):
            cells = cells_of(g, present, cell)
            ok, why = verdict(g, cap)
            lines.append(f"| {lam:g} | {mu:g} | {target:g} | " + " | ".join(cells)
                         + f" | {ok} |")
            if ok != "yes":
                notes.append(f"* λ = {lam:g}, μ = {mu:g}, {target:g}: {why}.")
        lines.append("")
        lines.append(f"{worker_line(w)}; references: " + "; ".join(
                         f"(λ {r['lam']:g}, μ {r['mu']:g}) P* = {r['p_star']:.10g}, rel gap "
                         f"{r['rel_gap']:.1e}, {r['method']}, {r['seconds']:.0f} s"
                         f"{' (cached)' if r['cached'] else ''}, nnz x* {r['nnz_x']}, "
                         f"nnz alpha* {r['nnz_alpha']}" for r in w["refs"]) + ".")
        lines.append("")
        if notes:
            lines += ["Rows where our fastest is not ahead of every peer:", "", *notes, ""]
        else:
            lines += ["Our fastest is ahead of every peer in every row.", ""]
    lines += ["Notes:", ""]
    for w in meta["datasets"]:
        if "skipped" in w:
            lines.append(f"* {w['dataset']}: skipped: {w['skipped']}")
    if meta.get("reused"):
        lines.append(f"* results of {', '.join(meta['reused'])} kept from an earlier run "
                     "(--reuse; their sections give when they finished)")
    workers = sum(w.get("seconds", 0.0) for w in meta["datasets"])
    lines += [f"* runtime of this invocation {meta['total_seconds']:.0f} s "
              f"({meta['total_seconds'] / 60:.1f} min); the data-set workers took {workers:.0f} s "
              f"({workers / 60:.1f} min) in all (data preparation and cached references not "
              "included)", f"* versions: {meta['versions']}", ""]
    return "\n".join(lines)


def versions() -> dict:
    return harness_versions("copt")


def outputs(results: list[dict], out_dir: Path, meta: dict) -> pd.DataFrame:
    meta["datasets"] = worker_records(results)
    df = add_ratios(rows_frame(results), ["dataset", "lam", "mu", "target"], against_ours=True)
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]]
    md = markdown(df, meta)
    meta = dict(meta, traces=[t for w in results for t in w.get("traces", [])])
    write_outputs(out_dir, "dgpd_peers", df, md, meta)
    return df


def save_worker(data_dir: Path, ds: str, res: dict) -> None:
    from pdsparse.io import atomic_path

    with atomic_path(data_dir / f"dgpd_peers_{ds}.pkl") as tmp, open(tmp, "wb") as fh:
        pickle.dump(res, fh)


def load_worker(data_dir: Path, ds: str) -> dict:
    path = data_dir / f"dgpd_peers_{ds}.pkl"
    if not path.is_file():
        raise SystemExit(f"--reuse {ds}: no kept results {path}")
    with open(path, "rb") as fh:
        return pickle.load(fh)


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def parse_settings(text: str) -> list[tuple[float, float]]:
    out = []
    for item in text.split(";"):
        if item.strip():
            lam, mu = (float(x) for x in item.split(","))
            out.append((lam, mu))
    return out


def main(argv=None) -> int:
    ap = bench_parser(__doc__, ALL_DATASETS, "digits-rb", "digits-rb only, 10 s caps")
    ap.add_argument("--cap", type=float, default=None,
                    help="time cap of one solve, s (default 120; quick 10)")
    ap.add_argument("--rf-rows", type=int, default=None,
                    help="mnist-rf: keep this many of the 58,000 training rows (default: all)")
    ap.add_argument("--settings", default=";".join(f"{a!r},{b!r}" for a, b in SETTINGS),
                    help="'lam,mu;lam,mu' (default: %(default)s)")
    ap.add_argument("--targets", default=",".join(f"{t:g}" for t in TARGETS))
    ap.add_argument("--solvers", default=None,
                    help="comma list of names (dgpd, primal_rcd, dual_rcd, spdc, copt_apg, "
                         "copt_pg); default all")
    add_data_args(ap, "dgpd_peers_refs.json", 3600.0,
                  "time limit of one reference solve (default %(default)s)")
    ap.add_argument("--reuse", default=None,
                    help="comma list of data sets whose results of an earlier run (kept in "
                         "<data-dir>/dgpd_peers_<name>.pkl) go into the outputs instead of a "
                         "new run (e.g. one data set re-run on a quiet machine)")
    add_worker_args(ap)
    args = ap.parse_args(argv)
    require_peer("copt", "dgpd_peers.py")
    opts = {"cap": args.cap or (10.0 if args.quick else 120.0),
            "settings": parse_settings(args.settings),
            "targets": sorted((float(t) for t in args.targets.split(",")), reverse=True),
            "solvers": set(args.solvers.split(",")) if args.solvers else None,
            "mirror": args.mirror, "data_dir": args.data_dir, "fresh_refs": args.fresh_refs,
            "ref_max_s": args.ref_max_s, "rf_rows": args.rf_rows}
    defs = data_defs(args.rf_rows)

    if args.worker:
        dd = defs[args.worker]
        return serve_worker(args, lambda: prep_data(dd, opts), lambda prep: worker(dd, opts, prep))

    reuse = [x.strip() for x in (args.reuse or "").split(",") if x.strip()]
    datasets = pick_datasets(ap, args, ALL_DATASETS, ["digits-rb"], list(ALL_DATASETS), reuse)

    passthrough = pass_on((("--cap", opts["cap"]), ("--rf-rows", args.rf_rows),
                           ("--settings", args.settings), ("--targets", args.targets),
                           ("--solvers", args.solvers), ("--mirror", args.mirror),
                           ("--data-dir", args.data_dir), ("--ref-max-s", args.ref_max_s)),
                          [("--fresh-refs", args.fresh_refs)])

    def reused(i: int, ds: str) -> dict | None:
        if ds not in reuse:
            return None
        res = load_worker(Path(args.data_dir), ds)
        log(f"[{i + 1}/{len(datasets)}] {ds}: reused the results of "
            f"{res.get('finished', 'an earlier run')}")
        return res

    def keep(ds: str, res: dict) -> dict:
        if "rows" in res:  # kept, so that a later run can --reuse it
            res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
            save_worker(Path(args.data_dir), ds, res)
        if ds == "mnist-rf" and "rows" in res and args.rf_rows:
            res["subsample_note"] = (
                f"Mnist-RF at a fraction of the paper's size: {args.rf_rows:,} of the "
                "58,000 training rows (recipe subsample, split_seed 0), chosen for time")
        return res

    watch = Watch()
    results = run_datasets(Path(__file__), datasets, passthrough, log=log, t0=watch.t,
                           tmp_prefix="pdsparse-dgpd-peers-", reuse=reused, after=keep)
    meta = {**run_record(watch, opts, versions(), results=results),
            "ours": [v.key for v in OURS], "peers": [p.key for p in PEERS], "reused": reuse}
    outputs(results, Path(args.out_dir), meta)
    log_total(log, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
