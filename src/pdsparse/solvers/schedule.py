"""When a solve evaluates the gap: a fixed grid of epochs (traces for figures), a geometric
one (log axes), or a schedule adapted to the run's measured rate (:func:`pdsparse.solvers.solve`
by default, and the probe of ``solve(p, "auto")``, :func:`pdsparse.solvers.predict.probe_rates`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Adaptive schedule (eval_every=None). One evaluation costs about two products with A (P and
# D), about one epoch of dual RCD, so evaluating every epoch doubles a run that converges in a
# few epochs. The relative gap of RCD falls about geometrically in the epochs: its log10 is
# fitted (least squares) on the last FIT_POINTS evaluations and the next evaluation is placed
# where the fit crosses tol, plus MARGIN_EPOCHS (an early check costs one more evaluation, a
# late one only the overshoot). The run is taken to start at relative gap 1 (exact for dual RCD
# from alpha = 0, where D(0) = 0 < P(0); a prior otherwise), so the first evaluation, after
# FIRST_EPOCHS_PER_DECADE * log10(1/tol) epochs, already yields a rate; a warm start is
# evaluated before any pass instead (it may be solved: "auto" goes on from its probe's
# iterate, a path from the previous strength's solution). Without a usable rate
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


class _FixedSchedule:
    """An evaluation at the start and after every ``eval_every`` epochs (figure traces)."""

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
    """Evaluations where the fitted geometric decrease of the gap predicts tol (see above).
    ``prior``: the (epoch, relative gap) evaluations of the passes run before this solve
    (the probe of "auto"), which the fit reads as the run's own: the run counts its epochs
    on from the last of them."""

    adaptive = True

    def __init__(self, tol: float, nnz: int, from_zero: bool, prior: Sequence = ()):
        self.log_tol = math.log10(tol) if tol > 0 else None
        self.nnz = nnz
        self.offset = float(prior[-1][0]) if prior else 0.0
        self.prior = bool(prior)
        # (epoch, log10 relative gap)
        self.points = [(float(e), _log_gap(g)) for e, g in prior] or (
            [(0.0, 0.0)] if from_zero else [])

    def first(self) -> int:
        if self.prior:  # the probe's rate predicts the crossing already
            last = self.points[-1][1]
            if not math.isfinite(last) or (self.log_tol is not None and last <= self.log_tol):
                return 0  # solved by the probe (or a gap it could not take the log of)
            return self._target(self.offset)
        if not self.points:  # a warm start: evaluated before any pass (it may be solved)
            return 0
        decades = -self.log_tol if self.log_tol is not None else 2.0
        return self._at(max(MIN_STEP_EPOCHS / 2, FIRST_EPOCHS_PER_DECADE * decades))

    def next(self, touched: int, rel_gap: float) -> int:
        epoch = self.offset + touched / self.nnz
        self.points.append((epoch, _log_gap(rel_gap)))
        return self._target(epoch)

    def _target(self, epoch: float) -> int:
        step = epoch * (FALLBACK_GROWTH - 1)
        rate = self._rate()  # decades per epoch
        if rate > 0 and self.log_tol is not None and math.isfinite(self.points[-1][1]):
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
        return max(1, int(math.ceil((epochs - self.offset) * self.nnz)))


def _log_gap(rel_gap: float) -> float:
    return math.log10(rel_gap) if 0 < rel_gap < math.inf else math.nan
