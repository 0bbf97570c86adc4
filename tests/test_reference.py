"""The reference P* is certified and agrees with an independent optimizer."""

import numpy as np
import pytest
import scipy.optimize as so
from conftest import make_data

from pdsparse import objective
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution


@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
def test_reference_is_certified_and_matches_scipy(loss):
    A, b = make_data(n=60, d=30, loss=loss, seed=2)
    p = Problem(A, b, loss=loss, l2=1.0 / 60)
    ref = reference_solution(p, rtol=1e-10)
    assert ref.gap <= 1e-10 * abs(ref.p_star)
    assert ref.p_star == pytest.approx(objective.primal(p, ref.w), abs=0)
    assert ref.d_star <= ref.p_star
    res = so.minimize(lambda w: objective.primal(p, w), np.zeros(p.d), method="Powell",
                      options={"xtol": 1e-10, "ftol": 1e-14, "maxfev": 200000})
    # Powell is derivative-free and slow, so it only ever sits above P*: a sandwich test
    assert ref.d_star - 1e-12 <= res.fun
    assert res.fun - ref.p_star < 1e-6


def test_reference_on_badly_scaled_worst_case():
    """Face-Off's X(a,b,c) with entries spanning orders of magnitude still certifies."""
    from pdsparse.data.synthetic import worst_case_general
    A, b = worst_case_general(d=50, n=400, a=1.0, b=1e-3, c=1e-3, seed=0)
    p = Problem(A, b, loss="logistic", l2=1.0 / 400)
    ref = reference_solution(p, rtol=1e-10)
    assert ref.rel_gap <= 1e-10


def test_route_by_penalty():
    """Pure l2 keeps the dual-RCD route; the elastic net with l1 > 0 takes Prox-SDCA and the
    balls the first-order route (each recorded); for l1 -> 0 both meet the pure-l2 answer."""
    from pdsparse.penalties import ElasticNet, L1Ball

    A, b = make_data(n=60, d=30, loss="logistic", seed=2)
    ridge = reference_solution(Problem(A, b, loss="logistic", l2=1.0 / 60))
    assert ridge.method in ("dual_rcd_newton", "trust_ncg")
    tiny_l1 = reference_solution(Problem(A, b, "logistic", ElasticNet(1.0 / 60, 1e-12)))
    assert tiny_l1.method == "prox_sdca"
    assert tiny_l1.p_star == pytest.approx(ridge.p_star, rel=1e-9)
    # the fallback: the first-order route alone agrees
    import time

    from pdsparse.reference import _first_order

    apg = _first_order(Problem(A, b, "logistic", ElasticNet(1.0 / 60, 1e-12)), 1e-10, 20000,
                       60.0, time.perf_counter())
    assert apg.method in ("apg_restart", "newton_support")
    assert apg.p_star == pytest.approx(ridge.p_star, rel=1e-9)
    ball = reference_solution(Problem(A, b, "logistic", L1Ball(1.0, 1.0 / 60)))
    assert ball.method in ("apg_restart", "newton_support") and ball.rel_gap <= 1e-10
    assert ball.p_star > ridge.p_star


@pytest.mark.parametrize("penalty", ["l2", "l1_ball"])
def test_progress_lines_carry_the_gap_and_the_time(monkeypatch, penalty):
    """A long reference is not silent (issue 29 item 11): each route says it starts, then a
    line with the certified gap and the wall time at most every PROGRESS_SECONDS; with the
    interval at 0 every evaluation speaks, with a huge one only the starts."""
    from pdsparse import reference
    from pdsparse.penalties import L1Ball

    A, b = make_data(n=60, d=30, loss="logistic", seed=2)
    pen = L1Ball(1.0, 1.0 / 60) if penalty == "l1_ball" else None
    p = Problem(A, b, "logistic", pen) if pen else Problem(A, b, "logistic", l2=1.0 / 60)
    route = "accelerated proximal gradient" if pen else "dual_rcd_newton"

    def lines(every: float) -> list[str]:
        monkeypatch.setattr(reference, "PROGRESS_SECONDS", every)
        out: list[str] = []
        reference_solution(p, rtol=1e-10, progress=out.append)
        return out

    quiet = lines(1e9)
    assert len(quiet) == 1 and route in quiet[0] and "60 x 30" in quiet[0]
    every = lines(0.0)
    gaps = [line for line in every if "relative" in line and "target 1e-10" in line]
    assert len(gaps) >= (2 if pen is None else 1)
    for line in every:
        assert float(line.split(" s: ", 1)[0]) >= 0  # the wall time so far leads each line
    assert float(gaps[-1].split("relative ")[1].split(" ")[0]) <= 1e-10


