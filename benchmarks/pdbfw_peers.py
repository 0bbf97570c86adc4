"""Benchmark: PDBFW and the l1-ball baselines of the package against copt, time to a target.

Problem (PDBFW, Lei et al. NeurIPS 2019, Sec. 5):

    P(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2  subject to  ||x||_1 <= r,

h the smooth hinge (Appendix B.7), b in {-1, +1}, mu = 10/n (Sec. 5), solved by every method
as ``Problem(A, b, "smooth_hinge", penalty=L1Ball(r, mu))``. P* comes from
``pdsparse.reference.reference_solution(problem, rtol=1e-10)`` (certified duality gap); the
targets are (P - P*)/P* <= 1e-2, 1e-4, 1e-6.

Radii: each data set runs at two radii, (1) ``config``: the radius the workflow uses,
``pdbfw.datasets.<name>.radius`` of ``config/config.yaml`` (the radius whose x* has Table
2's sparsity ratio, ``benchmarks/pdbfw_radius.md``; a set the config lacks takes that
study's radius, else ``pdbfw.radius``, Sec. 5's 300), and (2) ``active``: half of ||x*||_1
of the l2-only problem (r = inf), where the constraint is clearly active. Every row records
r, ||x*||_1, nnz(x*) and whether the ball is active at x*.

Solvers
-------
* ours: the entries of ``pdbfw.solvers`` in ``config/config.yaml`` with their options and a
  data set's overrides (``datasets.<name>.options``: the workflow's choices, e.g. PDBFW's
  dual step multiplier; ``--ours`` replaces the list; without a config the six with
  default options):
  ``pdbfw`` (Algorithm 1), ``acc_pg``, ``fw``, ``svrg``, ``scgs``, ``storc``; a name missing
  from the registry is skipped with a note;
* peers, copt 0.9 on f(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2 written in NumPy
  (``_harness.smooth_hinge_fgrad``, checked against ``pdsparse.objective.primal``), the ball
  through ``copt.constraint.L1Ball(r)``:
  ``copt_apg`` / ``copt_pg``: ``minimize_proximal_gradient(f_grad, 0, prox=L1Ball(r).prox,
  jac=True, step="backtracking", accelerated=True / False)`` (FISTA / projected gradient);
  ``copt_fw``: ``minimize_frank_wolfe(f_grad, 0, L1Ball(r).lmo, jac=True,
  step="backtracking")`` (the adaptive step of Pedregosa et al. 2020, copt's default);
  ``copt_pfw``: the same with ``variant="pairwise"`` and ``L1Ball(r).lmo_pairwise``, started
  at the Frank-Wolfe vertex of grad f(0), -r sign(g_j) e_j with j = argmax |g_j| (pairwise FW
  keeps x a convex combination of vertices, so it cannot start at 0; copt's example starts at
  r e_0; the gradient at 0 is inside the timed fit). All with ``tol=1e-15``.
  Counterparts: our ``acc_pg`` vs ``copt_apg`` (and ``copt_pg``), our ``fw`` vs ``copt_fw``
  (and ``copt_pfw``). copt's randomized solvers (SVRG, SAGA, stochastic FW) are not peers:
  they need numba (not installed; without it their per-sample loops run as pure Python) and
  take a coordinate-separable prox, not a ball projection.

What is timed (the protocol of ``benchmarks/_harness.py``, as in ``dgpd_peers.py``)
-----------------------------------------------------------------------------------
The wall time of one complete solve from the in-memory A (CSR, or the dense array) and b to
an iterate at the target, setup included; loading the data file is excluded and reported.

* ours: ``t0 -> Problem(A, b, ..., L1Ball(r, mu)) -> make_kernel(...) -> kernel.run(T) ->
  x = kernel.solution().copy() -> t1``. T (the kernel's work units) comes from a trace run of
  the same kernel and seed, evaluated every max(1/64 epoch, 2% of the work done, enough work
  for half of one evaluation's time): the smallest evaluated T at the target. Chunked calls
  reproduce one call, so the timed re-run ends at the traced iterate (its P is recomputed
  and compared; a mismatch is written in ``note``).
* peers: ``t0 -> f_grad closure, L1Ball -> copt (tol=1e-15, max_iter=cap) -> x.copy() ->
  t1``. copt is deterministic and calls ``callback(locals())`` every iteration, so one traced
  run evaluating P in the callback (every iteration, then every 2%; the callback's time is
  taken off the trace clock) gives the smallest cap at the target; the timed runs are
  complete uninstrumented fits with that cap, their P compared with the trace's.
  (Proximal gradient: the k-th call sees the iterate ``max_iter = k - 1`` returns;
  Frank-Wolfe: the call of iteration ``it`` sees the iterate ``max_iter = it`` returns.)
* Median of 5 timings below 0.05 s, of 3 below 1 s, else one run; ``gc.collect()`` before
  each, outside the timer; warm-up calls of every solver on a tiny problem first.
* ``--cap`` (60 s) per solve: a trace whose time passes it stops; the row says "> cap".

Each data set runs in its own subprocess with ``OMP/OPENBLAS/MKL_NUM_THREADS=1`` (one core),
the data prepared in a preceding subprocess, so the worker's peak RSS is the solvers'.

Data (prepared once into ``results/benchmarks/data/``, reused when present)
-----------------------------------------------------------------------------
Recipes of :class:`pdsparse.data.prepare.Recipe` for PDBFW's Table 2 sets that the offline
mirror has (see :data:`DATASETS`; a set of the same name in the config takes its recipe):
``duke`` (44 x 7,129, dense), ``ijcnn1-rb`` (ijcnn1's 35,000-row training split with 300
random-binning grids; the paper's ijcnn.RB has the 49,990 rows of ijcnn1, not in the
mirror), ``mnist09-rb`` (MNIST training digits 0 and 9, 11,872 rows, 100 grids).

Outputs (atomic) in ``results/benchmarks/``: ``pdbfw_peers.csv`` (one row per data set x
radius x target x solver), ``pdbfw_peers.md`` (a table per data set and radius, the verdicts
"our fastest ahead of every copt method" and "each of ours no slower than its copt
counterpart", with the reason wherever not), ``pdbfw_peers.json`` (machine, quietness,
versions, references, memory, every trace).

Usage::

    python benchmarks/pdbfw_peers.py                          # everything
    python benchmarks/pdbfw_peers.py --quick                  # duke, 10 s caps
    python benchmarks/pdbfw_peers.py --datasets duke --solvers pdbfw,fw,copt_fw --cap 30
"""


