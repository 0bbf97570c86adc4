"""The scalar losses against definitions computed independently with scipy."""

import numpy as np
import pytest
import scipy.optimize as so
from scipy.special import expit

from pdsparse import losses

LOSS_NAMES = ["logistic", "squared", "smooth_hinge"]


def ref_value(name, z, b):
    if name == "logistic":
        return np.logaddexp(0.0, -b * z)
    if name == "squared":
        return 0.5 * (z - b) ** 2
    m = b * z
    return np.where(m <= 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0))


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_value_and_derivative(name):
    cid = losses.get_loss(name).cid
    rng = np.random.default_rng(1)
    z = np.concatenate([rng.normal(0, 3, 200), [-800.0, 800.0, 0.0, 1.0, -1.0]])
    b = rng.choice([-1.0, 1.0], z.size) if name != "squared" else rng.normal(size=z.size)
    np.testing.assert_allclose(losses.values(cid, z, b), ref_value(name, z, b), rtol=1e-13,
                               atol=1e-300)
    h = 1e-6
    num = (ref_value(name, z + h, b) - ref_value(name, z - h, b)) / (2 * h)
    # atol covers the O(h) error of the difference quotient at the smooth hinge's knee
    np.testing.assert_allclose(losses.derivs(cid, z, b), num, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_conjugate_is_the_fenchel_conjugate(name):
    """phi^*(-alpha) = sup_z (-alpha z - phi(z)), maximized numerically."""
    cid = losses.get_loss(name).cid
    rng = np.random.default_rng(2)
    for _ in range(20):
        b = rng.choice([-1.0, 1.0]) if name != "squared" else rng.normal()
        z0 = rng.normal(0, 2)
        alpha = -losses.derivs(cid, np.array([z0]), np.array([b]))[0]
        res = so.minimize_scalar(lambda z, a=alpha, b=b: a * z + ref_value(name, z, b),
                                 bounds=(z0 - 50, z0 + 50), method="bounded",
                                 options={"xatol": 1e-12})
        got = losses.conj_neg(cid, np.array([alpha]), np.array([b]))[0]
        assert got == pytest.approx(-res.fun, abs=1e-8)
        # Fenchel-Young holds with equality at alpha = -phi'(z0)
        assert got == pytest.approx(-alpha * z0 - ref_value(name, z0, b), abs=1e-12)


@pytest.mark.parametrize("name", ["logistic", "smooth_hinge"])
def test_conjugate_domain(name):
    cid = losses.get_loss(name).cid
    b = np.array([1.0, -1.0, 1.0])
    out = losses.conj_neg(cid, np.array([1.5, 0.5, -0.1]), b)
    assert np.isinf(out[0]) and np.isinf(out[1]) and np.isinf(out[2])
    assert np.isfinite(losses.conj_neg(cid, np.array([0.0, -1.0]), b[:2])).all()


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_exact_dual_step_maximizes_the_model(name):
    """The kernels' 1-D step is the argmax of Algorithm 2's model (bounded scalar search)."""
    cid = losses.get_loss(name).cid
    rng = np.random.default_rng(3)
    for _ in range(40):
        b = rng.choice([-1.0, 1.0]) if name != "squared" else rng.normal()
        alpha = b * rng.uniform(0, 1) if name != "squared" else rng.normal()
        z = rng.normal(0, 3)
        q = 10 ** rng.uniform(-3, 3)

        def neg_model(a, alpha=alpha, b=b, z=z, q=q):
            c = losses.conj_neg(cid, np.array([a]), np.array([b]))[0]
            return c + (a - alpha) * z + 0.5 * q * (a - alpha) ** 2

        got = losses.dual_steps(cid, np.array([alpha]), np.array([b]), np.array([z]),
                                np.array([q]))[0]
        lo, hi = (min(0, b), max(0, b)) if name != "squared" else (alpha - 100, alpha + 100)
        res = so.minimize_scalar(neg_model, bounds=(lo, hi), method="bounded",
                                 options={"xatol": 1e-13})
        assert neg_model(got) <= res.fun + 1e-10
        assert got == pytest.approx(res.x, abs=1e-5)


def test_unknown_loss_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        losses.get_loss("hinge")


def test_logistic_derivative_is_accurate_to_a_few_ulp():
    """phi' uses the package's own exp (_fastexp.h); compare with glibc in long double."""
    rng = np.random.default_rng(7)
    z = np.concatenate([rng.normal(0, 5, 20000), rng.uniform(-760, 760, 2000),
                        [0.0, -0.0, 1e-300, -1e-300, 36.0, -36.0, 745.0, -745.0, 800.0]])
    b = rng.choice([-1.0, 1.0], z.size)
    got = losses.derivs(0, z, b)
    m = (b * z).astype(np.longdouble)
    want = (-b * (1.0 / (1.0 + np.exp(m)))).astype(np.float64)
    ok = want != 0
    rel = np.abs(got[ok] - want[ok]) / np.abs(want[ok])
    assert rel.max() <= 4 * np.finfo(float).eps
    assert np.all(np.abs(got[~ok]) < 1e-300)


def test_vectorised_logistic_column_gradient_matches_scalar_sum():
    rng = np.random.default_rng(8)
    for m in (0, 1, 2, 3, 4, 5, 6, 7, 17, 38, 1000):  # every tail length 1-3, with and without
        z = rng.normal(0, 3, 50)
        b = rng.choice([-1.0, 1.0], 50)
        idx = rng.integers(0, 50, m).astype(np.int32)
        val = rng.normal(size=m)
        got = losses.logistic_dot(val, idx, z, b)
        want = float(np.sum(losses.derivs(0, z[idx], b[idx]) * val))
        assert got == pytest.approx(want, rel=1e-13, abs=1e-15)


def _fast_deriv(z, b):
    """-b sigma(-b z) through the 4-lane kernel, one entry at a time (lane 0; the padding
    lanes add zeros)."""
    one, idx = np.ones(1), np.zeros(1, dtype=np.int32)
    return np.array([losses.logistic_dot(one, idx, z[j:j + 1], b[j:j + 1])
                     for j in range(z.size)])


def test_fast_logistic_derivative_is_accurate_on_both_exp_paths():
    """_fastexp.h: |b z| <= 708 takes the table exp with the power of two put in the
    exponent field; beyond it (subnormal exps, the clamp at -746, inf, NaN) the guarded
    path. Within 3 ulp of long double where the result is normal, within 2 units of the
    smallest subnormal below, 0 where the true value rounds to 0."""
    rng = np.random.default_rng(17)
    z = np.concatenate([rng.normal(0, 5, 4000), rng.uniform(-760, 760, 3000),
                        rng.uniform(700, 716, 1000), rng.uniform(-1e-3, 1e-3, 500),
                        [0.0, -0.0, 1e-300, 36.0, -36.0, 707.9, 708.0, 708.1, 745.0, 745.2,
                         746.0, 800.0, np.inf]])
    b = rng.choice([-1.0, 1.0], z.size)
    got = _fast_deriv(z, b)
    want = (-b * (1.0 / (1.0 + np.exp((b * z).astype(np.longdouble))))).astype(np.float64)
    tiny = np.finfo(float).tiny
    normal = np.abs(want) >= tiny
    ulps = np.abs(got - want)[normal] / np.spacing(np.abs(want[normal]))
    assert ulps.max() <= 3
    assert np.all(np.abs(got - want)[~normal] <= 2 * 5e-324)
    assert np.isnan(_fast_deriv(np.array([np.nan]), np.ones(1))[0])


def test_fast_logistic_lanes_do_not_depend_on_their_neighbours():
    """A group of four with one lane beyond |b z| = 708 takes the guarded exp for all four;
    each lane must still get the value it gets alone (results are a function of the data,
    not of how it falls into groups of four)."""
    rng = np.random.default_rng(5)
    z = np.concatenate([rng.normal(0, 4, 60), rng.uniform(708, 760, 20) * rng.choice([-1, 1], 20)])
    b = rng.choice([-1.0, 1.0], z.size)
    alone = _fast_deriv(z, b)
    idx = rng.permutation(z.size).astype(np.int32)
    for lane in range(4):
        val = np.zeros(z.size)
        val[lane::4] = 1.0  # one lane of every group; the others add exact zeros
        got = losses.logistic_dot(val, idx, z, b)
        lanes = idx[lane::4]
        # lane l sums its entries in order; the other lanes add +-0
        want = 0.0
        for j in lanes:
            want += alone[j]
        assert got == want


def test_logistic_dual_step_is_exact_for_extreme_curvature():
    """Safeguarded Newton: exact to rounding for q from 1e-4 to 1e6 and any start
    (plain Newton cycles when q is large and g is sigmoid-shaped)."""
    rng = np.random.default_rng(11)
    n = 2000
    b = rng.choice([-1.0, 1.0], n)
    alpha = b * rng.uniform(0, 1, n) * (rng.random(n) < 0.7)
    z = rng.normal(0, 5, n)
    q = 10 ** rng.uniform(-4, 6, n)
    got = losses.dual_steps(0, alpha, b, z, q)
    for j in range(n):
        t = b[j] * alpha[j]

        def g(s, j=j, t=t):
            return s + b[j] * z[j] + q[j] * (expit(s) - t)

        root = so.brentq(g, -b[j] * z[j] - q[j] * (1 - t) - 1, -b[j] * z[j] + q[j] * t + 1,
                         xtol=1e-300, rtol=1e-15)
        want = b[j] * expit(root)
        assert got[j] == pytest.approx(want, rel=1e-13, abs=1e-300)
