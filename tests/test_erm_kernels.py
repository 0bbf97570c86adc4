"""The DGPD baselines of ``_erm.pyx`` (PrimalRCD, Prox-SDCA, SPDC) on sparse and dense data.

House style: a NumPy transcription of each published algorithm, fed the coordinates the
kernel draws, agrees with the kernel iterate by iterate (exactly on sparse data, where the
kernel adds in storage order; to 1e-12 on dense data, where BLAS adds in its own order and
may fuse); each method reaches a certified relative duality gap of 1e-8 at an optimum that
agrees with ``pdsparse.reference`` and with an independent scipy solution; chunked calls
equal one long call; sparse and dense storage of one matrix give the same iterates.
"""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from conftest import make_data

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import _erm, _sampling, sampling_probabilities
from pdsparse.solvers.erm import (
    PrimalRCDKernel,
    ProxSDCAKernel,
    SPDCKernel,
    spdc_parameters,
)
from pdsparse.solvers.rcd import _DualKernel, _PrimalKernel

SAMPLINGS = ("uniform", "importance", "permutation")
KERNELS = {"primal_rcd": PrimalRCDKernel, "prox_sdca": ProxSDCAKernel, "spdc": SPDCKernel}


def problems(loss="smooth_hinge", l2=0.1, l1=0.01, n=40, d=25, density=0.3, seed=0):
    """The same matrix stored sparse (CSR) and dense (C order)."""
    A, b = make_data(n=n, d=d, density=density, seed=seed, loss=loss)
    return (Problem(A, b, loss=loss, l2=l2, l1=l1),
            Problem(A.toarray(), b, loss=loss, l2=l2, l1=l1))


def make(name, problem, sampling="uniform", seed=0):
    return KERNELS[name](problem, sampling=sampling, seed=seed)


# ---- the coordinates the kernels draw --------------------------------------------------------

def draws(problem, side, sampling, seed, count):
    m = problem.d if side == "cols" else problem.n
    st = _sampling.seed_state(seed)
    if sampling == "uniform":
        return _sampling.uniform_ints(st, m, count)
    if sampling == "permutation":
        return _sampling.permutation_draws(st, m, count)
    sq = problem.col_sqnorms if side == "cols" else problem.row_sqnorms
    prob, alias = _sampling.build_alias(
        sampling_probabilities(sq, problem.l2, problem.n, problem.smoothness, sampling))
    return _sampling.draw(st, prob, alias, count)


# ---- NumPy transcriptions of the published algorithms ------------------------------------------

def phi_prime(loss, z, b):
    if loss == "logistic":
        return -b / (1.0 + np.exp(b * z))
    if loss == "squared":
        return z - b
    m = b * z
    return -b if m <= 0 else (-b * (1 - m) if m < 1 else 0.0)


def soft(x, t):
    return np.where(x > t, x - t, np.where(x < -t, x + t, 0.0))


def dual_argmax(loss, a, b, z, q):
    """argmax_s { -phi^*(-s) - (s - a) z - q (s - a)^2 / 2 }: closed forms for squared loss
    (phi^*(y) = y^2/2 + b y) and smooth hinge (h^*(u) = u^2/2 + u on [-1, 0], t = b s in
    [0, 1]); a root of the optimality condition in t = b s for logistic."""
    if loss == "squared":
        return (b - z + q * a) / (1.0 + q)
    if loss == "smooth_hinge":
        return b * min(1.0, max(0.0, (1.0 - b * z + q * (b * a)) / (1.0 + q)))
    return b * so.brentq(lambda t: np.log(t / (1 - t)) + b * z + q * (t - b * a),
                         1e-300, 1 - 1e-16, xtol=1e-300, rtol=1e-15)


def line(problem, by, k):
    """(positions, values) of row or column k in storage order: CSR / CSC, or all of a dense
    line (the dense kernels add its zeros too)."""
    if problem.dense:
        M = problem.mat if by == "rows" else problem.mat.T
        return np.arange(M.shape[1]), M[k]
    M = problem.csr if by == "rows" else problem.csc
    s = slice(M.indptr[k], M.indptr[k + 1])
    return M.indices[s], M.data[s]