def test_reference_command_logs_progress(tmp_path, capsys):
    """``pdsparse reference`` (the workflow's job) prints the lines on stderr: its log."""
    from pdsparse.cli import main
    from pdsparse.data.store import save_dataset

    A, b = make_data(n=60, d=30, loss="logistic", seed=2)
    npz = tmp_path / "tiny.npz"
    save_dataset(npz, A, b, {"name": "tiny", "task": "binary"})
    code = main(["reference", "--data", str(npz), "--loss", "logistic", "--l2", "1/n",
                 "--out", str(tmp_path / "ref.parquet")])
    err = capsys.readouterr().err
    assert code == 0
    assert "pdsparse reference: " in err and "dual_rcd_newton to relative gap" in err


def test_where_prox_newton_does_not_certify_the_next_route_does(monkeypatch):
    """Proximal Newton comes first for an intercept and for pure l1; where it does not
    certify, primal RCD (an intercept) and the first-order route (pure l1) still do."""
    from pdsparse import reference
    from pdsparse.penalties import ElasticNet
    from pdsparse.reference import CertificationError

    A, b = make_data(n=60, d=30, loss="logistic", seed=2)
    by_solver = reference._by_solver

    def no_newton(problem, *args, method="dual_rcd", **kw):
        if method == "prox_newton":
            raise CertificationError("stopped short (test)")
        return by_solver(problem, *args, method=method, **kw)

    problems = {"intercept": Problem(A, b, "logistic", l2=1.0 / 60, intercept=True),
                "pure l1": Problem(A, b, "logistic", ElasticNet(0.0, 0.01))}
    first = {k: reference_solution(p) for k, p in problems.items()}
    assert {r.method for r in first.values()} == {"prox_newton"}
    monkeypatch.setattr(reference, "_by_solver", no_newton)
    lines = []
    then = {k: reference_solution(p, progress=lines.append) for k, p in problems.items()}
    assert then["intercept"].method == "primal_rcd"
    assert then["pure l1"].method in ("apg_restart", "newton_support")
    assert any("stopped short (test)" in line for line in lines)
    for k, ref in then.items():
        assert ref.rel_gap <= 1e-10
        assert abs(ref.p_star - first[k].p_star) <= ref.gap + first[k].gap


def test_an_ill_conditioned_intercept_problem_is_certified():
    """n = 27 < d = 30, l2 = 1e-4, an intercept: primal RCD alone stops at a relative gap of
    2.5e-4 after its 20,000 epochs (the route before prox_newton came first: a
    CertificationError); prox_newton certifies it, at the closed-form optimum."""
    import scipy.sparse as sp

    from pdsparse import reference
    from pdsparse.reference import CertificationError

    rng = np.random.default_rng(42)
    X, y = rng.uniform(size=(27, 30)), rng.integers(0, 3, 27).astype(float)
    p = Problem(sp.csr_matrix(X), y, "squared", l2=1e-4, intercept=True)
    with pytest.raises(CertificationError):
        reference._by_solver(p, 1e-10, 20000, 60.0, 0, 0.0, method="primal_rcd")
    ref = reference_solution(p)
    assert ref.method == "prox_newton" and ref.rel_gap <= 1e-10
    Xc = np.column_stack([X, np.ones(27)])
    H = Xc.T @ Xc / 27 + np.diag(np.r_[np.full(30, 1e-4), 0.0])
    np.testing.assert_allclose(ref.w, np.linalg.solve(H, Xc.T @ y / 27), rtol=1e-7, atol=1e-9)
