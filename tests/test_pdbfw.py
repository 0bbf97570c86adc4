"""PDBFW (Lei, Zhuo, Caramanis, Dhillon & Dimakis 2019), Algorithms 1 and 2: NumPy
transcriptions iterate by iterate, brute-force selections and block steps, certified optima
against two independent solutions, the fixed point of the dual step, options."""

import functools
import itertools
import math

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.penalties import ElasticNet, L1Ball, TraceBall, project_l1_ball
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import SOLVERS, _pdbfw, solve
from pdsparse.solvers.pdbfw import (
    S_START,
    PDBFWL1Kernel,
    PDBFWOptions,
    PDBFWTraceKernel,
    pdbfw_factory,
)


def make_problem(n=60, d=40, density=0.2, seed=0, loss="smooth_hinge", radius=1.0, l2=None,
                 dense=False):
    """A small sparse problem with unit rows (the paper normalizes its data) and a planted
    sparse model; l2 = 10/n as in the paper's experiments (Sec. 5)."""
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
    return Problem(A.toarray() if dense else A, b, loss=loss,
                   penalty=L1Ball(radius, 10.0 / n if l2 is None else l2))


def make_sensing(n=40, d=12, c=8, rank=2, seed=0, radius=3.0, l2=1e-3):
    """Low-rank sensing: B = A X0 + noise with X0 of rank 2 (PDBFW Sec. 5.1, small); the
    trace-norm ball of radius 3 is active (||X0||_* = 17) and X* has rank 1."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d)) / np.sqrt(d)
    X0 = rng.standard_normal((d, rank)) @ rng.standard_normal((rank, c))
    B = A @ X0 + 0.01 * rng.standard_normal((n, c))
    return Problem(A, B, loss="squared", penalty=TraceBall(radius, l2))


# ---- NumPy transcriptions, in the paper's variables (y = -alpha, z = A^T y = -u) -----------

def top(key, m):
    """The m largest keys, ties to the lower index, as increasing indices (a full sort)."""
    return np.sort(np.lexsort((np.arange(key.size), -key))[:m])


def dual_argmax(loss, w, y, b, n, delta):
    """(10)/(14) with the saddle function's 1/n on f^*: argmax_y' 1/n (w y' - f^*(y')) -
    (y' - y)^2 / (2 delta), in closed form (squared: f^*(y) = y^2/2 + b y; smooth hinge:
    f^*(y) = h^*(b y), h^*(t) = t^2/2 + t on [-1, 0], Appendix B.7)."""
    if loss == "squared":
        return ((w - b) / n + y / delta) / (1.0 / n + 1.0 / delta)
    t = ((b * w - 1.0) / n + b * y / delta) / (1.0 / n + 1.0 / delta)
    return b * np.clip(t, -1.0, 0.0)


def corollary_delta_per_k(p):
    """k delta of Corollary 4.1.1: (1/(n beta) + 25 R / (2 mu n^2))^{-1}, R = max ||a_i||^2."""
    n, R = p.n, float(np.max(np.asarray(p.mat.multiply(p.mat).sum(axis=1)).ravel()
                             if sp.issparse(p.mat) else np.sum(p.mat ** 2, axis=1)))
    return 1.0 / (1.0 / (n * p.smoothness) + 25.0 * R / (2.0 * p.l2 * n * n))


class Adapt:
    """The s=auto rule: double s after an inexact step; after 5 exact steps in a row, shrink
    it to 2 max |supp x~| over them."""

    def __init__(self, floor, cap, k_auto, k_of_s):
        self.floor, self.cap, self.k_auto, self.k_of_s = floor, cap, k_auto, k_of_s
        self.window = []

    def __call__(self, s, k, exact, support):
        new = s
        if not exact:
            new, self.window = min(2 * s, self.cap), []
        else:
            self.window.append(support)
            if len(self.window) == 5:
                if 2 * max(self.window) < s:
                    new = max(self.floor, 2 * max(self.window))
                self.window = []
        return new, (self.k_of_s(new) if self.k_auto and new != s else k)


def py_pdbfw_l1(p, iters, s, k, grow, k_auto, multiplier=1.0, balance=False, theta=0.0):
    """Algorithm 1 line by line (full sorts, dense products). ``balance``: k of each
    iteration = ceil(entries read by (9) / (nnz(A) / n)), in [1, n]; ``multiplier`` inf:
    delta = inf, each row's exact maximum; ``theta``: (10) at A (x + theta (x - x_prev))."""
    A = sp.csr_matrix(p.mat) if p.dense else p.csr
    n, d, mu, r, b = p.n, p.d, p.l2, p.radius, p.b
    L, eta = mu, 0.5  # g = mu/2 ||x||^2 is mu-smooth; eta = mu / (2 L) (Corollary 4.1.1)
    x, y, w, z = np.zeros(d), np.zeros(n), np.zeros(n), np.zeros(d)
    adapt = Adapt(min(S_START, d), d, k_auto, lambda s: max(1, min(n, math.ceil(n * s / d))))
    out = []
    for _ in range(iters):
        v = x - (z / n + mu * x) / (L * eta)  # (8): the minimizer is the projection of v
        S = top(np.abs(v), s)
        xt = np.zeros(d)
        xt[S] = project_l1_ball(v[S], r)
        exact = np.count_nonzero(project_l1_ball(v, r)) <= s
        x_prev = x
        x = (1 - eta) * x + eta * xt
        w = (1 - eta) * w + eta * (A @ xt)  # (9)
        nnz_cols = np.diff(A.tocsc().indptr)
        primal = int(nnz_cols[xt != 0].sum())
        if balance:
            k = min(n, max(1, math.ceil(primal / (A.nnz / n))))
        delta = multiplier * corollary_delta_per_k(p) / k
        read = A @ (x + theta * (x - x_prev)) if theta else w  # the point (10) reads
        yt = dual_argmax(p.loss, read, y, b, n, delta)  # (10)
        chosen = top(np.abs(yt - y), k)  # (11): I^(t)
        dy = np.zeros(n)
        dy[chosen] = yt[chosen] - y[chosen]
        y = y + dy
        z = z + A.T @ dy  # (12)
        dual = int(np.diff(A.indptr)[dy != 0].sum())
        out.append(dict(x=x, y=y, w=w, z=z, s=s, k=k, exact=exact, primal=primal,
                        dual=dual, work=primal + dual + n + d))
        if grow:
            s, k = adapt(s, k, exact, np.count_nonzero(xt))
    return out


