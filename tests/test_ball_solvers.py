"""PDBFW's l1-ball baselines (``solvers/ball.py``, ``_ball.pyx``): Acc PG, FW, SVRG, SCGS, STORC.

Each kernel is compared iterate by iterate with a plain NumPy transcription of the published
update fed the same random draws (``_sampling.uniform_ints`` on a copy of the seeded state),
and run to a certified duality gap; the building blocks (Condat's projection, CndG, the
exact line search) are checked against independent computations.
"""

import math

import numpy as np
import pytest
import scipy.optimize as so
from conftest import make_data

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.losses import get_loss
from pdsparse.penalties import ElasticNet, L1Ball, TraceBall, project_l1_ball
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import SOLVERS, _ball, _sampling, solve
from pdsparse.solvers.ball import (
    AccPGKernel,
    FWKernel,
    SCGSKernel,
    SCGSOptions,
    STORCKernel,
    STORCOptions,
    SVRGKernel,
    SVRGOptions,
    cndg_guard,
    gradient_bounds,
    smoothness,
)

BALL = ("acc_pg", "fw", "svrg", "scgs", "storc")


def problem(r=0.5, mu=0.05, loss="smooth_hinge", n=40, d=25, seed=3):
    A, b = make_data(n=n, d=d, seed=seed, loss=loss)
    return Problem(A, b, loss, penalty=L1Ball(r, mu))


# -- plain NumPy pieces, written from the papers ----------------------------------------------

def dphi(loss, z, b):
    if loss == "squared":
        return z - b
    return -b * np.clip(1.0 - b * z, 0.0, 1.0)  # smooth hinge h(m) = (1 - m)^2 / 2 on [0, 1]


def full_grad(p, x):
    return p.mat.T @ dphi(p.loss, p.mat @ x, p.b) / p.n + p.l2 * x


def row(p, i):
    R = p.csr
    lo, hi = R.indptr[i], R.indptr[i + 1]
    return R.indices[lo:hi], R.data[lo:hi]


def lipschitz(p):
    return np.linalg.norm(p.mat.toarray(), 2) ** 2 / p.n + p.l2  # beta = 1 for both losses


def py_cndg(g, u, beta, eta, r):
    """Lan & Zhou's procedure CndG, as printed."""
    ut = u.copy()
    while True:
        h = g + beta * (ut - u)
        j = int(np.argmax(np.abs(h)))
        v = np.zeros_like(u)
        v[j] = -r if h[j] > 0 else r
        V = h @ (ut - v)
        if V <= eta:
            return ut
        alpha = min(1.0, (beta * (u - ut) - g) @ (v - ut) / (beta * np.sum((v - ut) ** 2)))
        ut = (1 - alpha) * ut + alpha * v


def minibatch(p, z, idx, zsnap=None, gsnap=None):
    """(1/m) sum grad f_i(z) (SCGS), or STORC's grad f(y0) + (1/m) sum (grad f_i(z) -
    grad f_i(y0)); the draws in order."""
    g = p.l2 * z if gsnap is None else gsnap + p.l2 * z
    for i in idx:
        cols, vals = row(p, i)
        c = dphi(p.loss, vals @ z[cols], p.b[i])
        if zsnap is not None:
            c = c - dphi(p.loss, zsnap[i], p.b[i])
        g[cols] += c / len(idx) * vals
    return g


def exact_step(loss, z, dz, b, mu, xs, ss):
    """argmin over [0, 1] of 1/n sum phi(z + t dz) + mu/2 ||x + t s||^2 (xs = <x, s>,
    ss = ||s||^2): P' is linear between the breakpoints (margins at 0 or 1), so evaluate it
    there and interpolate on the piece where it changes sign."""
    def dP(t):
        return np.mean(dphi(loss, z + t * dz, b) * dz) + mu * (xs + t * ss)

    pts = [0.0, 1.0]
    if loss == "smooth_hinge":
        m0, dm = b * z, b * dz
        nz = dm != 0
        pts += list(-m0[nz] / dm[nz]) + list((1 - m0[nz]) / dm[nz])
    pts = np.array(sorted(u for u in set(pts) if 0 <= u <= 1))
    vals = np.array([dP(u) for u in pts])
    if vals[0] >= 0:
        return 0.0
    if vals[-1] <= 0:
        return 1.0
    i = int(np.flatnonzero(vals >= 0)[0]) - 1
    return pts[i] - vals[i] * (pts[i + 1] - pts[i]) / (vals[i + 1] - vals[i])


def step(kernel):
    """One iteration of the kernel (a run may end on a snapshot's full gradient alone)."""
    while kernel.run(1)[0] == 0:
        pass