from __future__ import annotations

import contextlib
import gc
import io
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from _harness import (
    PEER_TOL,
    REPO,
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
    smooth_hinge_fgrad,
    solve_reference,
    time_copt,
    time_ours,
    trace_kernel,
    versions,
    warm_up,
    worker_line,
    worker_records,
    write_outputs,
)

LOSS = "smooth_hinge"
MU_TIMES_N = 10.0  # mu = 10/n (Sec. 5)
PAPER_RADIUS = 300.0  # Sec. 5: "We set the l1 constraint to be 300"
ACTIVE_FRACTION = 0.5  # the active radius: this fraction of ||x*||_1 of the l2-only problem
TARGETS = (1e-2, 1e-4, 1e-6)
REF_RTOL = 1e-10
SEED = 0
COLUMNS = ["dataset", "radius_kind", "radius", "target", "solver", "config", "seconds",
           "repeats", "reached", "ratio"]
ORDER = [*COLUMNS, "ours", "lower_bound_s", "seconds_samples", "setup_s", "budget", "epochs"]
"""The csv's first columns (the rest in the order the rows give them)."""
QUIET = "quiet (no snakemake running, no other busy process)"

log = make_log("pdbfw_peers")


# ---------------------------------------------------------------------------------------------
# Data sets
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataDef:
    name: str
    registry: str  # the raw file's entry of config/datasets.yaml
    recipe: dict
    paper: str  # the row of PDBFW Table 2 it stands for
    radius: float | None = None  # the config's radius (None: the paper's 300)
    radius_source: str = ""
    r_star: float | None = None  # the radius whose x* has Table 2's sparsity (pdbfw_radius.md)
    options: tuple = ()  # per-method option overrides: ((method, ((key, value), ...)), ...)


DATASETS = {d.name: d for d in (
    DataDef("duke", "duke", {"normalization": "unit_rows"}, "duke breast-cancer",
            r_star=2.23),
    DataDef("ijcnn1-rb", "ijcnn1.tr",
            {"normalization": "none", "features": "rb", "n_grids": 300, "sigma": 1.67},
            "ijcnn.RB", r_star=141.0),
    DataDef("mnist09-rb", "mnist",
            {"normalization": "none", "classes": [0, 9], "features": "rb", "n_grids": 100,
             "sigma": 10.729}, "MNIST.RB 0 VS 9", r_star=435.0),
)}
"""The recipes of ``benchmarks/pdbfw_radius.py`` (Helper DATA): unit rows for duke, random
binning with inputs scaled to [-1, 1] (``input_scale: max_abs``) and the bandwidths that
reproduce Table 2's feature counts (ijcnn: sigma 1.67, whose bin count extrapolated to
ijcnn1's 49,990 rows is 58,699; MNIST 0 vs 9: sigma 10.729, 894,394 features against the
paper's 894,499); ``r_star``: the radius of ``benchmarks/pdbfw_radius.md``'s recommendation
(averaged loss, mu = 10/n), whose x* has Table 2's sparsity ratio (duke 415 nonzeros, 5.8%;
ijcnn 663, 1.2%; MNIST 8,587, 0.96%)."""
ALL_DATASETS = tuple(DATASETS)


