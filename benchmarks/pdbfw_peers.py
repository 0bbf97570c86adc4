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

What is timed (the house protocol of ``benchmarks/peers.py`` / ``dgpd_peers.py``)
------------------------------------------------------------------------------------
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

import argparse
import contextlib
import gc
import io
import json
import math
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from _harness import (
    DATA_DIR,
    DEFAULT_MIRROR,
    OTHER_MAX,
    OUT_DIR,
    REPO,
    OtherLoad,
    loadavg,
    machine,
    make_log,
    maxrss_mib,
    rel,
    repeats_for,
    rss_mib,
    single_thread_env,
    smooth_hinge_fgrad,
    snakemake_running,
    versions,
)

LOSS = "smooth_hinge"
MU_TIMES_N = 10.0  # mu = 10/n (Sec. 5)
PAPER_RADIUS = 300.0  # Sec. 5: "We set the l1 constraint to be 300"
ACTIVE_FRACTION = 0.5  # the active radius: this fraction of ||x*||_1 of the l2-only problem
TARGETS = (1e-2, 1e-4, 1e-6)
REF_RTOL = 1e-10
SEED = 0
PEER_TOL = 1e-15
EVAL_MIN_EPOCHS = 1.0 / 64
EVAL_REL_STEP = 0.02
EVAL_TIME_FRAC = 0.5  # a trace chunk runs at least this fraction of one evaluation's time
COLUMNS = ["dataset", "radius_kind", "radius", "target", "solver", "config", "seconds",
           "repeats", "reached", "ratio"]
QUIET = "quiet (no snakemake running, no other busy process)"
NOT_QUIET = "NOT quiet: snakemake or another job ran during part of the measurement"

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


def cache_path(dd: DataDef, data_dir: Path) -> Path:
    from pdsparse.data.prepare import Recipe

    return data_dir / f"{dd.registry}__{Recipe(**dd.recipe).tag()}.npz"


def prep_data(dd: DataDef, opts: dict) -> dict:
    """The cached ``.npz`` of a data set (prepared here when missing)."""
    from pdsparse.data.fetch import fetch, resolve_mirror
    from pdsparse.data.prepare import Recipe, prepare
    from pdsparse.data.registry import load_registry

    data_dir = Path(opts["data_dir"])
    path = cache_path(dd, data_dir)
    if path.is_file():
        return {"path": str(path), "note": f"reused {rel(path)}", "prep_s": 0.0}
    spec = load_registry(REPO / "config" / "datasets.yaml")[dd.registry]
    mirror = resolve_mirror(opts.get("mirror")) or DEFAULT_MIRROR
    if not (Path(mirror) / spec.filename).is_file():
        return {"skipped": f"{spec.filename} is not in the mirror {mirror} (no download)"}
    t = time.perf_counter()
    raw = fetch(spec, data_dir / "raw", mirror=mirror, progress=False, download=False)
    recipe = Recipe(**dd.recipe)
    prepare(raw, spec, recipe, path)
    secs = time.perf_counter() - t
    return {"path": str(path), "prep_s": secs,
            "note": f"prepared {rel(path)}: prepare({rel(raw)}, recipe {recipe.tag()}) in "
                    f"{secs:.0f} s"}


# ---------------------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ours:
    method: str
    options: tuple = ()

    @property
    def name(self) -> str:
        return self.method

    @property
    def config(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.options) or "default"

    @property
    def key(self) -> str:
        return f"{self.method}[{self.config}]"


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


def time_ours(A, b, radius, mu, v: Ours, budget: int) -> tuple[float, float, np.ndarray]:
    """One complete solve, setup included: (wall s, setup s, x)."""
    from pdsparse.solvers import make_kernel

    gc.collect()
    t0 = time.perf_counter()
    prob = make_problem(A, b, radius, mu)
    kernel = make_kernel(prob, v.method, seed=SEED, options=dict(v.options))
    t_setup = time.perf_counter()
    if budget > 0:
        kernel.run(budget)
    x = kernel.solution().copy()
    t1 = time.perf_counter()
    del kernel, prob
    return t1 - t0, t_setup - t0, x


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


