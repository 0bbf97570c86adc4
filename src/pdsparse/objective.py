"""Primal, dual and duality gap: the one place objectives are evaluated.

For every loss phi (:mod:`pdsparse.losses`, through its array wrappers: no second copy of a
loss) and penalty g (:mod:`pdsparse.penalties`), with a vector variable w (d,) and labels b
(n,) or a matrix variable W (d, k) and a label matrix B (n, k), the loss summed over the k
columns:

    P(W)     = 1/n sum_{i,c} phi((A W)_{ic}, B_{ic}) + g(W),
    D(alpha) = -1/n sum_{i,c} phi^*(-alpha_{ic}; B_{ic}) - g^*(A^T alpha / n)  (Face-Off eq. 3),
    W(alpha) = grad g^*(A^T alpha / n),        alpha(W) = -phi'(A W).

With example weights s (``Problem(..., sample_weight=...)``, scaled to mean 1) each example's
loss is s_i phi_i: P sums s_i phi, D sums s_i phi^* and g^* reads A^T (s alpha) / n (the dual
of the loss s_i phi_i at s_i alpha_i: (s phi)^*(-s a) = s phi^*(-a)), alpha(W) is unchanged.

For the elastic net g^*(v) = ||soft(v, l1)||^2 / (2 l2) and W(alpha) = soft(A^T alpha / n, l1)
/ l2; for l1 = 0 this is Face-Off's D(alpha) = -||X alpha||^2 / (2 lambda n^2) - 1/n sum
phi_j^*(-alpha_j). For the elastic net the floating-point operations are exactly those this
module always did (Face-Off traces stay bit-identical; ``tests/test_penalties.py`` checks it).
Weak duality P(W) >= D(alpha) holds for every W and every alpha, so P(W) - D(alpha) certifies
the suboptimality of W.

**The gap at alpha = alpha(W) is a Frank-Wolfe gap.** Write f(W) = 1/n sum phi((AW), B) and
V = A^T alpha(W) / n = -grad f(W). The loss's Fenchel-Young equality phi^*(phi'(z)) =
z phi'(z) - phi(z) gives -1/n sum phi^*(-alpha) = f(W) + <V, W>, so

    P(W) - D(alpha(W)) = g(W) - <V, W> + g^*(V)
                       = max_S { <grad f(W), W - S> + g(W) - g(S) },

the generalized conditional-gradient gap (Bach, SIAM J. Optim. 2015; Nesterov 2018). For a
ball C with l2 = 0 (g = indicator of C, W in C) g^*(V) = max_{S in C} <V, S> =
-<grad f(W), lmo(grad f(W))>, and the gap is exactly the Frank-Wolfe gap
<grad f(W), W - lmo(grad f(W))> (:func:`fw_gap`). With l2 = mu > 0, Frank-Wolfe linearizes
F = f + mu/2 ||.||^2 instead, and its gap is larger: with W# = grad g^*(V),
fw_gap(W) >= P(W) - D(alpha(W)) + mu/2 ||W - W#||^2 (expand both and use S = W# in the max
of the former); both certify P(W) - P*.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize as so

from pdsparse import _products, losses
from pdsparse.errors import ConfigError
from pdsparse.problem import Problem


def _check(problem: Problem, X: np.ndarray, shape: tuple[int, ...], what: str) -> np.ndarray:
    X = np.ascontiguousarray(X, dtype=np.float64)  # the same array when it already is
    if X.shape != shape:
        raise ValueError(f"{what} of shape {X.shape} for problem {problem.name!r}, "
                         f"expected {shape}")
    return X


def _flat(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X).reshape(-1)


def _weighted(problem: Problem, X: np.ndarray) -> np.ndarray:
    """s * X row by row with the example weights s (X itself when unweighted: the same
    floating-point operations as before weights existed)."""
    s = problem.weights
    if s is None:
        return X
    return X * s if X.ndim == 1 else X * s[:, None]


def _loss_sum(problem: Problem, z: np.ndarray) -> float:
    """sum_i s_i phi_i(z_i) (summed over the label columns of a matrix)."""
    if z.ndim == 1:
        vals = losses.values(problem.loss_id, z, problem.b)
    else:
        vals = losses.values(problem.loss_id, _flat(z), _flat(problem.b)).reshape(z.shape)
    return _weighted(problem, vals).sum()


def _coef(problem: Problem, w: np.ndarray) -> np.ndarray:
    """The penalized part of w: w itself, or all but the intercept's last row."""
    return w[:-1] if problem.intercept else w


