"""Pure l1 (l2 = 0, l1 > 0): the rescaled dual point certifies the gap, primal RCD solves it
(iterate by iterate as printed: proximal coordinate descent, Richtarik & Takac 2014, with the
Face-Off step), reference_solution certifies P* against an independent optimum (scipy's
L-BFGS-B on w = u - v, u, v >= 0), and the solvers that need l2 > 0 refuse it in one line
naming the one that takes it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.penalties import ElasticNet
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import SOLVERS, _sampling, solve
from pdsparse.solvers.base import sampling_probabilities
from pdsparse.solvers.predict import predict
from pdsparse.solvers.registry import make_kernel

LOSSES = ("logistic", "squared", "smooth_hinge")


def _data(n=60, d=15, seed=0, dense=False):
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    A = sp.hstack([A, sp.csr_matrix((n, 1))]).tocsr()  # an empty column: L_i = 0 with l2 = 0
    b = np.sign(rng.standard_normal(n))
    b[b == 0] = 1.0
    return (A.toarray() if dense else A), b


def _phi(loss, z, b):
    if loss == "logistic":
        return np.logaddexp(0.0, -b * z)
    if loss == "squared":
        return 0.5 * (z - b) ** 2
    m = b * z
    return np.where(m <= 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0))


def _dphi(loss, z, b):
    if loss == "logistic":
        return -b / (1.0 + np.exp(b * z))
    if loss == "squared":
        return z - b
    m = b * z
    return np.where(m <= 0, -b, np.where(m < 1, -b * (1 - m), 0.0))


def _lambda_max(A, b, loss):
    A = sp.csr_matrix(A)
    return float(np.abs(A.T @ _dphi(loss, np.zeros(A.shape[0]), b)).max()) / A.shape[0]


def lbfgs_optimum(A, b, loss, l1):
    """min 1/n sum phi(a_i^T (u - v)) + l1 1^T (u + v) over u, v >= 0: smooth and bounded,
    solved by L-BFGS-B (independent of the package's losses, objective and solvers)."""
    A = sp.csr_matrix(A)
    n, d = A.shape

    def fun(x):
        w = x[:d] - x[d:]
        z = A @ w
        g = A.T @ _dphi(loss, z, b) / n
        return _phi(loss, z, b).mean() + l1 * x.sum(), np.concatenate([g + l1, -g + l1])

    res = so.minimize(fun, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                      bounds=[(0, None)] * (2 * d),
                      options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12})
    return res.fun, res.x[:d] - res.x[d:]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("dense", [False, True])
def test_primal_rcd_reaches_the_certified_optimum(loss, dense):
    A, b = _data(dense=dense, seed=3)
    l1 = _lambda_max(A, b, loss) / 10
    p = Problem(A, b, loss, penalty=ElasticNet(0.0, l1))
    res = solve(p, "primal_rcd", tol=1e-10, max_epochs=20000)
    assert res.status == "converged"
    p_val, d_val, gap = objective.evaluate(p, res.w)
    assert np.isfinite(d_val) and 0 <= gap <= 1e-10 * abs(p_val)
    f_star, w_star = lbfgs_optimum(A, b, loss, l1)
    # the certificate brackets the independent optimum: D <= P* <= f_star (to its accuracy)
    assert d_val <= f_star + 1e-12 and p_val <= f_star + 1e-12
    assert abs(p_val - f_star) <= 1e-8 * abs(f_star)
    assert 0 < np.count_nonzero(res.w) < p.d and res.w[-1] == 0.0


@pytest.mark.parametrize("loss", LOSSES)
def test_reference_certifies_pure_l1(loss):
    A, b = _data(n=80, d=20, seed=5)
    l1 = _lambda_max(A, b, loss) / 20
    p = Problem(A, b, loss, penalty=ElasticNet(0.0, l1))
    ref = reference_solution(p, rtol=1e-11)
    # proximal Newton's route where it applies, else the first-order route
    assert (ref.method == "prox_newton") == (loss != "smooth_hinge")
    f_star, _ = lbfgs_optimum(A, b, loss, l1)
    assert ref.gap <= 1e-11 * abs(ref.p_star)
    assert ref.d_star <= f_star + 1e-12 and abs(ref.p_star - f_star) <= 1e-8 * f_star


