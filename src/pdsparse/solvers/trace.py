"""The trace-norm ball baselines of PDBFW (Lei et al., Sec. 5.1, Figure 2), in NumPy/BLAS.

Problem (PDBFW eq. (17)): min over ||X||_* <= theta of F(X) = 1/n sum_i phi(a_i^T X, b_i) +
mu/2 ||X||_F^2, X a d x c matrix, B (n, c) a label matrix (``Problem(A, B, "squared",
penalty=TraceBall(theta, mu))``; PDBFW's experiment: the squared loss on
:func:`pdsparse.data.synthetic.lowrank_sensing`). f_i(X) = phi(a_i^T X, b_i) + mu/2 ||X||^2
has the gradient a_i phi'(X^T a_i, b_i)^T + mu X. The constants the methods take (computed
once per kernel, outside the timed runs):

* L = beta ||A||_2^2 / n + mu, the smoothness of F (beta the loss's smoothness;
  :func:`pdsparse.solvers.ball.smoothness`); L_max = beta max_i ||a_i||^2 + mu;
* D = 2 theta, the Frobenius diameter of the ball (||X - Y||_F <= ||X||_* + ||Y||_*);
* on the ball ||X^T a_i|| <= ||X||_2 ||a_i|| <= theta ||a_i||, so with beta-Lipschitz phi'
  ||phi'(X^T a_i, b_i)|| <= G_i = ||phi'(0, b_i)|| + beta theta ||a_i|| (for the squared loss
  ||b_i|| + theta ||a_i||), giving the variance bound sigma^2 = 1/n sum_i G_i^2 ||a_i||^2 of
  one sampled gradient and the Lipschitz constant G = 1/n sum_i G_i ||a_i|| + mu theta of F on
  the ball (:func:`trace_gradient_bounds`, the trace-norm version of
  :func:`pdsparse.solvers.ball.gradient_bounds`).

Oracles: the linear minimization oracle over the ball is -theta u_1 v_1^T from the top
singular pair of the gradient (:func:`pdsparse.lowrank.top_singular`, s = 1); the projection
is a full SVD with the singular values projected onto {s >= 0, sum s <= theta}
(:meth:`pdsparse.penalties.TraceBall.project`); the rank-s block step is
:func:`pdsparse.lowrank.block_step`.

The methods (each kernel's docstring gives its updates and the source of every parameter):

* ``sfw`` (:class:`SFWKernel`): stochastic Frank-Wolfe (Hazan & Luo 2016);
* ``block_fw`` (:class:`BlockFWKernel`): rank-s block Frank-Wolfe (Allen-Zhu, Hazan, Hu & Li,
  NeurIPS 2017, Algorithm 1);
* the trace-norm versions of Helper BALL's l1-ball baselines, reached through
  :func:`trace_kernel` from the ``acc_pg``, ``fw``, ``svrg``, ``scgs`` and ``storc`` entries
  of the registry with their options dataclasses (:mod:`pdsparse.solvers.ball`), and with
  their parameter schedules (:func:`~pdsparse.solvers.ball.svrg_parameters`,
  :func:`~pdsparse.solvers.ball.scgs_parameters`, :func:`~pdsparse.solvers.ball.storc_inner`,
  :func:`~pdsparse.solvers.ball.storc_parameters`): :class:`TraceAccPGKernel`,
  :class:`TraceFWKernel`, :class:`TraceSVRGKernel`, :class:`TraceSCGSKernel`,
  :class:`TraceSTORCKernel`.

**Work** (``run`` returns (iterations, touched)): multiply-adds with stored entries of A, so
that a product of A with a d x c matrix counts nnz(A) c, one epoch of
:func:`pdsparse.solvers.solve` (whose epoch is nnz(A) k for k label columns): a full gradient
costs 2 epochs, a product A U with U of rank s costs s/c of one, a minibatch of b rows
2 b d c / (n d c). Each dense O(d c) pass over X (an update, a projection, an SVD, an LMO) adds
d c; the SVDs cost more than that, which shows in the kernel time the figures plot.

**Sampling**: uniform with replacement from ``numpy.random.default_rng(seed)`` (minibatches
by ``integers(0, n, size=b)``, SVRG's rows one ``integers(n)`` at a time), so that the tests
replay the same draws; a minibatch of n or more draws is replaced by the exact gradient, as
in the l1-ball kernels (``_TraceKernel._estimate``). ``iterates()`` is (X, alpha(X)),
alpha(X) = -phi'(A X), which certifies X by the duality gap (:mod:`pdsparse.objective`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from pdsparse import losses, objective
from pdsparse.errors import ConfigError
from pdsparse.lowrank import DEFAULT_METHOD, METHODS, block_step, top_singular
from pdsparse.names import (
    BALL_BATCH_CAPS,
    BALL_BATCHES,
    STEP_MULTIPLIERS,
    TRACE_RANKS,
    step_multiplier,
)
from pdsparse.penalties import FEASIBILITY_RTOL, L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers.ball import (
    AccPGKernel,
    AccPGOptions,
    FWKernel,
    FWOptions,
    SCGSKernel,
    SCGSOptions,
    STORCKernel,
    STORCOptions,
    SVRGKernel,
    SVRGOptions,
    acc_pg_lipschitz,
    cndg_guard,
    scgs_parameters,
    smoothness,
    storc_inner,
    storc_parameters,
    svrg_parameters,
)
from pdsparse.solvers.base import _int_option, _Kernel, _option, _Options

__all__ = ["SFWOptions", "BlockFWOptions", "SFWKernel", "BlockFWKernel", "TraceAccPGKernel",
           "TraceFWKernel", "TraceSVRGKernel", "TraceSCGSKernel", "TraceSTORCKernel",
           "trace_gradient_bounds", "strong_convexity", "sfw_parameters", "trace_cndg",
           "trace_kernel", "sfw_factory", "block_fw_factory", "acc_pg_factory", "fw_factory",
           "svrg_factory", "scgs_factory", "storc_factory", "S_START"]

S_START = 8
"""The first rank of ``s=auto`` (capped at min(d, c)), as PDBFW's ``s=auto``."""

