"""Low-rank linear algebra for the trace-norm ball: top-s SVDs and the rank-s block step.

Two pieces serve every trace-norm solver (PDBFW Algorithm 2, block Frank-Wolfe and the
trace-norm baselines):

* :func:`top_singular` -- the top-s singular triplets of a dense matrix by one of three
  methods (``"lanczos"``, ``"randomized"``, ``"full"``);
* :func:`block_step` -- the rank-s block Frank-Wolfe step of Allen-Zhu, Hazan, Hu & Li
  (NeurIPS 2017, Algorithm 1), PDBFW eq. (18), returned as factors (U, sig, Vt).

**Methods** (``top_singular``):

* ``"full"``: LAPACK's divide-and-conquer SVD (``numpy.linalg.svd``, gesdd) of the whole
  matrix, truncated to s. Exact to rounding; O(m n min(m, n)) whatever s is.
* ``"lanczos"``: ``scipy.sparse.linalg.svds`` with ``solver="propack"`` (Larsen's PROPACK,
  Lanczos bidiagonalization with partial reorthogonalization of M itself). ARPACK, scipy's
  default, runs implicitly restarted Lanczos on the Gram matrix M^T M, which squares the
  condition number of the small singular values and measured slower than PROPACK
  (benchmarks/README.md, "Measurements cited by the code"); PROPACK however stops with "did not
  converge within kmax" for small s on matrices without a spectral gap (a Gaussian matrix at
  s = 1, 10), so on that error we fall back to ARPACK (tol = 0: machine precision) --
  correctness first. The start vector is drawn from ``seed``, so the result is
  deterministic. ARPACK needs s < min(m, n); for s >= min(m, n) - 1 the full SVD is used.
* ``"randomized"``: Halko, Martinsson & Tropp, *Finding structure with randomness*, SIAM Rev.
  53 (2011): Algorithm 4.4 (randomized subspace iteration: a Gaussian test matrix with
  ``oversample`` extra columns, ``power_iters`` passes of M M^T, each re-orthonormalized by a
  QR factorization because the plain power scheme of Alg. 4.3 loses the small directions to
  rounding) followed by Algorithm 5.1 (the SVD of the small matrix Q^T M). Defaults:
  oversampling p = 10 (Halko et al. Sec. 4.2: "p = 5 or p = 10 is often sufficient") and
  q = 4 power iterations (scikit-learn's ``randomized_svd`` default; Halko et al. Sec. 4.5
  recommend q = 1-2 for a slowly decaying spectrum, more buys accuracy). The error bound of
  Halko et al. Cor. 10.10 shrinks the tail by the power 1/(2q+1):
  E ||M - Q Q^T M|| <= [(1 + sqrt(s/(p-1))) sigma_{s+1}^{2q+1} + e sqrt(s+p)/p
  (sum_{j>s} sigma_j^{2(2q+1)})^{1/2}]^{1/(2q+1)}, so on a matrix with a spectral gap
  sigma_{s+1}/sigma_s = rho the captured subspace is accurate to about rho^{2q+1} relative
  (q = 4: rho^9; rho = 0.5 gives 2e-3, rho = 0.1 gives 1e-9). Without a gap it is an
  approximation, e.g. a 800 x 600 Gaussian matrix at s = 10 gets its top singular values to
  ~4% (``benchmarks/lowrank_step.py``). When s + p >= min(m, n) the full SVD
  is cheaper and is used.

**Default.** ``DEFAULT_METHOD`` (``"lanczos"``) is the fastest method that is exact on every
matrix; the measurements are in its docstring.
"""

from __future__ import annotations

import numpy as np

from pdsparse.errors import ConfigError
from pdsparse.penalties import project_l1_ball

__all__ = ["METHODS", "DEFAULT_METHOD", "top_singular", "project_singular_values",
           "block_step", "block_objective"]

METHODS = ("lanczos", "randomized", "full")
"""The methods of :func:`top_singular`."""

