"""Penalties, problems with any penalty, problem keys, and the objective for every penalty.

Every oracle of :mod:`pdsparse.penalties` is checked against brute force (scipy.optimize on
small dimensions, enumeration of vertices, finite differences, optimality conditions).
"""

import math
import re

import numpy as np
import pandas as pd
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from conftest import make_data

from pdsparse import losses, objective
from pdsparse.errors import ConfigError
from pdsparse.penalties import (
    FEASIBILITY_RTOL,
    ElasticNet,
    L1Ball,
    Penalty,
    TraceBall,
    project_l1_ball,
    resolve_penalty,
    top_singular_pair,
)
from pdsparse.problem import Problem, ProblemKey
from pdsparse.repro.config import l2_tag
from pdsparse.solvers import make_kernel, solve

RNG = np.random.default_rng(20240611)


def rand(*shape, scale=1.0):
    return scale * RNG.standard_normal(shape)


def nuclear(X):
    return float(np.linalg.svd(X, compute_uv=False).sum())


def random_in_ball(pen, shape, inside=0.9):
    """A random point of the ball at ``inside`` times the radius."""
    X = rand(*shape)
    norm = nuclear(X) if isinstance(pen, TraceBall) else float(np.abs(X).sum())
    return X * (inside * pen.radius / norm)


# ------------------------------------------------------------------------------------------
# construction, parameters, tags
# ------------------------------------------------------------------------------------------


def test_parameters_are_validated():
    for bad in (lambda: ElasticNet(0.0), lambda: ElasticNet(-1.0), lambda: ElasticNet(1.0, -0.1),
                lambda: ElasticNet(math.inf), lambda: ElasticNet("1/n"), lambda: ElasticNet(True),
                lambda: L1Ball(0.0), lambda: L1Ball(-1.0), lambda: L1Ball(math.inf),
                lambda: L1Ball(1.0, -1e-3), lambda: TraceBall(math.nan), lambda: TraceBall("3")):
        with pytest.raises(ConfigError):
            bad()
    with pytest.raises(ConfigError, match="l2 must be > 0"):
        ElasticNet(0.0)


def test_params_tags_and_views():
    e, b, t = ElasticNet(0.01, 0.001), L1Ball(300, 0.1), TraceBall(2.5)
    assert e.params() == {"l2": 0.01, "l1": 0.001}
    assert b.params() == {"radius": 300.0, "l2": 0.1}
    assert t.params() == {"radius": 2.5, "l2": 0.0}
    assert e.tag() == "enet-l2_0.01-l1_0.001"
    assert b.tag() == "l1ball-r300-l2_0.1"
    assert t.tag() == "traceball-r2.5-l2_0"
    assert ElasticNet(1e-5).tag() == "enet-l2_1e-05-l1_0"
    assert L1Ball(1e20).tag() == "l1ball-r1e20-l2_0"
    for pen in (e, b, t, ElasticNet(1 / 3, 1 / 7), L1Ball(1e-300, 1e300)):
        assert re.fullmatch(r"[A-Za-z0-9._-]+", pen.tag())
        assert isinstance(pen, Penalty)
    assert (e.l2, e.l1, e.radius) == (0.01, 0.001, math.inf)
    assert (b.l2, b.l1, b.radius) == (0.1, 0.0, 300.0)
    assert e == ElasticNet(0.01, 0.001) and hash(e) == hash(ElasticNet(0.01, 0.001))
    assert L1Ball(1.0) != TraceBall(1.0)
    with pytest.raises(AttributeError):
        e.l2 = 3.0  # frozen


def test_resolve_penalty():
    assert resolve_penalty({"name": "l1_ball", "radius": 300, "l2": "10/n"}, 100) == \
        L1Ball(300.0, 0.1)
    assert resolve_penalty({"name": "elastic_net", "l2": "1/n", "l1": "0.1/n"}, 10) == \
        ElasticNet(0.1, 0.01)
    assert resolve_penalty({"name": "trace_ball", "radius": 2}, 5) == TraceBall(2.0)
    pen = ElasticNet(1.0)
    assert resolve_penalty(pen, 3) is pen
    with pytest.raises(ConfigError, match="unknown penalty"):
        resolve_penalty({"name": "group_lasso", "l2": 1}, 10)
    with pytest.raises(ConfigError, match="unknown parameter"):
        resolve_penalty({"name": "l1_ball", "radius": 1, "l1": 2}, 10)
    with pytest.raises(ConfigError, match="missing"):
        resolve_penalty({"name": "trace_ball", "l2": 1}, 10)
    with pytest.raises(ConfigError):
        resolve_penalty({"name": "l1_ball", "radius": "x/n"}, 10)


