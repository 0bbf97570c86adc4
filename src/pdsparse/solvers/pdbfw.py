"""PDBFW, the Primal-Dual Block Frank-Wolfe method (Lei, Zhuo, Caramanis, Dhillon & Dimakis,
2019), as a kernel of the solver registry (``pdbfw``): Algorithm 1 over the l1 ball
(:class:`PDBFWL1Kernel`, Cython, sparse or dense data) and Algorithm 2 over the trace-norm
ball (:class:`PDBFWTraceKernel`, NumPy/BLAS, a label matrix, dense or sparse data).

Problems: P(x) = 1/n sum_i f_i(a_i^T x) + mu/2 ||x||^2 over ||x||_1 <= r (``L1Ball(r, mu)``,
labels b (n,)) or over ||X||_* <= theta (``TraceBall(theta, mu)``, a label matrix B (n, c)),
with the smooth hinge or the squared loss (Assumption 4.1: f_i beta-smooth, alpha-strongly
convex on an interval and linear outside it; the house's smooth hinge of Appendix B.7 and
squared loss have alpha = beta = 1) and mu > 0. The updates, equation numbers and the paper's
slips are in the docstring of :mod:`pdsparse.solvers._pdbfw` (Algorithm 1) and of
:class:`PDBFWTraceKernel` (Algorithm 2).

**Step sizes** (Corollary 4.1.1, g = mu/2 ||x||^2 so L = mu): eta = mu / (2 L) = 1/2 and
delta = (1/k) (1 / (n beta) + 25 R / (2 mu n^2))^{-1}, R = max_i ||a_i||^2, times the
``delta`` option's multiplier (the paper gives no other value). Algorithm 2 takes Theorem
4.3's bound delta = (1/k) (1 / (n beta) + 45 R / (2 mu n^2))^{-1} (alpha = beta, L = mu) with
R = max_{|I| <= k} sigma_max^2(A_I), bounded by min(||A||_2^2, the sum of the k largest
||a_i||^2). Measured (``tests/test_pdbfw.py``'s problems and synthetic sparse ones, relative
certified gap): every multiplier converges on well-conditioned problems (unit rows, mu =
10/n), the theorem step slowly: n = 60, d = 40, gap 1e-9 in about 1000 iterations (theorem),
110 (x10), 15-28 (x100), 10-28 (x1000). With full blocks (s = d, k = n) the theorem step's
iterations grow like n (700, 1330, 2450, 3750 for n = 60, 120, 240, 480 at gap 1e-6),
where Corollary 4.1.1 promises O((1 + kappa/n) log(1/eps)) (kappa/n = 0.1 there): Claim B.1
states that -D is 1/beta-strongly convex, but with the 1/n on f^* in D it is only
1/(n beta)-strongly convex, and the missing n carries into (23) and the rate. On
ill-conditioned problems (R = 540, mu = 1e-3, n = 300) every multiplier is slow, and x1000
oscillates (gap above 1 after 300 epochs): the theorem step is the safe default, the
multipliers are for speed where they converge.

**s and k.** The paper sets s to an upper bound of nnz(x*) (rank(X*)), unknown to a user.
``s=auto`` starts at ``S_START`` and after each iteration (``_pdbfw``'s ``adapt``) doubles s
if the s-sparse (rank-s) step was not the full projected step (the projection of
v = x - grad / (L eta) onto the whole ball has more than s nonzeros, resp. singular values:
the block truncated a coordinate the projected-gradient step moves); the full step's
support being x~'s when it was, after ``_pdbfw.CALM_STEPS`` (5) such steps in a row s
shrinks to max(S_START, 2 max nnz(x~)) over them when that is smaller. At the saddle point
v = 2 x_bar - x* (x_bar = grad g^*(A^T alpha / n)) and its projection is x*, so s settles in
[nnz(x*), 2 nnz(x*)] (floored at S_START) once the iterates are near the optimum. Early
iterations, with the dual still near 0 and the ball loose, ask for large supports: growing
only (as the rule "grow when x~ fills the block" does too) kept s at that early size, and
shrinking after every exact step, not after a window, cycled when the supports alternated
between two sizes (news20, delta x1000: 1800 and 3600). Measured on synthetic sparse
smooth-hinge problems (unit rows, mu = 10/n, ball active), epochs to a 1e-6 gap, doubling
only / this rule / the paper's s = nnz(x*): n = 2000, d = 20000, nnz(x*) = 723: x100 41 / 29
/ 15, x1000 5.8 / 4.7 / 4.5, x10 > 300 / 300 / 121; n = 5000, d = 2000, nnz(x*) = 40: x100
249 / 56 / 22, x1000 8.7 / 7.3 / 4.0 (the theorem step reached none within 300 epochs, not
even with s = nnz(x*)). On news20 (one class against the rest, unit rows, r = 300, mu =
10/n, nnz(x*) = 3565) this rule with x100 converges in 600 epochs; with x1000 it falls
into a period-2 cycle of the iteration (supports 1473 and 3997, s = 4096, every step exact)
that s = 4096 fixed from the start avoids (1e-12 in 163 iterations): the large dual step
has coexisting attractors, and the early truncated steps lead into the cycle's.
``k=auto`` is max(1, ceil(n s / d)) (Algorithm 1, the text after Corollary 4.1.1; updated
with s) and max(1, floor(n s (1/c + 1/d))) for Algorithm 2 (Sec. 4.4: k <= n s (1/c +
1/d)). A number fixes s (capped at d, resp. min(d, c)) or k (capped at n).

**Iterates.** ``iterates()`` returns x and, of the two dual points alpha = -y (the kernel's
own) and alpha(x) = -phi'(A x) (:func:`pdsparse.objective.alpha_of_w`), the one with the
larger D: both certify x by weak duality, and the kernel's y lags x early on (its rows move
k at a time) while alpha(x) is the pairing at the optimum. The choice costs one product with
A and two evaluations of D, outside the kernel's timer. With eta = 1/2 the coordinates x~
leaves halve every iteration without reaching 0, so nnz(x) counts every coordinate the
blocks ever held (a few times nnz(x*) in the runs above); eta = 1 would keep x s-sparse at
the same measured speed, but is outside Lemma B.2 (eta <= mu / (2 L)).

Algorithm 1 is deterministic; Algorithm 2 draws the Lanczos start vectors of its SVDs
from ``seed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from pdsparse import losses, lowrank, objective
from pdsparse.errors import ConfigError
from pdsparse.names import (
    PDBFW_DELTAS,
    PDBFW_EXTRAPOLATIONS,
    PDBFW_KS,
    PDBFW_SIZES,
    step_multiplier,
)
from pdsparse.penalties import L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers import _pdbfw
from pdsparse.solvers.base import _int_option, _Kernel, _option, _Options

__all__ = ["PDBFWOptions", "PDBFWL1Kernel", "PDBFWTraceKernel", "DELTA_MULTIPLIER", "S_START",
           "pdbfw_factory", "corollary_q_per_k"]

DELTA_MULTIPLIER = {name: math.inf if name == "exact" else step_multiplier(name)
                    for name in PDBFW_DELTAS}
"""Multipliers of the Corollary 4.1.1 (Theorem 4.3) dual step delta; ``exact`` is delta =
inf, the exact maximization of (10)/(14) over each row (y~_i = f_i'(w_i)), which large
multipliers reach once the proximal term no longer binds (on duke x1000 to x100000 give
identical runs); the others read by :func:`pdsparse.names.step_multiplier`."""

EXTRAPOLATION = {"none": 0.0, "primal": 1.0}
"""theta of the primal point x^(t) + theta (x^(t) - x^(t-1)) that the dual step reads, by the
``extrapolate`` option (1: Chambolle & Pock 2011, Algorithm 1)."""
assert tuple(EXTRAPOLATION) == PDBFW_EXTRAPOLATIONS

S_START = 8
"""The first and smallest s of ``s=auto`` (capped at d, resp. min(d, c))."""

ETA = 0.5
"""The primal step eta = mu / (2 L) = 1/2 (Corollary 4.1.1; L = mu for g = mu/2 ||x||^2)."""

LOSSES = ("smooth_hinge", "squared")


@dataclass(frozen=True)
class PDBFWOptions(_Options):
    """Options of PDBFW (Algorithm 1 on an l1 ball, Algorithm 2 on a trace-norm ball)."""

    s: str = _int_option(
        "auto", PDBFW_SIZES,
        "sparsity (rank) of the block step (8)/(18): auto (from 8, doubled when the step "
        "truncates the full projected step, down to 2 max |supp x~| after 5 exact ones) or "
        "a number (the paper: a bound on nnz(x*))")
    k: str = _int_option(
        "auto", PDBFW_KS,
        "dual rows updated per iteration (11)/(15): auto (as printed: ceil(n s / d); trace "
        "ball: floor(n s (1/c + 1/d))), balance (the rows that cost what the primal update "
        "did: entries read by (9) / (nnz(A) / n); trace ball: ceil(n r / c)), n (every "
        "row) or a number")
    delta: str = _option(
        "theorem", PDBFW_DELTAS,
        "dual step delta: Corollary 4.1.1's (theorem; Theorem 4.3's bound on a trace ball), "
        "that step times 10 ... 100000, or exact (delta = inf: each row's exact maximum)")
    extrapolate: str = _option(
        "none", PDBFW_EXTRAPOLATIONS,
        "the primal point the dual step (10)/(14) reads: none (as printed: x^(t)) or primal "
        "(2 x^(t) - x^(t-1), Chambolle-Pock's extrapolation; with k=n the variant a public "
        "PDFW.m is described to run, not the printed algorithm; with delta=exact it stalls "
        "on the smooth hinge: no proximal term damps the extrapolation)", late=True)


def corollary_q_per_k(problem: Problem, multiplier: float = 1.0) -> float:
    """n / delta per unit of k for Corollary 4.1.1's delta, divided by ``multiplier``.

    delta = (1/k) (1/(n beta) + 25 R / (2 mu n^2))^{-1}, R = max_i ||a_i||^2, so n / delta =
    k (1/beta + 25 R / (2 mu n)); the kernel's dual step takes q = n / delta.
    """
    n, mu, beta = problem.n, problem.l2, problem.smoothness
    r2 = float(np.max(problem.row_sqnorms))
    return (1.0 / beta + 25.0 * r2 / (2.0 * mu * n)) / multiplier


def _count(value: str, cap: int) -> int:
    return min(int(value), cap)


def _check_problem(problem: Problem, ball: type) -> None:
    if problem.loss not in LOSSES:
        raise ConfigError(f"pdbfw: loss {problem.loss!r} is not covered by Assumption 4.1 "
                          f"(beta-smooth, strongly convex on an interval and linear outside); "
                          f"choose one of {list(LOSSES)}")
    if not problem.l2 > 0:
        raise ConfigError(f"pdbfw needs l2 > 0 (g = l2/2 ||x||^2 strongly convex, Assumption "
                          f"4.1); problem {problem.name!r} has {problem.penalty!r}")
    if not isinstance(problem.penalty, ball):
        raise ConfigError(f"pdbfw: this kernel takes a {ball.__name__}, problem "
                          f"{problem.name!r} has {problem.penalty!r}")


class PDBFWL1Kernel(_Kernel):
    """PDBFW Algorithm 1 over the l1 ball (``_pdbfw.pdbfw_l1``): per iteration the s-sparse
    block Frank-Wolfe step (8), w = A x by (9), the GS-r dual step on k rows (10)-(11) and
    z = A^T y by (12).

    ``run(budget)`` returns (iterations, entries of A read). ``s``, ``k``: the current block
    sizes; ``counter(name)`` reads ``_pdbfw.INFO``.
    """

    def __init__(self, problem: Problem, options: PDBFWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None):
        options = options or PDBFWOptions()
        _check_problem(problem, L1Ball)
        self.problem = problem
        self.seed = seed  # unused: Algorithm 1 is deterministic
        n, d = problem.n, problem.d
        self.rows = problem.lines("rows")
        self.cols = problem.lines("cols")
        self.q_per_k = corollary_q_per_k(problem, DELTA_MULTIPLIER[options.delta])
        self.eta = ETA
        self.theta = EXTRAPOLATION[options.extrapolate]
        self.adapt = options.s == "auto"
        self.s_floor = min(S_START, d)
        s = self.s_floor if self.adapt else _count(options.s, d)
        self.k_rule = {"auto": _pdbfw.K_PRINTED, "balance": _pdbfw.K_BALANCE}.get(
            options.k, _pdbfw.K_FIXED)
        k = {"auto": max(1, min(n, math.ceil(n * s / d))), "balance": 1, "n": n}.get(
            options.k) or _count(options.k, n)
        self.info = np.zeros(_pdbfw.INFO["size"], dtype=np.int64)
        self.info[_pdbfw.INFO["s"]] = s
        self.info[_pdbfw.INFO["k"]] = k
        self.x, self.alpha = np.zeros(d), np.zeros(n)
        self.w, self.u = np.zeros(n), np.zeros(d)
        if w0 is not None:
            x0 = np.array(w0, dtype=np.float64)
            if x0.shape != (d,):
                raise ConfigError(f"pdbfw: w0 of shape {x0.shape}, expected ({d},)")
            if not np.isfinite(problem.penalty.value(x0)):
                raise ConfigError(f"pdbfw: w0 lies outside the l1 ball of radius "
                                  f"{problem.radius} (||w0||_1 = {np.abs(x0).sum()})")
            # the dual point paired with x0, so that the saddle-point iteration starts balanced
            self.x[:] = x0
            self.w[:] = problem.mat @ x0
            self.alpha[:] = objective.alpha_of_w(problem, x0)
            self.u[:] = problem.mat.T @ self.alpha
        # scratch: v, the selection's copy, x~ and its indices (d); y~, y~ - y, the copy
        # and the rows (n)
        self.v, self.buf_d, self.xt = (np.zeros(d) for _ in range(3))
        self.cand, self.dy, self.buf_n = (np.zeros(n) for _ in range(3))
        self.idx_d = np.zeros(d, dtype=np.int32)
        self.idx_n = np.zeros(n, dtype=np.int32)

    @property
    def s(self) -> int:
        return self.counter("s")

    @property
    def k(self) -> int:
        return self.counter("k")

    def counter(self, name: str) -> int:
        """A slot of the kernel's ``info`` (``_pdbfw.INFO``): "s", "k", "exact", ..."""
        return int(self.info[_pdbfw.INFO[name]])

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        return _pdbfw.pdbfw_l1(*self.rows, *self.cols, p.b, self.x, self.alpha, self.w, self.u,
                               p.l2, p.radius, p.loss_id, self.eta, self.q_per_k, 0.0,
                               self.adapt, self.s_floor, self.k_rule, self.v, self.buf_d,
                               self.idx_d, self.xt, self.cand, self.dy, self.buf_n,
                               self.idx_n, self.info, int(budget), self.theta)

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, the dual point of larger D: the kernel's alpha = -y or alpha(x))."""
        return self.x, _better_dual(self.problem, self.x, self.alpha)

    def solution(self) -> np.ndarray:
        return self.x


def _better_dual(problem: Problem, x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    paired = objective.alpha_of_w(problem, x)
    if objective.dual(problem, alpha) > objective.dual(problem, paired):
        return alpha
    return paired


def pdbfw_factory(problem: Problem, options: PDBFWOptions, seed: int,
                  start: np.ndarray | None = None) -> _Kernel:
    """Registry factory of ``pdbfw`` (start: w0): Algorithm 1 for an l1 ball with a label
    vector, Algorithm 2 for a trace-norm ball (a label matrix)."""
    pen = problem.penalty
    if isinstance(pen, L1Ball):
        if problem.matrix:
            raise ConfigError(f"pdbfw: an l1 ball with a label matrix ({problem.k} columns) is "
                              "not a PDBFW problem (the paper's l1 experiments are binary); "
                              "give a label vector")
        return PDBFWL1Kernel(problem, options, seed, w0=start)
    if isinstance(pen, TraceBall):
        return PDBFWTraceKernel(problem, options, seed, w0=start)
    raise ConfigError(f"pdbfw needs an l1 ball or a trace-norm ball penalty; problem "
                      f"{problem.name!r} has {pen!r}")


class PDBFWTraceKernel(_Kernel):
    """PDBFW Algorithm 2 over the trace-norm ball ||X||_* <= theta, X (d, c), with a label
    matrix B (n, c) and the squared loss (or the smooth hinge, entrywise), in NumPy/BLAS.

    House convention as in Algorithm 1: ``alpha`` = -Y (n, c), ``W`` = A X (n, c), ``U`` =
    A^T alpha = -Z (d, c). One iteration t:

    (18) X~ = argmin_{||X||_* <= theta, rank X <= s} <Z/n + mu X', X> + (L eta / 2) ||X - X'||^2
         (L = mu, eta = 1/2): :func:`pdsparse.lowrank.block_step` (Allen-Zhu, Hazan, Hu & Li,
         NeurIPS 2017), the top-s SVD of M = X' - (Z/n + mu X') / (L eta) (Lanczos, exact to
         rounding, so the (1/2, eps/8)-approximation of Algorithm 2 holds for every eps: see
         its docstring) with the singular values projected onto {sigma >= 0, sum sigma <=
         theta}, as factors U_s diag(sig) V_s^T. With ``s=auto`` the same step is formed from
         :func:`~pdsparse.lowrank.top_singular` with s + 1 triplets, the (s+1)-th deciding
         whether the rank-s step is the full projected step (sigma_{s+1} <= the threshold).
         X = (1 - eta) X' + eta X~.
    (13) W = (1 - eta) W + eta (A U_s) diag(sig) V_s^T: A U_s first, n d r multiply-adds
         for r = rank X~ <= s (not n d c).
    (14) Y~ = argmax_Y 1/n (<W, Y> - sum_i f_i^*(y_i)) - ||Y - Y'||_F^2 / (2 delta), with the
         1/n on f^* that (14) omits (the slip of Algorithm 1's (10): the saddle function of
         Sec. 4.4 and the analysis (Appendix B.8) carry it); for these losses, separable over
         the columns, it is entrywise the house's ``dual_step_exact`` with q = n / delta.
         With ``extrapolate=primal`` (an ablation, not the printed algorithm) it reads
         W + (W - W^(t-1)) = A (2 X^(t) - X^(t-1)) instead of W, as Algorithm 1 does.
    (15) I = the k rows of largest ||Y~_i - Y_i||_2 (:func:`pdsparse.solvers._pdbfw.top_k`, ties to
         the lower index), Y_I = Y~_I.
    (16) Z += A_I^T (Y - Y')_I: k rows of A times c columns.

    ``run(budget)`` returns (iterations, multiply-adds with entries of A): nnz(A) r for
    A U_s plus nnz(A_I) c for (16), so that with solve's epoch of nnz(A) c a full gradient
    (A^T phi'(A X)) costs 2 epochs, as for the vector problems. Dense or sparse A.
    """

    def __init__(self, problem: Problem, options: PDBFWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, method: str = lowrank.DEFAULT_METHOD):
        options = options or PDBFWOptions()
        _check_problem(problem, TraceBall)
        self.problem = problem
        self.seed = seed
        self.method = method
        n, d, c = problem.n, problem.d, problem.k
        self.eta = ETA
        self.theta = EXTRAPOLATION[options.extrapolate]
        self.multiplier = DELTA_MULTIPLIER[options.delta]
        self.rank_cap = min(d, c)
        self.adapt = options.s == "auto"
        self.s_floor = min(S_START, self.rank_cap)
        self.s = self.s_floor if self.adapt else _count(options.s, self.rank_cap)
        self.k_rule = options.k
        self.k = (self._auto_k() if options.k in ("auto", "balance")
                  else n if options.k == "n" else _count(options.k, n))
        # R = max_{|I| <= k} sigma_max^2(A_I) (Assumption 4.2) <= min(||A||_2^2, the sum of
        # the k largest ||a_i||^2): both bounds are exact for some A, and a larger R only
        # shrinks delta (Theorem 4.3 takes delta <= its bound)
        self.spectral2 = _spectral_norm(problem.mat, seed) ** 2
        self.row_csum = np.cumsum(np.sort(problem.row_sqnorms)[::-1])
        self.X = np.zeros((d, c))
        self.alpha = np.zeros((n, c))
        self.W = np.zeros((n, c))
        self.U = np.zeros((d, c))
        if w0 is not None:
            X0 = np.array(w0, dtype=np.float64)
            if X0.shape != (d, c):
                raise ConfigError(f"pdbfw: w0 of shape {X0.shape}, expected ({d}, {c})")
            if not np.isfinite(problem.penalty.value(X0)):
                raise ConfigError(f"pdbfw: w0 lies outside the trace-norm ball of radius "
                                  f"{problem.radius}")
            self.X[:] = X0
            self.W[:] = problem.mat @ X0
            self.alpha[:] = objective.alpha_of_w(problem, X0)
            self.U[:] = problem.mat.T @ self.alpha
        self.iters = 0
        self.exact = True
        self.last_rank = 0
        self.calm = self.peak = 0  # exact steps in a row and their largest rank (s=auto)

    def _auto_k(self, rank: int | None = None) -> int:
        """k as printed (floor(n s (1/c + 1/d)), Sec. 4.4) or, for ``k=balance``, the rows
        whose update (16) (nnz(a_i) c each) costs what (13) did (nnz(A) r): ceil(n r / c)."""
        p = self.problem
        if self.k_rule == "balance":
            r = self.s if rank is None else rank
            return max(1, min(p.n, math.ceil(p.n * max(r, 1) / p.k)))
        return max(1, min(p.n, math.floor(p.n * self.s * (1.0 / p.k + 1.0 / p.d))))

    def q(self) -> float:
        """n / delta for Theorem 4.3's delta at the current k, divided by the multiplier:
        k (1/beta + 45 R / (2 mu n)) with R = min(||A||_2^2, sum of the k largest
        ||a_i||^2)."""
        p = self.problem
        r = min(self.spectral2, float(self.row_csum[self.k - 1]))
        return self.k * (1.0 / p.smoothness + 45.0 * r / (2.0 * p.l2 * p.n)) / self.multiplier

    def _step(self, G: np.ndarray, coef: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(18) as factors; sets ``exact`` (the rank-s step is the full projected step)."""
        p = self.problem
        if not self.adapt or self.s >= self.rank_cap:
            self.exact = True
            return lowrank.block_step(self.X, G, coef, self.s, p.radius, self.method,
                                      self.seed)
        # block_step's computation with one more triplet: sigma_{s+1} against the threshold
        M = self.X - G / coef
        Us, sigma, Vt = lowrank.top_singular(M, self.s + 1, self.method, self.seed)
        sig = lowrank.project_singular_values(sigma[:self.s], p.radius)
        theta = float(sigma[0] - sig[0]) if sig[0] > 0 else float(sigma[0])
        self.exact = sigma.size <= self.s or sigma[self.s] <= theta
        keep = sig > 0
        return (np.ascontiguousarray(Us[:, :self.s][:, keep]), sig[keep],
                np.ascontiguousarray(Vt[:self.s][keep]))

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        A, n = p.mat, p.n
        rows_nnz = None if p.dense else np.diff(p.csr.indptr)
        eta, mu = self.eta, p.l2
        coef = mu * eta  # L eta, L = mu
        iters = touched = 0
        while touched < budget:
            # (18): G = Z/n + grad g(X) with Z = -U
            G = mu * self.X - self.U / n
            Us, sig, Vt = self._step(G, coef)
            r = sig.size
            W_old = self.W.copy() if self.theta else None
            self.X *= 1.0 - eta
            self.W *= 1.0 - eta
            work = 0
            if r:
                self.X += (eta * Us * sig) @ Vt
                AU = A @ Us  # (13): n d r, then (n, r) (r, c)
                self.W += (eta * AU * sig) @ Vt
                work += p.nnz * r
            if self.k_rule == "balance":
                self.k = self._auto_k(r)
            # (14), (15): candidates of every row, the k rows that move most
            q = self.q()
            W_read = self.W if W_old is None else self.W + self.theta * (self.W - W_old)
            cand = losses.dual_steps(p.loss_id, self.alpha.reshape(-1), p.b.reshape(-1),
                                     W_read.reshape(-1), np.full(self.alpha.size, q))
            cand = cand.reshape(self.alpha.shape)
            diff = cand - self.alpha
            rows = _pdbfw.top_k(np.einsum("ij,ij->i", diff, diff), self.k)  # ||.||^2: same order
            dA = diff[rows]
            moved = np.any(dA != 0.0, axis=1)
            rows, dA = rows[moved], dA[moved]
            if rows.size:
                self.alpha[rows] = cand[rows]
                self.U += A[rows].T @ dA  # (16)
                work += (p.d * rows.size if p.dense else int(rows_nnz[rows].sum())) * p.k
            work += (n + p.d) * p.k  # forming M (d c) and the candidates and selection (n c)
            touched += work
            iters += 1
            self.last_rank = r
            if self.adapt:
                self._adapt(r)
        self.iters += iters
        return iters, touched

    def _adapt(self, rank: int) -> None:
        """The ``s=auto`` rule of Algorithm 1 (``_pdbfw``) with the rank of X~ for its
        support."""
        s = self.s
        if not self.exact:
            self.s = min(2 * self.s, self.rank_cap)
            self.calm = self.peak = 0
        else:
            self.calm += 1
            self.peak = max(self.peak, rank)
            if self.calm >= _pdbfw.CALM_STEPS:
                if 2 * self.peak < self.s:
                    self.s = max(self.s_floor, 2 * self.peak)
                self.calm = self.peak = 0
        if self.k_rule == "auto" and self.s != s:
            self.k = self._auto_k()

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        """(X, the dual point of larger D: the kernel's alpha = -Y or alpha(X))."""
        return self.X, _better_dual(self.problem, self.X, self.alpha)

    def solution(self) -> np.ndarray:
        return self.X


def _spectral_norm(A, seed: int) -> float:
    """||A||_2 (the largest singular value), dense or sparse."""
    if sp.issparse(A):
        from scipy.sparse.linalg import svds

        if min(A.shape) <= 2:
            return float(np.linalg.norm(A.toarray(), 2))
        return float(svds(A, k=1, return_singular_vectors=False,
                          rng=np.random.default_rng(seed))[0])
    return float(lowrank.top_singular(A, 1, lowrank.DEFAULT_METHOD, seed)[1][0])