def datasets_from(cfg: dict) -> dict[str, DataDef]:
    """:data:`DATASETS` with the PDBFW config's entry of the same name applied: its recipe
    (when it reads the same registry file), its ``radius`` and its per-solver ``options``,
    so that the benchmark solves the workflow's problem with the workflow's solvers. Without
    a config radius a set takes ``r_star`` (Helper DATA's recommendation)."""
    from dataclasses import replace

    out = {}
    for name, dd in DATASETS.items():
        entry = (cfg.get("datasets") or {}).get(name) or {}
        if (entry.get("source") or {}).get("registry") == dd.registry and entry.get("recipe"):
            dd = replace(dd, recipe=dict(entry["recipe"]))
        if entry.get("radius") is not None:
            dd = replace(dd, radius=float(entry["radius"]),
                         radius_source=f"pdbfw.datasets.{name}.radius of config/config.yaml")
        elif dd.r_star is not None:
            dd = replace(dd, radius=dd.r_star,
                         radius_source="the radius of benchmarks/pdbfw_radius.md whose x* has "
                                       "Table 2's sparsity (not in config/config.yaml)")
        opts = entry.get("options") or {}
        dd = replace(dd, options=tuple(
            (str(m), tuple((str(k), str(v)) for k, v in o.items())) for m, o in opts.items()))
        out[name] = dd
    return out


def with_overrides(ours: list[Ours], dd: DataDef) -> list[Ours]:
    """Our solvers with the data set's option overrides (``options: {pdbfw: {delta: x1000}}``
    replaces pdbfw's delta on that set, as the workflow does)."""
    over = dict(dd.options)
    out = []
    for v in ours:
        opts = dict(v.options)
        opts.update(dict(over.get(v.method, ())))
        out.append(Ours(v.method, tuple(opts.items())))
    return out


def prep_data(dd: DataDef, opts: dict) -> dict:
    """The cached ``.npz`` of a data set (prepared here when missing)."""
    return prepare_cached(dd.registry, dd.recipe, opts)


# ---------------------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------------------


OURS = tuple(Ours(m) for m in ("pdbfw", "acc_pg", "fw", "svrg", "scgs", "storc"))
"""Fallback when the config has no ``pdbfw.solvers``: the six methods, default options."""


def config_pdbfw() -> dict:
    """The ``pdbfw`` section of ``config/config.yaml`` (empty when absent)."""
    import yaml

    try:
        with open(REPO / "config" / "config.yaml") as fh:
            return dict((yaml.safe_load(fh) or {}).get("pdbfw") or {})
    except OSError:
        return {}


def config_ours(cfg: dict) -> tuple[Ours, ...]:
    """The solvers of the PDBFW config with their options (``{method: pdbfw, delta: x100}``
    -> ``Ours("pdbfw", (("delta", "x100"),))``), else :data:`OURS`."""
    entries = cfg.get("solvers") or []
    out = tuple(Ours(str(e["method"]), tuple((str(k), str(v)) for k, v in e.items()
                                             if k != "method")) for e in entries)
    return out or OURS


@dataclass(frozen=True)
class Peer:
    name: str  # copt_apg, copt_pg, copt_fw, copt_pfw

    @property
    def config(self) -> str:
        return {"copt_apg": "accelerated=True,step=backtracking",
                "copt_pg": "accelerated=False,step=backtracking",
                "copt_fw": "variant=vanilla,step=backtracking",
                "copt_pfw": "variant=pairwise,step=backtracking"}[self.name]

    @property
    def key(self) -> str:
        return f"{self.name}[{self.config}]"

    @property
    def proximal(self) -> bool:
        return self.name in ("copt_apg", "copt_pg")

    def updates(self, max_iter: int) -> int:
        """Iterations (gradient steps applied) of a complete fit with this ``max_iter``:
        copt's proximal-gradient loop applies max_iter + 1, its Frank-Wolfe loop max_iter."""
        return max_iter + 1 if self.proximal else max_iter


PEERS = tuple(Peer(n) for n in ("copt_apg", "copt_pg", "copt_fw", "copt_pfw"))
COUNTERPARTS = {"acc_pg": ("copt_apg", "copt_pg"), "fw": ("copt_fw", "copt_pfw")}
"""Our method -> the copt methods that run the same algorithm (first: the closest)."""


def parse_ours(text: str | None, default: tuple[Ours, ...]) -> tuple[Ours, ...]:
    """``pdbfw,fw:step=open_loop,svrg:step=x2;inner=n`` -> Ours entries (else ``default``)."""
    if not text:
        return default
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        method, _, opts = item.partition(":")
        pairs = tuple(tuple(kv.split("=", 1)) for kv in opts.split(";") if kv)
        out.append(Ours(method, pairs))
    return tuple(out)


