"""DGPD (Lei et al., ICML 2017), Algorithms 1 and 2: NumPy transcriptions iterate by iterate,
brute-force greedy selections, certified optima, chunking, active sets and their cost."""

import functools
import math

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

from pdsparse import losses, objective
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import SOLVERS, _dgpd, solve
from pdsparse.solvers.dgpd import (
    DGPDFullKernel,
    DGPDFullOptions,
    DGPDKernel,
    DGPDOptions,
    theorem_q_per_s,
)

SPECS = {name: SOLVERS[name] for name in ("dgpd", "dgpd_full")}
LOSS_IDS = {name: info.cid for name, info in losses.LOSSES.items()}


def make_problem(n=50, d=36, density=0.25, seed=0, loss="smooth_hinge", l2=0.1, l1=0.1,
                 dense=False):
    """A small sparse problem with unit rows (as random-binning features) and the l1 weight
    relative to the data: lambda = l1 * lambda_max, lambda_max = ||A^T phi'(0)||_inf / n the
    smallest lambda with x* = 0, so that l1 in {0.1, 0.01} gives sparse optima."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=density, random_state=rng, format="lil")
    for i in range(n):  # no empty row or column
        A[i, i % d] = rng.uniform(0.5, 1.5)
    A = A.tocsr()
    A.data = A.data * rng.choice([-1.0, 1.0], size=A.nnz)
    A = sp.diags(1.0 / np.sqrt(A.multiply(A).sum(axis=1).A1)) @ A
    planted = np.zeros(d)
    planted[rng.choice(d, 5, replace=False)] = 3 * rng.standard_normal(5)
    z = A @ planted + 0.1 * rng.standard_normal(n)
    b = z if loss == "squared" else np.where(z >= 0, 1.0, -1.0)
    dphi0 = losses.derivs(LOSS_IDS[loss], np.zeros(n), b)
    lmax = np.abs(A.T @ dphi0).max() / n
    return Problem(A.toarray() if dense else A, b, loss=loss, l2=l2, l1=l1 * lmax)


# ---- NumPy transcriptions of the paper's algorithms ----------------------------------------

def soft(v, l1, l2):
    """x_bar of eq. (4): soft(v, lambda) / mu, with v = u / n."""
    return np.where(v > l1, (v - l1) / l2, np.where(v < -l1, (v + l1) / l2, 0.0))


def g_coord(a, l1, l2):
    return 0.5 * l2 * a * a + l1 * np.abs(a)


def conj_deriv(loss, alpha, b):
    """(phi^*)'(y) at y = -alpha (squared, smooth hinge: y + b; logistic: b log((1 - t) / t))."""
    if loss == "logistic":
        t = b * alpha
        with np.errstate(divide="ignore"):
            return b * (np.log1p(-t) - np.log(t))
    return b - alpha


def dual_grad(loss, m, alpha, b):
    """<a_k, x> - (phi_k^*)'(y_k), zero where it points out of dom phi^* (projected)."""
    g = m - conj_deriv(loss, alpha, b)
    if loss != "squared":
        t = b * alpha
        out = ((t <= 0) & (b * g > 0)) | ((t >= 1) & (b * g < 0))
        g = np.where(out, 0.0, g)
    return g


def dual_step(p, alpha_i, b_i, z, q):
    """The house's 1-D dual step (``_losses.pxd``), which solves (8)/(13) with q = n / eta
    (``test_dual_step_is_the_dgpd_step``)."""
    return losses.dual_steps(p.loss_id, np.array([alpha_i]), np.array([b_i]), np.array([z]),
                             np.array([q]))[0]


def seqdot(vals, x, idx):
    """sum vals[t] x[idx[t]] in order (the kernel's accumulation order)."""
    acc = 0.0
    for v, k in zip(vals, idx, strict=True):
        acc += v * x[k]
    return acc


def py_dgpd_full(p, iters, q_per_s):
    """Algorithm 1 as printed (with (7) at the updated margins; see ``_dgpd``)."""
    A, C = p.csr, p.csc
    n, d, l1, l2, b = p.n, p.d, p.l1, p.l2, p.b
    inv_n = 1.0 / n
    x, alpha, m, u = np.zeros(d), np.zeros(n), np.zeros(n), np.zeros(d)
    out = []
    for _ in range(iters):
        v = u * inv_n
        xb = soft(v, l1, l2)
        moved = xb != x
        dk = np.where(moved, -v * (xb - x) + (g_coord(xb, l1, l2) - g_coord(x, l1, l2)), 0.0)
        j = int(np.argmin(dk))  # (5), lowest index on ties
        s = max(1, int(moved.sum()))
        work = d
        dx = xb[j] - x[j]
        if dx != 0:
            x[j] = xb[j]
            sl = slice(C.indptr[j], C.indptr[j + 1])
            m[C.indices[sl]] += dx * C.data[sl]  # (6)
            work += sl.stop - sl.start
        i = int(np.argmax(np.abs(dual_grad(p.loss, m, alpha, b))))  # (7)
        work += n
        new = dual_step(p, alpha[i], b[i], m[i], q_per_s * s)  # (8)
        da = new - alpha[i]
        if da != 0:
            alpha[i] = new
            sl = slice(A.indptr[i], A.indptr[i + 1])
            u[A.indices[sl]] += da * A.data[sl]  # (9)
            work += sl.stop - sl.start
        out.append(dict(x=x.copy(), alpha=alpha.copy(), j=j, i=i, s=s, work=work))
    return out


