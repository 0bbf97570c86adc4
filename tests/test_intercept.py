"""An unpenalized intercept (issue 31 item 3): P(w, c) = 1/n sum_i s_i phi_i(a_i^T w + c) +
g(w), the variable's last entry. Primal RCD fits it as a block-cyclic extra coordinate (an
exact-Lipschitz step after every d draws); the dual gains sum_i s_i alpha_i = 0, which the
gap's dual point meets (alpha at the best intercept for w, then balanced); every other
solver refuses by name.

Checked: the kernel against a transcription with the same draws, iterate by iterate, and
chunked calls against one long call; the certified optimum against an independent one
(L-BFGS-B on (u, v, c) with w = u - v); the reference; the dual's constraint.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
from conftest import make_data
from test_sample_weights import _draws, _weights, py_weighted_primal_step
from test_solvers import py_phi_prime

from pdsparse import losses, objective
from pdsparse.errors import ConfigError
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import make_kernel, solve


def _labels(n, loss):
    b = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)  # two to one: the intercept matters
    return b + 0.5 if loss == "squared" else b


def py_primal_rcd_with_intercept(problem, draws):
    """Algorithm 1 with weights s and the intercept c: after every d draws
    c -= (1/n sum_j s_j phi'(z_j)) / beta (dense numpy, one coordinate at a time)."""
    X = problem.csr.toarray().T  # d x n
    n, d, beta = problem.n, problem.d, problem.smoothness
    s = problem.weights if problem.weights is not None else np.ones(n)
    w, z, out = np.zeros(d + 1), np.zeros(n), []
    for t, i in enumerate(draws):
        py_weighted_primal_step(problem, s, X, w, z, i)
        if (t + 1) % d == 0:
            gc = sum(s[j] * py_phi_prime(problem.loss, z[j], problem.b[j])
                     for j in range(n)) / n
            w[d] -= gc / beta
            z -= gc / beta
        out.append(w.copy())
    return out


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("l1", [0.0, 0.02])
def test_primal_rcd_with_an_intercept_matches_its_transcription(weighted, l1):
    A, b = make_data(n=12, d=5, density=0.5, seed=5)
    p = Problem(A, _labels(12, "logistic"), "logistic", l2=0.05, l1=l1, intercept=True,
                sample_weight=_weights(12) if weighted else None)
    K = 40
    draws = _draws(p.d, "uniform", 9, K)
    ref = py_primal_rcd_with_intercept(p, draws)
    k = make_kernel(p, "primal_rcd", "uniform", seed=9)
    for t in range(K):
        assert k.run(1)[0] == 1
        np.testing.assert_allclose(k.iterates()[0], ref[t], rtol=1e-11, atol=1e-13,
                                   err_msg=f"iteration {t}")
    # chunked calls (the intercept's draw counter is the caller's) give one long call's w
    one = make_kernel(p, "primal_rcd", "uniform", seed=9)
    one.run(10**6)
    chunks = make_kernel(p, "primal_rcd", "uniform", seed=9)
    done = 0
    while done < 10**6:
        done += chunks.run(min(777, 10**6 - done))[1]
    np.testing.assert_array_equal(one.w, chunks.w)


def _lbfgs_optimum(problem):
    """min over (w, c) by L-BFGS-B on (u, v, c), w = u - v, u, v >= 0, c free: independent
    of the package's solvers and objective module (the losses' array functions only)."""
    A, b, n, d = problem.csr, problem.b, problem.n, problem.d
    s = problem.weights if problem.weights is not None else np.ones(n)
    l2, l1, cid = problem.l2, problem.l1, problem.loss_id

    def f(x):
        u, v, c = x[:d], x[d:2 * d], x[2 * d]
        w = u - v
        z = A @ w + c
        r = s * losses.derivs(cid, z, b)
        val = (s * losses.values(cid, z, b)).sum() / n + 0.5 * l2 * w @ w \
            + l1 * x[:2 * d].sum()
        g = A.T @ r / n + l2 * w
        return val, np.concatenate([g + l1, -g + l1, [r.sum() / n]])

    res = so.minimize(f, np.zeros(2 * d + 1), jac=True, method="L-BFGS-B",
                      bounds=[(0, None)] * (2 * d) + [(None, None)],
                      options={"maxiter": 50000, "ftol": 1e-16, "gtol": 1e-13})
    return res.fun


@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
@pytest.mark.parametrize("l2,l1", [(0.01, 0.0), (0.01, 0.01), (0.0, 0.01)])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_certified_optimum_with_an_intercept_is_the_independent_one(loss, l2, l1,
                                                                        weighted):
    A, _ = make_data(n=60, d=30, seed=1)
    p = Problem(A, _labels(60, loss), loss, l2=l2, l1=l1, intercept=True,
                sample_weight=_weights(60, seed=2) if weighted else None)
    res = solve(p, "primal_rcd", tol=1e-10, max_epochs=100000)
    assert res.status == "converged" and res.w.shape == (31,)
    p_val, d_val, gap = objective.evaluate(p, res.w)
    assert 0 <= gap <= 1e-10 * abs(p_val)
    best = _lbfgs_optimum(p)
    assert d_val <= best + 1e-13 * abs(best) and p_val == pytest.approx(best, rel=1e-9)
    # the fitted intercept is not 0 (a penalized or absent one would sit elsewhere)
    assert abs(res.w[-1]) > 0.1
    if l1 == 0.01 and weighted and loss == "logistic":
        ref = reference_solution(p, rtol=1e-11)
        assert ref.method == "prox_newton"  # the intercept's route, primal RCD its fallback
        assert ref.rel_gap <= 1e-11 and ref.p_star == pytest.approx(best, rel=1e-9)


def test_the_dual_point_meets_the_intercept_constraint():
    A, _ = make_data(n=40, d=10, seed=3)
    b = _labels(40, "logistic")
    p = Problem(A, b, "logistic", l2=0.01, intercept=True, sample_weight=_weights(40))
    w = np.random.default_rng(0).standard_normal(11)
    alpha = objective.alpha_of_w(p, w)
    assert abs((p.weights * alpha).sum()) <= 1e-14 * np.abs(alpha).sum()
    assert np.all(b * alpha >= 0) and np.all(b * alpha <= 1)  # in the conjugate's domain
    assert objective.dual(p, alpha) <= objective.primal(p, w)
    off = alpha + 1e-3 * b  # off the constraint: no dual value
    assert objective.dual(p, off) == -np.inf
    # one class only: no finite best intercept, and alpha = 0 is the balanced point
    one = Problem(A, np.ones(40), "logistic", l2=0.01, intercept=True)
    assert not objective.alpha_of_w(one, np.zeros(11)).any()


def test_solvers_that_fit_no_intercept_refuse_it():
    A, b = make_data(n=30, d=12, seed=2)
    p = Problem(A, b, "logistic", l2=0.01, intercept=True)
    for method in ("dual_rcd", "spdc", "dgpd"):
        with pytest.raises(ConfigError, match=f"{method} fits no intercept with l2 "
                           r"\(solvers that do, sparse A: primal_rcd, prox_newton\)"):
            solve(p, method, tol=1e-6)
    dense = Problem(A.toarray(), b, "logistic", l2=0.01, intercept=True)
    with pytest.raises(ConfigError, match="primal_rcd fits no intercept with dense A"):
        solve(dense, "primal_rcd", tol=1e-6)
    assert solve(p, "auto", tol=1e-8).params["method"] == "prox_newton"
    hinge = Problem(A, b, "smooth_hinge", l2=0.01, intercept=True)  # no second derivative
    assert solve(hinge, "auto", tol=1e-8).params["method"] == "primal_rcd"
    with pytest.raises(ConfigError, match="has an intercept"):
        objective.w_of_alpha(p, np.zeros(30))