def seqdot(values, x):
    acc = 0.0
    for a, xi in zip(values, x, strict=True):
        acc += a * xi
    return acc


def py_primal_rcd(p, coords):
    """Proximal RCD (Richtarik & Takac 2014): L_i = beta ||A^i||^2 / n + mu,
    w_i <- soft(w_i - grad_i f(w) / L_i, lambda / L_i), z = A w maintained."""
    n = p.n
    w, z = np.zeros(p.d), np.zeros(n)
    out = []
    for i in coords:
        pos, val = line(p, "cols", i)
        h = 1.0 / (p.smoothness * p.col_sqnorms[i] / n + p.l2)
        g = seqdot(val, [phi_prime(p.loss, z[j], p.b[j]) for j in pos]) * (1.0 / n)
        g = g + p.l2 * w[i]
        if p.l1 == 0:
            delta = -g * h  # the plain gradient step
        else:
            delta = float(soft(w[i] - g * h, p.l1 * h)) - w[i]
        w[i] += delta
        z[pos] += delta * val
        out.append((w.copy(),))
    return out


def py_prox_sdca(p, coords):
    """Prox-SDCA, Option I (Shalev-Shwartz & Zhang): v = A^T alpha / n, w = soft(v, l1)/l2,
    alpha_j <- argmax of the dual model with curvature ||a_j||^2 / (l2 n)."""
    n = p.n
    alpha, v = np.zeros(n), np.zeros(p.d)
    out = []
    for j in coords:
        pos, val = line(p, "rows", j)
        z = seqdot(val, soft(v[pos], p.l1)) * (1.0 / p.l2)  # <a_j, w>
        new = dual_argmax(p.loss, alpha[j], p.b[j], z, p.row_sqnorms[j] / (p.l2 * n))
        v[pos] += ((new - alpha[j]) * (1.0 / n)) * val
        alpha[j] = new
        out.append((soft(v, p.l1) / p.l2, alpha.copy()))
    return out


def py_spdc(p, coords):
    """SPDC, Zhang & Xiao Algorithm 1, batch 1, in the paper's variables y, u = A^T y / n:
    y_k+ = argmax_b {b <a_k, xbar> - phi_k^*(b) - (b - y_k)^2 / (2 sigma)};
    x+ = argmin_x {g(x) + <u + (y_k+ - y_k) a_k, x> + ||x - x_t||^2 / (2 tau)};
    u += (y_k+ - y_k) a_k / n; xbar = x+ + theta (x+ - x_t)."""
    n, d = p.n, p.d
    tau, sigma, theta = spdc_parameters(p)
    y, u, x = np.zeros(n), np.zeros(d), np.zeros(d)
    xbar = x.copy()
    A = p.mat if p.dense else p.csr.toarray()
    out = []
    for k in coords:
        pos, val = line(p, "rows", k)
        # y_k+: the same 1-D model in s = -beta (phi^*(beta) = phi^*(-s))
        ynew = -dual_argmax(p.loss, -y[k], p.b[k], seqdot(val, xbar[pos]), 1.0 / sigma)
        dy = ynew - y[k]
        y[k] = ynew
        # the prox of tau g at x - tau c: soft(x - tau c, tau l1) / (1 + tau l2)
        c = u + dy * A[k]
        xn = soft(x - tau * c, tau * p.l1) * (1.0 / (1.0 + tau * p.l2))
        xbar = xn + theta * (xn - x)
        x = xn
        u[pos] += (dy * (1.0 / n)) * val
        out.append((x.copy(), -y))
    return out


TRANSCRIPTIONS = {"primal_rcd": (py_primal_rcd, "cols"), "prox_sdca": (py_prox_sdca, "rows"),
                  "spdc": (py_spdc, "rows")}