def top(values, eligible, size):
    """The ``size`` best eligible indices, largest value first, ties to the lowest index."""
    idx = np.flatnonzero(eligible)
    ranked = idx[np.lexsort((idx, -values[idx]))]
    return [int(k) for k in ranked[:size]]


def py_dgpd(p, iters, q_per_s, inner=5, batch=1, gauss_seidel=False, s_rule="active",
            q_fixed=None):
    """Algorithm 2 (Sec. 3.1-3.2, Sec. 5's inner passes) with the kernel's order of sums and
    its work count; full vectors, no touched lists (the kernel's lists only save work).

    The choices the paper leaves open: ``batch`` coordinates per search, ``gauss_seidel``
    (x_k refreshed on a row's columns after each dual step), ``s_rule`` "active" (s = |A_x|)
    or "moved" (s = ||x - x_bar(y)||_0 at the search), ``q_fixed`` (a step without s)."""
    A, C = p.csr, p.csc
    n, d, l1, l2, b = p.n, p.d, p.l1, p.l2, p.b
    inv_n = 1.0 / n
    order = np.argsort(-np.abs(b), kind="stable")
    x, alpha = np.zeros(d), np.zeros(n)
    Ax, Ay = [], []
    u = np.zeros(d)
    out = []

    def row(i):
        sl = slice(A.indptr[i], A.indptr[i + 1])
        return A.indices[sl], A.data[sl]

    def col(j):
        sl = slice(C.indptr[j], C.indptr[j + 1])
        return C.indices[sl], C.data[sl]

    for _ in range(iters):
        search = 0
        # (10) with (14): u = A^T alpha from the active rows
        u = np.zeros(d)
        for i in Ay:
            idx, val = row(i)
            for k, a in zip(idx, val, strict=True):
                u[k] += alpha[i] * a
            search += idx.size
        reached = np.bincount(np.concatenate([row(i)[0] for i in Ay] + [np.zeros(0, int)]),
                              minlength=d) > 0
        search += int(reached.sum())
        moved = int(np.count_nonzero(soft(u * inv_n, l1, l2) != x))
        if s_rule == "moved":
            search += len(Ax)
        cand = np.abs(u) * inv_n > l1
        cand[Ax] = False
        new_cols = top(np.abs(u), cand, batch)
        j = new_cols[0] if new_cols else -1
        Ax += new_cols
        # (11)
        for k in Ax:
            x[k] = soft(u[k] * inv_n, l1, l2)
        work = len(Ax)
        # (12) with (14): m = A x from the active columns
        m = np.zeros(n)
        touched = np.zeros(n, bool)
        for k in Ax:
            if x[k] != 0:
                idx, val = col(k)
                for r, a in zip(idx, val, strict=True):
                    m[r] += x[k] * a
                touched[idx] = True
                search += idx.size
        search += int(touched.sum())
        free = np.ones(n, bool)
        free[Ay] = False
        gk = np.abs(dual_grad(p.loss, m, alpha, b))
        walk = [t for t, r in enumerate(order) if free[r] and not touched[r]]
        # rows reached by A_x compete, and of the others the first ``batch`` in |b| order
        eligible = free & touched
        eligible[order[walk[:batch]]] = True
        new_rows = top(gk, eligible & (gk > 0), batch)
        search += walk[batch - 1] + 1 if len(walk) >= batch else n
        i = new_rows[0] if new_rows else -1
        Ay += new_rows
        # the active submatrix: rows of A_y (in order) restricted to the columns of A_x
        inx = np.zeros(d, bool)
        inx[Ax] = True
        sub = []
        for r in Ay:
            idx, val = row(r)
            sub.append((idx[inx[idx]], val[inx[idx]]))
            search += idx.size
        s = max(1, moved if s_rule == "moved" else len(Ax))
        q = q_fixed if q_fixed is not None else q_per_s * s
        for pss in range(inner):
            if pss > 0 and not gauss_seidel:
                for k in Ax:
                    x[k] = soft(u[k] * inv_n, l1, l2)  # (11)
                work += len(Ax)
            for r, (idx, val) in zip(Ay, sub, strict=True):
                mi = seqdot(val, x, idx)
                new = dual_step(p, alpha[r], b[r], mi, q)  # (13)
                work += idx.size + 1
                if new != alpha[r]:
                    da = new - alpha[r]
                    alpha[r] = new
                    for k, a in zip(idx, val, strict=True):
                        u[k] += da * a
                    work += idx.size
                    if gauss_seidel:
                        x[idx] = soft(u[idx] * inv_n, l1, l2)
                        work += idx.size
        # step 6: kick out zeros
        Ax = [k for k in Ax if x[k] != 0]
        Ay = [r for r in Ay if alpha[r] != 0]
        total = search + work
        out.append(dict(x=x.copy(), alpha=alpha.copy(), j=j, i=i, Ax=list(Ax), Ay=list(Ay),
                        work=max(total, 1), subnnz=sum(r[0].size for r in sub), s=s))
    return out