DEFAULT_METHOD = "lanczos"
"""Default method of :func:`top_singular` and :func:`block_step`: the fastest *exact* one.

Measured with ``python benchmarks/lowrank_step.py`` (top-s SVDs of 800 x 600 matrices, with and
without a spectral gap, and block FW's iterations on PDBFW's Sec. 5.1 problem with
``--solvers``; the tables, machine and dates: benchmarks/README.md, "Measurements cited by the
code"). On the gapped matrices the block step forms (X - G/coef near a low-rank optimum)
Lanczos is the fastest (well ahead of the full SVD, and of the randomized method) and both are
exact to ~1e-15; without a gap the randomized method is faster but its singular values are off
by a few percent (q = 4), while Lanczos stays exact at up to the cost of a full SVD. Lanczos is
the default because it is the fastest exact method; pass ``method="randomized"`` for speed on
gapless matrices, or ``"full"`` when s is a large fraction of min(d, c).
"""

OVERSAMPLE = 10
"""Halko et al. (2011) Sec. 4.2: oversampling p = 10."""

POWER_ITERS = 4
"""Power iterations q of Halko et al. Algorithm 4.4 (scikit-learn's default)."""


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ConfigError(f"top_singular: unknown method {method!r}; choose one of "
                          f"{list(METHODS)}")
    return method