def kernel_state(name, k):
    if name == "primal_rcd":
        return (k.w.copy(),)
    if name == "prox_sdca":
        return k.solution().copy(), k.alpha.copy()
    return k.x.copy(), k.alpha.copy()


def assert_same(got, want, exact, what, rtol=1e-12, atol=1e-12):
    for g, w in zip(got, want, strict=True):
        if exact:
            np.testing.assert_array_equal(g, w, err_msg=what)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(1.0, np.abs(w).max()),
                                       err_msg=what)


@pytest.mark.parametrize("name,sampling", [("primal_rcd", s) for s in SAMPLINGS]
                         + [("prox_sdca", s) for s in SAMPLINGS] + [("spdc", "uniform")])
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
@pytest.mark.parametrize("loss,l1", [("smooth_hinge", 0.01), ("squared", 0.05),
                                     ("smooth_hinge", 0.0)])
def test_kernel_matches_transcription_iterate_by_iterate(name, sampling, dense, loss, l1):
    p = problems(loss=loss, l2=0.1, l1=l1, n=14, d=9, density=0.4, seed=5)[dense]
    K = 80
    fn, side = TRANSCRIPTIONS[name]
    ref = fn(p, draws(p, side, sampling, seed=9, count=K))
    k = make(name, p, sampling, seed=9)
    for t in range(K):
        iters, _ = k.run(1)  # a budget of one entry is exactly one iteration
        assert iters == 1
        # exact on sparse data; dense data goes through BLAS (other order, maybe fused);
        # SPDC's lazy update on sparse data brings lagging coordinates forward by s^m
        exact = not dense and name != "spdc"
        assert_same(kernel_state(name, k), ref[t], exact, f"{name} iteration {t}")
    assert np.abs(kernel_state(name, k)[0]).max() > 0  # the test is not vacuous


@pytest.mark.parametrize("name", list(KERNELS))
def test_logistic_matches_transcription(name):
    """Logistic: no closed-form dual step (Newton vs brentq) and a polynomial exp in the
    sparse column gradient, so to 1e-11."""
    p = problems(loss="logistic", l2=0.05, l1=0.01, n=12, d=7, density=0.4, seed=5)[0]
    fn, side = TRANSCRIPTIONS[name]
    K = 60
    ref = fn(p, draws(p, side, "uniform", seed=3, count=K))
    k = make(name, p, "uniform", seed=3)
    for t in range(K):
        k.run(1)
        assert_same(kernel_state(name, k), ref[t], False, f"iteration {t}", 1e-11, 1e-13)


# ---- agreement with the Face-Off kernels ------------------------------------------------------

@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
@pytest.mark.parametrize("l1", [0.0, 0.02])
def test_sparse_primal_rcd_is_bit_identical_to_rcd(sampling, loss, l1):
    """On sparse data the Lines kernel does the arithmetic of ``_rcd.primal_rcd``."""
    p = problems(loss=loss, l2=0.05, l1=l1)[0]
    mine = PrimalRCDKernel(p, sampling, seed=4)
    face_off = _PrimalKernel(p, sampling, seed=4)
    for budget in (1, 7, p.nnz, 3 * p.nnz + 5):
        assert mine.run(budget) == face_off.run(budget)
        np.testing.assert_array_equal(mine.w, face_off.w)
        np.testing.assert_array_equal(mine.z, face_off.z)
        np.testing.assert_array_equal(mine.state, face_off.state)


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("loss", ["logistic", "squared", "smooth_hinge"])
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_prox_sdca_without_l1_is_dual_rcd_newton(sampling, loss, dense):
    """l1 = 0: Prox-SDCA is SDCA, Face-Off's dual RCD with the exact (Newton) step; it keeps
    v = l2 w instead of w, so the two agree to rounding."""
    sp_, de = problems(loss=loss, l2=0.05, l1=0.0)
    mine = ProxSDCAKernel(de if dense else sp_, sampling, seed=2)
    face_off = _DualKernel(sp_, sampling, seed=2, dual_step="newton")
    for t in range(4 * sp_.n):
        assert mine.run(1)[0] == face_off.run(1)[0] == 1
        if t % sp_.n == 0 or t == 4 * sp_.n - 1:
            np.testing.assert_allclose(mine.alpha, face_off.alpha, rtol=1e-11, atol=1e-13)
            np.testing.assert_allclose(mine.solution(), face_off.w, rtol=1e-11, atol=1e-13)


