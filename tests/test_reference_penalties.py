"""Certified references for the elastic net with l1 > 0, the l1 ball and the trace-norm ball
agree with independent solutions: scipy.optimize on a split formulation w = u - v (u, v >= 0;
L-BFGS-B, or SLSQP with sum(u + v) <= r for the l1 ball) and, for the trace ball, projected
gradient in plain NumPy with full SVDs and a bisection projection of the singular values."""

import numpy as np
import pytest
import scipy.optimize as so
from conftest import make_data
from test_penalties import loss_np, make_matrix_data

from pdsparse import objective
from pdsparse.penalties import ElasticNet, L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.reference import CertificationError, reference_solution

LOSSES = ["logistic", "squared", "smooth_hinge"]
BETA = {"logistic": 0.25, "squared": 1.0, "smooth_hinge": 1.0}


def primal_np(A, B, loss, W, l2, l1=0.0):
    v, _ = loss_np(loss, A @ W, B)
    return v.sum() / A.shape[0] + 0.5 * l2 * np.sum(W * W) + l1 * np.abs(W).sum()


def split_solve(A, B, loss, l2, l1=0.0, radius=None):
    """min P by scipy on W = U - V, U, V >= 0 (vector or matrix W, flattened)."""
    A = A.toarray()
    n, d = A.shape
    shape = (d,) + B.shape[1:]
    m = int(np.prod(shape))

    def fun(z):
        W = (z[:m] - z[m:]).reshape(shape)
        v, g = loss_np(loss, A @ W, B)
        val = v.sum() / n + 0.5 * l2 * np.sum(W * W) + l1 * z.sum()
        gW = (A.T @ g / n + l2 * W).reshape(-1)
        return val, np.concatenate([gW + l1, -gW + l1])

    z0 = np.zeros(2 * m)
    bounds = [(0, None)] * (2 * m)
    if radius is None:
        res = so.minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 50000,
                                   "maxfun": 100000})
    else:
        cons = [{"type": "ineq", "fun": lambda z: radius - z.sum(),
                 "jac": lambda z: -np.ones_like(z)}]
        res = so.minimize(fun, z0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                          options={"ftol": 1e-16, "maxiter": 5000})
    W = (res.x[:m] - res.x[m:]).reshape(shape)
    if radius is not None and np.abs(W).sum() > radius:  # SLSQP's constraint tolerance
        W *= radius / np.abs(W).sum()
    return W


def project_singular_values(s, r):
    """Onto {p >= 0, sum p <= r} by bisection on the threshold (not Duchi's sort)."""
    if s.sum() <= r:
        return s
    lo, hi = 0.0, s.max()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.maximum(s - mid, 0).sum() > r:
            lo = mid
        else:
            hi = mid
    return np.maximum(s - hi, 0)


def trace_pg(A, B, loss, l2, r, iters=60000):
    """Projected gradient with step 1/L and full SVDs."""
    A = A.toarray()
    n = A.shape[0]
    L = BETA[loss] * np.linalg.norm(A, 2) ** 2 / n + l2
    X = np.zeros((A.shape[1], B.shape[1]))
    for _ in range(iters):
        _, g = loss_np(loss, A @ X, B)
        Y = X - (A.T @ g / n + l2 * X) / L
        U, s, Vt = np.linalg.svd(Y, full_matrices=False)
        X_new = (U * project_singular_values(s, r)) @ Vt
        if np.abs(X_new - X).max() <= 1e-15 * (1 + np.abs(X).max()):
            return X_new
        X = X_new
    return X


def check(ref, p, W_indep, l1=0.0):
    """Certified, and the independent solution's objective agrees to 1e-7 relative."""
    assert ref.rel_gap <= 1e-10 and ref.gap <= 1e-10 * abs(ref.p_star)
    assert ref.p_star == objective.primal(p, ref.w)
    assert ref.w.shape == p.var_shape and ref.alpha.shape == p.dual_shape
    p_indep = primal_np(p.csr, p.b, p.loss, W_indep, p.l2, l1)
    assert abs(p_indep - ref.p_star) <= 1e-7 * abs(ref.p_star)
    # the certified lower bound holds for the independent (feasible) point too
    assert p_indep >= ref.p_star - ref.gap - 1e-12 * abs(ref.p_star)


def ridge_norm1(A, b, loss, l2):
    ref = reference_solution(Problem(A, b, loss, l2=l2))
    return np.abs(ref.w).sum(), ref.p_star


