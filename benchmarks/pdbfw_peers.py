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
of the l2-only problem (r = inf), where the constraint is clearly active. The report gives
r, ||x*||_1, nnz(x*) and whether the ball is active at x*.

Solvers
-------
* ours (``bench.solver.OursKernel``; the ball and mu are the problem's penalty, so its
  ``build`` rebuilds the problem from the rows): the entries of ``pdbfw.solvers`` in
  ``config/config.yaml`` with their options and a data set's overrides
  (``datasets.<name>.options``, e.g. PDBFW's dual step multiplier; ``--ours`` replaces the
  list; without a config ``pdbfw``, ``acc_pg``, ``fw``, ``svrg``, ``scgs``, ``storc`` with
  default options); a name missing from the registry is skipped with a note;
* copt 0.9 (:class:`Copt`) on f(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2 in NumPy
  (``_harness.smooth_hinge_fgrad``, checked against ``pdsparse.objective.primal``), the ball
  through ``copt.constraint.L1Ball(r)``, ``tol=1e-15``: ``copt_apg`` / ``copt_pg``:
  ``minimize_proximal_gradient(..., prox=L1Ball(r).prox, step="backtracking",
  accelerated=True / False)``; ``copt_fw``: ``minimize_frank_wolfe(..., L1Ball(r).lmo,
  step="backtracking")`` (copt's default adaptive step); ``copt_pfw``: the same with
  ``variant="pairwise"``, ``lmo_pairwise``, started at the Frank-Wolfe vertex of grad f(0)
  (pairwise FW keeps x a convex combination of vertices; the gradient at 0 is inside the
  timed fit). Counterparts: our ``acc_pg`` vs ``copt_apg`` and ``copt_pg``, our ``fw`` vs
  ``copt_fw`` and ``copt_pfw``. copt's randomized solvers are not peers: they need numba
  (not installed) and take a coordinate-separable prox, not a ball projection.

What is timed: the runner's protocol (``benchmarks/bench``): CPU seconds of one complete
solve from the in-memory A (CSR, or the dense array) and b, setup included (data load
excluded, reported), at the budget where the solver's one traced run (to ``--cap`` s) first
met the target: ours the work T of ``_harness.trace_kernel`` (chunked calls reproduce one
call), copt the ``max_iter`` of ``_harness.callback_trace`` (P evaluated in copt's callback,
off the clock; proximal gradient: the k-th call sees the iterate ``max_iter = k - 1``
returns; Frank-Wolfe: the call of iteration ``it`` the one ``max_iter = it`` returns); then
``--repeats`` interleaved rounds, each re-run judged again. Each data set runs in its own
single-threaded subprocess, the data prepared in a preceding one (peak RSS: the solvers').

Data (prepared once into ``results/benchmarks/data/``, reused): PDBFW's Table 2 sets that
the offline mirror has (:data:`DATASETS`; a set of the same name in the config takes its
recipe): ``duke`` (44 x 7,129, dense), ``ijcnn1-rb`` (ijcnn1's 35,000-row training split,
300 random-binning grids; the paper's ijcnn.RB has 49,990 rows), ``mnist09-rb`` (MNIST
digits 0 and 9, 11,872 rows, 100 grids).

Outputs (atomic) in ``--out-dir``: ``pdbfw_peers.parquet`` (the runner's long format, with
the ``iterations`` at each budget and our median ``setup_s``), ``pdbfw_peers.json`` (machine,
quietness, versions, settings, per data set its references, memory and options) and
``pdbfw_peers.md`` (``bench.report``'s pdbfw against the best copt method, then per data set
and radius every solver and the checks "our fastest against every copt method" and "each of
ours against its copt counterparts", with the reason wherever not ahead); ``--render``
rewrites the markdown from the other two.

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
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    PEER_TOL,
    REPO,
    add_data_args,
    add_worker_args,
    bench_parser,
    cached_ref,
    callback_trace,
    fmt_ratio,
    load_prepared,
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
    trace_kernel,
)
from bench.report import AHEAD, BEHIND, INCONCLUSIVE, times, verdict, write  # noqa: E402
from bench.report import markdown as report_markdown  # noqa: E402
from bench.runner import Cell, benchmark  # noqa: E402
from bench.solver import OursKernel, Solver  # noqa: E402

LOSS = "smooth_hinge"
MU_TIMES_N = 10.0  # mu = 10/n (Sec. 5)
PAPER_RADIUS = 300.0  # Sec. 5: "We set the l1 constraint to be 300"
ACTIVE_FRACTION = 0.5  # the active radius: this fraction of ||x*||_1 of the l2-only problem
TARGETS = (1e-2, 1e-4, 1e-6)
REF_RTOL = 1e-10
SEED = 0
KEYS = ["dataset", "radius_kind", "radius"]
STEM = "pdbfw_peers"

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


def prep_data(dd: DataDef, opts: dict) -> dict:
    """The cached ``.npz`` of a data set (prepared here when missing)."""
    return prepare_cached(dd.registry, dd.recipe, opts)


# ---------------------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------------------


OURS = tuple((m, ()) for m in ("pdbfw", "acc_pg", "fw", "svrg", "scgs", "storc"))
"""Fallback when the config has no ``pdbfw.solvers``: the six methods, default options."""


def config_pdbfw() -> dict:
    """The ``pdbfw`` section of ``config/config.yaml`` (empty when absent)."""
    import yaml

    try:
        with open(REPO / "config" / "config.yaml") as fh:
            return dict((yaml.safe_load(fh) or {}).get("pdbfw") or {})
    except OSError:
        return {}


def config_ours(cfg: dict) -> tuple:
    """The solvers of the PDBFW config with their options (``{method: pdbfw, delta: x100}``
    -> ``("pdbfw", (("delta", "x100"),))``), else :data:`OURS`."""
    entries = cfg.get("solvers") or []
    out = tuple((str(e["method"]), tuple((str(k), str(v)) for k, v in e.items()
                                         if k != "method")) for e in entries)
    return out or OURS


def parse_ours(text: str | None, default: tuple) -> tuple:
    """``pdbfw,fw:step=open_loop,svrg:step=x2;inner=n`` -> (method, options) entries (else
    ``default``)."""
    if not text:
        return default
    out = []
    for item in text.split(","):
        item = item.strip()
        if item:
            method, _, opts = item.partition(":")
            out.append((method, tuple(tuple(kv.split("=", 1)) for kv in opts.split(";") if kv)))
    return tuple(out)


class Ours(OursKernel):
    """:class:`bench.solver.OursKernel` that keeps, for the report's explanations, the
    kernel's iterations at each work its trace evaluated (``work``: {budget: iterations}) and
    the CPU seconds of the setup of each run (``setups``: ``Problem`` and ``make_kernel``,
    as :meth:`OursKernel.details` reads them); a non-finite P (diverged or
    outside the ball) stops the trace."""

    def __init__(self, method: str, name: str, options: dict):
        super().__init__(method, name=name, seed=SEED, **options)
        self.work, self.setups = {}, []

    def run(self, budget) -> None:
        super().run(budget)
        self.setups.append(self.details()["setup_s"])

    def trace(self, subopt, target, cap):
        def evaluate(x):
            s = subopt(x)
            return s, s

        tr, setup, stop = trace_kernel(self.build, evaluate, target, cap=cap,
                                       diverged="diverged or infeasible")
        self.work = {float(t): int(i) for t, i in zip(tr.touched, tr.iterations, strict=True)}
        return list(zip(tr.touched.astype(float), tr.rel_subopt, setup + tr.kernel_s,
                        strict=True)), stop


def ours_solvers(entries, dd: DataDef) -> list[Ours]:
    """Our solvers with the data set's option overrides (``options: {pdbfw: {delta: x1000}}``
    replaces pdbfw's delta on that set, as the workflow does); named by the method, or by
    the entry (``fw:step=open_loop``) when a method comes twice."""
    from pdsparse.solvers import SOLVERS

    over = dict(dd.options)
    methods = [m for m, _ in entries]
    out = []
    for method, options in entries:
        if method not in SOLVERS:
            continue
        name = method if methods.count(method) == 1 else ":".join(
            [method, *(f"{k}={v}" for k, v in options)])
        out.append(Ours(method, name, {**dict(options), **dict(over.get(method, ()))}))
    return out


COPT = {"copt_apg": "accelerated=True,step=backtracking",
        "copt_pg": "accelerated=False,step=backtracking",
        "copt_fw": "variant=vanilla,step=backtracking",
        "copt_pfw": "variant=pairwise,step=backtracking"}
"""The copt methods and their settings."""
COUNTERPARTS = {"acc_pg": ("copt_apg", "copt_pg"), "fw": ("copt_fw", "copt_pfw")}
"""Our method -> the copt methods that run the same algorithm (first: the closest)."""


def run_peer(A, b, radius, mu, name: str, max_iter: int, callback=None):
    """One copt fit; copt's FW prints its initial Lipschitz estimate: kept off stdout."""
    import copt
    from copt.constraint import L1Ball as CoptL1Ball

    f_grad = smooth_hinge_fgrad(A, b, mu)
    ball = CoptL1Ball(radius)
    x0 = np.zeros(A.shape[1])
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if name in ("copt_apg", "copt_pg"):
            return copt.minimize_proximal_gradient(
                f_grad, x0, prox=ball.prox, jac=True, accelerated=name == "copt_apg",
                step="backtracking", tol=PEER_TOL, max_iter=int(max_iter), callback=callback)
        if name == "copt_fw":
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


class Copt(Solver):
    """A copt method on the problem's rows and ball: ``run(max_iter)`` one uninstrumented fit
    (closure, ball, copt, x), its budget the ``max_iter`` of the first point of
    ``_harness.callback_trace`` at the target; ``work``: {max_iter: iterations applied}
    (copt's setup is inside its first iteration: no ``setups``)."""

    sampling = "trace"

    def __init__(self, name: str):
        self.name, self.config, self.work, self.setups = name, COPT[name], {}, []

    @property
    def proximal(self) -> bool:
        return self.name in ("copt_apg", "copt_pg")

    def updates(self, max_iter: int) -> int:
        """Iterations (gradient steps applied) of a complete fit with this ``max_iter``:
        copt's proximal-gradient loop applies max_iter + 1, its Frank-Wolfe loop max_iter."""
        return max_iter + 1 if self.proximal else max_iter

    def fit(self, max_iter, callback=None):
        p = self.problem
        return run_peer(p.mat, p.b, p.penalty.radius, p.penalty.l2, self.name, max_iter,
                        callback)

    def run(self, budget) -> None:
        self.result = np.asarray(self.fit(int(budget)).x).copy()

    def trace(self, subopt, target, cap):
        def evaluate(x):
            s = subopt(x)
            return s, s

        fw = {} if self.proximal else {"index": lambda k, loc: int(loc["it"]),
                                       "end_index": lambda k, res: int(res.nit)}
        tr, stop = callback_trace(lambda cb: self.fit(10**9, cb), evaluate, target, cap,
                                  diverged="diverged or infeasible", **fw)
        if not self.proximal:  # copt's FW cannot return at max_iter = 0 (its loop variable)
            tr = tr[tr.cap >= 1]
        self.work = {float(c): self.updates(int(c)) for c in tr.cap}
        return list(zip(tr.cap.astype(float), tr.rel_subopt, tr.net_s, strict=True)), stop


# ---------------------------------------------------------------------------------------------
# Worker: one data set, both radii, all solvers
# ---------------------------------------------------------------------------------------------


def make_problem(A, b, radius: float, mu: float):
    from pdsparse.penalties import L1Ball
    from pdsparse.problem import Problem

    return Problem(A, b, loss=LOSS, penalty=L1Ball(radius, mu))


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
    """One data set: its two radii's cells raced by ``bench.runner.benchmark``; the frame
    with the solvers' iterations (and our setup) at each budget, and the set's record."""
    from pdsparse.problem import Problem
    from pdsparse.solvers import SOLVERS

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
    wanted = opts["solvers"]
    ours = [s for s in ours_solvers(opts["ours"], dd) if wanted is None or s.name in wanted]
    missing = [m for m, _ in opts["ours"] if m not in SOLVERS]
    peers = [Copt(p) for p in COPT if wanted is None or p in wanted]
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
    solvers = [*ours, *peers]
    refs, work = [], []

    def cells():
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
            labels = {"dataset": dd.name, "radius_kind": kind, "radius": f"{radius:.4g}"}
            yield Cell(labels, prob, ref["p_star"], ref["rel_gap"])
            # the cell is raced: keep each solver's iterations per budget and median setup
            for s in solvers:
                setup = float(np.median(s.setups)) if s.setups else math.nan
                work.extend({**labels, "solver": s.name, "budget": k, "iterations": it,
                             "setup_s": setup} for k, it in s.work.items())
                s.work, s.setups = {}, []
            mem[f"after_{kind}_maxrss_mib"] = maxrss_mib()

    frame, meta = benchmark(cells(), solvers, list(opts["targets"]), repeats=opts["repeats"],
                            cap=opts["cap"], log=log, modules=("copt",))
    frame = frame.merge(pd.DataFrame(work, columns=[*KEYS, "solver", "budget", "iterations",
                                                    "setup_s"]),
                        how="left", on=[*KEYS, "solver", "budget"], validate="many_to_one")
    mem["peak_rss_mib"] = maxrss_mib()
    return {"dataset": dd.name, "frame": frame, "meta": meta, "refs": refs, "l2_ref": l2_ref,
            "memory": mem, "n": n, "d": d, "stored": stored, "dense": dense,
            "load_s": load_s, "prep": prep, "recipe": dd.recipe, "paper": dd.paper,
            "options": {s.name: s.options for s in ours},
            "radius_source": dd.radius_source or (
                f"pdbfw.radius of config/config.yaml, r = {opts['radius']:g} (Sec. 5's 300 "
                "with the averaged loss)"),
            "missing": missing, "fcheck": fcheck,
            "finished": time.strftime("%Y-%m-%d %H:%M:%S")}


# ---------------------------------------------------------------------------------------------
# Report: bench.report's table, then per data set and radius the checks with their reasons
# ---------------------------------------------------------------------------------------------


def solver_times(frame: pd.DataFrame) -> pd.DataFrame:
    """``bench.report.times`` per (cell, target, solver) with the method, the ``iterations``
    and ``setup_s`` at its budget, and, for one whose trace stopped first, ``lower_s`` (the
    seconds its trace ran) and the iterations where it stopped."""
    key = [*KEYS, "solver"]
    per = times(frame, KEYS).assign(method=lambda d: d.solver.str.split(":").str[0])
    at = frame.dropna(subset=["budget"]).drop_duplicates([*key, "budget"])
    per = per.merge(at[[*key, "budget", "iterations", "setup_s"]], how="left",
                    on=[*key, "budget"])
    last = (frame[frame.status == "search"].sort_values("budget")
            .drop_duplicates(key, keep="last").rename(columns={"cpu_s": "lower_s"}))
    per = per.merge(last[[*key, "lower_s", "iterations", "setup_s"]], how="left", on=key,
                    suffixes=("", "_stop"))
    stopped = per.why.str.startswith("not reached")
    per["iterations"] = per.iterations.where(~stopped, per.pop("iterations_stop"))
    per["setup_s"] = per.setup_s.fillna(per.pop("setup_s_stop"))
    per["lower_s"] = per.lower_s.where(stopped)
    return per


def _faster(a, b) -> str:
    """ahead / behind / inconclusive (bench.report's verdict on the range of a / b) when both
    count; a that counts is ahead of b that does not, unless b's trace stopped at the cap
    before a's time (inconclusive); n/a when neither counts."""
    if a.seconds < math.inf and b.seconds < math.inf:
        return verdict(a.fastest / b.slowest, a.slowest / b.fastest)
    if a.seconds < math.inf:
        return INCONCLUSIVE if "cap" in b.why and b.lower_s < a.slowest else AHEAD
    return BEHIND if b.seconds < math.inf else "n/a"


def _explain(a, b) -> str:
    """Why row a (ours) is not ahead of row b (a peer): times, setup, iterations and the time
    per iteration (ours: after the setup; copt's setup is inside its first iteration)."""
    def what(r):
        if r.seconds < math.inf:
            s, head = r.seconds, f"{r.seconds:.3g} s"
        elif r.lower_s == r.lower_s:  # its trace stopped first
            s, head = r.lower_s, f"> {r.lower_s:.3g} s (subopt {r.subopt:.1e} when its trace " \
                                 "stopped)"
        else:
            return f"{r.solver}: {r.why}"
        it = int(r.iterations) if r.iterations == r.iterations else 0
        setup = r.setup_s if r.setup_s == r.setup_s else 0.0
        per_it = f" of {(s - setup) / it * 1e3:.3g} ms" if it else ""
        extra = f", after a setup of {r.setup_s:.3g} s" if r.setup_s == r.setup_s else ""
        return (f"{r.solver} {head}: {it:,} iteration{'s' * (it != 1)}{per_it}{extra}"
                + (f" ({r.why})" if r.why else ""))

    return f"{what(a)}; {what(b)}"


def verdicts(g: pd.DataFrame) -> dict:
    """The checks of one (data set, radius, target) of :func:`solver_times`: our fastest
    against every copt method, each of ours against its counterparts; each a (verdict,
    explanation)."""
    out = {}
    o, p = g[g.ours], g[~g.ours]
    counted_o, counted_p = o[o.seconds < math.inf], p[p.seconds < math.inf]
    if counted_o.empty:
        if counted_p.empty:
            out["fastest"] = ("n/a", "neither ours nor copt reached the target within the cap")
        else:
            q = counted_p.loc[counted_p.seconds.idxmin()]
            out["fastest"] = (BEHIND, "no method of ours counts; "
                                      f"{q.solver} took {q.seconds:.3g} s")
    else:
        best = counted_o.loc[counted_o.seconds.idxmin()]
        vs = [(_faster(best, q), q) for _, q in p.iterrows()]
        behind = [q for v, q in vs if v == BEHIND]
        open_ = [q for v, q in vs if v == INCONCLUSIVE]
        if behind:
            out["fastest"] = (BEHIND, _explain(best, min(behind, key=lambda q: q.seconds)))
        elif open_:
            out["fastest"] = (INCONCLUSIVE, "; ".join(_explain(best, q) for q in open_))
        else:
            out["fastest"] = (AHEAD, f"{best.solver} {best.seconds:.3g} s")
    for method, peer_names in COUNTERPARTS.items():
        for _, a in o[o.method == method].iterrows():
            for name in peer_names:
                for _, q in p[p.solver == name].iterrows():
                    v = _faster(a, q)
                    out[f"{a.solver} vs {name}"] = (v, "" if v in (AHEAD, "n/a")
                                                    else _explain(a, q))
    return out


def _cell(r, fastest_copt: float, best: float) -> str:
    if r.seconds < math.inf:
        ratio = fmt_ratio(r.seconds / fastest_copt) if fastest_copt < math.inf else ""
        text = f"{r.seconds:.3g} ({ratio})" if ratio else f"{r.seconds:.3g}"
        return f"**{text}**" if r.seconds == best else text
    if r.lower_s == r.lower_s:
        return f"> {r.lower_s:.3g} ({r.subopt:.0e})"
    return r.why.split(":")[0].split(" on ")[0] or "—"


def render(frame: pd.DataFrame, meta: dict) -> str:
    """The markdown: ``bench.report.markdown`` (pdbfw, the first of ours, against the best
    copt method), then per data set its problems and a table per radius with the checks."""
    head, rest = report_markdown(
        frame, meta, keys=KEYS, ours=(meta.get("ours") or [None])[0],
        title="PDBFW peers: CPU seconds to (P - P*)/P* <= target on the l1 ball").split(
        "\n\n", 1)
    lines = [head, "", "P(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2, ||x||_1 <= r, smooth "
             "hinge, mu = 10/n (PDBFW Sec. 5). CPU seconds of a complete solve from the "
             "in-memory matrix (setup included, data load excluded), median of the "
             "interleaved rounds, each at the budget where the solver's trace first met the "
             f"target (cap {meta.get('cap_s', math.nan):g} s per trace).", "", rest,
             "## Per data set: every solver and the checks", "",
             "In each table: median CPU s and, in parentheses, the ratio to the fastest copt "
             "method of the row (< 1: faster than copt); **bold** = fastest of the row; "
             "`> t (s)`: the trace stopped (cap, stall or divergence) after t s at relative "
             "suboptimality s. Checks: `fastest` = our fastest against every copt method; "
             "`<ours> vs <copt>` = against the copt method of the same algorithm (APG / PG; "
             "FW / pairwise FW); ahead / behind / inconclusive from the range of the ratio "
             "over the rounds; `n/a`: neither reached the target.", ""]
    per = solver_times(frame)
    order = list(dict.fromkeys(frame.solver))
    failures = []
    for w in meta.get("datasets", []):
        if "skipped" in w:
            continue
        l2 = w["l2_ref"]
        wm = w.get("watch", {})
        lines += [f"### {w['dataset']} ({w['paper']}; n = {w['n']:,}, d = {w['d']:,}, "
                  f"{'dense' if w['dense'] else 'nnz'} {w['stored']:,})", "",
                  f"Finished {w.get('finished', '')}; machine "
                  f"{'quiet' if wm.get('quiet') else 'NOT quiet'} (other processes kept "
                  f"{wm.get('other_cores', math.nan):.2f} cores busy), load average "
                  f"{wm.get('loadavg', '?')}. l2-only problem (no ball): ||x*||_1 = "
                  f"{l2['solution_norm']:.4g}, nnz(x*) = {l2['solution_nnz']:,}. Config "
                  f"radius: {w['radius_source']}. Our options: " + "; ".join(
                      f"{k} " + (",".join(f"{a}={b}" for a, b in v.items()) or "default")
                      for k, v in w["options"].items()) + ".",
                  ""]
        for ref in w["refs"]:
            gr = per[(per.dataset == w["dataset"]) & (per.radius_kind == ref["radius_kind"])]
            present = [s for s in order if s in set(gr.solver)]
            lines += [f"#### r = {ref['radius']:.4g} ({ref['radius_kind']}): ||x*||_1 = "
                      f"{ref['solution_norm']:.4g}, nnz(x*) = {ref['solution_nnz']:,} of "
                      f"{w['d']:,}, ball {'active' if ref['active'] else 'inactive'} at x*", ""]
            body, checks = [], []
            for target, g in gr.sort_values("target", ascending=False).groupby(
                    "target", sort=False):
                v = verdicts(g)
                checks = checks or list(v)
                copt = g.seconds[~g.ours].min()
                by = g.set_index("solver")
                body.append(f"| {target:g} | " + " | ".join(
                    _cell(by.loc[s], copt, g.seconds.min()) if s in by.index else ""
                    for s in present) + " | " + " | ".join(v.get(c, ("",))[0] for c in checks)
                            + " |")
                failures += [f"* {w['dataset']}, r = {ref['radius']:.4g} "
                             f"({ref['radius_kind']}), {target:g}, {c}: {ok}"
                             + (f": {why}" if why else "") for c, (ok, why) in v.items()
                             if ok not in (AHEAD, "n/a") or c == "fastest" and ok == "n/a"]
            lines += ["| target | " + " | ".join(present + checks) + " |",
                      "|--:|" + "--:|" * len(present) + ":-:|" * len(checks), *body, ""]
        m = w["memory"]
        lines += [f"Data load {w['load_s']:.1f} s ({w['prep']['note']}); peak RSS of the "
                  f"worker {m['peak_rss_mib']:,.0f} MiB (after loading "
                  f"{m['after_load_rss_mib']:,.0f} MiB); worker {wm.get('seconds', 0):.0f} s; "
                  f"copt's f vs objective.primal: {w['fcheck']:.1e}; references: " + "; ".join(
                      f"r = {r['radius']:.4g}: P* = {r['p_star']:.10g}, rel gap "
                      f"{r['rel_gap']:.1e}, {r['method']}, {r['seconds']:.0f} s"
                      f"{' (cached)' if r['cached'] else ''}" for r in w["refs"]) + ".", ""]
    lines += ["## Rows where a check is not ahead", ""]
    lines += failures or ["None: our fastest is ahead of every copt method and each of ours "
                          "ahead of its copt counterparts in every row."]
    notes = [f"* {w['dataset']}: skipped: {w['skipped']}" for w in meta.get("datasets", [])
             if "skipped" in w]
    notes += [f"* {w['dataset']}: not in the registry yet (skipped): {', '.join(w['missing'])}"
              for w in meta.get("datasets", []) if w.get("missing")]
    lines += ["", "## Notes", "", *notes,
              f"* runtime {meta.get('total_seconds', math.nan):.0f} s", ""]
    return "\n".join(lines)


def merge_meta(results: list[dict], settings: dict, t0: float) -> dict:
    """One metadata of the workers': machine and versions of the first, the watches joined
    (quiet only if every one was), per data set its record."""
    metas = [r["meta"] for r in results if "meta" in r]
    watches = [m["watch"] for m in metas]
    watch = {"quiet": all(w["quiet"] for w in watches),
             "other_cores": max(w["other_cores"] for w in watches),
             "snakemake": any(w["snakemake"] for w in watches),
             "loadavg": [watches[0]["loadavg"][0], watches[-1]["loadavg"][1]],
             "seconds": sum(w["seconds"] for w in watches)}
    datasets = [{**{k: v for k, v in r.items() if k not in ("frame", "meta")},
                 **({"watch": r["meta"]["watch"]} if "meta" in r else {})} for r in results]
    return {**{k: metas[0][k] for k in ("machine", "versions", "repeats", "cap_s", "targets")},
            "watch": watch, "settings": settings, "datasets": datasets,
            "ours": list(dict.fromkeys(k for r in results for k in r.get("options", {}))),
            "total_seconds": time.perf_counter() - t0}


def rerender(out_dir: Path) -> int:
    """Rewrite ``pdbfw_peers.md`` from the Parquet and json of an earlier run."""
    from pdsparse.io import atomic_path

    frame = pd.read_parquet(out_dir / f"{STEM}.parquet")
    md = render(frame, json.loads((out_dir / f"{STEM}.json").read_text()))
    with atomic_path(out_dir / f"{STEM}.md") as tmp:
        tmp.write_text(md)
    print(md)
    return 0


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = bench_parser(__doc__, ALL_DATASETS, "duke", "duke only, 10 s caps")
    ap.add_argument("--cap", type=float, default=None,
                    help="time cap of one trace, s (default 60; quick 10)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved timed rounds")
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
                    help="only rewrite pdbfw_peers.md from the parquet and json in --out-dir")
    add_worker_args(ap)
    args = ap.parse_args(argv)
    cfg = config_pdbfw()
    opts = {"cap": args.cap or (10.0 if args.quick else 60.0), "repeats": args.repeats,
            "radii": set(args.radii.split(",")) if args.radii else None,
            "targets": sorted((float(t) for t in args.targets.split(",")), reverse=True),
            "solvers": set(args.solvers.split(",")) if args.solvers else None,
            "ours": parse_ours(args.ours, config_ours(cfg)),
            "radius": float(cfg.get("radius", PAPER_RADIUS)),
            "mirror": args.mirror, "data_dir": args.data_dir,
            "fresh_refs": args.fresh_refs, "ref_max_s": args.ref_max_s}

    defs = datasets_from(cfg)
    if args.render:
        return rerender(Path(args.out_dir))
    require_peer("copt", "pdbfw_peers.py")
    if args.worker:
        dd = defs[args.worker]
        return serve_worker(args, lambda: prep_data(dd, opts), lambda prep: worker(dd, opts, prep))

    datasets = pick_datasets(ap, args, defs, ["duke"], list(ALL_DATASETS))
    passthrough = pass_on((("--cap", opts["cap"]), ("--repeats", args.repeats),
                           ("--targets", args.targets), ("--data-dir", args.data_dir),
                           ("--ref-max-s", args.ref_max_s), ("--radii", args.radii),
                           ("--ours", args.ours), ("--solvers", args.solvers),
                           ("--mirror", args.mirror)), [("--fresh-refs", args.fresh_refs)])
    t0 = time.perf_counter()
    results = run_datasets(Path(__file__), datasets, passthrough, log=log, t0=t0,
                           tmp_prefix="pdsparse-pdbfw-peers-")
    frames = [r["frame"] for r in results if "frame" in r]
    if not frames:
        raise SystemExit("pdbfw_peers: no results (every data set was skipped)")
    settings = {k: (sorted(v) if isinstance(v, set) else v) for k, v in opts.items()}
    meta = merge_meta(results, settings, t0)
    print(write(pd.concat(frames, ignore_index=True), meta, Path(args.out_dir) / STEM, render))
    log(f"total runtime {meta['total_seconds']:.0f} s; quiet: {meta['watch']['quiet']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