# ---- (a) transcriptions iterate by iterate ----------------------------------------------------

@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
@pytest.mark.parametrize("eta", ["theorem", "x100"])
def test_algorithm1_matches_transcription(loss, eta):
    p = make_problem(n=30, d=20, loss=loss, l2=0.1, l1=0.05)
    k = DGPDFullKernel(p, DGPDFullOptions(eta=eta))
    ref = py_dgpd_full(p, 300, k.q_per_s)
    for t, r in enumerate(ref):
        assert k.run(1) == (1, r["work"]), t
        np.testing.assert_array_equal(k.x, r["x"], err_msg=f"iteration {t}")
        np.testing.assert_array_equal(k.alpha, r["alpha"], err_msg=f"iteration {t}")
        assert (k.counter("j"), k.counter("i"), k.counter("s")) == (r["j"], r["i"], r["s"])
    np.testing.assert_allclose(k.m, p.csr @ k.x, atol=1e-12)
    np.testing.assert_allclose(k.u, p.csr.T @ k.alpha, atol=1e-12)
    assert np.count_nonzero(k.x) >= 2 and np.count_nonzero(k.alpha) > 10


@pytest.mark.parametrize("loss,l2,l1", [("smooth_hinge", 0.1, 0.05), ("squared", 0.1, 0.05),
                                         ("smooth_hinge", 0.003, 0.01)])  # rows leave A_y
@pytest.mark.parametrize("inner", ["1", "5"])
def test_algorithm2_matches_transcription(loss, l2, l1, inner):
    p = make_problem(n=30, d=20, loss=loss, l2=l2, l1=l1)
    k = DGPDKernel(p, DGPDOptions(inner=inner, eta="x10"))
    ref = py_dgpd(p, 60, k.q_per_s, inner=int(inner))
    for t, r in enumerate(ref):
        assert k.run(1) == (1, r["work"]), t
        np.testing.assert_array_equal(k.x, r["x"], err_msg=f"iteration {t}")
        np.testing.assert_array_equal(k.alpha, r["alpha"], err_msg=f"iteration {t}")
        ax, ay = k.active()
        assert ax.tolist() == r["Ax"] and ay.tolist() == r["Ay"]
        assert (k.counter("j"), k.counter("i"), k.counter("subnnz")) == (r["j"], r["i"],
                                                                           r["subnnz"])
    assert len(r["Ax"]) > 2 and len(r["Ay"]) > 10


VARIANTS = [  # (options, transcription keywords): the choices the paper leaves open
    ({"batch": "3"}, {"batch": 3}),
    ({"passes": "gauss_seidel"}, {"gauss_seidel": True}),
    ({"step": "eq16"}, {"s_rule": "moved"}),
    ({"batch": "4", "passes": "gauss_seidel", "step": "curvature", "eta": "x10"},
     {"batch": 4, "gauss_seidel": True, "curvature": True}),
]


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("loss,l2,l1", [("smooth_hinge", 0.1, 0.05), ("squared", 0.1, 0.05),
                                         ("smooth_hinge", 0.003, 0.01)])
@pytest.mark.parametrize("options,kw", VARIANTS)
def test_algorithm2_variants_match_transcription(options, kw, loss, l2, l1, dense):
    p = make_problem(n=30, d=20, loss=loss, l2=l2, l1=l1, dense=dense)
    options = {"inner": "3", "eta": "x10", **options}
    k = DGPDKernel(p, DGPDOptions(**options))
    kw = dict(kw)
    if kw.pop("curvature", False):
        kw["q_fixed"] = np.max(p.row_sqnorms) / (p.n * p.l2) / 10
        assert k.q_fixed == pytest.approx(kw["q_fixed"], rel=1e-14)
    sparse = make_problem(n=30, d=20, loss=loss, l2=l2, l1=l1)  # the same rows, as CSR
    ref = py_dgpd(sparse, 40, k.q_per_s, inner=3, **kw)
    for t, r in enumerate(ref):
        it, work = k.run(1)
        assert it == 1, t
        if dense:  # the submatrix in A_x order, the searches scan n + d: same to rounding
            np.testing.assert_allclose(k.x, r["x"], rtol=1e-10, atol=1e-15, err_msg=str(t))
            np.testing.assert_allclose(k.alpha, r["alpha"], rtol=1e-10, atol=1e-15,
                                       err_msg=str(t))
        else:
            assert work == r["work"], t
            np.testing.assert_array_equal(k.x, r["x"], err_msg=f"iteration {t}")
            np.testing.assert_array_equal(k.alpha, r["alpha"], err_msg=f"iteration {t}")
        ax, ay = k.active()
        assert ax.tolist() == r["Ax"] and ay.tolist() == r["Ay"], t
        assert (k.counter("j"), k.counter("i")) == (r["j"], r["i"]), t
        if "q_fixed" not in kw:
            assert k.counter("s") == r["s"], t
    assert max(len(a["Ax"]) for a in ref) > 2 and max(len(a["Ay"]) for a in ref) > 5
    if kw.get("batch", 1) > 1:  # a search did add a batch
        assert max(len(a["Ay"]) for a in ref[:3]) >= 2 * kw["batch"] - 1