def assert_close(got, want, what, tol=1e-12):
    err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
    assert err <= tol, f"{what}: relative difference {err:.2e}"


# -- projection onto the l1 ball (Condat 2016) ------------------------------------------------

def test_projection_matches_sort_based_and_kkt():
    rng = np.random.default_rng(0)
    for trial in range(300):
        d = int(rng.integers(1, 60))
        v = rng.standard_normal(d) * rng.choice([1e-3, 1.0, 1e3])
        if trial % 5 == 0:
            v = np.round(v)  # ties and zeros
        r = float(rng.uniform(0.05, 1.5)) * max(np.abs(v).sum(), 1e-3)
        x, tau = _ball.project_l1(v, r)
        np.testing.assert_allclose(x, project_l1_ball(v, r), rtol=0,
                                   atol=1e-13 * max(1.0, np.abs(v).max()))
        # KKT: x = sign(v) max(|v| - tau, 0) with ||x||_1 = r when v is outside, x = v inside
        if np.abs(v).sum() <= r:
            assert tau == 0.0 and np.array_equal(x, v)
        else:
            assert tau > 0 and math.isclose(np.abs(x).sum(), r, rel_tol=1e-12)
            on = x != 0
            np.testing.assert_allclose(np.abs(v[on]) - np.abs(x[on]), tau, rtol=1e-10)
            assert np.all(np.sign(x[on]) == np.sign(v[on]))
            assert np.all(np.abs(v[~on]) <= tau * (1 + 1e-12))
    y = rng.standard_normal(30)
    out, _ = _ball.project_l1(y, 1.0, y.copy())
    np.testing.assert_array_equal(_ball.project_l1(y, 1.0, y)[0], out)  # in place


