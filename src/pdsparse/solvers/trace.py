"""The trace-norm ball baselines of PDBFW (Lei et al., Sec. 5.1, Figure 2), in NumPy/BLAS: the
trace-norm ball's oracles, the norm-ball methods bound to them, SFW and block FW.

``acc_pg``, ``fw``, ``svrg``, ``scgs`` and ``storc`` are written once, against a ball's
oracles, in :mod:`pdsparse.solvers.ball`; here :class:`TraceOracles` answers for the
trace-norm ball (the penalty's projection :meth:`pdsparse.penalties.TraceBall.project` and
LMO :meth:`~pdsparse.penalties.TraceBall.lmo_atom`, CndG by :func:`trace_cndg`, ...) and
:class:`TraceAccPGKernel`, :class:`TraceFWKernel`, :class:`TraceSVRGKernel`,
:class:`TraceSCGSKernel`, :class:`TraceSTORCKernel` are those kernels with these oracles
(their own class, so that a kernel says which ball it runs on). ``sfw`` (:class:`SFWKernel`:
stochastic Frank-Wolfe, Hazan & Luo 2016) and ``block_fw`` (:class:`BlockFWKernel`: rank-s
block Frank-Wolfe, Allen-Zhu, Hazan, Hu & Li, NeurIPS 2017, Algorithm 1) are for this ball
only. The registry builds the five through :func:`norm_ball_factory` (a trace-norm problem
goes to :func:`trace_kernel`), SFW and block FW by their classes.

The trace-norm problem (PDBFW eq. (17)): min over ||X||_* <= theta of F(X) = 1/n sum_i
phi(a_i^T X, b_i) + mu/2 ||X||_F^2, X a d x c matrix, B (n, c) a label matrix
(``Problem(A, B, "squared", penalty=TraceBall(theta, mu))``; PDBFW's experiment: the squared
loss on :func:`pdsparse.data.synthetic.lowrank_sensing`). f_i(X) = phi(a_i^T X, b_i) + mu/2
||X||^2 has the gradient a_i phi'(X^T a_i, b_i)^T + mu X. The constants the methods take
(computed once per kernel, outside the timed runs):

* L = beta ||A||_2^2 / n + mu, the smoothness of F (beta the loss's smoothness;
  :func:`pdsparse.solvers.ball.smoothness`); L_max = beta max_i ||a_i||^2 + mu;
* D = 2 theta, the Frobenius diameter of the ball (||X - Y||_F <= ||X||_* + ||Y||_*);
* on the ball ||X^T a_i|| <= ||X||_2 ||a_i|| <= theta ||a_i||, so with beta-Lipschitz phi'
  ||phi'(X^T a_i, b_i)|| <= G_i = ||phi'(0, b_i)|| + beta theta ||a_i|| (for the squared loss
  ||b_i|| + theta ||a_i||), giving the variance bound sigma^2 = 1/n sum_i G_i^2 ||a_i||^2 of
  one sampled gradient and the Lipschitz constant G = 1/n sum_i G_i ||a_i|| + mu theta of F on
  the ball (:func:`trace_gradient_bounds`, the trace-norm version of
  :func:`pdsparse.solvers.ball.gradient_bounds`).

Oracles (:class:`TraceOracles`): the linear minimization oracle over the ball is -theta u_1
v_1^T from the top singular pair of the gradient (:meth:`pdsparse.penalties.TraceBall.
lmo_atom` by the kernel's ``svd`` method, :func:`pdsparse.lowrank.top_singular`, s = 1); the
projection is a full SVD with the singular values projected onto {s >= 0, sum s <= theta}
(:meth:`pdsparse.penalties.TraceBall.project`); the rank-s block step is
:func:`pdsparse.lowrank.block_step`.

**Work** (``run`` returns (iterations, touched)): multiply-adds with
stored entries of A, so that a product of A with a d x c matrix counts nnz(A) c, one epoch of
:func:`pdsparse.solvers.solve` (whose epoch is nnz(A) k for k label columns): a full gradient
costs 2 epochs, a product A U with U of rank s costs s/c of one, a minibatch of b rows
2 b d c / (n d c). Each dense O(d c) pass over X (an update, a projection, an SVD, an LMO) adds
d c; the SVDs cost more than that, which shows in the kernel time the figures plot.

**Sampling**: uniform with replacement from ``numpy.random.default_rng(seed)`` (minibatches
by ``integers(0, n, size=b)``, SVRG's rows one ``integers(n)`` at a time), so that the tests
replay the same draws; a minibatch of n or more draws is replaced by the exact gradient, as
on the l1 ball (``_BallKernel._estimate``). ``iterates()`` is (X, alpha(X)), alpha(X) =
-phi'(A X), which certifies X by the duality gap (:mod:`pdsparse.objective`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from pdsparse import losses
from pdsparse.errors import ConfigError
from pdsparse.lowrank import DEFAULT_METHOD, METHODS, block_step, top_singular
from pdsparse.names import (
    BALL_BATCH_CAPS,
    BALL_BATCHES,
    STEP_MULTIPLIERS,
    TRACE_RANKS,
    step_multiplier,
)
from pdsparse.penalties import L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers.ball import (
    AccPGKernel,
    BallOracles,
    FWKernel,
    SCGSKernel,
    STORCKernel,
    SVRGKernel,
    _BallKernel,
    _capped,
    smoothness,
)
from pdsparse.solvers.base import _int_option, _option, _Options

__all__ = ["SFWOptions", "BlockFWOptions", "SFWKernel", "BlockFWKernel", "TraceAccPGKernel",
           "TraceFWKernel", "TraceSVRGKernel", "TraceSCGSKernel", "TraceSTORCKernel",
           "TraceOracles", "trace_gradient_bounds", "strong_convexity", "sfw_parameters",
           "top_pair", "trace_cndg", "trace_kernel", "norm_ball_factory", "S_START"]

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
    (``_BallKernel._estimate``): SFW is then Frank-Wolfe with the step 2 / (k + 1); an
    integer ``batch`` below n makes it stochastic.
    """
    gamma = 2.0 / (k + 1)
    if options.batch == "theory":
        size = (lip_f * (k + 1) / (lip * diameter)) ** 2
    else:
        size = int(options.batch)
    return gamma, _capped(size, options.batch_cap, n)


