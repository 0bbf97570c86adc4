"""The solver registry: one :class:`SolverSpec` per solver (ARCHITECTURE.md, "Where things
go") with its options dataclass, kernel factory, family, label and path tag, what it solves
(penalties, losses, dense or sparse data, label matrices, l2 > 0; :meth:`SolverSpec.refusal`)
and its tuning grid, and the calls that set a kernel up by name (:func:`get_solver`,
:func:`make_kernel`). A new solver is a module of this package (its kernel and options) and an
entry of :data:`SOLVERS`; what reads the registry
(:func:`pdsparse.solvers.predict.accepts`, the race's grids, the CLI's and the config
schema's names, checked by ``tests/test_registry_contract.py``) follows.
``tests/test_registry_capabilities.py`` builds every solver's kernel on small problems of
every kind to check the declarations."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from pdsparse.errors import ConfigError
from pdsparse.names import LOSSES
from pdsparse.penalties import ElasticNet, L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers.ball import (
    AccPGOptions,
    FWOptions,
    L1Oracles,
    SCGSOptions,
    STORCOptions,
    SVRGOptions,
)
from pdsparse.solvers.base import (
    _did_you_mean,
    _Kernel,
    _Options,
    register_options,
    registered_name,
)
from pdsparse.solvers.dgpd import (
    DGPDFullOptions,
    DGPDOptions,
    dgpd_factory,
    dgpd_full_factory,
)
from pdsparse.solvers.erm import SPDCOptions, spdc_factory
from pdsparse.solvers.pdbfw import LOSSES as PDBFW_LOSSES
from pdsparse.solvers.pdbfw import PDBFWOptions, pdbfw_factory
from pdsparse.solvers.prox_newton import ProxNewtonOptions, prox_newton_factory
from pdsparse.solvers.rcd import DualRCDOptions, PrimalRCDOptions, dual_factory, primal_factory
from pdsparse.solvers.trace import (
    BlockFWKernel,
    BlockFWOptions,
    SFWKernel,
    SFWOptions,
    TraceOracles,
    norm_ball_factory,
)

__all__ = ["SOLVERS", "SolverSpec", "Limit", "FAMILIES", "PENALTY_KINDS", "NONE", "get_solver",
           "make_kernel", "option_names", "penalty_kind", "solver_of_options"]

FAMILIES = ("primal", "dual", "primal_dual")
"""Plot families: what a method iterates on (colours in :mod:`pdsparse.repro.figures`)."""

NONE = "none"
"""Trace-column value of an option the solver does not have (``dual_step`` of primal RCD)."""

PENALTY_KINDS = ("l2", "elastic_net", "l1_ball", "trace_ball")
"""The penalties a solver declares (:func:`penalty_kind`): the elastic net with l1 = 0
(Face-Off's l2) or l1 > 0 (DGPD's), the l1 ball and the trace-norm ball (PDBFW's)."""

ALL_LOSSES = frozenset(LOSSES)


def penalty_kind(problem: Problem) -> str:
    """The :data:`PENALTY_KINDS` entry of ``problem``'s penalty."""
    pen = problem.penalty
    if isinstance(pen, ElasticNet):
        return "elastic_net" if pen.l1 > 0 else "l2"
    if isinstance(pen, L1Ball):
        return "l1_ball"
    if isinstance(pen, TraceBall):
        return "trace_ball"
    raise ConfigError(f"no solver family for the penalty {pen!r}")

_TOKEN = re.compile(r"^[a-z0-9_]+$")  # option names and values: path-safe, no "-" (tag joiner)


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


STRONG_CONVEXITY = "needs l2 > 0"
"""How a refusal for l2 = 0 ends (:meth:`SolverSpec.refusal`)."""


@dataclass(frozen=True)
class Limit:
    """What an option value narrows: with ``option=value`` (on the ``penalty`` only, when
    given), the solver takes only the ``penalties`` and ``losses`` given here (None: as
    declared), dense or sparse data only if ``dense`` / ``sparse``, and needs l2 > 0 if
    ``needs_strong_convexity``, and no example weights if not ``weights``. ``why``: the
    reason, for the refusal."""

    option: str
    value: str
    why: str
    penalty: str | None = None
    penalties: frozenset[str] | None = None
    losses: frozenset[str] | None = None
    dense: bool = True
    sparse: bool = True
    needs_strong_convexity: bool = False
    weights: bool = True


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
    penalties: frozenset[str] = frozenset()
    """What it solves (:data:`PENALTY_KINDS`): the penalties its factory takes."""
    losses: frozenset[str] = ALL_LOSSES
    """The losses it takes (:data:`pdsparse.names.LOSSES`)."""
    strictly_convex_losses: frozenset[str] = frozenset()
    """Of ``losses``, those it takes only with l2 > 0 and no intercept: a second-order
    model built on the loss's generalized second derivative, which vanishes on whole
    regions (the smooth hinge's off 0 < m < 1), is strictly convex only through l2 (an
    unpenalized intercept's curvature can be 0)."""
    dense: bool = True
    """It takes a dense A (an array)."""
    sparse: bool = True
    """It takes a sparse A (CSR)."""
    needs_strong_convexity: bool = False
    """It needs l2 > 0: its steps or its theory divide by the strong convexity of g (a dual
    method also needs grad g* to map its dual iterate to w). A refusal for a ball with
    l2 = 0 and for pure l1 (the elastic net with l2 = 0, l1 > 0)."""
    label_matrix: frozenset[str] = frozenset()
    """The penalties with which it takes a label matrix B (n, k): whole (``matrix``) or
    one-vs-rest (a kernel per column)."""
    weights: frozenset[str] = frozenset()
    """The penalties with which it takes example weights (``Problem(..., sample_weight=)``,
    the loss s_i phi_i in its kernel), on sparse A only."""
    intercept: frozenset[str] = frozenset()
    """The penalties with which it fits an unpenalized intercept (``Problem(...,
    intercept=True)``), on sparse A and a label vector (or one-vs-rest) only."""
    limits: tuple[Limit, ...] = ()
    """Option values that narrow the above (:class:`Limit`)."""
    tune: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The grid of ``race(tune=True)`` (:data:`pdsparse.race.TUNE_GRID`): (option, values)
    pairs, every combination run; empty: the defaults only."""

    def __post_init__(self) -> None:
        bad = [x for k, v in self.choices().items() for x in (k, *v) if not _TOKEN.match(x)]
        if (bad or self.family not in FAMILIES or not _TOKEN.match(self.name)
                or self.sweep not in ("d", "n", "1")):
            raise ValueError(f"solver {self.name!r}: names must match {_TOKEN.pattern} "
                             f"(tags join them with '-'), family one of {FAMILIES}, sweep "
                             f"d|n|1; bad: {bad}")
        register_options(self.options, self.name)
        kinds = set(PENALTY_KINDS)
        for lim in self.limits:
            self.parse_options({lim.option: lim.value})
            kinds_ok = lim.penalty in (None, *PENALTY_KINDS) and set(
                lim.penalties or ()) <= kinds and set(lim.losses or ()) <= ALL_LOSSES
            if not kinds_ok:
                raise ValueError(f"solver {self.name!r}: limit {lim} names an unknown "
                                 "penalty or loss")
        for key, values in self.tune:
            for value in values:
                self.parse_options({key: value})
        if not (self.penalties <= kinds and self.losses <= ALL_LOSSES
                and self.strictly_convex_losses <= self.losses
                and self.label_matrix <= self.penalties):
            raise ValueError(f"solver {self.name!r}: penalties must be of {PENALTY_KINDS}, "
                             f"losses of {sorted(ALL_LOSSES)}, label_matrix of its penalties")

    def refusal(self, problem: Problem, options: Any = None) -> str | None:
        """Why this solver does not take ``problem`` with ``options``, as its declaration
        says (None: it does). Looks at the problem's kind only, never at its data (a data
        set can still be refused later, e.g. SPDC's all-zero A). Invalid options raise
        :class:`~pdsparse.errors.ConfigError`."""
        opts = self.parse_options(options)
        kind = penalty_kind(problem)
        if kind not in self.penalties:
            return f"{self.name} solves {_listed(self.penalties)}, not {kind}"
        if problem.matrix and kind not in self.label_matrix:
            return f"{self.name} takes no label matrix with {kind}"
        rules = [(self, "")]
        rules += [(lim, f" with {lim.option}={lim.value} ({lim.why})") for lim in self.limits
                  if getattr(opts, lim.option) == lim.value and lim.penalty in (None, kind)]
        for rule, why in rules:
            penalties = rule.penalties if rule.penalties is not None else self.penalties
            losses = rule.losses if rule.losses is not None else self.losses
            if kind not in penalties:
                return f"{self.name}{why} solves {_listed(penalties)}, not {kind}"
            if problem.loss not in losses:
                return f"{self.name}{why} takes the losses {_listed(losses)}, not {problem.loss}"
            if not (rule.dense if problem.dense else rule.sparse):
                return f"{self.name}{why} takes no {'dense' if problem.dense else 'sparse'} A"
            if rule.needs_strong_convexity and not problem.l2 > 0:
                return f"{self.name}{why} {STRONG_CONVEXITY}"
            if problem.weights is not None and rule is not self and not rule.weights:
                return f"{self.name}{why} takes no sample weights"
        if problem.loss in self.strictly_convex_losses and (
                not problem.l2 > 0 or problem.intercept):
            return (f"{self.name} takes the {problem.loss} loss only with l2 > 0 and no "
                    "intercept (its generalized second derivative vanishes on whole regions: "
                    "only l2 keeps the model strictly convex)")
        if problem.weights is not None and (kind not in self.weights or problem.dense):
            takers = ", ".join(s.name for s in SOLVERS.values() if s.weights) or "none"
            where = "dense A" if problem.dense and kind in self.weights else kind
            return (f"{self.name} takes no sample weights with {where} (solvers that take "
                    f"them, sparse A: {takers})")
        if problem.intercept and (kind not in self.intercept or problem.dense):
            takers = ", ".join(s.name for s in SOLVERS.values() if s.intercept) or "none"
            where = "dense A" if problem.dense and kind in self.intercept else kind
            return (f"{self.name} fits no intercept with {where} (solvers that do, sparse A: "
                    f"{takers})")
        return None

    def supports(self, problem: Problem, options: Any = None) -> bool:
        """Whether this solver takes ``problem`` with ``options`` (:meth:`refusal`)."""
        return self.refusal(problem, options) is None

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
        late = {f.name for f in fields(self.options) if f.metadata.get("late")}
        kw: dict[str, Any] = {}
        for key, value in _option_items(options):
            k = key.strip().replace("-", "_")
            if k in late and (value is None or str(value).strip() == NONE):
                continue  # a late option's column at its default (``option_columns``)
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
        extended = problem.weights is not None or problem.intercept
        why = self.refusal(problem, opts) if extended or not problem.l2 > 0 else None
        if why is not None and extended:
            # a kernel that reads no weights or intercept would solve another problem
            raise ConfigError(why)
        if why is not None and why.endswith(STRONG_CONVEXITY):
            # l2 = 0 (pure l1, or a ball without its l2 term): name the solvers that take it
            # (other refusals are the factories' own, which the capability tests compare)
            takers = solvers_for(problem)
            raise ConfigError(f"{why}; this problem (l2 = 0) is solved by "
                              f"{', '.join(takers) if takers else 'no registered solver'}")
        if problem.matrix and not self.matrix:
            return _OneVsRest(self, problem, opts, int(seed), start)
        return self.factory(problem, opts, int(seed), start)

    def tag(self, options: Any = None) -> str:
        """Short path-safe name of the options: their values in field order joined by "-"
        ("importance", "importance-fixed"; "default" for a solver without options). Values
        never contain "-", so distinct options of one solver never share a tag. Trailing
        options added late (``base._option(late=True)``) are left out at their defaults."""
        opts = self.parse_options(options)
        items = [(f, getattr(opts, f.name)) for f in fields(self.options)]
        while items and items[-1][0].metadata.get("late") and items[-1][1] == items[-1][0].default:
            items.pop()
        return "-".join(value for _, value in items) or "default"

    def option_columns(self, options: Any = None) -> dict[str, str]:
        """The options as trace key columns: every option of the registry, ``"none"`` for
        those this solver does not have (so that all traces share the columns) and for a
        late option at its default (adding an option changes no trace or label of the
        printed setting)."""
        opts = self.parse_options(options)
        quiet = {f.name for f in fields(self.options)
                 if f.metadata.get("late") and getattr(opts, f.name) == f.default}
        return {k: NONE if k in quiet else getattr(opts, k, NONE) for k in option_names()}


def _listed(names: Iterable[str]) -> str:
    order = (*PENALTY_KINDS, *LOSSES)
    return ", ".join(sorted(names, key=lambda x: (order.index(x) if x in order else 99, x)))


class _OneVsRest(_Kernel):
    """A vector kernel per label column of a label-matrix problem (one-vs-rest), advanced in
    lockstep: every column gets an equal share of the work, so the trace's time is the sum
    over the columns and P, D are the summed objectives (DGPD Sec. 5; the penalty is
    separable, so the k problems decouple). Its alpha is each column's own (pure l1: scaled
    per column), so it is not ``paired`` even when the columns' kernels are.

    The work is counted in shares, so that chunked calls end where one call ends: a call with
    ``budget`` raises every column's share to ceil((work so far + budget) / k) and runs each
    column until its own work reaches it (a column past it from its last iteration waits),
    and the work it reports is k times the rise of the share. Each column's own work stays
    within one of its iterations of the share. (A share per call let a column's overshoot
    move the next call's, and counting the columns' actual work let the caller stop while a
    column lagged its share: ``solve`` splits its calls by the time left, and a time-capped
    run evaluated on other iterations than an uncapped run.)"""

    def __init__(self, spec: SolverSpec, problem: Problem, options: Any, seed: int,
                 start: np.ndarray | None = None):
        super().__init__(problem, "uniform", seed)  # the columns' kernels sample
        if start is not None and np.shape(start)[1:] != (problem.k,):
            raise ConfigError(f"{spec.name}: a warm start of a {problem.k}-column problem "
                              f"must have {problem.k} columns, got shape {np.shape(start)}")
        self.kernels = [spec.factory(problem.column(c), options, seed,
                                     None if start is None else start[:, c])
                        for c in range(problem.k)]
        self.max_chunk_epochs = self.kernels[0].max_chunk_epochs  # one solver, k columns
        self.share = 0  # each column's share of the work so far
        self.done = np.zeros(problem.k, dtype=np.int64)  # each column's own work so far

    def run(self, budget: int) -> tuple[int, int]:
        k = len(self.kernels)
        share = -(-(k * self.share + budget) // k)  # > self.share: budget >= 1
        iters = 0
        for c, kernel in enumerate(self.kernels):
            if self.done[c] < share:
                i, t = kernel.run(int(share - self.done[c]))
                self.done[c] += t
                iters += i
        touched, self.share = k * (share - self.share), share
        return iters, touched

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [k.iterates() for k in self.kernels]
        return (np.column_stack([w for w, _ in pairs]),
                np.column_stack([a for _, a in pairs]))

    def solution(self) -> np.ndarray:
        return np.column_stack([k.solution() for k in self.kernels])



_ENET = frozenset({"l2", "elastic_net"})
_BALLS = frozenset({"l1_ball", "trace_ball"})
_TRACE = frozenset({"trace_ball"})
_EXACT_STEP = "Prox-SDCA, on dense data or with l1 > 0, takes the exact step only"
_NORM_BALL = {"start": "w0", "matrix": True, "penalties": _BALLS, "label_matrix": _TRACE}
_TRACE_ONLY = {"start": "w0", "matrix": True, "penalties": _TRACE, "label_matrix": _TRACE}

SOLVERS: Mapping[str, SolverSpec] = MappingProxyType({s.name: s for s in (
    SolverSpec("primal_rcd", PrimalRCDOptions, primal_factory, family="primal",
               label="primal RCD", start="w0",
               summary="randomized coordinate descent on P (Face-Off Algorithm 1), CSC",
               sweep="d", penalties=_ENET, label_matrix=_ENET, weights=_ENET, intercept=_ENET,
               tune=(("sampling", ("importance", "uniform")),)),
    SolverSpec("dual_rcd", DualRCDOptions, dual_factory, family="dual", label="dual RCD",
               start="alpha0",
               summary="randomized coordinate ascent on D (Face-Off Algorithm 2, SDCA), CSR; "
               "Prox-SDCA for l1 > 0 or dense data",
               sweep="n", penalties=_ENET, label_matrix=_ENET, needs_strong_convexity=True,
               weights=frozenset({"l2"}),
               limits=tuple(Limit("dual_step", step, _EXACT_STEP, penalties=frozenset({"l2"}),
                                  dense=False) for step in ("fixed", "printed"))
               + tuple(Limit("dual_step", step, "the fixed step has no weighted form here",
                             weights=False) for step in ("fixed", "printed")),
               tune=(("sampling", ("importance", "uniform", "permutation")),
                     ("dual_step", ("fixed", "newton")))),
    SolverSpec("spdc", SPDCOptions, spdc_factory, family="primal_dual", label="SPDC",
               start="w0", sweep="n",
               summary="stochastic primal-dual coordinate method (Zhang & Xiao 2015, "
               "Algorithm 1, batch 1; lazy primal update on sparse data)",
               penalties=_ENET, label_matrix=_ENET, needs_strong_convexity=True),
    SolverSpec("dgpd", DGPDOptions, dgpd_factory, family="primal_dual", label="DGPD",
               start="alpha0", sweep="1",
               summary="doubly greedy primal-dual CD with active sets (Lei et al. 2017, "
               "Algorithm 2), CSR + CSC or dense",
               penalties=_ENET, label_matrix=_ENET, needs_strong_convexity=True,
               tune=(("eta", ("theorem", "x10")), ("batch", ("1", "8")),
                     ("passes", ("jacobi", "gauss_seidel")), ("step", ("theorem", "curvature")))),
    SolverSpec("dgpd_full", DGPDFullOptions, dgpd_full_factory, family="primal_dual",
               label="DGPD (Alg. 1)", start="alpha0", sweep="d",
               summary="doubly greedy primal-dual CD, one coordinate each (Lei et al. 2017, "
               "Algorithm 1), CSR + CSC or dense",
               penalties=_ENET, label_matrix=_ENET, needs_strong_convexity=True,
               tune=(("eta", ("theorem", "x10", "x100")),)),
    SolverSpec("acc_pg", AccPGOptions, norm_ball_factory("acc_pg"), family="primal",
               label="Acc PG", sweep="1", **_NORM_BALL,
               summary="accelerated projected gradient on a norm ball (Nesterov's strongly "
               "convex scheme or FISTA), step 1/L",
               limits=(Limit("momentum", "nesterov", "the strongly convex scheme; use "
                             "momentum=fista for l2 = 0", needs_strong_convexity=True),),
               tune=(("lipschitz", ("exact", "backtracking")),
                     ("momentum", ("nesterov", "fista")))),
    SolverSpec("fw", FWOptions, norm_ball_factory("fw"), family="primal", label="FW",
               sweep="1", **_NORM_BALL,
               summary="Frank-Wolfe on a norm ball, exact line search or 2/(t+2)",
               limits=tuple(Limit("step", "line_search", "exact for these losses only; use "
                                  "step=open_loop", penalty=kind,
                                  losses=frozenset(oracles.line_search_losses))
                            for kind, oracles in (("l1_ball", L1Oracles),
                                                  ("trace_ball", TraceOracles))),
               tune=(("step", ("line_search", "open_loop")),)),
    SolverSpec("svrg", SVRGOptions, norm_ball_factory("svrg"), family="primal", label="SVRG",
               sweep="n", **_NORM_BALL,
               summary="projected SVRG (Johnson & Zhang 2013; Prox-SVRG, Xiao & Zhang 2014)",
               tune=(("step", ("theory", "x2", "x5", "x10")),)),
    SolverSpec("scgs", SCGSOptions, norm_ball_factory("scgs"), family="primal", label="SCGS",
               sweep="1", **_NORM_BALL,
               summary="stochastic conditional gradient sliding (Lan & Zhou 2016)"),
    SolverSpec("storc", STORCOptions, norm_ball_factory("storc"), family="primal",
               label="STORC", sweep="1", **_NORM_BALL,
               summary="variance-reduced conditional gradient sliding (Hazan & Luo 2016, "
               "Algorithm 2)"),
    SolverSpec("sfw", SFWOptions, SFWKernel, family="primal", label="SFW", sweep="1",
               **_TRACE_ONLY,
               summary="stochastic Frank-Wolfe on a trace-norm ball (Hazan & Luo 2016), "
               "minibatch gradient, step 2/(k+1)"),
    SolverSpec("block_fw", BlockFWOptions, BlockFWKernel, family="primal",
               label="block FW", sweep="1", **_TRACE_ONLY,
               summary="block Frank-Wolfe with rank-s steps on a trace-norm ball (Allen-Zhu, "
               "Hazan, Hu & Li 2017, Algorithm 1)"),
    SolverSpec("pdbfw", PDBFWOptions, pdbfw_factory, family="primal_dual", label="PDBFW",
               sweep="1", **_NORM_BALL, losses=frozenset(PDBFW_LOSSES),
               needs_strong_convexity=True,
               summary="primal-dual block Frank-Wolfe (Lei et al. 2019): s-sparse block FW "
               "steps and k greedy dual rows on an l1 ball (Algorithm 1, CSR + CSC or "
               "dense) or rank-s steps on a trace-norm ball (Algorithm 2)",
               tune=(("k", ("auto", "n")), ("delta", ("theorem", "x100", "x10000", "x100000")))),
    SolverSpec("prox_newton", ProxNewtonOptions, prox_newton_factory, family="primal",
               label="prox-Newton", start="w0", sweep="1",
               summary="proximal Newton with working sets (skglm's ProxNewton: Bertrand et al. "
               "2022; Lee, Sun & Saunders 2014), inner coordinate descent, CSC",
               penalties=_ENET, label_matrix=_ENET, weights=_ENET, intercept=_ENET,
               dense=False, losses=frozenset({"logistic", "squared", "smooth_hinge"}),
               strictly_convex_losses=frozenset({"smooth_hinge"})),
)})
"""The solvers by name; ``tuple(SOLVERS) == pdsparse.names.METHODS`` (tested)."""

def solver_of_options(options: type) -> str:
    """The registry name of an options dataclass (its class name when unregistered)."""
    return registered_name(options)


def solvers_for(problem: Problem) -> list[str]:
    """The registered solvers that take ``problem``, at their defaults or, where an option
    value is what needs l2 > 0, at another value of that option (named: ``acc_pg
    (momentum=fista)``)."""
    out = []
    for spec in SOLVERS.values():
        tries: list[dict | None] = [None]
        tries += [{lim.option: v} for lim in spec.limits if lim.needs_strong_convexity
                  for v in spec.choices()[lim.option] if v != lim.value]
        for opts in tries:
            if spec.supports(problem, opts):
                out.append(spec.name if opts is None else
                           f"{spec.name} ({', '.join(f'{k}={v}' for k, v in opts.items())})")
                break
    return out


@functools.cache
def option_names() -> tuple[str, ...]:
    """Every option name of the registry, in order of first appearance (the key columns).

    A solver whose options all came late (``base._option(late=True)``: SPDC's ``step``) counts after
    the others, so that giving it an option moves no column of the traces written before. Computed
    once: :data:`SOLVERS` is read-only (at every call it would be a noticeable share of a small
    solve's time; measured: benchmarks/README.md, "Measurements cited by the code")."""
    specs = list(SOLVERS.values())
    late = [all(f.metadata.get("late") for f in fields(s.options)) for s in specs]
    ordered = [s for s, lt in zip(specs, late, strict=True) if not lt] + [
        s for s, lt in zip(specs, late, strict=True) if lt]
    return tuple(dict.fromkeys(k for s in ordered for k in s.choices()))


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

    ``sampling`` and ``dual_step`` map onto the solver's options dataclass (None: its
    default; primal RCD: "importance"; dual RCD: "permutation" and "newton"); ``options=``
    takes the dataclass, a mapping or "key=value" strings instead.
    ``SOLVERS[method].make_kernel(problem, options, seed, start)`` is the registry's form of
    the same call.
    """
    spec = get_solver(method)
    opts = _call_options(spec, options, sampling=sampling, dual_step=dual_step)
    return spec.make_kernel(problem, opts, seed, _start(spec, w0, alpha0))