# ------------------------------------------------------------------------------------------
# value
# ------------------------------------------------------------------------------------------


def test_value():
    w = rand(7)
    assert ElasticNet(0.3, 0.2).value(w) == pytest.approx(0.15 * w @ w + 0.2 * np.abs(w).sum())
    ball = L1Ball(np.abs(w).sum(), 0.5)
    assert ball.value(w) == pytest.approx(0.25 * w @ w)
    assert ball.value(w * (1 + 0.1 * FEASIBILITY_RTOL)) < math.inf  # rounding on the sphere
    assert ball.value(w * (1 + 10 * FEASIBILITY_RTOL)) == math.inf
    X = rand(5, 3)
    tb = TraceBall(nuclear(X))
    assert tb.value(X) == 0.0 and tb.value(1.001 * X) == math.inf
    assert L1Ball(1.0).value(X / np.abs(X).sum()) == 0.0  # entrywise on a matrix
    with pytest.raises(ConfigError, match="matrix"):
        tb.value(w)
    with pytest.raises(ConfigError, match="unbounded"):
        ElasticNet(1.0).lmo(w)


# ------------------------------------------------------------------------------------------
# projections and proxes
# ------------------------------------------------------------------------------------------


def split_prox_bruteforce(V, step, l2, l1, radius=None):
    """argmin step (l2/2 ||x||^2 + l1 ||x||_1) + ||x - V||^2 / 2 [s.t. ||x||_1 <= r], by the
    split x = u - v, u, v >= 0 (L-BFGS-B, or SLSQP with the linear constraint)."""
    v0 = V.reshape(-1)
    m = v0.size

    def fun(z):
        u, v = z[:m], z[m:]
        x = u - v
        val = step * (0.5 * l2 * x @ x + l1 * (u + v).sum()) + 0.5 * (x - v0) @ (x - v0)
        gx = step * l2 * x + (x - v0)
        return val, np.concatenate([gx + step * l1, -gx + step * l1])

    z0 = np.zeros(2 * m)
    bounds = [(0, None)] * (2 * m)
    if radius is None:
        res = so.minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 10000})
    else:
        cons = [{"type": "ineq", "fun": lambda z: radius - z.sum(),
                 "jac": lambda z: -np.ones_like(z)}]
        res = so.minimize(fun, z0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                          options={"ftol": 1e-15, "maxiter": 1000})
    return (res.x[:m] - res.x[m:]).reshape(V.shape)


@pytest.mark.parametrize("shape", [(6,), (3, 4)])
def test_l1_projection_is_optimal(shape):
    for trial in range(20):
        v = rand(*shape, scale=3.0)
        r = float(RNG.uniform(0.1, 1.5)) * np.abs(v).sum()
        x = project_l1_ball(v, r)
        assert x.shape == v.shape and x is not v
        if np.abs(v).sum() <= r:
            np.testing.assert_array_equal(x, v)
            continue
        assert np.abs(x).sum() == pytest.approx(r, rel=1e-14)
        # v - x = theta s with s in the subdifferential of ||.||_1 at x, theta >= 0
        res = (v - x).reshape(-1)
        on = x.reshape(-1) != 0
        theta = res[on][0] * np.sign(x.reshape(-1)[on][0])
        assert theta > 0
        np.testing.assert_allclose(res[on], theta * np.sign(x.reshape(-1)[on]), atol=1e-12)
        assert np.all(np.abs(res[~on]) <= theta + 1e-12)
        # variational inequality <v - x, y - x> <= 0 over the ball: its max is r ||v-x||_inf
        assert r * np.abs(res).max() - res @ x.reshape(-1) <= 1e-10 * (1 + r)
        if trial < 4:
            np.testing.assert_allclose(x, split_prox_bruteforce(v, 0.0, 0.0, 0.0, r),
                                       atol=1e-6)