def make_problem(A, b, radius: float, mu: float):
    from pdsparse.penalties import L1Ball
    from pdsparse.problem import Problem

    return Problem(A, b, loss=LOSS, penalty=L1Ball(radius, mu))


def run_peer(A, b, radius, mu, p: Peer, max_iter: int, callback=None):
    """One copt fit; copt's FW prints its initial Lipschitz estimate: kept off stdout."""
    import copt
    from copt.constraint import L1Ball as CoptL1Ball

    f_grad = smooth_hinge_fgrad(A, b, mu)
    ball = CoptL1Ball(radius)
    x0 = np.zeros(A.shape[1])
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if p.proximal:
            return copt.minimize_proximal_gradient(
                f_grad, x0, prox=ball.prox, jac=True, accelerated=p.name == "copt_apg",
                step="backtracking", tol=PEER_TOL, max_iter=int(max_iter), callback=callback)
        if p.name == "copt_fw":
            return copt.minimize_frank_wolfe(
                f_grad, x0, ball.lmo, jac=True, step="backtracking", tol=PEER_TOL,
                max_iter=int(max_iter), callback=callback)
        g0 = f_grad(x0)[1]
        j = int(np.argmax(np.abs(g0)))
        sign = float(np.sign(-g0[j])) or 1.0
        x0[j] = sign * radius
        return copt.minimize_frank_wolfe(
            f_grad, x0, ball.lmo_pairwise, x0_rep=(sign, j), variant="pairwise", jac=True,
            step="backtracking", tol=PEER_TOL, max_iter=int(max_iter), callback=callback)


def time_peer(A, b, radius, mu, p: Peer, cap: int) -> Run:
    """One complete copt fit (wall s, x, copt's ``nit``)."""
    return time_copt(lambda: run_peer(A, b, radius, mu, p, cap))


# ---------------------------------------------------------------------------------------------
# One (data set, radius): traces and timed runs
# ---------------------------------------------------------------------------------------------


def bench_ours(case: Case, v: Ours) -> None:
    tr, setup, stop = trace_kernel(lambda: our_setup(make_problem, case.args, v, SEED), case.rel,
                                   min(case.opts["targets"]), cap=case.opts["cap"],
                                   extra=lambda kernel, x: (int(np.count_nonzero(x)),),
                                   extra_columns=("nnz_x",), diverged="diverged or infeasible")
    bench_traced(case, tr, key=v.key, solver=v.name, config=v.config, ours=True, setup=setup,
                 stop=stop, run=lambda T: time_ours(make_problem, case.args, v, T, SEED),
                 iterations=lambda r, t: int(r.iterations),
                 extra=lambda r, T: {"epochs": np.nan if T is None else T / case.prob.nnz},
                 log=log)


def bench_peer(case: Case, p: Peer) -> None:
    """copt's trace through its callback. Each row's ``cap`` is the ``max_iter`` whose complete
    fit returns the evaluated iterate: k - 1 at the k-th call (from 0) of the proximal-gradient
    loop, whose callback opens each iteration; ``it`` in Frank-Wolfe's loop, whose callback
    comes before the update of iteration ``it``. The final call after Frank-Wolfe's loop
    repeats an iterate: ignored."""
    fw = {} if p.proximal else {"index": lambda k, loc: int(loc["it"]),
                                "end_index": lambda k, res: int(res.nit)}
    tr, stop = callback_trace(lambda cb: run_peer(*case.args, p, 10**9, cb), case.rel,
                              min(case.opts["targets"]), case.opts["cap"],
                              diverged="diverged or infeasible", **fw)
    bench_traced(case, tr, key=p.key, solver=p.name, config=p.config, ours=False,
                 setup=math.nan, stop=stop, run=lambda cap: time_peer(*case.args, p, cap),
                 iterations=lambda r, t: p.updates(int(r.cap)),
                 extra=lambda r, cap: {"epochs": np.nan}, log=log)


# ---------------------------------------------------------------------------------------------
# Worker: one data set, both radii, all solvers
# ---------------------------------------------------------------------------------------------


def available(ours: tuple[Ours, ...]) -> tuple[list[Ours], list[str]]:
    from pdsparse.solvers import SOLVERS

    have = [v for v in ours if v.method in SOLVERS]
    missing = [v.method for v in ours if v.method not in SOLVERS]
    return have, missing


def check_fgrad(A, b, mu: float, radius: float) -> float:
    """Relative difference between copt's f (NumPy) and pdsparse.objective.primal at a
    feasible point (must be rounding only: the two sides minimize the same function)."""
    from pdsparse import objective

    x = np.random.default_rng(0).standard_normal(A.shape[1])
    x *= 0.5 * radius / np.abs(x).sum()
    f = smooth_hinge_fgrad(A, b, mu)(x)[0]
    p = objective.primal(make_problem(A, b, radius, mu), x)
    return abs(f - p) / abs(p)