def _full(M: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    U, sig, Vt = np.linalg.svd(M, full_matrices=False)
    return U[:, :s].copy(), sig[:s].copy(), Vt[:s].copy()


def _descending(U, sig, Vt):
    order = np.argsort(sig)[::-1]
    return np.ascontiguousarray(U[:, order]), sig[order].copy(), np.ascontiguousarray(
        Vt[order])


def _lanczos(M: np.ndarray, s: int, seed: int):
    from scipy.sparse.linalg import svds

    try:
        U, sig, Vt = svds(M, k=s, solver="propack", rng=np.random.default_rng(seed))
    except np.linalg.LinAlgError:
        # PROPACK's "did not converge within kmax iterations": no spectral gap at s
        U, sig, Vt = svds(M, k=s, solver="arpack", tol=0, rng=np.random.default_rng(seed))
    return _descending(U, sig, Vt)


def _randomized(M: np.ndarray, s: int, seed: int, oversample: int, power_iters: int):
    m, n = M.shape
    ell = s + oversample
    omega = np.random.default_rng(seed).standard_normal((n, ell))
    # numpy's QR, not scipy.linalg.qr: scipy links its own OpenBLAS, whose idle threads
    # contend with numpy's after each product and slow the QR that follows many times over
    # (measured: benchmarks/README.md, "Measurements cited by the code")
    Q = np.linalg.qr(M @ omega)[0]
    for _ in range(power_iters):
        Q = np.linalg.qr(M @ np.linalg.qr(M.T @ Q)[0])[0]
    Ub, sig, Vt = np.linalg.svd(Q.T @ M, full_matrices=False)
    return np.ascontiguousarray(Q @ Ub[:, :s]), sig[:s].copy(), np.ascontiguousarray(Vt[:s])


def top_singular(M: np.ndarray, s: int, method: str = DEFAULT_METHOD, seed: int = 0, *,
                 oversample: int = OVERSAMPLE, power_iters: int = POWER_ITERS
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top-s singular triplets of a dense matrix M (m x n): (U (m, s), sigma (s,), Vt (s, n))
    with sigma in decreasing order and M ~ U diag(sigma) Vt.

    ``method``: ``"lanczos"`` (scipy PROPACK, ARPACK fallback), ``"randomized"`` (Halko et al.
    2011, Alg. 4.4 + 5.1, with ``oversample`` and ``power_iters``) or ``"full"`` (LAPACK);
    see the module docstring for the choices and their accuracy. ``seed`` fixes the random
    start (Lanczos) or test matrix (randomized). s is clipped to min(m, n).
    """
    _check_method(method)
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2:
        raise ConfigError(f"top_singular needs a matrix, got shape {M.shape}")
    if isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 1:
        raise ConfigError(f"top_singular: the rank s must be a positive integer, got {s!r}")
    s = min(int(s), *M.shape)
    if method == "lanczos" and s < min(M.shape) - 1 and np.any(M):
        return _lanczos(M, s, seed)
    if method == "randomized" and s + oversample < min(M.shape):
        return _randomized(M, s, seed, oversample, power_iters)
    return _full(M, s)


def project_singular_values(sigma: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of nonnegative singular values onto {p >= 0, sum p <= radius}.

    For a nonnegative vector the l1-ball projection of Duchi et al. (2008, Fig. 1) is this
    projection (its soft threshold keeps signs, so the result stays >= 0); it keeps the order
    of the entries. Negative inputs (rounding) are clipped to 0 first.
    """
    return project_l1_ball(np.maximum(np.asarray(sigma, dtype=np.float64), 0.0), radius)


def block_step(X: np.ndarray, G: np.ndarray, coef: float, s: int, radius: float,
               method: str = DEFAULT_METHOD, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rank-s block Frank-Wolfe step over the trace-norm ball, as factors (U, sig, Vt).

    Solves (the step of Allen-Zhu, Hazan, Hu & Li, NeurIPS 2017, Algorithm 1; PDBFW eq. (18))

        V = argmin { <G, V> + (coef/2) ||V - X||_F^2 : ||V||_* <= radius, rank(V) <= s }

    (block FW: G = grad f(X), coef = beta eta; PDBFW: G = Z/n + grad g(X), coef = L eta).
    Completing the square, V is the projection of M = X - G/coef onto {||V||_* <= radius,
    rank(V) <= s}; by von Neumann's trace inequality the minimizer shares M's singular vectors,
    and its singular values minimize ||p - sigma(M)||^2 over p >= 0, sum p <= radius, with at
    most s nonzeros, which is the l1-ball projection of the top s singular values (the
    projection onto the sparse simplex keeps the s largest entries: Kyrillidis, Becker, Cevher
    & Koch, ICML 2013, Sec. 3). So V = U diag(sig) Vt with (U, sigma, Vt) the top-s SVD of M
    and sig = :func:`project_singular_values` (sigma, radius). Only the triplets with sig > 0
    are returned (the projection zeroes the tail), so callers update A V with a product of
    rank <= s: (A U) diag(sig) Vt.

    **Approximation** (PDBFW Definition 4.2 = Allen-Zhu et al. Definition 3.2). With
    l(V) = <G, V - X> + (coef/2) ||V - X||_F^2 and l* = l(X_bar) at the optimum X_bar, a
    feasible V is (gamma, eps)-approximate if l(V) <= (1 - gamma) l* + eps. When
    s >= rank(X_bar), X_bar is feasible for the rank-s problem, so the exact minimizer has
    l(V) <= l*; and l* <= 0: with coef = beta eta, eta <= alpha/beta and f alpha-strongly
    convex, <G, X_bar - X> <= f(X_bar) - f(X) - alpha/2 ||X_bar - X||^2, so
    l* <= f(X_bar) - f(X) <= 0 (PDBFW takes eta = mu/(2L), Theorem 4.3). Hence
    l(V) <= l* <= (1 - 1/2) l* + eps/8: the exact step is (1/2, eps/8)-approximate for every
    eps >= 0, which is what PDBFW Lemma B.7 (and the linear rate of Allen-Zhu et al.) assume.
    An inexact top-s SVD is still feasible (projected singular values, rank <= s), and as
    l(V) = (coef/2) ||V - M||_F^2 + const it loses (coef/2) (||V - M||^2 - ||V_exact - M||^2);
    the ``"lanczos"`` method is exact to rounding, and ``"randomized"`` reaches full-SVD
    accuracy on gapped matrices such as these problems' (module docstring;
    ``tests/test_lowrank.py`` checks the step against the full SVD and a brute-force search).
    """
    if not (np.isfinite(coef) and coef > 0):
        raise ConfigError(f"block_step: coef must be finite and > 0, got {coef!r}")
    if not (np.isfinite(radius) and radius > 0):
        raise ConfigError(f"block_step: radius must be finite and > 0, got {radius!r}")
    M = np.asarray(X, dtype=np.float64) - np.asarray(G, dtype=np.float64) / coef
    U, sigma, Vt = top_singular(M, s, method, seed)
    sig = project_singular_values(sigma, radius)
    keep = sig > 0
    return np.ascontiguousarray(U[:, keep]), sig[keep], np.ascontiguousarray(Vt[keep])


def block_objective(X: np.ndarray, G: np.ndarray, coef: float, V: np.ndarray) -> float:
    """l(V) = <G, V - X> + (coef/2) ||V - X||_F^2, the objective of :func:`block_step`
    (PDBFW Definition 4.2)."""
    D = np.asarray(V, dtype=np.float64) - np.asarray(X, dtype=np.float64)
    return float(np.vdot(G, D) + 0.5 * coef * np.vdot(D, D))