def time_peer(A, b, radius, mu, p: Peer, cap: int) -> tuple[float, np.ndarray, int]:
    """One complete copt fit: (wall s, x, copt's ``nit``)."""
    gc.collect()
    t0 = time.perf_counter()
    res = run_peer(A, b, radius, mu, p, cap)
    x = np.asarray(res.x).copy()
    t1 = time.perf_counter()
    return t1 - t0, x, int(res.nit)


# ---------------------------------------------------------------------------------------------
# One (data set, radius): traces and timed runs
# ---------------------------------------------------------------------------------------------


@dataclass
class Ctx:
    dataset: str
    radius_kind: str
    radius: float
    mu: float
    A: object
    b: np.ndarray
    prob: object  # evaluation only (outside every timer)
    ref: dict
    opts: dict
    rows: list = field(default_factory=list)
    traces: list = field(default_factory=list)

    def rel(self, x: np.ndarray) -> tuple[float, float]:
        from pdsparse import objective

        p = objective.primal(self.prob, x)
        return p, (p - self.ref["p_star"]) / self.ref["p_star"]

    def row(self, target, solver, config, ours, seconds, **extra) -> None:
        r = self.ref
        self.rows.append({"dataset": self.dataset, "radius_kind": self.radius_kind,
                          "radius": self.radius, "target": target, "solver": solver,
                          "config": config, "ours": ours, "seconds": seconds, **extra,
                          "mu": self.mu, "p_star": r["p_star"], "ref_rel_gap": r["rel_gap"],
                          "xstar_norm1": r["solution_norm"], "xstar_nnz": r["solution_nnz"],
                          "ball_active": r["active"]})


def trace_ours(ctx: Ctx, v: Ours) -> tuple[pd.DataFrame, float, str]:
    """Run the kernel to the smallest target or the cap, evaluating P between chunks."""
    from pdsparse.solvers import make_kernel

    cap = ctx.opts["cap"]
    t0 = time.perf_counter()
    prob = make_problem(ctx.A, ctx.b, ctx.radius, ctx.mu)
    kernel = make_kernel(prob, v.method, seed=SEED, options=dict(v.options))
    setup = time.perf_counter() - t0
    nnz = prob.nnz
    touched = iters = 0
    ktime = 0.0
    te = time.perf_counter()
    x = kernel.solution()
    p, rel_ = ctx.rel(x)
    eval_s = time.perf_counter() - te
    rows = [(0, 0, 0.0, p, rel_, int(np.count_nonzero(x)))]
    stop = ""
    target = min(ctx.opts["targets"])
    while True:
        if not np.isfinite(p):
            stop = "diverged or infeasible"
            break
        if rel_ <= target:
            stop = "target"
            break
        if setup + ktime >= cap:
            stop = f"cap {cap:g} s (setup {setup:.2f} s + kernel {ktime:.1f} s)"
            break
        chunk = max(EVAL_MIN_EPOCHS * nnz, EVAL_REL_STEP * touched)
        if ktime > 0 and touched > 0:
            speed = touched / ktime
            chunk = max(chunk, EVAL_TIME_FRAC * eval_s * speed)
            chunk = min(chunk, max(1.0, 1.05 * (cap - setup - ktime) * speed))
        budget = max(1, int(math.ceil(chunk)))
        t = time.perf_counter()
        k_it, k_t = kernel.run(budget)
        ktime += time.perf_counter() - t
        iters += k_it
        touched += k_t
        te = time.perf_counter()
        x = kernel.solution()
        p, rel_ = ctx.rel(x)
        eval_s = time.perf_counter() - te
        rows.append((touched, iters, ktime, p, rel_, int(np.count_nonzero(x))))
    tr = pd.DataFrame(rows, columns=["touched", "iterations", "kernel_s", "primal",
                                     "rel_subopt", "nnz_x"])
    del kernel, prob
    return tr, setup, stop