@pytest.mark.parametrize("loss", LOSSES)
def test_elastic_net_with_l1(loss):
    A, b = make_data(n=40, d=15, loss=loss, seed=4)
    n = A.shape[0]
    l1 = 0.3 * np.abs(objective.loss_gradient(Problem(A, b, loss, l2=1.0), np.zeros(15))).max()
    p = Problem(A, b, loss, ElasticNet(1.0 / n, l1))
    ref = reference_solution(p)
    # the elastic net's route (first-order: the fallback); Prox-SDCA alone where it
    # certifies within QUICK_EPOCHS, else from proximal Newton's dual point
    assert ref.method in ("prox_sdca", "prox_newton_prox_sdca")
    assert 0 < np.count_nonzero(ref.w) < p.d  # the l1 term matters
    W = split_solve(A, b, loss, p.l2, l1)
    check(ref, p, W, l1)
    np.testing.assert_allclose(ref.w, W, atol=1e-4 * np.abs(W).max())


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("matrix", [False, True])
def test_an_elastic_net_prox_sdca_leaves_is_started_by_prox_newton(loss, matrix,
                                                                   monkeypatch):
    """Where Prox-SDCA does not certify within QUICK_EPOCHS (10 here, a small l2), proximal
    Newton goes on from its primal iterate to a relative gap of 1e-3 and Prox-SDCA finishes
    from Newton's dual point: certified, the independent optimum, and Prox-SDCA's P* alone
    within the two gaps; one-vs-rest (a label matrix) as well."""
    from pdsparse import reference

    monkeypatch.setattr(reference, "QUICK_EPOCHS", 10)
    if matrix:
        A, b = make_matrix_data(n=40, d=12, k=3, loss=loss, seed=5)
    else:
        A, b = make_data(n=40, d=15, loss=loss, seed=4)
    grad0 = objective.loss_gradient(Problem(A, b, loss, l2=1.0), np.zeros((A.shape[1],)
                                                                         + b.shape[1:]))
    l1 = 0.1 * np.abs(grad0).max()
    p = Problem(A, b, loss, ElasticNet(1e-3, l1))
    started = []
    newton_start = reference._newton_start
    monkeypatch.setattr(reference, "_newton_start",
                        lambda *a: started.append(a[1]) or newton_start(*a))
    ref = reference_solution(p)
    assert ref.method == "prox_newton_prox_sdca" and len(started) == 1
    assert started[0].shape == p.var_shape  # Prox-SDCA's primal iterate
    assert 0 < np.count_nonzero(ref.w) < ref.w.size
    check(ref, p, split_solve(A, b, loss, p.l2, l1), l1)
    alone = reference._by_solver(p, 1e-10, 1e6, 600.0, 0, 0.0)
    assert alone.method == "prox_sdca"
    assert abs(alone.p_star - ref.p_star) <= alone.gap + ref.gap


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("l2", [0.0, 1.0 / 40])
def test_l1_ball_active(loss, l2):
    A, b = make_data(n=40, d=15, loss=loss, seed=5)
    norm, _ = ridge_norm1(A, b, loss, 1.0 / 40)
    r = 0.4 * norm
    p = Problem(A, b, loss, L1Ball(r, l2))
    ref = reference_solution(p)
    assert np.abs(ref.w).sum() == pytest.approx(r, rel=1e-9)  # on the sphere
    check(ref, p, split_solve(A, b, loss, l2, radius=r))


@pytest.mark.parametrize("loss", LOSSES)
def test_l1_ball_inactive_is_the_ridge_problem(loss):
    A, b = make_data(n=40, d=15, loss=loss, seed=6)
    l2 = 1.0 / 40
    norm, p_ridge = ridge_norm1(A, b, loss, l2)
    p = Problem(A, b, loss, L1Ball(2.0 * norm, l2))
    ref = reference_solution(p)
    assert np.abs(ref.w).sum() < 0.6 * p.radius
    # the constraint is inactive: the same optimum as the unconstrained problem's (whose
    # reference comes from the other route, dual RCD)
    assert ref.p_star == pytest.approx(p_ridge, rel=1e-9)
    check(ref, p, split_solve(A, b, loss, l2, radius=2.0 * norm))


def test_l1_ball_inactive_without_l2():
    """Least squares inside a ball: g* = r ||V||_inf amplifies rounding in grad f by r."""
    A, b = make_data(n=60, d=12, loss="squared", seed=7)
    w_ls = np.linalg.lstsq(A.toarray(), b, rcond=None)[0]
    r = 1.5 * np.abs(w_ls).sum()
    p = Problem(A, b, "squared", L1Ball(r))
    ref = reference_solution(p)
    np.testing.assert_allclose(ref.w, w_ls, atol=1e-8 * np.abs(w_ls).max())
    check(ref, p, w_ls)


@pytest.mark.parametrize("loss", LOSSES)
def test_matrix_elastic_net_is_k_vector_problems(loss):
    A, B = make_matrix_data(n=30, d=6, k=3, loss=loss, seed=3)
    for pen in (ElasticNet(1.0 / 30), ElasticNet(1.0 / 30, 0.02)):
        p = Problem(A, B, loss, pen)
        ref = reference_solution(p)
        cols = [reference_solution(Problem(A, np.ascontiguousarray(B[:, c]), loss, pen))
                for c in range(3)]
        if pen.l1 == 0:
            assert {c.method for c in cols} <= {"dual_rcd_newton", "trust_ncg"}
        assert ref.p_star == pytest.approx(sum(c.p_star for c in cols), rel=1e-9)
        check(ref, p, split_solve(A, B, loss, pen.l2, pen.l1), pen.l1)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_matrix_l1_ball(loss):
    A, B = make_matrix_data(n=30, d=6, k=3, loss=loss, seed=8)
    ridge = reference_solution(Problem(A, B, loss, ElasticNet(1.0 / 30)))
    r = 0.4 * np.abs(ridge.w).sum()
    p = Problem(A, B, loss, L1Ball(r, 1.0 / 30))
    ref = reference_solution(p)
    assert np.abs(ref.w).sum() == pytest.approx(r, rel=1e-9)
    check(ref, p, split_solve(A, B, loss, p.l2, radius=r))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("l2", [0.0, 0.05])
