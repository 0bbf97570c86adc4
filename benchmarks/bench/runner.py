"""The runner: each solver's cheapest budget at each target, then interleaved CPU-time rounds.

The protocol (every benchmark on it alike):

1. a :class:`Cell` is one problem with its certified optimum P* (``reference_solution``'s
   duality gap); a solver's iterate is judged by its relative suboptimality
   (P(x) - P*) / |P*|, P evaluated by :func:`pdsparse.objective.primal` outside every clock;
2. :func:`find_budgets`: for each target, loosest first, the solver's cheapest budget that
   reaches it by its ``sampling`` (tolerances by decades; iteration caps doubled from 1, then
   bisected to within 3 %; or the first point of its own trace) within ``cap`` CPU seconds a
   run. A solver that raises, returns a non-finite P, or stops improving before the target
   reaches nothing, with the reason;
3. :func:`race`: ``repeats`` rounds, each timing every (solver, budget) once in the same
   order (``time.process_time`` around ``run`` alone, ``gc.collect()`` before), so that a
   drift of the machine's load hits all alike; every re-run's iterate is judged again, and a
   re-run that misses its target is recorded as such (the report never counts it);
4. the rows, one per timed run (``round`` 0, 1, ...) or per (solver, target) that reached
   nothing (``round`` -1, ``cpu_s`` NaN): the long format (:data:`COLUMNS` after the cell's
   labels), kept in one Parquet file by :func:`bench.report.write`.

Single-threaded BLAS is the caller's (``OMP_NUM_THREADS=1`` before numpy is imported), and
so is the quiet-machine record (``_harness.Watch`` around the whole run, in the metadata).
"""

from __future__ import annotations

import gc
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bench.solver import TOLS, Solver

COLUMNS = ("solver", "ours", "sampling", "target", "budget", "status", "round", "cpu_s",
           "subopt", "note", "load1")
"""The runner's columns of the long format, after the cell's labels and P*."""

REACHED, MISSED, NOT_REACHED, FAILED, UNSUPPORTED = (
    "reached", "missed", "not reached", "failed", "unsupported")
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


def _failed(exc: Exception) -> Found:
    return Found(None, math.inf, f"{FAILED}: {type(exc).__name__}: {exc}"[:300])


def _search_tolerance(solver, cell, targets, cap) -> dict[float, Found]:
    found: dict[float, Found] = {}
    last = math.inf
    for tol in TOLS:
        try:
            secs, x = timed_run(solver, tol)
        except Exception as exc:  # noqa: BLE001 - any failure of a peer is its row's note
            return {t: found.get(t, _failed(exc)) for t in targets}
        sub = cell.subopt(x)
        last = sub
        if secs > cap:
            why = f"{NOT_REACHED}: tol {tol:g} took {secs:.3g} s > cap {cap:g} s"
            break
        for t in targets:
            if t not in found and sub <= t:
                found[t] = Found(tol, sub)
        if len(found) == len(targets):
            return found
        if not math.isfinite(sub):
            why = f"{FAILED}: P not finite at tol {tol:g} (diverged)"
            break
    else:
        why = f"{NOT_REACHED}: tightest tol {TOLS[-1]:g} at subopt {last:.3g}"
    return {t: found.get(t, Found(None, last, why)) for t in targets}


def _search_iteration(solver, cell, targets, cap) -> dict[float, Found]:
    runs: dict[int, tuple[float, float]] = {}  # cap -> (subopt, secs)

    def probe(k: int) -> float:
        secs, x = timed_run(solver, k)
        runs[k] = (cell.subopt(x), secs)
        probe.x = x
        return runs[k][0]

    why, k, prev = "", 1, None
    try:
        while True:
            sub = probe(k)
            if sub <= min(targets):
                break
            if runs[k][1] > cap:
                why = f"{NOT_REACHED}: max_iter {k} took {runs[k][1]:.3g} s > cap {cap:g} s"
                break
            if not math.isfinite(sub):
                why = f"{FAILED}: P not finite at max_iter {k} (diverged)"
                break
            if prev is not None and np.array_equal(prev, probe.x):
                why = f"{NOT_REACHED}: stopped by itself at subopt {sub:.3g} (max_iter {k})"
                break
            if k >= MAX_ITER_CAP:
                why = f"{NOT_REACHED}: max_iter {k} at subopt {sub:.3g}"
                break
            prev, k = probe.x, 2 * k
        found = {}
        for t in sorted(targets, reverse=True):
            hi = min((c for c, (s, _) in runs.items() if s <= t), default=None)
            if hi is None:
                continue
            lo = max((c for c in runs if c < hi), default=0)
            while hi - lo > max(1, int(BISECT_REL * hi)):
                mid = (lo + hi) // 2
                if probe(mid) <= t:
                    hi = mid
                else:
                    lo = mid
            hi = min((c for c, (s, _) in runs.items() if s <= t))
            found[t] = Found(hi, runs[hi][0])
    except Exception as exc:  # noqa: BLE001
        return {t: _failed(exc) for t in targets}
    last = runs[max(runs)][0] if runs else math.inf
    return {t: found.get(t, Found(None, last, why)) for t in targets}