def bench_ours(ctx: Ctx, v: Ours) -> None:
    tr, setup, stop = trace_ours(ctx, v)
    last = tr.iloc[-1]
    log(f"  {v.key}: trace {int(last.iterations)} iterations, kernel {last.kernel_s:.3g} s, "
        f"setup {setup:.3g} s, rel {last.rel_subopt:.2e} ({stop})")
    ctx.traces.append({"dataset": ctx.dataset, "radius_kind": ctx.radius_kind,
                       "radius": ctx.radius, "solver": v.name, "config": v.config,
                       "setup_s": setup, "stop": stop, "trace": tr.to_dict(orient="list")})
    timed: dict[int, tuple] = {}
    for target in ctx.opts["targets"]:
        hit = tr.index[tr.rel_subopt <= target]
        if len(hit) == 0:
            ctx.row(target, v.name, v.config, True, np.nan, repeats=0, reached=False,
                    lower_bound_s=float(setup + last.kernel_s), seconds_samples="",
                    setup_s=setup, budget=np.nan, epochs=np.nan,
                    iterations=int(last.iterations), trace_s=float(last.kernel_s),
                    p_reached=float(last.primal), rel_subopt=float(last.rel_subopt),
                    nnz_x=int(last.nnz_x), how=f"trace stopped before the target: {stop}",
                    note="")
            continue
        r = tr.loc[hit[0]]
        T = int(r.touched)
        if T not in timed:
            secs, setups = [], []
            s, su, x = time_ours(ctx.A, ctx.b, ctx.radius, ctx.mu, v, T)
            secs.append(s)
            setups.append(su)
            for _ in range(repeats_for(s) - 1):
                s, su, _x = time_ours(ctx.A, ctx.b, ctx.radius, ctx.mu, v, T)
                secs.append(s)
                setups.append(su)
            p_re, rel_re = ctx.rel(x)
            timed[T] = (secs, setups, p_re, rel_re)
        secs, setups, p_re, rel_re = timed[T]
        note = "" if abs(p_re - r.primal) <= 1e-12 * abs(r.primal) else (
            f"re-run P {p_re!r} != trace P {r.primal!r}")
        ctx.row(target, v.name, v.config, True, statistics.median(secs), repeats=len(secs),
                reached=bool(rel_re <= target), lower_bound_s=np.nan,
                seconds_samples=" ".join(f"{s:.6g}" for s in secs),
                setup_s=statistics.median(setups), budget=float(T),
                epochs=T / ctx.prob.nnz, iterations=int(r.iterations),
                trace_s=float(r.kernel_s), p_reached=p_re, rel_subopt=rel_re,
                nnz_x=int(r.nnz_x),
                how=("trace -> smallest evaluated work T at the target; median of "
                     f"{len(secs)} complete timed re-runs Problem->make_kernel->run(T)->x"),
                note=note)


def trace_peer(ctx: Ctx, p: Peer) -> tuple[pd.DataFrame, str]:
    """One copt run evaluating P in its callback (excluded from the clock), to the cap.

    Each row's ``cap`` is the ``max_iter`` whose complete fit returns the evaluated iterate:
    k - 1 at the k-th call (from 0) of the proximal-gradient loop, whose callback opens each
    iteration; ``it`` in Frank-Wolfe's loop, whose callback comes before the update of
    iteration ``it``. The final call after Frank-Wolfe's loop repeats an iterate: ignored.
    """
    cap = ctx.opts["cap"]
    rows = []
    state = {"k": 0, "next": 0, "eval_s": 0.0, "stop": "", "done": False}
    target = min(ctx.opts["targets"])
    t0 = time.perf_counter()

    def callback(loc):
        te = time.perf_counter()
        if state["done"]:
            return False
        k = state["k"]
        state["k"] += 1
        it = k - 1 if p.proximal else int(loc["it"])
        net = te - t0 - state["eval_s"]
        go = True
        if k >= state["next"] or net >= cap:
            pk, rk = ctx.rel(loc["x"])
            rows.append((it, net, pk, rk, int(np.count_nonzero(loc["x"]))))
            state["next"] = max(k + 1, int(math.ceil(k * (1 + EVAL_REL_STEP))))
            if rk <= target:
                state["stop"] = "target"
                go = False
            elif not np.isfinite(pk):
                state["stop"] = "diverged or infeasible"
                go = False
        if go and net >= cap:
            state["stop"] = f"cap {cap:g} s ({k} iterations)"
            go = False
        state["done"] = not go
        state["eval_s"] += time.perf_counter() - te
        return None if go else False

    res = run_peer(ctx.A, ctx.b, ctx.radius, ctx.mu, p, 10**9, callback)
    if not state["stop"]:
        state["stop"] = f"copt stopped by itself after {int(res.nit)} iterations"
        x = np.asarray(res.x)
        pk, rk = ctx.rel(x)
        rows.append((int(res.nit) if not p.proximal else state["k"] - 1,
                     time.perf_counter() - t0 - state["eval_s"], pk, rk,
                     int(np.count_nonzero(x))))
    tr = pd.DataFrame(rows, columns=["cap", "net_s", "primal", "rel_subopt", "nnz_x"])
    tr = tr[tr.cap >= 0].drop_duplicates("cap", keep="first").reset_index(drop=True)
    return tr, state["stop"]


