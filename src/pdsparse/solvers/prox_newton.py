"""Proximal Newton with working sets for the elastic net (pure l1 included), sparse A.

The method of skglm's ``ProxNewton`` (Bertrand, Klopfenstein, Massias, Rakotomamonjy,
Salmon et al., "Beyond L1: Faster and Better Sparse Models with skglm", NeurIPS 2022,
Algorithms 1-2), itself proximal Newton (Lee, Sun & Saunders, SIAM J. Optim. 24, 2014) on a
working set. One outer iteration, at w with z = A w:

1. g = A^T (s phi'(z)) / n + l2 w (one pass over A) and each feature's optimality
   violation: |g_j + l1 sign(w_j)| if w_j != 0, else max(|g_j| - l1, 0);
2. the working set: the support of w and the most violating features, max(10, 4 |support|)
   in all (option ``ws=all``: every feature, plain proximal Newton);
3. up to :data:`NEWTON_STEPS` proximal Newton steps on the working set, until its largest
   violation is :data:`WS_TOL` times the whole problem's (skglm's inner loop): each takes
   the working set's gradient (its columns only), minimizes the quadratic model over it by
   coordinate descent (``_prox_newton.pn_inner``: D = s phi''(z) / n fixed, no exp; until
   the model's violation is :data:`WS_TOL` times the working set's target, skglm's
   ``EPS_TOL * tol_in``, or :data:`INNER_PASSES` passes; glmnet's active-set cycles, a
   pass over every coordinate then passes over the nonzero ones, with Anderson
   extrapolation of those (:data:`ANDERSON`); the same steps on the working set's Hessian
   formed once, from its columns or from the rows of A (``ws_hessian``,
   ``ws_hessian_rows``: short rows, n >> d) and ``gram_cd``, glmnet's covariance updates,
   where that costs less than the passes the previous descent took, as on a few long
   columns, n >> d, followed by active-set solves where the sweeps run out of passes; and
   without an l1 term the model's exact minimizer, a linear solve, on working sets of at
   most :data:`EXACT_WS` features) and
   line-searches P along the step (Armijo, t = 1, 1/2, ..., sigma = 1e-4: Lee et al.
   eq. 2.9, within P's own rounding), w += t delta, z += t A delta.

Deterministic (no sampling); the work budget counts entries of A read (the gradient's pass,
the inner passes over the working set's columns) plus n per line-search trial. The losses
with a second derivative: logistic and squared; the smooth hinge with l2 > 0 and no
intercept, on its generalized second derivative (1 on 0 < m < 1, 0 elsewhere: phi' is
piecewise linear, so this is the semismooth Newton method of Qi & Sun, Math. Program. 58,
1993, made globally convergent by the line search; without l2 its model can be flat
along a feature read only by examples outside 0 < m < 1). The gap is certified at
(w, alpha(w)) as for every primal method (:mod:`pdsparse.objective`); example weights are
read (s).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from pdsparse import _products, losses, objective
from pdsparse.errors import ConfigError
from pdsparse.names import PROX_NEWTON_SCREENS, PROX_NEWTON_WS
from pdsparse.problem import Problem
from pdsparse.solvers import _prox_newton
from pdsparse.solvers.base import _Kernel, _option, _Options, primal_start

__all__ = ["ProxNewtonKernel", "ProxNewtonOptions", "prox_newton_factory"]

WS_START = 10
"""The first working set's size (skglm's ``p0``)."""
WS_GROWTH = 4
"""The working set holds this many times the support's features (skglm's and celer's 2).
The support filled half of every working set on the Zipf sets (10, 20, 40, ... 320
features, an outer iteration each, each a full gradient and line search); with 4, CPU s of
``solve(p, "prox_newton")`` on pure l1 (2026-11-29, median of 5, benchmarks/README.md):
zipf 20,000 x 200 at lambda_max / 100 21 -> 17 ms, 5,000 x 5,000 14 -> 10, 500 x 20,000 15
-> 13.5, colon-cancer 5.0 -> 4.1 (3.4 -> 2.5 at lambda_max / 10), leu and duke at
lambda_max / 10 5.3 -> 4.8 and 6.5 -> 5.3, gisette_scale.t 308 -> 288 and 160 -> 143; duke at
lambda_max / 100 7.3 -> 8.6 ms, the one set slower (3: the Zipf sets gained as much, 500 x
20,000 lost 15 %)."""
INNER_PASSES = 50
"""Most passes of the inner coordinate descent per Newton step: skglm's 20 leave a model on
a few hundred correlated dense columns (gisette_scale.t) short at every step, so that more
Newton steps, each a gradient pass, are taken (benchmarks/README.md, sparse_vs_peers)."""
INNER_TOL = 1e-12
"""The inner passes stop once no step moves a coordinate by more than this fraction of the
largest one."""
GRAM_PASSES = 200
"""Most passes of the inner descent on a formed Hessian (``_prox_newton.gram_cd``: each
|ws|^2 operations, no read of A)."""
SUPPORT_ROUNDS = 30
"""Most active-set rounds (a solve on the support, then sweeps) after a descent on a formed
Hessian with an l1 term."""
EXACT_WS = 128
"""Without an l1 term the model on a working set of at most this many features (and the
intercept) is minimized exactly, by a linear solve on its Hessian formed: coordinate descent's
sweeps crawl on an ill-conditioned model (n < d with a small l2: 100,000 passes left a
relative gap of 0.1), and the exact step makes the outer loop Newton's method."""
PAIR_COST = 2
"""A pair of ``ws_hessian_rows`` (a scattered update of Q) against a read of a column (measured
on the Zipf sets: about 1 ns against 0.55)."""
READY = 10.0
"""Pure l1: no evaluation while the largest violation exceeds l1 and this many times tol l1
(:meth:`ProxNewtonKernel.ready`: the gap was at least 0.15 v / l1 there, so a tol above 0.1
needs v above tol l1 / 0.1)."""
READY_SLACK = 1.001
"""``ready``'s margin on the gap it reads against the certificate's (the two differ by the
rounding of the kernel's margins: within 1e-6 of the gap in the tests); 2 let an evaluation
fall between tol and 2 tol, a second evaluation a solve on zipf 5,000 x 5,000."""
ANDERSON = 5
"""The inner descent's Anderson extrapolation: every this many passes over the nonzero
coordinates (``pn_inner``'s ``anderson``; skglm's AndersonCD default)."""
NEWTON_STEPS = 20
"""Most proximal Newton steps on one working set (each: the working set's gradient, the
inner passes, the line search)."""
WS_TOL = 0.3
"""A working set is left once its largest violation is this fraction of the whole
problem's at its choice (skglm's ``EPS_TOL``)."""
ARMIJO = 1e-4
EPS = float(np.finfo(np.float64).eps)
LINE_SEARCH_STEPS = 30
_NO_WEIGHTS = np.empty(0)