def reference(prob, key: str, opts: dict, dataset: str, what: str | None) -> dict:
    """P* (cached by key): value, certificate, and ||x*||_1, nnz(x*), ball active."""
    from pdsparse.reference import reference_record

    def compute():
        ref, out = solve_reference(prob, REF_RTOL, opts["ref_max_s"])
        out.update(solution_norm=float(np.abs(ref.w).sum()),
                   solution_nnz=int(np.count_nonzero(ref.w)), active=False)
        if prob.penalty.bounded:
            rec = reference_record(prob, ref, dataset, key)
            out.update(solution_norm=float(rec["solution_norm"]),
                       solution_nnz=int(rec["solution_nnz"]), active=bool(rec["active"]))
        return out

    return cached_ref(Path(opts["data_dir"]) / "pdbfw_peers_refs.json", key, opts["fresh_refs"],
                      compute, what)


def worker(dd: DataDef, opts: dict, prep: dict) -> dict:
    from pdsparse.problem import Problem

    watch = Watch()
    mem = {"start_maxrss_mib": maxrss_mib()}
    A, b, _meta, load_s, dense = load_prepared(prep["path"])
    b = np.asarray(b, dtype=np.float64)
    if set(np.unique(b)) != {-1.0, 1.0}:
        raise RuntimeError(f"{dd.name}: labels {np.unique(b)[:5]} are not +-1")
    n, d = A.shape
    stored = int(A.size if dense else A.nnz)
    mu = MU_TIMES_N / n
    log(f"{dd.name}: n={n:,} d={d:,} stored={stored:,} {'dense' if dense else 'CSR'}, "
        f"{int((b > 0).sum())} positives; loaded in {load_s:.1f} s ({prep['note']})")
    mem["after_load_rss_mib"] = rss_mib()
    ours, missing = available(opts["ours"])
    ours = [v for v in ours if opts["solvers"] is None or v.name in opts["solvers"]]
    ours = with_overrides(ours, dd)
    peers = [p for p in PEERS if opts["solvers"] is None or p.name in opts["solvers"]]
    warm_up(ours, lambda A, b, v, T: time_ours(make_problem, (A, b, 1.0, 0.1), v, T, SEED), peers,
            lambda A, b, p, cap: time_peer(A, b, 1.0, 0.1, p, cap), dense=True)
    gc.collect()
    gc.freeze()
    tag = Path(prep["path"]).name
    l2_ref = reference(Problem(A, b, loss=LOSS, l2=mu), f"{tag}|l2|mu={mu!r}|rtol={REF_RTOL:g}",
                       opts, dd.name, None)
    log(f"{dd.name}: l2-only problem: ||x*||_1 = {l2_ref['solution_norm']:.6g}, nnz(x*) = "
        f"{l2_ref['solution_nnz']:,} ({l2_ref['method']}, {l2_ref['seconds']:.1f} s"
        f"{', cached' if l2_ref['cached'] else ''})")
    r_cfg = dd.radius if dd.radius is not None else opts["radius"]
    radii = [("config", float(r_cfg)),
             ("active", float(ACTIVE_FRACTION * l2_ref["solution_norm"]))]
    if opts["radii"] is not None:
        radii = [r for r in radii if r[0] in opts["radii"]]
    fcheck = check_fgrad(A, b, mu, radii[0][1])
    if not fcheck <= 1e-12:
        raise RuntimeError(f"{dd.name}: copt's f differs from objective.primal by {fcheck:.1e}")
    refs = []

    def cases():
        for kind, radius in radii:
            prob = make_problem(A, b, radius, mu)
            ref = reference(prob, f"{tag}|r={radius!r}|mu={mu!r}|rtol={REF_RTOL:g}", opts,
                            dd.name, f"{dd.name} r={radius:g}")
            refs.append({"radius_kind": kind, "radius": radius, **ref})
            log(f"{dd.name} r={radius:.6g} ({kind}): P* = {ref['p_star']:.12g} (rel gap "
                f"{ref['rel_gap']:.1e}, {ref['method']}, {ref['seconds']:.1f} s"
                f"{', cached' if ref['cached'] else ''}); ||x*||_1 = "
                f"{ref['solution_norm']:.6g}, nnz(x*) = {ref['solution_nnz']:,}, ball "
                f"{'active' if ref['active'] else 'inactive'}")
            yield kind, Case({"dataset": dd.name, "radius_kind": kind, "radius": radius},
                             {"mu": mu, "p_star": ref["p_star"], "ref_rel_gap": ref["rel_gap"],
                              "xstar_norm1": ref["solution_norm"],
                              "xstar_nnz": ref["solution_nnz"], "ball_active": ref["active"]},
                             (A, b, radius, mu), prob, ref["p_star"], opts)

    rows, traces = measure(cases(), ours, peers, bench_ours, bench_peer, mem)
    mem["peak_rss_mib"] = maxrss_mib()
    for r in rows:
        r.update(n=n, d=d, stored=stored, dense=dense, peak_rss_mib=mem["peak_rss_mib"],
                 load_s=load_s, l2_xstar_norm1=l2_ref["solution_norm"],
                 l2_xstar_nnz=l2_ref["solution_nnz"])
    return {"dataset": dd.name, "rows": rows, "traces": traces, "refs": refs,
            "l2_ref": l2_ref, "memory": mem, "n": n, "d": d, "stored": stored,
            "dense": dense, "load_s": load_s, "prep": prep, "recipe": dd.recipe,
            "paper": dd.paper, "radius_source": dd.radius_source or (
                f"pdbfw.radius of config/config.yaml, r = {opts['radius']:g} (Sec. 5's 300 "
                "with the averaged loss)"),
            "missing": missing, "fcheck": fcheck, **watch.stop()}


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