def bench_peer(ctx: Ctx, p: Peer) -> None:
    tr, stop = trace_peer(ctx, p)
    last = tr.iloc[-1]
    log(f"  {p.key}: trace to max_iter {int(last.cap)}, {last.net_s:.3g} s, rel "
        f"{last.rel_subopt:.2e} ({stop})")
    ctx.traces.append({"dataset": ctx.dataset, "radius_kind": ctx.radius_kind,
                       "radius": ctx.radius, "solver": p.name, "config": p.config,
                       "setup_s": 0.0, "stop": stop, "trace": tr.to_dict(orient="list")})
    timed: dict[int, tuple] = {}
    for target in ctx.opts["targets"]:
        hit = tr.index[tr.rel_subopt <= target]
        if len(hit) == 0:
            ctx.row(target, p.name, p.config, False, np.nan, repeats=0, reached=False,
                    lower_bound_s=float(last.net_s), seconds_samples="", setup_s=np.nan,
                    budget=np.nan, epochs=np.nan, iterations=p.updates(int(last.cap)),
                    trace_s=float(last.net_s), p_reached=float(last.primal),
                    rel_subopt=float(last.rel_subopt), nnz_x=int(last.nnz_x),
                    how=f"callback trace stopped before the target: {stop}", note="")
            continue
        r = tr.loc[hit[0]]
        cap_k = int(r.cap)
        if cap_k not in timed:
            s, x, _nit = time_peer(ctx.A, ctx.b, ctx.radius, ctx.mu, p, cap_k)
            secs = [s]
            for _ in range(repeats_for(s) - 1):
                secs.append(time_peer(ctx.A, ctx.b, ctx.radius, ctx.mu, p, cap_k)[0])
            p_re, rel_re = ctx.rel(x)
            timed[cap_k] = (secs, p_re, rel_re)
        secs, p_re, rel_re = timed[cap_k]
        note = "" if abs(p_re - r.primal) <= 1e-12 * abs(r.primal) else (
            f"re-run P {p_re!r} != callback P {r.primal!r}")
        ctx.row(target, p.name, p.config, False, statistics.median(secs), repeats=len(secs),
                reached=bool(rel_re <= target), lower_bound_s=np.nan,
                seconds_samples=" ".join(f"{s:.6g}" for s in secs), setup_s=np.nan,
                budget=float(cap_k), epochs=np.nan, iterations=p.updates(cap_k),
                trace_s=float(r.net_s),
                p_reached=p_re, rel_subopt=rel_re, nnz_x=int(r.nnz_x),
                how=(f"callback trace -> smallest max_iter at the target; median of "
                     f"{len(secs)} complete fits (tol={PEER_TOL:g}, max_iter={cap_k})"),
                note=note)


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


def warm_up(ours: list[Ours], peers: list[Peer]) -> None:
    """First calls (imports, first touch of code) outside every timer."""
    from pdsparse.data.synthetic import zipf_bow

    A, b = zipf_bow(60, 40, 5, 1.0, 1)
    for v in ours:
        time_ours(A, b, 1.0, 0.1, v, 5 * A.nnz)
    for p in peers:
        time_peer(A, b, 1.0, 0.1, p, 3)
        time_peer(A.toarray(), b, 1.0, 0.1, p, 3)


def load_refs(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def save_ref(path: Path, key: str, value: dict) -> None:
    from pdsparse.io import atomic_path

    refs = load_refs(path)
    refs[key] = value
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(refs, indent=1, sort_keys=True))


