"""Solvers: the registry (:mod:`~pdsparse.solvers.registry`), one module per family beside
its Cython kernel (:mod:`~pdsparse.solvers.rcd`, :mod:`~pdsparse.solvers.erm`,
:mod:`~pdsparse.solvers.dgpd`, :mod:`~pdsparse.solvers.pdbfw`, :mod:`~pdsparse.solvers.ball`,
:mod:`~pdsparse.solvers.trace`; the kernel interface in :mod:`~pdsparse.solvers.base`), and
:func:`solve`, the run loop that records the trace.

The kernels only advance the state; :func:`solve` times the kernel calls alone, evaluates P,
D and the gap outside the timer through :mod:`pdsparse.objective`, and decides when to stop
(the package's map: ARCHITECTURE.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from pdsparse.errors import ConfigError
from pdsparse.names import DEFAULT_TOL, DUAL_STEPS, METHODS, SAMPLINGS
from pdsparse.problem import Problem
from pdsparse.solvers.base import sampling_probabilities
from pdsparse.solvers.rcd import DualRCDOptions, PrimalRCDOptions
from pdsparse.solvers.registry import (
    FAMILIES,
    NONE,
    SOLVERS,
    SolverSpec,
    _call_options,
    _start,
    get_solver,
    make_kernel,
    option_names,
    solver_of_options,
)
from pdsparse.solvers.schedule import (  # noqa: F401 (the schedule's constants, re-exported)
    FALLBACK_GROWTH,
    FIRST_EPOCHS_PER_DECADE,
    FIT_POINTS,
    MARGIN_EPOCHS,
    MAX_GROWTH,
    MIN_STEP_EPOCHS,
    _AdaptiveSchedule,
    _FixedSchedule,
    _GeometricSchedule,
)

__all__ = ["SOLVERS", "SolverSpec", "PrimalRCDOptions", "DualRCDOptions", "Result",
           "get_solver", "make_kernel", "solve", "sampling_probabilities", "TRACE_COLUMNS",
           "METHODS", "SAMPLINGS", "DUAL_STEPS", "DEFAULT_TOL", "DEFAULT_MAX_SECONDS",
           "FAMILIES", "NONE", "option_names", "solver_of_options", "MEASURED", "CPU_CLOCK"]


TRACE_COLUMNS = ["iteration", "epoch", "sweeps", "time_s", "wall_s", "setup_s", "primal",
                 "dual", "gap", "nnz_primal", "nnz_dual", "status"]
"""One row per evaluation. ``iteration`` counts the kernel's own steps (coordinate updates;
DGPD searches), ``epoch`` the stored entries of A touched over nnz(A) (times k with k label
columns), ``sweeps`` DGPD's "iteration" (Sec. 5): a pass over all the variables of a
coordinate method, one search with its inner passes for DGPD (``SolverSpec.sweep``).
``time_s`` is the kernel's CPU time so far (:data:`CPU_CLOCK`), ``wall_s`` its wall-clock
time beside it, ``setup_s`` the CPU time of the run's setup (the same on every row: what a
user pays before the first step, e.g. Acc PG's ||A||_2)."""

MEASURED = ("time_s", "wall_s", "setup_s")
"""The trace columns that are measured times; every other column is a function of the
problem, the options and the seed (a second run repeats it to the bit)."""

CPU_CLOCK = time.process_time
"""The clock of kernel time, setup time and ``max_seconds``: the CPU time of the process.
Wall-clock time on a shared machine grows with the other processes' load, CPU time far
less (measured: benchmarks/README.md, "Measurements cited by the code"); CPU time is what
another machine repeats. The process's, not the thread's, so that work a BLAS call hands to
its own threads is counted too."""

DEFAULT_MAX_SECONDS = 600.0
"""Default kernel-time budget of :func:`solve` (the CLI's ``run --max-seconds`` default)."""

NOT_READY_CALLS = 10
"""At most this many kernel calls in a row without an evaluation while the kernel says it
cannot be done yet (``ready(tol)`` False: its own bound, e.g. prox_newton's violations with
pure l1); then an evaluation all the same (a bound that rounding keeps above tol must not
run a solve to its time budget)."""


