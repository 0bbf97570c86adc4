"""Penalties g of P(W) = 1/n sum_i phi_i(a_i^T W) + g(W): elastic net and two norm balls.

Three penalties cover the three papers (W is a vector (d,) or a matrix (d, k)):

* ``ElasticNet(l2, l1)``: g(W) = l2/2 ||W||^2 + l1 ||W||_1 (Face-Off: l1 = 0; DGPD: mu = l2,
  lambda = l1).
* ``L1Ball(radius, l2)``: g(W) = l2/2 ||W||^2 + indicator{||W||_1 <= r} (PDBFW eq. (5),
  C = l1 ball; entrywise on a matrix).
* ``TraceBall(radius, l2)``: g(X) = l2/2 ||X||_F^2 + indicator{||X||_* <= r} (PDBFW eq. (17),
  trace-norm ball; matrices only).

Each offers what the solvers and :mod:`pdsparse.objective` need:

* ``value(W)``: g(W), +inf outside a ball (up to a relative tolerance ``FEASIBILITY_RTOL``
  for rounding in iterates that sit on the sphere);
* ``conjugate(V)``: the Fenchel conjugate g*(V) = sup_W <V, W> - g(W);
* ``grad_conjugate(V)``: the maximizer argmax_W <V, W> - g(W), which by Fenchel-Young is a
  (sub)gradient of g* at V and the primal point paired with a dual point (W(alpha) =
  grad g*(A^T alpha / n));
* ``prox(V, step)``: argmin_W step g(W) + ||W - V||^2 / 2;
* ``lmo(G)``: argmin over the ball of <G, S> (Frank-Wolfe's linear minimization oracle);
* ``params()``, ``tag()``: the numbers, and a path-safe tag made of them.

Conjugates (all standard; see e.g. Beck, *First-Order Methods in Optimization*, 2017, ch. 4
and 6, for the support functions and projections):

* elastic net, l2 > 0: g*(V) = ||soft(V, l1)||^2 / (2 l2), grad g*(V) = soft(V, l1) / l2,
  soft(v, t) = sign(v) max(|v| - t, 0);
* a ball C of radius r with l2 = 0: g* is C's support function, sigma_C(V) = r ||V||_inf for
  the l1 ball and r ||V||_2 (the spectral norm, largest singular value) for the trace ball,
  the dual norms; the maximizer is a vertex, r sign(V_i) e_i resp. r u_1 v_1^T;
* a ball with l2 > 0: sup_{W in C} <V, W> - l2/2 ||W||^2 = sup_{W in C} ||V||^2/(2 l2) -
  l2/2 ||W - V/l2||^2 is attained at W* = Proj_C(V / l2), and g*(V) = <V, W*> - l2/2 ||W*||^2.

Projections: onto the l1 ball by the sort-based method of Duchi, Shalev-Shwartz, Singer &
Chandra (ICML 2008, Fig. 1), O(d log d), sorting only the entries above the lower bound
(||v||_1 - r)/d of the threshold; onto the trace-norm ball by a full SVD and the projection of
the singular values onto {s >= 0, sum s <= r} (the l1-ball projection of a nonnegative vector;
PDBFW Sec. 4.4 and ../shared/ALGORITHMS.md). The prox of step g for a ball is
Proj_C(V / (1 + step l2)).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from pdsparse.errors import ConfigError

FEASIBILITY_RTOL = 1e-9
"""``value`` accepts ||W|| <= r (1 + FEASIBILITY_RTOL): iterates built as convex combinations
of points on the sphere overshoot it by rounding (a few ulps per step)."""

_PER_N = re.compile(r"^\s*([0-9.eE+-]+)\s*/\s*n\s*$")

# Matrices with both sides above this use a Lanczos top singular pair (scipy svds) in the LMO.
_DENSE_SVD_MAX = 200


def resolve_value(spec: float | int | str, n: int, what: str = "regularization") -> float:
    """A number, or ``"c/n"`` resolved for ``n`` examples; must be finite and >= 0."""
    if isinstance(spec, bool):
        raise ConfigError(f"{what} must be a number or 'c/n', got {spec!r}")
    if isinstance(spec, int | float | np.integer | np.floating):
        value = float(spec)
    else:
        m = _PER_N.match(str(spec))
        if not m:
            raise ConfigError(f"{what} must be a number or 'c/n' (e.g. '1/n'), got {spec!r}")
        try:
            value = float(m.group(1)) / n
        except ValueError:
            raise ConfigError(f"cannot read the constant in {spec!r}") from None
    if not np.isfinite(value) or value < 0:
        raise ConfigError(f"{what} must be finite and >= 0, got {spec!r} -> {value}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ConfigError(f"{what} must be a number, got {value!r} (resolve 'c/n' settings "
                          "with pdsparse.penalties.resolve_penalty)")
    return float(value)


def _num_tag(x: float) -> str:
    """Shortest round-trip text of a number, path-safe: 300.0 -> '300', 1e+20 -> '1e20'."""
    text = repr(float(x)).replace("e+", "e")
    return text[:-2] if text.endswith(".0") else text


def _soft(v: np.ndarray, t: float) -> np.ndarray:
    """Soft thresholding sign(v) max(|v| - t, 0); ``v`` itself when t = 0."""
    if t == 0.0:
        return v
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto {x : ||x||_1 <= radius} (entrywise for a matrix).

    Duchi et al. (2008), Fig. 1: with u the entries of |v| in decreasing order,
    rho = max{j : u_j - (sum_{i<=j} u_i - r) / j > 0}, theta = (sum_{i<=rho} u_i - r) / rho and
    x = sign(v) max(|v| - theta, 0). Since theta >= (||v||_1 - r) / d, only the entries above
    that bound are sorted. Always returns a new array.
    """
    v = np.asarray(v, dtype=np.float64)
    a = np.abs(v.reshape(-1))
    total = float(a.sum())
    if total <= radius:
        return v.copy()
    cand = a[a > (total - radius) / a.size]
    u = np.sort(cand)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, u.size + 1)
    rho = int(np.flatnonzero(u - (css - radius) / j > 0)[-1])
    theta = (css[rho] - radius) / (rho + 1)
    return (np.sign(v) * np.maximum(np.abs(v) - theta, 0.0))