def test_l1_projection_large_and_degenerate():
    v = rand(100_000)
    x = project_l1_ball(v, 10.0)
    assert np.abs(x).sum() == pytest.approx(10.0, rel=1e-13)
    np.testing.assert_array_equal(project_l1_ball(np.zeros(4), 1.0), np.zeros(4))
    ties = np.array([2.0, -2.0, 2.0, 0.5])
    np.testing.assert_allclose(project_l1_ball(ties, 3.0), [1.0, -1.0, 1.0, 0.0])


@pytest.mark.parametrize("k", [3, 6])
def test_trace_projection_is_optimal(k):
    pen = TraceBall(2.0)
    for _ in range(10):
        V = rand(5, k, scale=2.0)
        X = pen.project(V)
        if nuclear(V) <= pen.radius:
            np.testing.assert_array_equal(X, V)
            continue
        assert nuclear(X) == pytest.approx(pen.radius, rel=1e-12)
        R = V - X
        # <R, Y - X> <= 0 for all Y in the ball: the max over the ball is r ||R||_2
        assert pen.radius * np.linalg.norm(R, 2) - np.vdot(R, X) <= 1e-10
        for _ in range(20):
            Y = random_in_ball(pen, V.shape, inside=RNG.uniform(0, 1))
            assert np.vdot(R, Y - X) <= 1e-10
        # closer than random feasible points and the vertices +-r u v^T
        d0 = np.linalg.norm(R)
        for _ in range(20):
            u, w = rand(5), rand(k)
            Y = pen.radius * np.outer(u / np.linalg.norm(u), w / np.linalg.norm(w))
            assert np.linalg.norm(V - Y) >= d0 - 1e-12


@pytest.mark.parametrize("pen", [ElasticNet(0.7), ElasticNet(0.7, 0.3), L1Ball(1.2),
                                 L1Ball(1.2, 0.7), TraceBall(1.2), TraceBall(1.2, 0.7)])
def test_prox(pen):
    step = 0.8
    shape = (4, 3)
    for _ in range(5):
        V = rand(*shape, scale=1.5)
        X = pen.prox(V, step)
        if isinstance(pen, TraceBall):
            # prox of step g = projection of V / (1 + step l2): check its optimality directly
            R = V - (1 + step * pen.l2) * X
            assert nuclear(X) <= pen.radius * (1 + 1e-12)
            assert pen.radius * np.linalg.norm(R, 2) - np.vdot(R, X) <= 1e-10
            # and it beats random feasible points on the prox objective
            def obj(Y, V=V):
                return step * pen.value(Y) + 0.5 * np.sum((Y - V) ** 2)

            for _ in range(20):
                assert obj(X) <= obj(random_in_ball(pen, shape, RNG.uniform(0, 1))) + 1e-12
        else:
            radius = pen.radius if isinstance(pen, L1Ball) else None
            ref = split_prox_bruteforce(V, step, pen.l2, pen.l1, radius)
            np.testing.assert_allclose(X, ref, atol=1e-6)
        if isinstance(pen, ElasticNet):  # separable: a column's prox is the prox's column
            np.testing.assert_array_equal(pen.prox(V[:, 0], step), X[:, 0])


# ------------------------------------------------------------------------------------------
# conjugates
# ------------------------------------------------------------------------------------------


def conjugate_bruteforce(pen, V):
    """sup_W <V, W> - g(W) by scipy (split variables) or by enumerating vertices."""
    v = V.reshape(-1)
    m = v.size
    if isinstance(pen, L1Ball) and pen.l2 == 0:
        return max(pen.radius * s * vi for vi in v for s in (-1, 1))
    if isinstance(pen, TraceBall):
        return None
    # minimize g(u - v) - <V, u - v>
    l1 = pen.l1

    def fun(z):
        x = z[:m] - z[m:]
        val = 0.5 * pen.l2 * x @ x + l1 * z.sum() - v @ x
        gx = pen.l2 * x - v
        return val, np.concatenate([gx + l1, -gx + l1])

    bounds = [(0, None)] * (2 * m)
    if isinstance(pen, L1Ball):
        cons = [{"type": "ineq", "fun": lambda z: pen.radius - z.sum(),
                 "jac": lambda z: -np.ones_like(z)}]
        res = so.minimize(fun, np.zeros(2 * m), jac=True, method="SLSQP", bounds=bounds,
                          constraints=cons, options={"ftol": 1e-15, "maxiter": 1000})
    else:
        res = so.minimize(fun, np.zeros(2 * m), jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"ftol": 1e-16, "gtol": 1e-13})
    return -res.fun