def test_batch_of_one_and_defaults_are_the_printed_algorithm():
    """The late options at their values as printed give the printed runs and the old tags."""
    p = make_problem(n=30, d=20, l2=0.1, l1=0.05)
    a = DGPDKernel(p, DGPDOptions(inner="5", eta="x10"))
    b = DGPDKernel(p, DGPDOptions(inner="5", eta="x10", batch="1", passes="jacobi",
                                  step="theorem"))
    for _ in range(30):
        assert a.run(1) == b.run(1)
    np.testing.assert_array_equal(a.x, b.x)
    spec = SPECS["dgpd"]
    assert spec.tag({"inner": "5", "eta": "x10"}) == "5-x10"
    assert spec.tag({"inner": "5", "eta": "x10", "passes": "gauss_seidel"}) == (
        "5-x10-1-gauss_seidel")
    assert spec.tag({"batch": "8"}) == "5-theorem-8"
    assert spec.tag({"step": "curvature", "batch": 1}) == "5-theorem-1-jacobi-curvature"


def test_logistic_transcriptions_agree_to_rounding():
    """Logistic: (phi^*)' takes a log (glibc in the kernel, NumPy here): equal to rounding."""
    p = make_problem(n=25, d=15, loss="logistic", l2=0.1, l1=0.02)
    k1 = DGPDFullKernel(p, DGPDFullOptions(eta="x100"))
    k2 = DGPDKernel(p, DGPDOptions(inner="3", eta="x10"))
    r1 = py_dgpd_full(p, 80, k1.q_per_s)
    r2 = py_dgpd(p, 40, k2.q_per_s, inner=3)
    for kern, ref in ((k1, r1), (k2, r2)):
        for t, r in enumerate(ref):
            kern.run(1)
            np.testing.assert_allclose(kern.x, r["x"], rtol=1e-10, atol=1e-13, err_msg=str(t))
            np.testing.assert_allclose(kern.alpha, r["alpha"], rtol=1e-10, atol=1e-13)
            assert (kern.counter("j"), kern.counter("i")) == (r["j"], r["i"])


# ---- (b) greedy selections against brute force on the true quantities ---------------------

def saddle(p, x, alpha):
    """L(x, y) of eq. (3) at y = -alpha, from the house's objective pieces only."""
    return (p.penalty.add_value(0.0, x) - alpha @ (p.mat @ x) / p.n
            - losses.conj_neg(p.loss_id, alpha, p.b).sum() / p.n)


def grad_y(p, x, alpha, k):
    """n dL/dy_k by a one-sided second-order difference of L into dom phi_k^* (exact for the
    quadratic conjugates), projected: the largest ascent slope over the feasible directions
    +-y_k (0 if none ascends)."""
    def L(step):
        a = alpha.copy()
        a[k] -= step  # y_k + step
        return saddle(p, x, a) * p.n

    best = 0.0
    for sgn in (1.0, -1.0):  # y_k + sgn h: alpha_k - sgn h, t = b alpha moves by -b sgn h
        if p.loss == "squared":
            room = math.inf
        else:
            t = p.b[k] * alpha[k]
            room = t if -p.b[k] * sgn < 0 else 1.0 - t
        if room <= 0:
            continue
        h = min(1e-4, room / 2)
        vals = [L(sgn * h * s) for s in (0, 1, 2)]
        slope = (-3 * vals[0] + 4 * vals[1] - vals[2]) / (2 * h)
        best = max(best, slope)
    return best


@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
def test_algorithm1_selections_are_brute_force_argmax(loss):
    p = make_problem(n=24, d=16, loss=loss, l2=0.2, l1=0.05)
    k = DGPDFullKernel(p, DGPDFullOptions(eta="x100"))
    for t in range(40):
        x0, a0 = k.x.copy(), k.alpha.copy()
        k.run(1)
        xbar = objective.w_of_alpha(p, a0)
        # (5): the coordinate of most descent of L(., y)
        base = saddle(p, x0, a0)
        drop = np.array([saddle(p, x0 + (xbar[c] - x0[c]) * np.eye(p.d)[c], a0) - base
                         for c in range(p.d)])
        j = k.counter("j")
        assert drop[j] <= drop.min() + 1e-12, t
        assert k.x[j] == pytest.approx(xbar[j], rel=1e-12, abs=1e-15)
        assert k.counter("s") == max(1, int(np.sum(~np.isclose(xbar, x0, rtol=1e-12,
                                                               atol=1e-15))))
        # (7): Gauss-Southwell on the gradient of L in y at the updated x
        x1 = x0.copy()
        x1[j] = k.x[j]
        g = np.array([grad_y(p, x1, a0, c) for c in range(p.n)])
        assert g[k.counter("i")] >= g.max() * (1 - 1e-6) - 1e-9, t


