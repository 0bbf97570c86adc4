"""Face-Off's randomized coordinate methods (Csiba & Richtarik, "Coordinate Descent Face-Off:
Primal or Dual?"): primal RCD (Algorithm 1) on the columns of A and dual RCD (Algorithm 2,
SDCA) on its rows, with their options; the kernels are ``_rcd.pyx``. On dense data, or with
an l1 term, the factories hand over to the ERM kernels of :mod:`pdsparse.solvers.erm` (the
same methods through BLAS; Prox-SDCA).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.names import DUAL_STEPS, SAMPLINGS
from pdsparse.problem import Problem
from pdsparse.solvers import _rcd
from pdsparse.solvers.base import (
    _Kernel,
    _option,
    _Options,
    primal_lipschitz,
    primal_start,
    sampling_probabilities,
)
from pdsparse.solvers.erm import PrimalRCDKernel, ProxSDCAKernel

__all__ = ["PrimalRCDOptions", "DualRCDOptions", "primal_factory", "dual_factory"]


_SAMPLING_DOC = ("coordinate sampling: uniform, importance (Face-Off eq. 14) or permutation "
                 "(a fresh random order every epoch, as LIBLINEAR; outside the paper's theory)")


@dataclass(frozen=True)
class PrimalRCDOptions(_Options):
    """Options of primal RCD (Face-Off Algorithm 1)."""

    sampling: str = _option("importance", SAMPLINGS, _SAMPLING_DOC)


@dataclass(frozen=True)
class DualRCDOptions(_Options):
    """Options of dual RCD (Face-Off Algorithm 2, SDCA).

    The defaults are LIBLINEAR's (a fresh random order every epoch, the exact 1-D step),
    not the paper's Section 7 setting (importance sampling, the fixed step; the Face-Off
    plan names it): to a certified relative gap of 1e-6 they take 3-7 epochs where the
    paper's setting takes 5-16 (medians 5.6 and 12) on the 15 sets of
    ``benchmarks/solve_vs_liblinear.py`` (benchmarks/README.md, "`solve_vs_liblinear.py`")."""

    sampling: str = _option("permutation", SAMPLINGS, _SAMPLING_DOC)
    dual_step: str = _option(
        "newton", DUAL_STEPS,
        "fixed (the Section 7 step with Quartz's 1/q_j scaling), newton (exact 1-D "
        "maximization, Algorithm 2) or printed (the Section 7 step exactly as printed)")


class _PrimalKernel(_Kernel):
    paired = True  # alpha = alpha(w)

    def __init__(self, problem, sampling, seed, w0=None, **_):
        super().__init__(problem, sampling, seed)
        p = problem
        p.elastic_net("primal_rcd")  # the kernel's prox step is the elastic net's
        self.C = p.csc
        beta, u = p.smoothness, p.weighted_col_sqnorms
        self.lipschitz = primal_lipschitz(p)
        self.sampler = self._sampler(sampling_probabilities(u, p.l2, p.n, beta, sampling))
        # the intercept's Lipschitz constant beta sum_j s_j / n (the weights have mean 1)
        self.intercept_lipschitz = beta if p.intercept else 0.0
        self.since = np.zeros(1, dtype=np.int64)  # draws since the intercept's last step
        self.w, self.z = primal_start(p, w0)

    def run(self, budget: int) -> tuple[int, int]:
        C = self.C
        return _rcd.primal_rcd(C.data, C.indices, C.indptr, self.problem.b, self.w, self.z,
                               self.lipschitz, self.problem.l2, self.problem.l1,
                               self.problem.loss_id, *self.sampler, self.state, budget,
                               self.problem.weights, self.intercept_lipschitz, self.since)

    def solution(self) -> np.ndarray:
        return self.w


class _DualKernel(_Kernel):
    def __init__(self, problem, sampling, seed, alpha0=None, *, dual_step, **_):
        super().__init__(problem, sampling, seed)
        p = problem
        if p.elastic_net("dual_rcd").l1:
            raise ConfigError("dual_rcd handles l2 regularization only (l1 must be 0)")
        if dual_step not in DUAL_STEPS:
            raise ConfigError(f"unknown dual_step {dual_step!r}; choose one of {list(DUAL_STEPS)}")
        self.newton = dual_step == "newton"
        if p.weights is not None and not self.newton:
            raise ConfigError("dual_rcd with sample weights takes the exact step: give "
                              f"dual_step=newton (got {dual_step!r})")
        beta, v = p.smoothness, p.row_sqnorms
        if p.weights is not None:  # the loss s_j phi_j: curvature and importance scale by s_j
            v = p.weights * v
        q = sampling_probabilities(v, p.l2, p.n, beta, sampling)
        self.sampler = self._sampler(q)
        self.curvature = v / (p.l2 * p.n)
        # Quartz: theta = min_l q_l lambda n / (beta v_l + lambda n); step_j = theta / q_j.
        # "printed" keeps eta = theta for every j, the step as Face-Off Sec. 7 prints it
        # (sign corrected): 1/q_j times smaller, i.e. n times under uniform sampling.
        theta = float(np.min(q * p.l2 * p.n / (beta * v + p.l2 * p.n)))
        self.fixed_step = np.full(p.n, theta) if dual_step == "printed" else theta / q
        if alpha0 is None:
            self.alpha, self.w = np.zeros(p.n), np.zeros(p.d)  # w(0) = 0, no product needed
        else:
            self.alpha = np.array(alpha0, dtype=np.float64)
            self.w = objective.w_of_alpha(p, self.alpha)

    def run(self, budget: int) -> tuple[int, int]:
        R = self.problem.csr
        return _rcd.dual_rcd(R.data, R.indices, R.indptr, self.problem.b, self.alpha, self.w,
                             self.curvature, self.fixed_step, self.problem.l2,
                             self.problem.loss_id, self.newton, *self.sampler, self.state,
                             budget, self.problem.weights)

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.w, self.alpha

    def solution(self) -> np.ndarray:
        return self.w


def primal_factory(problem: Problem, options: PrimalRCDOptions, seed: int,
                    start: np.ndarray | None = None) -> _Kernel:
    if problem.dense:  # the same method over dense columns (_erm.pyx, through BLAS)
        return PrimalRCDKernel(problem, options.sampling, seed, w0=start)
    return _PrimalKernel(problem, options.sampling, seed, w0=start)


def dual_factory(problem: Problem, options: DualRCDOptions, seed: int,
                  start: np.ndarray | None = None) -> _Kernel:
    if problem.elastic_net("dual_rcd").l1 or problem.dense:
        # Prox-SDCA (Shalev-Shwartz & Zhang): dual RCD with the exact step for l1 >= 0, on
        # sparse or dense rows; with l1 = 0 it is dual_step=newton (tests/test_erm_kernels.py)
        if options.dual_step != "newton":
            raise ConfigError(
                f"dual_rcd with l1 > 0 or dense data is Prox-SDCA, which takes the exact step: "
                f"give dual_step=newton (got {options.dual_step!r})")
        return ProxSDCAKernel(problem, options.sampling, seed, alpha0=start)
    return _DualKernel(problem, options.sampling, seed, alpha0=start,
                       dual_step=options.dual_step)

