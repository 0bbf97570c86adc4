"""A race of every applicable solver on one problem, and a prediction judged against it.

:func:`race` runs each solver that accepts the problem (:func:`pdsparse.solvers.predict.applicable`)
with :func:`pdsparse.solvers.solve` from the same start (w = 0 or alpha = 0, the solvers'
default), to the same certified tolerance (relative duality gap ``gap / |P| <= tol``), for at
most ``seconds`` of kernel CPU time each, and ranks them by CPU time *with* the setup
(``setup_s + time_s`` at the stop: what a user pays for a certified answer; the evaluations
that certify it run outside the timer, as in every trace of the house). Solvers that do not
reach ``tol`` within the budget rank after those that do, by the relative gap they ended at.

With ``tune=True`` every solver also runs at each setting of its small grid
:data:`TUNE_GRID` and is represented by its fastest; the grids are the settings the papers
print beside their defaults and those their sensitivity studies found best (docs/dgpd.md,
docs/pdbfw.md).

:func:`judge` compares a predicted solver with the race: the ratio of its CPU time to the
winner's (1 when it won; "within 1.5x" is the target of benchmarks/advise_accuracy.py).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from pdsparse.errors import ConfigError, PdsparseError
from pdsparse.names import DEFAULT_TOL
from pdsparse.problem import Problem
from pdsparse.solvers.registry import SOLVERS

__all__ = ["RaceEntry", "RaceResult", "TUNE_GRID", "WITHIN", "judge", "label", "race",
           "rank_key"]

WITHIN = 1.5
"""A prediction counts as good when its solver is the winner or within this factor of the
winner's CPU time."""

TUNE_GRID: dict[str, dict[str, tuple[str, ...]]] = {
    name: dict(spec.tune) for name, spec in SOLVERS.items() if spec.tune}
"""The grid of ``--tune``, each solver's ``SolverSpec.tune`` in the registry: every
combination of the values of each solver (settings a solver cannot take on the problem are
skipped; a solver not listed runs at its defaults).
Dual RCD: the three samplings and Face-Off's fixed step or the exact (Newton) one; DGPD: the
paper's eta x10 and the DGPD study's best (batch 8, Gauss-Seidel, curvature step); Acc PG:
ARPACK's L or backtracking, Nesterov or FISTA momentum; SVRG: step x1-x10 (the PDBFW study's
sweep); PDBFW: the printed k and delta and the PDBFW study's k = n with delta x100-x10^5."""


@dataclass
class RaceEntry:
    """One solver at one setting: what :func:`pdsparse.solvers.solve` did in the race."""

    method: str
    options: dict
    """The options it ran with (only those that differ from its defaults)."""
    reached: bool
    """Certified ``gap <= tol |P|`` within the budget."""
    cpu_s: float
    """CPU time with setup at the stop: to ``tol`` when ``reached``, else the whole budget."""
    setup_s: float
    kernel_s: float
    epochs: float
    rel_gap: float
    """Relative duality gap at the stop (inf when P is not finite)."""
    status: str
    """The trace's status (``converged``, ``max_time``, ``diverged``) or ``error``."""
    error: str = ""
    peer: bool = False
    """A solver one could install instead (:mod:`pdsparse.peers`), not a registered one: its
    CPU time is its fit's at the loosest tolerance that certified the gap."""

    @property
    def label(self) -> str:
        text = label(self.method, self.options)
        return f"{text} [peer]" if self.peer else text

    def to_dict(self) -> dict:
        return {**asdict(self), "label": self.label}


@dataclass
class RaceResult:
    """The ranked entries and the settings of the race."""

    entries: list[RaceEntry]
    seconds: float
    tol: float
    tune: bool
    best: dict[str, RaceEntry] = field(default_factory=dict)
    """Each solver's fastest setting (its first entry in the ranking)."""

    @property
    def winner(self) -> RaceEntry:
        return self.entries[0]


def label(method: str, options: dict[str, str]) -> str:
    """``"dual_rcd (sampling=uniform)"``: a solver and the options it runs with."""
    opts = ", ".join(f"{k}={v}" for k, v in options.items())
    return f"{method} ({opts})" if opts else method


def rank_key(e: RaceEntry) -> tuple:
    """The race's order: those that reached ``tol`` by CPU time with setup, then the rest by
    the relative gap they ended at."""
    gap = e.rel_gap if math.isfinite(e.rel_gap) else math.inf
    return (0, e.cpu_s, e.method) if e.reached else (1, gap, e.cpu_s, e.method)


def _grid(method: str, base: dict[str, str], tune: bool) -> list[dict[str, str]]:
    if not tune or method not in TUNE_GRID:
        return [dict(base)]
    grid = TUNE_GRID[method]
    return [{**base, **dict(zip(grid, values, strict=True))}
            for values in itertools.product(*grid.values())]


def _non_default(method: str, options: dict[str, str]) -> dict[str, str]:
    from pdsparse.solvers import get_solver

    defaults = get_solver(method).parse_options()
    return {k: v for k, v in options.items() if getattr(defaults, k) != v}


def _run(problem: Problem, method: str, options: dict, seconds: float, tol: float,
         seed: int) -> RaceEntry:
    from pdsparse.solvers import solve

    try:
        res = solve(problem, method, options=options, tol=tol, max_seconds=seconds, seed=seed)
    except (PdsparseError, FloatingPointError, ValueError, ZeroDivisionError) as exc:
        return RaceEntry(method, options, False, math.inf, math.nan, math.nan, math.nan,
                         math.inf, "error", f"{type(exc).__name__}: {exc}")
    reached = res.status == "converged"
    return RaceEntry(method, options, reached, res.cpu_s, float(res.setup_s), res.time_s,
                     res.epochs, res.rel_gap, res.status)