def _margins(problem: Problem, w: np.ndarray, z: np.ndarray) -> np.ndarray:
    """A w's margins ``z`` (from the coefficients) plus the intercept, if any."""
    return z + w[-1] if problem.intercept else z


def primal(problem: Problem, w: np.ndarray) -> float:
    """P(w), Face-Off eq. (1) with any penalty (+inf outside a ball)."""
    w = _check(problem, w, problem.var_shape, "primal variable")
    return _primal_at(problem, w, problem.mat @ _coef(problem, w))


def _primal_at(problem: Problem, w: np.ndarray, z: np.ndarray) -> float:
    """P(w) from the margins z = A w (without the intercept, which this adds)."""
    z = _margins(problem, w, z)
    if w.ndim == 1 and problem.weights is None:
        val = losses.values(problem.loss_id, z, problem.b).mean()
    else:
        val = _loss_sum(problem, z) / problem.n
    val = problem.penalty.add_value(val, _coef(problem, w))
    return float(val)


def smooth_value(problem: Problem, w: np.ndarray, z: np.ndarray | None = None) -> float:
    """f(w) = 1/n sum_i phi_i(a_i^T w) + l2/2 ||w||^2, the smooth part of P (a ball's
    indicator and an l1 term left out: finite at any w, e.g. an extrapolated point outside
    the ball); ``z``: the margins A w when the caller maintains them."""
    w = _check(problem, w, problem.var_shape, "primal variable")
    if z is None:
        z = _margins(problem, w, problem.mat @ _coef(problem, w))
    val = _loss_sum(problem, z) / problem.n
    flat = _coef(problem, w).reshape(-1)
    return float(val + 0.5 * problem.l2 * float(flat @ flat))


def w_of_alpha(problem: Problem, alpha: np.ndarray) -> np.ndarray:
    """The primal point paired with ``alpha``: grad g^*(A^T alpha / n) (elastic net:
    soft(A^T alpha / n, l1) / l2; a ball with l2 = 0: a vertex)."""
    alpha = _check(problem, alpha, problem.dual_shape, "dual variable")
    if problem.intercept:
        raise ConfigError(f"problem {problem.name!r} has an intercept: no primal point of a "
                          "dual one (only primal methods fit it)")
    v = problem.mat_t @ _weighted(problem, alpha) / problem.n
    return problem.penalty.grad_conjugate(v)


def dual(problem: Problem, alpha: np.ndarray) -> float:
    """D(alpha), Face-Off eq. (3); -inf when some alpha_j leaves the loss conjugate's domain.
    Pure l1: D at alpha shrunk into g*'s domain (:func:`_shrunk`)."""
    alpha = _check(problem, alpha, problem.dual_shape, "dual variable")
    alpha, u = _shrunk(problem, alpha, problem.mat_t @ _weighted(problem, alpha))
    conj = _conj_neg(problem, alpha)
    if not np.all(np.isfinite(conj)) or not _balanced(problem, alpha):
        return -np.inf
    return _dual_at(problem, alpha, conj, u)


def _shrunk(problem: Problem, alpha: np.ndarray, u: np.ndarray) -> tuple:
    """Pure l1 (g* the indicator of ||v||_inf <= l1): alpha and u = A^T (s alpha) times the
    penalty's :meth:`~pdsparse.penalties.Penalty.dual_scale`, which brings any point into the
    domain, so D there is a lower bound for every alpha (the loss conjugate's domain allows
    the shrink: it contains 0 and is convex). alpha(w) is shrunk already; u recomputed from it
    can still miss the domain by its rounding under cancellation (sum |A_ij alpha_i| 335
    times |u_j| on cod-rna: an infinite gap every few iterates before). Other penalties: as
    given."""
    if problem.l2 == 0.0 and not problem.penalty.bounded and math.isinf(
            problem.penalty.conjugate(u / problem.n)):  # outside, beyond the rounding slack
        scale = problem.penalty.dual_scale(u / problem.n)
        return alpha * scale, u * scale
    return alpha, u


BALANCE_RTOL = 1e-12
"""With an intercept the dual is constrained to sum_i s_i alpha_i = 0; a point whose sum is
within this fraction of sum_i |s_i alpha_i| counts as on it (floating-point sums of points
balanced by :func:`_balance` land within about 1e-16 of it)."""


def _balanced(problem: Problem, alpha: np.ndarray) -> bool:
    if not problem.intercept:
        return True
    sa = _weighted(problem, alpha)
    return bool(np.all(np.abs(sa.sum(axis=0)) <= BALANCE_RTOL * np.abs(sa).sum(axis=0)
                       + 1e-300))