@dataclass(frozen=True)
class ProxNewtonOptions(_Options):
    """Options of proximal Newton with working sets."""

    ws: str = _option("grow", PROX_NEWTON_WS,
                      "working set: grow (skglm's: the support and the most violating "
                      "features, max(10, 4 |support|)) or all (every feature: proximal Newton "
                      "without working sets)")
    screen: str = _option("off", PROX_NEWTON_SCREENS,
                          "off, or gap_safe: Gap Safe screening of the features proven zero "
                          "(Ndiaye et al., JMLR 2017; without weights or an intercept; off by "
                          "default: it cost 2-37 % more CPU time on every benchmark cell "
                          "tried, benchmarks/README.md)", late=True)


class ProxNewtonKernel(_Kernel):
    """State of proximal Newton with working sets (module docstring): w, z = A w, and the
    CSC arrays of A."""

    max_chunk_epochs = 20.0
    """The gap falls superlinearly, which the solve's geometric schedule does not predict: it
    let 8 outer iterations pass between two evaluations, 33 once the dual lagged (cod-rna,
    pure l1 at lambda_max / 100: 43-170 passes an iteration); an evaluation, about two
    passes, every 20 costs at most a tenth."""

    def __init__(self, problem: Problem, seed: int = 0, w0: np.ndarray | None = None,
                 ws: str = "grow", screen: str = "off"):
        super().__init__(problem, "uniform", seed)
        p = problem
        pen = p.elastic_net("prox_newton")
        if not p.info.twice_differentiable and (not pen.l2 > 0 or p.intercept):
            # the smooth hinge's phi'' is 0 off 0 < m < 1: a model (and an intercept's
            # curvature) flat there unless l2 > 0 bends every coordinate
            raise ConfigError(f"prox_newton needs a loss with a second derivative (logistic, "
                              f"squared), or l2 > 0 and no intercept with the {p.loss} loss")
        self.l2, self.l1 = pen.l2, pen.l1
        self.C = p.csc
        self.grow = ws == "grow"
        self.s = p.weights
        self.c = p.intercept  # w's last entry is the unpenalized intercept
        # the dual point: alpha(w) with an intercept (balanced onto the dual's constraint,
        # formed in the certificate's passes), else the margins' (:meth:`iterates`)
        self.paired = self.c
        self.w, self.z = primal_start(p, w0)
        # the first full gradient is Problem.loss_gradient_at_zero (computed once, shared
        # with lambda_max, which "auto" asks first): without an intercept, whose zero is not
        # that vector's best intercept
        self._from_zero = w0 is None and not self.c
        self._at_z = None  # (loss term, derivatives, curvatures) at z, once computed
        self._p = None  # P at the iterate, once computed (:meth:`_objective`)
        self._passes = 4  # the last inner descent's passes (a guess before the first)
        self._grad = None  # (full gradient, largest violation, gap or None) at w
        # Gap Safe screening (:meth:`_screen`): without weights or an intercept (the bound's
        # strong concavity and the gap read from the gradient assume both away)
        self.screening = screen == "gap_safe" and self.s is None and not self.c
        self._keep = np.arange(p.d, dtype=np.int32)  # the features not screened
        self._screened = np.zeros(p.d, dtype=bool)
        self._norms = None  # the columns' norms, once screening needs them
        per_row = np.diff(p.csr.indptr).astype(np.int64)
        self._row_pairs = int((per_row * (per_row + 1) // 2).sum())  # all of A's row pairs
        self._pairs = None  # (working set, its rows' pairs), once counted

    def _penalized(self, w: np.ndarray, loss_mean: float) -> float:
        """P(w) from its loss term 1/n sum_i s_i phi(z_i) (the line search's test): the
        penalty's own value added (``Penalty.add_value``, as the objective adds it)."""
        return self.problem.penalty.add_value(loss_mean, w[:-1] if self.c else w)

    def _objective(self) -> float:
        """P at the iterate, from the loss term at its margins: the value its line search
        accepted, computed once otherwise (the readiness checks and the next line search ask
        it again)."""
        if self._p is None:
            self._derivs()
            self._p = self._penalized(self.w, self._at_z[0])
        return self._p

    def working_set(self, grad: np.ndarray) -> np.ndarray:
        """The features of the next inner solve, sorted (int32; the intercept, when there
        is one, is always solved for besides them)."""
        d = self.problem.d
        if not self.grow:
            return np.arange(d, dtype=np.int32)
        viol = np.empty(d)
        _prox_newton.violations(grad[:d], self.w[:d], self.l1, viol)
        support = np.flatnonzero(self.w[:d])
        size = min(self._keep.size, max(WS_START, WS_GROWTH * support.size))
        viol[support] = np.inf  # the support always stays in
        if self._keep.size < d:
            viol[self._screened] = -np.inf  # proven zero: never in
        chosen = np.argpartition(-viol, size - 1)[:size] if size < d else np.arange(d)
        return np.sort(chosen).astype(np.int32)

    def _violations(self, grad: np.ndarray, ws: np.ndarray | None = None) -> float:
        """The largest distance from optimality over the features ``ws`` (None: all of
        them), |g_j + l1 sign(w_j)| on the support, max(|g_j| - l1, 0) off it (g the smooth
        part's gradient; ``_prox_newton.violation``), and the intercept's |g_c|."""
        if ws is None:
            d = self.problem.d
            worst = _prox_newton.violations(grad[:d], self.w[:d], self.l1, np.empty(d))
        else:
            worst = _prox_newton.ws_violation(grad, self.w, ws, self.l1)
        return max(worst, abs(float(grad[-1]))) if self.c else worst

    def _full_gradient(self, deriv: np.ndarray) -> tuple[np.ndarray, int]:
        """The smooth part's gradient (and the intercept's, last, when there is one), 0 on
        the screened features (:meth:`_screen`), and the entries read."""
        coef = self.w[:-1] if self.c else self.w
        C = self.C
        if self._from_zero:  # w = 0 as the solve began: the problem's own gradient there
            self._from_zero = False
            return self.problem.loss_gradient_at_zero.copy(), self.problem.nnz
        if self._keep.size < self.problem.d:
            grad = np.zeros(self.problem.d)
            read = _prox_newton.ws_gradient(C.data, C.indices, C.indptr, self._keep, deriv,
                                            grad)
            grad += self.l2 * coef
        else:
            grad = _products.csc_rmatvec(C.data, C.indices, C.indptr, deriv) + self.l2 * coef
            read = self.problem.nnz
        return (np.append(grad, deriv.sum()) if self.c else grad), read

    def _screen(self, grad: np.ndarray) -> float:
        """Gap Safe screening (Ndiaye, Fercoq, Gramfort & Salmon, "Gap Safe screening rules
        for sparsity enforcing penalties", JMLR 18, 2017, Sec. 3-4): the dual D is 1 / (n
        beta)-strongly concave (phi' beta-Lipschitz), so that the dual optimum lies within
        r = sqrt(2 n beta gap) of the point alpha the gap pairs with w, and a feature with
        |a_j^T alpha| / n + ||a_j|| r / n < l1 is zero at the optimum (its optimality
        condition |a_j^T alpha*| / n <= l1 holds strictly). The gap is the working problem's
        (the features not screened: they alone enter the dual's constraint), read from the
        gradient (``objective.gap_from_gradient``, no pass), raised by 1e-6 of itself and
        1e-12 |P| against the margins' rounding; features nonzero at w are kept. Returns the
        gap."""
        loss_grad = grad - self.l2 * self.w
        gap, p_val = self._gap(grad)
        if not (self.l1 > 0 and math.isfinite(gap)):
            return gap
        if self._norms is None:
            self._norms = _prox_newton.col_norms(self.C.data, self.C.indptr)
        radius = math.sqrt(2.0 * self.problem.smoothness * max(gap * (1 + 1e-6) + 1e-12
                                                               * abs(p_val), 0.0)
                           / self.problem.n)
        scale = self.problem.penalty.dual_scale(-loss_grad)
        keep = self._keep
        drop = (scale * np.abs(loss_grad[keep]) + self._norms[keep] * radius < self.l1) \
            & (self.w[keep] == 0.0)
        if drop.any():
            self._screened[keep[drop]] = True
            self._keep = keep[~drop]
        return gap

    def _derivs(self):
        """s phi'(z) / n and s phi''(z) / n at the iterate: those the last accepted line
        search step left (:meth:`_line_search`), else one pass."""
        if self._at_z is None:
            self._at_z = self._value_derivs(self.z)
        return self._at_z[1], self._at_z[2]

    def _value_derivs(self, z: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(1/n sum_i s_i phi(z_i), s phi'(z) / n, s phi''(z) / n): one pass."""
        p = self.problem
        deriv, curv = np.empty(p.n), np.empty(p.n)
        value = _prox_newton.pn_value_derivs(p.loss_id, z, p.b,
                                             _NO_WEIGHTS if self.s is None else self.s,
                                             float(p.n), deriv, curv)
        return value, deriv, curv

    def ready(self, tol: float) -> bool:
        """Whether the gap at the iterate could be at most ``tol`` |P(w)|: the gap
        ``objective.gap_from_gradient`` reads from the full gradient the next iteration
        takes up (no pass over A: O(d) with l2 > 0, O(n) at the kernel's margins with pure
        l1) within :data:`READY_SLACK` tol |P| + 1e-12 |P| (the two agreed to 1e-6 of the
        gap or 1e-13 |P| in the tests; P from the line search's loss term). Pure l1 first
        asks the free bound: the dual point is alpha(w) scaled by l1 / (l1 + v), v the
        largest violation off the support, and while v > l1 (scaled by
        less than 1/2) the relative gap measured was at least 0.15 (0.28-1.0 on every set of
        ``sparse_vs_peers`` and the tests', benchmarks/README.md): not ready while v > l1
        max(1, :data:`READY` tol). Below, it asks ``objective.gap_lower_bound`` (O(d),
        proven) before the O(n) gap. With an intercept (alpha balanced): always ready."""
        if self._grad is None or self.c:
            return True
        grad, viol, gap = self._grad
        if self.l2 == 0.0 and viol > self.l1 * max(1.0, READY * tol):
            return False
        edge = (tol * READY_SLACK + 1e-12) * abs(self._objective())
        if gap is None:
            if self.l2 == 0.0 and self._gap_bound(grad) > edge:
                return False
            gap = self._gap(grad)[0]
        return gap <= edge

    def _gap_bound(self, grad: np.ndarray) -> float:
        """Pure l1: ``objective.gap_lower_bound`` at the iterate (O(d), no pass over the
        examples), less its rounding: the sum cancels toward the optimum, within (k + 2) eps
        of its terms' magnitudes (k the support's size)."""
        w = self.w
        support = np.flatnonzero(w)
        scale = self.problem.penalty.dual_scale(-grad)
        size = self.l1 * float(np.abs(w[support]).sum()) \
            + scale * float(np.abs(w[support] * grad[support]).sum())
        return objective.gap_lower_bound(self.problem, w, grad) - (support.size + 2) * EPS * size

    def _gap(self, grad: np.ndarray) -> tuple[float, float]:
        """(the gap ``objective.gap_from_gradient`` reads from the full gradient ``grad`` at
        the iterate, P(w)), both from the kernel's margins and line-search values: its
        alpha = -phi'(z) (:meth:`_margins_dual`) and loss term."""
        self._derivs()
        gap = objective.gap_from_gradient(self.problem, self.w, grad - self.l2 * self.w,
                                          self.z, self._margins_dual(), self._at_z[0])
        return gap, self._objective()

    def run(self, budget: int) -> tuple[int, int]:
        """Whole outer iterations until ``budget`` entries are read (never a part of one, so
        that chunked calls give one long call's iterates). Each call ends with the next
        iteration's full gradient and violation at the iterate it leaves (:meth:`ready`),
        which that iteration takes up."""
        p, C = self.problem, self.C
        touched = iters = 0
        while True:
            if self._grad is None:
                deriv, curv = self._derivs()
                grad, read = self._full_gradient(deriv)
                touched += max(read, 1)  # an all-zero A still ends the loop
                gap = self._screen(grad) if self.screening else None
                self._grad = (grad, self._violations(grad), gap)
            if touched >= budget and iters:
                break
            (grad, viol, _), self._grad = self._grad, None
            deriv, curv = self._derivs()
            ws = self.working_set(grad)
            # the working set's subproblem, to a fraction of the whole problem's violation
            # (skglm's EPS_TOL = 0.3)
            target = WS_TOL * viol
            for step in range(NEWTON_STEPS):
                if step:
                    deriv, curv = self._derivs()
                    touched += _prox_newton.ws_gradient(C.data, C.indices, C.indptr, ws,
                                                        deriv, grad)
                    grad[ws] += self.l2 * self.w[ws]
                    if self.c:
                        grad[-1] = deriv.sum()
                if self._violations(grad, ws) <= target:
                    break
                delta, r = np.zeros(self.w.shape[0]), np.zeros(p.n)
                # the Hessian formed (its cheaper builder, then |ws|^2 a pass and one pass
                # over the working set's columns) where that costs less than the passes the
                # last descent took (2 reads an entry each)
                if self.l1 == 0.0 and ws.size <= EXACT_WS:
                    read = self._exact_step(curv, grad, ws, delta, r)
                elif self._hessian_cost(ws)[0] + self._passes * ws.size ** 2 \
                        < 2 * self._passes * self._ws_entries(ws):
                    read, passes = self._gram_descent(curv, grad, ws, delta, r,
                                                      WS_TOL * target)
                    self._passes = min(passes, INNER_PASSES)  # pn_inner's steps too
                else:
                    read, passes = _prox_newton.pn_inner(
                        C.data, C.indices, C.indptr, ws, curv, grad, self.w, delta, r,
                        self.l2, self.l1, INNER_PASSES, INNER_TOL, self.c, WS_TOL * target,
                        ANDERSON)
                    self._passes = passes
                touched += read + self._line_search(grad, ws, delta, r)
            iters += 1
        return iters, touched

    def _ws_entries(self, ws: np.ndarray) -> int:
        """The entries of A in the working set's columns."""
        return int((self.C.indptr[ws + 1] - self.C.indptr[ws]).sum())

    def _hessian_cost(self, ws: np.ndarray) -> tuple[float, bool]:
        """(cost, by rows) of the working set's Hessian by its cheaper builder, in reads of
        A: the columns' (``ws_hessian``, the longest first: a column of rank r read r
        times, once for each column scattered before it and itself, and twice for its own
        scatter) or the rows' (``ws_hessian_rows``: a scan of A and each row's pairs in the
        working set, :data:`PAIR_COST` reads each, counted by the working set's last Newton
        step or, before it, estimated from all of A's pairs scaled by the working set's
        share of the entries, squared)."""
        entries = self._ws_entries(ws)
        lengths = self.C.indptr[ws + 1] - self.C.indptr[ws]
        cols = float(np.arange(3, ws.size + 3) @ lengths[self._column_order(ws)])
        if self._pairs is not None and self._pairs[0] is ws:
            pairs = self._pairs[1]
        else:
            share = entries / max(self.problem.nnz, 1)
            pairs = self._row_pairs * share * share
        rows = self.problem.nnz + PAIR_COST * pairs + entries
        return (rows, True) if rows < cols else (cols, False)

    def _column_order(self, ws: np.ndarray) -> np.ndarray:
        """The working set's positions, longest column first (ties in ws's order): the order
        in which ``ws_hessian`` reads the fewest entries."""
        C = self.C
        return np.argsort(C.indptr[ws] - C.indptr[ws + 1], kind="stable").astype(np.int32)

    def _hessian(self, curv, ws) -> tuple[np.ndarray, int]:
        """``ws_hessian``'s Q (and the work) by the cheaper builder, the columns' taking the
        longest first (the fewest reads; Q within rounding of the rows' builder's, whose
        terms pair the columns in ws's order)."""
        if not self._hessian_cost(ws)[1]:
            C = self.C
            return _prox_newton.ws_hessian(C.data, C.indices, C.indptr, ws, curv, self.c,
                                           self._column_order(ws))
        R = self.problem.csr
        pos = np.full(self.problem.d, -1, dtype=np.int32)
        pos[ws] = np.arange(ws.size, dtype=np.int32)
        Q, scanned, pairs = _prox_newton.ws_hessian_rows(R.data, R.indices, R.indptr, pos,
                                                         ws.size, curv, self.c)
        self._pairs = (ws, pairs)
        return Q, scanned + pairs

    def _gram_descent(self, curv, grad, ws, delta, r, viol_tol) -> tuple[int, int]:
        """``pn_inner``'s descent on the working set's Hessian formed once
        (``_hessian``, ``gram_cd``), then r += A delta. Returns (work, passes)."""
        C = self.C
        Q, read = self._hessian(curv, ws)
        ops, passes = _prox_newton.gram_cd(Q, ws, grad, self.w, delta, self.l2, self.l1,
                                           GRAM_PASSES, INNER_TOL, self.c, viol_tol)
        idx = np.append(ws, delta.shape[0] - 1) if self.c else ws
        if passes == GRAM_PASSES:  # the sweeps crawl: an ill-conditioned model
            ops += self._support_newton(Q, grad, ws, delta)
        read += _prox_newton.ws_margins(C.data, C.indices, C.indptr, ws, delta[idx], self.c, r)
        return read + ops, passes

    def _support_newton(self, Q, grad, ws, delta) -> int:
        """Active-set rounds on the model after a descent that ran out of passes (glmnet's
        and the reference's support Newton step, made safe): the model's minimizer on the
        current support with its signs fixed (a linear solve), reached if it keeps them;
        else the point where the first sign changes along the way, that coordinate dropped,
        and the descent's sweeps again; until the minimizer on a support satisfies the
        model's optimality off it.
        Coordinate sweeps crawl on an ill-conditioned model (n < d with a small l2: 100,000
        passes left a relative gap of 0.1), the solves do not. Returns the work."""
        m, c = ws.size, self.c
        idx = np.append(ws, delta.shape[0] - 1) if c else ws
        g, w = grad[idx], self.w[idx]
        H = Q.copy()
        H[np.arange(m), np.arange(m)] += self.l2
        x = delta[idx].copy()  # the model's variable on the working set (and intercept)
        work = 0
        for _ in range(SUPPORT_ROUNDS):
            v = w + x
            on = v != 0
            if c:
                on[-1] = True
            sign = np.sign(v)
            if c:
                sign[-1] = 0.0
            if not on.any():
                break
            off = ~on
            rhs = -(g[on] + H[np.ix_(on, off)] @ x[off] + self.l1 * sign[on])
            sol = _solve_pos(H[np.ix_(on, on)], rhs)
            if sol is None:
                break
            work += int(on.sum()) ** 3 // 3 + Q.size
            target = x.copy()
            target[on] = sol
            step = target - x
            feat = on.copy()
            if c:
                feat[-1] = False
            # the first sign change along x -> target (a coordinate of the support crossing 0)
            ratio = np.where(feat & (np.sign(w + target) != sign) & (step != 0),
                             -v / np.where(step != 0, step, 1.0), np.inf)
            t = float(ratio.min(initial=np.inf))
            if t >= 1.0:
                x = target
                p = g + H @ x
                if np.all(np.abs(p[:m][off[:m]]) <= self.l1 * (1 + 1e-12)):
                    break  # optimal for the model: done
            else:
                x = x + t * step
                x[np.argmin(ratio)] = -w[np.argmin(ratio)]  # exactly at zero
            delta[idx] = x
            ops, _ = _prox_newton.gram_cd(Q, ws, grad, self.w, delta, self.l2, self.l1,
                                          GRAM_PASSES, INNER_TOL, c, 0.0)
            work += ops
            x = delta[idx].copy()
        delta[idx] = x
        return work

    def _exact_step(self, curv, grad, ws, delta, r) -> int:
        """Without an l1 term: delta = -H^{-1} g on the working set (and the intercept), H its
        Hessian ``ws_hessian`` plus l2 on the features, then r += A delta. Returns the
        work."""
        C, m = self.C, ws.size
        Q, read = self._hessian(curv, ws)
        Q[np.arange(m), np.arange(m)] += self.l2
        idx = np.append(ws, delta.shape[0] - 1) if self.c else ws
        step = _solve_pos(Q, -grad[idx])
        if step is None:  # singular: the least-norm step
            step = np.linalg.lstsq(Q, -grad[idx], rcond=None)[0]
        delta[idx] = step
        read += _prox_newton.ws_margins(C.data, C.indices, C.indptr, ws, step, self.c, r)
        return read + Q.size * idx.size // 3

    def _line_search(self, grad, ws, delta, r) -> int:
        """w += t delta, z += t r for the first t = 1, 1/2, ... with sufficient decrease
        (none: the iterate stays). Each trial's pass gives the loss term and, when accepted,
        the next model's derivatives (:meth:`_derivs`). Returns the work (n per trial)."""
        w, z, l1 = self.w, self.z, self.l1
        p0 = self._objective()
        if self.c:
            ws = np.append(ws, w.shape[0] - 1)
        dw = delta[ws]
        slope = float(grad[ws] @ dw) + l1 * float(np.abs(w[ws] + dw).sum() - np.abs(w[ws]).sum())
        if self.c:  # the intercept is not penalized: take its l1 share back out
            slope -= l1 * float(abs(w[-1] + dw[-1]) - abs(w[-1]))
        if not np.any(dw):
            return 0
        t, work = 1.0, 0
        # a slope that rounding made >= 0 (at the optimum's precision): the full step alone,
        # within P's rounding
        for _ in range(LINE_SEARCH_STEPS if slope < 0 else 1):
            trial = w.copy()
            trial[ws] += t * dw
            zt = z + t * r
            work += self.problem.n
            at = self._value_derivs(zt)
            # P's own rounding (a few ulps) allowed: near the optimum the model's decrease
            # is below what P can resolve, while the step still cuts the violations
            value = self._penalized(trial, at[0])
            if value <= p0 + ARMIJO * t * min(slope, 0.0) + 4 * EPS * abs(p0):
                self.w[:] = trial
                self.z[:] = zt
                self._at_z, self._p = at, value
                break
            t *= 0.5
        return work

    def solution(self) -> np.ndarray:
        return self.w

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        """(w, alpha), alpha = -phi'(z) at the kernel's margins z (A w, kept by its steps
        within rounding of a fresh product; the dual point :meth:`ready` reads the gap at),
        which the certificate prices exactly, P(w) from a fresh A w and D at that alpha
        (pure l1: scaled into the dual's domain), in one pass over A for both products
        where alpha(w) from a fresh A w takes two (:func:`pdsparse.objective.certificate`;
        zipf 5,000 x 5,000: 0.82 -> 0.60 ms, ijcnn1: 3.6 -> 2.4 ms, after
        ``gc.collect()``): the gap as sound, the margins' rounding in D alone. With an
        intercept: alpha(w), balanced onto the dual's constraint (``paired``)."""
        return super().iterates() if self.c else (self.w, self._margins_dual())

    def _margins_dual(self) -> np.ndarray:
        """alpha = -phi'(z) at the kernel's margins, before any scaling into the dual's
        domain (the one dual point :meth:`ready` and the evaluations read): without weights
        -n times the derivatives s phi'(z) / n the line search left, with weights phi'(z)
        recomputed (s may hold zeros)."""
        p = self.problem
        if self.s is None:
            return -p.n * self._derivs()[0]
        return -losses.derivs(p.loss_id, self.z, p.b)


def _solve_pos(H: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """H^{-1} rhs for a symmetric positive (semi)definite H (Cholesky), None where that
    fails or gives a non-finite entry. An ill-conditioned H warns nothing: the line search
    (or the next active-set round) judges the step, not its accuracy."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        try:
            sol = scipy.linalg.solve(H, rhs, assume_a="pos", check_finite=False)
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
            return None
    return sol if np.all(np.isfinite(sol)) else None


def prox_newton_factory(problem: Problem, options: ProxNewtonOptions, seed: int,
                        start: np.ndarray | None = None) -> _Kernel:
    return ProxNewtonKernel(problem, seed, w0=start, ws=options.ws, screen=options.screen)
