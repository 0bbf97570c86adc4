"""Certified optimal values P* for the figures' suboptimality axes.

The route depends on the penalty (``Reference.method`` records the one that won):

* **pure l2** (the elastic net with l1 = 0, a label vector; Face-Off), two routes checked by
  the duality gap:

  1. dual coordinate ascent with exact 1-D steps (the Newton variant of Face-Off Algorithm
     2) in random-permutation epochs, to a modest gap (``"dual_rcd_newton"``);
  2. for the smooth losses, a primal trust-region Newton-CG polish
     (``scipy.optimize.minimize(method="trust-ncg")``) from the best iterate, with the dual
     certificate alpha(w) = -phi'(A w) (``"trust_ncg"``).

* **an unpenalized intercept, or example weights with l1 > 0**: proximal Newton with
  working sets (``"prox_newton"``, logistic and squared losses, sparse A), else primal RCD
  with importance sampling (``"primal_rcd"``).

* **pure l1** (l2 = 0, sparse A, logistic or squared loss): proximal Newton with working
  sets (``"prox_newton"``), its certificate the rescaled dual point of
  :func:`pdsparse.objective.alpha_of_w`; the first-order route below where it does not
  certify in half the budget.

* **the elastic net with l1 > 0 and l2 > 0** (a label vector or one-vs-rest): Prox-SDCA
  (dual RCD with exact steps, ``"prox_sdca"``); where it has not certified after
  :data:`QUICK_EPOCHS` and ``prox_newton`` applies (sparse A), proximal Newton with working
  sets goes on from its primal iterate to a relative gap of :data:`NEWTON_START_RTOL` and
  Prox-SDCA finishes from Newton's dual point (``"prox_newton_prox_sdca"``); if neither
  certifies, the first-order route below.

* **every other penalty** (the elastic net with l1 > 0 that Prox-SDCA did not certify;
  pure l1, l2 = 0, with the rescaled dual point of :func:`pdsparse.objective.alpha_of_w`;
  the l1 ball, the trace-norm ball) and label matrices: accelerated proximal (projected,
  for the balls) gradient on the primal (FISTA, Beck & Teboulle 2009) with backtracking on
  the Lipschitz constant and the adaptive gradient restart of O'Donoghue & Candes (Found.
  Comput. Math. 2015), ``"apg_restart"``,
  every few iterations evaluated with the exact gap P(w) - D(alpha(w)) of
  :mod:`pdsparse.objective`; once the support (and the signs) of the iterate stop changing,
  for the elastic net and the l1 ball, a Newton polish on the identified support
  (``"newton_support"``): Newton's method on the smooth reduced problem in the nonzero
  entries u with signs s, min f(u) + l2/2 ||u||^2 + l1 s^T u, with the equality constraint
  s^T u = r when the l1 ball is active (a KKT system), curvature phi'' by a central difference
  of the package's one phi' (a generalized Hessian for the piecewise quadratic smooth hinge).
  The polished point is kept only if its certified gap is smaller. The kernels of
  :func:`pdsparse.solvers.solve` are not used on this route.

The returned P* is the best primal value found; ``gap`` is the smallest certified gap
P(w) - D(alpha) over the candidate pairs, so P* - gap <= true optimum <= P*. A problem that
cannot be certified to ``rtol`` raises :class:`CertificationError`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.optimize as so
import scipy.sparse as sp

from pdsparse import losses, objective
from pdsparse.errors import PdsparseError
from pdsparse.penalties import ElasticNet, L1Ball
from pdsparse.problem import Problem
from pdsparse.solvers import get_solver, solve


class CertificationError(PdsparseError):
    """The reference solver could not reach the requested certified gap; ``w``: its best
    primal iterate, when a route has one to go on from."""

    def __init__(self, message: str, w: np.ndarray | None = None):
        super().__init__(message)
        self.w = w


@dataclass
class Reference:
    p_star: float
    d_star: float
    gap: float
    rel_gap: float
    w: np.ndarray
    alpha: np.ndarray
    method: str
    seconds: float


def _newton_polish(problem: Problem, w0: np.ndarray, max_iter: int) -> np.ndarray:
    A, b, l2, cid = problem.mat, problem.b, problem.l2, problem.loss_id
    n = problem.n
    s = problem.weights if problem.weights is not None else 1.0  # example weights
    eps = 1e-7

    def fun(w):
        z = A @ w
        val = (s * losses.values(cid, z, b)).mean() + 0.5 * l2 * (w @ w)
        grad = A.T @ (s * losses.derivs(cid, z, b)) / n + l2 * w
        return val, grad

    def curvature(w):
        # phi'' by a central difference of the one phi' the package has (no second copy of
        # the loss); exact for the squared loss, O(eps^2) for logistic.
        z = A @ w
        return s * (losses.derivs(cid, z + eps, b) - losses.derivs(cid, z - eps, b)) / (2 * eps)

    state = {"w": None, "h": None}

    def hessp(w, p):
        if state["w"] is None or not np.array_equal(state["w"], w):
            state["w"], state["h"] = w.copy(), curvature(w)
        return A.T @ (state["h"] * (A @ p)) / n + l2 * p

    res = so.minimize(fun, w0, jac=True, hessp=hessp, method="trust-ncg",
                      options={"gtol": 1e-14, "maxiter": max_iter})
    return res.x


PROGRESS_SECONDS = 10.0
"""Wall seconds between two progress lines of :func:`reference_solution` (a full-size
reference runs for CPU minutes; a run job prints a line per evaluation)."""


class _Progress:
    """Progress lines of one reference: the gap and the time so far, at most one line every
    :data:`PROGRESS_SECONDS` wall seconds (evaluations come every few epochs), plus each
    route's start and the step that may take long (the trust-region Newton polish)."""

    def __init__(self, say: Callable[[str], None] | None, rtol: float, t0: float):
        self.say, self.rtol, self.t0, self.every = say, rtol, t0, PROGRESS_SECONDS
        self.last = -math.inf

    def line(self, text: str) -> None:
        if self.say is not None:
            self.say(f"{time.perf_counter() - self.t0:.1f} s: {text}")
            self.last = time.perf_counter()

    def gap(self, route: str, where: str, p_val: float, gap: float) -> None:
        """A line with the gap, if ``every`` seconds passed since the last line."""
        if self.say is None or time.perf_counter() - self.last < self.every:
            return
        rel = gap / abs(p_val) if math.isfinite(p_val) and p_val else math.inf
        self.line(f"{route} {where}: gap {gap:.3e}, relative {rel:.3e} (target "
                  f"{self.rtol:g}), P {p_val:.10g}")