PENALTIES = [ElasticNet(0.5), ElasticNet(0.5, 0.4), L1Ball(1.5), L1Ball(1.5, 0.5),
             L1Ball(100.0, 0.5), TraceBall(1.5), TraceBall(1.5, 0.5), TraceBall(100.0, 0.5)]


@pytest.mark.parametrize("pen", PENALTIES, ids=lambda p: p.tag())
def test_conjugate_fenchel_young_and_bruteforce(pen):
    shape = (4, 3)
    for _ in range(5):
        V = rand(*shape, scale=2.0)
        gs = pen.conjugate(V)
        W = pen.grad_conjugate(V)
        assert W.shape == V.shape
        # W = grad g*(V) is feasible and attains the sup: g(W) + g*(V) = <V, W>
        assert pen.value(W) < math.inf
        assert pen.value(W) + gs == pytest.approx(np.vdot(V, W), rel=1e-12, abs=1e-12)
        # Fenchel-Young inequality at random points (feasible ones for a ball)
        for _ in range(20):
            Y = random_in_ball(pen, shape, RNG.uniform(0, 1)) if pen.bounded else rand(*shape)
            assert pen.value(Y) + gs >= np.vdot(V, Y) - 1e-12
        ref = conjugate_bruteforce(pen, V)
        if ref is not None:
            assert gs == pytest.approx(ref, rel=1e-7, abs=1e-9)
        if isinstance(pen, TraceBall) and pen.l2 == 0:
            assert gs == pytest.approx(pen.radius * np.linalg.norm(V, 2), rel=1e-13)
        if isinstance(pen, L1Ball) and pen.l2 == 0:
            assert gs == pen.radius * np.abs(V).max()
        if pen.l2 > 0:
            # g* is differentiable: its gradient by central differences is grad_conjugate
            h = 1e-6
            num = np.zeros(shape)
            for idx in np.ndindex(shape):
                E = np.zeros(shape)
                E[idx] = h
                num[idx] = (pen.conjugate(V + E) - pen.conjugate(V - E)) / (2 * h)
            np.testing.assert_allclose(num, W, atol=1e-6)


def test_vector_and_matrix_agree_for_separable_penalties():
    for pen in (ElasticNet(0.5, 0.4), L1Ball(1.5, 0.5), L1Ball(1.5)):
        V = rand(12, scale=2.0)
        assert pen.conjugate(V) == pytest.approx(pen.conjugate(V.reshape(4, 3)), rel=1e-14)
        np.testing.assert_allclose(pen.grad_conjugate(V).reshape(4, 3),
                                   pen.grad_conjugate(V.reshape(4, 3)), atol=1e-15)
    with pytest.raises(ConfigError, match="matrix"):
        TraceBall(1.0).conjugate(rand(5))


# ------------------------------------------------------------------------------------------
# linear minimization oracles
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(8,), (4, 3)])
def test_l1_lmo(shape):
    pen = L1Ball(2.5)
    for _ in range(10):
        G = rand(*shape)
        S = pen.lmo(G)
        assert S.shape == G.shape and np.count_nonzero(S) == 1
        assert np.abs(S).sum() == pytest.approx(pen.radius)
        vertices = [s * pen.radius * G.reshape(-1)[i] for i in range(G.size) for s in (-1, 1)]
        assert np.vdot(G, S) == pytest.approx(min(vertices), rel=1e-15)
        for _ in range(20):
            assert np.vdot(G, S) <= np.vdot(G, random_in_ball(pen, shape, 1.0)) + 1e-12
        i, s = pen.lmo_atom(G)
        assert S.reshape(-1)[i] == s