def _search_trace(solver, cell, targets, cap) -> dict[float, Found]:
    try:
        points, stop = solver.trace(cell.subopt, min(targets), cap)
    except Exception as exc:  # noqa: BLE001
        return {t: _failed(exc) for t in targets}
    out = {}
    for t in targets:
        hit = next(((b, s) for b, s in points if s <= t), None)
        last = points[-1][1] if points else math.inf
        out[t] = (Found(hit[0], hit[1]) if hit else
                  Found(None, last, f"{NOT_REACHED}: trace stopped at subopt {last:.3g}: "
                                    f"{stop}"))
    return out


SEARCHES = {"tolerance": _search_tolerance, "iteration": _search_iteration,
            "trace": _search_trace}


def find_budgets(solver: Solver, cell: Cell, targets, cap: float) -> dict[float, Found]:
    """{target: :class:`Found`}: the solver's cheapest budget reaching each target (see the
    module's docstring), ``solver`` already set on ``cell.problem``."""
    return SEARCHES[solver.sampling](solver, cell, sorted(targets, reverse=True), cap)


def race(cell: Cell, solvers: list[Solver], targets, *, repeats: int, cap: float,
         log: Callable[[str], None] = lambda s: None) -> list[dict]:
    """The long-format rows of ``solvers`` on one cell (see the module's docstring)."""
    head = {**cell.labels, "p_star": cell.p_star, "ref_gap": cell.ref_gap}
    rows: list[dict] = []
    jobs: dict[tuple[int, float], list[float]] = {}  # (solver index, budget) -> its targets
    for i, s in enumerate(solvers):
        why = s.supports(cell.problem)
        if why:
            rows += [_row(head, s, t, None, UNSUPPORTED, -1, math.nan, math.nan, why)
                     for t in targets]
            continue
        s.set_problem(cell.problem)
        t0 = time.process_time()
        found = find_budgets(s, cell, targets, cap)
        log(f"  {s.name}: " + ", ".join(
            f"{t:g} -> {f.budget if f.budget is not None else f.why}"
            for t, f in sorted(found.items(), reverse=True))
            + f" ({time.process_time() - t0:.1f} s searching)")
        for t, f in found.items():
            if f.budget is None:
                status = FAILED if f.why.startswith(FAILED) else NOT_REACHED
                rows.append(_row(head, s, t, None, status, -1, math.nan, f.subopt, f.why))
            else:
                jobs.setdefault((i, f.budget), []).append(t)
    for r in range(repeats):
        for (i, budget), ts in jobs.items():
            s = solvers[i]
            try:
                secs, x = timed_run(s, budget)
                sub, note = cell.subopt(x), ""
            except Exception as exc:  # noqa: BLE001 - a re-run that fails misses its targets
                secs, sub, note = math.nan, math.inf, f"{type(exc).__name__}: {exc}"[:300]
            for t in ts:
                status = REACHED if sub <= t else MISSED
                rows.append(_row(head, s, t, budget, status, r, secs, sub, note))
    return rows


def _row(head, s: Solver, target, budget, status, rnd, secs, sub, note) -> dict:
    return {**head, "solver": s.name, "ours": bool(s.ours), "sampling": s.sampling,
            "target": float(target), "budget": math.nan if budget is None else float(budget),
            "status": status, "round": int(rnd), "cpu_s": float(secs), "subopt": float(sub),
            "note": note, "load1": round(os.getloadavg()[0], 2)}


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