@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
def test_algorithm2_searches_are_brute_force_argmax(loss):
    p = make_problem(n=24, d=16, loss=loss, l2=0.2, l1=0.05)
    k = DGPDKernel(p, DGPDOptions(inner="3", eta="x10"))
    for t in range(25):
        a0 = k.alpha.copy()
        ax0, ay0 = k.active()
        k.run(1)
        # (10): argmax |x_bar_k(y)| outside A_x
        xbar = objective.w_of_alpha(p, a0)
        cand = np.abs(xbar)
        cand[ax0] = 0
        j = k.counter("j")
        if cand.max() == 0:
            assert j == -1
        else:
            assert cand[j] == pytest.approx(cand.max(), rel=1e-12), t
        # (11) then (12): x^(t) = x_bar on A_x + {j}, argmax |grad_y L(x^(t), y)| outside A_y
        x1 = np.zeros(p.d)
        on = list(ax0) + ([j] if j >= 0 else [])
        x1[on] = xbar[on]
        g = np.array([0.0 if c in ay0 else grad_y(p, x1, a0, c) for c in range(p.n)])
        i = k.counter("i")
        if g.max() <= 1e-9:
            assert i == -1
        else:
            assert g[i] >= g.max() * (1 - 1e-6), t


@pytest.mark.parametrize("loss", ["smooth_hinge", "squared", "logistic"])
def test_conjugate_derivative_is_the_house_conjugate(loss):
    """The kernel's (phi^*)' against a central difference of ``losses.conj_neg``."""
    rng = np.random.default_rng(1)
    b = rng.choice([-1.0, 1.0], 200) if loss != "squared" else rng.normal(size=200)
    t = rng.uniform(0.05, 0.95, 200)
    alpha = b * t if loss != "squared" else rng.normal(size=200)
    h = 1e-6
    # d/dy phi^*(y) at y = -alpha: conj_neg(alpha - h) is phi^*(-alpha + h)
    fd = (losses.conj_neg(LOSS_IDS[loss], alpha - h, b)
          - losses.conj_neg(LOSS_IDS[loss], alpha + h, b)) / (2 * h)
    got = _dgpd.conj_derivs(LOSS_IDS[loss], alpha, b)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7)
    # the transcription's formula: the same operations (logistic: NumPy's log, not glibc's)
    np.testing.assert_allclose(got, conj_deriv(loss, alpha, b), rtol=1e-14, atol=0)
    m = rng.normal(size=200)
    np.testing.assert_allclose(_dgpd.dual_grads(LOSS_IDS[loss], m, alpha, b),
                               dual_grad(loss, m, alpha, b), rtol=1e-14, atol=1e-15)
    # at the boundary of the domain: the projected (minimum-norm) gradient
    if loss != "squared":
        ones = np.ones(3)
        got = _dgpd.dual_grads(LOSS_IDS[loss], np.array([2.0, 0.5, -1.0]), 0 * ones, ones)
        expect = [0.0, -0.5, -2.0] if loss == "smooth_hinge" else [-np.inf] * 3
        np.testing.assert_array_equal(got, expect)  # margin > 1 at alpha = 0: blocked
        got = _dgpd.dual_grads(LOSS_IDS[loss], np.array([0.5, -1.0]), ones[:2], ones[:2])
        expect = [0.5, 0.0] if loss == "smooth_hinge" else [np.inf, np.inf]
        np.testing.assert_array_equal(got, expect)  # margin < 0 at t = 1: blocked


@pytest.mark.parametrize("loss", ["smooth_hinge", "squared", "logistic"])
def test_dual_step_is_the_dgpd_step(loss):
    """(13): argmax_beta {1/n <a_i, x> beta - 1/n phi_i^*(beta) - (beta - y_i)^2 / (2 eta)}
    is ``dual_step_exact(loss, alpha_i, b_i, z = <a_i, x>, q = n / eta)`` at alpha = -y; and
    (8) as printed (phi^* without 1/n) is a different step."""
    rng = np.random.default_rng(2)
    cid = LOSS_IDS[loss]
    for _ in range(30):
        n, eta, z = int(rng.integers(5, 200)), 10 ** rng.uniform(-2, 2), 2 * rng.normal()
        b = rng.choice([-1.0, 1.0]) if loss != "squared" else rng.normal()
        alpha_i = b * rng.uniform(0, 1) if loss != "squared" else rng.normal()
        y_i = -alpha_i

        def neg(beta, c=None, n=n, eta=eta, z=z, b=b, y_i=y_i):
            c = 1.0 / n if c is None else c
            conj = losses.conj_neg(cid, np.array([-beta]), np.array([b]))[0]
            return -(z * beta / n - c * conj - (beta - y_i) ** 2 / (2 * eta))

        if loss == "squared":
            lo, hi = y_i - 50, y_i + 50
        else:  # t = -b beta in [0, 1]
            lo, hi = sorted((0.0, -b))
        res = so.minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                 options={"xatol": 1e-12})
        step = losses.dual_steps(cid, np.array([alpha_i]), np.array([b]), np.array([z]),
                                 np.array([n / eta]))[0]
        assert neg(-step) <= res.fun + 1e-12
        assert -step == pytest.approx(res.x, abs=1e-6)
        if loss == "squared":  # the printed (8): n times the conjugate weight
            printed = so.minimize_scalar(functools.partial(neg, c=1.0), bounds=(lo, hi),
                                         method="bounded", options={"xatol": 1e-12})
            assert abs(printed.x - res.x) > 1e-6