@pytest.mark.parametrize("shape", [(6, 4), (250, 230)])
def test_trace_lmo(shape):
    """Dense SVD for small matrices, Lanczos (svds) above 200 on both sides."""
    pen = TraceBall(1.7)
    G = rand(*shape)
    S = pen.lmo(G)
    sigma = np.linalg.norm(G, 2)
    assert np.vdot(G, S) == pytest.approx(-pen.radius * sigma, rel=1e-10)
    assert nuclear(S) == pytest.approx(pen.radius, rel=1e-10)
    assert np.linalg.matrix_rank(S) == 1
    for _ in range(20):
        assert np.vdot(G, S) <= np.vdot(G, random_in_ball(pen, shape, 1.0)) + 1e-9
    s1, u, v = top_singular_pair(G)
    assert s1 == pytest.approx(sigma, rel=1e-10)
    assert u @ G @ v == pytest.approx(sigma, rel=1e-10)


@pytest.mark.parametrize("method", ["lanczos", "randomized", "full"])
def test_trace_lmo_by_each_svd_method(method):
    """The norm-ball kernels' ``svd`` choice reaches the penalty's LMO: the same vertex."""
    from pdsparse.solvers.trace import top_pair

    pen = TraceBall(1.7)
    G = rand(30, 12)
    s, u, v = pen.lmo_atom(G, lambda M: top_pair(M, method))
    assert s == -pen.radius
    S = s * np.outer(u, v)  # the randomized pair is approximate (pdsparse.lowrank)
    assert np.vdot(G, S) == pytest.approx(np.vdot(G, pen.lmo(G)), rel=1e-6)
    assert nuclear(S) == pytest.approx(pen.radius, rel=1e-12)
    with pytest.raises(ConfigError):
        top_pair(G, "qr")


# ------------------------------------------------------------------------------------------
# problems
# ------------------------------------------------------------------------------------------


def test_problem_shorthand_and_penalty_forms():
    A, b = make_data(n=20, d=8)
    p = Problem(A, b, "logistic", l2=0.1, l1=0.01)
    assert p.penalty == ElasticNet(0.1, 0.01) and (p.l2, p.l1) == (0.1, 0.01)
    assert p.radius == math.inf and p.elastic_net() is p.penalty
    assert Problem(A, b).penalty == ElasticNet(1.0)
    assert Problem(A, b, "logistic", 0.05).l2 == 0.05
    q = Problem(A, b, "logistic", L1Ball(3.0, 0.2))
    assert q.penalty == L1Ball(3.0, 0.2) and (q.l2, q.l1, q.radius) == (0.2, 0.0, 3.0)
    with pytest.raises(ConfigError, match="elastic net only"):
        q.elastic_net("primal_rcd")
    r = Problem(A, b, "logistic", penalty={"name": "l1_ball", "radius": 3, "l2": "4/n"})
    assert r.penalty == L1Ball(3.0, 0.2)
    with pytest.raises(ConfigError, match="not both"):
        Problem(A, b, "logistic", l2=0.1, penalty=L1Ball(1.0))
    with pytest.raises(ConfigError, match="matrix"):
        Problem(A, b, "logistic", TraceBall(1.0))
    assert p.var_shape == (8,) and p.dual_shape == (20,) and not p.matrix and p.k == 1


def test_problem_label_matrix():
    A, b = make_data(n=20, d=8)
    B = np.column_stack([b, -b, b])
    p = Problem(A, B, "logistic", TraceBall(2.0))
    assert p.matrix and p.k == 3 and p.var_shape == (8, 3) and p.dual_shape == (20, 3)
    assert p.B is p.b and p.B.flags.c_contiguous
    with pytest.raises(ConfigError, match="vector variable"):
        Problem(A, B, "logistic", l2=0.1).elastic_net()
    with pytest.raises(ValueError, match="labels"):
        Problem(A, 2 * B, "logistic", l2=0.1)
    with pytest.raises(ValueError, match="21 labels"):
        Problem(A, np.ones((21, 2)), "squared", l2=0.1)


class _Dataset:
    def __init__(self, A, b, name):
        self.A, self.b, self.name = A, b, name