def _require_matrix(W: np.ndarray, who: str) -> np.ndarray:
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ConfigError(f"{who} needs a matrix variable (d, k), got an array of shape "
                          f"{W.shape}; use a label matrix B (n, k)")
    return W


def top_singular_pair(G: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(sigma_1, u_1, v_1) of a matrix: dense SVD when a side is at most 200, otherwise
    Lanczos (``scipy.sparse.linalg.svds``, k = 1, a fixed start vector, so deterministic)."""
    G = np.asarray(G, dtype=np.float64)
    if min(G.shape) <= _DENSE_SVD_MAX:
        U, s, Vt = np.linalg.svd(G, full_matrices=False)
        return float(s[0]), U[:, 0].copy(), Vt[0].copy()
    from scipy.sparse.linalg import svds

    v0 = np.ones(min(G.shape)) / math.sqrt(min(G.shape))
    U, s, Vt = svds(G, k=1, v0=v0, tol=0)
    return float(s[0]), U[:, 0].copy(), Vt[0].copy()


PURE_L1_RTOL = 1e-12
"""Pure l1's dual domain ||V||_inf <= l1 is tested with this relative slack, for the rounding
of the rescaled point (the bound it certifies is then that of l1 (1 + 1e-12), within
1e-12 P* of the problem's)."""


class Penalty(ABC):
    """g(W) = l2/2 ||W||^2 + (an l1 term, or the indicator of a ball).

    Subclasses are frozen dataclasses whose fields are the parameters. ``l2`` is the strong
    convexity modulus; ``l1`` the l1 weight (0 for the balls); ``radius`` the ball radius
    (inf for the elastic net, whose domain is unbounded).
    """

    name: ClassVar[str]
    bounded: ClassVar[bool]
    """The domain is a ball: ``lmo`` exists and ``value`` is +inf outside it."""
    matrix_only: ClassVar[bool] = False
    l2: float
    l1: float
    radius: float

    def value(self, W: np.ndarray) -> float:
        """g(W)."""
        return float(self.add_value(0.0, W))

    @abstractmethod
    def add_value(self, total: float, W: np.ndarray) -> float:
        """``total + g(W)``, the terms of g added to ``total`` one at a time (the order of the
        floating-point additions in P is part of the trace contract)."""

    @abstractmethod
    def conjugate(self, V: np.ndarray) -> float:
        """g*(V) = sup_W <V, W> - g(W)."""

    @abstractmethod
    def grad_conjugate(self, V: np.ndarray) -> np.ndarray:
        """argmax_W <V, W> - g(W) (a subgradient of g* at V)."""

    @abstractmethod
    def prox(self, V: np.ndarray, step: float) -> np.ndarray:
        """argmin_W step g(W) + ||W - V||^2 / 2."""

    def dual_scale(self, V: np.ndarray) -> float:
        """The factor s in (0, 1] that brings the dual point alpha with A^T alpha / n = V into
        the domain of g* (1: g* is finite everywhere, as it is for every penalty with
        l2 > 0 or a ball). :func:`pdsparse.objective.alpha_of_w` applies it."""
        return 1.0

    def lmo(self, G: np.ndarray) -> np.ndarray:
        """argmin over the domain of <G, S>."""
        raise ConfigError(f"{self.name} has an unbounded domain: no linear minimization "
                          "oracle (Frank-Wolfe needs a ball penalty)")

    def params(self) -> dict[str, float]:
        """The parameters by name, e.g. ``{"l2": 0.01, "l1": 0.001}``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    @abstractmethod
    def tag(self) -> str:
        """A short stable tag of the numbers, safe in file names."""

    def check_variable(self, W: np.ndarray) -> None:
        """Raise if ``W`` has a shape this penalty cannot take."""
        if self.matrix_only:
            _require_matrix(W, type(self).__name__)


@dataclass(frozen=True, init=False)
class ElasticNet(Penalty):
    """g(W) = l2/2 ||W||^2 + l1 ||W||_1, l2 > 0 and l1 >= 0, or pure l1: l2 = 0, l1 > 0.

    g*(V) = ||soft(V, l1)||^2 / (2 l2), grad g*(V) = soft(V, l1) / l2 (Face-Off eq. (3) for
    l1 = 0; the prox-SDCA pairing of Shalev-Shwartz & Zhang for l1 > 0);
    prox_{step g}(V) = soft(V, step l1) / (1 + step l2).

    Pure l1 (l2 = 0): g* is the indicator of {||V||_inf <= l1}, so a dual point must lie in
    that set; :meth:`dual_scale` shrinks alpha(w) = -phi'(A w) into it (the rescaled dual
    point of Gap Safe screening, Ndiaye et al., JMLR 2017, and of celer), which keeps
    phi*(-alpha) finite for every loss here (its domain is an interval containing 0). The
    membership test allows a relative 1e-12 for the rounding of the rescaled V; no primal
    point follows from a dual one (:meth:`grad_conjugate` refuses), so only primal solvers
    take it (the registry's ``needs_strong_convexity``).
    """

    name: ClassVar[str] = "elastic_net"
    bounded: ClassVar[bool] = False
    l2: float
    l1: float = 0.0

    def __init__(self, l2: float, l1: float = 0.0):
        object.__setattr__(self, "l2", _number(l2, "l2"))
        object.__setattr__(self, "l1", _number(l1, "l1"))
        if not (np.isfinite(self.l1) and self.l1 >= 0):
            raise ConfigError(f"l1 must be >= 0, got {l1!r}")
        if not (np.isfinite(self.l2) and (self.l2 > 0 or (self.l2 == 0 and self.l1 > 0))):
            raise ConfigError(f"l2 must be > 0 (strong convexity), or 0 with l1 > 0 (pure "
                              f"l1), got l2={l2!r}, l1={l1!r}")

    @property
    def radius(self) -> float:
        """inf: the domain is unbounded."""
        return math.inf

    @property
    def alpha_ratio(self) -> tuple[float, float]:
        """(alpha, r) with l1 ||w||_1 + l2/2 ||w||^2 = alpha (r ||w||_1 + (1 - r)/2 ||w||^2):
        the strength and mix of scikit-learn's ``ElasticNet`` and ``SGDClassifier``, skglm's
        and celer's penalties and :mod:`pdsparse.estimators` (r = 0: l2 alone, 1: pure l1)."""
        alpha = self.l1 + self.l2
        return alpha, self.l1 / alpha

    def add_value(self, total, W):
        # the same operations, in the same order, as the Face-Off objective always used
        w = np.asarray(W, dtype=np.float64).reshape(-1)
        total += 0.5 * self.l2 * float(w @ w)
        if self.l1:
            total += self.l1 * float(np.abs(w).sum())
        return total

    def conjugate(self, V):
        if self.l2 == 0.0:  # the indicator of the l_inf ball of radius l1
            inside = np.abs(np.asarray(V, dtype=np.float64)).max(initial=0.0) <= (
                self.l1 * (1.0 + PURE_L1_RTOL))
            return 0.0 if inside else math.inf
        v = _soft(np.asarray(V, dtype=np.float64), self.l1).reshape(-1)
        return float(v @ v) / (2.0 * self.l2)

    def grad_conjugate(self, V):
        if self.l2 == 0.0:
            raise ConfigError("pure l1 (l2 = 0): g* is an indicator, no primal point follows "
                              "from a dual one; solve it with a primal method")
        return _soft(np.asarray(V, dtype=np.float64), self.l1) / self.l2

    def dual_scale(self, V):
        if self.l2 > 0.0:
            return 1.0
        top = float(np.abs(np.asarray(V, dtype=np.float64)).max(initial=0.0))
        return 1.0 if top <= self.l1 else self.l1 / top

    def prox(self, V, step):
        return _soft(np.asarray(V, dtype=np.float64), step * self.l1) / (
            1.0 + step * self.l2)

    def tag(self) -> str:
        return f"enet-l2_{_num_tag(self.l2)}-l1_{_num_tag(self.l1)}"


@dataclass(frozen=True, init=False)
class _Ball(Penalty):
    radius: float
    l2: float = 0.0
    bounded: ClassVar[bool] = True
    short: ClassVar[str]

    def __init__(self, radius: float, l2: float = 0.0):
        object.__setattr__(self, "radius", _number(radius, "radius"))
        object.__setattr__(self, "l2", _number(l2, "l2"))
        if not (np.isfinite(self.radius) and self.radius > 0):
            raise ConfigError(f"{type(self).__name__}: radius must be finite and > 0, "
                              f"got {radius!r}")
        if not (np.isfinite(self.l2) and self.l2 >= 0):
            raise ConfigError(f"{type(self).__name__}: l2 must be finite and >= 0, got {l2!r}")

    @property
    def l1(self) -> float:
        """0: a ball penalty has no l1 term."""
        return 0.0

    def tag(self) -> str:
        return f"{self.short}-r{_num_tag(self.radius)}-l2_{_num_tag(self.l2)}"

    @abstractmethod
    def norm(self, W: np.ndarray) -> float:
        """The norm whose ball is the domain."""

    @abstractmethod
    def project(self, V: np.ndarray) -> np.ndarray:
        """Euclidean projection onto the ball (a new array)."""

    def add_value(self, total, W):
        W = np.asarray(W, dtype=np.float64)
        if self.norm(W) > self.radius * (1.0 + FEASIBILITY_RTOL):
            return math.inf
        if self.l2:
            w = W.reshape(-1)
            total += 0.5 * self.l2 * float(w @ w)
        return total

    def prox(self, V, step):
        V = np.asarray(V, dtype=np.float64)
        return self.project(V / (1.0 + step * self.l2) if self.l2 else V)

    def grad_conjugate(self, V):
        V = np.asarray(V, dtype=np.float64)
        if self.l2:
            return self.project(V / self.l2)
        return self.lmo(-V)

    def conjugate(self, V):
        V = np.asarray(V, dtype=np.float64)
        W = self.project(V / self.l2)
        v, w = V.reshape(-1), W.reshape(-1)
        return float(v @ w) - 0.5 * self.l2 * float(w @ w)


@dataclass(frozen=True, init=False)
class L1Ball(_Ball):
    """g(W) = l2/2 ||W||^2 + indicator{||W||_1 <= r} (entrywise l1 norm on a matrix).

    PDBFW eq. (5) with C the l1 ball. g*(V) = r ||V||_inf for l2 = 0 (support function of
    the l1 ball, i.e. the dual norm); for l2 > 0 g*(V) = <V, W*> - l2/2 ||W*||^2 with
    W* = Proj(V / l2) = grad g*(V). LMO: -r sign(G_i) e_i at i = argmax |G_i|.
    """

    name: ClassVar[str] = "l1_ball"
    short: ClassVar[str] = "l1ball"

    def norm(self, W):
        return float(np.abs(np.asarray(W, dtype=np.float64)).sum())

    def project(self, V):
        return project_l1_ball(V, self.radius)

    def conjugate(self, V):
        if self.l2:
            return super().conjugate(V)
        V = np.asarray(V, dtype=np.float64)
        return self.radius * float(np.abs(V).max()) if V.size else 0.0

    def lmo_atom(self, G: np.ndarray) -> tuple[int, float]:
        """The LMO's vertex as (flat index i, value s): S = s e_i, s = -r sign(G_i)."""
        g = np.asarray(G, dtype=np.float64).reshape(-1)
        i = int(np.argmax(np.abs(g)))
        return i, (-self.radius if g[i] > 0 else self.radius)

    def lmo(self, G):
        G = np.asarray(G, dtype=np.float64)
        i, s = self.lmo_atom(G)
        S = np.zeros(G.size)
        S[i] = s
        return S.reshape(G.shape)


@dataclass(frozen=True, init=False)
class TraceBall(_Ball):
    """g(X) = l2/2 ||X||_F^2 + indicator{||X||_* <= r}, X a (d, k) matrix.

    PDBFW eq. (17). ||X||_* is the trace (nuclear) norm, the sum of singular values; its dual
    norm is the spectral norm, so g*(V) = r sigma_1(V) for l2 = 0. For l2 > 0, with
    V = U diag(s) Q^T and p = Proj_{l1 ball}(s / l2) (nonnegative, as s is),
    W* = U diag(p) Q^T and g*(V) = <s, p> - l2/2 ||p||^2. LMO: -r u_1 v_1^T of G's top
    singular pair.
    """

    name: ClassVar[str] = "trace_ball"
    short: ClassVar[str] = "traceball"
    matrix_only: ClassVar[bool] = True

    def norm(self, W):
        W = _require_matrix(W, "TraceBall")
        return float(np.linalg.svd(W, compute_uv=False).sum())

    def project(self, V):
        V = _require_matrix(V, "TraceBall")
        U, s, Qt = np.linalg.svd(V, full_matrices=False)
        if float(s.sum()) <= self.radius:
            return V.copy()
        p = project_l1_ball(s, self.radius)
        keep = p > 0
        return (U[:, keep] * p[keep]) @ Qt[keep]

    def conjugate(self, V):
        V = _require_matrix(V, "TraceBall")
        s = np.linalg.svd(V, compute_uv=False)
        if not self.l2:
            return self.radius * float(s[0]) if s.size else 0.0
        p = project_l1_ball(s / self.l2, self.radius)
        return float(s @ p) - 0.5 * self.l2 * float(p @ p)

    def lmo_atom(self, G: np.ndarray, top_pair=top_singular_pair
                 ) -> tuple[float, np.ndarray, np.ndarray]:
        """The LMO's rank-one vertex as (s, u, v): S = s u v^T, s = -r, (u, v) the top
        singular pair of G by ``top_pair(G) -> (sigma_1, u_1, v_1)``: :func:`top_singular_pair`
        (default), or the norm-ball kernels' choice of method
        (:func:`pdsparse.lowrank.top_singular`, which imports this module)."""
        G = _require_matrix(G, "TraceBall")
        _, u, v = top_pair(G)
        return -self.radius, u, v

    def lmo(self, G):
        s, u, v = self.lmo_atom(G)
        return s * np.outer(u, v)


PENALTIES: dict[str, type[Penalty]] = {
    "elastic_net": ElasticNet,
    "l1_ball": L1Ball,
    "trace_ball": TraceBall,
}
"""Penalty classes by config name."""

PENALTY_PARAMS: dict[str, tuple[tuple[str, float | None], ...]] = {
    "elastic_net": (("l2", None), ("l1", 0.0)),
    "l1_ball": (("radius", None), ("l2", 0.0)),
    "trace_ball": (("radius", None), ("l2", 0.0)),
}
"""Each penalty's parameters in order, with their defaults (None: required)."""


def penalty_class(name: str) -> type[Penalty]:
    try:
        return PENALTIES[name]
    except KeyError:
        raise ConfigError(f"unknown penalty {name!r}; choose one of {sorted(PENALTIES)}") from None


def check_params(name: str, params: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` for unknown or missing parameters of penalty ``name``."""
    penalty_class(name)
    known = dict(PENALTY_PARAMS[name])
    extra = sorted(set(params) - set(known))
    if extra:
        raise ConfigError(f"penalty {name!r}: unknown parameter(s) {extra}; "
                          f"it takes {list(known)}")
    missing = [k for k, default in known.items() if default is None and k not in params]
    if missing:
        raise ConfigError(f"penalty {name!r}: missing parameter(s) {missing}")


def resolve_penalty(spec: Mapping[str, Any] | Penalty, n: int) -> Penalty:
    """A penalty from a config mapping ``{"name": ..., <params>}``, ``"c/n"`` values resolved
    for ``n`` examples, e.g. ``{"name": "l1_ball", "radius": 300, "l2": "10/n"}``.
    A :class:`Penalty` is returned as it is."""
    if isinstance(spec, Penalty):
        return spec
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ConfigError(f"a penalty is a mapping with a 'name' and its parameters, got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "name"}
    name = spec["name"]
    check_params(name, params)
    values = {k: resolve_value(v, n, f"penalty {name!r}: {k}") for k, v in params.items()}
    return penalty_class(name)(**values)