# ---- (c) certified optima ---------------------------------------------------------------------

def scipy_optimum(p):
    """P* by L-BFGS-B on x = x+ - x-, x+/- >= 0, independent of every pdsparse solver."""
    A, b, n, d, l1, l2 = p.mat, p.b, p.n, p.d, p.l1, p.l2

    def phi(z):
        if p.loss == "squared":
            return 0.5 * (z - b) ** 2, z - b
        if p.loss == "logistic":
            return np.logaddexp(0, -b * z), -b / (1 + np.exp(b * z))
        mm = b * z
        v = np.where(mm <= 0, 0.5 - mm, np.where(mm < 1, 0.5 * (1 - mm) ** 2, 0.0))
        g = np.where(mm <= 0, -b, np.where(mm < 1, -b * (1 - mm), 0.0))
        return v, g

    def f(v):
        xp, xm = v[:d], v[d:]
        val, g = phi(A @ (xp - xm))
        gx = A.T @ g / n
        obj = val.mean() + 0.5 * l2 * (xp @ xp + xm @ xm) + l1 * (xp.sum() + xm.sum())
        return obj, np.concatenate([gx + l2 * xp + l1, -gx + l2 * xm + l1])

    res = so.minimize(f, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                      bounds=[(0, None)] * (2 * d),
                      options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 50000,
                               "maxcor": 30})
    return res.fun, res.x[:d] - res.x[d:]


@functools.cache
def problem_and_optimum(l1, l2, loss="smooth_hinge", n=60, d=40, seed=3):
    p = make_problem(n=n, d=d, loss=loss, l2=l2, l1=l1, seed=seed)
    return p, reference_solution(p, rtol=1e-11), scipy_optimum(p)


GRID = [(l1, l2) for l1 in (0.1, 0.01) for l2 in (1.0, 0.1)]


@pytest.mark.parametrize("method,options", [("dgpd", {}), ("dgpd_full", {})])
@pytest.mark.parametrize("l1,l2", GRID)
def test_reaches_certified_optimum(method, options, l1, l2):
    p, ref, (p_scipy, x_scipy) = problem_and_optimum(l1, l2)
    res = solve(p, SPECS[method], options=options, tol=1e-9, max_epochs=1e6,
                max_seconds=60, eval_every=50 if method == "dgpd_full" else 5)
    assert res.status == "converged", res.trace.tail(3)
    last = res.trace.iloc[-1]
    assert last.gap <= 1e-8 * abs(last.primal)
    assert last.primal == pytest.approx(ref.p_star, rel=1e-8)
    assert last.primal == pytest.approx(p_scipy, rel=1e-8)
    assert last.primal - ref.p_star <= last.gap + 1e-14  # the certificate is honest
    np.testing.assert_allclose(res.w, ref.w, atol=1e-4 * max(1.0, np.abs(ref.w).max()))
    # the supports: DGPD's x is exactly sparse and has the optimum's support
    assert set(np.flatnonzero(res.w)) == set(np.flatnonzero(np.abs(ref.w) > 1e-6))
    assert 0 < last.nnz_primal < p.d


@pytest.mark.parametrize("options", [{"batch": "8", "passes": "gauss_seidel", "step": "curvature"},
                                     {"step": "eq16", "eta": "x10"},
                                     {"batch": "4", "passes": "gauss_seidel", "eta": "x100"}])
@pytest.mark.parametrize("l1,l2", GRID)
def test_variants_reach_certified_optimum(options, l1, l2):
    p, ref, (p_scipy, _) = problem_and_optimum(l1, l2)
    res = solve(p, SPECS["dgpd"], options=options, tol=1e-9, max_epochs=1e6, max_seconds=60,
                eval_every=5)
    assert res.status == "converged", res.trace.tail(3)
    last = res.trace.iloc[-1]
    assert last.gap <= 1e-8 * abs(last.primal)
    assert last.primal == pytest.approx(ref.p_star, rel=1e-8)
    assert last.primal == pytest.approx(p_scipy, rel=1e-8)
    assert set(np.flatnonzero(res.w)) == set(np.flatnonzero(np.abs(ref.w) > 1e-6))


@pytest.mark.parametrize("loss", ["logistic", "squared"])
@pytest.mark.parametrize("method", ["dgpd", "dgpd_full"])
def test_other_losses_reach_certified_optimum(loss, method):
    p, ref, (p_scipy, _) = problem_and_optimum(0.05, 0.5, loss=loss, n=40, d=30)
    res = solve(p, SPECS[method], options={"eta": "x10"}, tol=1e-9, max_epochs=1e6,
                max_seconds=60, eval_every=50)
    assert res.status == "converged"
    assert res.trace.primal.iloc[-1] == pytest.approx(ref.p_star, rel=1e-8)
    assert res.trace.primal.iloc[-1] == pytest.approx(p_scipy, rel=1e-8)