def test_projection_is_the_nearest_point_brute_force():
    """Against a generic constrained solver on the split variables x = u - w, u, w >= 0."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        v, r = rng.standard_normal(6), 1.3
        x, _ = _ball.project_l1(v, r)
        res = so.minimize(lambda s, v=v: 0.5 * np.sum((s[:6] - s[6:] - v) ** 2), np.zeros(12),
                          jac=lambda s, v=v: np.concatenate([s[:6] - s[6:] - v,
                                                             v - s[:6] + s[6:]]),
                          bounds=[(0, None)] * 12, method="SLSQP", options={"ftol": 1e-15},
                          constraints=[{"type": "ineq", "fun": lambda s: 1.3 - s.sum(),
                                        "jac": lambda s: -np.ones(12)}])
        np.testing.assert_allclose(x, res.x[:6] - res.x[6:], atol=1e-7)


# -- CndG and the exact line search -----------------------------------------------------------

@pytest.mark.parametrize("beta", [0.05, 3.0])
def test_cndg_matches_transcription_and_solves_the_prox_model(beta):
    rng = np.random.default_rng(2)
    d, r = 30, 1.0
    g = 0.1 * rng.standard_normal(d)
    u = project_l1_ball(rng.standard_normal(d), 0.8 * r)
    for eta in (1e-2, 1e-4):
        ut = u.copy()
        its, V, _ = _ball.cndg(g, u, ut, beta, eta, r, 10**7)
        assert_close(ut, py_cndg(g, u, beta, eta, r), "CndG")
        assert V <= eta and its > 0
        # the Wolfe gap bounds the model's suboptimality; its minimizer is Proj(u - g / beta)
        star = project_l1_ball(u - g / beta, r)
        model = lambda x: g @ x + beta / 2 * np.sum((x - u) ** 2)  # noqa: E731
        assert 0 <= model(ut) - model(star) <= eta * (1 + 1e-9)
    ut = u.copy()
    its, _, _ = _ball.cndg(g, u, ut, beta, -1.0, r, 7)  # never V <= eta: the guard stops it
    assert its == 7


def test_the_cndg_guard_stays_a_c_long():
    """STORC with step x100 on MNIST-RB (the PDBFW sensitivity study, clean run of 826feb8)
    made 6 beta D^2 / eta exceed 2^63: the guard overflowed _ball.cndg's long long and the
    run crashed. The guard is capped; a call stopped by it returns, counted."""
    assert cndg_guard(1.0, 1.0, 1.0) == 2 * 6 + 10
    for beta, eta in ((1e12, 1e-12), (1.0, 0.0), (math.inf, 1.0), (1.0, math.nan)):
        guard = cndg_guard(beta, eta, 870.0)
        assert isinstance(guard, int) and 0 < guard <= 10**7
    g, u = np.array([1.0, -2.0, 0.5]), np.array([0.1, 0.0, -0.2])
    its, _, _ = _ball.cndg(g, u, u.copy(), 1e12, 1e-300, 1.0, cndg_guard(1e12, 1e-300, 2.0))
    assert 0 < its <= 10**7


@pytest.mark.parametrize("beta", [0.05, 3.0])
def test_cndg_sweeps_the_support_only(beta):
    """A sparse u (the iterates of SCGS and STORC): each iteration sweeps the support (at
    most 2 + its entries), not all of d; ties in |h| go to the first index, as np.argmax."""
    rng = np.random.default_rng(5)
    d, r = 2000, 1.0
    g = np.round(0.1 * rng.standard_normal(d), 2)  # many ties
    u = np.zeros(d)
    u[[3, 17]] = [0.2, -0.3]
    ut = u.copy()
    its, _, work = _ball.cndg(g, u, ut, beta, 1e-3, r, 10**7)
    assert_close(ut, py_cndg(g, u, beta, 1e-3, r), "sparse CndG")
    assert its >= 5 and work <= 2 * d + (its + 1) * (its + 2)


def segment_value(loss, z, b, mu, x):
    if loss == "squared":
        val = 0.5 * (z - b) ** 2
    else:
        m = b * z
        val = np.where(m <= 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0))
    return val.mean() + mu / 2 * np.sum(x ** 2)


@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
def test_line_search_is_exact(loss):
    """The kernel's minimizer over [0, 1] vs a fine grid and vs the root of P' found by
    evaluating P' at every breakpoint (P' is linear between them)."""
    rng = np.random.default_rng(3)
    n, mu = 200, 0.01
    b = np.sign(rng.standard_normal(n)) if loss == "smooth_hinge" else rng.standard_normal(n)
    for scale in (0.1, 1.0, 10.0):
        z, dz = rng.standard_normal(n), scale * rng.standard_normal(n)
        x, s = rng.standard_normal(5), rng.standard_normal(5)

        t = _ball.fw_line_search(get_loss(loss).cid, z, dz, b, mu, x @ s, s @ s)
        grid = np.linspace(0, 1, 5001)
        best = min(segment_value(loss, z + u * dz, b, mu, x + u * s) for u in grid)
        assert 0 <= t <= 1
        assert segment_value(loss, z + t * dz, b, mu, x + t * s) <= best + 1e-12
        assert abs(t - exact_step(loss, z, dz, b, mu, x @ s, s @ s)) <= 1e-12
        edge = _ball.fw_line_search(get_loss(loss).cid, z, -dz, b, mu, x @ s, s @ s)
        assert 0 <= edge <= 1
    # small random segments: margins on the breakpoints, margins that do not move, flat P'
    for trial in range(400):
        m = int(rng.integers(1, 30))
        z, dz = rng.standard_normal(m) * 3, rng.standard_normal(m) * rng.choice([0.1, 1, 30])
        bb = np.sign(rng.standard_normal(m)) if loss == "smooth_hinge" else rng.standard_normal(m)
        dz[rng.random(m) < 0.2] = 0.0
        if trial % 2:
            z[: m // 2] = bb[: m // 2] * rng.choice([0.0, 1.0], m // 2)
        mu_t, xs, ss = rng.choice([0.0, 1e-3, 1.0]), rng.standard_normal(), rng.random()
        t = _ball.fw_line_search(get_loss(loss).cid, z, dz, bb, mu_t, xs, ss)
        u = exact_step(loss, z, dz, bb, mu_t, xs, ss)
        got, want = (segment_value(loss, z + w * dz, bb, 0.0, 0.0)
                     + mu_t * (xs * w + ss * w * w / 2) for w in (t, u))
        assert abs(got - want) <= 1e-13 * max(1.0, abs(want))


def test_problem_constants():
    p = problem()
    assert math.isclose(smoothness(p), lipschitz(p), rel_tol=1e-10)
    sigma2, lip_f = gradient_bounds(p)
    assert math.isclose(sigma2, np.mean(p.row_sqnorms), rel_tol=1e-12)  # |h'| <= 1, attained
    # the bound holds: the variance of a sampled gradient at random points of the ball
    rng = np.random.default_rng(4)
    A = p.mat.toarray()
    for _ in range(5):
        x = project_l1_ball(rng.standard_normal(p.d) * 10, p.radius)
        gi = dphi(p.loss, A @ x, p.b)[:, None] * A
        assert np.mean(np.sum((gi - gi.mean(0)) ** 2, axis=1)) <= sigma2
        assert np.linalg.norm(full_grad(p, x)) <= lip_f


# -- the kernels against their transcriptions -------------------------------------------------

@pytest.mark.parametrize("momentum", ["nesterov", "fista"])
def test_acc_pg_matches_transcription(momentum):
    p = problem()
    k = SOLVERS["acc_pg"].make_kernel(p, {"momentum": momentum})
    L, mu, r = lipschitz(p), p.l2, p.radius
    x = y = np.zeros(p.d)
    t = 1.0
    for _ in range(12):
        x_new = project_l1_ball(y - full_grad(p, y) / L, r)
        if momentum == "fista":  # Beck & Teboulle (2009), FISTA with constant step
            t_new = (1 + math.sqrt(1 + 4 * t * t)) / 2
            q, t = (t - 1) / t_new, t_new
        else:  # Nesterov's constant momentum for mu-strongly convex f
            q = (math.sqrt(L) - math.sqrt(mu)) / (math.sqrt(L) + math.sqrt(mu))
        y, x = x_new + q * (x_new - x), x_new
        its, touched = k.run(1)
        assert (its, touched) == (1, 2 * p.nnz + p.d)
        assert_close(k.iterates()[0], x, "acc_pg x")


def f_value(p, x):
    z = p.mat @ x
    if p.loss == "squared":
        vals = 0.5 * (z - p.b) ** 2
    else:  # smooth hinge: 1/2 - m for m < 0, (1 - m)^2 / 2 on [0, 1], 0 above
        m = p.b * z
        vals = np.where(m < 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0))
    return vals.mean() + 0.5 * p.l2 * x @ x


@pytest.mark.parametrize("momentum", ["nesterov", "fista"])
@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
def test_acc_pg_backtracking_matches_transcription(momentum, loss):
    """Beck & Teboulle's backtracking: L from beta max ||a_i||^2 / n + mu, doubled until
    f(x) <= f(y) + <g, x - y> + L/2 ||x - y||^2; the momentum follows L."""
    p = problem(loss=loss)
    k = SOLVERS["acc_pg"].make_kernel(p, {"momentum": momentum, "lipschitz": "backtracking"})
    mu, r = p.l2, p.radius
    L = float(np.max(np.asarray(p.mat.multiply(p.mat).sum(axis=1)).ravel())) / p.n + mu
    assert k.lip == pytest.approx(L, rel=1e-14)
    x = y = np.zeros(p.d)
    t, doublings = 1.0, 0
    for it in range(15):
        g = full_grad(p, y)
        while True:
            x_new = project_l1_ball(y - g / L, r)
            dx = x_new - y
            fy = f_value(p, y)
            if f_value(p, x_new) <= fy + g @ dx + 0.5 * L * (dx @ dx) * (1 + 1e-12) + \
                    1e-15 * abs(fy):
                break
            L, doublings = 2 * L, doublings + 1
        if momentum == "fista":
            t_new = (1 + math.sqrt(1 + 4 * t * t)) / 2
            q, t = (t - 1) / t_new, t_new
        else:
            q = (math.sqrt(L) - math.sqrt(mu)) / (math.sqrt(L) + math.sqrt(mu))
        y, x = x_new + q * (x_new - x), x_new
        k.run(1)
        assert_close(k.iterates()[0], x, f"acc_pg x, iteration {it}")
        assert k.lip == pytest.approx(L, rel=1e-14) and k.backtracks == doublings
    if momentum == "nesterov":  # the cheap start was below L: the test did backtrack
        assert doublings >= 1
    assert L <= 2 * lipschitz(p)  # and never overshoots twice the true constant


def test_acc_pg_power_estimate():
    p = problem()
    k = SOLVERS["acc_pg"].make_kernel(p, {"lipschitz": "power"})
    sigma2 = np.linalg.norm(p.mat.toarray(), 2) ** 2
    from pdsparse.solvers.ball import POWER_SAFETY, power_norm_sq

    est = power_norm_sq(p)
    assert est <= sigma2 * (1 + 1e-12) and est >= 0.9 * sigma2
    assert k.lip == pytest.approx(POWER_SAFETY * est / p.n + p.l2, rel=1e-14)


@pytest.mark.parametrize("step", ["line_search", "open_loop"])
@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
def test_fw_matches_transcription(step, loss):
    p = problem(r=2.0, mu=0.01, loss=loss)
    k = SOLVERS["fw"].make_kernel(p, {"step": step})
    r, mu = p.radius, p.l2
    x = np.zeros(p.d)
    for t in range(25):
        g = full_grad(p, x)
        j = int(np.argmax(np.abs(g)))
        v = np.zeros(p.d)
        v[j] = -r if g[j] > 0 else r
        if step == "open_loop":
            gamma = 2 / (t + 2)
        else:  # exact: the minimizer of P on the segment (grid-checked above)
            s = v - x
            gamma = exact_step(loss, p.mat @ x, p.mat @ s, p.b, mu, x @ s, s @ s)
        x = (1 - gamma) * x + gamma * v
        k.run(1)
        assert_close(k.iterates()[0], x, f"fw x at t={t}")


@pytest.mark.parametrize("snapshot", ["last", "average"])
def test_svrg_matches_transcription(snapshot):
    p = problem(n=30, d=20)
    opts = SVRGOptions(step="x5", inner="7", snapshot=snapshot)
    k = SOLVERS["svrg"].make_kernel(p, opts, seed=5)
    st = _sampling.seed_state(5)
    eta = 5 * 0.1 / (np.max(p.row_sqnorms) + p.l2)  # 0.1 / L_max, times 5
    assert math.isclose(k.eta, eta, rel_tol=1e-15) and k.m == 7
    x = np.zeros(p.d)
    for _ in range(3):
        xs = x.copy()
        zs = p.mat @ xs
        gs = p.mat.T @ dphi(p.loss, zs, p.b) / p.n
        total = np.zeros(p.d)
        for inner in range(7):
            i = int(_sampling.uniform_ints(st, p.n, 1)[0])
            cols, vals = row(p, i)
            c = dphi(p.loss, vals @ x[cols], p.b[i]) - dphi(p.loss, zs[i], p.b[i])
            v = gs + p.l2 * x  # grad f_i(x) - grad f_i(x~) + grad f(x~): the mu x term exact
            v[cols] += c * vals
            x = project_l1_ball(x - eta * v, p.radius)
            total += x
            if inner == 6 and snapshot == "average":
                x = total / 7  # Prox-SVRG: the next snapshot (and start) is the mean
            step(k)
            assert_close(k.iterates()[0], x, "svrg x")


@pytest.mark.parametrize("batch", ["theory", "5"])
def test_scgs_matches_transcription(batch):
    p = problem(r=2.0, mu=0.01)
    opts = SCGSOptions(batch=batch)
    k = SOLVERS["scgs"].make_kernel(p, opts, seed=7)
    st = _sampling.seed_state(7)
    L, D, sigma2 = lipschitz(p), 2 * p.radius, np.mean(p.row_sqnorms)
    x = y = np.zeros(p.d)
    sizes = []
    for it in range(1, 9):
        gamma, beta, eta = 3 / (it + 2), 4 * L / (it + 2), L * D * D / (it * (it + 1))
        B = min(p.n, math.ceil(sigma2 * (it + 2) ** 3 / (L * L * D * D))) if batch == "theory" \
            else 5
        z = (1 - gamma) * y + gamma * x
        if B >= p.n:
            g = full_grad(p, z)  # a batch of n: the exact gradient
        else:
            g = minibatch(p, z, _sampling.uniform_ints(st, p.n, B))
        x = py_cndg(g, x, beta, eta, p.radius)
        y = (1 - gamma) * y + gamma * x
        sizes.append(B)
        k.run(1)
        assert_close(k.iterates()[0], y, f"scgs y at k={it}")
    assert k.batches == sizes
    if batch == "theory":
        assert sizes[0] < p.n and sizes[-1] == p.n  # both paths ran


@pytest.mark.parametrize("opts", [{}, {"batch": "theory"}, {"inner": "4", "batch": "6"}])
def test_storc_matches_transcription(opts):
    p = problem(r=2.0, mu=0.01)
    k = SOLVERS["storc"].make_kernel(p, STORCOptions(**opts), seed=9)
    st = _sampling.seed_state(9)
    L, mu, D, r = lipschitz(p), p.l2, 2 * p.radius, p.radius
    g0 = full_grad(p, np.zeros(p.d))  # line 3: w_0 = argmin <grad f(0), w>, a vertex
    w = np.zeros(p.d)
    w[np.argmax(np.abs(g0))] = -r * np.sign(g0[np.argmax(np.abs(g0))])
    N = int(opts.get("inner", math.ceil(math.sqrt(32 * L / mu))))  # the strongly convex case
    done = 0
    for t in (1, 2, 3):
        x = y = w
        zs = p.mat @ w
        gs = p.mat.T @ dphi(p.loss, zs, p.b) / p.n
        dt2 = (L / mu) * D * D / 2 ** (t - 1)
        for it in range(1, N + 1):
            gamma, beta, eta = 2 / (it + 1), 3 * L / it, 2 * L * dt2 / (N * it)
            batch = opts.get("batch", "100")  # the default: a constant 100 (>= n here)
            m = min(p.n, math.ceil(5600 * N * it)) if batch == "theory" else int(batch)
            z = (1 - gamma) * y + gamma * x
            if m >= p.n:
                g = full_grad(p, z)
            else:
                g = minibatch(p, z, _sampling.uniform_ints(st, p.n, m), zs, gs)
            x = py_cndg(g, x, beta, eta, r)
            y = (1 - gamma) * y + gamma * x
            k.run(1)
            done += 1
            assert_close(k.iterates()[0], y, f"storc y at t={t}, k={it}")
            if done == 30:
                return
        w = y


@pytest.mark.parametrize("name", ["svrg", "scgs", "storc"])
def test_chunked_runs_reproduce_one_run(name):
    p = problem(r=2.0, mu=0.01)
    opts = {"svrg": {"inner": "9"}, "scgs": {"batch": "4"}, "storc": {"inner": "5",
                                                                       "batch": "4"}}[name]
    one = SOLVERS[name].make_kernel(p, opts, seed=3)
    its, touched = one.run(40 * p.nnz)
    chunked = SOLVERS[name].make_kernel(p, opts, seed=3)
    done = 0
    while done < its:
        done += chunked.run(1)[0]
    assert done == its
    np.testing.assert_array_equal(one.iterates()[0], chunked.iterates()[0])


# -- convergence ------------------------------------------------------------------------------

def relgap(p, x):
    P, _, gap = objective.evaluate(p, x)
    return gap / abs(P)


@pytest.mark.parametrize("name, opts", [("acc_pg", {}), ("acc_pg", {"momentum": "fista"}),
                                        ("acc_pg", {"lipschitz": "power"}),
                                        ("acc_pg", {"lipschitz": "backtracking"}),
                                        ("acc_pg", {"lipschitz": "backtracking",
                                                    "momentum": "fista"}),
                                        ("svrg", {}), ("svrg", {"step": "x10"}),
                                        ("svrg", {"step": "x0_3"}), ("storc", {}),
                                        ("storc", {"step": "x3"}),
                                        ("storc", {"step": "x0_3"}), ("fw", {})])
@pytest.mark.parametrize("r", [0.5, 1000.0])
def test_certified_gap_and_agreement(name, opts, r):
    """Relative gap <= 1e-8, certified, with the constraint active (r = 0.5) and inactive
    (r = 1000). FW with line search gets there on these mu = 0.05 problems (measured: about
    420 iterations; FW's proven rate is only O(1/t), see the next test)."""
    p = problem(r=r)
    res = solve(p, name, options=opts, tol=1e-8, max_epochs=20000, max_seconds=20, seed=1)
    assert res.status == "converged" and relgap(p, res.w) <= 1e-8
    ref = reference_solution(p)
    assert abs(objective.primal(p, res.w) - ref.p_star) <= 2e-8 * abs(ref.p_star)
    # mu-strong convexity: ||x - x*||^2 <= 2 (P(x) - P*) / mu
    assert np.linalg.norm(res.w - ref.w) <= math.sqrt(2 * 2e-8 * ref.p_star / p.l2) * 2
    l1 = np.abs(res.w).sum()
    assert (math.isclose(l1, r, rel_tol=1e-9) if r == 0.5 else l1 < 0.1 * r)


def test_agreement_with_an_independent_solver():
    """SLSQP on the split variables x = u - w (u, w >= 0, sum u + w <= r)."""
    p = problem(r=0.5, n=30, d=8)
    A = p.mat.toarray()

    def P(s):
        m = p.b * (A @ (s[:8] - s[8:]))
        h = np.where(m <= 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0))
        return h.mean() + p.l2 / 2 * np.sum((s[:8] - s[8:]) ** 2)

    res = so.minimize(P, np.zeros(16), method="SLSQP", bounds=[(0, None)] * 16,
                      constraints=[{"type": "ineq", "fun": lambda s: p.radius - s.sum()}],
                      options={"ftol": 1e-15, "maxiter": 1000})
    ours = solve(p, "acc_pg", tol=1e-10, max_epochs=5000)
    assert objective.primal(p, ours.w) <= res.fun + 1e-12
    assert res.fun - objective.primal(p, ours.w) <= 1e-8
    np.testing.assert_allclose(ours.w, res.x[:8] - res.x[8:], atol=1e-4)