def test_from_dataset_and_key():
    A, b = make_data(n=20, d=8)
    ds = _Dataset(A, b, "toy")
    p = Problem.from_dataset(ds, "logistic", "2/n")
    assert p.penalty == ElasticNet(0.1) and p.key.tag() == "toy__logistic__l2-2_n"
    p = Problem.from_dataset(ds, "logistic", l2="2/n", l1=0.01)
    assert p.penalty == ElasticNet(0.1, 0.01)
    assert p.key.tag() == "toy__logistic__l2-2_n__l1-0.01"
    p = Problem.from_dataset(ds, "smooth_hinge",
                             penalty={"name": "l1_ball", "radius": 300, "l2": "10/n"},
                             recipe="rb100")
    assert p.penalty == L1Ball(300.0, 0.5)
    assert p.key.tag() == "toy+rb100__smooth_hinge__l1ball-300.0__l2-10_n"
    assert Problem.from_dataset(ds).penalty == ElasticNet(1 / 20)


@pytest.mark.parametrize("l2", ["1/n", "0.1/n", "10/n", 0.001, 1e-05, 1, 0.5, 2.5e-07])
def test_problem_key_keeps_faceoff_reference_names(l2):
    key = ProblemKey.faceoff("rcv1.binary", "logistic", l2)
    assert key.tag() == f"rcv1.binary__logistic__l2-{l2_tag(l2)}"
    assert key == ProblemKey("rcv1.binary", "logistic", "elastic_net", {"l2": l2, "l1": 0})
    assert ProblemKey.from_tag(key.tag()) == key


def test_problem_key_tags():
    keys = {
        ProblemKey("mnist", "smooth_hinge", "elastic_net", {"l2": 0.1, "l1": 0.01},
                   recipe="rb1000"): "mnist+rb1000__smooth_hinge__l2-0.1__l1-0.01",
        ProblemKey("rcv1.binary", "smooth_hinge", "l1_ball", {"radius": 300, "l2": "10/n"}):
            "rcv1.binary__smooth_hinge__l1ball-300.0__l2-10_n",
        ProblemKey("synth", "squared", "trace_ball", {"radius": 5.0}):
            "synth__squared__traceball-5.0",
        ProblemKey("cod-rna", "logistic", "elastic_net", {"l2": " 1 / n "}):
            "cod-rna__logistic__l2-1_n",
    }
    for key, tag in keys.items():
        assert key.tag() == tag
        assert re.fullmatch(r"[A-Za-z0-9._+-]+", tag)
        back = ProblemKey.from_tag(tag)
        assert back == key and hash(back) == hash(key)
    key = ProblemKey("rcv1.binary", "smooth_hinge", "l1_ball", {"radius": 300, "l2": "10/n"})
    assert key.resolve(100) == L1Ball(300.0, 0.1)
    assert key.penalty_spec() == {"name": "l1_ball", "radius": 300.0, "l2": "10/n"}
    assert ProblemKey("a", "logistic", "l1_ball", {"radius": 1, "l2": 0}).tag() == \
        "a__logistic__l1ball-1.0"
    for bad in (dict(dataset="a__b"), dict(dataset="a/b"), dict(dataset=""),
                dict(recipe="x__y"), dict(loss="hinge"), dict(penalty="lasso"),
                dict(params={"radius": 1.0}), dict(params={"l2": "1/m"}), dict(params={})):
        args = dict(dataset="a", loss="logistic", penalty="elastic_net", params={"l2": 1.0})
        args.update(bad)
        with pytest.raises(ConfigError):
            ProblemKey(**args)
    with pytest.raises(ConfigError):
        ProblemKey.from_tag("a__logistic")
    with pytest.raises(ConfigError, match="canonical"):
        ProblemKey.from_tag("a__logistic__l2-1")  # repr(1.0) is '1.0'


# ------------------------------------------------------------------------------------------
# the objective
# ------------------------------------------------------------------------------------------


def make_matrix_data(n=30, d=7, k=3, loss="logistic", seed=0):
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=0.5, random_state=rng, format="csr")
    A = A + sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) % d)), shape=(n, d))
    X = rng.standard_normal((d, k))
    if loss == "squared":
        return A.tocsr(), A @ X + 0.1 * rng.standard_normal((n, k))
    return A.tocsr(), np.where(A @ X + 0.3 * rng.standard_normal((n, k)) >= 0, 1.0, -1.0)


