"""Benchmark: our primal / dual RCD against LIBLINEAR and scikit-learn on the same problem.

Every solver minimizes the same L2-regularized logistic regression (no intercept),

    P(w) = (1/n) sum_j log(1 + exp(-b_j a_j^T w)) + (l2/2) ||w||^2,

Face-Off (Csiba & Richtarik) eq. (1) with the logistic loss (their X is our A^T, d x n).
scikit-learn minimizes C sum_j log(1 + exp(-b_j a_j^T w)) + ||w||^2 / 2, which is n C P(w)
when C = 1 / (l2 n) (:func:`sklearn_C`; checked numerically in tests/test_peers_mapping.py).

Solvers
-------
* ours, dual RCD (Face-Off Algorithm 2): ``dual:<sampling>:<step>``, sampling uniform /
  importance (eq. 14) / permutation x step fixed / newton;
* ours, primal RCD (Algorithm 1): ``primal:<sampling>``;
* LIBLINEAR through scikit-learn: dual coordinate descent (``liblinear_dual``) and the primal
  trust-region Newton method (``liblinear_primal``); scikit-learn ``saga`` and ``lbfgs``.

What is timed
-------------
The runner's protocol (``benchmarks/bench``): CPU time (``time.process_time``) of one complete
solve from the cell's in-memory CSR matrix and labels, setup included, at each solver's
cheapest budget reaching (P - P*)/P* <= 1e-2, 1e-4, 1e-6, then ``--repeats`` rounds
interleaved across every (solver, budget), each re-run judged again:

* ours (``bench.solver.OursKernel``): ``Problem(A, b) -> make_kernel -> kernel.run(T) ->
  w.copy()``; T (nonzeros touched) is the first evaluation of a trace of the same kernel and
  seed at the target, evaluated every max(1/64, 2% of the epochs done) epochs (at most
  ``--max-epochs``); chunked calls reproduce one call, so the timed run ends at that iterate;
* peers (:class:`SklearnPeer`): ``LogisticRegression(C, tol=1e-15, max_iter=k).fit(A, b)``,
  k doubled from 1 then bisected to within 3 % (the smallest probed cap at the target).

P(w) is evaluated by ``pdsparse.objective.primal`` outside every clock; P* is
``pdsparse.reference.reference_solution(problem, rtol=1e-12)`` (certified duality gap).
``--cap`` bounds one run (or trace) in seconds. Each data set runs in its own subprocess
(single-threaded BLAS), prepared in another one before, so that the worker's peak RSS is the
solvers'. Outputs (atomic) in ``--out-dir``: ``peers.parquet`` (the runner's long rows, the
searches' runs included), ``peers.json`` (machine, versions, quiet-machine watch, per data set
memory and references), ``peers.md``, and ``peers_<dataset>_<1n|0.1n>.png`` (subopt against
seconds, from the searches' runs).

Usage::

    python benchmarks/peers.py                      # everything (< 30 min on 2 cores)
    python benchmarks/peers.py --quick              # small data, short caps (development)
    python benchmarks/peers.py --datasets leu,zipf  # a subset
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from pathlib import Path

import numpy as np

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path (tests)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    DEFAULT_MIRROR,
    OUT_DIR,
    PEER_TOL,
    REPO,
    Watch,
    add_worker_args,
    bench_parser,
    load_prepared,
    machine,
    make_log,
    maxrss_mib,
    pass_on,
    pick_datasets,
    require_peer,
    rss_mib,
    run_datasets,
    serve_worker,
    trace_kernel,
    versions,
)
from bench.runner import Cell, benchmark  # noqa: E402
from bench.solver import OursKernel, Solver  # noqa: E402

TOLS = (1e-2, 1e-4, 1e-6)
LAMS = {"1/n": 1.0, "0.1/n": 0.1}
REAL = ("leu", "duke", "colon-cancer", "gisette_scale.t", "ijcnn1.tr")
OPTIONAL = ("news20.binary", "rcv1.binary")  # used only when the mirror has them
SYNTH = "zipf"
ALL_DATASETS = (*REAL, SYNTH, *OPTIONAL)
KEYS = ["dataset", "lam"]

# news20.binary's shape (n, d, nnz / n); --zipf-scale divides d and nnz per row
NEWS20 = (19_996, 1_355_191, 9_097_916 / 19_996)
ZIPF_EXPONENT = 1.0
SEED = 0
SAMPLINGS = ("uniform", "importance", "permutation")
PEERS = ("liblinear_dual", "liblinear_primal", "saga", "lbfgs")
HEADLINE = "dual:permutation:newton"  # ours in the main table: the variant chosen in advance
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


class SklearnPeer(Solver):
    """A peer of :func:`peer_estimator`, its budget ``max_iter`` (``tol=1e-15``: the cap is
    what stops it); the runner doubles then bisects it."""

    sampling = "iteration"

    def __init__(self, name: str):
        self.name = name

    def run(self, budget) -> None:
        p = self.problem
        self.est = peer_estimator(self.name, p.l2, p.n, budget)
        self.result = self.est.fit(p.mat, p.b).coef_.ravel().copy()

    def details(self) -> dict:
        return {"n_iter": int(np.max(self.est.n_iter_))}  # < max_iter: it stopped by itself


class Kernel(OursKernel):
    """:class:`bench.solver.OursKernel` traced as this benchmark always did: evaluations every
    max(1/64, 2% of the epochs done) epochs by work alone (``time_frac=0``: the budget's
    resolution is then the peers' 2-3 %, not half an evaluation's time), at most
    ``max_epochs``."""

    def __init__(self, method: str, sampling: str, dual_step: str = "",
                 max_epochs: float = math.inf):
        short = {"dual_rcd": "dual", "primal_rcd": "primal"}[method]
        opts = {"sampling": sampling, **({"dual_step": dual_step} if dual_step else {})}
        super().__init__(method, ":".join([short, *opts.values()]), seed=SEED, **opts)
        self.max_epochs, self.budget = max_epochs, 0

    def run(self, budget) -> None:
        super().run(budget)
        self.budget = budget

    def details(self) -> dict:
        return {"epochs": self.budget / self.problem.nnz}

    def trace(self, subopt, target, cap):
        tr, setup, stop = trace_kernel(self.build, lambda x: (subopt(x),) * 2, target, cap=cap,
                                       max_epochs=self.max_epochs, time_frac=0.0)
        return list(zip(tr.touched.astype(float), tr.rel_subopt, setup + tr.kernel_s,
                        strict=True)), stop


def solvers(opts: dict) -> list[Solver]:
    ours = [Kernel("dual_rcd", s, st, opts["max_epochs"]) for s in SAMPLINGS
            for st in ("fixed", "newton")]
    ours += [Kernel("primal_rcd", s, max_epochs=opts["max_epochs"]) for s in SAMPLINGS]
    every = [*ours, *(SklearnPeer(p) for p in PEERS)]
    return [s for s in every if opts["solvers"] is None or s.name in opts["solvers"]]


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def mirror_dir(arg: str | None) -> Path:
    from pdsparse.data.fetch import resolve_mirror

    return resolve_mirror(arg) or DEFAULT_MIRROR


def zipf_shape(scale: float) -> tuple[int, int, float]:
    n, d, m = NEWS20
    return n, int(round(d / scale)), m / scale


def load_data(name: str, opts: dict):
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


# ---------------------------------------------------------------------------------------------
# Worker: one data set, both l2, all solvers
# ---------------------------------------------------------------------------------------------


def nbytes(M) -> int:
    return int(M.data.nbytes + M.indices.nbytes + M.indptr.nbytes)


def cells(name: str, A, b, lams, refs: list):
    """One cell per l2 with its certified P* (its record appended to ``refs``)."""
    from pdsparse.problem import Problem
    from pdsparse.reference import CertificationError, reference_solution

    for lam_spec in lams:
        prob = Problem(A, b, loss="logistic", l2=LAMS[lam_spec] / A.shape[0], name=name)
        t = time.perf_counter()
        try:
            ref = reference_solution(prob, rtol=1e-12)
        except CertificationError as exc:
            log(f"{name} {lam_spec}: {exc}; retrying with rtol=1e-10")
            ref = reference_solution(prob, rtol=1e-10, max_epochs=100000)
        if not ref.rel_gap <= 1e-9:
            raise RuntimeError(f"{name} {lam_spec}: reference rel_gap {ref.rel_gap:.2e} is not "
                               "far below 1e-6")
        refs.append({"lam": lam_spec, "l2": prob.l2, "p_star": ref.p_star,
                     "rel_gap": ref.rel_gap, "method": ref.method,
                     "seconds": time.perf_counter() - t})
        log(f"{name} {lam_spec}: P* = {ref.p_star:.12g} (rel gap {ref.rel_gap:.1e}, "
            f"{ref.method}, {time.perf_counter() - t:.1f} s)")
        yield Cell({"dataset": name, "lam": lam_spec}, prob, float(ref.p_star),
                   float(ref.rel_gap))


def worker(name: str, opts: dict, data_file: str, note: str) -> dict:
    from pdsparse.problem import Problem

    A, b, *_ = load_prepared(data_file)
    b = np.ascontiguousarray(b, dtype=np.float64)
    log(f"{name}: n={A.shape[0]:,} d={A.shape[1]:,} nnz={A.nnz:,} ({note})")
    probe = Problem(A, b, loss="logistic", l2=1.0 / A.shape[0])
    mem = {"csr_bytes": nbytes(probe.csr), "csc_bytes": nbytes(probe.csc),
           "after_load_rss_mib": rss_mib()}
    del probe
    gc.collect()
    gc.freeze()  # long-lived objects out of the collector: the runner's gc.collect() is cheap
    refs: list = []
    frame, meta = benchmark(cells(name, A, b, opts["lams"], refs), solvers(opts), TOLS,
                            repeats=opts["repeats"], cap=opts["cap"], log=log,
                            modules=("sklearn",))
    mem["peak_rss_mib"] = maxrss_mib()
    return {"dataset": name, "frame": frame, "watch": meta["watch"], "refs": refs,
            "memory": mem, "note": note, "n": A.shape[0], "d": A.shape[1], "nnz": int(A.nnz)}


# ---------------------------------------------------------------------------------------------
# Outputs: the runner's report, best of ours against each peer, data and memory, the plots
# ---------------------------------------------------------------------------------------------


def best_of_ours(frame) -> list[str]:
    """Best of our variants (a minimum over nine: it flatters us) against each peer."""
    from bench.report import times

    per = times(frame, KEYS)
    lines = ["## Best of ours against each peer (ours / peer; > 1: ours slower)", "",
             "| dataset | λ | tol | best ours | s | " + " | ".join(PEERS) + " |",
             "|:--|:--|--:|:--|--:|" + "--:|" * len(PEERS)]
    for (ds, lam, tol), g in per.groupby([*KEYS, "target"], sort=False):
        o = g[g.ours & (g.seconds < math.inf)]
        best, bs = ((o.solver[o.seconds.idxmin()], o.seconds.min()) if len(o)
                    else ("—", math.nan))
        cells = []
        for p in PEERS:
            x = g.seconds[g.solver == p]
            x = float(x.iloc[0]) if len(x) else math.nan
            cells.append("—" if not x < math.inf else f"{x:.3g} ({bs / x:.2g}×)" if bs == bs
                         else f"{x:.3g}")
        lines.append(f"| {ds} | {lam} | {tol:g} | {best} | "
                     f"{'—' if bs != bs else f'{bs:.3g}'} | " + " | ".join(cells) + " |")
    return lines


def data_table(meta: dict) -> list[str]:
    lines = ["## Data, references, memory", "",
             "Memory (MiB): RSS of the worker once A's CSR and a CSC copy are built, and its peak "
             "(ru_maxrss) at the end. Data are parsed / generated in a separate process, so the "
             "peak is the solvers' (interpreter and libraries: ~190 MiB).", "",
             "| dataset | n | d | nnz | CSR | CSC | RSS with CSR + CSC | peak | "
             "P* rel gap (max) | worker watch |",
             "|:--|--:|--:|--:|--:|--:|--:|--:|--:|:--|"]
    notes = []
    for w in meta["datasets"]:
        if "skipped" in w:
            notes.append(f"* {w['dataset']}: {w['skipped']}")
            continue
        m, wt = w["memory"], w["watch"]
        lines.append(f"| {w['dataset']} | {w['n']:,} | {w['d']:,} | {w['nnz']:,} | "
                     f"{m['csr_bytes'] / 2**20:.1f} | {m['csc_bytes'] / 2**20:.1f} | "
                     f"{m['after_load_rss_mib']:.0f} | {m['peak_rss_mib']:.0f} | "
                     f"{max(r['rel_gap'] for r in w['refs']):.1e} | "
                     f"{wt['seconds']:.0f} s, {'quiet' if wt['quiet'] else 'NOT quiet'} |")
        notes.append(f"* {w['dataset']}: {w['note']}")
    return [*lines, "", "Notes:", "", *notes, ""]


def ordered(frame):
    """The rows by data set, l2, target (loosest first) and solver (the order they ran): the
    report lists cells and solvers as they first appear, and a solver that reached nothing
    has its rows before the timed rounds of the others."""
    rank = {c: {v: i for i, v in enumerate(dict.fromkeys(frame[c]))} for c in [*KEYS, "solver"]}
    return frame.sort_values([*KEYS, "target", "solver"], kind="stable", key=lambda col: (
        col.map(rank[col.name]) if col.name in rank else -col))


def render(frame, meta: dict) -> str:
    from bench.report import markdown

    frame = ordered(frame)
    ours = HEADLINE if HEADLINE in set(frame.solver) else None
    md = markdown(frame, meta, keys=KEYS, ours=ours,
                  title="Peers: l2-logistic, CPU time to (P - P*)/P* <= tol")
    title, rest = md.split("\n", 1)
    intro = ("Ours in the first table: `dual:permutation:newton` (the variant chosen in advance; "
             "else the first of ours run), against the fastest of LIBLINEAR dual / primal, saga "
             "and lbfgs. Ours: `dual:<sampling>:<step>`, `primal:<sampling>`.")
    return "\n".join([title, "", intro, rest.rstrip("\n"), "", *best_of_ours(frame), "",
                      *data_table(meta)])


def lam_tag(lam_spec: str) -> str:
    return lam_spec.replace("/", "")


def plot(frame, ds: str, lam_spec: str, path: Path) -> None:
    """Subopt against CPU seconds of each solver's search (ours: its trace, setup + kernel
    seconds; peers: one fit per max_iter), dots at the timed rounds (medians)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pdsparse.io import atomic_path

    c = frame[(frame.dataset == ds) & (frame["lam"] == lam_spec)]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for solver, g in c.groupby("solver", sort=False):
        ours, color = bool(g.ours.iloc[0]), COLORS.get(solver, "0.3")
        line = g[g.status == "search"].sort_values("budget")
        ax.plot(line.cpu_s, np.clip(line.subopt, PLOT_FLOOR, None), ls="-" if ours else "--",
                lw=1.4 if ours else 1.6, color=color, label=solver,
                marker=None if ours else ".", ms=5)
        t = g[g["round"] >= 0].groupby("budget")[["cpu_s", "subopt"]].median()
        ax.plot(t.cpu_s, np.clip(t.subopt, PLOT_FLOOR, None), ls="none", marker="o", ms=4,
                color=color)
    for tol in TOLS:
        ax.axhline(tol, color="0.6", lw=0.7, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds of a complete solve (setup included)")
    ax.set_ylabel("(P - P*) / P*")
    ax.set_title(f"{ds}, λ = {lam_spec}: ours solid (chunked trace), peers dashed (one fit per "
                 "max_iter); dots: the timed rounds' median", fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def options(args) -> dict:
    return {
        "lams": args.lams,
        "mirror": args.mirror,
        "zipf_scale": args.zipf_scale or (32.0 if args.quick else 1.0),
        "max_epochs": args.max_epochs or (300.0 if args.quick else 3000.0),
        "cap": args.cap or (5.0 if args.quick else 40.0),
        "repeats": args.repeats,
        "solvers": set(args.solvers.split(",")) if args.solvers else None,
    }


def main(argv=None) -> int:
    import pandas as pd
    from bench.report import write

    ap = bench_parser(__doc__, ALL_DATASETS, "leu,colon-cancer,zipf",
                      "small synthetic data, short caps: a development run of ~1-2 min")
    ap.add_argument("--lams", default="1/n,0.1/n", help="comma list out of 1/n, 0.1/n")
    ap.add_argument("--solvers", default=None, help="comma list of solver names (default all)")
    ap.add_argument("--mirror", default=None,
                    help="data mirror (default: $PDSPARSE_DATA_MIRROR, else /work/shared/datasets)")
    ap.add_argument("--zipf-scale", type=float, default=None,
                    help="divide news20.binary's d and nnz per row by this (default 1: its full "
                         "shape; quick 32)")
    ap.add_argument("--max-epochs", type=float, default=None,
                    help="our traces' limit (default 3000; quick 300)")
    ap.add_argument("--cap", type=float, default=None,
                    help="seconds of one run or trace, at most (default 40; quick 5)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved timed rounds")
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
                      ("--cap", args.cap), ("--repeats", args.repeats),
                      ("--solvers", args.solvers)), [("--quick", args.quick)])
    results = run_datasets(Path(__file__), datasets, common, log=log, t0=watch.t,
                           tmp_prefix="pdsparse-peers-", pass_tmp_dir=True,
                           failed_hint="; see the messages above")
    frames = [r.pop("frame") for r in results if "frame" in r]
    if not frames:
        raise SystemExit("peers.py: no results (every data set was skipped)")
    frame = pd.concat(frames, ignore_index=True)
    meta = {"machine": machine(), "versions": versions("sklearn"), "watch": watch.stop(),
            "repeats": opts["repeats"], "cap_s": opts["cap"], "targets": list(TOLS),
            "settings": {k: sorted(v) if isinstance(v, set) else v for k, v in opts.items()},
            "datasets": results}
    out = Path(args.out_dir)
    print(write(frame, meta, out / "peers", render))
    for ds, lam in frame[KEYS].drop_duplicates().itertuples(index=False):
        plot(frame, ds, lam, out / f"peers_{ds}_{lam_tag(lam)}.png")
    log(f"total runtime {meta['watch']['seconds']:.0f} s; quiet: {meta['watch']['quiet']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
