"""Solver front end: the solver registry, kernel set-up, and the run loop that records the trace.

The kernels (``_rcd.pyx``) only advance the state; this module times the kernel calls alone,
evaluates P, D and the gap outside the timer through :mod:`pdsparse.objective`, and decides
when to stop (DESIGN.md, "Solver"). :data:`SOLVERS` is the registry (DESIGN.md, "Solver
registry"): one :class:`SolverSpec` per solver with its options dataclass, kernel factory,
family, label and path tag.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from pdsparse import _rcd, objective
from pdsparse.errors import ConfigError
from pdsparse.names import DUAL_STEPS, METHODS, SAMPLINGS
from pdsparse.problem import Problem
from pdsparse.solver_base import (
    _did_you_mean,
    _Kernel,
    _option,
    _Options,
    sampling_probabilities,
)
from pdsparse.solvers_ball import (
    AccPGOptions,
    FWOptions,
    SCGSOptions,
    STORCOptions,
    SVRGOptions,
    acc_pg_factory,
    fw_factory,
    scgs_factory,
    storc_factory,
    svrg_factory,
)
from pdsparse.solvers_dgpd import (
    DGPDFullOptions,
    DGPDOptions,
    dgpd_factory,
    dgpd_full_factory,
)
from pdsparse.solvers_erm import (
    PrimalRCDKernel,
    ProxSDCAKernel,
    SPDCOptions,
    spdc_factory,
)
from pdsparse.solvers_pdbfw import PDBFWOptions, pdbfw_factory
from pdsparse.solvers_trace import (
    BlockFWOptions,
    SFWOptions,
    block_fw_factory,
    sfw_factory,
)

__all__ = ["SOLVERS", "SolverSpec", "PrimalRCDOptions", "DualRCDOptions", "Result",
           "get_solver", "make_kernel", "solve", "sampling_probabilities", "TRACE_COLUMNS",
           "METHODS", "SAMPLINGS", "DUAL_STEPS", "DEFAULT_TOL", "DEFAULT_MAX_SECONDS"]


TRACE_COLUMNS = ["iteration", "epoch", "sweeps", "time_s", "primal", "dual", "gap",
                 "nnz_primal", "nnz_dual", "status"]
"""One row per evaluation. ``iteration`` counts the kernel's own steps (coordinate updates;
DGPD searches), ``epoch`` the stored entries of A touched over nnz(A) (times k with k label
columns), ``sweeps`` DGPD's "iteration" (Sec. 5): a pass over all the variables of a
coordinate method, one search with its inner passes for DGPD (``SolverSpec.sweep``)."""

DEFAULT_TOL = 1e-6
"""Default target of :func:`solve`: a certified relative duality gap gap / |P| <= 1e-6."""
DEFAULT_MAX_SECONDS = 600.0
"""Default kernel-time budget of :func:`solve` (the CLI's ``run --max-seconds`` default)."""


@dataclass
class Result:
    """What a run returns: the trace (one row per evaluation) and the final iterates."""

    trace: pd.DataFrame
    w: np.ndarray
    alpha: np.ndarray
    status: str
    setup_s: float = 0.0
    """Wall time of the setup (CSC copy, norms, sampling tables), outside ``time_s``."""
    params: dict = field(default_factory=dict)
    eval_s: float = 0.0
    """Wall time of the evaluations (P, D, gap, nonzero counts), outside ``time_s``."""


class _PrimalKernel(_Kernel):
    def __init__(self, problem, sampling, seed, w0=None, **_):
        super().__init__(problem, sampling, seed)
        p = problem
        p.elastic_net("primal_rcd")  # the kernel's prox step is the elastic net's
        self.C = p.csc
        beta, u = p.smoothness, p.col_sqnorms
        self.lipschitz = beta * u / p.n + p.l2
        self.sampler = self._sampler(sampling_probabilities(u, p.l2, p.n, beta, sampling))
        if w0 is None:
            self.w, self.z = np.zeros(p.d), np.zeros(p.n)
        else:
            self.w = np.array(w0, dtype=np.float64)
            self.z = p.csr @ self.w

    def run(self, budget: int) -> tuple[int, int]:
        C = self.C
        return _rcd.primal_rcd(C.data, C.indices, C.indptr, self.problem.b, self.w, self.z,
                               self.lipschitz, self.problem.l2, self.problem.l1,
                               self.problem.loss_id, *self.sampler, self.state, budget)

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.w, objective.alpha_of_w(self.problem, self.w)

    def solution(self) -> np.ndarray:
        return self.w


class _DualKernel(_Kernel):
    def __init__(self, problem, sampling, seed, alpha0=None, dual_step="fixed", **_):
        super().__init__(problem, sampling, seed)
        p = problem
        if p.elastic_net("dual_rcd").l1:
            raise ConfigError("dual_rcd handles l2 regularization only (l1 must be 0)")
        if dual_step not in DUAL_STEPS:
            raise ConfigError(f"unknown dual_step {dual_step!r}; choose one of {list(DUAL_STEPS)}")
        self.newton = dual_step == "newton"
        beta, v = p.smoothness, p.row_sqnorms
        q = sampling_probabilities(v, p.l2, p.n, beta, sampling)
        self.sampler = self._sampler(q)
        self.curvature = v / (p.l2 * p.n)
        # Quartz: theta = min_l q_l lambda n / (beta v_l + lambda n); step_j = theta / q_j.
        # "printed" keeps eta = theta for every j, the step as Face-Off Sec. 7 prints it
        # (sign corrected): 1/q_j times smaller, i.e. n times under uniform sampling.
        theta = float(np.min(q * p.l2 * p.n / (beta * v + p.l2 * p.n)))
        self.fixed_step = np.full(p.n, theta) if dual_step == "printed" else theta / q
        if alpha0 is None:
            self.alpha, self.w = np.zeros(p.n), np.zeros(p.d)  # w(0) = 0, no product needed
        else:
            self.alpha = np.array(alpha0, dtype=np.float64)
            self.w = objective.w_of_alpha(p, self.alpha)

    def run(self, budget: int) -> tuple[int, int]:
        R = self.problem.csr
        return _rcd.dual_rcd(R.data, R.indices, R.indptr, self.problem.b, self.alpha, self.w,
                             self.curvature, self.fixed_step, self.problem.l2,
                             self.problem.loss_id, self.newton, *self.sampler, self.state,
                             budget)

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.w, self.alpha

    def solution(self) -> np.ndarray:
        return self.w


class _OneVsRest:
    """A vector kernel per label column of a label-matrix problem (one-vs-rest), advanced in
    lockstep: each call gives every column an equal share of the budget, so the trace's
    time is the sum over the columns and P, D are the summed objectives (DGPD Sec. 5; the
    penalty is separable, so the k problems decouple)."""

    def __init__(self, spec: SolverSpec, problem: Problem, options: Any, seed: int,
                 start: np.ndarray | None = None):
        self.problem = problem
        if start is not None and np.shape(start)[1:] != (problem.k,):
            raise ConfigError(f"{spec.name}: a warm start of a {problem.k}-column problem "
                              f"must have {problem.k} columns, got shape {np.shape(start)}")
        self.kernels = [spec.factory(problem.column(c), options, seed,
                                     None if start is None else start[:, c])
                        for c in range(problem.k)]

    def run(self, budget: int) -> tuple[int, int]:
        share = max(1, -(-budget // len(self.kernels)))
        iters = touched = 0
        for kernel in self.kernels:
            i, t = kernel.run(share)
            iters += i
            touched += t
        return iters, touched

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [k.iterates() for k in self.kernels]
        return (np.column_stack([w for w, _ in pairs]),
                np.column_stack([a for _, a in pairs]))

    def solution(self) -> np.ndarray:
        return np.column_stack([k.solution() for k in self.kernels])


# ---------------------------------------------------------------------------------------------
# The solver registry
# ---------------------------------------------------------------------------------------------

FAMILIES = ("primal", "dual", "primal_dual")
"""Plot families: what a method iterates on (colours in :mod:`pdsparse.figures`)."""

NONE = "none"
"""Trace-column value of an option the solver does not have (``dual_step`` of primal RCD)."""

_TOKEN = re.compile(r"^[a-z0-9_]+$")  # option names and values: path-safe, no "-" (tag joiner)


_SAMPLING_DOC = ("coordinate sampling: uniform, importance (Face-Off eq. 14) or permutation "
                 "(a fresh random order every epoch, as LIBLINEAR; outside the paper's theory)")


@dataclass(frozen=True)
class PrimalRCDOptions(_Options):
    """Options of primal RCD (Face-Off Algorithm 1)."""

    sampling: str = _option("importance", SAMPLINGS, _SAMPLING_DOC)


@dataclass(frozen=True)
class DualRCDOptions(_Options):
    """Options of dual RCD (Face-Off Algorithm 2, SDCA)."""

    sampling: str = _option("importance", SAMPLINGS, _SAMPLING_DOC)
    dual_step: str = _option(
        "fixed", DUAL_STEPS,
        "fixed (the Section 7 step with Quartz's 1/q_j scaling), newton (exact 1-D "
        "maximization, Algorithm 2) or printed (the Section 7 step exactly as printed)")


def _option_items(options: Mapping | Iterable[str] | str) -> list[tuple[str, Any]]:
    """``{key: value}`` or ``["key=value", ...]`` (the CLI's ``--option``) as (key, value) pairs."""
    if isinstance(options, Mapping):
        return [(str(k), v) for k, v in options.items()]
    items = [options] if isinstance(options, str) else list(options)
    pairs = []
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"option {item!r} is not of the form key=value")
        pairs.append((key, value))
    return pairs


@dataclass(frozen=True)
class SolverSpec:
    """One solver of the registry: what the workflow, CLI, plots and :func:`solve` need.

    ``options`` is the solver's frozen options dataclass (defaults, validation);
    ``factory(problem, options, seed, start)`` builds its kernel; ``family`` ("primal" /
    "dual") picks plot colours, ``label`` is the legend text, ``start`` the keyword of
    :func:`solve` holding a warm start (``w0`` or ``alpha0``).
    """

    name: str
    options: type
    factory: Callable[..., _Kernel] = field(repr=False)
    family: str
    label: str
    start: str
    summary: str = ""
    sweep: str = "d"
    """What one of DGPD's "iterations" is (the ``sweeps`` trace column): ``"d"`` (d kernel
    iterations: a primal pass), ``"n"`` (a dual or primal-dual pass) or ``"1"`` (each kernel
    iteration: a DGPD search and its inner passes)."""
    matrix: bool = False
    """The kernel takes a label-matrix problem whole (a trace-norm ball couples the columns);
    otherwise a label matrix is solved one-vs-rest, a kernel per column."""

    def __post_init__(self) -> None:
        bad = [x for k, v in self.choices().items() for x in (k, *v) if not _TOKEN.match(x)]
        if (bad or self.family not in FAMILIES or not _TOKEN.match(self.name)
                or self.sweep not in ("d", "n", "1")):
            raise ValueError(f"solver {self.name!r}: names must match {_TOKEN.pattern} "
                             f"(tags join them with '-'), family one of {FAMILIES}, sweep "
                             f"d|n|1; bad: {bad}")

    def sweep_size(self, problem: Problem) -> int:
        """Kernel iterations per sweep on ``problem`` (every label column counted)."""
        per = {"d": problem.d, "n": problem.n, "1": 1}[self.sweep]
        return per * problem.k

    def choices(self) -> dict[str, tuple[str, ...]]:
        """Each option's allowed values, in field order."""
        return {f.name: f.metadata["choices"] for f in fields(self.options)}

    def parse_options(self, options: Any = None) -> Any:
        """The options dataclass from ``None`` (defaults), an instance, a mapping of names
        (config YAML) or ``"key=value"`` strings (the CLI). Unknown keys are errors naming
        the allowed ones; a key of another solver is accepted only with the value ``"none"``
        (what :meth:`option_columns` writes for it), so columns read back give the options.
        """
        if options is None:
            return self.options()
        if isinstance(options, self.options):
            return options
        if isinstance(options, _Options):
            raise ConfigError(f"{self.name}: got the options of {options.solver}: {options}")
        allowed = self.choices()
        kw: dict[str, Any] = {}
        for key, value in _option_items(options):
            k = key.strip().replace("-", "_")
            if k not in allowed:
                owners = [s.name for s in SOLVERS.values() if k in s.choices()]
                if owners and (value is None or str(value).strip() == NONE):
                    continue
                hint = (f" (an option of {', '.join(owners)})" if owners
                        else _did_you_mean(k, allowed))
                raise ConfigError(f"{self.name}: unknown option {key!r}{hint}; allowed options: "
                                  f"{', '.join(allowed) or '(none)'}")
            if k in kw:
                raise ConfigError(f"{self.name}: option {k!r} given twice")
            kw[k] = value.strip() if isinstance(value, str) else value
        return self.options(**kw)

    def make_kernel(self, problem: Problem, options: Any = None, seed: int = 0,
                    start: np.ndarray | None = None) -> _Kernel:
        """Set up the kernel (not run); ``start`` is w0 (primal) or alpha0 (dual). A problem
        with a label matrix gets one kernel per column, run in lockstep (one-vs-rest)."""
        opts = self.parse_options(options)
        if problem.matrix and not self.matrix:
            return _OneVsRest(self, problem, opts, int(seed), start)
        return self.factory(problem, opts, int(seed), start)

    def tag(self, options: Any = None) -> str:
        """Short path-safe name of the options: their values in field order joined by "-"
        ("importance", "importance-fixed"; "default" for a solver without options). Values
        never contain "-", so distinct options of one solver never share a tag."""
        opts = self.parse_options(options)
        return "-".join(getattr(opts, k) for k in self.choices()) or "default"

    def option_columns(self, options: Any = None) -> dict[str, str]:
        """The options as trace key columns: every option of the registry, ``"none"`` for
        those this solver does not have (so that all traces share the columns)."""
        opts = self.parse_options(options)
        return {k: getattr(opts, k, NONE) for k in option_names()}


def _primal_factory(problem: Problem, options: PrimalRCDOptions, seed: int,
                    start: np.ndarray | None = None) -> _Kernel:
    if problem.dense:  # the same method over dense columns (_erm.pyx, through BLAS)
        return PrimalRCDKernel(problem, options.sampling, seed, w0=start)
    return _PrimalKernel(problem, options.sampling, seed, w0=start)


def _dual_factory(problem: Problem, options: DualRCDOptions, seed: int,
                  start: np.ndarray | None = None) -> _Kernel:
    if problem.elastic_net("dual_rcd").l1 or problem.dense:
        # Prox-SDCA (Shalev-Shwartz & Zhang): dual RCD with the exact step for l1 >= 0, on
        # sparse or dense rows; with l1 = 0 it is dual_step=newton (tests/test_erm_kernels.py)
        if options.dual_step != "newton":
            raise ConfigError(
                f"dual_rcd with l1 > 0 or dense data is Prox-SDCA, which takes the exact step: "
                f"give dual_step=newton (got {options.dual_step!r})")
        return ProxSDCAKernel(problem, options.sampling, seed, alpha0=start)
    return _DualKernel(problem, options.sampling, seed, alpha0=start,
                       dual_step=options.dual_step)


SOLVERS: Mapping[str, SolverSpec] = MappingProxyType({s.name: s for s in (
    SolverSpec("primal_rcd", PrimalRCDOptions, _primal_factory, family="primal",
               label="primal RCD", start="w0",
               summary="randomized coordinate descent on P (Face-Off Algorithm 1), CSC",
               sweep="d"),
    SolverSpec("dual_rcd", DualRCDOptions, _dual_factory, family="dual", label="dual RCD",
               start="alpha0",
               summary="randomized coordinate ascent on D (Face-Off Algorithm 2, SDCA), CSR; "
               "Prox-SDCA for l1 > 0 or dense data",
               sweep="n"),
    SolverSpec("spdc", SPDCOptions, spdc_factory, family="primal_dual", label="SPDC",
               start="w0", sweep="n",
               summary="stochastic primal-dual coordinate method (Zhang & Xiao 2015, "
               "Algorithm 1, batch 1, dense primal update)"),
    SolverSpec("dgpd", DGPDOptions, dgpd_factory, family="primal_dual", label="DGPD",
               start="alpha0", sweep="1",
               summary="doubly greedy primal-dual CD with active sets (Lei et al. 2017, "
               "Algorithm 2), CSR + CSC or dense"),
    SolverSpec("dgpd_full", DGPDFullOptions, dgpd_full_factory, family="primal_dual",
               label="DGPD (Alg. 1)", start="alpha0", sweep="d",
               summary="doubly greedy primal-dual CD, one coordinate each (Lei et al. 2017, "
               "Algorithm 1), CSR + CSC or dense"),
    SolverSpec("acc_pg", AccPGOptions, acc_pg_factory, family="primal", label="Acc PG",
               start="w0", sweep="1", matrix=True,
               summary="accelerated projected gradient on a norm ball (Nesterov's strongly "
               "convex scheme or FISTA), step 1/L"),
    SolverSpec("fw", FWOptions, fw_factory, family="primal", label="FW", start="w0",
               sweep="1", matrix=True,
               summary="Frank-Wolfe on a norm ball, exact line search or 2/(t+2)"),
    SolverSpec("svrg", SVRGOptions, svrg_factory, family="primal", label="SVRG", start="w0",
               sweep="n", matrix=True,
               summary="projected SVRG (Johnson & Zhang 2013; Prox-SVRG, Xiao & Zhang 2014)"),
    SolverSpec("scgs", SCGSOptions, scgs_factory, family="primal", label="SCGS", start="w0",
               sweep="1", matrix=True,
               summary="stochastic conditional gradient sliding (Lan & Zhou 2016)"),
    SolverSpec("storc", STORCOptions, storc_factory, family="primal", label="STORC",
               start="w0", sweep="1", matrix=True,
               summary="variance-reduced conditional gradient sliding (Hazan & Luo 2016, "
               "Algorithm 2)"),
    SolverSpec("sfw", SFWOptions, sfw_factory, family="primal", label="SFW", start="w0",
               sweep="1", matrix=True,
               summary="stochastic Frank-Wolfe on a trace-norm ball (Hazan & Luo 2016), "
               "minibatch gradient, step 2/(k+1)"),
    SolverSpec("block_fw", BlockFWOptions, block_fw_factory, family="primal",
               label="block FW", start="w0", sweep="1", matrix=True,
               summary="block Frank-Wolfe with rank-s steps on a trace-norm ball (Allen-Zhu, "
               "Hazan, Hu & Li 2017, Algorithm 1)"),
    SolverSpec("pdbfw", PDBFWOptions, pdbfw_factory, family="primal_dual", label="PDBFW",
               start="w0", sweep="1", matrix=True,
               summary="primal-dual block Frank-Wolfe (Lei et al. 2019): s-sparse block FW "
               "steps and k greedy dual rows on an l1 ball (Algorithm 1, CSR + CSC or "
               "dense) or rank-s steps on a trace-norm ball (Algorithm 2)"),
)})
"""The solvers by name; ``tuple(SOLVERS) == pdsparse.names.METHODS`` (tested)."""

_SOLVER_OF_OPTIONS = {s.options: s.name for s in SOLVERS.values()}


def solver_of_options(options: type) -> str:
    """The registry name of an options dataclass (its class name when unregistered)."""
    return _SOLVER_OF_OPTIONS.get(options, options.__name__)


def option_names() -> tuple[str, ...]:
    """Every option name of the registry, in order of first appearance (the key columns)."""
    return tuple(dict.fromkeys(k for s in SOLVERS.values() for k in s.choices()))


def get_solver(method: str | SolverSpec) -> SolverSpec:
    """The registry entry of ``method``; a clear error (with a suggestion) when unknown."""
    if isinstance(method, SolverSpec):
        return method
    try:
        return SOLVERS[method]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown method {method!r}{_did_you_mean(method, SOLVERS)}; "
                          f"choose one of {list(SOLVERS)}") from None


def _call_options(spec: SolverSpec, options: Any, **keywords: str | None) -> Any:
    """Options of :func:`solve` / :func:`make_kernel`: ``options`` merged with the legacy
    keywords (``sampling=``, ``dual_step=``; None = not given). A keyword the solver has no
    option for is accepted only with its legacy default or "none" (primal RCD is called with
    ``dual_step="fixed"``), anything else is an error rather than silently ignored."""
    if options is None or isinstance(options, _Options):
        merged = asdict(spec.parse_options(options)) if options is not None else {}
    else:
        merged = dict(_option_items(options))
    allowed = spec.choices()
    for key, value in keywords.items():
        if value is None:
            continue
        if key not in allowed:
            if value in (NONE, _LEGACY_DEFAULTS.get(key)):
                continue
            raise ConfigError(f"{spec.name} has no option {key!r} (got {key}={value!r}); "
                              f"its options: {', '.join(allowed)}")
        if key in merged and merged[key] != value:
            raise ConfigError(f"{spec.name}: {key} given twice: {merged[key]!r} in options, "
                              f"{value!r} as a keyword")
        merged[key] = value
    return spec.parse_options(merged)


_LEGACY_DEFAULTS = {"sampling": "importance", "dual_step": "fixed"}


def _start(spec: SolverSpec, w0, alpha0):
    """The warm start of ``spec`` out of (w0, alpha0); the other one must be None."""
    given = {"w0": w0, "alpha0": alpha0}
    other = next(k for k in given if k != spec.start)
    if given[other] is not None:
        raise ConfigError(f"{spec.name} starts from {spec.start}, not {other}")
    return given[spec.start]


def make_kernel(problem: Problem, method: str, sampling: str | None = None,
                dual_step: str | None = None, seed: int = 0, w0=None, alpha0=None, *,
                options: Any = None) -> _Kernel:
    """Set up a kernel without running it (benchmarks time ``kernel.run`` directly).

    ``sampling`` and ``dual_step`` map onto the solver's options dataclass (None: the
    default, "importance" and "fixed"); ``options=`` takes the dataclass, a mapping or
    "key=value" strings instead. ``SOLVERS[method].make_kernel(problem, options, seed,
    start)`` is the registry's form of the same call.
    """
    spec = get_solver(method)
    opts = _call_options(spec, options, sampling=sampling, dual_step=dual_step)
    return spec.make_kernel(problem, opts, seed, _start(spec, w0, alpha0))


# ---------------------------------------------------------------------------------------------
# When to evaluate: a fixed grid (traces for figures) or a schedule adapted to the run
# ---------------------------------------------------------------------------------------------

# Adaptive schedule (eval_every=None). One evaluation costs about two products with A (P and
# D), about one epoch of dual RCD, so evaluating every epoch doubles a run that converges in a
# few epochs. The relative gap of RCD falls about geometrically in the epochs: its log10 is
# fitted (least squares) on the last FIT_POINTS evaluations and the next evaluation is placed
# where the fit crosses tol, plus MARGIN_EPOCHS (an early check costs one more evaluation, a
# late one only the overshoot). The run is taken to start at relative gap 1 (exact for dual RCD
# from alpha = 0, where D(0) = 0 < P(0); a prior otherwise), so the first evaluation, after
# FIRST_EPOCHS_PER_DECADE * log10(1/tol) epochs, already yields a rate. Without a usable rate
# (no decrease, or tol = 0) the run length doubles between evaluations; a prediction is capped
# at MAX_GROWTH times the run length so far, and evaluations are at least MIN_STEP_EPOCHS
# apart. Constants in epochs, not measured times: the evaluation points, hence the trace and
# the returned iterate, depend only on the seed (unless max_seconds binds). Tuned on the
# traces of primal and dual RCD on the five LIBSVM sets of benchmarks/solve_vs_liblinear.py
# (benchmarks/README.md).
FIRST_EPOCHS_PER_DECADE = 0.5
FIT_POINTS = 3
MARGIN_EPOCHS = 0.25
MIN_STEP_EPOCHS = 0.5
MAX_GROWTH = 4.0
FALLBACK_GROWTH = 2.0
PROBE_EPOCHS = 1.0 / 16  # first kernel call under a time budget: measures the kernel's speed


class _FixedSchedule:
    """An evaluation at the start and after every ``eval_every`` epochs (as before issue 7)."""

    adaptive = False

    def __init__(self, eval_every: float, nnz: int):
        self.chunk = max(1, int(math.ceil(eval_every * nnz)))

    def first(self) -> int:
        return 0

    def next(self, touched: int, rel_gap: float) -> int:
        return touched + self.chunk


class _GeometricSchedule:
    """An evaluation at the start, after ``first`` epochs, then ``per_decade`` evaluations
    per decade of epochs: evenly spaced on the log axes of figures whose methods differ in
    speed by orders of magnitude (DGPD: a search costs a small fraction of a pass)."""

    adaptive = False

    def __init__(self, first: float, per_decade: int, nnz: int):
        self.first_epochs, self.ratio, self.nnz = first, 10.0 ** (1.0 / per_decade), nnz

    def first(self) -> int:
        return 0

    def next(self, touched: int, rel_gap: float) -> int:
        point = self.first_epochs
        while point * self.nnz <= touched:
            point *= self.ratio
        return max(touched + 1, int(math.ceil(point * self.nnz)))


class _AdaptiveSchedule:
    """Evaluations where the fitted geometric decrease of the gap predicts tol (see above)."""

    adaptive = True

    def __init__(self, tol: float, nnz: int, from_zero: bool):
        self.log_tol = math.log10(tol) if tol > 0 else None
        self.nnz = nnz
        self.points = [(0.0, 0.0)] if from_zero else []  # (epoch, log10 relative gap)

    def first(self) -> int:
        decades = -self.log_tol if self.log_tol is not None else 2.0
        return self._at(max(MIN_STEP_EPOCHS / 2, FIRST_EPOCHS_PER_DECADE * decades))

    def next(self, touched: int, rel_gap: float) -> int:
        epoch = touched / self.nnz
        self.points.append((epoch, math.log10(rel_gap) if 0 < rel_gap < math.inf else math.nan))
        step = epoch * (FALLBACK_GROWTH - 1)
        rate = self._rate()  # decades per epoch
        if rate > 0 and self.log_tol is not None:
            predicted = (self.points[-1][1] - self.log_tol) / rate + MARGIN_EPOCHS
            step = min(predicted, epoch * (MAX_GROWTH - 1))
        return self._at(epoch + max(step, MIN_STEP_EPOCHS))

    def _rate(self) -> float:
        """Minus the least-squares slope of log10 gap over the last FIT_POINTS evaluations."""
        pts = [p for p in self.points[-FIT_POINTS:] if math.isfinite(p[1])]
        if len(pts) < 2:
            return 0.0
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        return -sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx > 0 else 0.0

    def _at(self, epochs: float) -> int:
        return max(1, int(math.ceil(epochs * self.nnz)))


def _time_capped(budget: int, touched: int, elapsed: float, max_seconds: float,
                 nnz: int) -> int:
    """``budget`` cut to the kernel time left at the speed measured so far (5% over, so
    that the run ends past the budget, not just short of it); a short probe first."""
    if touched == 0 or elapsed <= 0:
        return min(budget, max(1, int(PROBE_EPOCHS * nnz)))
    left = 1.05 * (max_seconds - elapsed) * touched / elapsed
    return min(budget, max(1, int(math.ceil(left))))


def solve(problem: Problem, method: str, sampling: str | None = None,
          dual_step: str | None = None, seed: int = 0, max_epochs: float | None = None,
          max_seconds: float = DEFAULT_MAX_SECONDS, tol: float = DEFAULT_TOL,
          eval_every: float | None = None, w0=None, alpha0=None, *,
          options: Any = None, eval_per_decade: int = 0,
          progress: Callable[[dict], None] | None = None) -> Result:
    """Run a registered solver until the certified gap, the time or the epoch budget says stop.

    Parameters
    ----------
    method : a name of :data:`SOLVERS`: ``"primal_rcd"`` (Face-Off Algorithm 1) or
        ``"dual_rcd"`` (Algorithm 2).
    sampling, dual_step : the solver's options (None: its default), see
        :class:`PrimalRCDOptions` / :class:`DualRCDOptions`: sampling ``"importance"``
        (default, eq. 14), ``"uniform"`` or ``"permutation"``; dual step ``"fixed"``
        (default), ``"newton"`` or ``"printed"``. ``options=`` takes the options dataclass,
        a mapping or "key=value" strings instead.
    tol : stop once the duality gap P(w) - D(alpha) is at most ``tol * |P(w)|`` (default
        1e-6); the gap bounds the suboptimality, so P(w) - P* <= tol |P(w)| is certified.
        0 disables it.
    max_seconds : stop after this much kernel time (default 600 s; evaluations and setup are
        not counted, see ``Result.eval_s`` and ``Result.setup_s``).
    max_epochs : stop after this many passes (nonzeros touched / nnz(A)); None (default): no
        epoch cap, tol and max_seconds decide.
    eval_every : None (default): evaluate where the gap is predicted to reach tol (the
        schedule above :class:`_AdaptiveSchedule`; a few evaluations per run, no row at
        the start). A number: a trace row at the start and every ``eval_every`` epochs, as
        for figures (the rows, iterates and stopping are those of the code before the
        adaptive schedule).
    eval_per_decade : with ``eval_every``, > 0 makes the evaluation points geometric: at
        the start, after ``eval_every`` epochs, then this many per decade of epochs.
    w0, alpha0 : warm start of primal (w0) or dual (alpha0) RCD.
    progress : called with each trace row (a dict of :data:`TRACE_COLUMNS`, ``status`` set
        on the last one) right after its evaluation, outside the timer (``pdsparse run``
        prints a line per row).

    The trace has one row per evaluation (iteration, epoch, kernel time, P, D, gap, nonzeros)
    and the status on the last row: ``converged``, ``max_epochs``, ``max_time`` or
    ``diverged``.
    """
    spec = get_solver(method)
    opts = _call_options(spec, options, sampling=sampling, dual_step=dual_step)
    start = _start(spec, w0, alpha0)
    if eval_every is not None and not eval_every > 0:
        raise ConfigError(f"eval_every must be > 0 (or None: adaptive), got {eval_every!r}")
    if max_epochs is not None and not max_epochs >= 0:
        raise ConfigError(f"max_epochs must be >= 0 (or None: no cap), got {max_epochs!r}")
    if not (max_seconds >= 0 and tol >= 0):
        raise ConfigError(f"max_seconds and tol must be >= 0, got {max_seconds!r}, {tol!r}")
    if tol == 0 and max_epochs is None and max_seconds == math.inf:
        raise ConfigError("nothing would stop this run: give tol > 0, max_seconds or max_epochs")
    t0 = time.perf_counter()
    kernel = spec.make_kernel(problem, opts, seed, start)
    setup_s = time.perf_counter() - t0
    nnz = max(problem.nnz * problem.k, 1)  # one epoch: a pass over A for every label column
    per_sweep = spec.sweep_size(problem)
    limit = math.inf if max_epochs is None else int(math.ceil(max_epochs * nnz))
    if eval_per_decade and eval_every is None:
        raise ConfigError("eval_per_decade needs eval_every (the first evaluation, in epochs)")
    if eval_every is None:
        schedule = _AdaptiveSchedule(tol, nnz, from_zero=start is None)
    elif eval_per_decade:
        schedule = _GeometricSchedule(eval_every, int(eval_per_decade), nnz)
    else:
        schedule = _FixedSchedule(eval_every, nnz)
    rows = []
    iters = touched = 0
    elapsed = eval_s = 0.0
    target = schedule.first()  # nonzeros touched at the next evaluation
    while True:
        # advance the kernel to the next evaluation (timed); under a time budget the adaptive
        # schedule splits the chunk so that it ends when the budget does
        goal = min(target, limit)
        while touched < goal and not (schedule.adaptive and elapsed >= max_seconds):
            budget = goal - touched
            if schedule.adaptive and max_seconds < math.inf:
                budget = _time_capped(budget, touched, elapsed, max_seconds, nnz)
            t = time.perf_counter()
            k_iters, k_touched = kernel.run(budget)
            elapsed += time.perf_counter() - t
            iters += k_iters
            touched += k_touched
        # evaluate, outside the timer
        t = time.perf_counter()
        w, alpha = kernel.iterates()
        p_val = objective.primal(problem, w)
        d_val = objective.dual(problem, alpha)
        gap = p_val - d_val
        rows.append((iters, touched / nnz, iters / per_sweep, elapsed, p_val, d_val, gap,
                     int(np.count_nonzero(w)), int(np.count_nonzero(alpha)), ""))
        eval_s += time.perf_counter() - t
        # stop?
        status = ""
        if not np.isfinite(p_val):
            status = "diverged"
        elif tol > 0 and gap <= tol * abs(p_val):
            status = "converged"
        elif touched >= limit:
            status = "max_epochs"
        elif elapsed >= max_seconds:
            status = "max_time"
        if progress is not None:
            progress(dict(zip(TRACE_COLUMNS, (*rows[-1][:-1], status), strict=True)))
        if status:
            break
        target = schedule.next(touched, gap / abs(p_val) if p_val else math.inf)
    rows[-1] = rows[-1][:-1] + (status,)
    trace = pd.DataFrame(rows, columns=TRACE_COLUMNS)
    w, alpha = kernel.iterates()
    params = dict(method=spec.name,
                  **{k: ("" if v == NONE else v) for k, v in spec.option_columns(opts).items()},
                  seed=seed, max_epochs=max_epochs, max_seconds=max_seconds, tol=tol,
                  eval_every=eval_every, eval_per_decade=eval_per_decade, options=asdict(opts),
                  tag=spec.tag(opts), evaluations=len(rows),
                  schedule="adaptive" if schedule.adaptive else
                  "geometric" if eval_per_decade else "fixed")
    return Result(trace, w.copy(), alpha.copy(), status, setup_s, params, eval_s)