def test_the_rescaled_dual_point_is_a_lower_bound_everywhere():
    """At any w the dual point alpha(w) shrunk into ||A^T alpha / n||_inf <= l1 gives a finite
    D(alpha) <= P*, and the scale is 1 at the optimum (the unscaled point is optimal)."""
    A, b = _data(seed=7)
    rng = np.random.default_rng(1)
    for loss in LOSSES:
        l1 = _lambda_max(A, b, loss) / 5
        p = Problem(A, b, loss, penalty=ElasticNet(0.0, l1))
        p_star = reference_solution(p, rtol=1e-12).p_star
        for scale in (0.01, 1.0, 100.0):
            w = scale * rng.standard_normal(p.d)
            alpha = objective.alpha_of_w(p, w)
            assert np.abs(p.csr.T @ alpha / p.n).max() <= l1 * (1 + 1e-12)
            d_val = objective.dual(p, alpha)
            assert np.isfinite(d_val) and d_val <= p_star + 1e-12
    # a point outside g*'s domain is shrunk into it: a finite bound, never a false one
    p = Problem(A, b, "squared", penalty=ElasticNet(0.0, 1e-6))
    alpha = -_dphi("squared", np.zeros(p.n), b)
    scale = 1e-6 / np.abs(p.csr.T @ alpha / p.n).max()
    d_val = objective.dual(p, alpha)
    assert scale < 1e-3 and d_val == objective.dual(p, scale * alpha)
    assert d_val <= reference_solution(p, rtol=1e-12).p_star + 1e-12


def heavy_tailed_problem(n: int = 3000) -> Problem:
    """Pure l1 on two heavy-tailed columns (one of both signs) and a normal one: the sums in
    A^T alpha cancel hundreds-fold, as on cod-rna."""
    rng = np.random.default_rng(0)
    A = sp.csr_matrix(np.column_stack([rng.lognormal(0, 2.5, n) * rng.choice([-1, 1], n),
                                       rng.lognormal(0, 2.5, n), rng.standard_normal(n)]))
    b = np.where(A @ np.array([1.0, -0.001, 1.0]) + rng.standard_normal(n) > 0, 1.0, -1.0)
    return Problem(A, b, "logistic", l2=0.0, l1=1e-4)


def test_the_gap_stays_finite_where_the_domain_test_meets_cancellation():
    """Heavy-tailed columns of both signs: sum_i |A_ij alpha_i| is hundreds of times
    |sum_i A_ij alpha_i|, so A^T alpha recomputed after the rescale missed the domain
    ||.||_inf <= l1 (1 + 1e-12) by its rounding, and the gap was infinite at 4 of these 40
    iterates (cod-rna's too); u is now shrunk with alpha, and so is the u an evaluation
    with the kernel's alpha recomputes."""
    p = heavy_tailed_problem()
    kernel = make_kernel(p, "prox_newton")
    gaps = []
    for _ in range(40):
        kernel.run(1)
        gaps += [objective.evaluate(p, kernel.w)[2], objective.evaluate(p, *kernel.iterates())[2]]
    assert np.all(np.isfinite(gaps)) and min(gaps) >= 0.0


def py_prox_rcd(problem, draws):
    """Proximal RCD as printed (Richtarik & Takac 2014, UCDC with the l1 prox; Face-Off's
    Lipschitz constants L_i = beta ||A_{:,i}||^2 / n), dense numpy, one coordinate at a time;
    an empty column has a zero partial gradient, and any L_i > 0 gives its step."""
    A = problem.csr.toarray()
    n, beta, l1 = problem.n, problem.smoothness, problem.l1
    w, out = np.zeros(problem.d), []
    for i in draws:
        L = beta * (A[:, i] @ A[:, i]) / n or 1.0
        g = A[:, i] @ _dphi(problem.loss, A @ w, problem.b) / n
        v = w[i] - g / L
        w[i] = np.sign(v) * max(abs(v) - l1 / L, 0.0)
        out.append(w.copy())
    return out


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sampling", ["uniform", "importance"])
def test_primal_rcd_matches_the_printed_prox_step_iterate_by_iterate(loss, sampling):
    A, b = _data(n=14, d=6, seed=11)
    p = Problem(A, b, loss, penalty=ElasticNet(0.0, _lambda_max(A, b, loss) / 8))
    K = 80
    st = _sampling.seed_state(9)
    if sampling == "uniform":
        draws = _sampling.uniform_ints(st, p.d, K)
    else:
        prob, alias = _sampling.build_alias(sampling_probabilities(
            p.col_sqnorms, p.l2, p.n, p.smoothness, sampling))
        draws = _sampling.draw(st, prob, alias, K)
    want = py_prox_rcd(p, draws)
    k = make_kernel(p, "primal_rcd", sampling, seed=9)
    for t in range(K):
        iters, _ = k.run(1)
        assert iters == 1
        np.testing.assert_allclose(k.iterates()[0], want[t], rtol=1e-11, atol=1e-13,
                                   err_msg=f"iteration {t}")


