"""Kernel classes of the DGPD paper's baselines (``_erm.pyx``), sparse or dense data.

DGPD (Lei et al., ICML 2017) compares its method with three coordinate baselines on
P(w) = 1/n sum_j phi_j(a_j^T w) + l2/2 ||w||^2 + l1 ||w||_1 (DGPD's mu = l2, lambda = l1):

* :class:`PrimalRCDKernel`: proximal randomized coordinate descent (Richtarik & Takac 2014)
  over the columns of A; the same arithmetic as Face-Off's ``_rcd.primal_rcd`` (bit-identical
  on sparse data, ``tests/test_erm_kernels.py``), and it also takes dense data;
* :class:`ProxSDCAKernel`: Prox-SDCA (Shalev-Shwartz & Zhang 2014/2016) over the rows, any
  l1 >= 0, w = soft(A^T alpha / n, l1) / l2 formed on the fly;
* :class:`SPDCKernel`: SPDC (Zhang & Xiao 2015/2017), Algorithm 1 with batch size 1,
  parameters of its Theorem 1; on sparse data the primal update is lazy (O(nnz(a_k)) a
  step, the same iterates to rounding), as their efficient implementation for sparse data.

Each class has the interface of :class:`pdsparse.solvers.base._Kernel`: ``run(budget) ->
(iterations, entries touched)``, ``iterates() -> (w, alpha)`` (the pair the duality gap is
evaluated at; both feasible, so P(w) - D(alpha) certifies w) and ``solution() -> w``. The
``*Options`` dataclasses and ``*_factory`` functions are ready for
:data:`pdsparse.solvers.SOLVERS` (``SolverSpec(name, options, factory, ...)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pdsparse.errors import ConfigError
from pdsparse.names import STEP_MULTIPLIERS, step_multiplier
from pdsparse.problem import Problem
from pdsparse.solvers import _erm
from pdsparse.solvers.base import (
    _Kernel,
    _option,
    _Options,
    primal_lipschitz,
    sampling_probabilities,
)

__all__ = ["PrimalRCDKernel", "ProxSDCAKernel", "SPDCKernel", "spdc_parameters",
           "SPDCOptions", "spdc_factory"]


def _soft(v: np.ndarray, t: float) -> np.ndarray:
    """sign(v) max(|v| - t, 0): the same bits as the kernels' soft threshold."""
    return np.where(v > t, v - t, np.where(v < -t, v + t, 0.0))


class PrimalRCDKernel(_Kernel):
    """Proximal randomized coordinate descent on P over the columns of A, sparse or dense.

    Richtarik & Takac (Math. Prog. 144, 2014), the composite method with blocks of size
    one (DGPD's "PrimalRCD"): L_i = beta ||A^i||^2 / n + l2
    (beta the loss's smoothness, 1/gamma), step w_i <- soft(w_i - grad_i f(w) / L_i, l1 / L_i)
    with z = A w maintained (``_erm.primal_rcd``). ``sampling``: "uniform" (default: the
    published UCDC), "importance" (p_i proportional to beta ||A^i||^2 + l2 n, Face-Off
    eq. 14) or "permutation". ``w0``: warm start. On sparse data it gives the same bits as
    :class:`pdsparse.solvers.rcd._PrimalKernel` (tested); dense data is read by strided
    columns of the one C-order copy.
    """

    paired = True  # alpha = alpha(w)

    def __init__(self, problem: Problem, sampling: str = "uniform", seed: int = 0,
                 w0: np.ndarray | None = None, **_):
        super().__init__(problem, sampling, seed)
        p = problem
        p.elastic_net("primal_rcd (DGPD baseline)")
        self.lines = p.lines("cols")
        beta, u = p.smoothness, p.col_sqnorms
        self.lipschitz = primal_lipschitz(p)
        self.sampler = self._sampler(sampling_probabilities(u, p.l2, p.n, beta, sampling))
        if w0 is None:
            self.w, self.z = np.zeros(p.d), np.zeros(p.n)
        else:
            self.w = np.array(w0, dtype=np.float64)
            if self.w.shape != (p.d,):
                raise ValueError(f"w0 of shape {self.w.shape}, expected ({p.d},)")
            self.z = np.ascontiguousarray(p.mat @ self.w, dtype=np.float64)

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        return _erm.primal_rcd(*self.lines, p.b, self.w, self.z, self.lipschitz, p.l2, p.l1,
                               p.loss_id, *self.sampler, self.state, budget)

    def solution(self) -> np.ndarray:
        return self.w


