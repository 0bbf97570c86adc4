"""Top-s SVDs and the rank-s block Frank-Wolfe step (pdsparse.lowrank), against full SVDs,
the house's l1-ball projection and brute-force minimization."""

import numpy as np
import pytest
import scipy.optimize as so

from pdsparse.errors import ConfigError
from pdsparse.lowrank import (
    METHODS,
    block_objective,
    block_step,
    project_singular_values,
    top_singular,
)
from pdsparse.penalties import TraceBall, project_l1_ball


def _gapped(m, n, s, seed, noise=1e-3):
    """A rank-s matrix with well separated singular values plus small noise."""
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.standard_normal((m, s)))[0]
    V = np.linalg.qr(rng.standard_normal((n, s)))[0]
    sig = np.linspace(10.0, 5.0, s)
    return (U * sig) @ V.T + noise * rng.standard_normal((m, n))


def _projector(U):
    return U @ U.T


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("s", [1, 4, 12])
def test_top_singular_matches_full_svd_with_a_gap(method, s):
    M = _gapped(90, 70, s, seed=s)
    U, sig, Vt = top_singular(M, s, method, seed=3)
    Uf, sf, Vtf = np.linalg.svd(M, full_matrices=False)
    assert U.shape == (90, s) and sig.shape == (s,) and Vt.shape == (s, 70)
    assert np.all(np.diff(sig) <= 0)
    np.testing.assert_allclose(sig, sf[:s], rtol=1e-10)
    # singular vectors up to sign: the projectors onto the spans and the rank-s parts agree
    np.testing.assert_allclose(_projector(U), _projector(Uf[:, :s]), atol=1e-9)
    np.testing.assert_allclose((U * sig) @ Vt, (Uf[:, :s] * sf[:s]) @ Vtf[:s], atol=1e-9)
    np.testing.assert_allclose(U.T @ U, np.eye(s), atol=1e-12)
    np.testing.assert_allclose(Vt @ Vt.T, np.eye(s), atol=1e-12)


def test_lanczos_is_exact_without_a_gap_and_randomized_is_close():
    M = np.random.default_rng(0).standard_normal((120, 100))
    sf = np.linalg.svd(M, compute_uv=False)
    _, sig, _ = top_singular(M, 5, "lanczos")
    np.testing.assert_allclose(sig, sf[:5], rtol=1e-10)
    # Halko et al. with q = 4 power iterations: an approximation from below, a few percent
    _, sig, _ = top_singular(M, 5, "randomized")
    assert np.all(sig <= sf[:5] * (1 + 1e-12))
    np.testing.assert_allclose(sig, sf[:5], rtol=0.1)


def test_top_singular_deterministic_by_seed_and_clips_s():
    M = np.random.default_rng(1).standard_normal((40, 30))
    for method in METHODS:
        a = top_singular(M, 3, method, seed=7)
        b = top_singular(M, 3, method, seed=7)
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    U, sig, Vt = top_singular(M, 50, "lanczos")  # s > min(m, n): all 30 triplets
    assert sig.shape == (30,)
    np.testing.assert_allclose((U * sig) @ Vt, M, atol=1e-12)


def test_top_singular_bad_input():
    M = np.ones((4, 3))
    with pytest.raises(ConfigError, match="method"):
        top_singular(M, 1, "power")
    with pytest.raises(ConfigError, match="rank s"):
        top_singular(M, 0)
    with pytest.raises(ConfigError, match="matrix"):
        top_singular(np.ones(3), 1)
    with pytest.raises(ConfigError, match="coef"):
        block_step(M, M, 0.0, 1, 1.0)
    with pytest.raises(ConfigError, match="radius"):
        block_step(M, M, 1.0, 1, -1.0)


