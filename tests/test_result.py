"""The summary of :class:`pdsparse.solvers.Result`: what a user reads first (issue 29, item 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pdsparse.data.synthetic import zipf_bow
from pdsparse.problem import Problem
from pdsparse.solvers import TRACE_COLUMNS, Result, solve


@pytest.fixture(scope="module")
def result():
    A, b = zipf_bow(200, 3000, 20, 1.0, seed=0)
    return solve(Problem(A, b, "logistic", l2=0.01), "dual_rcd", tol=1e-6)


def test_summary_attributes_are_the_last_evaluation(result):
    last = result.trace.iloc[-1]
    assert result.objective == last["primal"]
    assert result.gap == last["gap"]
    assert result.rel_gap == last["gap"] / abs(last["primal"])
    assert result.epochs == last["epoch"]
    assert result.time_s == last["time_s"]
    assert result.cpu_s == result.setup_s + last["time_s"]
    assert result.status == last["status"] == "converged"
    assert 0 <= result.rel_gap <= 1e-6


def test_repr_is_short_and_shows_the_summary(result):
    text = repr(result)
    assert len(text) < 300  # was the whole w: 10,000+ characters for d = 300
    assert text.startswith("Result(dual_rcd: converged, objective=")
    assert f"w: {result.w.shape}" in text and f"alpha: {result.alpha.shape}" in text
    assert "rel_gap=" in text and "epochs=" in text and "cpu_s=" in text
    assert "array" not in text and "[" not in text


def test_rel_gap_is_inf_when_P_is_zero_or_not_finite():
    def res(primal: float, gap: float) -> Result:
        row = dict.fromkeys(TRACE_COLUMNS, 0.0)
        row.update(primal=primal, gap=gap, status="diverged")
        return Result([tuple(row[c] for c in TRACE_COLUMNS)], np.zeros(3), np.zeros(2),
                      "diverged")

    assert res(0.0, 0.0).rel_gap == math.inf
    assert res(math.nan, math.nan).rel_gap == math.inf
    assert res(math.inf, math.nan).rel_gap == math.inf
    assert res(2.0, 1e-3).rel_gap == 5e-4
    assert "objective=nan" in repr(res(math.nan, math.nan))
