"""The runner: each solver's cheapest budget at each target, then interleaved CPU-time rounds.

The protocol (every benchmark on it alike):

1. a :class:`Cell` is one problem with its certified optimum P* (``reference_solution``'s
   duality gap); a solver's iterate is judged by its relative suboptimality
   (P(x) - P*) / |P*|, P evaluated by :func:`pdsparse.objective.primal` outside every clock;
2. :func:`find_budgets`: for each target, loosest first, the solver's cheapest budget that
   reaches it by its ``sampling`` (tolerances by decades; iteration caps doubled from 1, then
   bisected to within 3 %; the first point of its own trace; or, for ``"target"``, the
   solver's own stop at the target, untuned) within ``cap`` CPU seconds a run. A solver that
   raises, returns a non-finite P, or stops improving before the target reaches nothing, with
   the reason; every run of the search is kept (``round`` -2, status "search": the curve of
   subopt against budget and seconds);
3. :func:`race`: ``repeats`` rounds, each timing every (solver, budget) once in the same
   order (``time.process_time`` around ``run`` alone, ``gc.collect()`` before), so that a
   drift of the machine's load hits all alike; every re-run's iterate is judged again, and a
   re-run that misses its target is recorded as such (the report never counts it);
4. the rows, one per timed run (``round`` 0, 1, ...), per (solver, target) that reached
   nothing (``round`` -1, ``cpu_s`` NaN) and per search point: the long format
   (:data:`COLUMNS` after the cell's labels), kept in one Parquet file by
   :func:`bench.report.write`.

Single-threaded BLAS is the caller's (``OMP_NUM_THREADS=1`` before numpy is imported), and
so is the quiet-machine record (``_harness.Watch`` around the whole run, in the metadata).
"""

from __future__ import annotations

import gc
import json
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bench.solver import TOLS, Solver

COLUMNS = ("solver", "ours", "sampling", "target", "budget", "status", "round", "cpu_s",
           "subopt", "note", "load1", "details")
"""The runner's columns of the long format, after the cell's labels and P*."""

REACHED, MISSED, NOT_REACHED, FAILED, UNSUPPORTED, SEARCH = (
    "reached", "missed", "not reached", "failed", "unsupported", "search")
SEARCH_ROUND, UNTIMED_ROUND = -2, -1
BISECT_REL = 0.03
MAX_ITER_CAP = 2**30


@dataclass
class Cell:
    """One problem of a benchmark: its labels (the first columns of its rows), the problem,
    and its certified optimum."""

    labels: dict
    problem: object
    p_star: float
    ref_gap: float = math.nan
    evaluated: int = field(default=0, repr=False)

    def subopt(self, x) -> float:
        """(P(x) - P*) / |P*| (inf when P(x) is not finite: a diverged run)."""
        from pdsparse.objective import primal

        self.evaluated += 1
        if x is None:
            return math.inf
        p = primal(self.problem, np.asarray(x))
        return (p - self.p_star) / abs(self.p_star) if math.isfinite(p) else math.inf


def timed_run(solver: Solver, budget) -> tuple[float, np.ndarray | None]:
    """(CPU seconds of ``solver.run(budget)``, its result); peers' convergence warnings
    silenced (they are expected at loose budgets)."""
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        solver.run(budget)
        secs = time.process_time() - t0
    x = solver.result
    return secs, (None if x is None else np.array(x, dtype=np.float64, copy=True))


@dataclass
class Found:
    """The outcome of one search: ``budget`` None when nothing reached the target, with why."""

    budget: float | None
    subopt: float = math.inf
    why: str = ""


def _given_up(setting: str, sub: float, secs: float, cap: float) -> str:
    """Why a search stops at a run that missed its targets ('' when it goes on): the run
    passed the cap, or its P is not finite."""
    if secs > cap:
        return f"{NOT_REACHED}: {setting} took {secs:.3g} s > cap {cap:g} s"
    if not math.isfinite(sub):
        return f"{FAILED}: P not finite at {setting} (diverged)"
    return ""


