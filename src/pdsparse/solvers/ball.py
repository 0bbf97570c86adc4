"""PDBFW's norm-ball baselines (Lei et al., Sec. 5): Acc PG, FW, SVRG, SCGS and STORC, each
written once against a ball's oracles, and the l1 ball's oracles (fast path ``_ball.pyx``).

A kernel (:class:`AccPGKernel`, :class:`FWKernel`, :class:`SVRGKernel`, :class:`SCGSKernel`,
:class:`STORCKernel`) holds the oracles of its ball (``self.ball``, a :class:`BallOracles`)
and asks them for everything that depends on the ball: the penalty's projection and linear
minimization oracle first, then the steps a ball takes its own way (a line search, SVRG's
inner steps, minibatch gradients, CndG) and the work each costs. Here the l1 ball's
(:class:`L1Oracles`: :meth:`pdsparse.penalties.L1Ball.lmo_atom`, and ``_ball.pyx`` for the
projection and the per-row loops); the trace-norm ball's are
:class:`pdsparse.solvers.trace.TraceOracles`, bound to the same kernels by the classes of
:mod:`pdsparse.solvers.trace` (``TraceAccPGKernel`` = :class:`AccPGKernel` with those
oracles, ...). This module also holds what both balls share: the options dataclasses, the
constants of the problem and the published parameter schedules.

Problem (PDBFW eq. (5) with C the l1 ball): P(x) = f(x) + indicator{||x||_1 <= r},
f(x) = 1/n sum_i f_i(x), f_i(x) = phi(a_i^T x, b_i) + mu/2 ||x||^2 (``Problem(A, b, loss,
penalty=L1Ball(r, mu))``; the experiments use the smooth hinge). The constants every method
takes (computed once per kernel, outside the timed runs):

* L = beta ||A||_2^2 / n + mu, the smoothness of f (beta the loss's smoothness,
  ``Problem.smoothness``; ||A||_2 by :func:`spectral_norm_sq`);
* L_i = beta ||a_i||^2 + mu, the smoothness of f_i, and L_max = max_i L_i;
* D = 2 r, the Euclidean diameter of the l1 ball (the distance of r e_1 and -r e_1);
* G_i = max |phi'(z, b_i)| over |z| <= r ||a_i||_inf (the margins a_i^T x the ball allows;
  phi' is monotone, so the maximum is at an end), giving the bound on the variance of one
  sampled gradient sigma^2 = 1/n sum_i G_i^2 ||a_i||^2 >= E ||grad f_i(x) - grad f(x)||^2 for
  every x in the ball (the mu x terms cancel), and the Lipschitz constant of f on the ball
  G = 1/n sum_i G_i ||a_i|| + mu r (:func:`gradient_bounds`).

The methods, each the published one (the kernels' docstrings give the updates):

* ``acc_pg`` (:class:`AccPGKernel`): accelerated projected gradient, step 1/L;
* ``fw`` (:class:`FWKernel`): Frank-Wolfe with the vertex -r sign(g_j) e_j, exact line search;
* ``svrg`` (:class:`SVRGKernel`): projected SVRG / Prox-SVRG;
* ``scgs`` (:class:`SCGSKernel`): stochastic conditional gradient sliding (Lan & Zhou 2016);
* ``storc`` (:class:`STORCKernel`): STORC (Hazan & Luo 2016, Algorithm 2).

Speed to a 1e-6 relative gap on news20 (labels <= 10 against the rest, r = 30): Acc PG far
ahead, then STORC, SVRG (the projection makes its step O(d)) and FW with the open-loop step
(the exact line search zigzags); SCGS barely gets there (measured: benchmarks/README.md,
"Measurements cited by the code").

On the l1 ball every kernel keeps A x of the points it needs where that saves a product,
counts its work as the stored entries of A it reads plus d per dense O(d) pass
(``_ball.pyx``; a full gradient is 2 nnz(A), a sampled one 2 nnz(a_i); CndG counts the
coordinates it sweeps), and returns ``iterates() = (x, alpha(x))``: alpha(x) = -phi'(A x)
certifies x through the duality gap (:mod:`pdsparse.objective`). The schedule functions
below (:func:`svrg_parameters`, :func:`scgs_parameters`, :func:`storc_inner`,
:func:`storc_parameters`) are the one place the published parameters live, for both balls.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from pdsparse import losses, objective
from pdsparse.errors import ConfigError
from pdsparse.lowrank import DEFAULT_METHOD
from pdsparse.names import (
    ACC_PG_LIPSCHITZ,
    BALL_BATCH_CAPS,
    BALL_BATCHES,
    BALL_INNER,
    BALL_MOMENTA,
    BALL_SNAPSHOTS,
    FW_STEPS,
    STEP_MULTIPLIERS,
    STORC_INNER,
    step_multiplier,
)
from pdsparse.penalties import FEASIBILITY_RTOL, L1Ball
from pdsparse.problem import Problem
from pdsparse.solvers import _ball
from pdsparse.solvers.base import _int_option, _Kernel, _option, _Options

__all__ = ["AccPGOptions", "FWOptions", "SVRGOptions", "SCGSOptions", "STORCOptions",
           "AccPGKernel", "FWKernel", "SVRGKernel", "SCGSKernel", "STORCKernel",
           "BallOracles", "L1Oracles", "spectral_norm_sq", "smoothness", "acc_pg_lipschitz",
           "gradient_bounds", "svrg_parameters", "scgs_parameters", "storc_inner",
           "storc_parameters", "cndg_guard"]

_SLIDING_STEP_DOC = ("a multiplier c on the steps 1 / beta_k of CndG's prox-subproblems: the "
                     "parameters are computed with L / c in place of L (theory: c = 1, the "
                     "paper's; x0_1 ... x100, see pdsparse.names.STEP_MULTIPLIERS)")
# The step multipliers' times to a certified gap (SCGS and STORC; STORC stalls at x10):
# benchmarks/README.md, "Measurements cited by the code". A step grid, not a default.
_BATCH_CAP_DOC = ("largest minibatch: n (default; a batch of n or more is the exact "
                  "gradient, which costs what n draws do), none (the theorem's size "
                  "uncapped) or an integer")


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AccPGOptions(_Options):
    """Options of accelerated projected gradient (Acc PG)."""

    momentum: str = _option(
        "nesterov", BALL_MOMENTA,
        "nesterov (default: the constant momentum (sqrt(L) - sqrt(mu)) / (sqrt(L) + "
        "sqrt(mu)) of Nesterov's scheme for mu-strongly convex f, Nesterov 2004 Sec. 2.2, "
        "linear rate) or fista (Beck & Teboulle 2009, t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2)")
    lipschitz: str = _option(
        "exact", ACC_PG_LIPSCHITZ,
        "L of the 1/L step: exact (||A||_2 by ARPACK or a small Gram matrix, the setup the "
        "speedup tables count), power (POWER_ITERS power iterations, times POWER_SAFETY) or "
        "backtracking (from the cheap lower bound beta max_i ||a_i||^2 / n + mu, doubled "
        "whenever the sufficient-decrease test fails; Beck & Teboulle 2009, Sec. 4)",
        late=True)


@dataclass(frozen=True)
class FWOptions(_Options):
    """Options of Frank-Wolfe (FW)."""

    step: str = _option(
        "line_search", FW_STEPS,
        "line_search (default: the exact minimizer of P on the segment to the vertex) or "
        "open_loop (2 / (t + 2), Jaggi 2013)")


@dataclass(frozen=True)
class SVRGOptions(_Options):
    """Options of projected SVRG (Prox-SVRG, Xiao & Zhang 2014)."""

    step: str = _option(
        "theory", STEP_MULTIPLIERS,
        "step eta: theory (default: 0.1 / L_max, Xiao & Zhang 2014 Sec. 3.1) or that step "
        "times 0.1, 0.3, 2, 3, 5, 10 or 100 (x0_1 ... x100)")
    inner: str = _int_option(
        "2n", BALL_INNER,
        "inner steps m per snapshot: 2n (default: Johnson & Zhang 2013 Sec. 4) or an "
        "integer")
    snapshot: str = _option(
        "last", BALL_SNAPSHOTS,
        "next snapshot: last (default: the last inner iterate, Johnson & Zhang's option I) "
        "or average (the mean of the inner iterates, Prox-SVRG's Algorithm 1)")


@dataclass(frozen=True)
class SCGSOptions(_Options):
    """Options of stochastic conditional gradient sliding (SCGS, Lan & Zhou 2016)."""

    batch: str = _int_option(
        "theory", BALL_BATCHES,
        "minibatch B_k: theory (default: ceil(sigma^2 (k + 2)^3 / (L^2 D^2)), "
        ":func:`scgs_parameters`) or an integer (a constant batch)")
    batch_cap: str = _int_option("n", BALL_BATCH_CAPS, _BATCH_CAP_DOC)
    step: str = _option("theory", STEP_MULTIPLIERS, _SLIDING_STEP_DOC, late=True)


@dataclass(frozen=True)
class STORCOptions(_Options):
    """Options of STORC (Hazan & Luo 2016, Algorithm 2)."""

    inner: str = _int_option(
        "theory", STORC_INNER,
        "inner iterations N_t per snapshot: theory (default: Hazan & Luo's theorem, "
        ":func:`storc_inner`) or an integer")
    batch: str = _int_option(
        "100", BALL_BATCHES,
        "minibatch m_{t,k}: 100 (default, practical: see :func:`storc_parameters`), another "
        "integer, or theory (the theorem's 5600 N_t k, capped by batch_cap)")
    batch_cap: str = _int_option("n", BALL_BATCH_CAPS, _BATCH_CAP_DOC)
    step: str = _option("theory", STEP_MULTIPLIERS, _SLIDING_STEP_DOC, late=True)


# ---------------------------------------------------------------------------------------------
# Constants of the problem
# ---------------------------------------------------------------------------------------------

_NORM_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_GRAM_SIDE = 2000  # ||A||_2 from the Gram matrix of a side at most this long,
_GRAM_ENTRIES = 4_000_000  # of an A with at most this many entries (32 MB densified)


def spectral_norm_sq(problem: Problem) -> float:
    """||A||_2^2, the largest eigenvalue of A^T A (cached per problem).

    When one side of A is short (at most ``_GRAM_SIDE``) and A small enough to densify
    (``_GRAM_ENTRIES``): the top eigenvalue of the short side's Gram matrix (A A^T or A^T A,
    one BLAS product and a small ``eigvalsh``: on a short, wide set such as duke a tenth of
    ARPACK's time, which would be most of Acc PG's setup; measured: benchmarks/README.md,
    "Measurements cited by the code").
    Otherwise ARPACK's top singular value
    (``scipy.sparse.linalg.svds``, tol 1e-10, a fixed start vector: deterministic). Both are
    exact to rounding, never a power-iteration lower bound, so that 1/L steps are safe.
    """
    key = problem.mat
    cached = _NORM_CACHE.get(problem)
    if cached is not None and cached[0] is key:
        return cached[1]
    n, d = problem.shape
    A = problem.mat
    if min(n, d) < 3 or (min(n, d) <= _GRAM_SIDE and n * d <= _GRAM_ENTRIES):
        dense = A if isinstance(A, np.ndarray) else A.toarray()
        gram = dense @ dense.T if n <= d else dense.T @ dense
        value = float(np.linalg.eigvalsh(gram)[-1])
    else:
        v0 = np.full(min(n, d), 1.0 / math.sqrt(min(n, d)))
        s = svds(A, k=1, tol=1e-10, v0=v0, return_singular_vectors=False)
        value = float(s[0]) ** 2
    _NORM_CACHE[problem] = (key, value)
    return value


POWER_ITERS = 10
"""Power iterations on A^T A of ``lipschitz=power`` (from a fixed start: deterministic)."""
POWER_SAFETY = 1.1
"""``lipschitz=power`` takes L from the power estimate of ||A||_2^2 times this factor: the
estimate is a lower bound, and a step above 1/L can make the accelerated method diverge."""


def power_norm_sq(problem: Problem, iters: int = POWER_ITERS) -> float:
    """A lower bound of ||A||_2^2: ``iters`` power iterations on A^T A (2 passes each) from
    the all-ones vector, the Rayleigh quotient ||A v||^2 / ||v||^2 at the last iterate.

    With example weights s, of ||diag(sqrt(s)) A||_2^2 (power iterations on A^T diag(s) A):
    the weighted loss's smoothness is beta times it over n."""
    A, s = problem.mat, problem.weights
    v = np.full(problem.d, 1.0 / math.sqrt(problem.d))
    value = 0.0
    for _ in range(max(1, int(iters))):
        av = np.asarray(A @ v, dtype=np.float64).reshape(-1)
        sav = av if s is None else s * av
        value = float(av @ sav)
        w = np.asarray(A.T @ sav, dtype=np.float64).reshape(-1)
        norm = float(np.linalg.norm(w))
        if norm == 0.0:
            return value
        v = w / norm
    av = np.asarray(A @ v, dtype=np.float64).reshape(-1)
    return max(value, float(av @ (av if s is None else s * av)))