def assert_close(got, want, what, t):
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                               err_msg=f"{what}, iteration {t}")


@pytest.mark.parametrize("loss,radius", [("smooth_hinge", 1.0), ("squared", 1.0),
                                         ("smooth_hinge", 100.0)])
@pytest.mark.parametrize("s,k", [("3", "2"), ("8", "5"), ("20", "30"), ("auto", "auto"),
                                 ("auto", "4"), ("5", "auto")])
def test_algorithm1_matches_transcription(loss, radius, s, k):
    p = make_problem(n=30, d=20, loss=loss, radius=radius)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s=s, k=k, delta="x100"))
    assert ker.q_per_k * corollary_delta_per_k(p) * 100 == pytest.approx(p.n, rel=1e-14)
    ref = py_pdbfw_l1(p, 60, ker.s, ker.k, s == "auto", k == "auto", multiplier=100.0)
    for t, r in enumerate(ref):
        assert (ker.s, ker.k) == (r["s"], r["k"]), t
        ker.run(1)
        assert ker.counter("iters") == t + 1
        assert ker.counter("exact") == r["exact"], t
        assert_close(ker.x, r["x"], "x", t)
        assert_close(-ker.alpha, r["y"], "y", t)
        assert_close(ker.w, r["w"], "w", t)
        assert_close(-ker.u, r["z"], "z", t)
    # the runs are not trivial: the ball binds (radius 1), y moved on most rows
    assert np.count_nonzero(ker.alpha) > p.n // 2
    if radius == 1.0:
        assert np.abs(ker.x).sum() == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("k,delta", [("balance", "x100"), ("n", "x100"), ("auto", "exact"),
                                     ("balance", "exact")])