class ProxSDCAKernel(_Kernel):
    """Prox-SDCA (Shalev-Shwartz & Zhang, Math. Prog. 155, 2016, Option I) over the rows of A.

    DGPD's "DualRCD" (it cites SDCA, JMLR 2013, the l1 = 0 case), for any l1 >= 0.

    Keeps alpha and v = A^T alpha / n; the primal w = soft(v, l1) / l2 is formed only at
    the rows' positions inside the kernel, and densely by :meth:`iterates`. The step is the
    exact 1-D maximization of the dual model with curvature ||a_j||^2 / (l2 n)
    (``_erm.prox_sdca``). ``sampling``: "uniform" (default: the published method),
    "importance" (q_j proportional to beta ||a_j||^2 + l2 n, Face-Off eq. 14; Zhao & Zhang,
    ICML 2015) or "permutation". ``alpha0``: warm start (the dual iterate).
    """

    def __init__(self, problem: Problem, sampling: str = "uniform", seed: int = 0,
                 alpha0: np.ndarray | None = None, **_):
        super().__init__(problem, sampling, seed)
        p = problem
        p.elastic_net("prox_sdca")
        self.lines = p.lines("rows")
        beta, sq = p.smoothness, p.row_sqnorms
        self.curvature = sq / (p.l2 * p.n)
        self.sampler = self._sampler(sampling_probabilities(sq, p.l2, p.n, beta, sampling))
        if alpha0 is None:
            self.alpha, self.v = np.zeros(p.n), np.zeros(p.d)
        else:
            self.alpha = np.array(alpha0, dtype=np.float64)
            if self.alpha.shape != (p.n,):
                raise ValueError(f"alpha0 of shape {self.alpha.shape}, expected ({p.n},)")
            self.v = np.ascontiguousarray(p.mat.T @ self.alpha / p.n, dtype=np.float64)

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        return _erm.prox_sdca(*self.lines, p.b, self.alpha, self.v, self.curvature, p.l2,
                              p.l1, p.loss_id, *self.sampler, self.state, budget)

    def solution(self) -> np.ndarray:
        return _soft(self.v, self.problem.l1) / self.problem.l2

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.solution(), self.alpha


def spdc_parameters(problem: Problem, step: str = "theory") -> tuple[float, float, float]:
    """(tau, sigma, theta) of SPDC, Zhang & Xiao, Theorem 1 with batch size m = 1.

    phi_i (1/gamma)-smooth (gamma = 1 / ``problem.smoothness``), g mu-strongly convex
    (mu = l2), R = max_i ||a_i||:
    tau = sqrt(gamma / (n mu)) / (2R), sigma = sqrt(n mu / gamma) / (2R),
    theta = 1 - 1 / (n + R sqrt(n / (mu gamma))). (tau sigma = 1 / (4 R^2).)

    ``step`` = c (:data:`pdsparse.names.STEP_MULTIPLIERS`): the three computed with R / c in
    place of R, R being the one data-dependent constant of Theorem 1 (its proof needs only
    tau sigma R^2 <= 1/4, and R is a bound a user may overestimate): tau and sigma are
    multiplied by c, keeping their ratio gamma / (n mu), and theta follows. c > 1 leaves the
    theorem (tau sigma R^2 = c^2 / 4); ``theory`` (c = 1) is the theorem's, bit for bit.
    """
    n, mu, gamma = problem.n, problem.l2, 1.0 / problem.smoothness
    R = math.sqrt(float(np.max(problem.row_sqnorms)))
    if not R > 0:
        raise ConfigError(f"SPDC: problem {problem.name!r} has an all-zero data matrix")
    R = R / step_multiplier(step)
    tau = math.sqrt(gamma / (n * mu)) / (2.0 * R)
    sigma = math.sqrt(n * mu / gamma) / (2.0 * R)
    theta = 1.0 - 1.0 / (n + R * math.sqrt(n / (mu * gamma)))
    return tau, sigma, theta