def acc_pg_lipschitz(problem: Problem, rule: str) -> float:
    """Acc PG's L (its step 1/L) by ``rule`` (:class:`AccPGOptions`' ``lipschitz``), on the
    l1 or the trace ball: exact (:func:`smoothness`), power (:func:`power_norm_sq` times
    :data:`POWER_SAFETY`) or, to start backtracking from, the lower bound beta max_i
    ||a_i||^2 / n + mu (||A||_2^2 >= max_i ||a_i||^2)."""
    p = problem
    if rule == "exact":
        return smoothness(p)
    if rule == "power":
        return POWER_SAFETY * p.smoothness * power_norm_sq(p) / p.n + p.l2
    return p.smoothness * float(np.max(p.row_sqnorms)) / p.n + p.l2


def smoothness(problem: Problem) -> float:
    """L = beta ||A||_2^2 / n + mu: grad f is L-Lipschitz."""
    return problem.smoothness * spectral_norm_sq(problem) / problem.n + problem.l2


def _row_max_abs(problem: Problem) -> np.ndarray:
    A = problem.mat
    if isinstance(A, np.ndarray):
        return np.abs(A).max(axis=1)
    out = np.zeros(problem.n)
    R = sp.csr_matrix(A)
    nonempty = np.diff(R.indptr) > 0
    if R.nnz:
        out[nonempty] = np.maximum.reduceat(np.abs(R.data), R.indptr[:-1][nonempty])
    return out


