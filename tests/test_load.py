"""Verdicts that do not flip with the machine's load: a small grid raced twice, once with
both cores kept busy by other processes, judged the same (CPU time, solvers.CPU_CLOCK)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

from pdsparse.problem import Problem
from pdsparse.repro.speedup import speedup_table
from pdsparse.solvers import solve

GRID = [("dual_rcd", {"sampling": "importance", "dual_step": "newton"}),
        ("primal_rcd", {"sampling": "importance"}),
        ("spdc", {})]
# CPU seconds a run may take: about 5x what the slowest (primal RCD, 1.2 s) needs on a quiet
# machine. At 2.0 it missed 1e-6 once with both cores spun and the suite's other worker
# beside it (CPU time itself grows under load, on shared cores): the budget, not the
# verdict, flipped.
BUDGET = 6.0
SEEDS = range(5)


@contextmanager
def busy_cores(count: int):
    """``count`` processes spinning on the CPU (the load of other jobs on a shared machine)."""
    spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for p in spin:
            p.kill()
            p.wait()


def _problem() -> Problem:
    rng = np.random.default_rng(3)
    n, d = 400, 2000  # wide and sparse: dual RCD needs far fewer operations than the others
    A = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.02)
    b = np.where(A @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return Problem(A, b, "logistic", l2=1.0 / n)


def _race(problem: Problem) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The grid raced with one BLAS thread, as the Snakefile runs every job, over
    :data:`SEEDS` seeds interleaved (seed by seed, every solver), so that a verdict is a
    median of per-seed ratios, as a scorecard's is.

    One BLAS thread: the process's CPU time (solvers.CPU_CLOCK) counts a BLAS pool's helper
    threads too, whose spinning grows with the load: dual RCD's time to 1e-3 on this dense
    problem, with four processes spinning, 5.9-13.8 ms in four races on the default pool,
    4.9-6.3 ms on one thread; the default pool once flipped spdc's verdict at 1e-3 in the full
    suite. Several seeds: dual RCD reaches 1e-6 in about 7 ms, where one hiccup of the shared
    machine weighs; one race of one seed once measured spdc 1.9x behind it in CI where it is
    5.2-5.9x on a quiet machine."""
    from threadpoolctl import threadpool_limits

    frames = []
    for seed in SEEDS:
        for solver, options in GRID:
            with threadpool_limits(limits=1, user_api="blas"):
                res = solve(problem, solver, options=options, seed=seed, tol=1e-7,
                            max_seconds=BUDGET, eval_every=1.0)
            t = res.trace
            frames.append(t.assign(solver=solver, problem="toy", dataset="toy", l1=0.0,
                                   l2=0.0, seed=seed, rel_subopt=t.gap / t.primal.abs(),
                                   **options))
    df = pd.concat(frames, ignore_index=True)
    table = speedup_table(df, "dual_rcd", [1e-3, 1e-6], ("sampling", "dual_step"))
    return df, table


def _verdicts(df: pd.DataFrame, table: pd.DataFrame) -> dict:
    """What a scorecard reads off the race: each method's stop, which targets it reached, and
    whether the base is ahead of it (speedup > 1) at each target."""
    stops = df.groupby(["solver", "seed"])["status"].last().to_dict()
    out = {"stops": stops}
    for t in ("0.001", "1e-06"):
        out[t] = {r.solver: (int(r[f"reached_{t}"]), bool(r[f"speedup_{t}"] > 1))
                  for _, r in table.iterrows() if r.solver != "dual_rcd"}
    return out


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores to load")
def test_the_same_grid_gives_the_same_verdicts_with_both_cores_busy():
    problem = _problem()
    quiet_df, quiet = _race(problem)
    with busy_cores(os.cpu_count() or 2):
        busy_df, busy = _race(problem)
    assert _verdicts(quiet_df, quiet) == _verdicts(busy_df, busy)
    # and the margins (medians over seeds) stay clear of 1: the verdicts above could not flip
    # on a noise of 2x
    margins = quiet.loc[quiet.solver != "dual_rcd", "speedup_1e-06"]
    assert (margins > 2).all(), quiet