def reference_solution(problem: Problem, rtol: float = 1e-10, max_epochs: float = 20000,
                       max_seconds: float = 1800.0, seed: int = 0,
                       progress: Callable[[str], None] | None = None) -> Reference:
    """P* of ``problem`` certified by a duality gap of at most ``rtol * |P*|``.

    ``max_epochs`` bounds the passes over A (dual RCD epochs; on the first-order route two
    per iteration), ``max_seconds`` the time; ``seed`` seeds dual RCD. ``progress`` is
    called with one line (the route, the certified gap and the wall time so far) at most
    every :data:`PROGRESS_SECONDS` and at each route's start; ``pdsparse reference`` prints
    them on stderr, the job's log in the workflow.
    """
    t0 = time.perf_counter()
    log = _Progress(progress, rtol, t0)
    pen = problem.penalty
    newton = get_solver("prox_newton").supports(problem)
    if problem.intercept or (problem.weights is not None and pen.l1 > 0):
        # an intercept, or example weights with an l1 part: proximal Newton (logistic and
        # squared) and primal RCD fit them for any elastic net (pure l1 too); dual RCD,
        # Prox-SDCA and the first-order route do not
        ref = _newton_first(problem, rtol, max_epochs, max_seconds, seed, t0, log) \
            if newton else None
        return ref or _by_solver(problem, rtol, max_epochs, max_seconds, seed, t0, log,
                                 method="primal_rcd")
    if isinstance(pen, ElasticNet) and pen.l1 == 0.0 and not problem.matrix:
        return _by_solver(problem, rtol, max_epochs, max_seconds, seed, t0, log)
    if isinstance(pen, ElasticNet) and pen.l2 > 0:
        # l1 > 0 or one-vs-rest: Prox-SDCA converges linearly (mu > 0) at the cost of about
        # three products with A per epoch, far fewer than accelerated gradient needs when n
        # exceeds the condition number (DGPD's sets); its gap certifies, else fall back
        alpha0 = None
        if pen.l1 > 0 and newton:
            try:  # the easy problems certify within a few epochs: no Newton start
                return _by_solver(problem, rtol, min(max_epochs, QUICK_EPOCHS),
                                  max_seconds / 2, seed, t0, log, eval_every=10.0)
            except CertificationError as exc:
                alpha0 = _newton_start(problem, exc.w, max_epochs, max_seconds, log)
        try:
            return _by_solver(problem, rtol, max_epochs, max_seconds / 2, seed, t0, log,
                              alpha0=alpha0)
        except CertificationError as exc:
            log.line(f"not certified ({exc}); accelerated proximal gradient")
    elif isinstance(pen, ElasticNet) and newton:
        # pure l1: proximal Newton's working sets, far ahead of the first-order route where
        # the support is a few of many correlated features (benchmarks/README.md)
        ref = _newton_first(problem, rtol, max_epochs, max_seconds, seed, t0, log)
        if ref is not None:
            return ref
    return _first_order(problem, rtol, max_epochs, max_seconds, t0, log)