def gradient_bounds(problem: Problem) -> tuple[float, float]:
    """(sigma^2, G) on the ball: the variance bound of one sampled gradient and the
    Lipschitz constant of f (module docstring). O(nnz)."""
    reach = problem.radius * _row_max_abs(problem)
    b = np.ascontiguousarray(problem.b, dtype=np.float64)
    g = np.maximum(np.abs(losses.derivs(problem.loss_id, reach, b)),
                   np.abs(losses.derivs(problem.loss_id, -reach, b)))
    sq = problem.row_sqnorms
    sigma2 = float(np.mean(g * g * sq))
    lip = float(np.mean(g * np.sqrt(sq))) + problem.l2 * problem.radius
    return sigma2, lip


# ---------------------------------------------------------------------------------------------
# The published parameters (shared with the trace-norm kernels)
# ---------------------------------------------------------------------------------------------

_INNER_PER_N = {"2n": 2}


def svrg_parameters(options: SVRGOptions, l_max: float, n: int) -> tuple[float, int]:
    """(eta, m) of projected SVRG.

    eta = 0.1 / L_max times the ``step`` multiplier: Xiao & Zhang (2014), Sec. 3.1, choose
    eta = 0.1 / L_Q with uniform sampling (L_Q = max_i L_i) in their example of Theorem 3.1
    (any eta < 1 / (4 L_Q) converges for m large enough). m = 2n (``inner``): Johnson & Zhang
    (2013), Sec. 4 ("m = 2n for convex problems"); Prox-SVRG's theory asks m of order
    L_Q / mu, which the integer choice allows.
    """
    eta = 0.1 / l_max * step_multiplier(options.step)
    m = _INNER_PER_N[options.inner] * n if options.inner in _INNER_PER_N else int(options.inner)
    return eta, m


def _capped(size: float, cap: str, n: int) -> int:
    size = max(1, math.ceil(size))
    if cap == "none":
        return size
    return min(size, n if cap == "n" else int(cap))


CNDG_GUARD_MAX = 10**7
"""No CndG call runs more iterations than this (about a second on the l1 ball)."""


def cndg_guard(beta: float, eta: float, diameter: float) -> int:
    """A ceiling on CndG's iterations: twice Lan & Zhou's bound ceil(6 beta D^2 / eta) on the
    iterations of procedure CndG, plus 10, and at most :data:`CNDG_GUARD_MAX`. The bound is
    reached when rounding stalls the Wolfe gap; the cap when the parameters make the bound
    astronomical (a step multiplier far past the theory's on an iterate that has left the
    optimum: the sensitivity study's STORC with step x100 on MNIST-RB reached 2^63 and
    crashed the run). ``cndg_capped`` of the kernels counts both."""
    bound = 6.0 * beta * diameter * diameter / eta if eta > 0 else math.inf
    if not bound < CNDG_GUARD_MAX:  # also inf and nan
        return CNDG_GUARD_MAX
    return min(2 * math.ceil(bound) + 10, CNDG_GUARD_MAX)


def scgs_parameters(options: SCGSOptions, k: int, lip: float, diameter: float,
                    sigma2: float, n: int) -> tuple[float, float, float, int]:
    """(gamma_k, beta_k, eta_k, B_k) of SCGS at outer iteration k >= 1.

    Lan & Zhou (SIAM J. Optim. 26(2), 2016), Sec. 3, the stochastic CGS with the parameters
    of their smooth (not strongly convex) case: gamma_k = 3 / (k + 2), beta_k = 4 L / (k + 2),
    eta_k = L D^2 / (k (k + 1)), B_k = ceil(sigma^2 (k + 2)^3 / (L^2 D^2)), giving
    E f(y_N) - f* = O(L D^2 / N^2) with O(sigma^2 D^2 / eps^2) sampled gradients and
    O(L D^2 / eps) linear oracles. The paper's text could not be read with the search
    tools of this project (only its abstract), so
    they are checked two ways instead: they are the ones consistent with those complexities
    (sum_k B_k = sigma^2 N^4 / (L^2 D^2), and CndG's 6 beta_k D^2 / eta_k = O(k)
    iterations), and an independent implementation that cites Lan & Zhou (Optimization
    Online 4605) uses exactly them: the Python code of the Conditional Gradient Methods
    survey (Braun, Carderera, Combettes, Hassani, Karbasi, Mokhtari & Pokutta, 2022;
    ``stochastic_conditional_gradient_sliding_frank_wolfe_step``: gamma = 3/(k+2), beta =
    4L/(k+2), eta = L D^2/(k(k+1)), batch ceil(sigma^2 (k+2)^3 / (L D)^2), k from 1; read
    through the code search, not copied; when: benchmarks/README.md, "Measurements cited by
    the code"). The mu of f is not used (Lan & Zhou also treat strongly convex f; that
    variant is not implemented). ``batch`` may replace B_k by a
    constant; ``batch_cap`` caps it (a batch of n or more is the exact gradient). ``step``
    = c: every parameter takes L / c for L (c = 1, ``theory``, is exact: L / 1.0 == L).
    """
    lip = lip / step_multiplier(options.step)
    gamma = 3.0 / (k + 2)
    beta = 4.0 * lip / (k + 2)
    eta = lip * diameter * diameter / (k * (k + 1))
    if options.batch == "theory":
        size = sigma2 * (k + 2) ** 3 / (lip * lip * diameter * diameter)
    else:
        size = int(options.batch)
    return gamma, beta, eta, _capped(size, options.batch_cap, n)