@pytest.mark.parametrize("step", ["line_search", "open_loop"])
def test_fw_rate(step):
    """Jaggi (2013), Theorem 1: P(x_t) - P* <= 2 C_f / (t + 2), C_f <= L D^2 (D = 2r), for
    both steps (measured ratios stay below 0.03), and the relative gap reached in 300
    iterations. mu = 0: the plain sublinear case."""
    p = problem(r=3.0, mu=0.0)
    p_star = reference_solution(p).p_star
    k = SOLVERS["fw"].make_kernel(p, {"step": step})
    LD2 = lipschitz(p) * (2 * p.radius) ** 2
    for t in range(1, 301):
        k.run(1)
        assert objective.primal(p, k.iterates()[0]) - p_star <= 2 * LD2 / (t + 2)
    assert relgap(p, k.iterates()[0]) <= 0.1  # measured: 0.056 (line search), 0.071


def test_scgs_rate_and_tolerance():
    """SCGS is sublinear: Lan & Zhou's bound E f(y_k) - f* <= c L D^2 / ((k + 1)(k + 2)),
    checked with c = 6 (the constant could not be checked against the paper; measured
    ratios stay below 1.7), and the tolerance reached in 800 iterations (measured 2.4e-4)."""
    p = problem(r=2.0, mu=1e-3)
    p_star = reference_solution(p).p_star
    k = SOLVERS["scgs"].make_kernel(p)
    LD2 = lipschitz(p) * (2 * p.radius) ** 2
    for it in range(1, 801):
        k.run(1)
        assert objective.primal(p, k.iterates()[0]) - p_star <= 6 * LD2 / ((it + 1) * (it + 2))
    assert relgap(p, k.iterates()[0]) <= 1e-3
    assert k.cndg_capped == 0