@pytest.mark.parametrize("s", ["5", "auto"])
def test_algorithm1_open_choices_match_transcription(s, k, delta):
    """The k rules the paper leaves open (the sparse balance, every row) and delta = inf."""
    p = make_problem(n=40, d=60, radius=1.0)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s=s, k=k, delta=delta))
    mult = math.inf if delta == "exact" else 100.0
    assert ker.q_per_k == (0.0 if delta == "exact" else pytest.approx(
        p.n / (corollary_delta_per_k(p) * 100), rel=1e-14))
    ref = py_pdbfw_l1(p, 50, ker.s, p.n if k == "n" else ker.k, s == "auto", k == "auto",
                      multiplier=mult, balance=k == "balance")
    ks = set()
    for t, r in enumerate(ref):
        assert ker.s == r["s"], t
        assert k == "balance" or ker.k == r["k"], t  # the k this iteration uses
        before = {c: ker.counter(c) for c in ("primal", "dual")}
        iters, work = ker.run(1)
        assert k != "balance" or ker.k == r["k"], t  # balance: set within the iteration
        # the work: the columns of (9) and the n + d scans exactly; the rows of (12) that
        # moved (a row whose step is 0 to rounding may count on one side only near the end)
        assert ker.counter("primal") - before["primal"] == r["primal"], t
        dual = ker.counter("dual") - before["dual"]
        assert (iters, work) == (1, r["primal"] + dual + p.n + p.d), t
        assert abs(dual - r["dual"]) <= 0.1 * max(r["dual"], 1) or t > 20, t
        ks.add(r["k"])
        assert_close(ker.x, r["x"], "x", t)
        assert_close(-ker.alpha, r["y"], "y", t)
        assert_close(-ker.u, r["z"], "z", t)
    if k == "balance":  # k follows the primal cost, not s
        assert len(ks) > 1 and max(ks) < p.n
    assert np.count_nonzero(ker.alpha) > p.n // 2


@pytest.mark.parametrize("k,delta", [("n", "x100"), ("n", "exact"), ("5", "x10")])
def test_algorithm1_extrapolated_matches_transcription(k, delta):
    """extrapolate=primal (with k=n: the PDFW.m ablation): (10) reads A (2 x - x_prev)."""
    p = make_problem(n=40, d=60, radius=1.0)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s="5", k=k, delta=delta, extrapolate="primal"))
    mult = {"x100": 100.0, "exact": math.inf, "x10": 10.0}[delta]
    ref = py_pdbfw_l1(p, 50, 5, ker.k, False, False, multiplier=mult, theta=1.0)
    plain = py_pdbfw_l1(p, 50, 5, ker.k, False, False, multiplier=mult)
    for t, r in enumerate(ref):
        ker.run(1)
        assert_close(ker.x, r["x"], "x", t)
        assert_close(-ker.alpha, r["y"], "y", t)
        assert_close(ker.w, r["w"], "w", t)
        assert_close(-ker.u, r["z"], "z", t)
    # the extrapolation changes the iterates (the test would pass for theta = 0 otherwise)
    assert np.abs(ref[-1]["y"] - plain[-1]["y"]).max() > 1e-6


def test_algorithm1_dense_data_matches_transcription():
    p = make_problem(n=30, d=20, dense=True)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s="6", k="4", delta="x10"))
    ref = py_pdbfw_l1(p, 40, 6, 4, False, False, multiplier=10.0)
    for t, r in enumerate(ref):
        ker.run(1)
        assert_close(ker.x, r["x"], "x", t)
        assert_close(-ker.alpha, r["y"], "y", t)


def test_auto_s_grows_and_shrinks():
    """s=auto starts at 8, doubles while the block step truncates the projected step, and
    once it no longer does comes down, five exact steps at a time, to twice their largest
    support: here 2 nnz(x*) (the rule itself is checked step by step against the
    transcription above); k = ceil(n s / d) follows."""
    p = make_problem(n=60, d=200, radius=1.0)
    ker = PDBFWL1Kernel(p, PDBFWOptions(delta="x10"))
    seen = []
    for _ in range(80):
        ker.run(1)
        seen.append(ker.s)
        assert ker.k == max(1, math.ceil(p.n * ker.s / p.d))
    peak = seen.index(max(seen))
    assert seen[0] == S_START and ker.counter("grown") == 4 and max(seen) == 16 * S_START
    assert seen[-1] < max(seen) and seen[peak:] == sorted(seen[peak:], reverse=True)
    nnz_star = np.count_nonzero(reference_solution(p).w)
    assert ker.counter("exact") and nnz_star <= ker.s <= 2 * nnz_star


