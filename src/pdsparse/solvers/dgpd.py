"""DGPD, the Doubly Greedy Primal-Dual coordinate method (Lei, Yen, Wu, Dhillon & Ravikumar,
ICML 2017), as kernels of the solver registry: Algorithm 1 (``dgpd_full``) and Algorithm 2
with active sets (``dgpd``, the method of the paper's experiments).

Problem: the elastic net with a vector variable, P(x) = 1/n sum phi_i(a_i^T x) + mu/2 ||x||^2
+ lambda ||x||_1 (``Problem.l2`` = mu, ``Problem.l1`` = lambda), any house loss (smooth hinge,
logistic, squared), sparse (CSR + CSC) or dense data. The updates, the equation numbers and
the paper's slips are in the docstring of :mod:`pdsparse.solvers._dgpd`.

**Iterates.** ``iterates()`` returns the algorithm's own pair (x, alpha), alpha = -y the
house's dual variable, so the trace's ``nnz_primal`` / ``nnz_dual`` count DGPD's x and y (its
Table 2 counts). The gap P(x) - D(alpha) certifies x: weak duality holds for every pair. Of
the other pairs (``tests/test_dgpd.py::test_gap_pairs``), (x_bar(y), y)
(:func:`pdsparse.objective.w_of_alpha`) gives nearly the same gap, and (x, alpha(x))
(:func:`pdsparse.objective.alpha_of_w`) a smaller one once x has found most of its support
(on the unit-row test problem 30-40 times smaller all along; larger in the first searches on a
badly scaled one): the primal block is solved exactly on A_x while the dual steps are damped
by eta, so x converges ahead of y. Certifying with max(D(alpha), D(alpha(x))) would stop DGPD
runs earlier; it costs one more product with A per evaluation.

**Step size** (``eta`` option): eta = multiplier x the Theorem 4.2 step 2 n^2 mu / ((5 R^2 +
n gamma mu) s), R = max_i ||a_i||, gamma = 1 / smoothness of the house loss (1 for the house's
1-smooth smooth hinge; the paper's own smooth hinge has gamma = 1/2), s = max(1, ||x -
x_bar||_0) (Algorithm 1) or max(1, |A_x|) (Algorithm 2). The kernels also take an absolute
``eta=`` (Python only, not a registry option).

**What Algorithm 2 leaves open** (options ``batch``, ``passes``, ``step``; the defaults are
the algorithm as printed, and tags leave them out): coordinates added per search (Sec. 3:
"the extension to a batch of coordinates is straightforward"), the inner passes' order
(Jacobi as printed: x refreshed once per pass; Gauss-Seidel: after each dual step), and
the s of the step (|A_x| as Algorithm 2 applies Theorem 4.2, eq. (16)'s ||x - x_bar||_0
literally, or none: the dual coordinate's curvature q = R^2 / (n mu), :func:`curvature_q`).
Each is transcribed in ``tests/test_dgpd.py`` and reaches the certified optimum there.

The kernels are deterministic: ``seed`` is accepted for the registry's interface and unused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pdsparse.errors import ConfigError
from pdsparse.names import (
    DGPD_BATCHES,
    DGPD_ETAS,
    DGPD_INNER,
    DGPD_PASSES,
    DGPD_STEPS,
    step_multiplier,
)
from pdsparse.problem import Problem
from pdsparse.solvers import _dgpd
from pdsparse.solvers.base import _int_option, _Kernel, _option, _Options

__all__ = ["DGPDOptions", "DGPDFullOptions", "DGPDKernel", "DGPDFullKernel", "ETA_CHOICES",
           "INNER_CHOICES", "theorem_q_per_s", "curvature_q", "dgpd_factory",
           "dgpd_full_factory"]

ETA_CHOICES = DGPD_ETAS
"""Multipliers of the Theorem 4.2 step size (:func:`pdsparse.names.step_multiplier`)."""
INNER_CHOICES = DGPD_INNER
"""Inner passes over the active sets per search (Sec. 5: 5)."""

_ETA_DOC = ("dual step size eta: the Theorem 4.2 step (theorem, eq. 16 with the sparsity "
            "bound s) or that step times 0.1, 0.3, 2, 3, 5, 10, 100 or 1000 (x0_1 ... x1000)")


@dataclass(frozen=True)
class DGPDOptions(_Options):
    """Options of DGPD Algorithm 2 (active sets; the paper's experiments)."""

    inner: str = _option("5", INNER_CHOICES,
                         "passes of the updates (11), (13) over the active sets per search "
                         "(Sec. 5: 5)")
    eta: str = _option("theorem", ETA_CHOICES, _ETA_DOC)
    # The choices the paper leaves open (defaults: Algorithm 2 as printed).
    batch: str = _int_option(
        "1", DGPD_BATCHES,
        "coordinates each search (10), (12) adds to A_x and to A_y (printed: 1; Sec. 3: "
        "'the extension to a batch is straightforward')", late=True)
    passes: str = _option(
        "jacobi", DGPD_PASSES,
        "inner passes: jacobi (printed: x refreshed by (11) once per pass) or gauss_seidel "
        "(x_k = x_bar_k refreshed on a row's columns after each dual step (13))", late=True)
    step: str = _option(
        "theorem", DGPD_STEPS,
        "s of the dual step: theorem (Theorem 4.2 with s = |A_x|, as Algorithm 2 applies "
        "it), eq16 (s = ||x - x_bar||_0, eq. (16) literally) or curvature (q = R^2/(n mu), "
        "the dual coordinate's curvature; no s); eta multiplies each", late=True)


@dataclass(frozen=True)
class DGPDFullOptions(_Options):
    """Options of DGPD Algorithm 1 (one greedy primal and one greedy dual coordinate)."""

    eta: str = _option("theorem", ETA_CHOICES, _ETA_DOC)


def curvature_q(problem: Problem) -> float:
    """q = n / eta = R^2 / (n mu), R = max_i ||a_i||: the curvature of the dual objective
    along a coordinate of the longest row, times n (the kernels' scaling of (13)); R^2 / mu
    in the paper's summed-loss form. With it, (13) is Prox-SDCA's step on that row."""
    return float(np.max(problem.row_sqnorms)) / (problem.n * problem.l2)


def theorem_q_per_s(problem: Problem) -> float:
    """n / eta per unit of s for the Theorem 4.2 step: (5 R^2 + n gamma mu) / (2 n mu).

    eta = 2 n^2 mu / ((5 R^2 + n gamma mu) s) and the kernels' dual step takes q = n / eta.
    """
    n, mu = problem.n, problem.l2
    r2 = float(np.max(problem.row_sqnorms))
    gamma = 1.0 / problem.smoothness
    return (5.0 * r2 + n * gamma * mu) / (2.0 * n * mu)


class _DGPDBase(_Kernel):
    """Shared set-up: the lines of A, the state arrays and the step size."""

    name = "dgpd"

    def __init__(self, problem: Problem, eta_option: str, seed: int = 0,
                 alpha0: np.ndarray | None = None, eta: float | None = None):
        self.problem = problem
        self.seed = seed  # unused: DGPD is deterministic
        problem.elastic_net(self.name)  # a vector variable and g = mu/2 ||x||^2 + lambda ||x||_1
        if eta_option not in ETA_CHOICES:
            raise ConfigError(f"{self.name}: unknown eta {eta_option!r}; choose one of "
                              f"{list(ETA_CHOICES)}")
        self.rows = problem.lines("rows")
        self.cols = problem.lines("cols")
        n, d = problem.n, problem.d
        self.q_per_s = theorem_q_per_s(problem) / step_multiplier(eta_option)
        if eta is not None and not (np.isfinite(eta) and eta > 0):
            raise ConfigError(f"{self.name}: eta must be a positive number, got {eta!r}")
        self.q_fixed = 0.0 if eta is None else n / float(eta)
        self.x = np.zeros(d)
        self.alpha = np.zeros(n)
        self.info = np.zeros(_dgpd.INFO["size"], dtype=np.int64)
        if alpha0 is not None:
            alpha0 = np.array(alpha0, dtype=np.float64)
            if alpha0.shape != (n,):
                raise ConfigError(f"{self.name}: alpha0 of shape {alpha0.shape}, expected ({n},)")
            self.alpha[:] = alpha0

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, alpha): DGPD's own primal x and dual alpha = -y."""
        return self.x, self.alpha

    def solution(self) -> np.ndarray:
        return self.x

    def counter(self, name: str) -> int:
        """A slot of the kernel's ``info`` (``_dgpd.INFO``): "search", "inner", "j", ..."""
        return int(self.info[_dgpd.INFO[name]])