def test_solvers_that_need_l2_refuse_in_one_line_naming_the_taker():
    A, b = _data()
    p = Problem(A, b, "logistic", penalty=ElasticNet(0.0, 0.01))
    needs = [name for name, s in SOLVERS.items()
             if "elastic_net" in s.penalties and s.needs_strong_convexity]
    assert set(needs) == {"dual_rcd", "spdc", "dgpd", "dgpd_full"}
    for name in needs:
        with pytest.raises(ConfigError) as err:
            solve(p, name)
        text = str(err.value)
        assert "\n" not in text and "needs l2 > 0" in text
        assert text.endswith("primal_rcd, prox_newton")
    assert predict(p).method == "prox_newton"  # sparse A, the logistic loss
    assert predict(Problem(p.mat.toarray(), p.b, "logistic", l2=0.0, l1=p.l1)).method \
        == "primal_rcd"  # prox_newton takes sparse A only
    assert predict(Problem(p.mat, p.b, "smooth_hinge", l2=0.0, l1=p.l1)).method \
        == "primal_rcd"  # nor a loss without a second derivative
    assert solve(p, "auto").status == "converged"
    with pytest.raises(ConfigError, match="or 0 with l1 > 0"):
        ElasticNet(0.0, 0.0)
    with pytest.raises(ConfigError, match="pure l1"):
        objective.w_of_alpha(p, np.zeros(p.n))


def test_one_vs_rest_pure_l1():
    A, b = _data(seed=2)
    B = np.column_stack([b, -b, np.roll(b, 3)])
    p = Problem(A, B, "logistic", penalty=ElasticNet(0.0, 0.005))
    res = solve(p, "primal_rcd", tol=1e-9, max_epochs=20000)
    p_val, d_val, gap = objective.evaluate(p, res.w)
    assert res.status == "converged" and 0 <= gap <= 1e-9 * abs(p_val)
    for c in range(3):  # a column's problem alone has the same optimum
        f_star, _ = lbfgs_optimum(A, B[:, c], "logistic", 0.005)
        pc = Problem(A, B[:, c], "logistic", penalty=ElasticNet(0.0, 0.005))
        assert abs(objective.primal(pc, res.w[:, c]) - f_star) <= 1e-7 * f_star


def test_the_best_dual_point_so_far_certifies():
    """Each rescaled alpha(w) is feasible, so solve keeps the largest D seen: the trace's D
    never decreases, and the returned alpha is the point that gives it."""
    A, b = _data(n=120, d=40, seed=8)
    p = Problem(A, b, "logistic", penalty=ElasticNet(0.0, _lambda_max(A, b, "logistic") / 30))
    res = solve(p, "primal_rcd", tol=1e-9, max_epochs=5000, eval_every=2.0)
    dual = res.trace["dual"].to_numpy()
    assert np.all(np.diff(dual) >= 0) and res.status == "converged"
    assert objective.dual(p, res.alpha) == dual[-1]
    f_star, _ = lbfgs_optimum(A, b, "logistic", p.l1)
    assert dual[-1] <= f_star + 1e-12


@pytest.mark.parametrize("intercept", [False, True])
def test_the_loss_gradient_is_phi_prime_not_the_scaled_dual_point(intercept):
    """objective.loss_gradient is A^T (s phi'(A w + c)) / n, also with pure l1 (whose alpha(w)
    is scaled into the dual's domain) and an intercept (whose alpha(w) is balanced): it
    returned the gradient at that dual point before, 0.23 of the gap bound's value."""
    A, b = _data(n=40, d=12, seed=3)
    p = Problem(A, b, "logistic", l2=0.0, l1=0.001, intercept=intercept)
    w = np.random.default_rng(1).standard_normal(p.var_shape) * 3
    coef, c = (w[:-1], w[-1]) if intercept else (w, 0.0)
    z = A @ coef + c
    want = A.T @ (-b / (1.0 + np.exp(b * z))) / p.n
    assert p.penalty.dual_scale(-want) < 0.5  # the scaled point differs
    np.testing.assert_allclose(objective.loss_gradient(p, w), want, rtol=1e-12, atol=1e-15)