def test_chunked_runs_equal_one_run():
    p = make_problem()
    one = PDBFWL1Kernel(p, PDBFWOptions(delta="x10"))
    many = PDBFWL1Kernel(p, PDBFWOptions(delta="x10"))
    total = 0
    for _ in range(37):
        total += many.run(1)[1]
    iters, touched = one.run(total)
    assert (iters, touched) == (37, total)
    np.testing.assert_array_equal(one.x, many.x)
    np.testing.assert_array_equal(one.alpha, many.alpha)
    # touched counts the entries of A read (the columns of (9), the rows of (12)) and the
    # n + d coordinates every iteration scans
    assert one.counter("scan") == 37 * (p.n + p.d)
    assert touched == one.counter("primal") + one.counter("dual") + one.counter("scan")


# ---- Algorithm 2 ------------------------------------------------------------------------

def py_pdbfw_trace(p, iters, s, k, multiplier, grow=False, k_auto=False, balance=False,
                   extrapolate=0.0):
    """Algorithm 2 line by line, with a full SVD for (18); ``balance``: k = ceil(n r / c)
    for the rank r of this iteration's X~."""
    A, B = p.mat, p.b
    n, d, c, mu, theta = p.n, p.d, p.k, p.l2, p.radius
    L, eta = mu, 0.5
    X, Y, W, Z = np.zeros((d, c)), np.zeros((n, c)), np.zeros((n, c)), np.zeros((d, c))
    # Theorem 4.3 (alpha = beta = 1, L = mu): delta = (1/k)(1/n + 45 R / (2 mu n^2))^{-1},
    # R = max_{|I| <= k} sigma_max^2(A_I) <= min(||A||_2^2, the k largest ||a_i||^2 summed)
    spectral2, row2 = np.linalg.norm(A, 2) ** 2, np.sort(np.sum(A ** 2, axis=1))[::-1]
    adapt = Adapt(min(S_START, d, c), min(d, c), k_auto,
                  lambda s: max(1, min(n, math.floor(n * s * (1 / c + 1 / d)))))
    out = []
    for _ in range(iters):
        M = X - (Z / n + mu * X) / (L * eta)  # (18)
        U, sig, Vt = np.linalg.svd(M, full_matrices=False)
        kept = project_l1_ball(sig[:s], theta)
        if balance:
            k = min(n, max(1, math.ceil(n * max(np.count_nonzero(kept), 1) / c)))
        R = min(spectral2, row2[:k].sum())
        delta = multiplier / (k * (1.0 / n + 45.0 * R / (2.0 * mu * n * n)))
        Xt = (U[:, :s] * kept) @ Vt[:s]
        exact = np.count_nonzero(project_l1_ball(sig, theta)) <= s
        X_prev = X
        X = (1 - eta) * X + eta * Xt
        W = (1 - eta) * W + eta * (A @ Xt)  # (13)
        read = A @ (X + extrapolate * (X - X_prev)) if extrapolate else W
        Yt = dual_argmax("squared", read, Y, B, n, delta)  # (14)
        chosen = top(np.linalg.norm(Yt - Y, axis=1), k)  # (15): I^(t)
        dY = np.zeros_like(Y)
        dY[chosen] = Yt[chosen] - Y[chosen]
        Y = Y + dY
        Z = Z + A.T @ dY  # (16)
        out.append(dict(X=X, Y=Y, W=W, Z=Z, s=s, k=k))
        if grow:
            s, k = adapt(s, k, exact, np.count_nonzero(kept))
    return out


@pytest.mark.parametrize("s,k,radius", [("1", "3", 3.0), ("3", "10", 3.0), ("8", "40", 3.0),
                                        ("auto", "auto", 10.0), ("auto", "5", 10.0)])