def reference(prob, key: str, opts: dict, dataset: str) -> dict:
    """P* (cached by key): value, certificate, and ||x*||_1, nnz(x*), ball active."""
    from pdsparse.reference import reference_record, reference_solution

    ref_file = Path(opts["data_dir"]) / "pdbfw_peers_refs.json"
    if not opts["fresh_refs"]:
        got = load_refs(ref_file).get(key)
        if got is not None:
            return {**got, "cached": True}
    t = time.perf_counter()
    ref = reference_solution(prob, rtol=REF_RTOL, max_seconds=opts["ref_max_s"])
    secs = time.perf_counter() - t
    out = {"p_star": float(ref.p_star), "rel_gap": float(ref.rel_gap), "method": ref.method,
           "seconds": secs, "solution_norm": float(np.abs(ref.w).sum()),
           "solution_nnz": int(np.count_nonzero(ref.w)), "active": False}
    if prob.penalty.bounded:
        rec = reference_record(prob, ref, dataset, key)
        out.update(solution_norm=float(rec["solution_norm"]),
                   solution_nnz=int(rec["solution_nnz"]), active=bool(rec["active"]))
    save_ref(ref_file, key, out)
    return {**out, "cached": False}


def worker(dd: DataDef, opts: dict, prep: dict) -> dict:
    from pdsparse.data.store import load_dataset
    from pdsparse.problem import Problem

    t_start = time.perf_counter()
    other = OtherLoad()
    quiet0 = not snakemake_running()
    load0 = loadavg()
    mem = {"start_maxrss_mib": maxrss_mib()}
    t = time.perf_counter()
    ds = load_dataset(prep["path"])
    A, b = ds.A, np.asarray(ds.b, dtype=np.float64)
    del ds
    load_s = time.perf_counter() - t
    dense = isinstance(A, np.ndarray)
    if not dense:
        A = sp.csr_matrix(A, dtype=np.float64)
        A.sort_indices()
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
    warm_up(ours, peers)
    gc.collect()
    gc.freeze()
    tag = Path(prep["path"]).name
    l2_ref = reference(Problem(A, b, loss=LOSS, l2=mu), f"{tag}|l2|mu={mu!r}|rtol={REF_RTOL:g}",
                       opts, dd.name)
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
    rows, traces, refs = [], [], []
    for kind, radius in radii:
        prob = make_problem(A, b, radius, mu)
        key = f"{tag}|r={radius!r}|mu={mu!r}|rtol={REF_RTOL:g}"
        ref = reference(prob, key, opts, dd.name)
        if not ref["rel_gap"] <= 1e-9:
            raise RuntimeError(f"{dd.name} r={radius:g}: reference rel gap {ref['rel_gap']:.2e}")
        refs.append({"radius_kind": kind, "radius": radius, **ref})
        log(f"{dd.name} r={radius:.6g} ({kind}): P* = {ref['p_star']:.12g} (rel gap "
            f"{ref['rel_gap']:.1e}, {ref['method']}, {ref['seconds']:.1f} s"
            f"{', cached' if ref['cached'] else ''}); ||x*||_1 = {ref['solution_norm']:.6g}, "
            f"nnz(x*) = {ref['solution_nnz']:,}, ball {'active' if ref['active'] else 'inactive'}")
        ctx = Ctx(dd.name, kind, radius, mu, A, b, prob, ref, opts)
        for v in ours:
            bench_ours(ctx, v)
        mem[f"after_ours_{kind}_maxrss_mib"] = maxrss_mib()
        for p in peers:
            bench_peer(ctx, p)
        mem[f"after_peers_{kind}_maxrss_mib"] = maxrss_mib()
        rows += ctx.rows
        traces += ctx.traces
        del ctx, prob
        gc.collect()
    mem["peak_rss_mib"] = maxrss_mib()
    other_cores = other.stop()
    for r in rows:
        r.update(n=n, d=d, stored=stored, dense=dense, peak_rss_mib=mem["peak_rss_mib"],
                 load_s=load_s, l2_xstar_norm1=l2_ref["solution_norm"],
                 l2_xstar_nnz=l2_ref["solution_nnz"])
    snake = not (quiet0 and not snakemake_running())
    return {"dataset": dd.name, "rows": rows, "traces": traces, "refs": refs,
            "l2_ref": l2_ref, "memory": mem, "n": n, "d": d, "stored": stored,
            "dense": dense, "load_s": load_s, "prep": prep, "recipe": dd.recipe,
            "paper": dd.paper, "radius_source": dd.radius_source or (
                f"pdbfw.radius of config/config.yaml, r = {opts['radius']:g} (Sec. 5's 300 "
                "with the averaged loss)"),
            "missing": missing, "fcheck": fcheck, "seconds": time.perf_counter() - t_start,
            "other_cores": other_cores, "snakemake": snake,
            "quiet": bool(not snake and other_cores < OTHER_MAX),
            "loadavg": [load0, loadavg()]}


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