def top_pair(M: np.ndarray, method: str) -> tuple[float, np.ndarray, np.ndarray]:
    """(sigma_1, u_1, v_1) of M by :func:`pdsparse.lowrank.top_singular`'s ``method``: the
    ``top_pair`` of :meth:`pdsparse.penalties.TraceBall.lmo_atom` in these kernels."""
    U, s, Vt = top_singular(M, 1, method)
    return float(s[0]), U[:, 0], Vt[0]


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
    ball, pair = TraceBall(radius), functools.partial(top_pair, method=method)
    ut = u.copy()
    calls = 0
    while calls < guard:
        grad = g + beta * (ut - u)
        s, v1, w = ball.lmo_atom(grad, pair)
        a = -s * v1  # radius u_1: the vertex is -outer(a, w)
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
# The trace-norm ball's oracles
# ---------------------------------------------------------------------------------------------

class TraceOracles(BallOracles):
    """The trace-norm ball's oracles (module docstring), in NumPy/BLAS: the penalty's
    projection (a full SVD) and LMO (the top singular pair by ``svd``, the method of
    :func:`pdsparse.lowrank.top_singular`), an atom (a, w) standing for the vertex
    -outer(a, w) (a = theta u_1); draws from ``numpy.random.default_rng(seed)``."""

    ball = "trace-norm ball"
    norm_sub = "*"
    line_search_losses = ("squared",)
    line_search_what = "fw on a trace-norm ball: step=line_search is exact for the squared loss"

    @staticmethod
    def check(problem: Problem, who: str) -> None:
        """Raise unless ``problem`` is a trace-norm ball problem (a label matrix)."""
        if not isinstance(problem.penalty, TraceBall) or not problem.matrix:
            raise ConfigError(f"{who}: the trace-norm kernel needs a TraceBall penalty and "
                              f"a label matrix, got {problem.penalty!r} with labels of shape "
                              f"{problem.b.shape}")

    def __init__(self, problem: Problem, who: str, seed: int, state: np.ndarray | None = None,
                 svd: str = DEFAULT_METHOD):
        p = problem
        self.check(p, who)
        if svd not in METHODS:
            raise ConfigError(f"{who}: unknown svd method {svd!r}; choose one of "
                              f"{list(METHODS)}")
        n, d, c = p.n, p.d, p.k
        super().__init__(p, (d, c), f"({d}, {c}) matrix")
        self.svd = svd
        self.pass_ = max(p.nnz, 1) * c
        self.dense = d * c
        # a projection onto the ball is a full SVD of a d x c matrix: about min(d, c) passes
        # over it; counted, so that work tracks time (an SVRG step is one projection, and
        # counted as 4 dense passes it hid 99% of its cost from the time budget's split)
        self.svd_pass = min(d, c) * self.dense
        self.step_work = 4 * self.dense + self.svd_pass
        self.trial_work = 2 * self.dense
        self.retry_work = self.pass_ + self.dense + self.svd_pass  # A X and an SVD
        self.fw_work = 5 * self.dense
        self.vertex_work = 2 * self.dense
        row_nnz = np.full(n, d) if p.dense else np.diff(p.csr.indptr)
        self.row_work = row_nnz.astype(np.int64) * c
        self.rng = np.random.default_rng(seed)

    def project(self, V: np.ndarray) -> np.ndarray:
        return self.penalty.project(V)

    def lmo(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a, w) with the vertex -outer(a, w) = -theta u_1 v_1^T = argmin over the ball of
        <G, S>."""
        s, u, w = self.penalty.lmo_atom(G, functools.partial(top_pair, method=self.svd))
        return -s * u, w

    def atom_product(self, atom: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, int]:
        """(A S, its work): A S = -(A a) w^T, a rank-one product."""
        a, w = atom
        return -np.outer(self.product(a), w), max(self.problem.nnz, 1)

    @staticmethod
    def add_atom(X: np.ndarray, gamma: float, atom: tuple[np.ndarray, np.ndarray]) -> None:
        a, w = atom
        X -= gamma * np.outer(a, w)

    def fw_line_search(self, X: np.ndarray, Z: np.ndarray, G: np.ndarray,
                       atom: tuple[np.ndarray, np.ndarray], AS: np.ndarray) -> float:
        """argmin_{[0, 1]} F(X + gamma (S - X)) for the squared loss, whose F is quadratic
        along the segment: gamma = <G, X - S> / (||A (S - X)||^2 / n + mu ||S - X||^2),
        clipped to [0, 1]."""
        a, w = atom
        D = -np.outer(a, w) - X
        AD = AS - Z
        curv = float(np.vdot(AD, AD)) / self.problem.n + self.mu * float(np.vdot(D, D))
        slope = float(np.vdot(G, D))
        return min(1.0, max(0.0, -slope / curv)) if curv > 0 else 0.0

    def svrg_snapshot(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X~, A X~, grad F(X~))."""
        zsnap = self.product(X)
        return X.copy(), zsnap, self.loss_gradient(zsnap) + self.mu * X

    def svrg_steps(self, X: np.ndarray, snap: tuple, eta: float, xsum: np.ndarray,
                   steps: int, budget: int) -> tuple[np.ndarray, int, int]:
        """Inner steps X_k = Proj(X_{k-1} - eta (grad f_i(X_{k-1}) - grad f_i(X~) +
        grad F(X~))), grad f_i(X) - grad f_i(X~) = a_i (phi'(X^T a_i) - phi'(X~^T a_i))^T +
        mu (X - X~): at least one, then up to ``steps`` while ``budget`` lasts."""
        p = self.problem
        xsnap, zsnap, gsnap = snap
        done = touched = 0
        while True:
            i = int(self.rng.integers(p.n))
            a = p.mat[i]
            a = a.toarray().ravel() if hasattr(a, "toarray") else a
            r = self.derivs((a @ X)[None, :], np.array([i]))[0] \
                - self.derivs(zsnap[i][None, :], np.array([i]))[0]
            g = np.outer(a, r) + self.mu * (X - xsnap) + gsnap
            X = self.project(X - eta * g)
            if xsum.size:
                xsum += X
            done += 1
            touched += 2 * int(self.row_work[i]) + self.step_work
            if done >= steps or touched >= budget:
                return X, done, touched

    def minibatch_gradient(self, X: np.ndarray, size: int,
                           snapshot: tuple | None) -> tuple[np.ndarray, int]:
        """(1/b) sum_j grad f_{i_j}(X), or with ``snapshot`` = (A Y, A^T phi'(A Y) / n) the
        variance-reduced grad F(Y) + (1/b) sum_j (grad f_{i_j}(X) - grad f_{i_j}(Y)), b =
        ``size`` draws (the mu terms give mu X in both cases); and its work."""
        idx = self.rng.integers(0, self.problem.n, size=size)
        A_s = self.problem.mat[idx]
        R = self.derivs(np.asarray(A_s @ X, dtype=np.float64), idx)
        if snapshot is not None:
            R -= self.derivs(snapshot[0][idx], idx)
        g = np.asarray(A_s.T @ R, dtype=np.float64) / size + self.mu * X
        if snapshot is not None:
            g += snapshot[1]
        return g, 2 * int(self.row_work[idx].sum()) + self.dense

    def cndg(self, g: np.ndarray, X: np.ndarray, beta: float, eta: float,
             guard: int) -> tuple[np.ndarray, int, int]:
        """(CndG's point, its LMO calls, the work): :func:`trace_cndg`."""
        out, calls = trace_cndg(g, X, beta, eta, self.radius, guard, self.svd)
        return out, calls, (3 * calls + 3) * self.dense

    def first_vertex(self) -> tuple[np.ndarray, int]:
        """argmin over the ball of <grad F(0), W> and its work."""
        p = self.problem
        a, w = self.lmo(self.loss_gradient(self.product(np.zeros((p.d, p.k)))))
        return -np.outer(a, w), self.pass_ + self.vertex_work

    def gradient_bounds(self) -> tuple[float, float]:
        return trace_gradient_bounds(self.problem)