@pytest.mark.parametrize("step", ["x0_3", "x3"])
def test_scgs_step_multipliers_reach_a_certified_gap(step):
    """SCGS with its parameters taken at L / c (``step``) still converges: a certified 1e-3
    gap, the agreement with P* that certifies (measured on 2000 x 400: 0.011 s with x3,
    0.025 s with theory, 0.048 s with x0_3)."""
    p = problem(r=2.0, mu=1e-3)
    res = solve(p, "scgs", options={"step": step}, tol=1e-3, max_epochs=20000,
                max_seconds=60, seed=1)
    assert res.status == "converged" and relgap(p, res.w) <= 1e-3
    assert objective.primal(p, res.w) - reference_solution(p).p_star <= 1e-3 * abs(
        objective.primal(p, res.w))


def test_storc_theorem_bound():
    """Hazan & Luo, strongly convex case: E f(w_t) - f* <= L D^2 / 2^(t + 1) at every
    snapshot (with batch=theory: the exact gradients of a batch >= n)."""
    p = problem(r=2.0, mu=1e-3)
    p_star = reference_solution(p).p_star
    k = SOLVERS["storc"].make_kernel(p, {"batch": "theory"})
    LD2 = lipschitz(p) * (2 * p.radius) ** 2
    for t in range(1, 9):
        while True:
            k.run(1)
            if k.k == 0:
                break
        assert objective.primal(p, k.iterates()[0]) - p_star <= LD2 / 2 ** (t + 1)