def test_singular_value_projection():
    rng = np.random.default_rng(2)
    for _ in range(20):
        sig = np.sort(rng.exponential(size=8))[::-1]
        r = float(rng.uniform(0.1, 1.2) * sig.sum())
        p = project_singular_values(sig, r)
        np.testing.assert_allclose(p, project_l1_ball(sig, r), atol=0)
        assert np.all(p >= 0) and p.sum() <= r * (1 + 1e-12)
        # brute force: min ||p - sig||^2 over p >= 0, sum p <= r
        res = so.minimize(lambda q, sig=sig: 0.5 * np.sum((q - sig) ** 2), np.zeros(8),
                          jac=lambda q, sig=sig: q - sig, bounds=[(0, None)] * 8,
                          method="SLSQP",
                          constraints=[{"type": "ineq", "fun": lambda q, r=r: r - q.sum(),
                                        "jac": lambda q: -np.ones(8)}],
                          options={"ftol": 1e-15, "maxiter": 500})
        np.testing.assert_allclose(p, res.x, atol=1e-7)
    np.testing.assert_array_equal(project_singular_values(np.array([2.0, -1e-17]), 5.0),
                                  [2.0, 0.0])


@pytest.mark.parametrize("method", METHODS)
def test_block_step_full_rank_is_the_trace_ball_projection(method):
    rng = np.random.default_rng(3)
    X, G = rng.standard_normal((9, 6)), rng.standard_normal((9, 6))
    coef, r = 2.5, 1.7
    U, sig, Vt = block_step(X, G, coef, 6, r, method=method)
    V = (U * sig) @ Vt
    np.testing.assert_allclose(V, TraceBall(r).project(X - G / coef), atol=1e-12)
    assert np.all(sig > 0) and sig.sum() <= r * (1 + 1e-12)


def test_block_step_rank_one_against_brute_force():
    """min <G, V> + coef/2 ||V - X||^2 over V = t u v^T, |t| <= r, ||u|| = ||v|| = 1, by
    multistart L-BFGS-B over (t, angles of u and v), never better than the block step."""
    rng = np.random.default_rng(4)
    X, G = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    coef, r = 1.3, 0.8
    U, sig, Vt = block_step(X, G, coef, 1, r, method="full")
    assert sig.size == 1
    best = block_objective(X, G, coef, (U * sig) @ Vt)

    def atom(z):
        t, a, b, c = z
        u = np.array([np.cos(a) * np.cos(b), np.cos(a) * np.sin(b), np.sin(a)])
        v = np.array([np.cos(c), np.sin(c)])
        return t * np.outer(u, v)

    found = min(so.minimize(lambda z: block_objective(X, G, coef, atom(z)),
                            np.concatenate([[rng.uniform(-r, r)], rng.uniform(-3, 3, 3)]),
                            bounds=[(-r, r), (None, None), (None, None), (None, None)],
                            method="L-BFGS-B").fun for _ in range(30))
    assert best <= found + 1e-10
    assert found <= best + 1e-7  # the search finds the same minimum


@pytest.mark.parametrize("method", METHODS)
def test_block_step_is_half_eps_approximate(method):
    """PDBFW Definition 4.2 / Allen-Zhu et al. Def. 3.2 on f(X) = 1/2 ||X - C||_F^2 (alpha =
    beta = 1) over ||X||_* <= r, whose optimum X_bar = Proj(C) has rank 2: with s = 2 and
    coef = beta eta, eta = 1/2, every step from a feasible X satisfies
    l(V) <= l(X_bar) <= 0, so l(V) <= (1 - 1/2) l(X_bar) + 0."""
    rng = np.random.default_rng(5)
    C = _gapped(30, 20, 2, seed=6, noise=0.05) + 0.05 * rng.standard_normal((30, 20))
    r = 6.0
    ball = TraceBall(r)
    Xbar = ball.project(C)
    assert np.linalg.matrix_rank(Xbar, tol=1e-9) == 2
    coef = 0.5
    for _ in range(10):
        X = ball.project(3 * rng.standard_normal((30, 20)))
        G = X - C
        U, sig, Vt = block_step(X, G, coef, 2, r, method=method)
        assert sig.size <= 2 and sig.sum() <= r * (1 + 1e-12)
        lv = block_objective(X, G, coef, (U * sig) @ Vt)
        lstar = block_objective(X, G, coef, Xbar)
        assert lstar <= 0
        assert lv <= 0.5 * lstar + 1e-12
        assert lv <= lstar + 1e-12