_DENSE_SVD_ENTRIES = 4_000_000  # a sparse A up to this many entries is densified for sigma_min


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SFWOptions(_Options):
    """Options of stochastic Frank-Wolfe (SFW, Hazan & Luo 2016)."""

    batch: str = _int_option(
        "theory", BALL_BATCHES,
        "minibatch m_k: theory (default: ceil((G (k + 1) / (L D))^2), :func:`sfw_parameters`) "
        "or an integer (a constant batch)")
    batch_cap: str = _int_option(
        "n", BALL_BATCH_CAPS,
        "largest minibatch: n (default; a minibatch of n draws costs one pass, as a full "
        "gradient), none (the theorem's size uncapped) or an integer")


@dataclass(frozen=True)
class BlockFWOptions(_Options):
    """Options of block Frank-Wolfe (Allen-Zhu, Hazan, Hu & Li 2017, Algorithm 1)."""

    s: str = _int_option(
        "auto", TRACE_RANKS,
        "rank k of the block step: auto (default: start at 8, double while the step keeps "
        "all k singular values, i.e. the rank bound binds) or a number (the paper: a bound on "
        "rank(X*))")
    step: str = _option(
        "theory", STEP_MULTIPLIERS,
        "step eta: theory (default: alpha / (2 beta), as PDBFW Theorem 4.3 takes mu / (2 L)) "
        "or that step times 0.1, 0.3, 2 (alpha / beta, the largest the analysis allows), 3, "
        "5, 10 or 100; "
        "capped at 1")


# ---------------------------------------------------------------------------------------------
# Constants and parameter schedules
# ---------------------------------------------------------------------------------------------

def trace_gradient_bounds(problem: Problem) -> tuple[float, float]:
    """(sigma^2, G) on the trace-norm ball: the variance bound of one sampled gradient and the
    Lipschitz constant of F (module docstring). O(n c + nnz)."""
    p = problem
    b = np.ascontiguousarray(p.b, dtype=np.float64)
    d0 = losses.derivs(p.loss_id, np.zeros(b.size), b.reshape(-1)).reshape(b.shape)
    norms = np.sqrt(p.row_sqnorms)
    g = np.sqrt(np.einsum("ij,ij->i", d0, d0)) + p.smoothness * p.radius * norms
    sigma2 = float(np.mean(g * g * p.row_sqnorms))
    lip = float(np.mean(g * norms)) + p.l2 * p.radius
    return sigma2, lip


def strong_convexity(problem: Problem) -> float:
    """alpha, a strong convexity modulus of F: mu, plus sigma_min(A)^2 / n for the squared
    loss (phi'' = 1, so the Hessian is A^T A / n + mu I; its smallest eigenvalue, exact, from
    the singular values of A when n >= d, sparse A densified up to ``_DENSE_SVD_ENTRIES``
    entries). Other losses, n < d or larger sparse A: mu (the modulus that holds
    everywhere)."""
    p = problem
    alpha = p.l2
    if p.loss == "squared" and p.n >= p.d and (p.dense or p.n * p.d <= _DENSE_SVD_ENTRIES):
        dense = p.mat if p.dense else p.csr.toarray()
        s_min = float(np.linalg.svd(dense, compute_uv=False)[-1])
        alpha += s_min * s_min / p.n
    return alpha


def _cap(size: float, cap: str, n: int) -> int:
    size = max(1, math.ceil(size))
    if cap == "none":
        return size
    return min(size, n if cap == "n" else int(cap))


def sfw_parameters(options: SFWOptions, k: int, lip: float, diameter: float, lip_f: float,
                   n: int) -> tuple[float, int]:
    """(gamma_k, m_k) of stochastic Frank-Wolfe at iteration k >= 1.

    Hazan & Luo (ICML 2016), the SFW baseline of their Sec. 2-3 (after Hazan & Kale, ICML
    2012): w_k = (1 - gamma_k) w_{k-1} + gamma_k v_k with v_k the LMO's vertex of the mean of
    m_k sampled gradients at w_{k-1}, gamma_k = 2 / (k + 1) and m_k = (G (k + 1) / (L D))^2,
    which gives E f(w_k) - f* <= 4 L D^2 / (k + 2): O(1/eps) linear oracles and O(1/eps^3)
    sampled gradients (their Table 1). These are the values as we recall them (the paper's
    text could not be opened here) and the ones consistent with those complexities. G is the
    Lipschitz constant of F on the ball (:func:`trace_gradient_bounds`). ``batch`` may replace
    m_k by a constant; ``batch_cap`` (default n) caps it: on PDBFW's data m_1 is already
    about 5e4 > n, so by default every m_k >= n and the kernel uses the exact gradient
    (``_TraceKernel._estimate``): SFW is then Frank-Wolfe with the step 2 / (k + 1); an
    integer ``batch`` below n makes it stochastic.
    """
    gamma = 2.0 / (k + 1)
    if options.batch == "theory":
        size = (lip_f * (k + 1) / (lip * diameter)) ** 2
    else:
        size = int(options.batch)
    return gamma, _cap(size, options.batch_cap, n)


