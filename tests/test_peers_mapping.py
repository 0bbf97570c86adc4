"""The problem mapping of ``benchmarks/peers.py``: scikit-learn's C = 1/(l2 n) is our P.

The benchmark compares our RCD with LIBLINEAR / scikit-learn on

    P(w) = 1/n sum_j log(1 + exp(-b_j a_j^T w)) + l2/2 ||w||^2

(Face-Off eq. (1) with the logistic loss; their X is our A^T). scikit-learn minimizes
C sum_j log(1 + exp(-b_j a_j^T w)) + ||w||^2 / 2 = n C P(w) when C = 1/(l2 n), so the
minimizers coincide. These tests solve a tiny problem with the benchmark's own estimator
factory (``peer_estimator``) and compare with our certified reference.

What "the same w" can mean here: the reference certifies a relative duality gap of ~1e-13,
which bounds ||w_ref - w*|| only by sqrt(2 gap / l2) ~ 1e-6; scikit-learn's lbfgs stops on
its fixed ``ftol = 64 eps`` and LIBLINEAR's trust-region Newton when the predicted and actual
reductions fall below 1e-12 |f| (observed ||w - w*||_inf ~ 1e-7 for both). So w is compared
with the exact minimizer w* (dense Newton polish, gradient ~ 1e-16): to 1e-8 for LIBLINEAR's
dual coordinate descent and saga at tol 1e-15, to 1e-5 for lbfgs, LIBLINEAR primal and the
reference. P agrees to 1e-8 for every solver. No timings are asserted.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import bench_script

from pdsparse import objective
from pdsparse.data.normalize import normalize
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def peers():
    with bench_script("peers.py") as mod:
        yield mod


def _tiny(seed: int = 0, n: int = 40, d: int = 12):
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=0.5, random_state=rng, format="csr",
                  data_rvs=rng.standard_normal)
    A, _ = normalize(A, "avg_example_norm")  # as in the benchmark (Face-Off Sec. 7)
    b = np.where(A @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return A, b


def _grad(prob: Problem, w: np.ndarray) -> np.ndarray:
    A = prob.csr.toarray()
    s = 1.0 / (1.0 + np.exp(prob.b * (A @ w)))  # sigma(-b a^T w)
    return -A.T @ (prob.b * s) / prob.n + prob.l2 * w


def _exact_minimizer(prob: Problem, w: np.ndarray) -> np.ndarray:
    """Newton's method with the dense Hessian (tiny d): w* to machine precision."""
    A = prob.csr.toarray()
    for _ in range(50):
        s = 1.0 / (1.0 + np.exp(prob.b * (A @ w)))
        H = A.T @ ((s * (1 - s))[:, None] * A) / prob.n + prob.l2 * np.eye(prob.d)
        step = np.linalg.solve(H, _grad(prob, w))
        w = w - step
        if np.abs(step).max() < 1e-15:
            break
    return w


@pytest.fixture(scope="module", params=[1.0, 0.1], ids=["l2=1/n", "l2=0.1/n"])
def case(request):
    A, b = _tiny()
    n = A.shape[0]
    prob = Problem(A, b, loss="logistic", l2=request.param / n)
    ref = reference_solution(prob, rtol=1e-13)
    w_star = _exact_minimizer(prob, ref.w)
    assert np.abs(_grad(prob, w_star)).max() < 1e-13
    return A, b, prob, ref, w_star


def _fit(peers, name, A, b, l2, **kw):
    est = peers.peer_estimator(name, l2, A.shape[0], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated arguments are passed
        est.fit(A, b)
    assert list(est.classes_) == [-1.0, 1.0]  # coef_ is for +1: the sign of our b a^T w
    return est.coef_.ravel()


def test_sklearn_C_formula(peers):
    assert peers.sklearn_C(0.01, 50) == pytest.approx(2.0, rel=1e-15)
    assert peers.sklearn_C(1.0 / 38, 38) == pytest.approx(1.0, rel=1e-15)


def test_reference_is_certified_and_exact(case):
    A, b, prob, ref, w_star = case
    assert ref.rel_gap <= 1e-13
    p_exact = objective.primal(prob, w_star)
    assert abs(ref.p_star - p_exact) <= 1e-13 * p_exact
    # strong convexity (modulus l2): ||w_ref - w*||^2 <= 2 (P(w_ref) - P*) / l2 <= 2 gap / l2
    assert np.linalg.norm(ref.w - w_star) <= np.sqrt(2 * max(ref.gap, 1e-16) / prob.l2) * 1.01


def test_lbfgs_same_P_and_w(peers, case):
    """scikit-learn lbfgs at tight tol and our reference: the same P within 1e-8 and w."""
    A, b, prob, ref, w_star = case
    w = _fit(peers, "lbfgs", A, b, prob.l2, max_iter=10_000, tol=1e-12)
    p = objective.primal(prob, w)
    assert abs(p - ref.p_star) <= 1e-8 * ref.p_star
    assert np.abs(w - ref.w).max() <= 1e-5
    assert np.abs(w - w_star).max() <= 1e-5


@pytest.mark.parametrize(("name", "w_tol"), [("liblinear_dual", 1e-8), ("saga", 1e-8),
                                             ("liblinear_primal", 1e-5)])
def test_liblinear_and_saga_same_P_and_w(peers, case, name, w_tol):
    A, b, prob, ref, w_star = case
    w = _fit(peers, name, A, b, prob.l2, max_iter=100_000)  # tol = 1e-15, as in the benchmark
    assert np.abs(w - w_star).max() <= w_tol
    assert abs(objective.primal(prob, w) - ref.p_star) <= 1e-8 * ref.p_star


@pytest.mark.parametrize("wrong", [lambda l2, n: 1.0 / l2, lambda l2, n: n / l2,
                                   lambda l2, n: 2.0 / (l2 * n)],
                         ids=["C=1/l2", "C=n/l2", "C=2/(l2 n)"])
def test_a_wrong_mapping_is_caught(peers, case, monkeypatch, wrong):
    """The P check above fails for a wrong C: the test can fail."""
    A, b, prob, ref, _ = case
    monkeypatch.setattr(peers, "sklearn_C", wrong)
    w = _fit(peers, "lbfgs", A, b, prob.l2, max_iter=10_000, tol=1e-12)
    assert abs(objective.primal(prob, w) - ref.p_star) > 1e-4 * ref.p_star
