"""Solver front end: set up a kernel, run it chunk by chunk, record the trace.

The kernels (``_rcd.pyx``) only advance the state; this module times the
kernel calls alone, evaluates P, D and the gap outside the timer through
:mod:`pdsparse.objective`, and decides when to stop (DESIGN.md, "Solver").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pdsparse import _rcd, objective
from pdsparse._sampling import build_alias, seed_state
from pdsparse.errors import ConfigError
from pdsparse.names import DUAL_STEPS, METHODS, SAMPLINGS
from pdsparse.problem import Problem

_MODES = {"uniform": 0, "importance": 1, "permutation": 2}

TRACE_COLUMNS = ["iteration", "epoch", "time_s", "primal", "dual", "gap",
                 "nnz_primal", "nnz_dual", "status"]


@dataclass
class Result:
    """What a run returns: the trace (one row per evaluation) and the final iterates."""

    trace: pd.DataFrame
    w: np.ndarray
    alpha: np.ndarray
    status: str
    setup_s: float = 0.0
    """Wall time of the setup (CSC copy, norms, sampling tables), outside ``time_s``."""
    params: dict = field(default_factory=dict)


def sampling_probabilities(sqnorms: np.ndarray, l2: float, n: int, beta: float,
                           sampling: str) -> np.ndarray:
    """Serial sampling probabilities: uniform, or importance sampling, Face-Off eq. (14).

    Importance: p_i proportional to beta u_i + lambda n (primal, u = column norms^2)
    or q_j proportional to beta v_j + lambda n (dual, v = row norms^2). A random
    permutation visits each coordinate once per epoch: its marginal is uniform.
    """
    m = sqnorms.shape[0]
    if sampling in ("uniform", "permutation"):
        return np.full(m, 1.0 / m)
    if sampling == "importance":
        wts = beta * sqnorms + l2 * n
        return wts / wts.sum()
    raise ConfigError(f"unknown sampling {sampling!r}; choose one of {list(SAMPLINGS)}")


class _Kernel:
    """State of one run: the iterates, the random state and the kernel's fixed arguments.

    ``run(budget)`` advances it; ``solution()`` is the primal iterate w (no extra work);
    ``iterates()`` is the pair (w, alpha) the duality gap is evaluated at, which for
    primal RCD costs a product with A to form alpha(w) = -phi'(A w).
    """

    def __init__(self, problem: Problem, sampling: str, seed: int):
        self.problem = problem
        self.state = seed_state(seed)
        self.sampling = sampling

    def _sampler(self, probs: np.ndarray) -> tuple:
        """Kernel arguments (mode, prob, alias, perm, perm_pos) for this sampling."""
        m = probs.shape[0]
        prob, alias = np.zeros(1), np.zeros(1, dtype=np.int32)
        perm, pos = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64)
        if self.sampling == "importance":
            prob, alias = build_alias(probs)
        elif self.sampling == "permutation":
            # pos = m: the first draw shuffles, so the first epoch is random too
            perm, pos = np.arange(m, dtype=np.int32), np.array([m], dtype=np.int64)
        return (_MODES[self.sampling], prob, alias, perm, pos)


class _PrimalKernel(_Kernel):
    def __init__(self, problem, sampling, seed, w0=None, **_):
        super().__init__(problem, sampling, seed)
        p = problem
        self.C = p.csc
        beta, u = p.smoothness, p.col_sqnorms
        self.lipschitz = beta * u / p.n + p.l2
        self.sampler = self._sampler(sampling_probabilities(u, p.l2, p.n, beta, sampling))
        if w0 is None:
            self.w, self.z = np.zeros(p.d), np.zeros(p.n)
        else:
            self.w = np.array(w0, dtype=np.float64)
            self.z = p.csr @ self.w

    def run(self, budget: int) -> tuple[int, int]:
        C = self.C
        return _rcd.primal_rcd(C.data, C.indices, C.indptr, self.problem.b, self.w, self.z,
                               self.lipschitz, self.problem.l2, self.problem.l1,
                               self.problem.loss_id, *self.sampler, self.state, budget)

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.w, objective.alpha_of_w(self.problem, self.w)

    def solution(self) -> np.ndarray:
        return self.w


class _DualKernel(_Kernel):
    def __init__(self, problem, sampling, seed, alpha0=None, dual_step="fixed", **_):
        super().__init__(problem, sampling, seed)
        p = problem
        if p.l1:
            raise ConfigError("dual_rcd handles l2 regularization only (l1 must be 0)")
        if dual_step not in DUAL_STEPS:
            raise ConfigError(f"unknown dual_step {dual_step!r}; choose one of {list(DUAL_STEPS)}")
        self.newton = dual_step == "newton"
        beta, v = p.smoothness, p.row_sqnorms
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
                             budget)

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        return self.w, self.alpha

    def solution(self) -> np.ndarray:
        return self.w


def make_kernel(problem: Problem, method: str, sampling: str = "importance",
                dual_step: str = "fixed", seed: int = 0, w0=None, alpha0=None) -> _Kernel:
    """Set up a kernel without running it (benchmarks time ``kernel.run`` directly)."""
    if sampling not in SAMPLINGS:
        raise ConfigError(f"unknown sampling {sampling!r}; choose one of {list(SAMPLINGS)}")
    if method == "primal_rcd":
        return _PrimalKernel(problem, sampling, seed, w0=w0)
    if method == "dual_rcd":
        return _DualKernel(problem, sampling, seed, alpha0=alpha0, dual_step=dual_step)
    raise ConfigError(f"unknown method {method!r}; choose one of {list(METHODS)}")


def solve(problem: Problem, method: str, sampling: str = "importance",
          dual_step: str = "fixed", seed: int = 0, max_epochs: float = 100.0,
          max_seconds: float = math.inf, tol: float = 0.0, eval_every: float = 1.0,
          w0=None, alpha0=None) -> Result:
    """Run primal or dual RCD and record its trace.

    Parameters
    ----------
    method : ``"primal_rcd"`` (Face-Off Algorithm 1) or ``"dual_rcd"`` (Algorithm 2).
    sampling : ``"uniform"``, ``"importance"`` (eq. 14) or ``"permutation"`` (a fresh
        random order every epoch; outside the paper's theory, as in LIBLINEAR).
    dual_step : dual RCD only: ``"fixed"`` (the Section 7 step with Quartz's 1/q_j
        scaling), ``"newton"`` (exact maximization, Algorithm 2) or ``"printed"`` (the
        Section 7 step exactly as printed, without 1/q_j; kept to test the paper's figures).
    max_epochs : stop after this many passes (nonzeros touched / nnz(A)).
    max_seconds : stop after this much kernel time.
    tol : stop once the duality gap is at most ``tol * |P(w)|`` (0 disables).
    eval_every : epochs between two trace rows.
    """
    if not (eval_every > 0 and max_epochs >= 0):
        raise ConfigError("eval_every must be > 0 and max_epochs >= 0")
    t0 = time.perf_counter()
    kernel = make_kernel(problem, method, sampling, dual_step, seed, w0, alpha0)
    setup_s = time.perf_counter() - t0
    nnz = max(problem.nnz, 1)
    chunk = max(1, int(math.ceil(eval_every * nnz)))
    limit = int(math.ceil(max_epochs * nnz))
    rows = []
    iters = touched = 0
    elapsed = 0.0
    status = ""
    while True:
        w, alpha = kernel.iterates()
        p_val = objective.primal(problem, w)
        d_val = objective.dual(problem, alpha)
        gap = p_val - d_val
        rows.append((iters, touched / nnz, elapsed, p_val, d_val, gap,
                     int(np.count_nonzero(w)), int(np.count_nonzero(alpha)), ""))
        if not np.isfinite(p_val):
            status = "diverged"
        elif tol > 0 and gap <= tol * abs(p_val):
            status = "converged"
        elif touched >= limit:
            status = "max_epochs"
        elif elapsed >= max_seconds:
            status = "max_time"
        if status:
            break
        budget = min(chunk, limit - touched)
        t = time.perf_counter()
        k_iters, k_touched = kernel.run(budget)
        elapsed += time.perf_counter() - t
        iters += k_iters
        touched += k_touched
    trace = pd.DataFrame(rows, columns=TRACE_COLUMNS)
    trace.loc[trace.index[-1], "status"] = status
    w, alpha = kernel.iterates()
    params = dict(method=method, sampling=sampling,
                  dual_step=dual_step if method == "dual_rcd" else "",
                  seed=seed, max_epochs=max_epochs, max_seconds=max_seconds, tol=tol,
                  eval_every=eval_every)
    return Result(trace, w.copy(), alpha.copy(), status, setup_s, params)