def top_pair(M: np.ndarray, method: str) -> tuple[float, np.ndarray, np.ndarray]:
    """(sigma_1, u_1, v_1) of M by :func:`pdsparse.lowrank.top_singular`'s ``method``: the
    ``top_pair`` of :meth:`pdsparse.penalties.TraceBall.lmo_atom` in these kernels."""
    U, s, Vt = top_singular(M, 1, method)
    return float(s[0]), U[:, 0], Vt[0]


def _lmo(G: np.ndarray, radius: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """(u, w) with -radius u w^T = argmin over ||S||_* <= radius of <G, S>: the top singular
    pair of G (:meth:`pdsparse.penalties.TraceBall.lmo_atom` by ``method``; radius u is
    returned, so the vertex is -outer(u, w))."""
    s, u, w = TraceBall(radius).lmo_atom(G, functools.partial(top_pair, method=method))
    return -s * u, w


def trace_cndg(g: np.ndarray, u: np.ndarray, beta: float, eta: float, radius: float,
               guard: int, method: str = DEFAULT_METHOD) -> tuple[np.ndarray, int]:
    """The CndG procedure of Lan & Zhou (SIAM J. Optim. 26(2), 2016, Algorithm 1's inner
    loop) over the trace-norm ball: approximately min_x <g, x> + beta/2 ||x - u||^2.

    u_1 = u; t = 1, 2, ...: v_t = argmin_{||x||_* <= radius} <g + beta (u_t - u), x> (the LMO,
    -radius u_1 v_1^T); V_t = <g + beta (u_t - u), u_t - v_t> (the Wolfe gap); stop with
    u_t if V_t <= eta; else alpha_t = min{1, <beta (u - u_t) - g, v_t - u_t> /
    (beta ||v_t - u_t||^2)} (exact line search) and u_{t+1} = (1 - alpha_t) u_t + alpha_t v_t.
    ``guard`` caps the LMO calls (:func:`pdsparse.solvers.ball.cndg_guard`). Returns
    (u_t, LMO calls).
    """
    ut = u.copy()
    calls = 0
    while calls < guard:
        grad = g + beta * (ut - u)
        a, w = _lmo(grad, radius, method)
        calls += 1
        # V = <grad, ut - v>, v = -outer(a, w): <grad, v> = -a^T grad w
        aw = float(a @ grad @ w)
        gap = float(np.vdot(grad, ut)) + aw
        if gap <= eta:
            break
        dvec = -np.outer(a, w) - ut
        dd = float(np.vdot(dvec, dvec))
        step = min(1.0, gap / (beta * dd)) if dd > 0 else 1.0  # <-grad, v - ut> = gap
        ut += step * dvec
    return ut, calls


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

class _TraceKernel(_Kernel):
    """Shared set-up of the trace-norm kernels: the problem's constants, X0, the sampler."""

    name = "trace"

    def __init__(self, problem: Problem, seed: int = 0, w0: np.ndarray | None = None,
                 svd: str = DEFAULT_METHOD):
        super().__init__(problem, "uniform", seed)
        p = problem
        if not isinstance(p.penalty, TraceBall) or not p.matrix:
            raise ConfigError(f"{self.name}: the trace-norm kernel needs a TraceBall penalty "
                              f"and a label matrix, got {p.penalty!r} with labels of shape "
                              f"{p.b.shape}")
        if svd not in METHODS:
            raise ConfigError(f"{self.name}: unknown svd method {svd!r}; choose one of "
                              f"{list(METHODS)}")
        self.svd = svd
        self.theta, self.mu = p.radius, p.l2
        self.ball = p.penalty
        self.A, self.B = p.mat, p.b
        n, d, c = p.n, p.d, p.k
        self.full = max(p.nnz, 1) * c
        self.dense_pass = d * c
        # a projection onto the ball is a full SVD of a d x c matrix: about min(d, c) passes
        # over it; counted, so that work tracks time (an SVRG step is one projection, and
        # counted as 4 dense passes it hid 99% of its cost from the time budget's split)
        self.svd_pass = min(d, c) * self.dense_pass
        row_nnz = np.full(n, d) if p.dense else np.diff(p.csr.indptr)
        self.row_work = row_nnz.astype(np.int64) * c
        self.rng = np.random.default_rng(seed)
        if w0 is None:
            self.x = np.zeros((d, c))
        else:
            self.x = np.array(w0, dtype=np.float64)
            if self.x.shape != (d, c) or not np.all(np.isfinite(self.x)):
                raise ConfigError(f"{self.name}: w0 must be a finite ({d}, {c}) matrix, got "
                                  f"shape {np.shape(w0)}")
            norm = self.ball.norm(self.x)
            if norm > self.theta * (1.0 + FEASIBILITY_RTOL):
                raise ConfigError(f"{self.name}: w0 lies outside the trace-norm ball of radius "
                                  f"{self.theta} (||w0||_* = {norm:.6g})")

    def _product(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.A @ X, dtype=np.float64)

    def _derivs(self, Z: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """phi'(Z, B) entrywise (B restricted to ``rows``)."""
        B = self.B if rows is None else self.B[rows]
        return losses.derivs(self.problem.loss_id, np.ascontiguousarray(Z).reshape(-1),
                             np.ascontiguousarray(B).reshape(-1)).reshape(Z.shape)

    def _loss_gradient(self, Z: np.ndarray) -> np.ndarray:
        """A^T phi'(Z) / n, the gradient of the loss part at a point X with A X = Z."""
        return np.asarray(self.A.T @ self._derivs(Z), dtype=np.float64) / self.problem.n

    def _estimate(self, X: np.ndarray, size: int,
                  snapshot: tuple[np.ndarray, np.ndarray] | None = None
                  ) -> tuple[np.ndarray, int]:
        """A sampled gradient of F at X and its work: (1/b) sum_j grad f_{i_j}(X) for b =
        ``size`` uniform draws with replacement, or, with ``snapshot`` = (A Y, A^T phi'(A Y) /
        n) of a snapshot Y, the variance-reduced grad F(Y) + (1/b) sum_j (grad f_{i_j}(X) -
        grad f_{i_j}(Y)) (the mu terms give mu X in both cases).

        A batch of n or more draws is replaced by the exact gradient grad F(X) (no draws), as
        in the l1-ball kernels (:meth:`pdsparse.solvers.ball._SlidingKernel._step`): it costs
        the two products of n sampled rows and its variance, 0, meets every variance bound
        the theorems ask of a batch, where n draws with replacement would keep a noise floor
        (measured: SFW and SCGS stalled near a relative gap of 0.1 on a small problem).
        """
        n = self.problem.n
        if size >= n:
            g = self._loss_gradient(self._product(X)) + self.mu * X
            return g, 2 * self.full + self.dense_pass
        idx = self.rng.integers(0, n, size=size)
        A_s = self.A[idx]
        R = self._derivs(np.asarray(A_s @ X, dtype=np.float64), idx)
        if snapshot is not None:
            R -= self._derivs(snapshot[0][idx], idx)
        g = np.asarray(A_s.T @ R, dtype=np.float64) / size + self.mu * X
        if snapshot is not None:
            g += snapshot[1]
        return g, 2 * int(self.row_work[idx].sum()) + self.dense_pass

    def solution(self) -> np.ndarray:
        return self.x

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        x = self.solution()
        return x, objective.alpha_of_w(self.problem, x)


class SFWKernel(_TraceKernel):
    """Stochastic Frank-Wolfe over the trace-norm ball (Hazan & Luo, ICML 2016, their SFW
    baseline after Hazan & Kale 2012), uniform sampling with replacement.

    X_0 = w0 (default 0); k = 1, 2, ...: g_k = (1/m_k) sum_j grad f_{i_j}(X_{k-1}),
    V_k = -theta u_1 v_1^T from the top singular pair of g_k, X_k = (1 - gamma_k) X_{k-1} +
    gamma_k V_k, with gamma_k and m_k of :func:`sfw_parameters` (m_k >= n: the exact
    gradient). An iteration costs the m_k rows drawn (twice: A_S X and A_S^T R; two epochs
    for the exact gradient), a top singular pair and a dense update.
    """

    name = "sfw"

    def __init__(self, problem: Problem, options: SFWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        self.options = options or SFWOptions()
        self.lip = smoothness(problem)
        self.diameter = 2.0 * self.theta
        _, self.lip_f = trace_gradient_bounds(problem)
        self.k = 0
        self.batches: list[int] = []  # m_k used, for the record

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        while touched < budget:
            k = self.k + 1
            gamma, size = sfw_parameters(self.options, k, self.lip, self.diameter,
                                         self.lip_f, p.n)
            g, work = self._estimate(self.x, size)
            a, w = _lmo(g, self.theta, self.svd)
            self.x *= 1.0 - gamma
            self.x -= gamma * np.outer(a, w)
            self.batches.append(size)
            self.k = k
            iters += 1
            touched += work + 2 * self.dense_pass
        return iters, touched


class BlockFWKernel(_TraceKernel):
    """Block Frank-Wolfe with rank-s steps (Allen-Zhu, Hazan, Hu & Li, NeurIPS 2017,
    Algorithm 1), the full gradient.

    X_0 = w0 (default 0); t = 0, 1, ...: G = grad F(X_t);
    X~ = argmin {<G, V> + (beta eta / 2) ||V - X_t||_F^2 : ||V||_* <= theta, rank(V) <= s}
    (:func:`pdsparse.lowrank.block_step`: the top-s SVD of X_t - G / (beta eta) with the
    singular values projected onto the simplex of radius theta); X_{t+1} = X_t + eta (X~ -
    X_t). beta = L (:func:`pdsparse.solvers.ball.smoothness`), alpha =
    :func:`strong_convexity`, eta = alpha / (2 beta) times the ``step`` multiplier (capped at
    1): PDBFW Theorem 4.3 takes eta = mu / (2 L) for this step, citing Allen-Zhu et al.; with
    eta <= alpha / beta the step is (1/2, 0)-approximate when s >= rank(X*)
    (:func:`pdsparse.lowrank.block_step`), and F(X_{t+1}) - F* <= (1 - eta/2)(F(X_t) - F*)
    follows from smoothness. ``s``: a number (Allen-Zhu et al.'s k >= rank(X*)), or ``auto``:
    start at min(8, d, c) and double (up to min(d, c)) after each step whose projected
    singular values are all positive, i.e. whose rank bound may have cut the projected step
    (when the s-th projected value is 0 the step equals the unconstrained-rank one).
    A X is kept (Z = A X, updated by the rank-s product (A U) diag(sig) V^T), so an iteration
    costs one product A^T phi'(Z) (one epoch), A U (s/c of an epoch), the top-s SVD and dense
    updates. ``svd`` (Python only) picks :func:`pdsparse.lowrank.top_singular`'s method.
    """

    name = "block_fw"

    def __init__(self, problem: Problem, options: BlockFWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        options = options or BlockFWOptions()
        p = problem
        self.max_rank = min(p.d, p.k)
        self.grow = options.s == "auto"
        self.s = min(S_START if self.grow else int(options.s), self.max_rank)
        self.beta = smoothness(p)
        self.alpha = strong_convexity(p)
        self.eta = min(1.0, step_multiplier(options.step) * self.alpha / (2.0 * self.beta))
        self.coef = self.beta * self.eta
        self.z = self._product(self.x)
        self.ranks: list[int] = []  # s of each step, for the record

    def run(self, budget: int) -> tuple[int, int]:
        p, eta = self.problem, self.eta
        iters = touched = 0
        while touched < budget:
            G = self._loss_gradient(self.z) + self.mu * self.x
            U, sig, Vt = block_step(self.x, G, self.coef, self.s, self.theta, self.svd)
            self.ranks.append(self.s)
            if self.grow and sig.size == self.s and self.s < self.max_rank:
                self.s = min(2 * self.s, self.max_rank)
            AU = self._product(U)
            self.x *= 1.0 - eta
            self.x += (U * (eta * sig)) @ Vt
            self.z *= 1.0 - eta
            self.z += (AU * (eta * sig)) @ Vt
            iters += 1
            touched += self.full + max(p.nnz, 1) * sig.size + 4 * self.dense_pass
        return iters, touched


class TraceFWKernel(_TraceKernel):
    """Frank-Wolfe over the trace-norm ball (Frank & Wolfe 1956; Jaggi, ICML 2013,
    Algorithm 1; the trace-norm LMO of Jaggi & Sulovsky, ICML 2010).

    G = grad F(X) = A^T phi'(A X) / n + mu X; the vertex S = -theta u_1 v_1^T from G's top
    singular pair; X <- (1 - gamma) X + gamma S. ``step="line_search"`` (default): gamma =
    argmin_{[0, 1]} F(X + gamma (S - X)), in closed form for the squared loss, whose F is
    quadratic along the segment: gamma = <G, X - S> / (||A (S - X)||^2 / n +
    mu ||S - X||^2), clipped to [0, 1]; ``"open_loop"``: gamma_t = 2 / (t + 2), t = 0, 1, ...
    (Jaggi's step). A X is kept (A S = -theta (A u_1) v_1^T is a rank-one product), so an
    iteration costs one epoch (the gradient), one column product A u and the top pair.
    """

    name = "fw"

    def __init__(self, problem: Problem, options: FWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        options = options or FWOptions()
        self.line_search = options.step == "line_search"
        if self.line_search and problem.loss != "squared":
            raise ConfigError(f"fw on a trace-norm ball: step=line_search is exact for the "
                              f"squared loss, not {problem.loss!r}; use step=open_loop")
        self.t = 0
        self.z = self._product(self.x)

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        while touched < budget:
            X, Z = self.x, self.z
            G = self._loss_gradient(Z) + self.mu * X
            a, w = _lmo(G, self.theta, self.svd)
            AS = -np.outer(np.asarray(self.A @ a, dtype=np.float64), w)
            if self.line_search:
                D = -np.outer(a, w) - X
                AD = AS - Z
                curv = float(np.vdot(AD, AD)) / p.n + self.mu * float(np.vdot(D, D))
                slope = float(np.vdot(G, D))
                gamma = min(1.0, max(0.0, -slope / curv)) if curv > 0 else 0.0
            else:
                gamma = 2.0 / (self.t + 2.0)
            X *= 1.0 - gamma
            X -= gamma * np.outer(a, w)
            Z *= 1.0 - gamma
            Z += gamma * AS
            self.t += 1
            iters += 1
            touched += self.full + max(p.nnz, 1) + 5 * self.dense_pass
        return iters, touched


class TraceAccPGKernel(_TraceKernel):
    """Accelerated projected gradient over the trace-norm ball, step 1/L, the projection by a
    full SVD (:meth:`pdsparse.penalties.TraceBall.project`).

    The updates of :class:`pdsparse.solvers.ball.AccPGKernel` with this projection:
    ``momentum="nesterov"`` (default): X_{k+1} = Proj(Y_k - grad F(Y_k) / L), Y_{k+1} =
    X_{k+1} + q (X_{k+1} - X_k), q = (sqrt(L) - sqrt(mu)) / (sqrt(L) + sqrt(mu)) (Nesterov
    2004, Sec. 2.2, constant step scheme for mu-strongly convex F); ``"fista"``: q_k =
    (t_k - 1) / t_{k+1}, t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2 (Beck & Teboulle 2009). A Y_k
    is formed from A X_k and A X_{k-1}, so an iteration costs two epochs and a full SVD.
    ``lipschitz``: L of the 1/L step as for the l1 ball (:class:`pdsparse.solvers.ball.
    AccPGKernel`): exact (default), power, or backtracking (Beck & Teboulle 2009, Sec. 4:
    from the lower bound beta max_i ||a_i||^2 / n + mu, doubled while F(X) > F(Y) +
    <grad F(Y), X - Y> + L/2 ||X - Y||_F^2; each failed trial costs a product A X and an SVD).
    """

    name = "acc_pg"

    def __init__(self, problem: Problem, options: AccPGOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        options = options or AccPGOptions()
        self.backtrack = options.lipschitz == "backtracking"
        self.lip = acc_pg_lipschitz(problem, options.lipschitz)
        self.fista = options.momentum == "fista"
        if not self.fista and not self.mu > 0:
            raise ConfigError("acc_pg: momentum=nesterov needs mu > 0 (the l2 of the "
                              "TraceBall penalty); use momentum=fista for mu = 0")
        self._set_momentum()
        self.backtracks = 0
        self.t = 1.0
        self.zx = self._product(self.x)
        self.y, self.zy = self.x.copy(), self.zx.copy()

    def _set_momentum(self) -> None:
        if not self.fista:
            sl, sm = math.sqrt(self.lip), math.sqrt(self.mu)
            self.q = (sl - sm) / (sl + sm)

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        while touched < budget:
            g = self._loss_gradient(self.zy) + self.mu * self.y
            # F at Y: Y is extrapolated and may lie outside the ball
            fy = objective.smooth_value(p, self.y, self.zy) if self.backtrack else 0.0
            while True:
                x = self.ball.project(self.y - g / self.lip)
                zx = self._product(x)
                if not self.backtrack:
                    break
                dx = x - self.y
                touched += 2 * self.dense_pass
                model = fy + float(np.vdot(g, dx)) + \
                    0.5 * self.lip * float(np.vdot(dx, dx)) * (1.0 + 1e-12)
                if objective.smooth_value(p, x, zx) <= model + 1e-15 * abs(fy):
                    break
                # sufficient decrease failed: L was too small; the trial cost A X and an SVD
                self.lip *= 2.0
                self._set_momentum()
                self.backtracks += 1
                touched += self.full + self.dense_pass + self.svd_pass
            if self.fista:
                t_next = (1.0 + math.sqrt(1.0 + 4.0 * self.t * self.t)) / 2.0
                q = (self.t - 1.0) / t_next
                self.t = t_next
            else:
                q = self.q
            self.y = x + q * (x - self.x)
            self.zy = zx + q * (zx - self.zx)
            self.x, self.zx = x, zx
            iters += 1
            touched += 2 * self.full + 4 * self.dense_pass + self.svd_pass
        return iters, touched


class TraceSVRGKernel(_TraceKernel):
    """Projected SVRG over the trace-norm ball (Johnson & Zhang, NIPS 2013; Prox-SVRG, Xiao &
    Zhang, SIAM J. Optim. 24(4), 2014, Algorithm 1 with R the indicator of the ball; PDBFW's
    "projected SVRG [15]"), uniform sampling.

    Each snapshot X~ gets grad F(X~) (two epochs: A X~ and A^T phi'(A X~)), then m inner
    steps from X_0 = X~: i uniform, X_k = Proj(X_{k-1} - eta (grad f_i(X_{k-1}) -
    grad f_i(X~) + grad F(X~))), the projection a full SVD
    (:meth:`pdsparse.penalties.TraceBall.project`), grad f_i(X) - grad f_i(X~) =
    a_i (phi'(X^T a_i) - phi'(X~^T a_i))^T + mu (X - X~). Next snapshot: X_m (``snapshot=
    "last"``, Johnson & Zhang's option I) or the mean of X_1..X_m (``"average"``,
    Prox-SVRG). eta = 0.1 / L_max and m = 2n: :func:`pdsparse.solvers.ball.svrg_parameters`
    (Xiao & Zhang Sec. 3.1; Johnson & Zhang Sec. 4). An iteration is an inner step; each
    costs a row product a_i^T X, a rank-one update and a full SVD of a d x c matrix.
    """

    name = "svrg"

    def __init__(self, problem: Problem, options: SVRGOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        options = options or SVRGOptions()
        p = problem
        self.l_max = p.smoothness * float(np.max(p.row_sqnorms)) + self.mu
        self.eta, self.m = svrg_parameters(options, self.l_max, p.n)
        self.average = options.snapshot == "average"
        self.pos = 0  # inner steps done since the last snapshot (0: take one)
        self.xsnap = self.x.copy()
        self.zsnap = np.zeros((p.n, p.k))
        self.gsnap = np.zeros((p.d, p.k))
        self.xsum = np.zeros((p.d, p.k)) if self.average else None

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        while touched < budget:
            if self.pos == 0:
                self.xsnap = self.x.copy()
                self.zsnap = self._product(self.x)
                self.gsnap = self._loss_gradient(self.zsnap) + self.mu * self.x
                if self.average:
                    self.xsum[:] = 0.0
                touched += 2 * self.full
            i = int(self.rng.integers(p.n))
            a = self.A[i]
            a = a.toarray().ravel() if hasattr(a, "toarray") else a
            r = self._derivs((a @ self.x)[None, :], np.array([i]))[0] \
                - self._derivs(self.zsnap[i][None, :], np.array([i]))[0]
            g = np.outer(a, r) + self.mu * (self.x - self.xsnap) + self.gsnap
            self.x = self.ball.project(self.x - self.eta * g)
            if self.average:
                self.xsum += self.x
            self.pos += 1
            if self.pos == self.m:
                if self.average:
                    self.x = self.xsum / self.m
                self.pos = 0
            iters += 1
            touched += 2 * int(self.row_work[i]) + 4 * self.dense_pass + self.svd_pass
        return iters, touched


class _TraceSlidingKernel(_TraceKernel):
    """What SCGS and STORC share on the trace-norm ball: the constants and one CGS step."""

    def __init__(self, problem: Problem, seed: int = 0, w0: np.ndarray | None = None,
                 svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        self.lip = smoothness(problem)
        self.diameter = 2.0 * self.theta
        self.sigma2, self.lip_f = trace_gradient_bounds(problem)
        self.y = self.x.copy()
        self.cndg_iterations = 0  # linear-oracle calls so far
        self.cndg_capped = 0  # CndG calls stopped by the guard, not by V <= eta

    def _step(self, gamma: float, beta: float, eta: float, batch: int,
              snapshot: tuple[np.ndarray, np.ndarray] | None) -> int:
        """z = (1 - gamma) y + gamma x; g = minibatch gradient at z (variance-reduced around
        ``snapshot`` = (A Y_0, A^T phi'(A Y_0) / n) when given; :meth:`_estimate`);
        x = CndG(g, x, beta, eta); y = (1 - gamma) y + gamma x. Returns the work."""
        z = (1.0 - gamma) * self.y + gamma * self.x
        g, work = self._estimate(z, batch, snapshot)
        guard = cndg_guard(beta, eta, self.diameter)
        self.x, calls = trace_cndg(g, self.x, beta, eta, self.theta, guard, self.svd)
        self.cndg_iterations += calls
        self.cndg_capped += calls >= guard
        self.y = (1.0 - gamma) * self.y + gamma * self.x
        return work + (3 * calls + 3) * self.dense_pass

    def solution(self) -> np.ndarray:
        return self.y


class TraceSCGSKernel(_TraceSlidingKernel):
    """Stochastic conditional gradient sliding over the trace-norm ball (Lan & Zhou, SIAM J.
    Optim. 26(2), 2016, Sec. 3), uniform sampling with replacement.

    x_0 = y_0 = w0 (default 0); k = 1, 2, ...: z_k = (1 - gamma_k) y_{k-1} + gamma_k x_{k-1};
    g_k = (1/B_k) sum_j grad f_{i_j}(z_k); x_k = CndG(g_k, x_{k-1}, beta_k, eta_k)
    (:func:`trace_cndg`, the LMO a top singular pair); y_k = (1 - gamma_k) y_{k-1} + gamma_k
    x_k. gamma_k, beta_k, eta_k, B_k: :func:`pdsparse.solvers.ball.scgs_parameters` (their
    source and the uncertainty about them are documented there) with D = 2 theta and sigma^2
    of :func:`trace_gradient_bounds`. The iterate is y_k; an iteration is an outer one.
    """

    name = "scgs"

    def __init__(self, problem: Problem, options: SCGSOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        self.options = options or SCGSOptions()
        self.k = 0
        self.batches: list[int] = []  # B_k used, for the record

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        while touched < budget:
            k = self.k + 1
            gamma, beta, eta, batch = scgs_parameters(self.options, k, self.lip,
                                                      self.diameter, self.sigma2, p.n)
            touched += self._step(gamma, beta, eta, batch, None)
            self.batches.append(batch)
            self.k = k
            iters += 1
        return iters, touched


class TraceSTORCKernel(_TraceSlidingKernel):
    """STORC over the trace-norm ball (Hazan & Luo, ICML 2016, Algorithm 2), uniform sampling
    with replacement.

    w_0 = argmin_{||w||_* <= theta} <grad F(0), w> (line 3: the LMO's vertex, one epoch), or
    w0 when given. Snapshot t = 1, 2, ...: x_0 = y_0 = w_{t-1} and grad F(y_0) (two epochs);
    inner k = 1..N_t: z_k = (1 - gamma_k) y_{k-1} + gamma_k x_{k-1};
    g~_k = grad F(y_0) + (1/m_{t,k}) sum_j (grad f_{i_j}(z_k) - grad f_{i_j}(y_0));
    x_k = CndG(g~_k, x_{k-1}, beta_k, eta_{t,k}) (:func:`trace_cndg`); y_k = (1 - gamma_k)
    y_{k-1} + gamma_k x_k; then w_t = y_{N_t}. N_t, gamma_k, beta_k, eta_{t,k}, m_{t,k}:
    :func:`pdsparse.solvers.ball.storc_inner` and :func:`~pdsparse.solvers.ball.
    storc_parameters` (case (3), strongly convex, when mu > 0) with D = 2 theta and G of
    :func:`trace_gradient_bounds`. The iterate is y_k; an iteration is an inner one.
    """

    name = "storc"

    def __init__(self, problem: Problem, options: STORCOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        self.options = options or STORCOptions()
        self.started = w0 is not None  # w_0 given; else the vertex of line 3, in run()
        self.t = 0  # snapshots taken
        self.k = 0  # inner iterations done in this snapshot (0: take the next snapshot)
        self.n_t = 0
        self.snapshot: tuple[np.ndarray, np.ndarray] | None = None
        self.batches: list[int] = []  # m_{t,k} used, for the record

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        while touched < budget:
            if not self.started:
                g = self._loss_gradient(self._product(np.zeros((p.d, p.k))))  # grad F(0)
                a, w = _lmo(g, self.theta, self.svd)
                self.y = -np.outer(a, w)
                self.started = True
                touched += self.full + 2 * self.dense_pass
            if self.k == 0:
                self.t += 1
                self.n_t = storc_inner(self.options, self.t, self.lip, self.mu)
                self.x = self.y.copy()  # x_0 = y_0 = w_{t-1}
                zsnap = self._product(self.y)
                self.snapshot = (zsnap, self._loss_gradient(zsnap))
                touched += 2 * self.full
            k = self.k + 1
            gamma, beta, eta, batch = storc_parameters(
                self.options, self.t, k, self.n_t, self.lip, self.mu, self.diameter,
                self.lip_f, p.n)
            touched += self._step(gamma, beta, eta, batch, self.snapshot)
            self.batches.append(batch)
            self.k = 0 if k == self.n_t else k
            iters += 1
        return iters, touched


# ---------------------------------------------------------------------------------------------
# Factories
# ---------------------------------------------------------------------------------------------

_TRACE_KERNELS: dict[str, type[_TraceKernel]] = {
    "acc_pg": TraceAccPGKernel,
    "fw": TraceFWKernel,
    "svrg": TraceSVRGKernel,
    "scgs": TraceSCGSKernel,
    "storc": TraceSTORCKernel,
    "sfw": SFWKernel,
    "block_fw": BlockFWKernel,
}


def trace_kernel(name: str, problem: Problem, options, seed: int,
                 start: np.ndarray | None = None) -> _TraceKernel:
    """The trace-norm kernel of registry method ``name`` with its options dataclass (from
    :mod:`pdsparse.solvers.ball` for acc_pg, fw, svrg, scgs, storc)."""
    try:
        kernel = _TRACE_KERNELS[name]
    except KeyError:
        raise ConfigError(f"{name} has no trace-norm ball kernel; the trace-norm methods are "
                          f"{sorted(_TRACE_KERNELS)}") from None
    return kernel(problem, options, seed, w0=start)


def sfw_factory(problem: Problem, options: SFWOptions, seed: int,
                start: np.ndarray | None = None) -> SFWKernel:
    return SFWKernel(problem, options, seed, w0=start)


def block_fw_factory(problem: Problem, options: BlockFWOptions, seed: int,
                     start: np.ndarray | None = None) -> BlockFWKernel:
    return BlockFWKernel(problem, options, seed, w0=start)


# ---------------------------------------------------------------------------------------------
# Factories (the registry's entries): the l1 ball here, the trace-norm ball in solvers_trace
# ---------------------------------------------------------------------------------------------

def _dispatch(name: str, kernel: type, problem: Problem, options, seed: int,
              start: np.ndarray | None):
    pen = problem.penalty
    if isinstance(pen, TraceBall):
        return trace_kernel(name, problem, options, seed, start)
    if isinstance(pen, L1Ball) and not problem.matrix:
        return kernel(problem, options, seed, w0=start)
    what = "an L1Ball with a label matrix (the entrywise ball couples the columns)" \
        if isinstance(pen, L1Ball) else f"penalty {type(pen).__name__}"
    raise ConfigError(f"{name} solves an l1-ball problem with vector labels or a trace-norm "
                      f"ball problem, not {what}")


def acc_pg_factory(problem: Problem, options: AccPGOptions, seed: int,
                   start: np.ndarray | None = None):
    return _dispatch("acc_pg", AccPGKernel, problem, options, seed, start)


def fw_factory(problem: Problem, options: FWOptions, seed: int,
               start: np.ndarray | None = None):
    return _dispatch("fw", FWKernel, problem, options, seed, start)


def svrg_factory(problem: Problem, options: SVRGOptions, seed: int,
                 start: np.ndarray | None = None):
    return _dispatch("svrg", SVRGKernel, problem, options, seed, start)


def scgs_factory(problem: Problem, options: SCGSOptions, seed: int,
                 start: np.ndarray | None = None):
    return _dispatch("scgs", SCGSKernel, problem, options, seed, start)


def storc_factory(problem: Problem, options: STORCOptions, seed: int,
                  start: np.ndarray | None = None):
    return _dispatch("storc", STORCKernel, problem, options, seed, start)
