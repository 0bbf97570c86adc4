"""Certified optimal values P* for the figures' suboptimality axes.

Two independent routes, each checked by the duality gap:

1. dual coordinate ascent with exact 1-D steps (the Newton variant of Face-Off
   Algorithm 2) in random-permutation epochs, to a modest gap;
2. for the smooth losses, a primal trust-region Newton-CG polish
   (``scipy.optimize.minimize(method="trust-ncg")``) from the best iterate,
   with the dual certificate alpha(w) = -phi'(A w).

The returned P* is the best primal value found; ``gap`` is the smallest
certified gap P(w) - D(alpha) over the candidate pairs, so P* - gap <= true
optimum <= P*. A problem that cannot be certified to ``rtol`` raises.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.optimize as so

from pdsparse import losses, objective
from pdsparse.errors import PdsparseError
from pdsparse.problem import Problem
from pdsparse.solvers import solve


class CertificationError(PdsparseError):
    """The reference solver could not reach the requested certified gap."""


@dataclass
class Reference:
    p_star: float
    d_star: float
    gap: float
    rel_gap: float
    w: np.ndarray
    alpha: np.ndarray
    method: str
    seconds: float


def _newton_polish(problem: Problem, w0: np.ndarray, max_iter: int) -> np.ndarray:
    A, b, l2, cid = problem.csr, problem.b, problem.l2, problem.loss_id
    n = problem.n
    eps = 1e-7

    def fun(w):
        z = A @ w
        val = losses.values(cid, z, b).mean() + 0.5 * l2 * (w @ w)
        grad = A.T @ losses.derivs(cid, z, b) / n + l2 * w
        return val, grad

    def curvature(w):
        # phi'' by a central difference of the one phi' the package has (no second copy of
        # the loss); exact for the squared loss, O(eps^2) for logistic.
        z = A @ w
        return (losses.derivs(cid, z + eps, b) - losses.derivs(cid, z - eps, b)) / (2 * eps)

    state = {"w": None, "h": None}

    def hessp(w, p):
        if state["w"] is None or not np.array_equal(state["w"], w):
            state["w"], state["h"] = w.copy(), curvature(w)
        return A.T @ (state["h"] * (A @ p)) / n + l2 * p

    res = so.minimize(fun, w0, jac=True, hessp=hessp, method="trust-ncg",
                      options={"gtol": 1e-14, "maxiter": max_iter})
    return res.x


def reference_solution(problem: Problem, rtol: float = 1e-10, max_epochs: float = 20000,
                       max_seconds: float = 1800.0, seed: int = 0) -> Reference:
    """P* of ``problem`` certified by a duality gap of at most ``rtol * |P*|``."""
    t0 = time.perf_counter()
    res = solve(problem, "dual_rcd", sampling="importance", dual_step="newton", seed=seed,
                max_epochs=max_epochs, max_seconds=max_seconds / 2, tol=rtol,
                eval_every=max(1.0, min(10.0, max_epochs / 100)))
    candidates = [(res.w, res.alpha, "dual_rcd_newton")]
    best = _best(problem, candidates)
    if best[2] > rtol * abs(best[0]) and problem.info.twice_differentiable \
            and problem.l1 == 0.0:
        w = _newton_polish(problem, res.w, max_iter=200)
        candidates.append((w, objective.alpha_of_w(problem, w), "trust_ncg"))
        best = _best(problem, candidates)
    p_star, d_star, gap, method = best
    rel = gap / abs(p_star) if p_star else math.inf
    if not (gap <= rtol * abs(p_star)):
        raise CertificationError(
            f"problem {problem.name!r}: reference gap {gap:.3e} (relative {rel:.3e}) "
            f"did not reach {rtol:g}; raise max_epochs/max_seconds")
    w, alpha = next((c[0], c[1]) for c in candidates if c[2] == method)
    return Reference(p_star, d_star, gap, rel, w, alpha, method, time.perf_counter() - t0)


def _best(problem: Problem, candidates) -> tuple[float, float, float, str]:
    """Best primal value, best dual value, and their (certified) gap."""
    prim = [(objective.primal(problem, w), m) for w, _, m in candidates]
    duals = [objective.dual(problem, a) for _, a, _ in candidates]
    p_star, method = min(prim)
    d_star = max(duals)
    return p_star, d_star, max(p_star - d_star, 0.0), method
