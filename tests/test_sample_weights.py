"""Example weights in the kernels (issue 31 item 3): P(w) = 1/n sum_i s_i phi_i(a_i^T w) + g(w)
with s scaled to mean 1. Primal RCD (any elastic net, pure l1 too) and dual RCD (l2, exact
step) read s in their loops; every other solver refuses a weighted problem by name.

Checked: each kernel against a transcription of its algorithm with the weights, fed the same
draws, iterate by iterate; a weight of 2 is a duplicated row and a weight of 0 a removed one;
the certified optimum against an independent one (scipy's L-BFGS-B on the weighted objective,
the l1 part through the split w = u - v, u, v >= 0); the reference certifies weighted problems.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from conftest import make_data
from test_solvers import py_phi_prime

from pdsparse import losses, objective
from pdsparse.errors import ConfigError, DataError
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import _sampling, make_kernel, solve
from pdsparse.solvers.base import sampling_probabilities


def _weights(n, seed=0):
    return np.random.default_rng(seed).uniform(0.2, 3.0, n)


def _draws(m, sampling, seed, count, sqnorms=None, l2=0.0, n=1, beta=1.0):
    st = _sampling.seed_state(seed)
    if sampling == "uniform":
        return _sampling.uniform_ints(st, m, count)
    if sampling == "permutation":
        return _sampling.permutation_draws(st, m, count)
    prob, alias = _sampling.build_alias(
        sampling_probabilities(sqnorms, l2, n, beta, sampling))
    return _sampling.draw(st, prob, alias, count)


def py_weighted_primal_rcd(problem, s, draws):
    """Algorithm 1 with the loss s_j phi_j: grad_i = 1/n sum_j s_j phi_j'(z_j) X_ij + l2 w_i,
    L_i = beta sum_j s_j X_ij^2 / n + l2, the prox step of l1 (dense numpy, one coordinate
    at a time)."""
    X = problem.csr.toarray().T  # d x n
    w, z, out = np.zeros(problem.d), np.zeros(problem.n), []
    for i in draws:
        py_weighted_primal_step(problem, s, X, w, z, i)
        out.append(w.copy())
    return out


def py_weighted_primal_step(problem, s, X, w, z, i):
    """One step of Algorithm 1 on coordinate i (in place; X is d x n, z the margins)."""
    n, beta, l2, l1 = problem.n, problem.smoothness, problem.l2, problem.l1
    L = beta * (s * X[i] ** 2).sum() / n + l2
    g = sum(s[j] * py_phi_prime(problem.loss, z[j], problem.b[j]) * X[i, j]
            for j in range(n)) / n + l2 * w[i]
    v = w[i] - g / L
    new = np.sign(v) * max(abs(v) - l1 / L, 0.0)
    z += (new - w[i]) * X[i]
    w[i] = new


def py_weighted_dual_rcd(problem, s, draws):
    """Algorithm 2 with the loss s_j phi_j, exact step: alpha_j maximizes
    -s_j phi*(-alpha_j) / n - (l2/2) ||w||^2 with w = A^T (s alpha) / (l2 n) (logistic: the
    root of the step's optimality condition by a scalar solver)."""
    X = problem.csr.toarray().T
    n, l2 = problem.n, problem.l2
    v = (X * X).sum(axis=0)
    alpha, w, out = np.zeros(n), np.zeros(problem.d), []
    for j in draws:
        zj, bj, aj = X[:, j] @ w, problem.b[j], alpha[j]
        c = s[j] * v[j] / (l2 * n)  # d/dt of the quadratic term, per unit of t = b alpha

        def grad(t, aj=aj, zj=zj, bj=bj, c=c):
            return np.log(t / (1 - t)) + bj * zj + c * (t - bj * aj)

        new = bj * so.brentq(grad, 1e-300, 1 - 1e-16, xtol=1e-300, rtol=1e-15)
        w += s[j] * (new - aj) / (l2 * n) * X[:, j]
        alpha[j] = new
        out.append(w.copy())
    return out


@pytest.mark.parametrize("sampling", ["uniform", "importance"])
@pytest.mark.parametrize("l1", [0.0, 0.02])
def test_weighted_primal_rcd_matches_its_transcription(sampling, l1):
    A, b = make_data(n=12, d=7, density=0.4, seed=5)
    p = Problem(A, b, "logistic", l2=0.05, l1=l1, sample_weight=_weights(12))
    K = 60
    draws = _draws(p.d, sampling, 9, K, p.weighted_col_sqnorms, p.l2, p.n, p.smoothness)
    ref = py_weighted_primal_rcd(p, p.weights, draws)
    k = make_kernel(p, "primal_rcd", sampling, seed=9)
    for t in range(K):
        assert k.run(1)[0] == 1
        np.testing.assert_allclose(k.iterates()[0], ref[t], rtol=1e-11, atol=1e-13,
                                   err_msg=f"iteration {t}")


def test_weighted_dual_rcd_matches_its_transcription():
    A, b = make_data(n=12, d=7, density=0.4, seed=5)
    p = Problem(A, b, "logistic", l2=0.05, sample_weight=_weights(12, seed=1))
    K = 60
    draws = _draws(p.n, "permutation", 9, K)
    ref = py_weighted_dual_rcd(p, p.weights, draws)
    k = make_kernel(p, "dual_rcd", "permutation", "newton", seed=9)
    for t in range(K):
        assert k.run(1)[0] == 1
        np.testing.assert_allclose(k.iterates()[0], ref[t], rtol=1e-10, atol=1e-12,
                                   err_msg=f"iteration {t}")


@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
@pytest.mark.parametrize("method,l1", [("primal_rcd", 0.0), ("primal_rcd", 0.01),
                                       ("dual_rcd", 0.0)])
def test_a_weight_of_two_is_a_duplicated_row_and_zero_a_removed_one(loss, method, l1):
    A, b = make_data(n=30, d=12, seed=2, loss=loss)
    s = np.ones(30)
    s[[3, 17]] = 2.0
    s[[5, 9]] = 0.0
    keep = np.flatnonzero(s > 0)
    rows = np.concatenate([keep, [3, 17]])  # each weight-2 row twice, the zero rows gone
    weighted = Problem(A, b, loss, l2=0.02, l1=l1, sample_weight=s)
    copied = Problem(A[rows], b[rows], loss, l2=0.02, l1=l1)
    rng = np.random.default_rng(0)
    for _ in range(3):  # the same objective everywhere
        w = rng.standard_normal(12)
        assert objective.primal(weighted, w) == pytest.approx(objective.primal(copied, w),
                                                              rel=1e-13)
    a = solve(weighted, method, tol=1e-12, max_epochs=20000)
    c = solve(copied, method, tol=1e-12, max_epochs=20000)
    assert a.status == c.status == "converged"
    np.testing.assert_allclose(a.w, c.w, rtol=1e-5, atol=1e-7)
    assert a.objective == pytest.approx(c.objective, rel=1e-11)


def _lbfgs_optimum(problem, s):
    """min over w of 1/n sum s_i phi(a_i^T w) + l2/2 ||w||^2 + l1 ||w||_1, by L-BFGS-B on
    w = u - v, u, v >= 0 (the l1 part linear there): independent of the package's solvers
    and of its objective module (the losses' array functions only)."""
    A, b, n, d = problem.csr, problem.b, problem.n, problem.d
    l2, l1, cid = problem.l2, problem.l1, problem.loss_id

    def f(x):
        u, v = x[:d], x[d:]
        w = u - v
        z = A @ w
        val = (s * losses.values(cid, z, b)).sum() / n + 0.5 * l2 * w @ w + l1 * x.sum()
        g = A.T @ (s * losses.derivs(cid, z, b)) / n + l2 * w
        return val, np.concatenate([g + l1, -g + l1])

    res = so.minimize(f, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                      bounds=[(0, None)] * (2 * d),
                      options={"maxiter": 20000, "ftol": 1e-16, "gtol": 1e-13})
    return res.fun


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("method,l2,l1", [("primal_rcd", 0.01, 0.0), ("primal_rcd", 0.01, 0.01),
                                          ("primal_rcd", 0.0, 0.01), ("dual_rcd", 0.01, 0.0)])
def test_weighted_runs_reach_the_independent_optimum_with_a_certified_gap(loss, method, l2, l1):
    A, b = make_data(n=40, d=15, seed=3, loss=loss)
    raw = _weights(40, seed=4)
    p = Problem(A, b, loss, l2=l2, l1=l1, sample_weight=raw)
    res = solve(p, method, tol=1e-10, max_epochs=50000)
    assert res.status == "converged"
    p_val, d_val, gap = objective.evaluate(p, res.w, res.alpha)
    assert 0 <= gap <= 1e-10 * abs(p_val)
    p_lbfgs = _lbfgs_optimum(p, p.weights)
    # the independent optimum sits between the certified bounds (to its own accuracy)
    assert d_val <= p_lbfgs + 1e-12 * abs(p_lbfgs)
    assert p_val == pytest.approx(p_lbfgs, rel=1e-8)
    ref = reference_solution(p, rtol=1e-11)
    assert ref.rel_gap <= 1e-11 and ref.p_star == pytest.approx(p_lbfgs, rel=1e-8)


def test_solvers_that_do_not_read_weights_refuse_them():
    A, b = make_data(n=30, d=12, seed=2)
    s = _weights(30)
    p = Problem(A, b, "logistic", l2=0.01, sample_weight=s)
    for method in ("spdc", "dgpd"):
        with pytest.raises(ConfigError, match=f"{method} takes no sample weights"):
            solve(p, method, tol=1e-6)
    with pytest.raises(ConfigError, match="dual_step=fixed .* takes no sample weights"):
        solve(p, "dual_rcd", dual_step="fixed", tol=1e-6)
    enet = Problem(A, b, "logistic", l2=0.01, l1=0.01, sample_weight=s)
    with pytest.raises(ConfigError, match="dual_rcd takes no sample weights with elastic_net "
                       r"\(solvers that take them, sparse A: primal_rcd, dual_rcd, prox_newton\)"):
        solve(enet, "dual_rcd", tol=1e-6)
    dense = Problem(A.toarray(), b, "logistic", l2=0.01, sample_weight=s)
    with pytest.raises(ConfigError, match="primal_rcd takes no sample weights with dense A"):
        solve(dense, "primal_rcd", tol=1e-6)
    assert solve(p, "auto", tol=1e-8).params["method"] in ("primal_rcd", "dual_rcd", "prox_newton")


def test_bad_weights_are_clear_errors_and_equal_weights_are_none():
    A, b = make_data(n=10, d=5)
    for bad, msg in ((np.ones(9), "shape"), (-np.ones(10), ">= 0"), (np.zeros(10), "sums to 0"),
                     (np.full(10, np.nan), "finite")):
        with pytest.raises(DataError, match=msg):
            Problem(A, b, "logistic", sample_weight=bad)
    assert Problem(A, b, "logistic", sample_weight=np.full(10, 3.0)).weights is None
    p = Problem(sp.csr_matrix(A), b, "logistic", sample_weight=np.arange(1.0, 11.0))
    assert p.weights.mean() == pytest.approx(1.0) and "weighted" in repr(p)


def test_the_statistics_read_the_weights_as_rows_scaled_by_their_root():
    """With the squared loss, s_i (a_i^T w - b_i)^2 = (sqrt(s_i) a_i^T w - sqrt(s_i) b_i)^2:
    the weighted problem is the unweighted one on diag(sqrt(s)) A, so every statistic advise
    and predict read (Face-Off's C_P, C_D and T's, L, L_max, lambda_max) must be its."""
    from pdsparse.solvers.predict import problem_stats

    A, b = make_data(n=40, d=15, seed=4, loss="squared")
    s = _weights(40, seed=5)
    s = s / s.mean()
    root = np.sqrt(s)
    scaled = sp.csr_matrix(sp.diags(root) @ A)
    weighted = Problem(A, b, "squared", l2=0.05, l1=0.01, sample_weight=s)
    plain = Problem(scaled, root * b, "squared", l2=0.05, l1=0.01)
    got, want = problem_stats(weighted), problem_stats(plain)
    for key in ("C_P", "C_D", "T_P_uniform", "T_D_uniform", "T_P_importance",
                "T_D_importance", "L", "L_max", "lambda_max", "nnz"):
        assert got[key] == pytest.approx(want[key], rel=1e-12), key
    assert got["C_P"] != pytest.approx(problem_stats(Problem(A, b, "squared", l2=0.05,
                                                             l1=0.01))["C_P"], rel=1e-6)