class DGPDFullKernel(_DGPDBase):
    """DGPD Algorithm 1: per iteration the greedy primal coordinate (5) over [d], the greedy
    dual coordinate (7) over [n], m = A x and u = A^T alpha maintained ((6), (9)).

    ``run(budget)`` returns (iterations t, work), work = n + d + the entries of A^j and a_i
    read per iteration.
    """

    name = "dgpd_full"

    def __init__(self, problem: Problem, options: DGPDFullOptions | None = None, seed: int = 0,
                 alpha0: np.ndarray | None = None, eta: float | None = None):
        options = options or DGPDFullOptions()
        super().__init__(problem, options.eta, seed, alpha0, eta)
        self.m = np.zeros(problem.n)
        self.u = problem.mat.T @ self.alpha if alpha0 is not None else np.zeros(problem.d)

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        return _dgpd.dgpd_full(*self.rows, *self.cols, p.b, self.x, self.alpha, self.m, self.u,
                               p.l2, p.l1, p.loss_id, self.q_per_s, self.q_fixed, self.info,
                               int(budget))


class DGPDKernel(_DGPDBase):
    """DGPD Algorithm 2: searches (10), (12) that add one primal and one dual coordinate to
    the active sets, then ``inner`` passes of (11), (13) over them, then the zeros leave.

    ``run(budget)`` returns (outer iterations, work); ``active()`` the active sets.
    """

    name = "dgpd"

    def __init__(self, problem: Problem, options: DGPDOptions | None = None, seed: int = 0,
                 alpha0: np.ndarray | None = None, eta: float | None = None):
        options = options or DGPDOptions()
        super().__init__(problem, options.eta, seed, alpha0, eta)
        p = problem
        n, d = p.n, p.d
        self.inner = int(options.inner)
        self.batch = int(options.batch)
        self.gauss_seidel = options.passes == "gauss_seidel"
        self.s_rule = _dgpd.S_MOVED if options.step == "eq16" else _dgpd.S_ACTIVE
        if options.step == "curvature" and eta is None:
            self.q_fixed = curvature_q(p) / step_multiplier(options.eta)
        self.top_v, self.top_i = np.zeros(self.batch), np.zeros(self.batch, np.int32)
        # the rows by |b| descending, then by index: the rank of the untouched rows in (12)
        self.order = np.argsort(-np.abs(p.b), kind="stable").astype(np.int32)
        self.m, self.u = np.zeros(n), np.zeros(d)
        self.act_x, self.act_y = np.zeros(d, np.int32), np.zeros(n, np.int32)
        self.in_x, self.in_y = np.zeros(d, np.int8), np.zeros(n, np.int8)
        self.list_d, self.list_n = np.zeros(d, np.int32), np.zeros(n, np.int32)
        self.mark_d, self.mark_n = np.zeros(d, np.int8), np.zeros(n, np.int8)
        support = np.flatnonzero(self.alpha)
        self.act_y[:support.size] = support
        self.in_y[support] = 1
        self.info[_dgpd.INFO["ny"]] = support.size
        if p.dense:
            self.max_row_nnz = d
        else:
            self.max_row_nnz = int(np.max(np.diff(p.csr.indptr)))
        # the active submatrix grows on demand (the kernel asks through info["need"])
        self.rptr = np.zeros(n + 1, np.int32)
        self._grow(max(1024, 4 * self.batch * self.max_row_nnz))

    def _grow(self, need: int) -> None:
        cap = max(int(need), 2 * getattr(self, "ridx", np.empty(0)).shape[0])
        self.ridx, self.rval = np.zeros(cap, np.int32), np.zeros(cap)

    def run(self, budget: int) -> tuple[int, int]:
        p = self.problem
        iters = touched = 0
        need = _dgpd.INFO["need"]
        while True:
            it, t = _dgpd.dgpd(*self.rows, *self.cols, p.b, self.order, self.x, self.alpha,
                               self.m, self.u, self.act_x, self.act_y, self.in_x, self.in_y,
                               self.list_d, self.list_n, self.mark_d, self.mark_n, self.rptr,
                               self.ridx, self.rval, p.l2, p.l1, p.loss_id, self.q_per_s,
                               self.q_fixed, self.inner, self.max_row_nnz, self.info,
                               int(budget) - touched, self.batch, self.gauss_seidel,
                               self.s_rule, self.top_v, self.top_i)
            iters += it
            touched += t
            if not self.info[need]:
                return iters, touched
            self._grow(self.info[need])
            self.info[need] = 0
            if touched >= budget:
                return iters, touched

    def active(self) -> tuple[np.ndarray, np.ndarray]:
        """(A_x, A_y) in the kernel's order (copies)."""
        return (self.act_x[:self.counter("nx")].copy(), self.act_y[:self.counter("ny")].copy())


def dgpd_factory(problem: Problem, options: DGPDOptions, seed: int,
                 start: np.ndarray | None = None) -> DGPDKernel:
    """Registry factory of ``dgpd`` (start: alpha0)."""
    return DGPDKernel(problem, options, seed, alpha0=start)


def dgpd_full_factory(problem: Problem, options: DGPDFullOptions, seed: int,
                      start: np.ndarray | None = None) -> DGPDFullKernel:
    """Registry factory of ``dgpd_full`` (start: alpha0)."""
    return DGPDFullKernel(problem, options, seed, alpha0=start)