def race(problem: Problem, seconds: float, tol: float = DEFAULT_TOL, tune: bool = False,
         methods: dict[str, dict[str, str]] | None = None, seed: int = 0,
         progress: Callable[[str], None] | None = None, peers: bool = False) -> RaceResult:
    """Run every applicable solver (or ``methods``: name -> options) on ``problem`` for at
    most ``seconds`` of kernel CPU time each, to relative gap ``tol``; ranked (module
    docstring). ``progress`` gets a line before and after each run. ``peers``: also every
    installed peer that fits the problem (:func:`pdsparse.peers.race_peer`), in the same
    ranking, marked ``peer``."""
    from pdsparse.solvers.predict import accepts, applicable

    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"race time must be a positive number of seconds, got {seconds!r}")
    if not tol > 0:
        raise ConfigError(f"race tolerance must be > 0, got {tol!r}")
    say = progress or (lambda line: None)
    found = applicable(problem) if methods is None else dict(methods)
    runs = [(method, options) for method, base in found.items()
            for options in _grid(method, base, tune)
            if options == base or accepts(problem, method, options)]
    entries = []
    for i, (method, options) in enumerate(runs, 1):
        shown = label(method, _non_default(method, options))
        say(f"race {i}/{len(runs)}: {shown}, at most {seconds:g} CPU s")
        entry = _run(problem, method, options, seconds, tol, seed)
        entry.options = _non_default(method, options)
        say(f"race {i}/{len(runs)}: {shown}: " + (
            f"relative gap {tol:g} in {entry.cpu_s:.3g} CPU s" if entry.reached else
            f"{entry.status}, relative gap {entry.rel_gap:.3g} after {entry.cpu_s:.3g} CPU s"))
        entries.append(entry)
    if not entries:
        raise ConfigError(f"no registered solver accepts {problem!r}")
    if peers:
        entries += _race_peers(problem, seconds, tol, say)
    entries.sort(key=rank_key)
    best: dict[str, RaceEntry] = {}
    for e in entries:
        best.setdefault(e.method, e)
    return RaceResult(entries, float(seconds), float(tol), bool(tune), best)


def _race_peers(problem: Problem, seconds: float, tol: float,
                say: Callable[[str], None]) -> list[RaceEntry]:
    from pdsparse.peers import installed, race_peer, why_none

    found = installed(problem)
    if not found:
        say(f"race: no peer raced: {why_none(problem)}")
    entries = []
    for i, peer in enumerate(found, 1):
        say(f"race, peer {i}/{len(found)}: {peer.name}, at most {seconds:g} CPU s")
        got = race_peer(peer, problem, seconds, tol)
        entries.append(RaceEntry(peer.name, got["options"], got["reached"], got["cpu_s"],
                                 math.nan, got["cpu_s"], math.nan, got["rel_gap"],
                                 got["status"], got.get("error", ""), peer=True))
    return entries


def judge(result: RaceResult, predicted: str) -> dict:
    """The prediction against the race: ``winner``, ``predicted``, ``ratio`` (the predicted
    solver's CPU time over the winner's: 1 when it won; a lower bound, ``bound: True``,
    when it did not reach ``tol`` and the winner did; NaN when nobody reached it), ``held``
    (it won), ``within`` (ratio <= :data:`WITHIN`) and ``reason`` (one line)."""
    win = result.winner
    mine = result.best.get(predicted)
    out = {"winner": win.method, "winner_label": win.label, "winner_is_peer": win.peer,
           "predicted": predicted, "ratio": math.nan, "bound": False, "held": False,
           "within": False}
    if mine is None:
        out["reason"] = f"{predicted} was not in the race"
        return out
    out["held"] = mine.method == win.method
    if not win.reached:
        out["within"] = out["held"]
        out["reason"] = (f"no solver reached relative gap {result.tol:g} in {result.seconds:g} "
                         f"CPU s; lowest gap: {win.label} ({win.rel_gap:.3g})")
        return out
    if mine.reached:
        out["ratio"] = mine.cpu_s / win.cpu_s if win.cpu_s > 0 else 1.0
    else:
        out["ratio"], out["bound"] = mine.cpu_s / win.cpu_s, True
    out["within"] = mine.reached and out["ratio"] <= WITHIN
    if out["held"]:
        runner = next((e for e in result.entries if e.method != win.method), None)
        tail = ""
        if runner is not None and runner.reached:
            tail = f"; next: {runner.label}, {runner.cpu_s / win.cpu_s:.3g}x slower"
        elif runner is not None:
            tail = f"; no other solver reached it (next: {runner.label}, gap {runner.rel_gap:.3g})"
        out["reason"] = (f"{win.label} reached relative gap {result.tol:g} first, in "
                         f"{win.cpu_s:.3g} CPU s with setup{tail}")
    else:
        how = (f"{out['ratio']:.3g}x its CPU time" if mine.reached else
               f"{mine.label} did not reach it in {mine.cpu_s:.3g} s (ended at "
               f"{mine.rel_gap:.3g})")
        out["reason"] = (f"{win.label} reached relative gap {result.tol:g} first, in "
                         f"{win.cpu_s:.3g} CPU s with setup; the predicted {predicted}: {how}")
    return out