def test_algorithm2_matches_transcription(s, k, radius):
    p = make_sensing(d=24, c=20, radius=radius)  # radius 10: s grows to 20, then back to 8
    ker = PDBFWTraceKernel(p, PDBFWOptions(s=s, k=k, delta="x100"), method="full")
    ref = py_pdbfw_trace(p, 40, ker.s, ker.k, 100.0, s == "auto", k == "auto")
    for t, r in enumerate(ref):
        assert (ker.s, ker.k) == (r["s"], r["k"]), t
        ker.run(1)
        for got, want, what in ((ker.X, r["X"], "X"), (-ker.alpha, r["Y"], "Y"),
                                (ker.W, r["W"], "W"), (-ker.U, r["Z"], "Z")):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10,
                                       err_msg=f"{what}, iteration {t}")
    # the greedy rows moved on from the first block; s=auto grew and shrank (with k = 5 the
    # first steps are exact already)
    assert np.count_nonzero(np.any(ker.alpha != 0, axis=1)) >= min(p.n, ker.k + 1)
    if s == k == "auto":
        assert max(r["s"] for r in ref) > ker.s == S_START


@pytest.mark.parametrize("k,delta", [("balance", "x100"), ("n", "x100"), ("8", "exact")])
def test_algorithm2_open_choices_match_transcription(k, delta):
    p = make_sensing(d=24, c=20, radius=3.0)
    ker = PDBFWTraceKernel(p, PDBFWOptions(s="3", k=k, delta=delta), method="full")
    mult = math.inf if delta == "exact" else 100.0
    ref = py_pdbfw_trace(p, 30, 3, p.n if k == "n" else int(k) if k.isdigit() else 1, mult,
                         balance=k == "balance")
    for t, r in enumerate(ref):
        ker.run(1)
        assert ker.k == r["k"], t
        for got, want, what in ((ker.X, r["X"], "X"), (-ker.alpha, r["Y"], "Y"),
                                (-ker.U, r["Z"], "Z")):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10,
                                       err_msg=f"{what}, iteration {t}")


@pytest.mark.parametrize("k,delta", [("n", "x100"), ("n", "exact")])
def test_algorithm2_extrapolated_matches_transcription(k, delta):
    p = make_sensing(d=24, c=20, radius=3.0)
    ker = PDBFWTraceKernel(p, PDBFWOptions(s="3", k=k, delta=delta, extrapolate="primal"),
                           method="full")
    mult = math.inf if delta == "exact" else 100.0
    ref = py_pdbfw_trace(p, 30, 3, p.n, mult, extrapolate=1.0)
    plain = py_pdbfw_trace(p, 30, 3, p.n, mult)
    for t, r in enumerate(ref):
        ker.run(1)
        for got, want, what in ((ker.X, r["X"], "X"), (-ker.alpha, r["Y"], "Y"),
                                (-ker.U, r["Z"], "Z")):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10,
                                       err_msg=f"{what}, iteration {t}")
    assert np.abs(ref[-1]["Y"] - plain[-1]["Y"]).max() > 1e-6


def test_algorithm2_sparse_data_equal_dense():
    """Algorithm 2 on a CSR copy of A: the same iterates (A U_s and A_I^T dY by scipy), and
    the work counted in stored entries of A."""
    p = make_sensing()
    A = p.mat.copy()
    A[np.abs(A) < 0.3] = 0.0  # some structure to skip
    dense = Problem(A, p.b, "squared", penalty=p.penalty)
    sparse = Problem(sp.csr_matrix(A), p.b, "squared", penalty=p.penalty)
    kd = PDBFWTraceKernel(dense, PDBFWOptions(s="3", k="10", delta="x100"), method="full")
    ks = PDBFWTraceKernel(sparse, PDBFWOptions(s="3", k="10", delta="x100"), method="full")
    for _ in range(20):
        _, td = kd.run(1)
        _, ts = ks.run(1)
        np.testing.assert_allclose(ks.X, kd.X, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ks.alpha, kd.alpha, rtol=1e-10, atol=1e-12)
        assert ts < td  # nnz(A) r + nnz(A_I) c against n d r + k d c