def best_intercept(problem: Problem, z0: np.ndarray, b: np.ndarray) -> float | None:
    """argmin over c of sum_i s_i phi(z0_i + c, b_i) for one label column: the root of its
    derivative, which grows with c (closed form for the squared loss, else a bracketed root);
    None when the loss keeps falling as |c| grows (one class only: alpha = 0 is then the
    balanced point)."""
    s = problem.weights if problem.weights is not None else np.ones_like(z0)
    if problem.loss == "squared":
        return float((s * (b - z0)).sum() / s.sum())

    def slope(c):
        return float((s * losses.derivs(problem.loss_id, z0 + c, b)).sum())

    lo, hi = -1.0, 1.0
    while slope(lo) > 0 and lo > -1e8:
        lo *= 4
    while slope(hi) < 0 and hi < 1e8:
        hi *= 4
    if slope(lo) > 0 or slope(hi) < 0:
        return None
    return float(so.brentq(slope, lo, hi, xtol=1e-300, rtol=9e-16, maxiter=500))


def _balance(problem: Problem, alpha: np.ndarray) -> np.ndarray:
    """alpha on sum_i s_i alpha_i = 0: the side whose terms s_i alpha_i outweigh is scaled
    toward 0 (by t in [0, 1]: every loss's conjugate domain holds t alpha_i when it holds
    alpha_i and 0). In place; per label column."""
    cols = alpha.reshape(alpha.shape[0], -1)
    s = problem.weights if problem.weights is not None else np.ones(alpha.shape[0])
    for c in range(cols.shape[1]):
        sa = s * cols[:, c]
        r = sa.sum()
        side = sa > 0 if r > 0 else sa < 0
        total = sa[side].sum()
        if r != 0 and total != 0:
            cols[side, c] *= 1.0 - r / total
    return alpha


def _conj_neg(problem: Problem, alpha: np.ndarray) -> np.ndarray:
    if alpha.ndim == 1:
        return losses.conj_neg(problem.loss_id, alpha, problem.b)
    return losses.conj_neg(problem.loss_id, _flat(alpha), _flat(problem.b))


def _dual_at(problem: Problem, alpha: np.ndarray, conj: np.ndarray, u: np.ndarray) -> float:
    """D(alpha) from the finite phi^*(-alpha) values ``conj`` and u = A^T (s alpha)."""
    v = u / problem.n
    if problem.weights is not None:
        conj = _weighted(problem, conj.reshape(alpha.shape))
        return float(-(conj.sum() / problem.n) - problem.penalty.conjugate(v))
    if alpha.ndim == 1:
        return float(-conj.mean() - problem.penalty.conjugate(v))
    return float(-(conj.sum() / problem.n) - problem.penalty.conjugate(v))


def alpha_of_w(problem: Problem, w: np.ndarray) -> np.ndarray:
    """The dual point paired with ``w``: alpha_j = -phi_j'(a_j^T w) (optimal when w is),
    times the penalty's :meth:`~pdsparse.penalties.Penalty.dual_scale` when g* has a bounded
    domain (pure l1: s = min(1, l1 / ||A^T alpha / n||_inf), 1 at the optimum)."""
    w = _check(problem, w, problem.var_shape, "primal variable")
    z = _margins(problem, w, problem.mat @ _coef(problem, w))
    return _alpha_at(problem, z, problem.mat_t.__matmul__)[0]


def _alpha_at(problem: Problem, z: np.ndarray, rmatvec) -> tuple[np.ndarray, np.ndarray | None]:
    """alpha(w) from the margins z = A w (+ the intercept), and for pure l1 u = A^T (s alpha)
    (else None); ``rmatvec``: alpha -> A^T alpha. With an intercept alpha is then balanced
    onto the dual's constraint (:func:`_balance`; one class only: alpha = 0), at the iterate's
    own intercept: no 1-D solve for the best intercept of its coefficients, which certified no
    better in a trial (pure l1 on Zipf-BOW, the same gaps pass for pass).

    Pure l1 scales alpha and the u it was scaled by alike (:func:`_shrunk`; it saves a
    pass)."""
    if z.ndim == 1:
        alpha = -losses.derivs(problem.loss_id, z, problem.b)
    else:
        alpha = -losses.derivs(problem.loss_id, _flat(z), _flat(problem.b)).reshape(z.shape)
    if problem.intercept:
        _balance(problem, alpha)
    u = None
    if problem.l2 == 0.0 and not problem.penalty.bounded:
        u = rmatvec(_weighted(problem, alpha))
        scale = problem.penalty.dual_scale(u / problem.n)
        alpha *= scale
        u *= scale
    return alpha, u