@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
def test_matrix_labels_are_k_vector_problems_for_the_elastic_net(loss):
    A, B = make_matrix_data(loss=loss)
    pen = ElasticNet(0.05, 0.01)
    p = Problem(A, B, loss, pen)
    cols = [Problem(A, B[:, c], loss, pen) for c in range(B.shape[1])]
    W = rand(*p.var_shape)
    alpha = objective.alpha_of_w(p, W)
    assert alpha.shape == B.shape
    assert objective.primal(p, W) == pytest.approx(
        sum(objective.primal(q, W[:, c]) for c, q in enumerate(cols)), rel=1e-13)
    assert objective.dual(p, alpha) == pytest.approx(
        sum(objective.dual(q, alpha[:, c]) for c, q in enumerate(cols)), rel=1e-13)
    for c, q in enumerate(cols):
        np.testing.assert_allclose(alpha[:, c], objective.alpha_of_w(q, W[:, c]), rtol=1e-15)
        np.testing.assert_allclose(objective.w_of_alpha(p, alpha)[:, c],
                                   objective.w_of_alpha(q, alpha[:, c]), rtol=1e-14)
    with pytest.raises(ValueError, match="shape"):
        objective.primal(p, W[:, 0])


@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
@pytest.mark.parametrize("pen", [ElasticNet(0.05, 0.01), L1Ball(2.0), L1Ball(2.0, 0.05),
                                 TraceBall(2.0), TraceBall(2.0, 0.05)], ids=lambda p: p.tag())
def test_weak_duality_and_pairing(loss, pen):
    A, B = make_matrix_data(loss=loss, seed=1)
    p = Problem(A, B, loss, pen)
    for _ in range(5):
        W = random_in_ball(pen, p.var_shape, 0.8) if pen.bounded else rand(*p.var_shape)
        alpha = objective.alpha_of_w(p, W)
        alpha2 = objective.alpha_of_w(p, rand(*p.var_shape))
        for a in (alpha, alpha2):
            assert objective.primal(p, W) >= objective.dual(p, a) - 1e-12
        Wa = objective.w_of_alpha(p, alpha2)
        assert objective.primal(p, Wa) < math.inf
        P, D, gap = objective.evaluate(p, W)
        assert gap == pytest.approx(objective.duality_gap(p, W, alpha)) and gap >= -1e-12


def loss_np(loss, z, b):
    """phi and phi' in plain NumPy, independent of pdsparse.losses."""
    if loss == "logistic":
        return np.logaddexp(0, -b * z), -b / (1 + np.exp(b * z))
    if loss == "squared":
        return 0.5 * (z - b) ** 2, z - b
    m = b * z
    v = np.where(m <= 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0))
    g = np.where(m <= 0, -b, np.where(m < 1, -b * (1 - m), 0.0))
    return v, g


@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
@pytest.mark.parametrize("kind,matrix", [("l1", False), ("l1", True), ("trace", True)])
def test_gap_at_alpha_of_w_is_the_frank_wolfe_gap(loss, kind, matrix):
    A, B = make_matrix_data(loss=loss, seed=2)
    if not matrix:
        B = B[:, 0]
    for l2 in (0.0, 0.05):
        pen = L1Ball(1.5, l2) if kind == "l1" else TraceBall(1.5, l2)
        p = Problem(A, B, loss, pen)
        for inside in (0.3, 1.0):
            W = random_in_ball(pen, p.var_shape, inside)
            # grad f by plain NumPy
            _, d1 = loss_np(loss, A @ W, B)
            grad_f = A.T @ d1 / p.n
            np.testing.assert_allclose(objective.loss_gradient(p, W), grad_f, atol=1e-14)
            G = grad_f + l2 * W
            S = pen.lmo(G)
            fw = float(np.vdot(G, W - S))
            assert objective.fw_gap(p, W) == pytest.approx(fw, rel=1e-12)
            gap = objective.duality_gap(p, W, objective.alpha_of_w(p, W))
            if l2 == 0:
                assert gap == pytest.approx(fw, rel=1e-10, abs=1e-13)
            else:
                W_sharp = pen.grad_conjugate(-grad_f)
                assert gap <= fw - 0.5 * l2 * np.sum((W - W_sharp) ** 2) + 1e-12
                assert gap >= -1e-13
    with pytest.raises(ConfigError, match="ball"):
        objective.fw_gap(Problem(A, B, loss, l2=0.1), np.zeros(A.shape[1:] + B.shape[1:]))