def storc_inner(options: STORCOptions, t: int, lip: float, mu: float) -> int:
    """N_t, the inner iterations of STORC's t-th snapshot (t >= 1).

    Hazan & Luo (ICML 2016), their theorem on STORC: for mu-strongly convex f (its third
    case) N_t = ceil(sqrt(32 kappa)), kappa = L / mu, the same for every t; for mu = 0 its
    G-Lipschitz case: N_t = ceil(2^(t/2 + 2)). ``inner`` may fix N_t instead. ``step`` = c:
    L / c for L, as in :func:`storc_parameters`.
    """
    if options.inner != "theory":
        return int(options.inner)
    lip = lip / step_multiplier(options.step)
    if mu > 0:
        return math.ceil(math.sqrt(32.0 * lip / mu))
    return math.ceil(2.0 ** (t / 2.0 + 2.0))


def storc_parameters(options: STORCOptions, t: int, k: int, n_t: int, lip: float, mu: float,
                     diameter: float, lip_f: float, n: int) -> tuple[float, float, float, int]:
    """(gamma_k, beta_k, eta_{t,k}, m_{t,k}) of STORC, inner iteration k of snapshot t.

    Hazan & Luo (ICML 2016), Algorithm 2 and the theorem on it: gamma_k = 2 / (k + 1),
    beta_k = 3 L / k, eta_{t,k} = 2 L D_t^2 / (N_t k), which give E f(w_t) - f* <=
    L D^2 / 2^(t + 1) with, for mu-strongly convex f (the theorem's third case),
    D_t^2 = kappa D^2 / 2^(t-1) and m_{t,k} = 5600 N_t k; for mu = 0, f G-Lipschitz (its
    second case; ``lip_f`` = G), D_t = D and m_{t,k} = 700 N_t + 24 N_t G (k + 1) / (L D).
    (Its first case, grad f(w*) = 0, fails on a ball whose constraint is active.) These are
    the values as recalled (../shared/ALGORITHMS.md flags STORC's as uncertain): the paper's
    text could not be read with this project's search tools
    (only the abstract, whose rates they match: O(log 1/eps) snapshots, O(1/eps^1.5)
    sampled gradients in the Lipschitz case), and no independent STORC implementation was
    found to compare with; ``tests/test_ball_solvers.py`` checks the theorem's bound
    E f(w_t) - f* <= L D^2 / 2^(t + 1) at every snapshot on a small problem.

    The theorem's m_{t,k} is thousands of draws (5600 N_t k), more than n on most data,
    where a batch of n or more is the exact gradient (:meth:`_SlidingKernel._step`):
    ``batch=theory`` is then restarted CGS with exact gradients. The default is instead the
    constant m = 100 of the MATLAB code of these baselines for trace-norm experiments
    (files ``SVR_CGS.m``, ``SCGS.m``, found by code search; repository not identified):
    on news20 (labels <= 10 against the rest) STORC reaches a 1e-6 gap at r = 30 in less than
    half the time it takes with ``theory``, and at r = 300 the same gap within the same budget.
    (SCGS keeps its growing B_k: a constant 100 stalls it.) Measured: benchmarks/README.md,
    "Measurements cited by the code".
    ``step`` = c: every parameter takes L / c for L (c = 1, ``theory``, is exact).
    """
    lip = lip / step_multiplier(options.step)
    gamma = 2.0 / (k + 1)
    beta = 3.0 * lip / k
    if mu > 0:
        d_t2 = (lip / mu) * diameter * diameter / 2.0 ** (t - 1)
        theory = 5600.0 * n_t * k
    else:
        d_t2 = diameter * diameter
        theory = 700.0 * n_t + 24.0 * n_t * lip_f * (k + 1) / (lip * diameter)
    eta = 2.0 * lip * d_t2 / (n_t * k)
    size = theory if options.batch == "theory" else int(options.batch)
    return gamma, beta, eta, _capped(size, options.batch_cap, n)


# ---------------------------------------------------------------------------------------------
# What a norm-ball kernel asks of its ball; the l1 ball's answers
# ---------------------------------------------------------------------------------------------