# ---- certified optimum -----------------------------------------------------------------------

def split_solve(A, b, loss, l2, l1):
    """min P by L-BFGS-B on w = u - v, u, v >= 0: independent of every pdsparse solver."""
    A = A.toarray()
    n, d = A.shape

    def phi(z):
        if loss == "logistic":
            return np.logaddexp(0, -b * z), -b / (1 + np.exp(b * z))
        if loss == "squared":
            return 0.5 * (z - b) ** 2, z - b
        m = b * z
        return (np.where(m <= 0, 0.5 - m, np.where(m < 1, 0.5 * (1 - m) ** 2, 0.0)),
                np.where(m <= 0, -b, np.where(m < 1, -b * (1 - m), 0.0)))

    def fun(s):
        w = s[:d] - s[d:]
        val, g = phi(A @ w)
        gw = A.T @ g / n + l2 * w
        return (val.mean() + 0.5 * l2 * w @ w + l1 * s.sum(),
                np.concatenate([gw + l1, -gw + l1]))

    res = so.minimize(fun, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                      bounds=[(0, None)] * (2 * d),
                      options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 50000, "maxfun": 100000})
    return res.fun, res.x[:d] - res.x[d:]


def run_to_gap(k, p, rtol, max_epochs):
    for epoch in range(1, max_epochs + 1):
        k.run(p.nnz)
        w, alpha = k.iterates()
        pv, dv = objective.primal(p, w), objective.dual(p, alpha)
        if pv - dv <= rtol * abs(pv):
            return pv, dv, epoch
    raise AssertionError(f"gap {pv - dv:.3g} (P = {pv:.6g}) after {max_epochs} epochs")


_OPTIMA = {}


def optimum(loss, l2, l1):
    if (loss, l2, l1) not in _OPTIMA:
        sp_ = problems(loss=loss, l2=l2, l1=l1)[0]
        ref = reference_solution(sp_)
        _OPTIMA[loss, l2, l1] = ref, split_solve(sp_.csr, sp_.b, loss, l2, l1)
    return _OPTIMA[loss, l2, l1]


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
@pytest.mark.parametrize("l2,l1", [(1.0, 0.1), (1.0, 0.01), (0.1, 0.1), (0.1, 0.01)])
def test_reaches_certified_optimum(name, dense, l2, l1):
    loss = "smooth_hinge"
    p = problems(loss=loss, l2=l2, l1=l1)[dense]
    ref, (p_split, w_split) = optimum(loss, l2, l1)
    pv, dv, _ = run_to_gap(make(name, p, "uniform", seed=1), p, 1e-8, 1500)
    # the certificate is honest, and the optimum is the independent ones
    assert pv - ref.p_star <= (pv - dv) + 1e-12
    assert dv <= ref.p_star + 1e-12
    assert pv == pytest.approx(ref.p_star, rel=1e-8, abs=1e-12)
    assert pv == pytest.approx(p_split, rel=1e-8)
    assert p_split >= dv - 1e-12  # weak duality with the independent solution


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_other_losses_reach_certified_optimum(name, loss):
    l2, l1 = 0.1, 0.01
    p = problems(loss=loss, l2=l2, l1=l1)[0]
    ref, (p_split, _) = optimum(loss, l2, l1)
    sampling = "uniform" if name == "spdc" else "importance"
    pv, dv, _ = run_to_gap(make(name, p, sampling, seed=2), p, 1e-8, 3000)
    assert pv == pytest.approx(ref.p_star, rel=1e-8)
    assert pv == pytest.approx(p_split, rel=1e-8)