@dataclass(repr=False)
class Result:
    """What a run returns: the trace (one row per evaluation) and the final iterates.

    The summary a user reads first is in attributes, read from the last evaluation:
    ``objective`` (P at the stop), ``gap`` (P - D, certified), ``rel_gap`` (gap / |P|, what
    ``tol`` bounds), ``epochs``, ``time_s`` (kernel CPU time), ``cpu_s`` (with the setup),
    ``status``; ``repr`` shows them and the iterates' shapes, not the iterates.

    ``rows`` are the trace's rows (tuples in :data:`TRACE_COLUMNS` order); ``trace`` is them
    as a DataFrame, built on first access: building a pandas DataFrame is a large share of
    a whole call on a small problem, and a caller who wants ``w`` needs none (measured:
    benchmarks/README.md, "Measurements cited by the code")."""

    rows: list[tuple] = field(repr=False)
    w: np.ndarray
    alpha: np.ndarray
    status: str
    setup_s: float = 0.0
    """CPU time of the setup (CSC copy, norms, spectral norms, sampling tables), outside
    ``time_s``; the trace's ``setup_s`` column."""
    params: dict = field(default_factory=dict)
    eval_s: float = 0.0
    """Wall time of the evaluations (P, D, gap, nonzero counts) and of the kernel's
    readiness checks (``ready``: prox_newton's gap read from its gradient), outside
    ``time_s``."""
    setup_wall_s: float = 0.0
    """Wall time of the setup."""

    @cached_property
    def trace(self) -> pd.DataFrame:
        """One row per evaluation (:data:`TRACE_COLUMNS`), the status on the last one."""
        return pd.DataFrame(self.rows, columns=TRACE_COLUMNS)

    def _last(self, column: str) -> float:
        return float(self.rows[-1][TRACE_COLUMNS.index(column)]) if self.rows else math.nan

    @property
    def objective(self) -> float:
        """The primal objective P(w) at the stop."""
        return self._last("primal")

    @property
    def gap(self) -> float:
        """The duality gap P(w) - D(alpha) at the stop (absolute: a certified bound on
        P(w) - P*)."""
        return self._last("gap")

    @property
    def rel_gap(self) -> float:
        """gap / |P| at the stop, the quantity ``tol`` bounds; inf when P is 0 or not finite."""
        p, gap = self.objective, self.gap
        rel = gap / abs(p) if math.isfinite(p) and p != 0 else math.inf
        return math.inf if math.isnan(rel) else rel

    @property
    def epochs(self) -> float:
        """Passes over the data: stored entries of A touched / nnz(A)."""
        return self._last("epoch")

    @property
    def time_s(self) -> float:
        """The kernel's CPU time (:data:`CPU_CLOCK`), evaluations and setup excluded."""
        return self._last("time_s")

    @property
    def cpu_s(self) -> float:
        """CPU time with the setup: ``setup_s + time_s``, what a user pays for the solve
        (evaluations excluded)."""
        return float(self.setup_s) + self.time_s

    def __repr__(self) -> str:
        method = self.params.get("method", "?")
        return (f"Result({method}: {self.status}, objective={self.objective:.6g}, "
                f"rel_gap={self.rel_gap:.3g}, epochs={self.epochs:.4g}, "
                f"cpu_s={self.cpu_s:.3g}, w: {self.w.shape}, alpha: {self.alpha.shape}, "
                f"{len(self.rows)} evaluations)")


# ---------------------------------------------------------------------------------------------
# When to evaluate: pdsparse.solvers.schedule; under a time budget, how long a kernel call is
# ---------------------------------------------------------------------------------------------

PROBE_EPOCHS = 1.0 / 16  # first kernel call under a time budget: measures the kernel's speed
FAR_CALLS = 64  # a kernel call may last 1/FAR_CALLS of the time left (_time_capped)


def _time_capped(budget: int, last: tuple[int, float], elapsed: float, max_seconds: float,
                 nnz: int) -> int:
    """``budget`` cut to what the kernel does, at the speed of its last call (``last``: its
    work and CPU seconds; none yet: a short probe), in half the time left, or in all of it
    and 5% more once that is at most a twentieth of ``max_seconds`` (so that the run ends
    just past the budget, not short of it), and in at most twice the last call's time or
    ``1 / FAR_CALLS`` of the time left, the larger. A kernel whose work grows dearer as it runs
    (PDBFW's growing s: its selection and projection outgrow the counted scans) overruns its
    budget when one call is sized at the run's average speed; a call no longer than twice the
    last one, and no longer than half the time left, re-measures the speed before it can
    overrun. Far from the budget the doubling alone would cost a short run several kernel
    calls, each a fixed cost that a small solve notices; a call sized at a 64th of the time
    left ends within half of it even if the kernel slows down 32-fold meanwhile (measured:
    benchmarks/README.md, "Measurements cited by the code")."""
    work, seconds_last = last
    if work <= 0 or seconds_last <= 0:
        return min(budget, max(1, int(PROBE_EPOCHS * nnz)))
    left = max_seconds - elapsed
    seconds = min(max(0.5 * left, min(1.05 * left, 0.05 * max_seconds)),
                  max(2.0 * seconds_last, left / FAR_CALLS))
    return min(budget, max(1, int(math.ceil(seconds * work / seconds_last))))