ROW_KEYS = ["dataset", "radius_kind", "target"]


def _faster(a, b) -> str:
    """'yes' if row a reached its target no later than row b, 'no' if b was faster, '?' if
    neither is known."""
    if a.reached and (not b.reached and b.lower_bound_s >= a.seconds
                      or b.reached and a.seconds <= b.seconds):
        return "yes"
    if b.reached and (not a.reached or b.seconds < a.seconds):
        return "no"
    if not a.reached and not b.reached:
        return "n/a"
    return "?"


def _explain(a, b) -> str:
    """Why row a (ours) is behind row b (a peer): times, setup, iterations and the time per
    iteration (ours: after the setup; copt's setup is inside its first iteration)."""
    def per_it(r):
        s = r.seconds if r.reached else r.lower_bound_s
        it = max(int(r.iterations), 1)
        setup = r.setup_s if np.isfinite(r.setup_s) else 0.0
        return s, it, (s - setup) / it

    sa, ia, pa = per_it(a)
    sb, ib, pb = per_it(b)
    what_a = f"{sa:.3g} s" if a.reached else f"> {sa:.3g} s (rel {a.rel_subopt:.1e} at the cap)"
    extra = f", after a setup of {a.setup_s:.3g} s" if np.isfinite(a.setup_s) else ""
    return (f"{a.solver} {what_a}: {ia:,} iteration{'s' * (ia != 1)} of {pa * 1e3:.3g} ms{extra}; "
            f"{b.solver} {sb:.3g} s: {ib:,} iteration{'s' * (ib != 1)} of {pb * 1e3:.3g} ms")


def verdicts(g: pd.DataFrame) -> dict:
    """The checks of one (data set, radius, target): our fastest vs every copt method, each of
    ours vs its counterparts; each a (verdict, explanation)."""
    out = {}
    o, p = g[g.ours], g[~g.ours]
    reached_o, reached_p = o[o.reached], p[p.reached]
    if reached_o.empty:
        if reached_p.empty:
            out["fastest"] = ("n/a", "neither ours nor copt reached the target within the cap")
        else:
            k = reached_p.seconds.idxmin()
            out["fastest"] = ("no", "no method of ours reached the target within the cap; "
                                    f"{reached_p.solver[k]} took {reached_p.seconds[k]:.3g} s")
    else:
        best = reached_o.loc[reached_o.seconds.idxmin()]
        losers = reached_p[reached_p.seconds <= best.seconds]
        if not losers.empty:
            q = losers.loc[losers.seconds.idxmin()]
            out["fastest"] = ("no", _explain(best, q))
        else:
            open_ = p[~p.reached & (p.lower_bound_s < best.seconds)]
            if not open_.empty:
                out["fastest"] = ("?", f"{', '.join(open_.solver)} stopped at the cap before "
                                       f"our fastest {best.solver} ({best.seconds:.3g} s)")
            else:
                out["fastest"] = ("yes", f"{best.solver} {best.seconds:.3g} s")
    for ours_name, peer_names in COUNTERPARTS.items():
        a = o[o.solver == ours_name]
        if a.empty:
            continue
        a = a.iloc[0]
        for peer_name in peer_names:
            q = p[p.solver == peer_name]
            if q.empty:
                continue
            q = q.iloc[0]
            v = _faster(a, q)
            out[f"{ours_name} vs {peer_name}"] = (v, "" if v in ("yes", "n/a")
                                                  else _explain(a, q))
    return out


def cell(r) -> str:
    if r.reached and np.isfinite(r.seconds):
        ratio = fmt_ratio(r.ratio)
        return f"{r.seconds:.3g} ({ratio})" if ratio else f"{r.seconds:.3g}"
    if np.isfinite(r.lower_bound_s):
        return f"> {r.lower_bound_s:.3g} ({r.rel_subopt:.0e})"
    return "—"