# ------------------------------------------------------------------------------------------
# bit-identity of the elastic-net objective with the formulas Face-Off's traces were made with
# ------------------------------------------------------------------------------------------


def _legacy_soft(v, t):
    if t == 0.0:
        return v
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def legacy_primal(problem, w):
    w = np.asarray(w, dtype=np.float64)
    z = problem.csr @ w
    val = losses.values(problem.loss_id, z, problem.b).mean()
    val += 0.5 * problem.l2 * float(w @ w)
    if problem.l1:
        val += problem.l1 * float(np.abs(w).sum())
    return float(val)


def legacy_w_of_alpha(problem, alpha):
    v = problem.csr.T @ np.asarray(alpha, dtype=np.float64) / problem.n
    return _legacy_soft(v, problem.l1) / problem.l2


def legacy_dual(problem, alpha):
    alpha = np.asarray(alpha, dtype=np.float64)
    conj = losses.conj_neg(problem.loss_id, alpha, problem.b)
    if not np.all(np.isfinite(conj)):
        return -np.inf
    v = _legacy_soft(problem.csr.T @ alpha / problem.n, problem.l1)
    return float(-conj.mean() - float(v @ v) / (2.0 * problem.l2))


def legacy_alpha_of_w(problem, w):
    z = problem.csr @ np.asarray(w, dtype=np.float64)
    return -losses.derivs(problem.loss_id, z, problem.b)


BIT_CASES = [(loss, l1, m, s, st) for loss in ("logistic", "squared", "smooth_hinge")
             for l1 in (0.0, 0.01)
             for m, s, st in (("primal_rcd", "uniform", "fixed"),
                              ("primal_rcd", "importance", "fixed"),
                              ("dual_rcd", "importance", "newton"),
                              ("dual_rcd", "permutation", "fixed"))
             if l1 == 0 or m == "primal_rcd"]


@pytest.mark.parametrize("loss,l1,method,sampling,dual_step", BIT_CASES)
def test_elastic_net_traces_are_bit_identical_to_the_legacy_objective(
        monkeypatch, loss, l1, method, sampling, dual_step):
    """solve() traces with the objective of this module equal, bit for bit, those made with
    the hand-written elastic-net formulas the Face-Off traces were recorded with."""
    A, b = make_data(n=50, d=30, loss=loss, seed=5)
    p = Problem(A, b, loss=loss, l2=1.0 / 50, l1=l1)
    cols = ["iteration", "epoch", "primal", "dual", "gap", "nnz_primal", "nnz_dual", "status"]
    args = dict(seed=7, max_epochs=20, eval_every=2)
    after = solve(p, method, sampling, dual_step, **args)
    with monkeypatch.context() as m:
        m.setattr(objective, "primal", legacy_primal)
        m.setattr(objective, "dual", legacy_dual)
        m.setattr(objective, "w_of_alpha", legacy_w_of_alpha)
        m.setattr(objective, "alpha_of_w", legacy_alpha_of_w)
        before = solve(p, method, sampling, dual_step, **args)
    pd.testing.assert_frame_equal(before.trace[cols], after.trace[cols], check_exact=True)
    np.testing.assert_array_equal(before.w, after.w)
    np.testing.assert_array_equal(before.alpha, after.alpha)
    # and the four functions agree exactly on the iterates of a kernel, chunk by chunk
    kernel = make_kernel(p, method, sampling, dual_step, seed=3)
    for _ in range(3):
        kernel.run(p.nnz)
        w, alpha = kernel.iterates()
        assert objective.primal(p, w) == legacy_primal(p, w)
        assert objective.dual(p, alpha) == legacy_dual(p, alpha)
        np.testing.assert_array_equal(objective.w_of_alpha(p, alpha), legacy_w_of_alpha(p, alpha))
        np.testing.assert_array_equal(objective.alpha_of_w(p, w), legacy_alpha_of_w(p, w))