# -- options, dispatch, errors ----------------------------------------------------------------

def test_options_are_validated():
    with pytest.raises(ConfigError, match=r"svrg: unknown inner '3m'.*'2n'"):
        SVRGOptions(inner="3m")
    with pytest.raises(ConfigError, match="scgs: unknown batch_cap 'all'"):
        SCGSOptions(batch_cap="all")
    with pytest.raises(ConfigError, match="did you mean 'nesterov'"):
        SOLVERS["acc_pg"].parse_options({"momentum": "nesterof"})
    assert STORCOptions(batch=100).batch == "100" and SVRGOptions(inner="007").inner == "7"
    assert SCGSOptions(batch_cap="none").batch_cap == "none"


def test_bad_problems_are_refused():
    p0 = problem(mu=0.0)
    with pytest.raises(ConfigError,
                       match=r"momentum=nesterov .* needs l2 > 0; .* acc_pg \(momentum=fista\)"):
        SOLVERS["acc_pg"].make_kernel(p0)
    with pytest.raises(ConfigError, match="line_search.*not 'logistic'"):
        SOLVERS["fw"].make_kernel(problem(loss="logistic"))
    SOLVERS["fw"].make_kernel(problem(loss="logistic"), {"step": "open_loop"})
    A, b = make_data(n=20, d=6, loss="smooth_hinge")
    for name in BALL:
        with pytest.raises(ConfigError, match=f"{name} solves an l1-ball.*ElasticNet"):
            SOLVERS[name].make_kernel(Problem(A, b, "smooth_hinge", penalty=ElasticNet(0.1)))
        with pytest.raises(ConfigError, match="label matrix"):
            SOLVERS[name].make_kernel(Problem(A, np.column_stack([b, -b]), "smooth_hinge",
                                              penalty=L1Ball(1.0, 0.1)))
        with pytest.raises(ConfigError, match="outside the l1 ball"):
            SOLVERS[name].make_kernel(Problem(A, b, "smooth_hinge",
                                              penalty=L1Ball(1.0, 0.1)), start=np.ones(6))