def test_one_vs_rest_label_matrix():
    p0 = make_problem(n=40, d=30, l2=0.5, l1=0.05, seed=4)
    B = np.column_stack([p0.b, -p0.b, np.where(np.arange(40) % 3 == 0, 1.0, -1.0)])
    p = Problem(p0.csr, B, "smooth_hinge", l2=0.5, l1=0.05)
    res = solve(p, SPECS["dgpd"], tol=1e-8, max_epochs=1e5, max_seconds=60, eval_every=10)
    assert res.status == "converged" and res.w.shape == (30, 3)


@pytest.mark.parametrize("method", ["dgpd", "dgpd_full"])
def test_warm_start_from_the_optimal_dual(method):
    """alpha0 = alpha*: Algorithm 2 starts with A_y = supp(alpha0) and then only has to add
    the support of x* (one column per search), Algorithm 1 starts from u = A^T alpha0."""
    p, ref, _ = problem_and_optimum(0.1, 1.0)
    res = solve(p, SPECS[method], alpha0=ref.alpha, tol=1e-8, max_epochs=1e4, max_seconds=30,
                eval_every=1)
    assert res.status == "converged"
    cold = solve(p, SPECS[method], tol=1e-8, max_epochs=1e5, max_seconds=30, eval_every=1)
    support = np.count_nonzero(np.abs(ref.w) > 1e-9)
    if method == "dgpd":
        assert res.trace.iteration.iloc[-1] <= support + 3 < cold.trace.iteration.iloc[-1]
    else:
        assert res.trace.iteration.iloc[-1] < 0.2 * cold.trace.iteration.iloc[-1]


# ---- (d) chunking --------------------------------------------------------------------------

@pytest.mark.parametrize("dense", [False, True])
def test_chunked_calls_equal_one_long_call(dense):
    p = make_problem(n=40, d=30, l2=0.1, l1=0.02, dense=dense)
    for cls, opts in ((DGPDKernel, DGPDOptions(inner="3")), (DGPDFullKernel, DGPDFullOptions())):
        one, many = cls(p, opts), cls(p, opts)
        if cls is DGPDKernel:  # a tiny submatrix: the capacity grows between chunks
            many.ridx, many.rval = np.zeros(3, np.int32), np.zeros(3)
        iters, touched = one.run(40 * p.nnz)
        done = done_t = 0
        while done < iters:
            i, t = many.run(1 + done % 7)
            done, done_t = done + i, done_t + t
        assert (done, done_t) == (iters, touched)
        np.testing.assert_array_equal(many.x, one.x)
        np.testing.assert_array_equal(many.alpha, one.alpha)
        np.testing.assert_array_equal(many.info, one.info)
        if cls is DGPDKernel:
            assert many.ridx.shape[0] >= 3 * 2


# ---- (e) active sets and cost ---------------------------------------------------------------

def test_active_sets_are_the_supports():
    p = make_problem(n=60, d=40, l2=0.003, l1=0.01)
    k = DGPDKernel(p, DGPDOptions(eta="x10"))
    left_x = left_y = 0
    for t in range(80):
        ax0, ay0 = k.active()
        k.run(1)
        ax, ay = k.active()
        assert len(set(ax)) == ax.size and len(set(ay)) == ay.size
        assert set(ax) == set(np.flatnonzero(k.x)), t
        assert set(ay) == set(np.flatnonzero(k.alpha)), t
        np.testing.assert_array_equal(np.flatnonzero(k.in_x), np.sort(ax))
        np.testing.assert_array_equal(np.flatnonzero(k.in_y), np.sort(ay))
        left_x += len(set(ax0) - set(ax))
        left_y += len(set(ay0) - set(ay))
        # outside the active sets nothing moved; the lists keep their order
        assert [c for c in ax0 if c in set(ax)] == [c for c in ax if c in set(ax0)]
    assert left_x > 0 and left_y > 0  # step 6 removed primal and dual coordinates