# ---------------------------------------------------------------------------------------------
# Kernels: the five on the trace-norm ball, SFW and block FW
# ---------------------------------------------------------------------------------------------

class TraceAccPGKernel(AccPGKernel):
    """:class:`pdsparse.solvers.ball.AccPGKernel` on the trace-norm ball: the projection a
    full SVD (:meth:`pdsparse.penalties.TraceBall.project`), an iteration two epochs and an
    SVD."""

    oracles = TraceOracles


class TraceFWKernel(FWKernel):
    """:class:`pdsparse.solvers.ball.FWKernel` on the trace-norm ball: the vertex -theta u_1
    v_1^T (:meth:`pdsparse.penalties.TraceBall.lmo_atom`; Jaggi & Sulovsky, ICML 2010), the
    line search exact for the squared loss."""

    oracles = TraceOracles


class TraceSVRGKernel(SVRGKernel):
    """:class:`pdsparse.solvers.ball.SVRGKernel` on the trace-norm ball (PDBFW's "projected
    SVRG [15]"): each inner step a row product, a rank-one update and a full SVD."""

    oracles = TraceOracles


class TraceSCGSKernel(SCGSKernel):
    """:class:`pdsparse.solvers.ball.SCGSKernel` on the trace-norm ball: CndG by
    :func:`trace_cndg`, sigma^2 of :func:`trace_gradient_bounds`."""

    oracles = TraceOracles


