"""Benchmark: our primal / dual RCD against LIBLINEAR and scikit-learn on the same problem.

Every solver minimizes the same L2-regularized logistic regression (no intercept),

    P(w) = (1/n) sum_j log(1 + exp(-b_j a_j^T w)) + (l2/2) ||w||^2,

Face-Off (Csiba & Richtarik) eq. (1) with the logistic loss (their X is our A^T, d x n).
scikit-learn minimizes C sum_j log(1 + exp(-b_j a_j^T w)) + ||w||^2 / 2, which is n C P(w)
when C = 1 / (l2 n) (:func:`sklearn_C`; checked numerically in tests/test_peers_mapping.py).

Solvers
-------
* ours, dual RCD (Face-Off Algorithm 2): sampling uniform / importance (eq. 14) /
  permutation (when ``pdsparse.solvers.SAMPLINGS`` has it) x step fixed / newton;
* ours, primal RCD (Algorithm 1): uniform / importance / permutation;
* LIBLINEAR through scikit-learn: dual coordinate descent (``dual=True``) and the primal
  trust-region Newton method (``dual=False``);
* scikit-learn ``saga`` and ``lbfgs``.

What is timed
-------------
The wall time of one complete solve from the same in-memory CSR matrix A and labels b to an
iterate at the tolerance, setup included:

* ours: ``t0 -> Problem(A, b, 'logistic', l2) -> make_kernel(...) -> kernel.run(T)
  -> w = kernel.solution().copy() -> t1`` (CSC copy, norms, sampling tables and the
  Python overhead included). T is the number of nonzeros to touch, found by a trace run of
  the same kernel and seed evaluated every max(1/64, 2% of the epochs done) epochs: the
  smallest evaluated T with (P - P*)/P* <= tol. Chunked kernel calls reproduce one call
  exactly, so the timed re-run ends at the very iterate the trace evaluated.
* peers: ``t0 -> LogisticRegression(...).fit(A, b) -> w = coef_.ravel().copy() -> t1``.
  They expose no trace, so they are re-run with growing ``max_iter`` caps (doubling from 1
  until the smallest tolerance is reached, the solver stops by itself, or a fit takes longer
  than the per-run limit), then the caps around each tolerance are bisected to within
  max(1, 3%) iterations. The reported cap is the smallest probed cap reaching the tolerance
  (``tol=1e-15`` so that the cap is what stops them).

P(w) is always evaluated with ``pdsparse.objective.primal`` outside the timer, P* comes from
``pdsparse.reference.reference_solution(problem, rtol=1e-12)`` (certified duality gap).
Short solves are repeated (median of 5 below 0.05 s, of 3 below 1 s, else one run).

Each data set runs in its own subprocess (single-threaded BLAS/OpenMP, so that every solver
uses one core); its peak RSS (``ru_maxrss``) and the bytes of A's CSR and CSC arrays are
reported. Outputs (atomic writes) in ``results/benchmarks/``: ``peers.csv`` /
``peers.parquet`` (one row per data set x l2 x tol x solver), ``peers.md``, ``peers.json``
(run metadata, memory, notes), ``peers_curves.parquet`` and one plot
``peers_<dataset>_<l2 tag>.png`` per data set and l2.

Usage::

    python benchmarks/peers.py                      # everything (< 30 min on 2 cores)
    python benchmarks/peers.py --quick              # small data, short caps (development)
    python benchmarks/peers.py --datasets leu,zipf  # a subset
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path (tests)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (
    DEFAULT_MIRROR,
    OUT_DIR,
    PEER_TOL,
    REPO,
    Relative,
    Run,
    Watch,
    add_worker_args,
    bench_parser,
    first_cap,
    house_repeats,
    load_prepared,
    loadavg,
    log_total,
    make_log,
    maxrss_mib,
    measure,
    pass_on,
    pick_datasets,
    require_peer,
    rows_frame,
    rss_mib,
    run_datasets,
    run_record,
    samples_text,
    search_max_iter,
    serve_worker,
    time_kernel,
    timed,
    timed_at_targets,
    trace_kernel,
    warm_up,
    worker_records,
)
from _harness import versions as harness_versions  # noqa: E402
from _harness import write_outputs as write_tables  # noqa: E402

TOLS = (1e-2, 1e-4, 1e-6)
LAMS = {"1/n": 1.0, "0.1/n": 0.1}
REAL = ("leu", "duke", "colon-cancer", "gisette_scale.t", "ijcnn1.tr")
OPTIONAL = ("news20.binary", "rcv1.binary")  # used only when the mirror has them
SYNTH = "zipf"
ALL_DATASETS = (*REAL, SYNTH, *OPTIONAL)

# news20.binary's shape (n, d, nnz / n); --zipf-scale divides d and nnz per row
NEWS20 = (19_996, 1_355_191, 9_097_916 / 19_996)
ZIPF_EXPONENT = 1.0
SEED = 0
BISECT_REL = 0.03
COLUMNS = ["dataset", "lam", "tol", "solver", "ours", "seconds"]
PEERS = ("liblinear_dual", "liblinear_primal", "saga", "lbfgs")
PLOT_FLOOR = 1e-10
COLORS = {  # ours: dual blues/greens, primal reds (solid); peers: dark, dashed
    "dual:uniform:fixed": "#1f77b4", "dual:uniform:newton": "#9ecae1",
    "dual:importance:fixed": "#2ca02c", "dual:importance:newton": "#a1d99b",
    "dual:permutation:fixed": "#17becf", "dual:permutation:newton": "#6a51a3",
    "primal:uniform": "#d62728", "primal:importance": "#ff9896",
    "primal:permutation": "#ff7f0e",
    "liblinear_dual": "black", "liblinear_primal": "#8c564b", "saga": "#7f7f7f",
    "lbfgs": "#e377c2",
}


log = make_log("peers")


# ---------------------------------------------------------------------------------------------
# The problem mapping and the solvers
# ---------------------------------------------------------------------------------------------


def sklearn_C(l2: float, n: int) -> float:
    """scikit-learn's C for P(w) = 1/n sum log(1 + exp(-b a^T w)) + l2/2 ||w||^2.

    sklearn minimizes C sum_j loss_j + ||w||^2 / 2 = n C [1/n sum_j loss_j + ||w||^2/(2 n C)],
    so l2 = 1 / (n C).
    """
    return 1.0 / (l2 * n)


def peer_estimator(name: str, l2: float, n: int, max_iter: int, tol: float = PEER_TOL):
    """The scikit-learn estimator of a peer, no intercept, default (L2) penalty.

    ``penalty`` is not passed: scikit-learn >= 1.8 deprecates it and its default is L2.
    """
    from sklearn.linear_model import LogisticRegression

    kw = {
        "liblinear_dual": {"solver": "liblinear", "dual": True},
        "liblinear_primal": {"solver": "liblinear", "dual": False},
        "saga": {"solver": "saga"},
        "lbfgs": {"solver": "lbfgs"},
    }[name]
    return LogisticRegression(C=sklearn_C(l2, n), fit_intercept=False, tol=tol,
                              max_iter=int(max_iter), random_state=SEED, **kw)


@dataclass(frozen=True)
class Ours:
    method: str
    sampling: str
    dual_step: str = ""

    @property
    def name(self) -> str:
        short = {"dual_rcd": "dual", "primal_rcd": "primal"}[self.method]
        return ":".join(x for x in (short, self.sampling, self.dual_step) if x)


def our_variants(samplings) -> list[Ours]:
    out = [Ours("dual_rcd", s, st) for s in samplings for st in ("fixed", "newton")]
    return out + [Ours("primal_rcd", s) for s in samplings]


def build(A, b, l2: float, v: Ours):
    """(problem, kernel): the setup of one of our solves."""
    from pdsparse.problem import Problem
    from pdsparse.solvers import make_kernel

    prob = Problem(A, b, loss="logistic", l2=l2)
    return prob, make_kernel(prob, v.method, v.sampling, v.dual_step or "fixed", SEED)


def time_ours(A, b, l2: float, v: Ours, budget: int) -> Run:
    """One complete solve, setup included: (wall s, w, setup s)."""
    return time_kernel(lambda: build(A, b, l2, v)[1], budget)


def time_peer(A, b, l2: float, name: str, cap: int) -> Run:
    """One complete scikit-learn fit: (wall s, w, iterations reported by the solver)."""
    from sklearn.exceptions import ConvergenceWarning

    est = peer_estimator(name, l2, A.shape[0], cap)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        s, w = timed(lambda: est.fit(A, b).coef_.ravel().copy())
    return Run(s, w, math.nan, int(np.max(est.n_iter_)))


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def mirror_dir(arg: str | None) -> Path:
    from pdsparse.data.fetch import resolve_mirror

    return resolve_mirror(arg) or DEFAULT_MIRROR


def load_data(name: str, opts: dict) -> tuple[sp.csr_matrix | None, np.ndarray | None, str]:
    """(A, b, note); A is None when the data set is unavailable (the note says why)."""
    from pdsparse.data.normalize import normalize

    if name == SYNTH:
        from pdsparse.data.synthetic import zipf_bow

        n, d, m = zipf_shape(opts["zipf_scale"])
        t = time.perf_counter()
        A, b = zipf_bow(n, d, m, ZIPF_EXPONENT, SEED)
        A, info = normalize(A, "avg_example_norm")
        return A, b, (f"zipf_bow(n={n}, d={d}, mean_nnz_per_row={m:.2f}, exponent="
                      f"{ZIPF_EXPONENT}, seed={SEED}) = news20.binary's shape with d and nnz/row "
                      f"divided by {opts['zipf_scale']:g}; avg_example_norm (scale "
                      f"{info['scale']:.4g}); generated in {time.perf_counter() - t:.1f} s")

    from pdsparse.data.fetch import fetch, raw_path
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.prepare import prepare
    from pdsparse.data.registry import load_registry
    from pdsparse.data.store import load_dataset

    spec = load_registry(REPO / "config" / "datasets.yaml")[name]
    processed = REPO / "data" / "processed" / f"{name}.npz"
    raw_dir = REPO / "data" / "raw"
    mirror = mirror_dir(opts.get("mirror"))
    if processed.is_file():
        ds = load_dataset(processed)
        if ds.meta.get("normalization", {}).get("method") == "avg_example_norm":
            return ds.A, ds.b, f"reused {processed.relative_to(REPO)} (avg_example_norm)"
    raw = raw_path(spec, raw_dir)
    if not raw.is_file():
        if not (mirror / spec.filename).is_file():
            return None, None, (f"skipped: {spec.filename} is not in the mirror {mirror} "
                                "(no download attempted)")
        raw = fetch(spec, raw_dir, mirror=mirror, progress=False)
    if processed.is_file():  # prepared with another normalization: normalize in memory
        A, y = read_libsvm(raw, n_features=spec.d)
        A, _ = normalize(A, "avg_example_norm")
        return A, binarize_labels(y), f"read {raw.relative_to(REPO)}, normalized in memory"
    ds = prepare(raw, spec, "avg_example_norm", processed)
    return ds.A, ds.b, f"prepared {processed.relative_to(REPO)} from {raw.relative_to(REPO)}"


def prep_data(name: str, opts: dict, tmp_dir: str) -> dict:
    """Make the file the worker loads, in a process of its own.

    Parsing or generating a matrix needs temporaries several times its size; doing it here
    keeps them out of the worker's peak RSS, which then shows the solvers' footprint.
    """
    from pdsparse.data.store import save_dataset

    A, b, note = load_data(name, opts)
    if A is None:
        return {"skipped": note}
    processed = REPO / "data" / "processed" / f"{name}.npz"
    if name != SYNTH and note.startswith(("reused", "prepared")):
        return {"path": str(processed), "note": note}
    path = Path(tmp_dir) / f"{name}.npz"
    save_dataset(path, A, b, {"name": name, "note": note})
    return {"path": str(path), "note": note}


def zipf_shape(scale: float) -> tuple[int, int, float]:
    n, d, m = NEWS20
    return n, int(round(d / scale)), m / scale


# ---------------------------------------------------------------------------------------------
# Worker: one data set, both l2, all solvers
# ---------------------------------------------------------------------------------------------


def nbytes(M) -> int:
    return int(M.data.nbytes + M.indices.nbytes + M.indptr.nbytes)


@dataclass
class Ctx(Relative):
    """What every solver of one (data set, l2) needs."""

    dataset: str
    lam_spec: str
    l2: float
    A: sp.csr_matrix
    b: np.ndarray
    prob: object  # Problem sharing A's arrays, used only to evaluate P outside the timers
    p_star: float
    ref_rel_gap: float
    opts: dict
    rows: list = field(default_factory=list)
    curves: list = field(default_factory=list)

    def row(self, tol: float, solver: str, ours: bool, seconds, **extra) -> None:
        self.rows.append({"dataset": self.dataset, "lam": self.l2, "tol": tol,
                          "solver": solver, "ours": ours, "seconds": seconds,
                          "lam_spec": self.lam_spec, **extra, "p_star": self.p_star,
                          "ref_rel_gap": self.ref_rel_gap, "n": self.A.shape[0],
                          "d": self.A.shape[1], "nnz": int(self.A.nnz)})


def trace_ours(ctx: Ctx, v: Ours) -> pd.DataFrame:
    """Run the kernel, evaluating P every max(1/64, 2% of the epochs done) epochs."""
    o = ctx.opts
    tr, _setup, _stop = trace_kernel(lambda: build(ctx.A, ctx.b, ctx.l2, v), ctx.rel, min(TOLS),
                                     max_epochs=o["max_epochs"], max_kernel_s=o["max_trace_s"],
                                     time_frac=0.0)
    tr.insert(1, "epoch", tr.touched / ctx.prob.nnz)
    return tr


def bench_ours(ctx: Ctx, v: Ours) -> None:
    o = ctx.opts
    tr = trace_ours(ctx, v)
    last = tr.iloc[-1]
    log(f"  {v.name}: trace {last.epoch:.3g} epochs, kernel {last.kernel_s:.3g} s, "
        f"rel {last.rel_subopt:.2e}")
    done = {}
    for tol, r, T, t in timed_at_targets(tr, TOLS, "touched",
                                         lambda T: time_ours(ctx.A, ctx.b, ctx.l2, v, T), ctx.rel):
        if r is None:
            ctx.row(tol, v.name, True, np.nan, family=v.method, sampling=v.sampling,
                    dual_step=v.dual_step, budget_kind="epochs", budget=np.nan,
                    iterations=np.nan, search_limit=f"{last.epoch:.4g} epochs / "
                    f"{last.kernel_s:.3g} s kernel", repeats=0, seconds_samples="",
                    setup_s=np.nan, trace_time_s=np.nan, p_reached=last.primal,
                    rel_subopt=last.rel_subopt,
                    how=(f"trace not at tol within max_epochs={o['max_epochs']:g} / "
                         f"max_trace_s={o['max_trace_s']:g} (stopped at {last.epoch:.4g} "
                         "epochs)"))
            continue
        done[T] = t
        ctx.row(tol, v.name, True, t.seconds, family=v.method,
                sampling=v.sampling, dual_step=v.dual_step, budget_kind="epochs",
                budget=float(r.epoch), iterations=int(r.iterations),
                search_limit=f"{o['max_epochs']:g} epochs / {o['max_trace_s']:g} s kernel",
                repeats=t.repeats, seconds_samples=t.samples,
                setup_s=t.setup_s, trace_time_s=float(r.kernel_s),
                p_reached=t.p, rel_subopt=t.rel,
                how=("trace (evals every max(1/64, 2%) epochs) -> smallest E at tol; "
                     f"median of {t.repeats} complete timed re-runs "
                     "Problem->make_kernel->run(E*nnz)->w.copy()"), note=t.check(r.primal))
    # curve for the plot: wall time ~ median setup of the timed runs + kernel time of the trace
    setup = statistics.median([x.setup_s for t in done.values() for x in t.runs]) if done \
        else time_ours(ctx.A, ctx.b, ctx.l2, v, 0).setup_s
    for r in tr.itertuples():
        ctx.curves.append({"dataset": ctx.dataset, "lam_spec": ctx.lam_spec, "solver": v.name,
                           "ours": True, "seconds": setup + r.kernel_s, "budget": r.epoch,
                           "rel_subopt": r.rel_subopt, "kind": "trace"})
    for t in done.values():
        ctx.curves.append({"dataset": ctx.dataset, "lam_spec": ctx.lam_spec, "solver": v.name,
                           "ours": True, "seconds": t.seconds,
                           "budget": np.nan, "rel_subopt": t.rel, "kind": "timed"})


def bench_peer(ctx: Ctx, name: str) -> None:
    o = ctx.opts

    def probe(cap: int) -> dict:
        run = time_peer(ctx.A, ctx.b, ctx.l2, name, cap)
        p, rel = ctx.rel(run.x)
        return {"run": run, "secs": [run.seconds], "p": p, "rel": rel, "iters": run.nit}

    def give_up(cap: int, r: dict) -> str:
        if r["iters"] < cap:
            return f"stopped by itself after {r['iters']} iterations"
        if r["secs"][0] > o["max_peer_run_s"]:
            return f"a fit took {r['secs'][0]:.3g} s > {o['max_peer_run_s']:g} s"
        return ""

    runs, stop_reason = search_max_iter(probe, TOLS, o["max_cap"][name], bisect_rel=BISECT_REL,
                                        give_up=give_up)
    best = max(runs, key=lambda c: -runs[c]["rel"])
    family = "liblinear" if name.startswith("liblinear") else "sklearn"
    log(f"  {name}: {len(runs)} fits, caps up to {max(runs)}, best rel "
        f"{runs[best]['rel']:.2e}{'; ' + stop_reason if stop_reason else ''}")
    for tol in TOLS:
        c = first_cap(runs, tol)
        if c is None:
            ctx.row(tol, name, False, np.nan, family=family, sampling="", dual_step="",
                    budget_kind="max_iter", budget=np.nan, iterations=np.nan,
                    search_limit=f"max_iter <= {max(runs)}", repeats=0, seconds_samples="",
                    setup_s=np.nan, trace_time_s=np.nan, p_reached=runs[best]["p"],
                    rel_subopt=runs[best]["rel"],
                    how=f"max_iter sweep never reached tol ({stop_reason})")
            continue
        r = runs[c]
        if len(r["secs"]) == 1:  # the fit of the search, then the house rule's repeats
            r["secs"] = [x.seconds for x in house_repeats(
                lambda c=c: time_peer(ctx.A, ctx.b, ctx.l2, name, c), first=r["run"])]
        ctx.row(tol, name, False, statistics.median(r["secs"]), family=family,
                sampling="", dual_step="", budget_kind="max_iter", budget=float(c),
                iterations=r["iters"], search_limit=f"max_iter <= {max(runs)}",
                repeats=len(r["secs"]),
                seconds_samples=samples_text(r["secs"]), setup_s=np.nan,
                trace_time_s=np.nan, p_reached=r["p"], rel_subopt=r["rel"],
                how=(f"max_iter sweep (doubling, bisection to max(1, {BISECT_REL:.0%})) -> "
                     f"smallest probed cap at tol; median of {len(r['secs'])} complete fits "
                     f"(tol={PEER_TOL:g})"))
    for c in sorted(runs):
        ctx.curves.append({"dataset": ctx.dataset, "lam_spec": ctx.lam_spec, "solver": name,
                           "ours": False, "seconds": statistics.median(runs[c]["secs"]),
                           "budget": float(c), "rel_subopt": runs[c]["rel"], "kind": "fit"})


def worker(name: str, opts: dict, data_file: str, note: str) -> dict:
    from pdsparse.problem import Problem
    from pdsparse.reference import CertificationError, reference_solution
    from pdsparse.solvers import SAMPLINGS

    t_start = time.perf_counter()
    load0 = loadavg()
    mem = {"start_maxrss_mib": maxrss_mib()}
    A, b, _meta, _load_s, _dense = load_prepared(data_file)
    b = np.ascontiguousarray(b, dtype=np.float64)
    log(f"{name}: n={A.shape[0]:,} d={A.shape[1]:,} nnz={A.nnz:,} ({note})")
    samplings = [s for s in ("uniform", "importance", "permutation") if s in SAMPLINGS]
    notes = [note]
    if "permutation" not in SAMPLINGS:
        notes.append("sampling='permutation' not in pdsparse.solvers.SAMPLINGS: skipped")
    variants = [v for v in our_variants(samplings) if opts["solvers"] is None
                or v.name in opts["solvers"]]
    peers = [p for p in PEERS if opts["solvers"] is None or p in opts["solvers"]]
    warm_up(variants, lambda A, b, v, T: time_ours(A, b, 0.02, v, T), PEERS,
            lambda A, b, name, cap: time_peer(A, b, 0.02, name, cap), n=50)
    gc.collect()
    gc.freeze()  # long-lived objects out of the collector: gc.collect() before a timing is cheap
    probe = Problem(A, b, loss="logistic", l2=1.0 / A.shape[0])
    mem.update(csr_bytes=nbytes(probe.csr), csc_bytes=nbytes(probe.csc),
               input_csr_bytes=nbytes(A), shares_input=bool(
                   np.shares_memory(probe.csr.data, A.data)),
               after_load_rss_mib=rss_mib(), after_load_maxrss_mib=maxrss_mib())
    del probe
    gc.collect()
    refs = []

    def cases():
        for lam_spec in opts["lams"]:
            l2 = LAMS[lam_spec] / A.shape[0]
            prob = Problem(A, b, loss="logistic", l2=l2, name=name)
            t = time.perf_counter()
            try:
                ref = reference_solution(prob, rtol=1e-12)
            except CertificationError as exc:
                log(f"{name} {lam_spec}: {exc}; retrying with rtol=1e-10")
                ref = reference_solution(prob, rtol=1e-10, max_epochs=100000)
            if not ref.rel_gap <= 1e-9:
                raise RuntimeError(f"{name} {lam_spec}: reference rel_gap {ref.rel_gap:.2e} is "
                                   "not far below 1e-6")
            refs.append({"lam_spec": lam_spec, "l2": l2, "p_star": ref.p_star,
                         "rel_gap": ref.rel_gap, "method": ref.method,
                         "seconds": time.perf_counter() - t})
            log(f"{name} {lam_spec}: P* = {ref.p_star:.12g} (rel gap {ref.rel_gap:.1e}, "
                f"{ref.method}, {time.perf_counter() - t:.1f} s)")
            yield lam_spec, Ctx(name, lam_spec, l2, A, b, prob, ref.p_star, ref.rel_gap, opts)

    rows, curves = measure(cases(), variants, peers, bench_ours, bench_peer, mem, "curves")
    mem["peak_rss_mib"] = maxrss_mib()
    return {"dataset": name, "rows": rows, "curves": curves, "refs": refs, "notes": notes,
            "memory": mem, "n": A.shape[0], "d": A.shape[1], "nnz": int(A.nnz),
            "seconds": time.perf_counter() - t_start,
            "loadavg": [load0, loadavg()]}


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


def fmt_ratio(r: float) -> str:
    if not np.isfinite(r):
        return ""
    if r < 0.1:
        return f"{r:.2f}×"
    return f"{r:.1f}×" if r < 10 else f"{r:.0f}×"


def markdown(df: pd.DataFrame, solvers: list[str], meta: dict) -> str:
    lines = ["# Peers: time to relative suboptimality (P - P*)/P* <= tol", "",
             "Wall seconds of a complete solve from the in-memory CSR matrix, setup included; "
             "in parentheses the ratio to the fastest peer (LIBLINEAR dual / primal, saga, "
             "lbfgs) of the row; **bold** = fastest solver of the row; — = not reached "
             "within the search limits (see `peers.csv`, columns `how`, `search_limit`). "
             "Ours: `dual:<sampling>:<step>`, `primal:<sampling>`.", ""]
    head = ["dataset", "λ", "tol", *solvers]
    lines += ["| " + " | ".join(head) + " |",
              "|" + "|".join([":--", ":--", "--:"] + ["--:"] * len(solvers)) + "|"]
    for (ds, lam_spec, tol), g in df.groupby(["dataset", "lam_spec", "tol"], sort=False):
        sec = dict(zip(g.solver, g.seconds, strict=True))
        peer_best = min((sec[p] for p in PEERS if p in sec and np.isfinite(sec[p])),
                        default=np.nan)
        fastest = np.nanmin([s for s in sec.values() if np.isfinite(s)] or [np.nan])
        cells = []
        for s in solvers:
            x = sec.get(s, np.nan)
            if not np.isfinite(x):
                cells.append("—")
                continue
            c = f"{x:.3g}" + (f" ({fmt_ratio(x / peer_best)})" if np.isfinite(peer_best)
                               else "")
            cells.append(f"**{c}**" if x == fastest else c)
        lines.append("| " + " | ".join([ds, lam_spec, f"{tol:g}", *cells]) + " |")
    lines += ["", "## Best of ours vs each peer (ratio = ours / peer; > 1: ours slower)", ""]
    lines += ["| dataset | λ | tol | best ours | s | " + " | ".join(PEERS) + " |",
              "|:--|:--|--:|:--|--:|" + "--:|" * len(PEERS)]
    for (ds, lam_spec, tol), g in df.groupby(["dataset", "lam_spec", "tol"], sort=False):
        o = g[g.ours & np.isfinite(g.seconds)]
        if o.empty:
            best, bs = "—", np.nan
        else:
            k = o.seconds.idxmin()
            best, bs = o.solver[k], o.seconds[k]
        cells = []
        for p in PEERS:
            x = g.seconds[g.solver == p]
            x = float(x.iloc[0]) if len(x) else np.nan
            cells.append("—" if not np.isfinite(x) else
                         f"{x:.3g} ({fmt_ratio(bs / x)})" if np.isfinite(bs) else f"{x:.3g}")
        lines.append(f"| {ds} | {lam_spec} | {tol:g} | {best} | "
                     f"{'—' if not np.isfinite(bs) else f'{bs:.3g}'} | " + " | ".join(cells)
                     + " |")
    lines += ["", "## Data, references, memory", ""]
    lines += ["Memory (MiB): RSS of the worker once A's CSR and a CSC copy are built, and its "
              "peak (ru_maxrss) after our solvers (first λ, before any peer) and at the end. "
              "Data are parsed / generated in a separate process, so the peak is the solvers' "
              "(interpreter and libraries: ~190 MiB; primal RCD holds a CSC copy, the norms "
              "make a transient copy of the values, LIBLINEAR converts A into its own "
              "format).", ""]
    lines += ["| dataset | n | d | nnz | CSR | CSC | RSS with CSR + CSC | peak, ours | "
              "peak, + peers | P* rel gap (max) | worker s |",
              "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for w in meta["datasets"]:
        if "skipped" in w:
            continue
        m = w["memory"]
        gap = max(r["rel_gap"] for r in w["refs"])
        # our solvers of the first l2 run before any peer: the peak of ours alone
        ours = next(v for k, v in m.items() if k.startswith("after_ours_"))
        lines.append(f"| {w['dataset']} | {w['n']:,} | {w['d']:,} | {w['nnz']:,} | "
                     f"{m['csr_bytes'] / 2**20:.1f} | {m['csc_bytes'] / 2**20:.1f} | "
                     f"{m['after_load_rss_mib']:.0f} | {ours:.0f} | {m['peak_rss_mib']:.0f} | "
                     f"{gap:.1e} | {w['seconds']:.0f} |")
    lines += ["", "Notes:", ""]
    for w in meta["datasets"]:
        for n in ([w["skipped"]] if "skipped" in w else w["notes"]):
            lines.append(f"* {w['dataset']}: {n}")
    lines += [f"* total runtime {meta['total_seconds']:.0f} s ({meta['total_seconds'] / 60:.1f} "
              f"min) on {meta['machine']['nproc']} CPUs ({meta['machine']['cpu']}); load "
              f"average before/after {meta['loadavg_before']} / {meta['loadavg_after']}",
              f"* versions: {meta['versions']}", ""]
    return "\n".join(lines)


def lam_tag(lam_spec: str) -> str:
    return lam_spec.replace("/", "")


def plot(curves: pd.DataFrame, ds: str, lam_spec: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pdsparse.io import atomic_path

    c = curves[(curves.dataset == ds) & (curves.lam_spec == lam_spec)]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for solver, g in c.groupby("solver", sort=False):
        ours = bool(g.ours.iloc[0])
        color = COLORS.get(solver, "0.3")
        line = g[g.kind != "timed"].sort_values("budget")
        y = np.clip(line.rel_subopt.to_numpy(), PLOT_FLOOR, None)
        ax.plot(line.seconds, y, ls="-" if ours else "--", lw=1.4 if ours else 1.6,
                color=color, label=solver, marker=None if ours else ".", ms=5)
        t = g[g.kind == "timed"]
        if len(t):
            ax.plot(t.seconds, np.clip(t.rel_subopt, PLOT_FLOOR, None), ls="none",
                    marker="o", ms=4, color=color)
    for tol in TOLS:
        ax.axhline(tol, color="0.6", lw=0.7, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wall time of a complete solve, s (setup included)")
    ax.set_ylabel("(P - P*) / P*")
    ax.set_title(f"{ds}, λ = {lam_spec}: ours solid (trace + median setup; dots: timed "
                 "re-runs), peers dashed (one fit per max_iter)", fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)


def versions() -> dict:
    return harness_versions("sklearn")


def write_outputs(results: list[dict], out_dir: Path, meta: dict) -> pd.DataFrame:
    from pdsparse.repro.traces import write_frame

    curves = pd.DataFrame([c for w in results if "curves" in w for c in w["curves"]])
    df = rows_frame(results)
    ratio = []
    for _, g in df.groupby(["dataset", "lam_spec", "tol"], sort=False):
        pb = g.seconds[g.solver.isin(PEERS)].min()
        ratio.append(g.seconds / pb)
    df["ratio_to_fastest_peer"] = pd.concat(ratio)
    extra = [c for c in df.columns if c not in COLUMNS]
    df = df[COLUMNS + extra]
    df["ours"] = df["ours"].astype(bool)
    out_dir.mkdir(parents=True, exist_ok=True)
    # through the package's one Parquet writer: checksums and provenance (commit, CPU, threads)
    write_frame(df, out_dir / "peers.parquet")
    write_frame(curves, out_dir / "peers_curves.parquet")
    for (ds, lam_spec), _ in df.groupby(["dataset", "lam_spec"], sort=False):
        plot(curves, ds, lam_spec, out_dir / f"peers_{ds}_{lam_tag(lam_spec)}.png")
    write_tables(out_dir, "peers", df, markdown(df, list(dict.fromkeys(df.solver)), meta), meta)
    return df


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def options(args) -> dict:
    quick = args.quick
    cap_scale = 0.1 if quick else 1.0
    return {
        "lams": args.lams,
        "mirror": args.mirror,
        "zipf_scale": args.zipf_scale or (32.0 if quick else 1.0),
        "max_epochs": args.max_epochs or (300.0 if quick else 3000.0),
        "max_trace_s": args.max_trace_s or (5.0 if quick else 40.0),
        "max_peer_run_s": args.max_peer_run_s or (5.0 if quick else 40.0),
        "max_cap": {"liblinear_dual": int(20000 * cap_scale),
                    "liblinear_primal": int(2000 * cap_scale),
                    "saga": int(5000 * cap_scale), "lbfgs": int(20000 * cap_scale)},
        "solvers": set(args.solvers.split(",")) if args.solvers else None,
    }


def main(argv=None) -> int:
    ap = bench_parser(__doc__, ALL_DATASETS, "leu,colon-cancer,zipf",
                      "small synthetic data, short caps: a development run of ~1-2 min")
    ap.add_argument("--lams", default="1/n,0.1/n", help="comma list out of 1/n, 0.1/n")
    ap.add_argument("--solvers", default=None, help="comma list of solver names (default all)")
    ap.add_argument("--mirror", default=None,
                    help="data mirror (default: $PDSPARSE_DATA_MIRROR, else /work/shared/datasets)")
    ap.add_argument("--zipf-scale", type=float, default=None,
                    help="divide news20.binary's d and nnz per row by this (default 1: its full "
                         "shape; quick 32)")
    ap.add_argument("--max-epochs", type=float, default=None)
    ap.add_argument("--max-trace-s", type=float, default=None)
    ap.add_argument("--max-peer-run-s", type=float, default=None)
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    add_worker_args(ap)
    ap.add_argument("--tmp-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    require_peer("sklearn", "peers.py")
    args.lams = [x.strip() for x in args.lams.split(",") if x.strip()]
    bad = [x for x in args.lams if x not in LAMS]
    if bad:
        ap.error(f"--lams: unknown {bad}; choose from {list(LAMS)}")
    opts = options(args)

    if args.worker:
        return serve_worker(args, lambda: prep_data(args.worker, opts, args.tmp_dir),
                            lambda prep: worker(args.worker, opts, prep["path"], prep["note"]))

    datasets = pick_datasets(ap, args, ALL_DATASETS, ["leu", "colon-cancer", SYNTH],
                             list(ALL_DATASETS))

    watch = Watch()
    common = pass_on((("--lams", ",".join(args.lams)), ("--mirror", args.mirror),
                      ("--zipf-scale", args.zipf_scale), ("--max-epochs", args.max_epochs),
                      ("--max-trace-s", args.max_trace_s),
                      ("--max-peer-run-s", args.max_peer_run_s), ("--solvers", args.solvers)),
                     [("--quick", args.quick)])
    results = run_datasets(Path(__file__), datasets, common, log=log, t0=watch.t,
                           tmp_prefix="pdsparse-peers-", pass_tmp_dir=True,
                           failed_hint="; see the messages above")
    meta = {**run_record(watch, opts, versions()), "tols": list(TOLS),
            "datasets": worker_records(results, drop=("rows", "curves"))}
    write_outputs(results, Path(args.out_dir), meta)
    big = [r for r in results if "memory" in r]
    if big:
        r = max(big, key=lambda r: r["nnz"])
        m = r["memory"]
        log(f"largest data set {r['dataset']} (nnz {r['nnz']:,}): peak RSS "
            f"{m['peak_rss_mib']:.0f} MiB; CSR {m['csr_bytes'] / 2**20:.1f} MiB + CSC "
            f"{m['csc_bytes'] / 2**20:.1f} MiB")
    log_total(log, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