def _newton_first(problem, rtol, max_epochs, max_seconds, seed, t0,
                  log: _Progress) -> Reference | None:
    """``prox_newton``'s certified optimum in half the budget, or None (said in the log)."""
    try:
        return _by_solver(problem, rtol, max_epochs, max_seconds / 2, seed, t0, log,
                          method="prox_newton")
    except CertificationError as exc:
        log.line(f"not certified ({exc}); the next route")
        return None


QUICK_EPOCHS = 100
"""Prox-SDCA's epochs on an elastic net with l1 > 0 before the Newton start
(:func:`_newton_start`): the problems it certifies within them gain nothing from one."""
NEWTON_START_RTOL = 1e-3
"""The relative gap to which proximal Newton takes an elastic net with l1 > 0 before
Prox-SDCA goes on from its dual point (:func:`_newton_start`)."""
NEWTON_START_SHARE = 0.05
"""The share of the reference's epochs and seconds proximal Newton may spend."""


def _newton_start(problem: Problem, w0: np.ndarray | None, max_epochs: float,
                  max_seconds: float, log: _Progress) -> np.ndarray:
    """A warm start for Prox-SDCA on an elastic net with l1 > 0 that it did not certify in
    :data:`QUICK_EPOCHS`: alpha(w) of proximal Newton with working sets (from Prox-SDCA's
    primal iterate ``w0``) at a relative gap of :data:`NEWTON_START_RTOL`. Its working sets
    find the support of a sparse optimum in a few passes where each Prox-SDCA epoch updates
    every example, while its own final phase crawls where the model is ill-conditioned
    (l2 = mu / n tiny: the coordinate sweeps run out of passes), the linear phase Prox-SDCA
    finishes. Measured in benchmarks/README.md ("Certified references")."""
    log.line(f"prox_newton to relative gap {NEWTON_START_RTOL:g}, then Prox-SDCA from its "
             "dual point")
    res = solve(problem, "prox_newton", tol=NEWTON_START_RTOL, w0=w0,
                max_epochs=NEWTON_START_SHARE * max_epochs,
                max_seconds=NEWTON_START_SHARE * max_seconds)
    return res.alpha