def test_algorithm2_rank_step_and_auto_sizes():
    """The W update is rank(X~) <= s; s=auto tracks the rank of the full projected step
    and k = floor(n s (1/c + 1/d)) (Sec. 4.4)."""
    p = make_sensing()
    ker = PDBFWTraceKernel(p, PDBFWOptions(delta="x1000"))

    def auto_k(s):
        return max(1, min(p.n, math.floor(p.n * s * (1 / p.k + 1 / p.d))))

    assert ker.s == min(S_START, p.d, p.k) and ker.k == auto_k(ker.s)
    for _ in range(50):
        ker.run(1)
        assert ker.last_rank <= ker.s and ker.k == auto_k(ker.s)
    assert ker.exact and ker.last_rank == 1  # X* has rank 1
    assert ker.s == S_START  # the floor: 2 rank(X~) = 2 < 8


# ---- the selections and the sparse step, against brute force ------------------------------

def adversarial(m, rng):
    return {
        "random": rng.standard_normal(m),
        "ties": rng.integers(0, 3, m).astype(float),
        "equal": np.ones(m),
        "sorted": np.arange(m, dtype=float),
        "reversed": np.arange(m, dtype=float)[::-1].copy(),
        "organ_pipe": np.minimum(np.arange(m), np.arange(m)[::-1]).astype(float),
        "one_spike": np.eye(1, m, m // 2).ravel(),
    }


@pytest.mark.parametrize("m", [1, 2, 17, 1000, 40000])  # 40000: the sampled first pivot
def test_top_k_is_the_sorted_selection(m):
    rng = np.random.default_rng(m)
    for name, key in adversarial(m, rng).items():
        for k in sorted({0, 1, 7, m // 2, m - 1, m} & set(range(m + 1))):
            np.testing.assert_array_equal(_pdbfw.top_k(key, k), top(np.abs(key), k),
                                          err_msg=f"{name} {k}")
            np.testing.assert_array_equal(_pdbfw.top_k(-key, k), top(np.abs(key), k))
            if k == 0:
                continue
            # the quickselect inside: the default depth, the sort fallback at once, after
            # one partition; np.partition's k-th largest
            want = np.partition(key, m - k)[m - k]
            for depth in (-1, 0, 1):
                assert _pdbfw.kth(key, k, depth) == (want, np.sum(key > want)), (name, k, depth)


@pytest.mark.parametrize("seed", range(4))
def test_sparse_step_is_the_sparse_projection(seed):
    """x~ of (8) minimizes ||x - v|| over ||x||_1 <= r, ||x||_0 <= s: brute force over
    every support of size s (the best point with support in S is P_ball(v_S))."""
    rng = np.random.default_rng(seed)
    d = 6
    v = 2 * rng.standard_normal(d)
    if seed == 1:
        v[1], v[4] = -v[0], 0.0  # a tie in magnitude and a zero
    for s, radius in itertools.product(range(1, d + 1), (0.3, 2.0, 100.0)):
        x, theta, exact = _pdbfw.sparse_l1_projection(v, s, radius)
        best = np.inf
        for S in itertools.combinations(range(d), s):
            S = list(S)
            cand = np.zeros(d)
            cand[S] = project_l1_ball(v[S], radius)
            best = min(best, np.sum((cand - v) ** 2))
        assert np.sum((x - v) ** 2) <= best + 1e-12
        assert np.count_nonzero(x) <= s and np.abs(x).sum() <= radius * (1 + 1e-12)
        full = project_l1_ball(v, radius)
        assert exact == (np.count_nonzero(full) <= s)
        if exact:
            np.testing.assert_allclose(x, full, atol=1e-12)
        kept = x != 0  # x~_j = sign(v_j) (|v_j| - theta) on its support
        if np.abs(v[top(np.abs(v), s)]).sum() <= radius:
            assert theta == 0.0
        else:
            np.testing.assert_allclose(np.abs(v[kept]) - np.abs(x[kept]), theta, atol=1e-12)


# ---- certified optima ------------------------------------------------------------------------

@functools.cache
def slsqp_solution(loss, radius):
    """An independent solution of ``make_problem(loss=loss, radius=radius)``: SLSQP on the
    split x = x+ - x-, x+- >= 0, sum(x+ + x-) <= r, on P (objective.primal and
    objective.loss_gradient)."""
    p = make_problem(loss=loss, radius=radius)
    d = p.d

    def fun(u):
        x = u[:d] - u[d:]
        val = objective.primal(p, x)
        g = objective.loss_gradient(p, x) + p.l2 * x
        return val, np.concatenate([g, -g])

    cons = {"type": "ineq", "fun": lambda u: p.radius - u.sum(),
            "jac": lambda u: -np.ones(2 * d)}
    res = so.minimize(fun, np.zeros(2 * d), jac=True, method="SLSQP", bounds=[(0, None)] * (2 * d),
                      constraints=[cons], options={"ftol": 1e-14, "maxiter": 1000})
    x = res.x[:d] - res.x[d:]
    return x * min(1.0, p.radius / max(np.abs(x).sum(), 1e-300))  # on the ball exactly


def distance_bound(p, gap):
    """mu/2 ||x - x*||^2 <= P(x) - P* <= gap (P is mu-strongly convex)."""
    return math.sqrt(2.0 * max(gap, 0.0) / p.l2)


@pytest.mark.parametrize("loss,radius,active", [("smooth_hinge", 1.0, True),
                                                ("smooth_hinge", 100.0, False),
                                                ("squared", 1.0, True)])
@pytest.mark.parametrize("delta", ["theorem", "x100"])
def test_certified_optimum_agrees_with_two_references(loss, radius, active, delta):
    p = make_problem(loss=loss, radius=radius)
    res = solve(p, "pdbfw", tol=1e-9, options={"delta": delta})
    last = res.trace.iloc[-1]
    assert res.status == "converged" and last.gap <= 1e-8 * abs(last.primal)
    assert (np.abs(res.w).sum() > radius * (1 - 1e-6)) == active
    ref = reference_solution(p)
    bound = distance_bound(p, last.gap) + distance_bound(p, ref.gap)
    assert np.linalg.norm(res.w - ref.w) <= bound
    xs = slsqp_solution(loss, radius)
    gap_s = objective.duality_gap(p, xs, objective.alpha_of_w(p, xs))
    assert gap_s < 1e-6
    assert np.linalg.norm(res.w - xs) <= distance_bound(p, last.gap) + distance_bound(p, gap_s)


@pytest.mark.parametrize("options", [{"k": "balance", "delta": "x100"}, {"k": "n"},
                                     {"delta": "exact"}, {"k": "balance", "delta": "exact"},
                                     {"k": "n", "delta": "x100", "extrapolate": "primal"},
                                     {"k": "n", "delta": "x1000", "extrapolate": "primal"}])
@pytest.mark.parametrize("loss,radius", [("smooth_hinge", 1.0), ("squared", 1.0)])
def test_open_choices_reach_the_certified_optimum(options, loss, radius):
    p = make_problem(loss=loss, radius=radius)
    res = solve(p, "pdbfw", tol=1e-9, options=options)
    last = res.trace.iloc[-1]
    assert res.status == "converged" and last.gap <= 1e-8 * abs(last.primal)
    xs = slsqp_solution(loss, radius)
    gap_s = objective.duality_gap(p, xs, objective.alpha_of_w(p, xs))
    assert np.linalg.norm(res.w - xs) <= distance_bound(p, last.gap) + distance_bound(p, gap_s)


@pytest.mark.parametrize("options", [{"k": "balance", "delta": "x1000"},
                                     {"k": "n", "delta": "x100"},
                                     {"delta": "exact"},
                                     {"k": "n", "delta": "x100", "extrapolate": "primal"}])
def test_trace_ball_open_choices_reach_the_certified_optimum(options):
    p = make_sensing(radius=3.0)
    res = solve(p, "pdbfw", tol=1e-9, options=options)
    last = res.trace.iloc[-1]
    assert res.status == "converged" and last.gap <= 1e-8 * abs(last.primal)
    ref = reference_solution(p)
    assert np.linalg.norm(res.w - ref.w) <= distance_bound(p, last.gap) + distance_bound(
        p, ref.gap)


def test_dense_data_converge():
    p = make_problem(dense=True)
    res = solve(p, "pdbfw", tol=1e-9, options={"delta": "x10"})
    assert res.status == "converged"


@pytest.mark.parametrize("radius", [3.0, 100.0])
def test_trace_ball_certified_optimum(radius):
    p = make_sensing(radius=radius)
    res = solve(p, "pdbfw", tol=1e-9, options={"delta": "x1000"})
    last = res.trace.iloc[-1]
    assert res.status == "converged" and last.gap <= 1e-8 * abs(last.primal)
    ref = reference_solution(p)
    assert np.linalg.norm(res.w - ref.w) <= distance_bound(p, last.gap) + distance_bound(
        p, ref.gap)
    if radius == 3.0:  # active ball, low rank
        sv = np.linalg.svd(res.w, compute_uv=False)
        assert sv.sum() == pytest.approx(3.0, rel=1e-9) and sv[1] < 1e-3 * sv[0]


@pytest.mark.parametrize("loss", ["smooth_hinge", "squared"])
def test_the_saddle_point_is_a_fixed_point(loss):
    """With the 1/n of the saddle function (6) on f^* in (10), y_i = f_i'(a_i^T x) is the
    dual step's fixed point for every delta (the printed (10) would move it to
    f_i'(a_i^T x / n)), and from (x*, f'(A x*)) the iteration stays put."""
    p = make_problem(loss=loss)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(p.n)
    y = -objective.alpha_of_w(Problem(sp.eye(p.n, format="csr"), p.b, loss, l2=1.0), w)
    for delta in (1e-3, 1.0, 1e3):
        np.testing.assert_allclose(dual_argmax(loss, w, y, p.b, p.n, delta), y, atol=1e-14)
    ref = reference_solution(p)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s=str(p.d), k=str(p.n)), w0=ref.w)
    ker.run(30 * p.nnz)
    np.testing.assert_allclose(ker.x, ref.w, atol=1e-8)
    np.testing.assert_allclose(ker.alpha, objective.alpha_of_w(p, ref.w), atol=1e-8)


def test_iterates_certify_with_the_better_dual_point():
    p = make_problem()
    ker = PDBFWL1Kernel(p, PDBFWOptions())
    ker.run(2 * p.nnz)
    x, alpha = ker.iterates()
    d_best = objective.dual(p, alpha)
    assert d_best == max(objective.dual(p, ker.alpha),
                         objective.dual(p, objective.alpha_of_w(p, x)))


# ---- options and bad input ----------------------------------------------------------------

def test_registry_entry():
    spec = SOLVERS["pdbfw"]
    assert spec.matrix and spec.family == "primal_dual" and spec.start == "w0"
    assert spec.tag() == "auto-auto-theorem"
    assert spec.tag({"s": "423", "k": "7", "delta": "x10"}) == "423-7-x10"


def test_counts_are_capped():
    p = make_problem(n=30, d=20)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s="1000", k="500"))
    assert (ker.s, ker.k) == (20, 30)


