"""benchmarks/epoch_vs_matvec.py: the floor's parts on a tiny matrix (no timing asserted)."""

import importlib.util
from pathlib import Path

import scipy.sparse as sp
from conftest import make_data

from pdsparse.problem import Problem

REPO = Path(__file__).resolve().parents[1]


def bench():
    spec = importlib.util.spec_from_file_location("epoch_vs_matvec",
                                                  REPO / "benchmarks" / "epoch_vs_matvec.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_floor_counts_one_exp_per_nonzero_primal_and_per_row_dual():
    E = bench()
    M = sp.random(7, 5, density=0.5, random_state=0, format="csc")
    for solver, loss, want in [("primal_rcd", "logistic", M.nnz), ("dual_rcd", "logistic", 7),
                               ("primal_rcd", "squared", 0)]:
        floor, rmatvec, exp, exps = E.floor_calls(M, solver, loss)
        assert exps == want
        floor(), rmatvec(), exp()  # they run


def test_bench_config_reports_the_floor_beside_the_matvec():
    E = bench()
    A, b = make_data(n=30, d=12, density=0.3, seed=1)
    p = Problem(A, b, loss="logistic", l2=1.0 / 30)
    r = E.bench_config(p, "primal_rcd", "uniform", "", repeats=2, min_sample_s=0.0, seed=0)
    assert r["floor_exps"] == p.nnz and {"floor_s", "ratio_floor", "rmatvec_s", "exp_s"} <= set(r)
    assert set(E.COLUMNS) - set(r) <= {"dataset", "n", "d", "density", "loss", "l2",
                                         "normalization", "source", "positive_class"}