def test_iterates_are_the_optimum():
    p = problems(l2=0.1, l1=0.05)[1]
    ref, (_, w_split) = optimum("smooth_hinge", 0.1, 0.05)
    for name in KERNELS:
        k = make(name, p, "uniform", seed=0)
        run_to_gap(k, p, 1e-10, 3000)
        w = k.solution()
        np.testing.assert_allclose(w, ref.w, atol=1e-4 * np.abs(ref.w).max())
        np.testing.assert_allclose(w, w_split, atol=1e-4 * np.abs(ref.w).max())


# ---- chunking, storage, inputs -------------------------------------------------------------

@pytest.mark.parametrize("name,sampling", [("primal_rcd", "importance"),
                                           ("primal_rcd", "permutation"),
                                           ("prox_sdca", "importance"),
                                           ("prox_sdca", "permutation"), ("spdc", "uniform")])
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_chunked_calls_equal_one_long_call(name, sampling, dense):
    p = problems()[dense]
    one = make(name, p, sampling, seed=6)
    iters, touched = one.run(3 * p.nnz)
    assert touched >= 3 * p.nnz
    chunked = make(name, p, sampling, seed=6)
    rng = np.random.default_rng(0)
    done = 0
    while done < iters:
        # a call of budget B makes at most B iterations: never past the long call's end
        budget = int(rng.integers(1, 2 * max(p.n, p.d)))
        i, _ = chunked.run(budget if done + budget <= iters else 1)
        done += i
    assert done == iters
    for a, b in zip(kernel_state(name, one), kernel_state(name, chunked), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(one.state, chunked.state)


@pytest.mark.parametrize("name,sampling", [("primal_rcd", "uniform"),
                                           ("primal_rcd", "permutation"),
                                           ("prox_sdca", "uniform"), ("prox_sdca", "importance"),
                                           ("spdc", "uniform")])
def test_sparse_and_dense_storage_give_the_same_iterates(name, sampling):
    sp_, de = problems(l2=0.1, l1=0.01)
    ks, kd = make(name, sp_, sampling, seed=8), make(name, de, sampling, seed=8)
    for _ in range(300):
        ks.run(1)
        kd.run(1)
    for a, b in zip(kernel_state(name, ks), kernel_state(name, kd), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)
    # the work: a sparse line costs its entries, a dense one its length (SPDC: + d)
    assert ks.run(1)[1] < kd.run(1)[1]


def test_primal_rcd_on_contiguous_dense_columns():
    """The kernel takes any dense Lines: a column-major copy (contiguous columns, summed in
    four partial sums) gives the iterates of the C-order strided columns to rounding."""
    de = problems(l2=0.1, l1=0.01)[1]
    strided = PrimalRCDKernel(de, "uniform", seed=3)
    contiguous = PrimalRCDKernel(de, "uniform", seed=3)
    F = np.asfortranarray(de.mat)
    none = np.empty(0, dtype=np.int32)
    contiguous.lines = (1, F.reshape(-1, order="F"), none, none, de.d, de.n, de.n, 1)
    for _ in range(3):
        assert strided.run(5 * de.nnz) == contiguous.run(5 * de.nnz)
        np.testing.assert_allclose(contiguous.w, strided.w, rtol=1e-11, atol=1e-14)


def test_empty_lines_cost_one_unit():
    """A row or column without entries still ends the budget (it costs one unit)."""
    A = np.zeros((6, 4))
    A[:5, :3] = np.random.default_rng(0).standard_normal((5, 3))  # row 5, column 3 empty
    b = np.array([1.0, -1, 1, -1, 1, -1])
    for M in (sp.csr_matrix(A), A):
        p = Problem(M, b, loss="smooth_hinge", l2=0.1, l1=0.01)
        for name in KERNELS:
            k = make(name, p, "uniform", seed=0)
            iters, touched = k.run(200)
            assert iters > 0 and touched >= 200
            w, alpha = k.iterates()
            assert w[3] == 0.0  # an empty feature stays at zero
            assert np.isfinite(objective.dual(p, alpha))


def test_bad_inputs_raise_value_error():
    sp_, de = problems()
    n, d = sp_.n, sp_.d
    st = _sampling.seed_state(0)
    smp = _sampling.sampler_arrays("uniform", np.ones(d))
    for p in (sp_, de):
        cols, rows = p.lines("cols"), p.lines("rows")
        lip = np.ones(d)
        with pytest.raises(ValueError, match="w has"):
            _erm.primal_rcd(*cols, p.b, np.zeros(d + 1), np.zeros(n), lip, 0.1, 0.0,
                            p.loss_id, *smp, st, 10)
        with pytest.raises(ValueError, match="b has"):
            _erm.primal_rcd(*cols, p.b[:-1], np.zeros(d), np.zeros(n), lip, 0.1, 0.0,
                            p.loss_id, *smp, st, 10)
        with pytest.raises(ValueError, match="lipschitz"):
            _erm.primal_rcd(*cols, p.b, np.zeros(d), np.zeros(n), lip[1:], 0.1, 0.0,
                            p.loss_id, *smp, st, 10)
        smp_n = _sampling.sampler_arrays("uniform", np.ones(n))
        with pytest.raises(ValueError, match="alpha has"):
            _erm.prox_sdca(*rows, p.b, np.zeros(n - 1), np.zeros(d), np.ones(n), 0.1, 0.0,
                           p.loss_id, *smp_n, st, 10)
        with pytest.raises(ValueError, match="curvature"):
            _erm.prox_sdca(*rows, p.b, np.zeros(n), np.zeros(d), np.ones(2), 0.1, 0.0,
                           p.loss_id, *smp_n, st, 10)
        with pytest.raises(ValueError, match="l2 > 0"):
            _erm.prox_sdca(*rows, p.b, np.zeros(n), np.zeros(d), np.ones(n), 0.0, 0.0,
                           p.loss_id, *smp_n, st, 10)
        z = np.zeros(d)
        with pytest.raises(ValueError, match="xbar has"):
            _erm.spdc(*rows, p.b, np.zeros(n), z.copy(), z.copy(), np.zeros(d - 1), z.copy(),
                      0.1, 0.1, 0.5, 0.1, 0.0, p.loss_id, st, 10)
        with pytest.raises(ValueError, match="v has"):
            _erm.spdc(*rows, p.b, np.zeros(n), np.zeros(d + 2), z.copy(), z.copy(), z.copy(),
                      0.1, 0.1, 0.5, 0.1, 0.0, p.loss_id, st, 10)
        with pytest.raises(ValueError, match="theta"):
            _erm.spdc(*rows, p.b, np.zeros(n), z.copy(), z.copy(), z.copy(), z.copy(),
                      0.1, 0.1, 1.5, 0.1, 0.0, p.loss_id, st, 10)
    # the dense lines must match the vectors
    with pytest.raises(ValueError, match="a column of A"):
        _erm.primal_rcd(*de.lines("cols"), de.b[:-1], np.zeros(d), np.zeros(n - 1),
                        np.ones(d), 0.1, 0.0, de.loss_id, *smp, st, 10)
    with pytest.raises(ValueError, match="row has"):
        _erm.spdc(*sp_.lines("rows"), sp_.b, np.zeros(n), np.zeros(d), np.zeros(d),
                  np.zeros(d), np.zeros(d - 1), 0.1, 0.1, 0.5, 0.1, 0.0, sp_.loss_id, st, 10)
    # the Python side
    with pytest.raises(ConfigError, match="uniformly"):
        SPDCKernel(sp_, sampling="importance")
    with pytest.raises(ValueError, match="w0 of shape"):
        PrimalRCDKernel(sp_, w0=np.zeros(d + 1))
    with pytest.raises(ValueError, match="alpha0 of shape"):
        ProxSDCAKernel(de, alpha0=np.zeros(n + 1))
    with pytest.raises(ValueError, match="unknown sampling"):
        ProxSDCAKernel(sp_, sampling="greedy")


def test_spdc_parameters_are_theorem_1():
    p = problems(loss="logistic", l2=0.01)[0]
    tau, sigma, theta = spdc_parameters(p)
    n, gamma, mu = p.n, 4.0, 0.01  # logistic: 1/4-smooth, gamma = 4
    R = np.sqrt(p.row_sqnorms.max())
    assert tau * sigma == pytest.approx(1 / (4 * R * R))
    assert sigma / tau == pytest.approx(n * mu / gamma)
    assert theta == pytest.approx(1 - 1 / (n + R * np.sqrt(n / (mu * gamma))))


def test_registry_routes_and_warm_starts():
    """The registry sends dense data and l1 > 0 to these kernels, with warm starts."""
    from pdsparse.solvers import SOLVERS

    p = problems(l2=0.1, l1=0.01)[1]
    assert p.dense
    ref, _ = optimum("smooth_hinge", 0.1, 0.01)
    k = SOLVERS["primal_rcd"].make_kernel(p, {"sampling": "uniform"}, 0, ref.w)
    assert isinstance(k, PrimalRCDKernel)
    np.testing.assert_allclose(k.z, p.mat @ ref.w)
    k = SOLVERS["dual_rcd"].make_kernel(p, {"sampling": "uniform", "dual_step": "newton"}, 0,
                                        ref.alpha)
    assert isinstance(k, ProxSDCAKernel)
    np.testing.assert_allclose(k.solution(), objective.w_of_alpha(p, ref.alpha), atol=1e-14)
    k = SOLVERS["spdc"].make_kernel(p, None, 0, ref.w)
    np.testing.assert_array_equal(k.solution(), ref.w)
    with pytest.raises(ValueError, match="dual_step=newton"):
        SOLVERS["dual_rcd"].make_kernel(p, {"sampling": "uniform", "dual_step": "fixed"}, 0)
    # the default step is the exact one: dense data needs no option
    assert isinstance(SOLVERS["dual_rcd"].make_kernel(p, None, 0), ProxSDCAKernel)


# ---- SPDC's lazy primal update (sparse rows) -------------------------------------------------

def iterate_map(x, c, tl, tl2, m):
    """m steps of SPDC's primal update off the sampled row: x -> soft(x + c, tl) / (1 + tl2)."""
    for _ in range(m):
        x = soft(x + c, tl) * (1.0 / (1.0 + tl2))
    return x


def test_lazy_closed_form_is_the_iterated_map():
    """Every region path (stay, leave to 0, jump over 0, end at 0, l1 = 0) and long gaps."""
    rng = np.random.default_rng(4)
    cases = [(5.0, -0.5, 0.2, 0.1, 40), (5.0, 0.5, 0.2, 0.1, 40), (-3.0, 0.1, 0.2, 0.05, 90),
             (8.0, -2.0, 0.5, 0.3, 25), (0.0, 0.05, 0.2, 0.1, 7), (1.0, 0.0, 0.0, 0.01, 500),
             (2.0, 0.3, 0.3, 0.2, 60), (0.4, -0.3, 0.3, 0.2, 3), (1.0, 0.2, 0.1, 1e-4, 3000)]
    for _ in range(3000):
        cases.append((rng.standard_normal() * 10 ** rng.uniform(-2, 2),
                      rng.standard_normal() * 10 ** rng.uniform(-3, 1),
                      abs(rng.standard_normal()) * 10 ** rng.uniform(-3, 0) * rng.integers(0, 2),
                      10 ** rng.uniform(-3, 0), int(rng.integers(0, 200))))
    for x, c, tl, tl2, m in cases:
        want = iterate_map(x, c, tl, tl2, m)
        got = _erm.spdc_advance(x, c, tl, tl2, m)
        assert got == pytest.approx(want, rel=1e-10, abs=1e-12 * max(1.0, abs(x))), (x, c, tl, m)
    assert _erm.spdc_advance(3.0, 1.0, 0.5, 0.1, 0) == 3.0


@pytest.mark.parametrize("loss,l1", [("smooth_hinge", 0.01), ("logistic", 0.0),
                                     ("squared", 0.05)])
def test_lazy_spdc_matches_transcription_iterate_by_iterate(loss, l1):
    """spdc_lazy called one iteration at a time (its state lagging, as in a long call),
    read through spdc_catch_up, against the dense transcription of Algorithm 1."""
    A, b = make_data(n=30, d=80, density=0.04, seed=11, loss=loss)
    p = Problem(A, b, loss=loss, l2=0.05, l1=l1)
    K = 400
    ref = py_spdc(p, draws(p, "rows", "uniform", seed=4, count=K))
    tau, sigma, theta = spdc_parameters(p)
    x, xbar, alpha, v = np.zeros(p.d), np.zeros(p.d), np.zeros(p.n), np.zeros(p.d)
    last, clock, state = np.zeros(p.d, np.int64), np.zeros(1, np.int64), _sampling.seed_state(4)
    x_now, xbar_now = np.empty(p.d), np.empty(p.d)
    lags = []
    for t in range(K):
        iters, touched = _erm.spdc_lazy(*p.lines("rows"), p.b, alpha, v, x, xbar, last, clock,
                                        tau, sigma, theta, p.l2, p.l1, p.loss_id, state, 1)
        assert iters == 1 and clock[0] == t + 1
        lags.append(int(clock[0] - last.min()))
        assert _erm.spdc_catch_up(v, x, xbar, last, clock, tau, theta, p.l2, p.l1, x_now,
                                  xbar_now) == p.d
        assert_same((x_now, alpha), ref[t], False, f"lazy spdc iteration {t}", rtol=1e-11,
                    atol=1e-12)
    assert max(lags) > 20  # coordinates were brought forward over long gaps
    assert np.abs(x_now).max() > 0


def test_lazy_spdc_is_the_dense_kernel_to_rounding_and_cheaper():
    A, b = make_data(n=80, d=400, density=0.02, seed=2, loss="smooth_hinge")
    p = Problem(A, b, loss="smooth_hinge", l2=0.01, l1=0.002)
    lazy, dense = SPDCKernel(p, seed=5), SPDCKernel(p, seed=5, lazy=False)
    assert lazy.lazy and not dense.lazy
    work_lazy = work_dense = 0
    for _ in range(30):
        i, w = lazy.run(2000)
        work_lazy += w
        done = 0
        while done < i:
            j, w = dense.run(1)
            done += j
            work_dense += w
        np.testing.assert_allclose(lazy.x, dense.x, rtol=0, atol=1e-12 * np.abs(dense.x).max())
        np.testing.assert_allclose(lazy.xbar, dense.xbar, rtol=0,
                                   atol=1e-11 * np.abs(dense.xbar).max())
        np.testing.assert_allclose(lazy.alpha, dense.alpha, rtol=0, atol=1e-12)
    # per iteration 2 nnz(a_k) (+ d per call) against d + nnz(a_k)
    assert work_lazy < work_dense / 5
    dense_data = Problem(A.toarray(), b, loss="smooth_hinge", l2=0.01, l1=0.002)
    assert not SPDCKernel(dense_data).lazy  # a dense row has every coordinate: no lazy form


def test_lazy_spdc_reaches_a_certified_gap():
    """A news20-like sparsity (many coordinates idle for long) on the registry's default."""
    from pdsparse.solvers import SOLVERS

    A, b = make_data(n=120, d=600, density=0.01, seed=7, loss="logistic")
    l2, l1 = 0.05, 0.001
    p = Problem(A, b, loss="logistic", l2=l2, l1=l1)
    ref = reference_solution(p, rtol=1e-10)
    k = SOLVERS["spdc"].make_kernel(p)
    assert isinstance(k, SPDCKernel) and k.lazy
    pv, dv, _ = run_to_gap(k, p, 1e-8, 5000)
    assert pv == pytest.approx(ref.p_star, rel=1e-7)