ROW_KEYS = ["dataset", "radius_kind", "target"]


def add_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """ratio: seconds over the fastest copt method of the row (< 1: faster than copt)."""
    ratio, lower = [], []
    for _, g in df.groupby(ROW_KEYS, sort=False):
        best = g.seconds[~g.ours].min()
        ratio.append(g.seconds / best)
        lower.append(g.lower_bound_s / best)
    df["ratio"] = pd.concat(ratio)
    df["ratio_lower_bound"] = pd.concat(lower)
    return df


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


def fmt_ratio(r: float) -> str:
    if not np.isfinite(r):
        return ""
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


def cell(r) -> str:
    if r.reached and np.isfinite(r.seconds):
        ratio = fmt_ratio(r.ratio)
        return f"{r.seconds:.3g} ({ratio})" if ratio else f"{r.seconds:.3g}"
    if np.isfinite(r.lower_bound_s):
        return f"> {r.lower_bound_s:.3g} ({r.rel_subopt:.0e})"
    return "—"


def markdown(df: pd.DataFrame, meta: dict) -> str:
    cap = meta["settings"]["cap"]
    m = meta["machine"]
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
             f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['mem_gib']:.0f} GiB; single-threaded "
             f"BLAS; {QUIET if meta['quiet'] else NOT_QUIET}; load average before/after "
             f"{meta['loadavg_before']} / {meta['loadavg_after']}.", ""]
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
                fastest = g.seconds[g.reached].min() if g.reached.any() else np.nan
                cells = []
                for k in present:
                    r = g[g.key == k]
                    if r.empty:
                        cells.append("")
                        continue
                    r = r.iloc[0]
                    c = cell(r)
                    cells.append(f"**{c}**" if r.reached and r.seconds == fastest else c)
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
        mem = w["memory"]
        lines += [f"Data load {w['load_s']:.1f} s ({w['prep']['note']}); peak RSS of the worker "
                  f"{mem['peak_rss_mib']:,.0f} MiB (after loading {mem['after_load_rss_mib']:,.0f}"
                  f" MiB); worker {w['seconds']:.0f} s; copt's f vs objective.primal: "
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


def write_outputs(results: list[dict], out_dir: Path, meta: dict) -> pd.DataFrame:
    from pdsparse.io import atomic_path

    rows = [r for w in results if "rows" in w for r in w["rows"]]
    df = pd.DataFrame(rows)
    if df.empty:
        raise SystemExit("no results (every data set was skipped)")
    df = add_ratios(df)
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS]]
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_dir / "pdbfw_peers.csv") as tmp:
        df.to_csv(tmp, index=False, na_rep="")
    md = markdown(df, meta)
    with atomic_path(out_dir / "pdbfw_peers.md") as tmp:
        tmp.write_text(md)
    meta = {k: v for k, v in meta.items() if k != "ours_objs"}
    meta["traces"] = [t for w in results for t in w.get("traces", [])]
    with atomic_path(out_dir / "pdbfw_peers.json") as tmp:
        tmp.write_text(json.dumps(meta, indent=1, default=float))
    print(md)
    return df


