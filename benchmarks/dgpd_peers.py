"""Benchmark: DGPD and the other elastic-net solvers of the package against copt, time to a target.

Problem (DGPD, Lei et al. ICML 2017, Sec. 5, with ``config/config.yaml`` ``dgpd.loss_sum: true``):

    P(x) = sum_i phi(b_i a_i^T x) + mu/2 ||x||^2 + lambda ||x||_1,

phi the smooth hinge, b in {-1, +1} (one class of a multiclass set against the rest). Every
solver minimizes the averaged form P(x) / n, ``Problem(A, b, "smooth_hinge", l2=mu/n,
l1=lambda/n)``, whose relative suboptimality (P - P*) / P* is the same. P* comes from
``pdsparse.reference.reference_solution(problem, rtol=1e-10)`` (certified duality gap), cached.

Solvers
-------
* ours (``bench.solver.OursKernel``: a kernel of ``pdsparse.solvers``): ``dgpd`` (Algorithm 2,
  inner=5; eta=x10, the config's choice, and eta=theorem), ``primal_rcd`` (uniform),
  ``dual_rcd`` (uniform, dual_step=newton: Prox-SDCA since l1 > 0), ``spdc``;
* peers (:class:`Copt`): copt ``minimize_proximal_gradient`` (FISTA with ``accelerated=True``
  and the plain proximal gradient method), ``step="backtracking"``, prox ``L1Norm(lambda/n)``,
  on f(x) = 1/n sum_i phi(b_i a_i^T x) + (mu/n)/2 ||x||^2 with its gradient in NumPy
  (``_harness.smooth_hinge_fgrad``). scikit-learn has no solver of this objective (smooth
  hinge + elastic net; SGDClassifier's ``modified_huber`` is another loss): no scikit-learn peer.

What is timed (the runner's protocol, ``benchmarks/bench``)
-----------------------------------------------------------
The CPU time (``time.process_time``, one thread) of one complete solve from the in-memory A
(CSR or dense) and b, setup included (ours: ``Problem``, the CSC copy, norms, sampling tables,
DGPD's buffers; copt: its closure and Lipschitz search); loading the data is excluded. Each
solver's budget at a target is the first evaluated point of one traced run (sampling
"trace"): ours, the work of ``_harness.trace_kernel`` (chunked calls reproduce one call);
copt, the ``max_iter`` whose complete fit returns the iterate its callback saw
(``_harness.callback_trace``: copt is deterministic and calls ``callback(locals())`` at the
start of every iteration). Then ``--repeats`` rounds of complete uninstrumented solves at
those budgets, interleaved across the solvers, each re-run's P checked again. A trace past
``--cap`` seconds stops: not reached.

Each data set runs in its own subprocess with ``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1`` (the
data are prepared in a preceding subprocess), whose peak RSS is reported.

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

Outputs (atomic, ``bench.report.write``) in ``results/benchmarks/``: ``dgpd_peers.parquet``
(the runner's long format: one row per timed run, per setting that reached nothing, per
trace point), ``dgpd_peers.json`` (machine, quietness, versions, settings, per data set its
memory and references) and ``dgpd_peers.md`` (Prox-SDCA against the best copt method, every
solver's median, then our fastest against the best peer per row with the reason where it is
not ahead).

Usage::

    python benchmarks/dgpd_peers.py                           # everything
    python benchmarks/dgpd_peers.py --quick                   # digits-rb, 10 s caps
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
    Watch,
    add_data_args,
    add_worker_args,
    bench_parser,
    cached_ref,
    callback_trace,
    load_prepared,
    machine,
    make_log,
    maxrss_mib,
    pass_on,
    pick_datasets,
    prepare_cached,
    require_peer,
    rss_mib,
    run_datasets,
    serve_worker,
    smooth_hinge_fgrad,
    solve_reference,
    versions,
)
from bench.report import AHEAD, BEHIND, INCONCLUSIVE, markdown, times, write
from bench.report import verdict as range_verdict
from bench.runner import Cell, benchmark
from bench.solver import OursKernel, Solver

LOSS = "smooth_hinge"
SETTINGS = ((0.1, 1.0), (0.01, 0.01))  # (lambda, mu): the corners of the paper's grid
TARGETS = (1e-3, 1e-6)
REF_RTOL = 1e-10
SEED = 0
KEYS = ["dataset", "lam", "mu"]
OURS = (("dgpd", {"inner": "5", "eta": "x10"}), ("dgpd", {"inner": "5", "eta": "theorem"}),
        ("primal_rcd", {"sampling": "uniform"}),
        ("dual_rcd", {"sampling": "uniform", "dual_step": "newton"}), ("spdc", {}))
PROX_SDCA = "dual_rcd:sampling=uniform:dual_step=newton"  # the report's "ours" by default

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


class Copt(Solver):
    """copt's ``minimize_proximal_gradient`` (backtracking; FISTA when ``accelerated``), its
    ``tol`` 1e-15 so that ``max_iter`` (the budget) stops it."""

    sampling = "trace"

    def __init__(self, accelerated: bool):
        self.accelerated = accelerated
        self.name = "copt_apg" if accelerated else "copt_pg"

    def fit(self, max_iter: int, callback=None):
        import copt
        import copt.penalty

        p = self.problem
        f_grad = smooth_hinge_fgrad(p.mat, p.b, p.penalty.l2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return copt.minimize_proximal_gradient(
                f_grad, np.zeros(p.shape[1]), prox=copt.penalty.L1Norm(p.penalty.l1).prox,
                jac=True, accelerated=self.accelerated, step="backtracking", tol=PEER_TOL,
                max_iter=int(max_iter), callback=callback)

    def run(self, budget) -> None:
        self._last = self.fit(budget)
        self.result = np.asarray(self._last.x).copy()

    def details(self) -> dict:
        return {"nit": int(self._last.nit), "nnz_x": int(np.count_nonzero(self.result))}

    def trace(self, subopt, target, cap):
        tr, stop = callback_trace(lambda cb: self.fit(10**9, cb), lambda x: (subopt(x),) * 2,
                                  target, cap)
        return list(zip(tr.cap.astype(float), tr.rel_subopt, tr.net_s, strict=True)), stop


def solvers(only: set | None) -> list[Solver]:
    """Ours and the copt peers, or those ``--solvers`` names (a method or a full name)."""
    every = [*(OursKernel(m, seed=SEED, **o) for m, o in OURS), Copt(True), Copt(False)]
    return [s for s in every if only is None or s.name in only
            or getattr(s, "method", None) in only]


# ---------------------------------------------------------------------------------------------
# Worker: one data set, all settings, all solvers
# ---------------------------------------------------------------------------------------------


def reference(prob, key: str, opts: dict, what: str) -> dict:
    def compute():
        ref, out = solve_reference(prob, REF_RTOL, opts["ref_max_s"])
        return {**out, "nnz_x": int(np.count_nonzero(ref.w)),
                "nnz_alpha": int(np.count_nonzero(ref.alpha))}

    return cached_ref(Path(opts["data_dir"]) / "dgpd_peers_refs.json", key, opts["fresh_refs"],
                      compute, what)


def worker(dd: DataDef, opts: dict, prep: dict) -> dict:
    from pdsparse.problem import Problem

    mem = {"start_maxrss_mib": maxrss_mib()}
    A, y, meta, load_s, dense = load_prepared(prep["path"])
    b = np.where(y == dd.cls, 1.0, -1.0)
    n, d = A.shape
    stored = int(A.size if dense else A.nnz)
    log(f"{dd.name}: n={n:,} d={d:,} stored={stored:,} {'dense' if dense else 'CSR'}, "
        f"class {dd.cls:g}: {int((b > 0).sum())} positives; loaded in {load_s:.1f} s "
        f"({prep['note']})")
    mem["after_load_rss_mib"] = rss_mib()
    gc.collect()
    gc.freeze()
    refs = []

    def cells():
        for lam, mu in opts["settings"]:
            prob = Problem(A, b, loss=LOSS, l2=mu / n, l1=lam / n)
            key = (f"{Path(prep['path']).name}|class={dd.cls:g}|lam={lam!r}|mu={mu!r}|"
                   f"rtol={REF_RTOL:g}")
            ref = reference(prob, key, opts, f"{dd.name} ({lam}, {mu})")
            refs.append({"lam": lam, "mu": mu, **ref})
            log(f"{dd.name} lam={lam:g} mu={mu:g}: P* = {ref['p_star']:.12g} (rel gap "
                f"{ref['rel_gap']:.1e}, {ref['method']}, {ref['seconds']:.1f} s"
                f"{', cached' if ref['cached'] else ''}; nnz x* {ref['nnz_x']}, alpha* "
                f"{ref['nnz_alpha']})")
            yield Cell({"dataset": dd.name, "lam": lam, "mu": mu}, prob, ref["p_star"],
                       ref["rel_gap"])

    frame, bmeta = benchmark(cells(), solvers(opts["solvers"]), opts["targets"],
                             repeats=opts["repeats"], cap=opts["cap"], log=log,
                             modules=("copt",))
    mem["peak_rss_mib"] = maxrss_mib()
    return {"dataset": dd.name, "frame": frame, "watch": bmeta["watch"], "refs": refs,
            "memory": mem, "n": n, "d": d, "stored": stored, "dense": dense, "load_s": load_s,
            "prep": prep, "cls": dd.cls, "recipe": dd.recipe, "paper": dd.paper,
            "split": {k: v for k, v in meta.get("split", {}).items() if k != "test_rows"}}


# ---------------------------------------------------------------------------------------------
# Outputs: the report's tables, then our fastest against the best peer
# ---------------------------------------------------------------------------------------------


def verdict(g: pd.DataFrame, cap: float) -> tuple[dict, str, str]:
    """(the row's numbers, verdict, explanation) of one data set x setting x target, ``g`` its
    rows of ``bench.report.times``: our fastest that counts against the fastest peer that
    counts, the verdict by the range of the ratio over the rounds; inconclusive too when a
    peer stopped at the cap before our fastest finished."""
    ok = g[g.seconds < math.inf]
    mine, peers = ok[ok.ours], ok[~ok.ours]
    capped = g[~g.ours & (g.seconds == math.inf) & g.why.str.contains("cap")]
    row = {"ours": "-", "ours_s": math.inf, "peer": "-", "peer_s": math.inf,
           "ratio": math.nan, "lo": math.nan, "hi": math.nan}
    best = peers.loc[peers.seconds.idxmin()] if len(peers) else None
    if best is not None:
        row.update(peer=best.solver, peer_s=best.seconds)
    if mine.empty:
        if best is None:
            return row, "n/a", "neither ours nor a peer reached the target within the cap"
        return row, BEHIND, (f"no solver of ours reached the target within {cap:g} s; "
                             f"{best.solver} took {best.seconds:.3g} s")
    me = mine.loc[mine.seconds.idxmin()]
    row.update(ours=me.solver, ours_s=me.seconds)
    if best is None:
        v, why = AHEAD, ""
    else:
        row.update(ratio=me.seconds / best.seconds, lo=me.fastest / best.slowest,
                   hi=me.slowest / best.fastest)
        v = range_verdict(row["lo"], row["hi"])
        why = "" if v == AHEAD else (
            f"{best.solver} {best.seconds:.3g} s (max_iter {int(best.budget)}) vs our fastest "
            f"{me.solver} {me.seconds:.3g} s (work {me.budget:.3g}); ratio range "
            f"{row['lo']:.2f}–{row['hi']:.2f}")
    if v == AHEAD and len(capped) and me.slowest > cap:
        v, why = INCONCLUSIVE, (f"{', '.join(capped.solver)} stopped at the cap ({cap:g} s) "
                                f"before our fastest {me.solver} ({me.seconds:.3g} s) "
                                "finished: undecided")
    return row, v, why


def fastest_section(frame: pd.DataFrame, cap: float) -> list[str]:
    lines = ["## Our fastest against the best peer", "",
             "Per row, the fastest of ours that counts against the fastest copt method that "
             "counts (median CPU s; range: ours' fastest and slowest round against the peer's "
             "slowest and fastest).", "",
             "| dataset | λ | μ | target | our fastest | s | best peer | s | ours / peer | range "
             "| verdict |", "|---|--:|--:|--:|---|--:|---|--:|--:|---|---|"]
    notes = []
    fmt = lambda x: "not reached" if x == math.inf else f"{x:.3g}"  # noqa: E731
    for (ds, lam, mu, target), g in times(frame, KEYS).groupby([*KEYS, "target"], sort=False):
        r, v, why = verdict(g, cap)
        rng = "-" if r["lo"] != r["lo"] else f"{r['lo']:.2f}–{r['hi']:.2f}"
        ratio = "-" if r["ratio"] != r["ratio"] else f"**{r['ratio']:.2f}**"
        lines.append(f"| {ds} | {lam:g} | {mu:g} | {target:g} | {r['ours']} | "
                     f"{fmt(r['ours_s'])} | {r['peer']} | {fmt(r['peer_s'])} | {ratio} | "
                     f"{rng} | {v} |")
        if v != AHEAD:
            notes.append(f"* {ds}, λ = {lam:g}, μ = {mu:g}, {target:g}: {why}.")
    lines.append("")
    return lines + (["Rows where our fastest is not ahead:", "", *notes, ""] if notes else
                    ["Our fastest is ahead of every peer in every row.", ""])


def render(frame: pd.DataFrame, meta: dict, ours: str) -> str:
    cap = meta["cap_s"]  # each cell's targets loosest first, in the tables
    frame = frame.assign(_c=frame.groupby(KEYS, sort=False).ngroup()).sort_values(
        ["_c", "target"], ascending=[True, False], kind="stable").drop(columns="_c")
    md = markdown(frame, meta, keys=KEYS, ours=ours if ours in set(frame.solver) else None,
                  title=f"DGPD peers: {ours} against copt, CPU s to (P - P*)/P* <= target "
                        f"(smooth hinge + elastic net; cap {cap:g} s)")
    lines = ["", *fastest_section(frame, cap), "## Data sets", ""]
    for w in meta["datasets"]:
        if "skipped" in w:
            lines.append(f"* {w['dataset']}: skipped: {w['skipped']}")
            continue
        m, wa = w["memory"], w["watch"]
        lines.append(
            f"* {w['dataset']} ({w['paper']}; class {w['cls']:g} vs rest; n = {w['n']:,}, "
            f"d = {w['d']:,}, {'dense' if w['dense'] else 'nnz'} {w['stored']:,}"
            + (f"; **{w['subsample_note']}**" if w.get("subsample_note") else "")
            + f"): data load {w['load_s']:.1f} s ({w['prep']['note']}); peak RSS of the worker "
            f"{m['peak_rss_mib']:,.0f} MiB (after loading {m['after_load_rss_mib']:,.0f} MiB); "
            f"{'quiet' if wa['quiet'] else 'NOT quiet'} (other processes kept "
            f"{wa['other_cores']:.2f} cores busy), worker {wa['seconds']:.0f} s"
            + (f", finished {w['finished']}" if w.get("finished") else "")
            + "; references: " + "; ".join(
                f"(λ {r['lam']:g}, μ {r['mu']:g}) P* = {r['p_star']:.10g}, rel gap "
                f"{r['rel_gap']:.1e}, {r['method']}, {r['seconds']:.0f} s"
                f"{' (cached)' if r['cached'] else ''}, nnz x* {r['nnz_x']}, "
                f"nnz alpha* {r['nnz_alpha']}" for r in w["refs"]) + ".")
    if meta.get("reused"):
        lines.append(f"* results of {', '.join(meta['reused'])} kept from an earlier run "
                     "(--reuse)")
    lines += ["* scikit-learn: no solver minimizes this objective (smooth hinge + elastic net; "
              "`SGDClassifier(loss='modified_huber')` is another loss): not a peer.",
              f"* runtime of this invocation {meta['watch']['seconds']:.0f} s (data preparation "
              "and cached references not included).", ""]
    return md + "\n".join(lines)


def kept(data_dir: Path, ds: str) -> Path:
    return Path(data_dir) / f"dgpd_peers_{ds}.pkl"


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def parse_settings(text: str) -> list[tuple[float, float]]:
    return [tuple(float(x) for x in item.split(",")) for item in text.split(";")
            if item.strip()]


def main(argv=None) -> int:
    ap = bench_parser(__doc__, ALL_DATASETS, "digits-rb", "digits-rb only, 10 s caps")
    ap.add_argument("--cap", type=float, default=None,
                    help="time cap of one traced solve, s (default 120; quick 10)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved timed rounds")
    ap.add_argument("--rf-rows", type=int, default=None,
                    help="mnist-rf: keep this many of the 58,000 training rows (default: all)")
    ap.add_argument("--settings", default=";".join(f"{a!r},{b!r}" for a, b in SETTINGS),
                    help="'lam,mu;lam,mu' (default: %(default)s)")
    ap.add_argument("--targets", default=",".join(f"{t:g}" for t in TARGETS))
    ap.add_argument("--solvers", default=None,
                    help="comma list of methods or names (dgpd, primal_rcd, dual_rcd, spdc, "
                         "copt_apg, copt_pg); default all")
    ap.add_argument("--ours", default=PROX_SDCA,
                    help="our solver of the report's main table (default %(default)s)")
    add_data_args(ap, "dgpd_peers_refs.json", 3600.0,
                  "time limit of one reference solve (default %(default)s)")
    ap.add_argument("--reuse", default=None,
                    help="comma list of data sets whose results of an earlier run (kept in "
                         "<data-dir>/dgpd_peers_<name>.pkl) go into the outputs instead of a "
                         "new run (e.g. one data set re-run on a quiet machine)")
    add_worker_args(ap)
    args = ap.parse_args(argv)
    require_peer("copt", "dgpd_peers.py")
    opts = {"cap": args.cap or (10.0 if args.quick else 120.0), "repeats": args.repeats,
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
    passthrough = pass_on((("--cap", opts["cap"]), ("--repeats", args.repeats),
                           ("--rf-rows", args.rf_rows), ("--settings", args.settings),
                           ("--targets", args.targets), ("--solvers", args.solvers),
                           ("--mirror", args.mirror), ("--data-dir", args.data_dir),
                           ("--ref-max-s", args.ref_max_s)),
                          [("--fresh-refs", args.fresh_refs)])

    def reused(i: int, ds: str) -> dict | None:
        if ds not in reuse:
            return None
        path = kept(args.data_dir, ds)
        res = pickle.loads(path.read_bytes()) if path.is_file() else {}
        if "frame" not in res:
            raise SystemExit(f"--reuse {ds}: no results of the runner kept in {path}")
        log(f"[{i + 1}/{len(datasets)}] {ds}: reused the results of {res['finished']}")
        return res

    def keep(ds: str, res: dict) -> dict:
        from pdsparse.io import atomic_path

        if "frame" in res:  # kept, so that a later run can --reuse it
            res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
            with atomic_path(kept(args.data_dir, ds)) as tmp:
                tmp.write_bytes(pickle.dumps(res))
        if ds == "mnist-rf" and "frame" in res and args.rf_rows:
            res["subsample_note"] = (
                f"Mnist-RF at a fraction of the paper's size: {args.rf_rows:,} of the "
                "58,000 training rows (recipe subsample, split_seed 0), chosen for time")
        return res

    watch = Watch()
    results = run_datasets(Path(__file__), datasets, passthrough, log=log, t0=watch.t,
                           tmp_prefix="pdsparse-dgpd-peers-", reuse=reused, after=keep)
    done = [r for r in results if "frame" in r]
    if not done:
        raise SystemExit("no results (every data set was skipped)")
    w = watch.stop()
    w["quiet"] = bool(w["quiet"] and all(r["watch"]["quiet"] for r in done))
    meta = {"machine": machine(), "versions": versions("copt"), "watch": w,
            "repeats": args.repeats, "cap_s": opts["cap"], "targets": opts["targets"],
            "settings": {**opts, "solvers": sorted(opts["solvers"] or [])}, "reused": reuse,
            "datasets": [{k: v for k, v in r.items() if k != "frame"} for r in results]}
    frame = pd.concat([r["frame"] for r in done], ignore_index=True)
    print(write(frame, meta, Path(args.out_dir) / "dgpd_peers",
                lambda f, m: render(f, m, args.ours)))
    log(f"total runtime {w['seconds']:.0f} s; quiet: {w['quiet']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