def markdown(df: pd.DataFrame, meta: dict) -> str:
    cap = meta["settings"]["cap"]
    lines = ["# PDBFW peers: wall seconds to (P - P*)/P* <= target", "",
             "P(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2, ||x||_1 <= r, smooth hinge, "
             "mu = 10/n (PDBFW Sec. 5). Wall seconds of a complete solve from the in-memory "
             "matrix (setup included, data load excluded); in parentheses the ratio to the "
             "fastest copt method of the row (< 1: faster than copt); **bold** = fastest of "
             "the row; `> t (r)`: stopped at the cap after t s at relative suboptimality r "
             f"(cap {cap:g} s per solve). Verdicts: `fastest` = our fastest ahead of every "
             "copt method; `acc_pg`, `fw` = no slower than the copt method of the same "
             "algorithm (APG / PG; FW / pairwise FW); `n/a`: neither reached the target "
             "within the cap; `?`: undecided (the other stopped at the cap earlier).", "",
             machine_line(meta, QUIET), ""]
    rank = {m: i for i, m in enumerate(dict.fromkeys(
        [v.method for v in meta["ours_objs"]] + [p.name for p in PEERS]))}
    df = df.assign(key=df.solver + "[" + df.config + "]")
    failures = []
    for ds, gd in df.groupby("dataset", sort=False):
        present = sorted(dict.fromkeys(gd.key), key=lambda k: (rank.get(k.split("[")[0], 99), k))
        short = {k: k.split("[")[0] + ("" if k.endswith("[default]") or "copt" in k
                                       else " " + k.split("[")[1][:-1]) for k in present}
        w = next(x for x in meta["datasets"] if x.get("dataset") == ds)
        l2 = w["l2_ref"]
        lines += [f"## {ds} ({w['paper']}; n = {w['n']:,}, d = {w['d']:,}, "
                  f"{'dense' if w['dense'] else 'nnz'} {w['stored']:,})", "",
                  f"Finished {w.get('finished', '')}; machine "
                  f"{'quiet' if w['quiet'] else 'NOT quiet'} (snakemake "
                  f"{'seen' if w['snakemake'] else 'not seen'}; other processes kept "
                  f"{w['other_cores']:.2f} cores busy on average), load average "
                  f"{w['loadavg'][0]} -> {w['loadavg'][1]}. l2-only problem (no ball): "
                  f"||x*||_1 = {l2['solution_norm']:.4g}, nnz(x*) = {l2['solution_nnz']:,}. "
                  f"Config radius: {w['radius_source']}.", ""]
        for (kind, radius), gr in gd.groupby(["radius_kind", "radius"], sort=False):
            ref = next(r for r in w["refs"] if r["radius_kind"] == kind)
            lines += [f"### r = {radius:.4g} ({kind}): ||x*||_1 = {ref['solution_norm']:.4g}, "
                      f"nnz(x*) = {ref['solution_nnz']:,} of {w['d']:,}, ball "
                      f"{'active' if ref['active'] else 'inactive'} at x*", ""]
            checks = None
            body = []
            for target, g in gr.groupby("target", sort=False):
                cells = cells_of(g, present, cell)
                v = verdicts(g)
                checks = checks or list(v)
                body.append(f"| {target:g} | " + " | ".join(cells) + " | "
                            + " | ".join(v[c][0] if c in v else "" for c in checks) + " |")
                for c, (ok, why) in v.items():
                    if ok not in ("yes", "n/a") or c == "fastest" and ok == "n/a":
                        failures.append(f"* {ds}, r = {radius:.4g} ({kind}), {target:g}, "
                                        f"{c}: {ok}" + (f": {why}" if why else ""))
            checks = checks or []
            lines += ["| target | " + " | ".join(short[k] for k in present) + " | "
                      + " | ".join(checks) + " |",
                      "|--:|" + "--:|" * len(present) + ":-:|" * len(checks), *body, ""]
        lines += [f"{worker_line(w)}; copt's f vs objective.primal: "
                  f"{w['fcheck']:.1e}; references: " + "; ".join(
                      f"r = {r['radius']:.4g}: P* = {r['p_star']:.10g}, rel gap "
                      f"{r['rel_gap']:.1e}, {r['method']}, {r['seconds']:.0f} s"
                      f"{' (cached)' if r['cached'] else ''}" for r in w["refs"]) + ".", ""]
    lines += ["## Rows where a check fails or is open", ""]
    lines += failures or ["None: our fastest is ahead of every copt method and each of ours "
                          "is no slower than its copt counterpart in every row."]
    lines += ["", "## Notes", ""]
    for w in meta["datasets"]:
        if "skipped" in w:
            lines.append(f"* {w['dataset']}: skipped: {w['skipped']}")
        elif w.get("missing"):
            lines.append(f"* {w['dataset']}: not in the registry yet (skipped): "
                         f"{', '.join(w['missing'])}")
    lines += [f"* runtime {meta['total_seconds']:.0f} s ({meta['total_seconds'] / 60:.1f} min)",
              f"* versions: {meta['versions']}", ""]
    return "\n".join(lines)