class SPDCKernel(_Kernel):
    """SPDC (Zhang & Xiao, ICML 2015 / JMLR 2017), Algorithm 1, batch size 1, as published.

    Uniform sampling of the dual coordinate (the only ``sampling`` accepted), Theorem 1's
    tau, sigma, theta (:func:`spdc_parameters`; ``step`` scales them), x^(0) = xbar^(0) =
    ``w0`` (default 0), y^(0) = -``alpha0`` (default 0), u^(0) = A^T y^(0) / n.

    The primal update of Algorithm 1 moves all d coordinates. On sparse data (CSR) it is
    taken lazily, as Zhang & Xiao's Sec. 5 (JMLR) does for sparse data: a coordinate outside
    the sampled row's support follows a fixed 1-D map until its column is touched, and is
    brought forward in closed form when it is read (``_erm.spdc_lazy``): an iteration costs
    2 nnz(a_k) instead of d + nnz(a_k). Every :meth:`run` ends by forming the current x and
    xbar from the lazy state (``_erm.spdc_catch_up``, O(d), inside the timed call but not
    counted as work), leaving that state as it is, so that chunked runs equal one long run
    exactly, in iterates and in work.
    The iterates are the dense update's to rounding (``tests/test_erm_kernels.py``).
    On sparse data the lazy epoch is an order of magnitude faster than the dense one (measured:
    benchmarks/README.md, "Measurements cited by the code"). Dense data, or ``lazy=False`` (Python
    only, for the comparison), takes the dense O(d) loop of the paper (``_erm.spdc``).

    ``iterates()`` is (x, alpha) with alpha = -y, the SPDC dual iterate (always in the
    conjugate's domain: each y_k is a prox of phi_k^*), and x the SPDC primal iterate. x
    rather than w(alpha) = soft(v, l1) / l2 (:meth:`w_of_alpha`), measured: over 27
    problems (smooth hinge, logistic, squared; n x d in {40 x 25, 300 x 100, 100 x 400};
    (mu, lambda) in {(1, 0.1), (0.1, 0.01), (0.01, 0.001)}), the ratio gap(w(alpha)) /
    gap(x) along the run had a median of about 1 on well-conditioned problems and of 2 to
    17 on the ill-conditioned ones (mu = 0.01), and was never below 0.5. Both gaps certify
    (weak duality); the trace evaluates P(x) - D(alpha).
    """

    def __init__(self, problem: Problem, sampling: str = "uniform", seed: int = 0,
                 w0: np.ndarray | None = None, alpha0: np.ndarray | None = None,
                 step: str = "theory", lazy: bool = True, **_):
        if sampling != "uniform":
            raise ConfigError(f"spdc samples uniformly, as published (got sampling={sampling!r})")
        super().__init__(problem, sampling, seed)
        p = problem
        p.elastic_net("spdc")
        self.lines = p.lines("rows")
        self.lazy = bool(lazy) and not p.dense
        self.tau, self.sigma, self.theta = spdc_parameters(p, step)
        self.x = np.zeros(p.d) if w0 is None else np.array(w0, dtype=np.float64)
        if self.x.shape != (p.d,):
            raise ValueError(f"w0 of shape {self.x.shape}, expected ({p.d},)")
        self.xbar = self.x.copy()
        if alpha0 is None:
            self.alpha, self.v = np.zeros(p.n), np.zeros(p.d)
        else:
            self.alpha = np.array(alpha0, dtype=np.float64)
            if self.alpha.shape != (p.n,):
                raise ValueError(f"alpha0 of shape {self.alpha.shape}, expected ({p.n},)")
            self.v = np.ascontiguousarray(p.mat.T @ self.alpha / p.n, dtype=np.float64)
        # dense kernel: a scattered sparse row (kept zero); lazy: the iteration of each
        # coordinate's stored value and the iteration count
        self.row = np.zeros(0 if self.lazy else p.d)
        self.last = np.zeros(p.d if self.lazy else 0, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)
        self.x_lazy = self.x.copy() if self.lazy else self.x
        self.xbar_lazy = self.xbar.copy() if self.lazy else self.xbar

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        if not self.lazy:
            return _erm.spdc(*self.lines, p.b, self.alpha, self.v, self.x, self.xbar,
                             self.row, self.tau, self.sigma, self.theta, p.l2, p.l1,
                             p.loss_id, self.state, budget)
        iters, touched = _erm.spdc_lazy(*self.lines, p.b, self.alpha, self.v, self.x_lazy,
                                        self.xbar_lazy, self.last, self.clock, self.tau,
                                        self.sigma, self.theta, p.l2, p.l1, p.loss_id,
                                        self.state, budget)
        # x and xbar formed for readers: inside the timed call, not counted as work (a count
        # that grew with the number of calls would move a time-capped run's evaluations)
        _erm.spdc_catch_up(self.v, self.x_lazy, self.xbar_lazy, self.last, self.clock,
                           self.tau, self.theta, p.l2, p.l1, self.x, self.xbar)
        return iters, touched

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.x, self.alpha

    def solution(self) -> np.ndarray:
        return self.x

    def w_of_alpha(self) -> np.ndarray:
        """The primal point paired with the dual iterate, soft(v, l1) / l2 (for diagnostics)."""
        return _soft(self.v, self.problem.l1) / self.problem.l2


# ---------------------------------------------------------------------------------------------
# Registry material (the lead adds the SolverSpec entries to pdsparse.solvers.SOLVERS)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SPDCOptions(_Options):
    """Options of SPDC: uniform sampling and Theorem 1's parameters, as published, scaled by
    ``step`` (:func:`spdc_parameters`)."""

    step: str = _option(
        "theory", STEP_MULTIPLIERS,
        "multiplier c of Theorem 1's tau and sigma (computed with R / c for R = max_i "
        "||a_i||; theta follows): theory (default: c = 1, the theorem's) or x0_1 ... x100",
        late=True)


def spdc_factory(problem: Problem, options: SPDCOptions, seed: int,
                 start: np.ndarray | None = None) -> _Kernel:
    return SPDCKernel(problem, "uniform", seed, w0=start, step=options.step)
