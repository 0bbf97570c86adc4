"""Acc PG, FW, SVRG, SCGS and STORC are written once (``pdsparse.solvers.ball``), against a
ball's oracles: the trace-norm classes add nothing but the trace-norm ball's oracles, and the
registry builds the one or the other by the penalty (the iterates are checked against the
papers' updates in ``test_ball_solvers.py`` and ``test_trace_solvers.py``)."""

import numpy as np
import pytest
from conftest import make_data

from pdsparse.penalties import L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers import SOLVERS, ball, trace

METHODS = {"acc_pg": "AccPG", "fw": "FW", "svrg": "SVRG", "scgs": "SCGS", "storc": "STORC"}


@pytest.mark.parametrize("method", list(METHODS))
def test_the_trace_class_is_the_kernel_with_the_trace_oracles(method):
    one = getattr(ball, f"{METHODS[method]}Kernel")
    bound = getattr(trace, f"Trace{METHODS[method]}Kernel")
    assert bound.__bases__ == (one,) and one.oracles is ball.L1Oracles
    assert bound.oracles is trace.TraceOracles
    assert set(vars(bound)) <= {"__module__", "__qualname__", "__doc__", "oracles",
                                "__firstlineno__", "__static_attributes__"}
    A, b = make_data(n=12, d=5, loss="squared")
    l1 = SOLVERS[method].make_kernel(Problem(A, b, "squared", penalty=L1Ball(1.0, 0.1)),
                                     {"step": "open_loop"} if method == "fw" else None)
    tr = SOLVERS[method].make_kernel(Problem(A, np.column_stack([b, -b]), "squared",
                                             penalty=TraceBall(1.0, 0.1)))
    assert type(l1) is one and type(tr) is bound
    assert isinstance(l1.ball, ball.L1Oracles) and isinstance(tr.ball, trace.TraceOracles)
    assert l1.svd is None and tr.svd == "lanczos"
