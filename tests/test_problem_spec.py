"""``Problem.from_spec``: the one constructor of a problem from its spec (a ProblemKey)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_data

from pdsparse.data.store import Dataset
from pdsparse.errors import ConfigError
from pdsparse.penalties import ElasticNet, L1Ball
from pdsparse.problem import Problem, ProblemKey


def test_from_spec_resolves_the_penalty_on_the_data_and_keeps_the_key():
    A, b = make_data(n=40, d=10)
    ds = Dataset(name="tiny", A=A, b=b, meta={"task": "binary"})
    key = ProblemKey("tiny", "logistic", "elastic_net", {"l2": "2/n", "l1": 0.01}, recipe="r1")
    problem = Problem.from_spec(key, ds)
    assert problem.key is key and problem.name == "tiny"
    assert problem.penalty == ElasticNet(2 / 40, 0.01)
    assert problem.loss == "logistic" and problem.A is ds.A
    ball = Problem.from_spec(ProblemKey("tiny", "squared", "l1_ball", {"radius": 3}), ds)
    assert ball.penalty == L1Ball(3.0, 0.0)


def test_from_dataset_and_from_spec_agree():
    A, b = make_data(n=30, d=8)
    ds = Dataset(name="tiny", A=A, b=b, meta={"task": "binary"})
    a = Problem.from_dataset(ds, "smooth_hinge", "1/n", 0.02)
    s = Problem.from_spec(ProblemKey("tiny", "smooth_hinge", "elastic_net",
                                     {"l2": "1/n", "l1": 0.02}), ds)
    assert a.key == s.key and a.penalty == s.penalty
    assert np.array_equal(a.b, s.b) and (a.csr != s.csr).nnz == 0


def test_a_multiclass_set_is_solved_one_vs_rest():
    A, _ = make_data(n=30, d=8)
    y = np.arange(30) % 3
    ds = Dataset(name="three", A=A, b=y.astype(float), meta={"task": "multiclass"})
    problem = Problem.from_spec(ProblemKey("three", "logistic", "elastic_net", {"l2": 0.1}), ds)
    assert problem.matrix and problem.k == 3
    assert set(np.unique(problem.B)) == {-1.0, 1.0}
    squared = Problem.from_spec(ProblemKey("three", "squared", "elastic_net", {"l2": 0.1}), ds)
    assert not squared.matrix  # the squared loss takes the labels as they are


def test_a_spec_must_be_a_problem_key():
    A, b = make_data(n=10, d=4)
    ds = Dataset(name="tiny", A=A, b=b)
    with pytest.raises(ConfigError, match="ProblemKey"):
        Problem.from_spec({"loss": "logistic"}, ds)