def _search_tolerance(solver, cell, targets, cap, points, found) -> dict[float, Found]:
    why = f"{NOT_REACHED}: tightest tol {TOLS[-1]:g}"
    for tol in TOLS:
        secs, x = timed_run(solver, tol)
        sub = cell.subopt(x)
        points.append((tol, sub, secs))
        for t in targets:
            if t not in found and sub <= t and secs <= cap:
                found[t] = Found(tol, sub)
        if len(found) == len(targets):
            break
        given_up = _given_up(f"tol {tol:g}", sub, secs, cap)
        if given_up:
            why = given_up
            break
    return found | {t: Found(None, points[-1][1], why) for t in targets if t not in found}


def _search_iteration(solver, cell, targets, cap, points, found) -> dict[float, Found]:
    runs: dict[int, float] = {}  # max_iter -> subopt

    def probe(k: int) -> np.ndarray | None:
        secs, x = timed_run(solver, k)
        runs[k] = cell.subopt(x)
        points.append((k, runs[k], secs))
        return x

    why, k, prev = "", 1, None
    while True:
        x = probe(k)
        sub, secs = runs[k], points[-1][2]
        if sub <= min(targets):
            break
        why = _given_up(f"max_iter {k}", sub, secs, cap)
        if why:
            break
        if prev is not None and x is not None and np.array_equal(prev, x):
            why = f"{NOT_REACHED}: stopped by itself at max_iter {k // 2}"
            break
        if k >= MAX_ITER_CAP:
            why = f"{NOT_REACHED}: max_iter {k}"
            break
        prev, k = x, 2 * k
    for t in targets:  # loosest first: its bisection narrows the next one's bracket
        hi = min((c for c, s in runs.items() if s <= t), default=None)
        if hi is None:
            found[t] = Found(None, runs[max(runs)], why)
            continue
        lo = max((c for c in runs if c < hi), default=0)
        while hi - lo > max(1, int(BISECT_REL * hi)):
            mid = (lo + hi) // 2
            probe(mid)
            hi, lo = (mid, lo) if runs[mid] <= t else (hi, mid)
        hi = min(c for c, s in runs.items() if s <= t)
        found[t] = Found(hi, runs[hi])
    return found


def _search_trace(solver, cell, targets, cap, points, found) -> dict[float, Found]:
    traced, stop = solver.trace(cell.subopt, min(targets), cap)
    points += [(b, s, secs) for b, s, secs in traced]
    out = found
    for t in targets:
        hit = next(((b, s) for b, s, _ in traced if s <= t), None)
        last = traced[-1][1] if traced else math.inf
        out[t] = (Found(hit[0], hit[1]) if hit else
                  Found(None, last, f"{NOT_REACHED}: trace stopped at subopt {last:.3g}: "
                                    f"{stop}"))
    return out


def _search_target(solver, cell, targets, cap, points, found) -> dict[float, Found]:
    out = found
    for t in targets:
        secs, x = timed_run(solver, t)
        sub = cell.subopt(x)
        points.append((t, sub, secs))
        out[t] = (Found(t, sub) if sub <= t and secs <= cap else
                  Found(None, sub, f"{NOT_REACHED}: its own stop at {t:g} left subopt "
                                   f"{sub:.3g} ({secs:.3g} s)"))
    return out


SEARCHES = {"tolerance": _search_tolerance, "iteration": _search_iteration,
            "trace": _search_trace, "target": _search_target}


def find_budgets(solver: Solver, cell: Cell, targets, cap: float,
                 points: list | None = None) -> dict[float, Found]:
    """{target: :class:`Found`}: the solver's cheapest budget reaching each target (see the
    module's docstring), ``solver`` already set on ``cell.problem``; each run of the search
    (budget, subopt, CPU s; a trace's points) appended to ``points``. A solver that raises
    reaches none of the targets it had not reached, with the exception as the reason."""
    points = [] if points is None else points
    targets = sorted(targets, reverse=True)
    found: dict[float, Found] = {}  # filled as the search goes: a failure keeps what it had
    try:
        return SEARCHES[solver.sampling](solver, cell, targets, cap, points, found)
    except Exception as exc:  # noqa: BLE001 - any failure of a peer is its rows' note
        why = f"{FAILED}: {type(exc).__name__}: {exc}"[:300]
        return found | {t: Found(None, math.inf, why) for t in targets if t not in found}