class BallOracles:
    """What a norm-ball kernel (:class:`_BallKernel`) asks of the ball it runs on.

    The products with A and the loss gradient (here, for both balls); the penalty's
    projection and linear minimization oracle (``project``, ``lmo``: the LMO's vertex as an
    atom, ``atom_product`` its product with A, ``add_atom`` x += gamma atom); the steps each
    ball takes its own way (``fw_line_search``, ``svrg_snapshot`` and ``svrg_steps``,
    ``minibatch_gradient``, ``cndg``, ``first_vertex``); and the work of each, in the ball's
    units: ``pass_`` a product with A, ``dense`` a pass over the iterate, and the counts of
    the steps beyond their products (``step_work`` a projected step of Acc PG or SVRG,
    ``trial_work`` and ``retry_work`` a backtracking test and a failed trial, ``fw_work`` a
    Frank-Wolfe update, ``vertex_work`` STORC's first vertex). The two balls count dense
    passes differently (:class:`L1Oracles`: as ``_ball.pyx`` does; the trace-norm ball: every
    dense O(d c) pass, and min(d, c) of them per SVD), as their kernels always have: the
    counts decide where a budget stops a run, so they are part of every trace.
    """

    ball = "ball"
    norm_sub = ""  # ||w0||_<norm_sub> in the errors
    line_search_losses: tuple[str, ...] = ()
    """The losses whose Frank-Wolfe line search is exact on this ball (``fw``'s default)."""
    line_search_what = ""

    def __init__(self, problem: Problem, shape: tuple[int, ...], shape_text: str):
        self.problem = problem
        self.penalty = problem.penalty
        self.radius, self.mu = problem.radius, problem.l2
        self.shape, self.shape_text = shape, shape_text
        self.svd: str | None = None

    def product(self, X: np.ndarray) -> np.ndarray:
        """A X (a pass over A)."""
        return np.asarray(self.problem.mat @ X, dtype=np.float64)

    def derivs(self, Z: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """phi'(Z, B) entrywise (B restricted to ``rows``)."""
        p = self.problem
        B = p.b if rows is None else p.b[rows]
        return losses.derivs(p.loss_id, np.ascontiguousarray(Z).reshape(-1),
                             np.ascontiguousarray(B).reshape(-1)).reshape(Z.shape)

    def loss_gradient(self, Z: np.ndarray) -> np.ndarray:
        """A^T phi'(Z) / n, the gradient of the loss part at a point X with A X = Z."""
        p = self.problem
        return np.asarray(p.mat.T @ self.derivs(Z), dtype=np.float64) / p.n

    def start(self, w0: np.ndarray | None, who: str) -> np.ndarray:
        """x_0: 0, or ``w0`` checked to be a finite point of the ball."""
        if w0 is None:
            return np.zeros(self.shape)
        x = np.array(w0, dtype=np.float64)
        if len(self.shape) == 1:
            x = x.reshape(-1)
        if x.shape != self.shape or not np.all(np.isfinite(x)):
            raise ConfigError(f"{who}: w0 must be a finite {self.shape_text}, got shape "
                              f"{np.shape(w0)}")
        norm = self.penalty.norm(x)
        if norm > self.radius * (1.0 + FEASIBILITY_RTOL):
            raise ConfigError(f"{who}: w0 lies outside the {self.ball} of radius "
                              f"{self.radius} (||w0||_{self.norm_sub} = {norm:.6g})")
        return x


class L1Oracles(BallOracles):
    """The l1 ball's oracles, with ``_ball.pyx`` as their fast path.

    The LMO is the penalty's (:meth:`pdsparse.penalties.L1Ball.lmo_atom`: -r sign(g_j) e_j,
    j = argmax_i |g_i|, the first index on ties), its atom (j, s). The projection is
    Condat's (``_ball.project_l1``, expected O(d); the point of
    :meth:`~pdsparse.penalties.L1Ball.project`'s sort to rounding), and what a kernel would
    otherwise loop over in Python runs in ``_ball.pyx``: SVRG's inner steps, the minibatch
    gradients of SCGS and STORC, CndG over the support, FW's exact line search. Work: the
    stored entries of A read, plus d per dense O(d) pass as ``_ball.pyx`` counts them.
    """

    ball = "l1 ball"
    norm_sub = "1"
    line_search_losses = ("smooth_hinge", "squared")
    line_search_what = "fw: step=line_search is exact for the smooth hinge and the squared loss"

    def __init__(self, problem: Problem, who: str, seed: int, state: np.ndarray,
                 svd: str | None = None):
        p = problem
        if not isinstance(p.penalty, L1Ball) or p.matrix:
            raise ConfigError(f"{who}: the l1-ball kernel needs an L1Ball penalty and "
                              f"vector labels, got {p.penalty!r} with labels of shape "
                              f"{p.b.shape}")
        super().__init__(p, (p.d,), f"vector of length {p.d}")
        self.state = state  # the kernel's seeded state: _ball.pyx draws the rows from it
        self.pass_ = max(p.nnz, 1)
        self.dense = p.d
        self.step_work = p.d  # the projection
        self.trial_work = p.n + p.d  # f at x (its margins are known) and x - y
        self.retry_work = self.pass_ + p.d  # A x and a projection
        self.fw_work = p.d  # the LMO's scan of g
        self.vertex_work = p.d

    # buffers and copies of A, made when a kernel first needs them
    @cached_property
    def rows(self) -> tuple:
        return self.problem.lines("rows")

    @cached_property
    def cols(self):
        return None if self.problem.dense else self.problem.csc

    @cached_property
    def _buffers(self) -> dict[str, np.ndarray]:
        d = self.problem.d
        return {"g": np.empty(d), "xt": np.empty(d), "work": np.empty(4 * d),
                "empty": np.empty(0)}

    def project(self, v: np.ndarray) -> np.ndarray:
        return _ball.project_l1(v, self.radius)[0]

    def lmo(self, g: np.ndarray) -> tuple[int, float]:
        return self.penalty.lmo_atom(g)

    def atom_product(self, atom: tuple[int, float]) -> tuple[np.ndarray, int]:
        """(A (s e_j), its work): s times column j of A (the CSC copy, or a strided column
        of dense A)."""
        j, s = atom
        if self.cols is None:
            rows, vals = slice(None), self.problem.mat[:, j]
        else:
            C = self.cols
            lo, hi = C.indptr[j], C.indptr[j + 1]
            rows, vals = C.indices[lo:hi], C.data[lo:hi]
        av = np.zeros(self.problem.n)
        av[rows] = s * vals
        return av, len(vals)

    @staticmethod
    def add_atom(x: np.ndarray, gamma: float, atom: tuple[int, float]) -> None:
        j, s = atom
        x[j] += gamma * s

    def fw_line_search(self, x: np.ndarray, z: np.ndarray, g: np.ndarray,
                       atom: tuple[int, float], av: np.ndarray) -> float:
        """argmin_{[0, 1]} P(x + gamma (v - x)) exactly (``_ball.fw_line_search``: the smooth
        hinge along a segment is piecewise quadratic, the squared loss quadratic)."""
        p, r = self.problem, self.radius
        j, vj = atom
        xx = float(x @ x)
        xd = vj * x[j] - xx  # <x, v - x>
        dd = xx - 2.0 * vj * x[j] + r * r  # ||v - x||^2
        return _ball.fw_line_search(p.loss_id, z, av - z, p.b, self.mu, xd, dd)

    def svrg_snapshot(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A x~, A^T phi'(A x~) / n): the loss part of grad f(x~) (``_ball.svrg_steps``
        adds mu x at each step: the mu terms of the estimate sum to it exactly)."""
        zsnap = np.ascontiguousarray(self.product(x))
        return zsnap, np.ascontiguousarray(self.loss_gradient(zsnap))

    def svrg_steps(self, x: np.ndarray, snap: tuple, eta: float, xsum: np.ndarray,
                   steps: int, budget: int) -> tuple[np.ndarray, int, int]:
        """Up to ``steps`` inner steps (x in place; none once ``budget`` is spent)."""
        p = self.problem
        k, t = _ball.svrg_steps(*self.rows, p.b, x, *snap, eta, self.mu, self.radius,
                                p.loss_id, self.state, steps, budget, xsum,
                                self._buffers["work"])
        return x, k, t

    def minibatch_gradient(self, z: np.ndarray, size: int,
                           snapshot: tuple | None) -> tuple[np.ndarray, int]:
        p, buf = self.problem, self._buffers
        zsnap, gsnap = (buf["empty"], buf["empty"]) if snapshot is None else snapshot
        touched = _ball.minibatch_gradient(*self.rows, p.b, z, zsnap, gsnap, self.mu,
                                           p.loss_id, self.state, size, buf["g"])
        return buf["g"], touched

    def cndg(self, g: np.ndarray, x: np.ndarray, beta: float, eta: float,
             guard: int) -> tuple[np.ndarray, int, int]:
        """(CndG's point, its LMO calls, the work): ``_ball.cndg``, O(|support|) an
        iteration, into a second buffer (x's array becomes the next call's buffer)."""
        xt = self._buffers["xt"]
        xt[:] = x
        its, _, swept = _ball.cndg(g, x, xt, beta, eta, self.radius, guard)
        self._buffers["xt"] = x
        return xt, its, swept + 3 * self.dense

    def first_vertex(self) -> tuple[np.ndarray, int]:
        """argmin over the ball of <grad f(0), w> (A 0 = 0: no product) and its work."""
        p = self.problem
        j, s = self.lmo(self.loss_gradient(np.zeros(p.n)))  # grad f(0) (mu x = 0)
        y = np.zeros(p.d)
        y[j] = s
        return y, self.pass_ + self.vertex_work

    def gradient_bounds(self) -> tuple[float, float]:
        return gradient_bounds(self.problem)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

class _BallKernel(_Kernel):
    """What every norm-ball kernel shares: the ball's oracles ``ball`` (an instance of the
    class's ``oracles``: :class:`L1Oracles` here, :class:`pdsparse.solvers.trace.TraceOracles`
    in the trace-norm classes), x_0 (0 or ``w0``) and mu. ``svd``: the top-singular-pair
    method of the trace-norm LMO (:func:`pdsparse.lowrank.top_singular`; None on the l1
    ball)."""

    paired = True  # alpha = alpha(x)

    name = "ball"
    oracles: type[BallOracles] = L1Oracles

    def __init__(self, problem: Problem, seed: int = 0, w0: np.ndarray | None = None,
                 svd: str = DEFAULT_METHOD):
        super().__init__(problem, "uniform", seed)
        self.ball = self.oracles(problem, self.name, seed, self.state, svd)
        self.r, self.mu = problem.radius, problem.l2
        self.x = self.ball.start(w0, self.name)

    @property
    def svd(self) -> str | None:
        return self.ball.svd

    @svd.setter
    def svd(self, method: str) -> None:
        self.ball.svd = method

    def _estimate(self, z: np.ndarray, size: int, snapshot: tuple | None = None
                  ) -> tuple[np.ndarray, int]:
        """A sampled gradient of f at z and its work: the ball's
        ``minibatch_gradient`` (variance-reduced around ``snapshot`` = (A Y, A^T phi'(A Y) /
        n) when given), or, for a batch of n or more draws, the exact gradient grad f(z): it
        costs the two products of n sampled rows and its variance, 0, meets every variance
        bound the theorems ask of a batch (Lan & Zhou's sigma^2 / B_k, Hazan & Luo's
        variance-reduced estimate), where n draws with replacement would keep a noise floor
        of sigma^2 / n (measured: SFW and SCGS stalled near a relative gap of 0.1 on a small
        problem)."""
        ball = self.ball
        if size >= self.problem.n:
            g = ball.loss_gradient(ball.product(z)) + self.mu * z
            return g, 2 * ball.pass_ + ball.dense
        return ball.minibatch_gradient(z, size, snapshot)

    def solution(self) -> np.ndarray:
        return self.x


class AccPGKernel(_BallKernel):
    """Accelerated projected gradient on f over the ball, step 1/L.

    ``momentum="nesterov"`` (default): Nesterov's constant-step scheme for a mu-strongly
    convex f over a simple set (Nesterov, *Introductory Lectures on Convex Optimization*,
    2004, Sec. 2.2.4, with the gradient mapping of Sec. 2.2.3): x_{k+1} = Proj(y_k -
    grad f(y_k) / L), y_{k+1} = x_{k+1} + q (x_{k+1} - x_k), q = (sqrt(L) - sqrt(mu)) /
    (sqrt(L) + sqrt(mu)), y_0 = x_0. It converges linearly, O(sqrt(kappa) log(1/eps))
    iterations: the rate PDBFW's Table 1 lists for Acc PG (its ref. [29], Nesterov); mu is
    known here (the l2 of the penalty), so the strongly convex scheme is the one that applies.
    ``momentum="fista"``: FISTA with constant step (Beck & Teboulle, SIAM J. Imaging Sci. 2(1),
    2009, Sec. 4): q_k = (t_k - 1) / t_{k+1}, t_1 = 1, t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2,
    the O(1/k^2) method that ignores mu (and the only one for mu = 0).
    ``lipschitz``: L of the 1/L step (:func:`acc_pg_lipschitz`): exact
    (default), power, or backtracking (Beck & Teboulle 2009, Sec. 4: from the lower bound
    beta max_i ||a_i||^2 / n + mu, doubled while f(x) > f(y) + <grad f(y), x - y> +
    L/2 ||x - y||^2; each failed trial costs a product A x and a projection).
    A y_k is formed from A x_k and A x_{k-1} (linear), so an iteration costs two passes over
    A (A^T phi'(A y_k), A x_{k+1}) and the projection: O(d) on the l1 ball (Condat's), a full
    SVD on the trace-norm ball.
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
            raise ConfigError(f"acc_pg: momentum=nesterov needs mu > 0 (the l2 of the "
                              f"{type(problem.penalty).__name__} penalty); use momentum=fista "
                              f"for mu = 0")
        self._set_momentum()
        self.backtracks = 0
        self.t = 1.0
        self.zx = self.ball.product(self.x)
        self.y, self.zy = self.x.copy(), self.zx.copy()

    def _set_momentum(self) -> None:
        if not self.fista:
            sl, sm = math.sqrt(self.lip), math.sqrt(self.mu)
            self.q = (sl - sm) / (sl + sm)

    def run(self, budget: int) -> tuple[int, int]:
        p, ball = self.problem, self.ball
        iters = touched = 0
        while touched < budget:
            g = ball.loss_gradient(self.zy) + self.mu * self.y
            # f at y: y is extrapolated and may lie outside the ball
            fy = objective.smooth_value(p, self.y, self.zy) if self.backtrack else 0.0
            while True:
                x = ball.project(self.y - g / self.lip)
                zx = ball.product(x)
                if not self.backtrack:
                    break
                dx = x - self.y
                touched += ball.trial_work
                model = fy + float(np.vdot(g, dx)) + \
                    0.5 * self.lip * float(np.vdot(dx, dx)) * (1.0 + 1e-12)
                if objective.smooth_value(p, x, zx) <= model + 1e-15 * abs(fy):
                    break
                # sufficient decrease failed: L was too small; the trial cost a pass
                self.lip *= 2.0
                self._set_momentum()
                self.backtracks += 1
                touched += ball.retry_work
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
            touched += 2 * ball.pass_ + ball.step_work
        return iters, touched


class FWKernel(_BallKernel):
    """Frank-Wolfe over the ball (Frank & Wolfe 1956; Jaggi, ICML 2013, Algorithm 1; the
    trace-norm LMO of Jaggi & Sulovsky, ICML 2010).

    g = grad f(x) = A^T phi'(A x) / n + mu x; the vertex v = argmin over the ball of <g, v>
    (the penalty's LMO: -r sign(g_j) e_j, j = argmax_i |g_i| on the l1 ball, the first index
    on ties; -theta u_1 v_1^T from g's top singular pair on the trace-norm ball);
    x <- (1 - gamma) x + gamma v. ``step="line_search"`` (default): gamma = argmin_{[0, 1]}
    P(x + gamma (v - x)) exactly (the ball's ``fw_line_search``: on the l1 ball
    ``_ball.fw_line_search``, the smooth hinge along a segment being piecewise quadratic and
    the squared loss quadratic; on the trace-norm ball the squared loss's closed form);
    ``"open_loop"``: gamma_t = 2 / (t + 2), t = 0, 1, ... (Jaggi's step). z = A x is
    maintained (A v is a column of A, or the rank-one product -(A a) w^T), so an iteration
    costs one pass over A (the gradient), that product, the LMO and O(n + d) updates.
    """

    name = "fw"

    def __init__(self, problem: Problem, options: FWOptions | None = None, seed: int = 0,
                 w0: np.ndarray | None = None, svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        options = options or FWOptions()
        self.line_search = options.step == "line_search"
        if self.line_search and problem.loss not in self.ball.line_search_losses:
            raise ConfigError(f"{self.ball.line_search_what}, not {problem.loss!r}; use "
                              f"step=open_loop")
        self.t = 0
        self.z = self.ball.product(self.x)

    def run(self, budget: int) -> tuple[int, int]:
        ball = self.ball
        iters = touched = 0
        while touched < budget:
            x, z = self.x, self.z
            g = ball.loss_gradient(z) + self.mu * x
            atom = ball.lmo(g)
            av, work = ball.atom_product(atom)
            if self.line_search:
                gamma = ball.fw_line_search(x, z, g, atom, av)
            else:
                gamma = 2.0 / (self.t + 2.0)
            x *= 1.0 - gamma
            ball.add_atom(x, gamma, atom)
            z *= 1.0 - gamma
            z += gamma * av
            self.t += 1
            iters += 1
            touched += ball.pass_ + work + ball.fw_work
        return iters, touched


class SVRGKernel(_BallKernel):
    """Projected SVRG over the ball (Johnson & Zhang, NIPS 2013; Prox-SVRG, Xiao & Zhang,
    SIAM J. Optim. 24(4), 2014, Algorithm 1 with R the indicator of the ball; PDBFW's
    "projected SVRG [15]"), uniform sampling.

    Each snapshot x~ gets the full gradient grad f(x~) (two passes over A: A x~ and
    A^T phi'(A x~)), then m inner steps from x_0 = x~: i uniform,
    x_k = Proj(x_{k-1} - eta (grad f_i(x_{k-1}) - grad f_i(x~) + grad f(x~))) (the ball's
    ``svrg_steps``: on the l1 ball ``_ball.svrg_steps``, nnz(a_i) + d a step, the mu x term
    exact; on the trace-norm ball a row product, a rank-one update and a full SVD). The next
    snapshot is x_m (``snapshot="last"``, Johnson & Zhang's option I, default) or the mean
    of x_1..x_m (``"average"``, Prox-SVRG). eta = 0.1 / L_max and m = 2n:
    :func:`svrg_parameters` (Xiao & Zhang Sec. 3.1; Johnson & Zhang
    Sec. 4). An iteration is an inner step.

    **Why the step stays O(d)** (a sparse/lazy step is taken where the source allows one;
    it does not here). Off the support of a_i the unprojected point is
    u_j = (1 - eta mu) x_j + eta (mu x~_j - g~_j), g~ = grad f(x~) minus its mu term: an affine
    map per coordinate that a lazy scheme could apply in closed form, as SPDC's
    (``_erm.spdc_lazy``). The projection onto the l1 ball is what forbids it: Proj(u) =
    soft(u, theta(u)) with theta(u) the root of sum_j max(|u_j| - theta, 0) = r, a
    function of all d coordinates, which all move at every step (the affine map has a
    different constant per coordinate), so theta_k and the step of every coordinate that
    it thresholds need O(d) work each step (Condat's algorithm, expected O(d); no
    incremental form of theta is known for this update). The one case with an exact sparse
    step, an inactive constraint (||u||_1 <= r: Proj = identity), cannot be recognised
    without ||u||_1, itself a sum over every moved coordinate; and projecting only every so
    often changes the iterates (the algorithm projects at every step and its analysis
    needs it), so it is not an implementation of the same method. Neither Johnson & Zhang
    nor Xiao & Zhang give a lazy form for a constraint (Prox-SVRG applies prox_R, here the
    projection, at every inner step).
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
        self.pos = 0  # inner steps done since the last snapshot
        self.fresh = False  # the snapshot of these inner steps is taken
        self.snap: tuple = ()
        self.xsum = np.zeros(self.x.shape if self.average else 0)

    def run(self, budget: int) -> tuple[int, int]:
        ball = self.ball
        iters = touched = 0
        while touched < budget:
            if not self.fresh:
                self.snap = ball.svrg_snapshot(self.x)
                self.xsum[:] = 0.0
                self.fresh = True
                touched += 2 * ball.pass_
            self.x, k, t = ball.svrg_steps(self.x, self.snap, self.eta, self.xsum,
                                           self.m - self.pos, budget - touched)
            self.pos += k
            iters += k
            touched += t
            if self.pos == self.m:
                if self.average:
                    self.x[:] = self.xsum / self.m
                self.pos = 0
                self.fresh = False
        return iters, touched


class _SlidingKernel(_BallKernel):
    """What SCGS and STORC share: the constants and one CGS step."""

    def __init__(self, problem: Problem, seed: int = 0, w0: np.ndarray | None = None,
                 svd: str = DEFAULT_METHOD):
        super().__init__(problem, seed, w0, svd)
        self.lip = smoothness(problem)
        self.diameter = 2.0 * self.r
        self.sigma2, self.lip_f = self.ball.gradient_bounds()
        self.y = self.x.copy()
        self.cndg_iterations = 0  # linear-oracle calls so far
        self.cndg_capped = 0  # CndG calls stopped by the guard, not by V <= eta

    def _step(self, gamma: float, beta: float, eta: float, batch: int,
              snapshot: tuple | None) -> int:
        """z = (1 - gamma) y + gamma x; g = minibatch gradient at z (variance-reduced around
        ``snapshot`` = (A y_0, A^T phi'(A y_0) / n) when given; the exact gradient for a
        batch of n or more: :meth:`_estimate`); x = CndG(g, x, beta, eta) (the ball's
        ``cndg``: ``_ball.cndg`` on the l1 ball, :func:`pdsparse.solvers.trace.trace_cndg` on
        the trace-norm ball);
        y = (1 - gamma) y + gamma x. Returns the work."""
        z = (1.0 - gamma) * self.y + gamma * self.x
        g, work = self._estimate(z, batch, snapshot)
        guard = cndg_guard(beta, eta, self.diameter)
        self.x, calls, swept = self.ball.cndg(g, self.x, beta, eta, guard)
        self.cndg_iterations += calls
        self.cndg_capped += calls >= guard
        self.y = (1.0 - gamma) * self.y + gamma * self.x
        return work + swept

    def solution(self) -> np.ndarray:
        return self.y


class SCGSKernel(_SlidingKernel):
    """Stochastic conditional gradient sliding (Lan & Zhou, SIAM J. Optim. 26(2), 2016,
    Sec. 3), uniform sampling with replacement.

    x_0 = y_0 = w0 (default 0); outer iteration k = 1, 2, ...: z_k = (1 - gamma_k) y_{k-1} +
    gamma_k x_{k-1}; g_k = (1/B_k) sum_{j <= B_k} grad f_{i_j}(z_k); x_k = CndG(g_k, x_{k-1},
    beta_k, eta_k); y_k = (1 - gamma_k) y_{k-1} + gamma_k x_k. The parameters are
    :func:`scgs_parameters`' (their values and the uncertainty about
    them are documented there), with D = 2 r and sigma^2 of the ball's ``gradient_bounds``.
    The iterate is y_k. B_k >= n (the default cap makes the theory's growing B_k reach n
    after a few iterations) uses the exact gradient (:meth:`_step`), so SCGS then runs as
    the deterministic CGS of Lan & Zhou's Sec. 2 with SCGS's parameters. An iteration is an
    outer iteration k; it costs the B_k rows drawn (or a full gradient) plus CndG's linear
    oracles.
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


class STORCKernel(_SlidingKernel):
    """STORC, stochastic variance-reduced conditional gradient sliding (Hazan & Luo, ICML
    2016, Algorithm 2), uniform sampling with replacement.

    w_0 = argmin_{w in ball} <grad f(x), w> at x = 0 (line 3: the LMO's vertex, one pass over
    A; the ball's ``first_vertex``), or w0 when given. Snapshot t = 1, 2, ...: x_0 = y_0 =
    w_{t-1} and grad f(y_0) (two passes); inner k = 1..N_t: z_k = (1 - gamma_k) y_{k-1} +
    gamma_k x_{k-1}; g~_k = grad f(y_0) + (1/m_{t,k}) sum_{j} (grad f_{i_j}(z_k) -
    grad f_{i_j}(y_0)); x_k = CndG(g~_k, x_{k-1}, beta_k, eta_{t,k}); y_k = (1 - gamma_k)
    y_{k-1} + gamma_k x_k; then w_t = y_{N_t}. Parameters:
    :func:`storc_inner` and :func:`storc_parameters` (the strongly convex case when mu > 0,
    the Lipschitz case when mu = 0), with D = 2 r, G of the ball's ``gradient_bounds`` and
    the practical minibatch of 100 by default. The theorem's m_{t,k} = 5600 N_t k
    (``batch=theory``) exceeds n on most data, and a batch >= n is the exact gradient at z_k
    (:meth:`_step`): STORC then runs as restarted CGS with exact gradients. The iterate is
    y_k. An iteration is an inner iteration k.
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
        p, ball = self.problem, self.ball
        iters = touched = 0
        while touched < budget:
            if not self.started:
                self.y, work = ball.first_vertex()
                self.started = True
                touched += work
            if self.k == 0:
                self.t += 1
                self.n_t = storc_inner(self.options, self.t, self.lip, self.mu)
                self.x = self.y.copy()  # x_0 = y_0 = w_{t-1}
                zsnap = np.ascontiguousarray(ball.product(self.y))
                self.snapshot = (zsnap, np.ascontiguousarray(ball.loss_gradient(zsnap)))
                touched += 2 * ball.pass_
            k = self.k + 1
            gamma, beta, eta, batch = storc_parameters(
                self.options, self.t, k, self.n_t, self.lip, self.mu, self.diameter,
                self.lip_f, p.n)
            touched += self._step(gamma, beta, eta, batch, self.snapshot)
            self.batches.append(batch)
            self.k = 0 if k == self.n_t else k
            iters += 1
        return iters, touched