def test_cost_per_search_scales_with_the_active_sets():
    """On a 3000 x 5000 sparse problem (8 nonzeros per row) an outer iteration costs
    O(sum_{A_y} nnz(a_i) + sum_{A_x} nnz(A^j) + inner (|A_x| + |A_y| + 2 nnz([A]_A))), below
    n + d, let alone n d; ten times more (empty) columns change neither the iterates nor the
    cost of a single iteration."""
    rng = np.random.default_rng(5)
    n, d, per_row = 3000, 5000, 8
    cols = rng.integers(0, d, size=(n, per_row))
    A = sp.csr_matrix((np.full(n * per_row, 1.0), cols.ravel(),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    A.sum_duplicates()
    b = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    lam = 0.1 * np.abs(A.T @ b).max() / n
    p = Problem(A, b, "smooth_hinge", l2=0.01, l1=lam)
    wide = Problem(sp.hstack([A, sp.csr_matrix((n, 9 * d))]).tocsr(), b, "smooth_hinge",
                   l2=0.01, l1=lam)
    k, kw = DGPDKernel(p, DGPDOptions(inner="5")), DGPDKernel(wide, DGPDOptions(inner="5"))
    rnnz, cnnz = np.diff(p.csr.indptr), np.diff(p.csc.indptr)
    total = 0
    for t in range(60):
        ax, ay = k.active()
        _, touched = k.run(1)
        total += touched
        ax1 = np.union1d(ax, [k.counter("j")] * (k.counter("j") >= 0)).astype(int)
        ay1 = np.union1d(ay, [k.counter("i")] * (k.counter("i") >= 0)).astype(int)
        bound = (3 * rnnz[ay1].sum() + 3 * cnnz[ax1].sum()
                 + 5 * (ax1.size + 2 * ay1.size + 2 * k.counter("subnnz")) + 2)
        assert touched <= bound < (n + d) / 2, t
        assert kw.run(1) == (1, touched), t
        np.testing.assert_array_equal(kw.x[:d], k.x)
        np.testing.assert_array_equal(kw.alpha, k.alpha)
    assert 5 < k.active()[0].size and 30 < k.active()[1].size
    assert k.counter("search") + k.counter("inner") == total


# ---- (f) sparse and dense storage --------------------------------------------------------------

@pytest.mark.parametrize("cls,opts", [(DGPDKernel, DGPDOptions(inner="5", eta="x10")),
                                      (DGPDFullKernel, DGPDFullOptions(eta="x10"))])
def test_sparse_and_dense_give_the_same_iterates(cls, opts):
    ps = make_problem(n=40, d=30, l2=0.1, l1=0.02)
    pd_ = make_problem(n=40, d=30, l2=0.1, l1=0.02, dense=True)
    ks, kd = cls(ps, opts), cls(pd_, opts)
    assert kd.q_per_s == pytest.approx(ks.q_per_s, rel=1e-14)
    for t in range(60 if cls is DGPDKernel else 400):
        ks.run(1)
        kd.run(1)
        assert (ks.counter("j"), ks.counter("i")) == (kd.counter("j"), kd.counter("i")), t
        np.testing.assert_allclose(kd.x, ks.x, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(kd.alpha, ks.alpha, rtol=1e-10, atol=1e-14)
    if cls is DGPDKernel:
        assert [set(a) for a in kd.active()] == [set(a) for a in ks.active()]


# ---- step size, pairs, registry ------------------------------------------------------------

def test_theorem_step_size():
    p = make_problem(n=30, d=20, loss="logistic", l2=0.3, l1=0.05)
    r2, gamma = p.row_sqnorms.max(), 4.0  # logistic is 1/4-smooth: gamma = 4
    eta = 2 * p.n ** 2 * p.l2 / ((5 * r2 + p.n * gamma * p.l2) * 7)  # Theorem 4.2, s = 7
    assert p.n / (theorem_q_per_s(p) * 7) == pytest.approx(eta, rel=1e-14)
    assert DGPDKernel(p, DGPDOptions(eta="x100")).q_per_s == pytest.approx(
        theorem_q_per_s(p) / 100, rel=1e-14)
    k = DGPDFullKernel(p, eta=0.5)
    assert k.q_fixed == p.n / 0.5


def test_gap_pairs():
    """The trace certifies (x, alpha), DGPD's own pair. (x_bar(y), y) gives nearly the same
    gap; (x, alpha(x)) is worse early and, once the support is found, better (the primal
    block is solved exactly, the dual steps are damped by eta): all are valid certificates."""
    p, ref, _ = problem_and_optimum(0.1, 1.0)
    k = DGPDKernel(p)
    gaps = []
    for _ in range(8):
        k.run(30 * p.nnz)
        x, a = k.iterates()
        xbar, ax = objective.w_of_alpha(p, a), objective.alpha_of_w(p, x)
        pv, pbar = objective.primal(p, x), objective.primal(p, xbar)
        gaps.append([pv - objective.dual(p, a), pbar - objective.dual(p, a),
                     pv - objective.dual(p, ax)])
        assert min(gaps[-1][0], gaps[-1][2]) >= pv - ref.p_star - 1e-14
        assert gaps[-1][1] >= pbar - ref.p_star - 1e-14
    g = np.array(gaps)
    assert np.all(g[:, 1] <= 2 * g[:, 0])
    assert g[-1, 2] < g[-1, 0]


def test_specs_are_registry_ready():
    for spec in SPECS.values():
        assert spec.family == "primal_dual" and spec.start == "alpha0"
    assert SPECS["dgpd"].choices() == {"inner": ("1", "3", "5", "10"),
                                       "eta": ("theorem", "x0_1", "x0_3", "x2", "x3", "x5",
                                               "x10", "x100", "x1000"),
                                       "batch": ("1",), "passes": ("jacobi", "gauss_seidel"),
                                       "step": ("theorem", "eq16", "curvature")}
    assert SPECS["dgpd"].tag() == "5-theorem" and SPECS["dgpd_full"].tag() == "theorem"
    with pytest.raises(ValueError, match="unknown eta"):
        DGPDOptions(eta="x4")