def test_trace_ball_active(loss, l2):
    A, B = make_matrix_data(n=30, d=6, k=4, loss=loss, seed=9)
    ridge = reference_solution(Problem(A, B, loss, ElasticNet(0.05)))
    r = 0.4 * np.linalg.svd(ridge.w, compute_uv=False).sum()
    p = Problem(A, B, loss, TraceBall(r, l2))
    ref = reference_solution(p)
    assert np.linalg.svd(ref.w, compute_uv=False).sum() == pytest.approx(r, rel=1e-9)
    X = trace_pg(A, B, loss, l2, r)
    check(ref, p, X)
    np.testing.assert_allclose(ref.w, X, atol=1e-5 * np.abs(X).max())


@pytest.mark.parametrize("loss", LOSSES)
def test_trace_ball_inactive_is_the_ridge_problem(loss):
    A, B = make_matrix_data(n=30, d=6, k=4, loss=loss, seed=10)
    ridge = reference_solution(Problem(A, B, loss, ElasticNet(0.05)))
    r = 3.0 * np.linalg.svd(ridge.w, compute_uv=False).sum()
    ref = reference_solution(Problem(A, B, loss, TraceBall(r, 0.05)))
    assert ref.rel_gap <= 1e-10
    assert ref.p_star == pytest.approx(ridge.p_star, rel=1e-9)
    np.testing.assert_allclose(ref.w, ridge.w, atol=1e-5 * np.abs(ridge.w).max())


def test_uncertified_raises():
    A, b = make_data(n=40, d=15, loss="logistic", seed=4)
    with pytest.raises(CertificationError, match="did not reach"):
        reference_solution(Problem(A, b, "logistic", ElasticNet(1e-3, 1e-3)), max_epochs=4)
    with pytest.raises(CertificationError, match="did not reach"):
        reference_solution(Problem(A, b, "logistic", L1Ball(5.0)), rtol=1e-30)


def test_reference_record_reports_the_ball_at_the_optimum():
    """PDBFW's Table 2 and captions need nnz(x*) (rank for the trace ball) and whether the
    constraint is active; elastic-net records keep their columns."""
    from pdsparse.penalties import ElasticNet, L1Ball, TraceBall
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_record, reference_solution

    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 12))
    b = np.sign(rng.standard_normal(40))
    tight = Problem(A, b, "smooth_hinge", penalty=L1Ball(0.3, 0.25))
    rec = reference_record(tight, reference_solution(tight), "t", "t")
    assert rec["active"] and np.isclose(rec["solution_norm"], 0.3) and rec["solution_nnz"] < 12
    loose = Problem(A, b, "smooth_hinge", penalty=L1Ball(100.0, 0.25))
    rec = reference_record(loose, reference_solution(loose), "t", "t")
    assert not rec["active"] and rec["solution_norm"] < 100 and rec["solution_nnz"] == 12
    X0 = rng.standard_normal((12, 2)) @ rng.standard_normal((2, 5))
    trace = Problem(A, A @ X0, "squared", penalty=TraceBall(1.0, 0.1))
    rec = reference_record(trace, reference_solution(trace), "t", "t")
    assert rec["active"] and 1 <= rec["solution_nnz"] <= 5
    net = Problem(A, b, "smooth_hinge", penalty=ElasticNet(0.25))
    assert "active" not in reference_record(net, reference_solution(net), "t", "t")


def test_reference_record_counts_the_optimum_supports():
    """x*'s nonzeros and those of the paired dual alpha(x*) = -phi'(A x*) (0 where the smooth
    hinge's margin reaches 1): DGPD's Table 2 is compared with both."""
    from pdsparse.objective import alpha_of_w
    from pdsparse.penalties import ElasticNet
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_record, reference_solution

    rng = np.random.default_rng(1)
    A = rng.standard_normal((60, 30))
    b = np.sign(A[:, 0] + 0.3 * rng.standard_normal(60))
    p = Problem(A, b, "smooth_hinge", penalty=ElasticNet(0.05, 0.02))
    ref = reference_solution(p)
    rec = reference_record(p, ref, "t", "t")
    margins = b * (A @ ref.w)
    assert rec["optimum_nnz_dual"] == int(np.sum(margins < 1)) < 60  # some margins reach 1
    assert rec["optimum_nnz_primal"] == int(np.count_nonzero(ref.w)) < 30  # l1 zeroes some
    assert rec["optimum_nnz_dual"] == np.count_nonzero(alpha_of_w(p, ref.w))