def test_trace_ball_goes_to_the_trace_kernels(monkeypatch):
    from pdsparse.solvers import trace

    calls = []
    monkeypatch.setattr(trace, "trace_kernel",
                        lambda *args: calls.append(args) or "trace kernel")
    A, B = make_data(n=20, d=6, loss="squared")[0], np.ones((20, 3))
    p = Problem(A, B, "squared", penalty=TraceBall(1.0, 0.1))
    for name in BALL:
        assert SOLVERS[name].make_kernel(p, None, 4) == "trace kernel"
        assert calls[-1][0] == name and calls[-1][1] is p and calls[-1][3] == 4
        assert isinstance(calls[-1][2], SOLVERS[name].options)


def test_warm_start_and_work_units():
    p = problem(r=2.0, mu=0.01)
    x0 = project_l1_ball(np.ones(p.d), 1.0)
    for kernel in (AccPGKernel, FWKernel, SVRGKernel, SCGSKernel, STORCKernel):
        k = kernel(p, None, 0, w0=x0)
        np.testing.assert_array_equal(k.iterates()[0], x0)
        its, touched = k.run(1)
        assert its >= 0 and touched >= p.d
    its, touched = SVRGKernel(p, SVRGOptions(inner="3"), 0).run(10**5)
    assert its > 0 and 10**5 <= touched < 10**5 + 2 * p.nnz + 3 * (2 * p.nnz + p.d)