def _by_solver(problem, rtol, max_epochs, max_seconds, seed, t0,
               log: _Progress | None = None, method: str = "dual_rcd",
               alpha0: np.ndarray | None = None,
               eval_every: float | None = None) -> Reference:
    """P* by the registered solver ``method`` (dual RCD: its Newton steps, Prox-SDCA with
    l1 > 0, from ``alpha0`` if given), certified by its gap; for a smooth loss without l1
    or intercept a trust-region Newton polish where it stopped short."""
    log = log or _Progress(None, rtol, t0)
    label = (method if method in ("primal_rcd", "prox_newton")
             else "dual_rcd_newton" if problem.l1 == 0.0
             else "prox_sdca" if alpha0 is None else "prox_newton_prox_sdca")
    log.line(f"{problem.name or 'problem'} {problem.shape[0]} x {problem.shape[1]}: {label} "
             f"to relative gap {rtol:g} (at most {max_epochs:g} epochs, {max_seconds / 2:g} s)")

    def show(row: dict) -> None:
        log.gap(label, f"epoch {row['epoch']:.0f}", row["primal"], row["gap"])

    options = {"primal_rcd": {"sampling": "importance"}, "prox_newton": {}}.get(
        method, {"sampling": "importance", "dual_step": "newton"})
    res = solve(problem, method, options=options, seed=seed,
                max_epochs=max_epochs, max_seconds=max_seconds / 2, tol=rtol,
                eval_every=eval_every or max(1.0, min(10.0, max_epochs / 100)), progress=show,
                alpha0=alpha0)
    candidates = [(res.w, res.alpha, label)]
    best = _best(problem, candidates)
    if best[2] > rtol * abs(best[0]) and problem.info.twice_differentiable \
            and problem.l1 == 0.0 and not problem.intercept:
        log.line(f"{label} stopped ({res.status}) at gap {best[2]:.3e}; trust-region Newton "
                 "polish")
        w = _newton_polish(problem, res.w, max_iter=200)
        candidates.append((w, objective.alpha_of_w(problem, w), "trust_ncg"))
        best = _best(problem, candidates)
    p_star, d_star, gap, method = best
    rel = gap / abs(p_star) if p_star else math.inf
    w, alpha = next((c[0], c[1]) for c in candidates if c[2] == method)
    if not (gap <= rtol * abs(p_star)):
        raise CertificationError(
            f"problem {problem.name!r}: reference gap {gap:.3e} (relative {rel:.3e}) "
            f"did not reach {rtol:g}; raise max_epochs/max_seconds", w=w)
    return Reference(p_star, d_star, gap, rel, w, alpha, method, time.perf_counter() - t0)


def _best(problem: Problem, candidates) -> tuple[float, float, float, str]:
    """Best primal value, best dual value, and their (certified) gap."""
    prim = [(objective.primal(problem, w), m) for w, _, m in candidates]
    duals = [objective.dual(problem, a) for _, a, _ in candidates]
    p_star, method = min(prim)
    d_star = max(duals)
    return p_star, d_star, max(p_star - d_star, 0.0), method


# ------------------------------------------------------------------------------------------
# First-order route: accelerated proximal gradient with restarts, Newton on the support
# ------------------------------------------------------------------------------------------

_NEWTON_MAX_SUPPORT = 2500
"""Largest support (entries of W) the dense Newton polish takes on."""


class _Smooth:
    """f(W) = 1/n sum phi(A W, B) on the flattened margins, through pdsparse.losses."""

    def __init__(self, problem: Problem):
        A = problem.mat
        self.A, self.AT = A, (A.T if problem.dense else A.T.tocsr())
        self.b = np.ascontiguousarray(problem.b).reshape(-1)
        self.n, self.cid = problem.n, problem.loss_id

    def value(self, z: np.ndarray) -> float:
        return float(losses.values(self.cid, np.ascontiguousarray(z).reshape(-1), self.b).sum()
                     / self.n)

    def deriv(self, z: np.ndarray) -> np.ndarray:
        zf = np.ascontiguousarray(z).reshape(-1)
        return losses.derivs(self.cid, zf, self.b).reshape(z.shape)

    def grad(self, z: np.ndarray) -> np.ndarray:
        return self.AT @ self.deriv(z) / self.n

    def curvature(self, z: np.ndarray, eps: float = 1e-7) -> np.ndarray:
        """phi'' by a central difference of phi' (exact for squared loss, the generalized
        second derivative of the smooth hinge away from its kinks)."""
        return (self.deriv(z + eps) - self.deriv(z - eps)) / (2 * eps)