def outputs(results: list[dict], out_dir: Path, meta: dict) -> pd.DataFrame:
    meta["datasets"] = worker_records(results)
    df = add_ratios(rows_frame(results), ROW_KEYS, against_ours=False)
    df = df[ORDER + [c for c in df.columns if c not in ORDER]]
    md = markdown(df, meta)
    meta = {k: v for k, v in meta.items() if k != "ours_objs"}
    meta["traces"] = [t for w in results for t in w.get("traces", [])]
    write_outputs(out_dir, "pdbfw_peers", df, md, meta)
    return df


def render(out_dir: Path) -> int:
    """Rewrite ``pdbfw_peers.md`` from the csv and json of an earlier run."""
    from pdsparse.io import atomic_path

    df = pd.read_csv(out_dir / "pdbfw_peers.csv", keep_default_na=True)
    for c in ("config", "note", "how"):
        df[c] = df[c].astype(object).fillna("")
    meta = json.loads((out_dir / "pdbfw_peers.json").read_text())
    meta["ours_objs"] = [Ours(k.split("[")[0]) for k in meta["ours"]]
    md = markdown(add_ratios(df.drop(columns=["ratio", "ratio_lower_bound"]), ROW_KEYS,
                             against_ours=False), meta)
    with atomic_path(out_dir / "pdbfw_peers.md") as tmp:
        tmp.write_text(md)
    print(md)
    return 0


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = bench_parser(__doc__, ALL_DATASETS, "duke", "duke only, 10 s caps")
    ap.add_argument("--cap", type=float, default=None,
                    help="time cap of one solve, s (default 60; quick 10)")
    ap.add_argument("--radii", default=None,
                    help="config, active or both (default)")
    ap.add_argument("--targets", default=",".join(f"{t:g}" for t in TARGETS))
    ap.add_argument("--ours", default=None,
                    help="our solvers and options, 'pdbfw,fw:step=open_loop,svrg:step=x2;"
                         "inner=n' (default: pdbfw.solvers of config/config.yaml, else the "
                         "six with default options)")
    ap.add_argument("--solvers", default=None,
                    help="comma list of names to run (ours and copt_apg, copt_pg, copt_fw, "
                         "copt_pfw); default all")
    add_data_args(ap, "pdbfw_peers_refs.json", 1800.0)
    ap.add_argument("--render", action="store_true",
                    help="only rewrite pdbfw_peers.md from the csv and json in --out-dir")
    add_worker_args(ap)
    args = ap.parse_args(argv)
    cfg = config_pdbfw()
    ours = parse_ours(args.ours, config_ours(cfg))
    opts = {"cap": args.cap or (10.0 if args.quick else 60.0),
            "radii": set(args.radii.split(",")) if args.radii else None,
            "targets": sorted((float(t) for t in args.targets.split(",")), reverse=True),
            "solvers": set(args.solvers.split(",")) if args.solvers else None,
            "ours": ours, "radius": float(cfg.get("radius", PAPER_RADIUS)),
            "mirror": args.mirror, "data_dir": args.data_dir,
            "fresh_refs": args.fresh_refs, "ref_max_s": args.ref_max_s}

    defs = datasets_from(cfg)
    if args.render:
        return render(Path(args.out_dir))
    require_peer("copt", "pdbfw_peers.py")
    if args.worker:
        dd = defs[args.worker]
        return serve_worker(args, lambda: prep_data(dd, opts), lambda prep: worker(dd, opts, prep))

    datasets = pick_datasets(ap, args, defs, ["duke"], list(ALL_DATASETS))

    passthrough = pass_on((("--cap", opts["cap"]), ("--targets", args.targets),
                           ("--data-dir", args.data_dir), ("--ref-max-s", args.ref_max_s),
                           ("--radii", args.radii), ("--ours", args.ours),
                           ("--solvers", args.solvers), ("--mirror", args.mirror)),
                          [("--fresh-refs", args.fresh_refs)])

    def stamp(ds: str, res: dict) -> dict:
        res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        return res

    watch = Watch()
    results = run_datasets(Path(__file__), datasets, passthrough, log=log, t0=watch.t,
                           tmp_prefix="pdsparse-pdbfw-peers-", after=stamp)
    meta = {**run_record(watch, opts, versions("copt"), results=results, skip=("ours",)),
            "ours": [v.key for v in ours], "ours_objs": ours, "peers": [p.key for p in PEERS]}
    outputs(results, Path(args.out_dir), meta)
    log_total(log, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