def race(cell: Cell, solvers: list[Solver], targets, *, repeats: int, cap: float,
         log: Callable[[str], None] = lambda s: None) -> list[dict]:
    """The long-format rows of ``solvers`` on one cell (see the module's docstring). The heap
    is frozen for the race (``gc.freeze``): the collector's passes in and before each timed
    run would otherwise walk the data set's objects every time (about 1 ms more CPU a timed
    run on leu, and 3x the benchmark's time)."""
    gc.collect()
    gc.freeze()
    try:
        return _race(cell, solvers, targets, repeats, cap, log)
    finally:
        gc.unfreeze()


def _race(cell, solvers, targets, repeats, cap, log) -> list[dict]:
    head = {**cell.labels, "p_star": cell.p_star, "ref_gap": cell.ref_gap}
    rows: list[dict] = []
    jobs: dict[tuple[int, float], list[float]] = {}  # (solver index, budget) -> its targets
    for i, s in enumerate(solvers):
        why = s.supports(cell.problem)
        if why:
            rows += [_row(head, s, t, None, UNSUPPORTED, UNTIMED_ROUND, math.nan, math.nan,
                          why) for t in targets]
            continue
        s.set_problem(cell.problem)
        t0, points = time.process_time(), []
        found = find_budgets(s, cell, targets, cap, points)
        rows += [_row(head, s, math.nan, b, SEARCH, SEARCH_ROUND, secs, sub, "")
                 for b, sub, secs in points]
        log(f"  {s.name}: " + ", ".join(
            f"{t:g} -> {f.budget if f.budget is not None else f.why}"
            for t, f in sorted(found.items(), reverse=True))
            + f" ({time.process_time() - t0:.1f} s searching)")
        for t, f in found.items():
            if f.budget is None:
                status = FAILED if f.why.startswith(FAILED) else NOT_REACHED
                rows.append(_row(head, s, t, None, status, UNTIMED_ROUND, math.nan,
                                 f.subopt, f.why))
            else:
                jobs.setdefault((i, f.budget), []).append(t)
    for r in range(repeats):
        for (i, budget), ts in jobs.items():
            s = solvers[i]
            try:
                secs, x = timed_run(s, budget)
                sub, note, details = cell.subopt(x), "", json.dumps(s.details())
            except Exception as exc:  # noqa: BLE001 - a re-run that fails misses its targets
                secs, sub, details = math.nan, math.inf, ""
                note = f"{type(exc).__name__}: {exc}"[:300]
            for t in ts:
                status = REACHED if sub <= t else MISSED
                rows.append(_row(head, s, t, budget, status, r, secs, sub, note, details))
    return rows


def _row(head, s: Solver, target, budget, status, rnd, secs, sub, note, details="") -> dict:
    return {**head, "solver": s.name, "ours": bool(s.ours), "sampling": s.sampling,
            "target": float(target), "budget": math.nan if budget is None else float(budget),
            "status": status, "round": int(rnd), "cpu_s": float(secs), "subopt": float(sub),
            "note": note, "load1": round(os.getloadavg()[0], 2), "details": details}


def benchmark(cells, solvers: list[Solver], targets, *, repeats: int, cap: float,
              log: Callable[[str], None] = print, modules: tuple[str, ...] = ()):
    """Every cell of ``cells`` (an iterable: each cell is built when its turn comes, and
    dropped after) raced by :func:`race`, under one quiet-machine watch: (the long frame,
    the metadata: machine, versions of numpy, scipy, pandas, pdsparse, the git commit and
    ``modules``, the watch, the settings)."""
    import pandas as pd
    from _harness import Watch, machine, versions

    watch = Watch()
    rows: list[dict] = []
    for cell in cells:
        t0 = time.perf_counter()
        rows += race(cell, solvers, targets, repeats=repeats, cap=cap, log=log)
        log(f"{' / '.join(str(v) for v in cell.labels.values())}: "
            f"{time.perf_counter() - t0:.0f} s")
    meta = {"machine": machine(), "versions": versions(*modules), "watch": watch.stop(),
            "repeats": repeats, "cap_s": cap, "targets": list(targets)}
    return pd.DataFrame(rows), meta