@pytest.mark.parametrize("options,match", [({"s": "0"}, "unknown s"),
                                           ({"k": "many"}, "unknown k"),
                                           ({"delta": "x5"}, "unknown delta")])
def test_bad_options_name_the_setting(options, match):
    p = make_problem(n=30, d=20)
    with pytest.raises(ConfigError, match=match):
        solve(p, "pdbfw", options=options)


def test_bad_problems_are_refused():
    p = make_problem(n=30, d=20)
    A, b = p.csr, p.b
    with pytest.raises(ConfigError, match="label matrix"):
        solve(Problem(A, np.column_stack([b, -b]), "smooth_hinge", L1Ball(1.0, 0.1)), "pdbfw")
    with pytest.raises(ConfigError, match="loss 'logistic'"):
        solve(Problem(A, b, "logistic", L1Ball(1.0, 0.1)), "pdbfw")
    with pytest.raises(ConfigError, match="l2 > 0"):
        solve(Problem(A, b, "smooth_hinge", L1Ball(1.0)), "pdbfw")
    with pytest.raises(ConfigError, match="l1 ball or a trace-norm ball"):
        pdbfw_factory(Problem(A, b, "smooth_hinge", ElasticNet(0.1)), PDBFWOptions(), 0)
    with pytest.raises(ConfigError, match="outside the l1 ball"):
        solve(p, "pdbfw", w0=np.ones(p.d))
    with pytest.raises(ConfigError, match="w0 of shape"):
        solve(p, "pdbfw", w0=np.zeros(p.d + 1))
    q = make_sensing()
    with pytest.raises(ConfigError, match="outside the trace-norm ball"):
        solve(q, "pdbfw", w0=np.ones((q.d, q.k)))