def render(out_dir: Path) -> int:
    """Rewrite ``pdbfw_peers.md`` from the csv and json of an earlier run."""
    from pdsparse.io import atomic_path

    df = pd.read_csv(out_dir / "pdbfw_peers.csv", keep_default_na=True)
    for c in ("config", "note", "how"):
        df[c] = df[c].astype(object).fillna("")
    meta = json.loads((out_dir / "pdbfw_peers.json").read_text())
    meta["ours_objs"] = [Ours(k.split("[")[0]) for k in meta["ours"]]
    md = markdown(df.drop(columns=["ratio", "ratio_lower_bound"]).pipe(add_ratios), meta)
    with atomic_path(out_dir / "pdbfw_peers.md") as tmp:
        tmp.write_text(md)
    print(md)
    return 0


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=None,
                    help=f"comma list out of {','.join(ALL_DATASETS)} (default: all; --quick: "
                         "duke)")
    ap.add_argument("--quick", action="store_true", help="duke only, 10 s caps")
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
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    ap.add_argument("--fresh-refs", action="store_true",
                    help="recompute P* even when cached in <data-dir>/pdbfw_peers_refs.json")
    ap.add_argument("--ref-max-s", type=float, default=1800.0)
    ap.add_argument("--render", action="store_true",
                    help="only rewrite pdbfw_peers.md from the csv and json in --out-dir")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--prep", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--prep-file", default=None, help=argparse.SUPPRESS)
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
    if args.worker:
        dd = defs[args.worker]
        if args.prep:
            res = prep_data(dd, opts)
        else:
            with open(args.prep_file, "rb") as fh:
                res = worker(dd, opts, pickle.load(fh))
        with open(args.worker_out, "wb") as fh:
            pickle.dump(res, fh)
        return 0

    if args.datasets:
        datasets = [x.strip() for x in args.datasets.split(",") if x.strip()]
    else:
        datasets = ["duke"] if args.quick else list(ALL_DATASETS)
    bad = [x for x in datasets if x not in defs]
    if bad:
        ap.error(f"--datasets: unknown {bad}; choose from {list(ALL_DATASETS)}")

    t0 = time.perf_counter()
    load0 = loadavg()
    quiet0 = not snakemake_running()
    passthrough = ["--cap", str(opts["cap"]), "--targets", args.targets,
                   "--data-dir", args.data_dir, "--ref-max-s", str(args.ref_max_s)]
    for flag, val in (("--radii", args.radii), ("--ours", args.ours),
                      ("--solvers", args.solvers), ("--mirror", args.mirror)):
        if val is not None:
            passthrough += [flag, str(val)]
    if args.fresh_refs:
        passthrough.append("--fresh-refs")
    results = []
    with tempfile.TemporaryDirectory(prefix="pdsparse-pdbfw-peers-") as td:
        for i, ds in enumerate(datasets):
            log(f"[{i + 1}/{len(datasets)}] {ds} (elapsed {time.perf_counter() - t0:.0f} s)")
            prep_out, out = Path(td) / f"{i}.prep.pkl", Path(td) / f"{i}.pkl"
            res = None
            for step, extra, path in (("prep", ["--prep"], prep_out),
                                      ("run", ["--prep-file", str(prep_out)], out)):
                cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", ds,
                       "--worker-out", str(path), *passthrough, *extra]
                proc = subprocess.run(cmd, env=single_thread_env())
                if proc.returncode != 0 or not path.is_file():
                    res = {"dataset": ds, "skipped": f"{step} failed (exit {proc.returncode})"}
                    log(f"{ds}: {res['skipped']}")
                    break
                with open(path, "rb") as fh:
                    res = pickle.load(fh)
                if "skipped" in res:
                    res = {"dataset": ds, **res}
                    log(f"{ds}: skipped: {res['skipped']}")
                    break
            res["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
            results.append(res)
    quiet = quiet0 and not snakemake_running() and all(r.get("quiet", True) for r in results)
    meta = {"total_seconds": time.perf_counter() - t0, "machine": machine(),
            "versions": versions("copt"), "quiet": quiet, "loadavg_before": load0,
            "loadavg_after": loadavg(),
            "settings": {k: (sorted(v) if isinstance(v, set) else v) for k, v in opts.items()
                         if k != "ours"},
            "ours": [v.key for v in ours], "ours_objs": ours, "peers": [p.key for p in PEERS],
            "datasets": [{k: v for k, v in r.items() if k not in ("rows", "traces")}
                         for r in results]}
    write_outputs(results, Path(args.out_dir), meta)
    log(f"total runtime {meta['total_seconds']:.0f} s; quiet: {quiet}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