def gap_from_gradient(problem: Problem, w: np.ndarray, loss_grad: np.ndarray,
                      z: np.ndarray | None = None, alpha: np.ndarray | None = None,
                      loss_term: float | None = None) -> float:
    """The duality gap P(w) - D(alpha) at the dual point :func:`certificate` pairs with w,
    from the loss part's gradient grad f(w) = A^T (s phi'(A w)) / n, without a pass over A
    (what a primal method that keeps the gradient tells). No intercept (its dual point is
    balanced).

    l2 > 0: O(d). At alpha(w) = -phi'(A w) the loss's Fenchel-Young inequality is an
    equality, so that what is left is the penalty's, g(w) + g*(-grad f(w)) + <w, grad f(w)>.
    Pure l1: O(n) with the margins ``z`` = A w (or, when the caller has them, ``alpha`` =
    -phi'(z) and ``loss_term`` = 1/n sum_i s_i phi(z_i)): alpha scaled into the dual's
    domain by :meth:`~pdsparse.penalties.Penalty.dual_scale` of -grad f(w) = A^T (s alpha)
    / n, D from its phi* values; the values :func:`certificate` computes from a fresh A w,
    up to rounding."""
    if problem.intercept:
        raise ConfigError("gap_from_gradient: no intercept (its dual point is balanced)")
    pen = problem.penalty
    if problem.l2 > 0:
        return gap_lower_bound(problem, w, loss_grad)  # exact: the scale is 1
    if z is None and (alpha is None or loss_term is None):
        raise ConfigError("gap_from_gradient: pure l1 needs the margins z = A w")
    scale = pen.dual_scale(-loss_grad)
    if alpha is None:
        alpha = -losses.derivs(problem.loss_id, z, problem.b)
    alpha = scale * alpha
    p_val = _primal_at(problem, w, z) if loss_term is None else pen.add_value(loss_term, w)
    return float(p_val - _dual_at(problem, alpha, _conj_neg(problem, alpha),
                                  -problem.n * scale * loss_grad))


def gap_lower_bound(problem: Problem, w: np.ndarray, loss_grad: np.ndarray) -> float:
    """A lower bound, O(d), on the gap :func:`gap_from_gradient` reads (the certificate's at
    w, up to rounding), from the loss part's gradient grad f(w) = -A^T (s alpha) / n at
    alpha = alpha(w) before its scale t = :meth:`~pdsparse.penalties.Penalty.dual_scale`
    (1 with l2 > 0, where the bound is the gap):

        gap >= g(w) + g*(-t grad f(w)) + t <w, grad f(w)>.

    The gap is 1/n sum_i s_i [phi_i(z_i) + phi_i*(-t alpha_i)] + g(w) + g*(-t grad f(w)); by
    Fenchel-Young's equality at -alpha_i = phi_i'(z_i), phi_i(z_i) = -alpha_i z_i -
    phi_i*(-alpha_i), and z_i is a subgradient of phi_i* there, so that phi_i*(-t alpha_i) -
    phi_i*(-alpha_i) >= (1 - t) alpha_i z_i; summed, 1/n sum_i s_i alpha_i z_i = -<w,
    grad f(w)>. The bound gives up that convexity's remainder, which vanishes with 1 - t
    (second order): with pure l1 it tells an iterate far from tol without the O(n) pass of
    phi* values. No intercept."""
    if problem.intercept:
        raise ConfigError("gap_lower_bound: no intercept (its dual point is balanced)")
    pen = problem.penalty
    scale = pen.dual_scale(-loss_grad)
    return float(pen.value(w) + pen.conjugate(-scale * loss_grad)
                 + scale * float(w @ loss_grad))


def duality_gap(problem: Problem, w: np.ndarray, alpha: np.ndarray) -> float:
    """P(w) - D(alpha) >= P(w) - P* >= 0."""
    return primal(problem, w) - dual(problem, alpha)


def evaluate(problem: Problem, w: np.ndarray,
             alpha: np.ndarray | None = None) -> tuple[float, float, float]:
    """(P(w), D(alpha), gap), with alpha = alpha(w) when not given (:func:`certificate`
    without its dual point)."""
    return certificate(problem, w, alpha)[:3]