class TraceSTORCKernel(STORCKernel):
    """:class:`pdsparse.solvers.ball.STORCKernel` on the trace-norm ball: CndG by
    :func:`trace_cndg`, G of :func:`trace_gradient_bounds`."""

    oracles = TraceOracles


class SFWKernel(_BallKernel):
    """Stochastic Frank-Wolfe over the trace-norm ball (Hazan & Luo, ICML 2016, their SFW
    baseline after Hazan & Kale 2012), uniform sampling with replacement.

    X_0 = w0 (default 0); k = 1, 2, ...: g_k = (1/m_k) sum_j grad f_{i_j}(X_{k-1}),
    V_k = -theta u_1 v_1^T from the top singular pair of g_k, X_k = (1 - gamma_k) X_{k-1} +
    gamma_k V_k, with gamma_k and m_k of :func:`sfw_parameters` (m_k >= n: the exact
    gradient). An iteration costs the m_k rows drawn (twice: A_S X and A_S^T R; two epochs
    for the exact gradient), a top singular pair and a dense update.
    """

    name = "sfw"
    oracles = TraceOracles

    def __init__(self, problem: Problem, options: SFWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        self.options = options or SFWOptions()
        self.lip = smoothness(problem)
        self.diameter = 2.0 * self.r
        _, self.lip_f = trace_gradient_bounds(problem)
        self.k = 0
        self.batches: list[int] = []  # m_k used, for the record

    def run(self, budget: int) -> tuple[int, int]:
        p, ball = self.problem, self.ball
        iters = touched = 0
        while touched < budget:
            k = self.k + 1
            gamma, size = sfw_parameters(self.options, k, self.lip, self.diameter,
                                         self.lip_f, p.n)
            g, work = self._estimate(self.x, size)
            atom = ball.lmo(g)
            self.x *= 1.0 - gamma
            ball.add_atom(self.x, gamma, atom)
            self.batches.append(size)
            self.k = k
            iters += 1
            touched += work + 2 * ball.dense
        return iters, touched


class BlockFWKernel(_BallKernel):
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
    oracles = TraceOracles

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
        self.z = self.ball.product(self.x)
        self.ranks: list[int] = []  # s of each step, for the record

    def run(self, budget: int) -> tuple[int, int]:
        p, ball, eta = self.problem, self.ball, self.eta
        iters = touched = 0
        while touched < budget:
            G = ball.loss_gradient(self.z) + self.mu * self.x
            U, sig, Vt = block_step(self.x, G, self.coef, self.s, self.r, self.svd)
            self.ranks.append(self.s)
            if self.grow and sig.size == self.s and self.s < self.max_rank:
                self.s = min(2 * self.s, self.max_rank)
            AU = ball.product(U)
            self.x *= 1.0 - eta
            self.x += (U * (eta * sig)) @ Vt
            self.z *= 1.0 - eta
            self.z += (AU * (eta * sig)) @ Vt
            iters += 1
            touched += ball.pass_ + max(p.nnz, 1) * sig.size + 4 * ball.dense
        return iters, touched


# ---------------------------------------------------------------------------------------------
# The registry's entries
# ---------------------------------------------------------------------------------------------

_L1_KERNELS: dict[str, type[_BallKernel]] = {
    "acc_pg": AccPGKernel,
    "fw": FWKernel,
    "svrg": SVRGKernel,
    "scgs": SCGSKernel,
    "storc": STORCKernel,
}
_TRACE_KERNELS: dict[str, type[_BallKernel]] = {
    "acc_pg": TraceAccPGKernel,
    "fw": TraceFWKernel,
    "svrg": TraceSVRGKernel,
    "scgs": TraceSCGSKernel,
    "storc": TraceSTORCKernel,
    "sfw": SFWKernel,
    "block_fw": BlockFWKernel,
}


def trace_kernel(name: str, problem: Problem, options, seed: int,
                 start: np.ndarray | None = None) -> _BallKernel:
    """The trace-norm kernel of registry method ``name`` with its options dataclass (from
    :mod:`pdsparse.solvers.ball` for acc_pg, fw, svrg, scgs, storc)."""
    try:
        kernel = _TRACE_KERNELS[name]
    except KeyError:
        raise ConfigError(f"{name} has no trace-norm ball kernel; the trace-norm methods are "
                          f"{sorted(_TRACE_KERNELS)}") from None
    return kernel(problem, options, seed, w0=start)


def _dispatch(name: str, problem: Problem, options, seed: int,
              start: np.ndarray | None = None) -> _BallKernel:
    pen = problem.penalty
    if isinstance(pen, TraceBall):
        return trace_kernel(name, problem, options, seed, start)
    if isinstance(pen, L1Ball) and not problem.matrix:
        return _L1_KERNELS[name](problem, options, seed, w0=start)
    what = "an L1Ball with a label matrix (the entrywise ball couples the columns)" \
        if isinstance(pen, L1Ball) else f"penalty {type(pen).__name__}"
    raise ConfigError(f"{name} solves an l1-ball problem with vector labels or a trace-norm "
                      f"ball problem, not {what}")


def norm_ball_factory(name: str):
    """The registry's factory of ``name`` (acc_pg, fw, svrg, scgs or storc):
    ``factory(problem, options, seed, start)`` builds its kernel for an l1-ball problem
    (:mod:`pdsparse.solvers.ball`) or, through :func:`trace_kernel`, a trace-norm one."""
    if name not in _L1_KERNELS:
        raise ValueError(f"{name!r} is not one of the norm-ball methods {sorted(_L1_KERNELS)}")
    return functools.partial(_dispatch, name)