def _lipschitz_bounds(problem: Problem) -> tuple[float, float]:
    """(estimate, upper bound) of the Lipschitz constant beta ||A||_2^2 / n of grad f."""
    A = problem.mat
    beta, n = problem.smoothness, problem.n
    absA = abs(A)
    upper = min(float(problem.row_sqnorms.sum()),
                float(absA.sum(axis=0).max()) * float(absA.sum(axis=1).max()))
    v = np.random.default_rng(0).standard_normal(problem.d)
    sigma2 = 0.0
    for _ in range(30):
        u = A.T @ (A @ v)
        norm = float(np.linalg.norm(u))
        if norm == 0.0:
            break
        sigma2 = norm / float(np.linalg.norm(v))
        v = u / norm
    return max(beta * sigma2 / n, 1e-300), max(beta * upper / n, 1e-300)


def _first_order(problem: Problem, rtol: float, max_epochs: float, max_seconds: float,
                 t0: float, log: _Progress | None = None) -> Reference:
    log = log or _Progress(None, rtol, t0)
    pen = problem.penalty
    fn = _Smooth(problem)
    L, L_up = _lipschitz_bounds(problem)
    max_iter = max(1, int(max_epochs // 2))
    newton_ok = isinstance(pen, ElasticNet | L1Ball)

    x = np.zeros(problem.var_shape)
    z_x = np.zeros(problem.dual_shape)
    y, z_y, t = x, z_x, 1.0
    best: tuple[float, float, float, np.ndarray, str] | None = None  # P, D, gap, w, method

    def consider(w, method):
        nonlocal best
        p_val, d_val, gap = objective.evaluate(problem, w)
        gap = max(gap, 0.0)  # below zero only by rounding
        if math.isfinite(p_val) and (best is None or gap < best[2]):
            best = (p_val, d_val, gap, w.copy(), method)
        return gap

    def certified() -> bool:
        return best is not None and best[2] <= rtol * abs(best[0])

    consider(x, "apg_restart")
    log.line(f"{problem.name or 'problem'} {problem.shape[0]} x {problem.shape[1]}: "
             f"accelerated proximal gradient to relative gap {rtol:g} (at most {max_iter} "
             "iterations)")
    it, next_check = 0, 10
    last_pattern: bytes | None = None
    polished: set[bytes] = set()
    while not certified():
        if it >= max_iter or time.perf_counter() - t0 > max_seconds:
            break
        f_y = fn.value(z_y)
        g = fn.grad(z_y)
        while True:  # backtracking: the quadratic upper bound must hold at the new point
            x_new = pen.prox(y - g / L, 1.0 / L)
            z_new = problem.mat @ x_new
            f_new = fn.value(z_new)
            diff = (x_new - y).reshape(-1)
            bound = f_y + float(g.reshape(-1) @ diff) + 0.5 * L * float(diff @ diff)
            if L >= L_up or f_new <= bound + 1e-15 * abs(f_y):
                break
            L = min(2.0 * L, L_up)
        # gradient restart (O'Donoghue & Candes, eq. (13)): drop the momentum when the step
        # and the momentum direction disagree
        if float((y - x_new).reshape(-1) @ (x_new - x).reshape(-1)) > 0:
            t, y, z_y = 1.0, x_new, z_new
        else:
            t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            mom = (t - 1.0) / t_new
            y = x_new + mom * (x_new - x)
            z_y = z_new + mom * (z_new - z_x)
            t = t_new
        x, z_x = x_new, z_new
        L = max(0.9 * L, 1e-12 * L_up)
        it += 1
        if it < next_check and it < max_iter:
            continue
        next_check = it + max(10, it // 20)
        consider(x, "apg_restart")
        if best is not None:
            log.gap("apg_restart", f"iteration {it}", best[0], best[2])
        if certified() or not newton_ok:
            continue
        flat = x.reshape(-1)
        pattern = np.sign(flat).astype(np.int8).tobytes()
        if pattern == last_pattern and pattern not in polished:
            polished.add(pattern)
            w = _support_newton(problem, fn, x)
            if w is not None:
                consider(w, "newton_support")
                if best is not None and best[4] == "newton_support" and not certified():
                    # continue the accelerated iterations from the better point
                    x, z_x = best[3].copy(), problem.mat @ best[3]
                    y, z_y, t = x, z_x, 1.0
        last_pattern = pattern

    assert best is not None
    p_star, d_star, gap, w, method = best
    rel = gap / abs(p_star) if p_star else math.inf
    if not (gap <= rtol * abs(p_star)):
        raise CertificationError(
            f"problem {problem.name!r} ({problem.penalty!r}): reference gap {gap:.3e} "
            f"(relative {rel:.3e}) did not reach {rtol:g} after {it} iterations; raise "
            "max_epochs/max_seconds")
    alpha = objective.alpha_of_w(problem, w)
    return Reference(p_star, d_star, gap, rel, w, alpha, method, time.perf_counter() - t0)


def _support_newton(problem: Problem, fn: _Smooth, w0: np.ndarray,
                    max_iter: int = 40) -> np.ndarray | None:
    """Newton on the support of ``w0`` (elastic net or l1 ball; vector or matrix variable).

    The reduced problem in the nonzero entries u (signs s) is smooth:
    min f(u) + l2/2 ||u||^2 + l1 s^T u, plus s^T u = r when the l1 ball is active
    (||w0||_1 within 1e-8 of r). f's Hessian is block diagonal over the label columns:
    A_{S_c}^T diag(phi''(z_c)) A_{S_c} / n. Returns None when the support is too large or
    the Hessian is singular; the caller keeps the result only if its certified gap is smaller.
    """
    pen = problem.penalty
    d, k, n = problem.d, problem.k, problem.n
    flat0 = w0.reshape(-1)
    S = np.flatnonzero(flat0)
    if S.size == 0 or S.size > _NEWTON_MAX_SUPPORT:
        return None
    feats, cols = np.divmod(S, k)
    s = np.sign(flat0[S])
    l2, l1 = pen.l2, pen.l1
    r = pen.radius
    active = isinstance(pen, L1Ball) and float(np.abs(flat0).sum()) >= r * (1 - 1e-8)
    blocks = []
    for c in range(k):
        pos = np.flatnonzero(cols == c)
        if pos.size:
            cols_c = (problem.mat[:, feats[pos]] if problem.dense
                      else problem.csc[:, feats[pos]].tocsr())
            blocks.append((c, pos, cols_c))

    def margins(u):
        Z = np.zeros((n, k))
        for c, pos, Ac in blocks:
            Z[:, c] = Ac @ u[pos]
        return Z.reshape(problem.dual_shape)

    def h(u, Z):
        return fn.value(Z) + 0.5 * l2 * float(u @ u) + l1 * float(s @ u)

    u = flat0[S].copy()
    if active:
        u *= r / float(s @ u)
    Z = margins(u)
    val = h(u, Z)
    for _ in range(max_iter):
        D1 = fn.deriv(Z).reshape(n, k)
        D2 = fn.curvature(Z).reshape(n, k)
        grad = l2 * u + l1 * s
        H = l2 * np.eye(S.size)
        for c, pos, Ac in blocks:
            grad[pos] += Ac.T @ D1[:, c] / n
            if sp.issparse(Ac):
                Hc = (Ac.T @ Ac.multiply(D2[:, c][:, None]).tocsr()).toarray() / n
            else:
                Hc = Ac.T @ (Ac * D2[:, c][:, None]) / n
            H[np.ix_(pos, pos)] += Hc
        try:
            cho = sla.cho_factor(H)
        except (np.linalg.LinAlgError, ValueError):
            return None
        x1 = sla.cho_solve(cho, grad)
        if active:
            x2 = sla.cho_solve(cho, s)
            nu = -((r - float(s @ u)) + float(s @ x1)) / float(s @ x2)
            step = -(x1 + nu * x2)
        else:
            step = -x1
        slope = float(grad @ step)
        if not np.all(np.isfinite(step)):
            return None
        if float(np.abs(step).max()) <= 1e-15 * (1.0 + float(np.abs(u).max())):
            break
        tau = 1.0
        while True:
            u_new = u + tau * step
            Z_new = margins(u_new)
            v_new = h(u_new, Z_new)
            if v_new <= val + 1e-4 * tau * min(slope, 0.0) + 4e-16 * abs(val) or tau < 1e-10:
                break
            tau *= 0.5
        if tau < 1e-10:
            break
        u, Z, val = u_new, Z_new, v_new
    w = np.zeros(d * k)
    w[S] = u
    if isinstance(pen, L1Ball):
        norm = float(np.abs(w).sum())
        if norm > r:
            w *= r / norm
    return w.reshape(problem.var_shape)


def reference_record(problem: Problem, ref: Reference, dataset: str, tag: str) -> dict:
    """The one row of a reference file: the problem (``tag`` of its
    :class:`~pdsparse.problem.ProblemKey`, data set, loss, penalty) and the certificate."""
    n, d = problem.n, problem.d
    return {
        **_row(problem, ref, dataset, tag, n, d),
        **(_ball_columns(problem, ref.w) if problem.penalty.bounded else {}),
        **_supports(problem, ref),
    }


def _supports(problem: Problem, ref: Reference) -> dict:
    """The certified optimum's supports, summed over label columns: nonzeros of x* and of
    alpha(x*) = -phi'(A x*) (the dual optimum paired with x*; exactly 0 where the smooth
    hinge's margin is at least 1). What DGPD's Table 2 is compared with, beside DGPD's own
    iterates at the end of its run."""
    from pdsparse.objective import alpha_of_w

    return {"optimum_nnz_primal": int(np.count_nonzero(ref.w)),
            "optimum_nnz_dual": int(np.count_nonzero(alpha_of_w(problem, ref.w)))}


ACTIVE_RTOL = 1e-6
"""A ball is active at x* when its norm is within this relative distance of the radius: the
certified x* is within about sqrt(2 rtol P* / mu) of the optimum, far inside 1e-6 r here."""


def _ball_columns(problem: Problem, w: np.ndarray) -> dict:
    """What PDBFW's Table 2 and captions report of x* on a ball: its norm, whether the
    constraint is active, and its size: nonzeros (l1 ball) or rank (trace-norm ball, singular
    values above 1e-9 of the largest)."""
    norm = float(problem.penalty.norm(w))
    if np.ndim(w) == 2 and not isinstance(problem.penalty, L1Ball):
        sv = np.linalg.svd(w, compute_uv=False)
        size = int(np.sum(sv > 1e-9 * sv[0])) if sv.size and sv[0] > 0 else 0
    else:
        size = int(np.count_nonzero(w))
    return {"solution_norm": norm, "solution_nnz": size,
            "active": bool(norm >= problem.radius * (1 - ACTIVE_RTOL))}


def _row(problem: Problem, ref: Reference, dataset: str, tag: str, n: int, d: int) -> dict:
    return {
        "problem": tag,
        "dataset": dataset,
        "loss": problem.loss,
        "penalty": problem.penalty.name,
        "l2": float(problem.l2),
        "l1": float(problem.l1),
        "radius": float(problem.radius),
        "p_star": float(ref.p_star),
        "d_star": float(ref.d_star),
        "gap": float(ref.gap),
        "rel_gap": float(ref.rel_gap),
        "n": int(n),
        "d": int(d),
        "nnz": int(problem.nnz),
        "method": str(ref.method),
        "seconds": float(ref.seconds),
    }