@pytest.mark.parametrize("name", BALL)
def test_dense_data_gives_the_sparse_iterates(name):
    """The same kernels on a dense copy of A (rows through BLAS, FW's column strided)."""
    A, b = make_data(n=30, d=12, seed=4, loss="smooth_hinge")
    opts = {"scgs": {"batch": "5"}, "storc": {"inner": "4", "batch": "5"}}.get(name)
    runs = []
    for mat in (A, A.toarray()):
        p = Problem(mat, b, "smooth_hinge", penalty=L1Ball(2.0, 0.01))
        k = SOLVERS[name].make_kernel(p, opts, seed=2)
        for _ in range(15):
            step(k)
        runs.append(k.iterates()[0])
    assert_close(runs[1], runs[0], f"{name} dense vs sparse")


@pytest.mark.parametrize(("n", "d", "density", "dense"), [
    (44, 3000, 0.9, False),   # short side: Gram of A A^T
    (3000, 40, 0.5, True),    # short side: Gram of A^T A, dense A
    (2, 50, 1.0, True),       # a side shorter than 3
    (2500, 2100, 0.002, False),  # both sides long: ARPACK
])
def test_spectral_norm_is_exact_on_every_branch(n, d, density, dense):
    import scipy.sparse as sp

    from pdsparse.solvers.ball import _NORM_CACHE, spectral_norm_sq

    rng = np.random.default_rng(n + d)
    A = sp.random(n, d, density=density, random_state=rng, format="csr")
    A = A + sp.csr_matrix((np.ones(min(n, d)), (np.arange(min(n, d)),) * 2), shape=(n, d))
    b = rng.choice([-1.0, 1.0], size=n)
    p = Problem(A.toarray() if dense else A.tocsr(), b, "smooth_hinge",
                penalty=L1Ball(1.0, 0.1))
    _NORM_CACHE.clear()
    expected = np.linalg.norm(A.toarray(), 2) ** 2
    assert spectral_norm_sq(p) == pytest.approx(expected, rel=1e-10)


def test_smooth_value_is_p_inside_the_ball_and_finite_outside():
    """Backtracking needs f at the extrapolated y, which may leave the ball."""
    p = problem(loss="squared")
    rng = np.random.default_rng(0)
    inside = project_l1_ball(rng.standard_normal(p.d), p.radius)
    assert objective.smooth_value(p, inside) == pytest.approx(objective.primal(p, inside),
                                                              rel=1e-14)
    outside = 10 * inside
    assert math.isinf(objective.primal(p, outside))
    assert objective.smooth_value(p, outside) == pytest.approx(f_value(p, outside), rel=1e-13)
    assert objective.smooth_value(p, outside, p.mat @ outside) == objective.smooth_value(p,
                                                                                        outside)