def solve(problem: Problem, method: str, sampling: str | None = None,
          dual_step: str | None = None, seed: int = 0, max_epochs: float | None = None,
          max_seconds: float = DEFAULT_MAX_SECONDS, tol: float = DEFAULT_TOL,
          eval_every: float | None = None, w0=None, alpha0=None, *,
          options: Any = None, eval_per_decade: int = 0,
          progress: Callable[[dict], None] | None = None) -> Result:
    """Run a registered solver until the certified gap, the time or the epoch budget says stop.

    Parameters
    ----------
    method : a name of :data:`SOLVERS` (``"primal_rcd"``: Face-Off Algorithm 1,
        ``"dual_rcd"``: Algorithm 2, ...) or ``"auto"``: the solver, with the options it
        needs, that :func:`pdsparse.solvers.predict.predict` predicts fastest on ``problem`` (the
        prediction of ``pdsparse advise``; ``params["auto"]`` holds its reason). Its cost
        is not in the trace: for l2 and the elastic net the probe (up to 4 passes of dual
        RCD, then of primal RCD unless dual RCD reached tol or is predicted to get there for
        less than that probe; an evaluation after passes 2 and 4, ``PROBE_EVALUATIONS``;
        Face-Off's statistics, one pass, only when nothing was probed; lambda_max's pass,
        which prox_newton's first gradient then reuses), after which the
        chosen side goes on from its probe iterate (a warm start: its passes are not lost,
        but they are not in the trace either: ``params["auto"]`` says how many; the schedule
        fits the probe's evaluations; a probe that reached tol is the answer, its evaluation
        the trace's one row); on the l1 ball L and kappa_max (10 power iterations:
        about 20 passes). Name the solver to skip it.
    sampling, dual_step : the solver's options (None: its default), see
        :class:`PrimalRCDOptions` / :class:`DualRCDOptions`: sampling ``"importance"``
        (eq. 14; primal RCD's default), ``"uniform"`` or ``"permutation"`` (dual RCD's
        default); dual step ``"newton"`` (default), ``"fixed"`` (Sec. 7) or ``"printed"``.
        ``options=`` takes the options dataclass, a mapping or "key=value" strings instead.
    tol : stop once the duality gap P(w) - D(alpha) is at most ``tol * |P(w)|`` (default
        1e-6); the gap bounds the suboptimality, so P(w) - P* <= tol |P(w)| is certified.
        0 disables it.
    max_seconds : stop after this much kernel CPU time (default 600 s; evaluations and setup
        are not counted, see ``Result.eval_s`` and ``Result.setup_s``). Kernel calls are
        split by the speed measured so far, so a run ends within a few percent of its
        budget past it (one kernel iteration at most), whatever the evaluation schedule.
    max_epochs : stop after this many passes (nonzeros touched / nnz(A)); None (default): no
        epoch cap, tol and max_seconds decide.
    eval_every : None (default): evaluate where the gap is predicted to reach tol (the
        schedule above :class:`_AdaptiveSchedule`; a few evaluations per run, no row at
        the start) and the kernel does not know better (its ``ready(tol)``: prox_newton
        reads its gap from its gradient, so that it is evaluated about once). A number: a
        trace row at the start and every ``eval_every`` epochs, as for figures (the
        evaluation points on a fixed grid of epochs, whatever the gap's rate).
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
    auto, prior, certified = None, (), None
    if method == "auto":
        from pdsparse.solvers.predict import predict

        if options is not None or sampling is not None or dual_step is not None:
            raise ConfigError("method='auto' chooses the options too: give a method name to "
                              "set options, sampling or dual_step")
        starts = {}
        auto = predict(problem, tol=tol if tol > 0 else DEFAULT_TOL, starts=starts)
        method, options = auto.method, auto.options
        if method in starts and w0 is None and alpha0 is None:  # go on from the probe
            w0, alpha0, prior, certified = starts[method]
            auto.reason += (f"; the run goes on from its probe's iterate ({prior[-1][0]:.3g} "
                            "passes, not in the trace)")
            if certified is not None and tol > 0:  # the probe's evaluation: the one row
                certified = (w0, alpha0, *certified, certified[0] - certified[1])
            else:
                certified = None
            w0, alpha0 = (w0, None) if get_solver(method).start == "w0" else (None, alpha0)
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
    t0, t0_wall = CPU_CLOCK(), time.perf_counter()
    # auto's probe certified tol with the solve's own test: no kernel to build
    kernel = None if certified else spec.make_kernel(problem, opts, seed, start)
    setup_s, setup_wall_s = CPU_CLOCK() - t0, time.perf_counter() - t0_wall
    nnz = max(problem.nnz * problem.k, 1)  # one epoch: a pass over A for every label column
    per_sweep = spec.sweep_size(problem)
    limit = math.inf if max_epochs is None else int(math.ceil(max_epochs * nnz))
    if eval_per_decade and eval_every is None:
        raise ConfigError("eval_per_decade needs eval_every (the first evaluation, in epochs)")
    if eval_every is None:
        schedule = _AdaptiveSchedule(tol, nnz, from_zero=start is None, prior=prior)
    elif eval_per_decade:
        schedule = _GeometricSchedule(eval_every, int(eval_per_decade), nnz)
    else:
        schedule = _FixedSchedule(eval_every, nnz)
    rows = []
    # pure l1: every rescaled dual point alpha(w) is feasible, so the largest D seen so far
    # certifies (celer keeps it too); alpha(w) alone is a noisy bound on the inactive features
    best_dual = None if problem.l2 == 0 and not problem.penalty.bounded else False
    iters = touched = skipped = 0  # skipped: the kernel's calls since it was last ready
    elapsed = wall = eval_s = 0.0
    last = (0, 0.0)  # the last kernel call's work and CPU seconds: the speed of the next
    target = schedule.first()  # nonzeros touched at the next evaluation
    while True:
        # advance the kernel to the next evaluation (timed); under a time budget the chunk is
        # split so that it ends when the budget does (a kernel call stops where its work
        # budget runs out, so the split moves no evaluation point)
        goal = min(target, limit)
        while kernel is not None and touched < goal and elapsed < max_seconds:
            budget = goal - touched
            if max_seconds < math.inf:
                budget = _time_capped(budget, last, elapsed, max_seconds, nnz)
            t, t_wall = CPU_CLOCK(), time.perf_counter()
            k_iters, k_touched = kernel.run(budget)
            last = (k_touched, CPU_CLOCK() - t)
            elapsed += last[1]
            wall += time.perf_counter() - t_wall
            iters += k_iters
            touched += k_touched
        # not before the kernel could be done (it says so from its own iterations' by-products)
        if kernel is not None and schedule.adaptive and tol > 0 and touched < limit \
                and elapsed < max_seconds and skipped < NOT_READY_CALLS:
            t = time.perf_counter()
            ready = kernel.ready(tol)
            eval_s += time.perf_counter() - t  # outside the timer, as an evaluation is
            if not ready:
                target, skipped = touched + 1, skipped + 1  # one more of its iterations
                continue
        skipped = 0
        # evaluate, outside the timer (auto's probe certified tol: its iterate's evaluation)
        t = time.perf_counter()
        w, alpha, p_val, d_val, gap = certified if kernel is None else kernel.evaluated()
        if best_dual is not False:
            if best_dual is None or d_val > best_dual[0]:
                best_dual = (d_val, alpha.copy())
            d_val, gap = best_dual[0], p_val - best_dual[0]
        rows.append((iters, touched / nnz, iters / per_sweep, elapsed, wall, setup_s, p_val,
                     d_val, gap, int(np.count_nonzero(w)), int(np.count_nonzero(alpha)), ""))
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
        if schedule.adaptive and math.isfinite(kernel.max_chunk_epochs):
            target = min(target, touched + max(1, int(kernel.max_chunk_epochs * nnz)))
    rows[-1] = rows[-1][:-1] + (status,)
    if best_dual:
        alpha = best_dual[1]
    params = dict(method=spec.name,
                  **{k: ("" if v == NONE else v) for k, v in spec.option_columns(opts).items()},
                  seed=seed, max_epochs=max_epochs, max_seconds=max_seconds, tol=tol,
                  eval_every=eval_every, eval_per_decade=eval_per_decade, options=asdict(opts),
                  tag=spec.tag(opts), evaluations=len(rows),
                  schedule="adaptive" if schedule.adaptive else
                  "geometric" if eval_per_decade else "fixed")
    if auto is not None:
        params["auto"] = auto.reason
    return Result(rows, w.copy(), alpha.copy(), status, setup_s, params, eval_s, setup_wall_s)
