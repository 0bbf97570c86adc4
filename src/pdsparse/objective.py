"""Primal, dual and duality gap: the one place objectives are evaluated.

P(w) = 1/n sum_j phi_j(a_j^T w) + g(w),  g(w) = l2/2 ||w||^2 + l1 ||w||_1,
D(alpha) = -1/n sum_j phi_j^*(-alpha_j) - g^*(A^T alpha / n)     (Face-Off eq. 3),
with g^*(v) = ||soft(v, l1)||^2 / (2 l2) and w(alpha) = grad g^*(A^T alpha / n)
= soft(A^T alpha / n, l1) / l2. For l1 = 0 this is Face-Off's
D(alpha) = -||X alpha||^2 / (2 lambda n^2) - 1/n sum phi_j^*(-alpha_j).
Weak duality P(w) >= D(alpha) holds for every w and every alpha, so
P(w) - D(alpha) certifies the suboptimality of w.
"""

from __future__ import annotations

import numpy as np

from pdsparse import losses
from pdsparse.problem import Problem


def _soft(v: np.ndarray, t: float) -> np.ndarray:
    if t == 0.0:
        return v
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def primal(problem: Problem, w: np.ndarray) -> float:
    """P(w), Face-Off eq. (1) (plus l1 ||w||_1 when l1 > 0)."""
    w = np.asarray(w, dtype=np.float64)
    z = problem.csr @ w
    val = losses.values(problem.loss_id, z, problem.b).mean()
    val += 0.5 * problem.l2 * float(w @ w)
    if problem.l1:
        val += problem.l1 * float(np.abs(w).sum())
    return float(val)


def w_of_alpha(problem: Problem, alpha: np.ndarray) -> np.ndarray:
    """The primal point paired with ``alpha``: soft(A^T alpha / n, l1) / l2."""
    v = problem.csr.T @ np.asarray(alpha, dtype=np.float64) / problem.n
    return _soft(v, problem.l1) / problem.l2


def dual(problem: Problem, alpha: np.ndarray) -> float:
    """D(alpha), Face-Off eq. (3); -inf when some alpha_j leaves the conjugate's domain."""
    alpha = np.asarray(alpha, dtype=np.float64)
    conj = losses.conj_neg(problem.loss_id, alpha, problem.b)
    if not np.all(np.isfinite(conj)):
        return -np.inf
    v = _soft(problem.csr.T @ alpha / problem.n, problem.l1)
    return float(-conj.mean() - float(v @ v) / (2.0 * problem.l2))


def alpha_of_w(problem: Problem, w: np.ndarray) -> np.ndarray:
    """The dual point paired with ``w``: alpha_j = -phi_j'(a_j^T w) (optimal when w is)."""
    z = problem.csr @ np.asarray(w, dtype=np.float64)
    return -losses.derivs(problem.loss_id, z, problem.b)


def duality_gap(problem: Problem, w: np.ndarray, alpha: np.ndarray) -> float:
    """P(w) - D(alpha) >= P(w) - P* >= 0."""
    return primal(problem, w) - dual(problem, alpha)