CSC_EVAL_MIN_D = 2**17
"""A wide matrix's evaluations build its CSC from this many features (a length-d vector of 1
MiB, past the L2 cache, where the CSR's scattered reads miss: Mnist-RB's 3x); below, an
evaluation uses the CSC only when a column kernel has built it: building it for the
evaluations of a row kernel cost leu's dual RCD solve 1.3 of its 4.6 ms (benchmarks/
README.md)."""


def certificate(problem: Problem, w: np.ndarray,
                alpha: np.ndarray | None = None) -> tuple[float, float, float, np.ndarray]:
    """(P(w), D(alpha), gap, alpha), with alpha = alpha(w) when not given (returned: what a
    primal method's solve keeps, formed in the passes of the gap): the values of
    :func:`primal` and :func:`dual` to the bit. With sparse data and a vector variable the
    products come from ``_products``' kernels with scipy's operations in scipy's order: A w
    and A^T alpha from one pass over A when alpha is given (an evaluation of
    :func:`pdsparse.solvers.solve` then costs 0.6x as much), else A w once for alpha(w) and
    its P. On a wide matrix (d > n) the pass runs over the CSC when a column kernel built
    it or d >= :data:`CSC_EVAL_MIN_D`: its random accesses go to the length-n vectors, about
    3x faster on Mnist-RB (d = 1.6e6, n = 5.8e4; measured: benchmarks/README.md,
    "Measurements cited by the code")."""
    if problem.dense or problem.matrix:
        if alpha is None:
            alpha = alpha_of_w(problem, w)
        p_val, d_val = primal(problem, w), dual(problem, alpha)
        return p_val, d_val, p_val - d_val, alpha
    w = _check(problem, w, problem.var_shape, "primal variable")
    coef = _coef(problem, w)
    wide = problem.d > problem.n and (problem.csc_built or problem.d >= CSC_EVAL_MIN_D)
    M = problem.csc if wide else problem.csr
    if alpha is None:
        if wide:
            z = _products.csc_matvec(M.data, M.indices, M.indptr, coef, problem.n)

            def rmatvec(a):
                return _products.csc_rmatvec(M.data, M.indices, M.indptr, a)
        else:
            z, rmatvec = problem.mat @ coef, problem.mat_t.__matmul__
        alpha, u = _alpha_at(problem, _margins(problem, w, z), rmatvec)
        if u is None:
            u = rmatvec(_weighted(problem, alpha))
    else:
        alpha = _check(problem, alpha, problem.dual_shape, "dual variable")
        products = _products.csc_products if wide else _products.csr_products
        z, u = products(M.data, M.indices, M.indptr, coef, _weighted(problem, alpha))
        alpha, u = _shrunk(problem, alpha, u)
    p_val = _primal_at(problem, w, z)
    conj = _conj_neg(problem, alpha)
    d_val = _dual_at(problem, alpha, conj, u) \
        if np.all(np.isfinite(conj)) and _balanced(problem, alpha) else -np.inf
    return p_val, d_val, p_val - d_val, alpha


def loss_gradient(problem: Problem, w: np.ndarray) -> np.ndarray:
    """grad f(w) = A^T (s phi'(A w)) / n, the gradient of the loss part of P (no penalty)
    with respect to the coefficients. phi' itself: not alpha(w), which pure l1 scales into
    the dual's domain and an intercept balances."""
    w = _check(problem, w, problem.var_shape, "primal variable")
    z = _margins(problem, w, problem.mat @ _coef(problem, w))
    if z.ndim == 1:
        deriv = losses.derivs(problem.loss_id, z, problem.b)
    else:
        deriv = losses.derivs(problem.loss_id, _flat(z), _flat(problem.b)).reshape(z.shape)
    return problem.mat_t @ _weighted(problem, deriv) / problem.n


def fw_gap(problem: Problem, w: np.ndarray) -> float:
    """Frank-Wolfe gap <G, w - lmo(G)>, G = grad f(w) + l2 w, of a ball-constrained problem.

    Equals P(w) - D(alpha(w)) when l2 = 0, and exceeds it when l2 > 0 (see the module
    docstring). Ball penalties only (the elastic net has no LMO).
    """
    if not problem.penalty.bounded:
        raise ConfigError(f"fw_gap needs a ball penalty, problem {problem.name!r} has "
                          f"{problem.penalty!r}")
    w = _check(problem, w, problem.var_shape, "primal variable")
    G = loss_gradient(problem, w)
    if problem.l2:
        G = G + problem.l2 * w
    S = problem.penalty.lmo(G)
    return float(_flat(G) @ _flat(w - S))
