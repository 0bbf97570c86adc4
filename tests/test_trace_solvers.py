"""The trace-norm ball baselines (pdsparse.solvers.trace) and the low-rank sensing data of
PDBFW Sec. 5.1: NumPy transcriptions of the published algorithms (full SVDs, the same random
draws) compared iterate by iterate with the kernels; certified gaps; agreement with the
reference solver and with a projected-gradient solve written here."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse import objective
from pdsparse.data import synthetic as syn
from pdsparse.data.store import load_dataset, save_dataset
from pdsparse.errors import ConfigError
from pdsparse.penalties import L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import SOLVERS, make_kernel, solve
from pdsparse.solvers.ball import (
    AccPGOptions,
    FWOptions,
    SCGSOptions,
    STORCOptions,
    SVRGOptions,
)
from pdsparse.solvers.trace import (
    BlockFWOptions,
    SFWOptions,
    strong_convexity,
    trace_cndg,
    trace_kernel,
)

N, D, C, RANK = 40, 12, 8, 2


def sensing(theta=0.5, n=N, d=D, c=C, rank=RANK, seed=1):
    A, B = syn.lowrank_sensing(rank=rank, nuclear_norm=1.0, seed=seed, n=n, d=d, c=c)
    return Problem(A, B, "squared", penalty=TraceBall(theta, 10 / n))


@pytest.fixture(scope="module")
def prob():
    return sensing()


@pytest.fixture(scope="module")
def ref(prob):
    return reference_solution(prob, rtol=1e-12)


# ------------------------------------------------------------------ independent oracles

def simplex_proj(s, r):
    """min ||p - s|| over p >= 0, sum p <= r, by bisection on the threshold (then exact on
    the support it finds): an implementation independent of the package's sort."""
    s = np.maximum(s, 0.0)
    if s.sum() <= r:
        return s.copy()
    lo, hi = 0.0, float(s.max())
    for _ in range(200):
        tau = (lo + hi) / 2
        lo, hi = (tau, hi) if np.maximum(s - tau, 0).sum() > r else (lo, tau)
    keep = s > (lo + hi) / 2
    tau = (s[keep].sum() - r) / keep.sum()
    return np.maximum(s - tau, 0.0)


def proj(V, r):
    U, s, Vt = np.linalg.svd(V, full_matrices=False)
    return (U * simplex_proj(s, r)) @ Vt


def lmo(G, r):
    U, _, Vt = np.linalg.svd(G, full_matrices=False)
    return -r * np.outer(U[:, 0], Vt[0])


class Consts:
    """The problem's constants, computed here from their definitions."""

    def __init__(self, p):
        A, B = p.mat, p.b
        self.A, self.B, self.n, self.mu, self.r = A, B, p.n, p.l2, p.radius
        self.L = np.linalg.norm(A, 2) ** 2 / p.n + p.l2
        self.Lmax = max(np.sum(A * A, axis=1)) + p.l2
        an = np.linalg.norm(A, axis=1)
        g = np.linalg.norm(B, axis=1) + p.radius * an  # |phi'| bound of the squared loss
        self.sigma2 = np.mean(g * g * an * an)
        self.G = np.mean(g * an) + p.l2 * p.radius
        self.alpha = p.l2 + np.linalg.svd(A, compute_uv=False)[-1] ** 2 / p.n
        self.Dm = 2 * p.radius

    def grad(self, X):
        return self.A.T @ (self.A @ X - self.B) / self.n + self.mu * X

    def grad_rows(self, X, idx):
        """mean_j grad f_{i_j}(X), f_i = 1/2 ||a_i^T X - b_i||^2 + mu/2 ||X||^2."""
        return np.mean([np.outer(self.A[i], self.A[i] @ X - self.B[i]) for i in idx],
                       axis=0) + self.mu * X


def cndg(g, u, beta, eta, r, guard):
    """Lan & Zhou (2016), the CndG procedure, transcribed."""
    ut = u.copy()
    for _ in range(guard):
        h = g + beta * (ut - u)
        v = lmo(h, r)
        if np.vdot(h, ut - v) <= eta:
            break
        a = min(1.0, np.vdot(beta * (u - ut) - g, v - ut) / (beta * np.vdot(v - ut, v - ut)))
        ut = (1 - a) * ut + a * v
    return ut


def guard_of(beta, eta, diam):
    return 2 * math.ceil(6.0 * beta * diam * diam / eta) + 10


def kernel(p, name, options, seed=0):
    k = trace_kernel(name, p, options, seed)
    k.svd = "full"  # LAPACK, as the transcriptions
    return k


def steps(k, count):
    """The kernel's iterate after each of ``count`` iterations (run(1): one iteration)."""
    out = []
    for _ in range(count):
        assert k.run(1)[0] == 1
        out.append(k.solution().copy())
    return out


def assert_close(got, want):
    for t, (x, y) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-11, err_msg=f"iteration {t + 1}")


# ------------------------------------------------------------------ transcriptions

@pytest.mark.parametrize("cap", ["n", "none"])
def test_sfw_matches_transcription(prob, cap):
    c = Consts(prob)
    rng = np.random.default_rng(3)
    X, want = np.zeros((D, C)), []
    for k in range(1, 13):
        gamma = 2 / (k + 1)
        m = math.ceil((c.G * (k + 1) / (c.L * c.Dm)) ** 2)
        m = min(m, N) if cap == "n" else m
        # a batch of n or more: the exact gradient, no draws
        g = c.grad(X) if m >= N else c.grad_rows(X, rng.integers(0, N, size=m))
        X = (1 - gamma) * X + gamma * lmo(g, c.r)
        want.append(X)
    kern = kernel(prob, "sfw", SFWOptions(batch_cap=cap), seed=3)
    assert_close(steps(kern, 12), want)
    assert kern.batches[0] == min(math.ceil((c.G * 2 / (c.L * c.Dm)) ** 2), N if cap == "n"
                                  else 10**9)


@pytest.mark.parametrize("s,step", [("2", "theory"), ("auto", "x2"), ("3", "x10")])
def test_block_fw_matches_transcription(s, step):
    p = sensing(d=20, c=16)  # min(d, c) > 8: room for s = auto to grow
    c = Consts(p)
    eta = min(1.0, {"theory": 1, "x2": 2, "x10": 10}[step] * c.alpha / (2 * c.L))
    rank = 8 if s == "auto" else int(s)
    X, want, ranks = np.zeros((20, 16)), [], []
    for _ in range(15):
        M = X - c.grad(X) / (c.L * eta)
        U, sv, Vt = np.linalg.svd(M, full_matrices=False)
        sig = simplex_proj(sv[:rank], c.r)
        ranks.append(rank)
        if s == "auto" and np.all(sig > 0) and rank < 16:
            rank = min(2 * rank, 16)
        X = (1 - eta) * X + eta * (U[:, :sig.size] * sig) @ Vt[:sig.size]
        want.append(X)
    kern = kernel(p, "block_fw", BlockFWOptions(s=s, step=step))
    assert kern.eta == pytest.approx(eta, rel=1e-12)
    assert_close(steps(kern, 15), want)
    assert kern.ranks == ranks


def test_block_fw_auto_rank_grows_only_when_the_bound_binds():
    # inactive ball (radius 10 >> ||X_ridge||_*): every projected value stays, s doubles
    kern = BlockFWKernel_of(sensing(theta=10.0, d=30, c=20))
    steps(kern, 4)
    assert kern.ranks == [8, 16, 20, 20]
    # active ball, rank-2 optimum: after the first steps the projection zeroes the tail
    kern = BlockFWKernel_of(sensing(theta=0.3, d=30, c=20))
    steps(kern, 30)
    assert kern.ranks[-1] == kern.ranks[-10] and kern.s < 20


def BlockFWKernel_of(p):
    return kernel(p, "block_fw", BlockFWOptions(step="x2"))


@pytest.mark.parametrize("step", ["line_search", "open_loop"])
def test_fw_matches_transcription(prob, step):
    c = Consts(prob)
    X, want = np.zeros((D, C)), []
    for t in range(12):
        S = lmo(c.grad(X), c.r)
        if step == "open_loop":
            gamma = 2 / (t + 2)
        else:  # P is quadratic on the segment: the parabola through three of its values
            q0, qh, q1 = (objective.primal(prob, X + g * (S - X)) for g in (0, 0.5, 1))
            a = 2 * q1 - 4 * qh + 2 * q0
            gamma = min(1.0, max(0.0, -(q1 - q0 - a) / (2 * a)))
        X = (1 - gamma) * X + gamma * S
        want.append(X)
    got = steps(kernel(prob, "fw", FWOptions(step=step)), 12)
    for t, (x, y) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(x, y, rtol=1e-7, atol=1e-9, err_msg=f"iteration {t + 1}")


@pytest.mark.parametrize("momentum", ["nesterov", "fista"])
def test_acc_pg_matches_transcription(prob, momentum):
    c = Consts(prob)
    X = Y = np.zeros((D, C))
    t, want = 1.0, []
    q = (math.sqrt(c.L) - math.sqrt(c.mu)) / (math.sqrt(c.L) + math.sqrt(c.mu))
    for _ in range(10):
        Xn = proj(Y - c.grad(Y) / c.L, c.r)
        if momentum == "fista":
            tn = (1 + math.sqrt(1 + 4 * t * t)) / 2
            q, t = (t - 1) / tn, tn
        Y, X = Xn + q * (Xn - X), Xn
        want.append(X)
    assert_close(steps(kernel(prob, "acc_pg", AccPGOptions(momentum=momentum)), 10), want)


@pytest.mark.parametrize("momentum", ["nesterov", "fista"])
def test_acc_pg_backtracking_matches_transcription(prob, momentum):
    """lipschitz=backtracking over the trace ball (issue 28: Acc PG with backtracking raced
    in Figure 2's races and the trace study; before, the option was accepted and ignored):
    Beck & Teboulle's rule from L_0 = max_i ||a_i||^2 / n + mu, doubled while
    F(X) > F(Y) + <grad F(Y), X - Y> + L/2 ||X - Y||^2, the momentum from the current L."""
    c = Consts(prob)

    def F(X):
        R = c.A @ X - c.B
        return 0.5 * np.sum(R * R) / c.n + 0.5 * c.mu * np.sum(X * X)

    L = max(np.sum(c.A * c.A, axis=1)) / c.n + c.mu
    X = Y = np.zeros((D, C))
    t, want, doublings = 1.0, [], 0
    for _ in range(12):
        g = c.grad(Y)
        while True:
            Xn = proj(Y - g / L, c.r)
            dX = Xn - Y
            if F(Xn) <= F(Y) + np.sum(g * dX) + 0.5 * L * np.sum(dX * dX) * (1 + 1e-12):
                break
            L, doublings = 2 * L, doublings + 1
        if momentum == "fista":
            tn = (1 + math.sqrt(1 + 4 * t * t)) / 2
            q, t = (t - 1) / tn, tn
        else:
            q = (math.sqrt(L) - math.sqrt(c.mu)) / (math.sqrt(L) + math.sqrt(c.mu))
        Y, X = Xn + q * (Xn - X), Xn
        want.append(X)
    assert doublings > 0  # the rule was exercised
    k = kernel(prob, "acc_pg", AccPGOptions(momentum=momentum, lipschitz="backtracking"))
    assert_close(steps(k, 12), want)
    assert k.backtracks == doublings and k.lip == pytest.approx(L, rel=1e-15)


@pytest.mark.parametrize("snapshot", ["last", "average"])
def test_svrg_matches_transcription(prob, snapshot):
    c = Consts(prob)
    eta, m = 0.1 / c.Lmax, 2 * N
    rng = np.random.default_rng(5)
    X, want, pos = np.zeros((D, C)), [], 0
    for _ in range(m + 7):  # across a snapshot
        if pos == 0:
            Xs, Gs, xsum = X.copy(), c.grad(X), np.zeros((D, C))
        i = int(rng.integers(N))
        g = c.grad_rows(X, [i]) - c.grad_rows(Xs, [i]) + Gs
        X = proj(X - eta * g, c.r)
        xsum += X
        pos += 1
        if pos == m:
            X = xsum / m if snapshot == "average" else X
            pos = 0
        want.append(X)
    kern = kernel(prob, "svrg", SVRGOptions(snapshot=snapshot), seed=5)
    assert (kern.eta, kern.m) == (eta, m)
    assert_close(steps(kern, m + 7), want)


def test_scgs_matches_transcription(prob):
    c = Consts(prob)
    rng = np.random.default_rng(7)
    x = y = np.zeros((D, C))
    want = []
    for k in range(1, 9):
        gamma, beta, eta = 3 / (k + 2), 4 * c.L / (k + 2), c.L * c.Dm ** 2 / (k * (k + 1))
        batch = min(math.ceil(c.sigma2 * (k + 2) ** 3 / (c.L ** 2 * c.Dm ** 2)), N)
        z = (1 - gamma) * y + gamma * x
        g = c.grad(z) if batch >= N else c.grad_rows(z, rng.integers(0, N, size=batch))
        x = cndg(g, x, beta, eta, c.r, guard_of(beta, eta, c.Dm))
        y = (1 - gamma) * y + gamma * x
        want.append(y)
    assert_close(steps(kernel(prob, "scgs", SCGSOptions(), seed=7), 8), want)


@pytest.mark.parametrize("batch", ["100", "7", "theory"])
def test_storc_matches_transcription(prob, batch):
    c = Consts(prob)
    rng = np.random.default_rng(9)
    y = lmo(c.grad(np.zeros((D, C))), c.r)  # line 3 (grad F(0) = loss gradient at 0)
    n_t = math.ceil(math.sqrt(32 * c.L / c.mu))
    want, t = [], 0
    while len(want) < n_t + 4:  # across a snapshot
        t += 1
        x, ys = y.copy(), y.copy()
        gs = c.grad(ys)
        for k in range(1, n_t + 1):
            gamma, beta = 2 / (k + 1), 3 * c.L / k
            eta = 2 * c.L * (c.L / c.mu) * c.Dm ** 2 / 2 ** (t - 1) / (n_t * k)
            m = min(5600 * n_t * k if batch == "theory" else int(batch), N)
            z = (1 - gamma) * y + gamma * x
            if m >= N:
                g = c.grad(z)
            else:
                idx = rng.integers(0, N, size=m)
                g = gs + c.grad_rows(z, idx) - c.grad_rows(ys, idx)
            x = cndg(g, x, beta, eta, c.r, guard_of(beta, eta, c.Dm))
            y = (1 - gamma) * y + gamma * x
            want.append(y)
    got = steps(kernel(prob, "storc", STORCOptions(batch=batch), seed=9), len(want))
    assert_close(got, want)


def test_trace_cndg_stops_at_the_wolfe_gap():
    rng = np.random.default_rng(0)
    g, u = rng.standard_normal((5, 4)), proj(rng.standard_normal((5, 4)), 1.0)
    out, calls = trace_cndg(g, u, 2.0, 1e-3, 1.0, 10_000, "full")
    np.testing.assert_allclose(out, cndg(g, u, 2.0, 1e-3, 1.0, 10_000), atol=1e-12)
    h = g + 2.0 * (out - u)
    assert np.vdot(h, out - lmo(h, 1.0)) <= 1e-3 and calls >= 2


# ------------------------------------------------------------------ convergence

def test_pg_written_here_agrees_with_the_reference(prob, ref):
    c = Consts(prob)
    X = np.zeros((D, C))
    for _ in range(3000):
        X = proj(X - c.grad(X) / c.L, c.r)
    p_pg = objective.primal(prob, X)
    assert p_pg == pytest.approx(ref.p_star, rel=1e-11)
    assert ref.rel_gap <= 1e-11
    sv = np.linalg.svd(X, compute_uv=False)
    assert sv.sum() == pytest.approx(0.5, rel=1e-9)  # the ball is active at the optimum
    assert np.sum(sv > 1e-8) == RANK


@pytest.mark.parametrize("method,theta", [("acc_pg", 0.5), ("block_fw", 0.5), ("svrg", 0.5),
                                          ("storc", 0.3), ("fw", 0.3),
                                          ("acc_pg lipschitz=backtracking", 0.5)])
def test_certified_gap_1e_8(method, theta, ref):
    """The linearly convergent methods certify a relative gap <= 1e-8; so do, measured, STORC
    with batches capped at n, and FW where the optimum is a vertex of the ball (theta = 0.3:
    X* has rank one, sigma_1 = theta; at theta = 0.5 it has rank 2)."""
    p = sensing(theta)
    method, *opts = method.split()
    r = solve(p, method, tol=1e-8, max_epochs=3000, seed=0,
              options=dict(o.split("=") for o in opts) or None)
    assert r.status == "converged"
    P, Dv, gap = objective.evaluate(p, r.w)
    assert gap <= 1e-8 * P and P >= Dv
    ref_p = ref if theta == 0.5 else reference_solution(p, rtol=1e-12)
    assert P == pytest.approx(ref_p.p_star, rel=1e-8)
    # strong convexity: ||X - X*||^2 <= 2 (P(X) - P*) / mu
    assert np.linalg.norm(r.w - ref_p.w) ** 2 <= 2 * gap / p.l2 + 1e-14


def test_fw_meets_jaggis_bound(prob, ref):
    """Jaggi (2013), Theorem 1: P(X_t) - P* <= 2 C_f / (t + 2), C_f <= L D^2."""
    c = Consts(prob)
    kern = kernel(prob, "fw", FWOptions())
    for t, X in enumerate(steps(kern, 60), start=1):
        assert objective.primal(prob, X) - ref.p_star <= 2 * c.L * c.Dm ** 2 / (t + 2)


def test_sfw_meets_its_bound_with_the_theorem_batches(prob, ref):
    """Hazan & Luo (2016): E P(X_k) - P* <= 4 L D^2 / (k + 2) with m_k = (G (k+1) / (L D))^2
    (uncapped); one seeded run, checked at every k."""
    c = Consts(prob)
    kern = kernel(prob, "sfw", SFWOptions(batch_cap="none"), seed=0)
    for k, X in enumerate(steps(kern, 30), start=1):
        assert objective.primal(prob, X) - ref.p_star <= 4 * c.L * c.Dm ** 2 / (k + 2)


def test_scgs_converges_with_the_theorem_batches(prob, ref):
    """Lan & Zhou's SCGS guarantees E P(y_k) - P* = O(L D^2 / k^2) with the uncapped B_k; the
    constant is not restated here, so this checks the measured run against L D^2 / (k (k+1))
    (the measured ratio is at most ~0.3), and that it is far below the capped run's noise
    floor (B_k <= n: the suboptimality stalls near 0.1 P*)."""
    c = Consts(prob)
    kern = kernel(prob, "scgs", SCGSOptions(batch_cap="none"), seed=0)
    for k, X in enumerate(steps(kern, 10), start=1):
        assert objective.primal(prob, X) - ref.p_star <= c.L * c.Dm ** 2 / (k * (k + 1))
    assert objective.primal(prob, X) - ref.p_star <= 0.1 * ref.p_star


# ------------------------------------------------------------------ registry, work, errors

def test_registry_runs_the_matrix_whole(prob):
    for name in ("sfw", "block_fw", "acc_pg", "fw", "svrg", "scgs", "storc"):
        spec = SOLVERS[name]
        assert spec.matrix
        kern = make_kernel(prob, name, seed=0)
        assert type(kern).__module__ == "pdsparse.solvers.trace"
        assert kern.solution().shape == (D, C)
    assert SOLVERS["sfw"].label == "SFW" and SOLVERS["block_fw"].label == "block FW"


def test_work_counts_entries_of_A_per_column(prob):
    full, dc = N * D * C, D * C
    kern = kernel(prob, "fw", FWOptions())
    assert kern.run(1) == (1, full + N * D + 5 * dc)
    kern = kernel(prob, "sfw", SFWOptions(batch="7"))
    assert kern.run(1) == (1, 2 * 7 * D * C + 3 * dc)
    kern = kernel(prob, "block_fw", BlockFWOptions(s="3"))
    _, touched = kern.run(1)
    kept = np.linalg.matrix_rank(kern.x)  # X_1 = eta U diag(sig) V^T: the kept triplets
    assert 1 <= kept <= 3 and touched == full + N * D * kept + 4 * dc
    r = solve(prob, "block_fw", max_epochs=5, eval_every=1, tol=0)
    assert r.trace.epoch.iloc[1] == pytest.approx(1.0, abs=0.5)  # one gradient: one epoch
    # a projection (Acc PG, SVRG) is a full SVD of the d x c iterate: min(d, c) dense passes
    svd = min(D, C) * dc
    assert kernel(prob, "acc_pg", AccPGOptions()).run(1) == (1, 2 * full + 4 * dc + svd)
    kern = kernel(prob, "svrg", SVRGOptions())
    _, touched = kern.run(1)  # the snapshot's two products, then one inner step
    assert touched == 2 * full + 2 * D * C + 4 * dc + svd


def test_sparse_data_gives_the_same_iterates(prob):
    """A stored as CSR (what a normalization pass makes of dense data) takes the same steps,
    with the same constants: alpha = mu + sigma_min(A)^2 / n either way."""
    sparse = Problem(sp.csr_matrix(prob.mat), prob.b, "squared", penalty=prob.penalty)
    lam = np.linalg.eigvalsh(prob.mat.T @ prob.mat / N)[0]
    assert strong_convexity(prob) == pytest.approx(prob.l2 + lam, rel=1e-10)
    assert strong_convexity(sparse) == pytest.approx(strong_convexity(prob), rel=1e-12)
    for name, opts in (("block_fw", BlockFWOptions(s="2")), ("svrg", SVRGOptions()),
                       ("storc", STORCOptions(batch="7")), ("sfw", SFWOptions(batch="5"))):
        got = steps(kernel(sparse, name, opts, seed=2), 6)
        want = steps(kernel(prob, name, opts, seed=2), 6)
        for x, y in zip(got, want, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)


def test_errors_name_the_setting(prob):
    A, b = np.random.default_rng(0).standard_normal((6, 3)), np.ones(6)
    with pytest.raises(ConfigError, match="TraceBall penalty and a label matrix"):
        trace_kernel("sfw", Problem(A, b, "squared", penalty=L1Ball(1.0, 0.1)), SFWOptions(), 0)
    with pytest.raises(ConfigError, match="no trace-norm ball kernel"):
        trace_kernel("pdbfw", prob, None, 0)
    with pytest.raises(ConfigError, match="outside the trace-norm ball"):
        make_kernel(prob, "block_fw", w0=np.ones((D, C)))
    with pytest.raises(ConfigError, match=r"\(12, 8\) matrix"):
        make_kernel(prob, "sfw", w0=np.zeros(D))
    hinge = Problem(A, np.ones((6, 2)), "smooth_hinge", penalty=TraceBall(1.0, 0.1))
    with pytest.raises(ConfigError, match="line_search is exact for the squared loss"):
        make_kernel(hinge, "fw")
    with pytest.raises(ConfigError, match="block_fw: unknown s 'all'"):
        make_kernel(prob, "block_fw", options={"s": "all"})


# ------------------------------------------------------------------ the data

def test_lowrank_sensing_shapes_rank_and_truth():
    A, B = syn.generate("lowrank_sensing", {"n": 50, "d": 20, "c": 15, "rank": 3,
                                            "nuclear_norm": 2.0}, seed=4)
    X0 = syn.lowrank_sensing_truth(n=50, d=20, c=15, rank=3, nuclear_norm=2.0, seed=4)
    assert isinstance(A, np.ndarray) and A.shape == (50, 20) and A.flags.c_contiguous
    assert B.shape == (50, 15) and X0.shape == (20, 15)
    np.testing.assert_array_equal(B, A @ X0)
    sv = np.linalg.svd(X0, compute_uv=False)
    assert np.sum(sv > 1e-10 * sv[0]) == 3
    assert sv.sum() == pytest.approx(2.0, rel=1e-12)
    # N(0, 1) entries: mean ~0, variance ~1
    assert abs(A.mean()) < 0.2 and A.var() == pytest.approx(1.0, abs=0.25)  # 1000 draws


def test_lowrank_sensing_is_seeded():
    kw = {"n": 30, "d": 10, "c": 8, "nuclear_norm": 1.0}
    A1, B1 = syn.lowrank_sensing(rank=2, seed=0, **kw)
    A2, B2 = syn.lowrank_sensing(rank=2, seed=0, **kw)
    np.testing.assert_array_equal(A1, A2)
    np.testing.assert_array_equal(B1, B2)
    A3, B3 = syn.lowrank_sensing(rank=2, seed=1, **kw)
    assert not np.array_equal(A1, A3) and not np.array_equal(B1, B3)
    A4, _ = syn.lowrank_sensing(rank=5, seed=0, **kw)
    np.testing.assert_array_equal(A1, A4)  # one A for every rank of a seed
    with pytest.raises(ConfigError, match="'rank' must be <= min"):
        syn.generate("lowrank_sensing", {**kw, "rank": 9}, 0)
    with pytest.raises(ConfigError, match="missing parameter.*nuclear_norm"):
        syn.generate("lowrank_sensing", {"rank": 2}, 0)


def test_label_matrix_through_the_store_and_from_dataset(tmp_path):
    from pdsparse.data.prepare import prepare_synthetic

    params = {"n": 30, "d": 10, "c": 8, "rank": 2, "nuclear_norm": 1.0}
    path = tmp_path / "lr.npz"
    prepare_synthetic("lr", "lowrank_sensing", params, 3, "none", path)
    ds = load_dataset(path)
    assert ds.b.shape == (30, 8)
    assert ds.meta["params"]["nuclear_norm"] == 1.0 and ds.meta["params"]["rank"] == 2
    A, B = syn.lowrank_sensing(seed=3, **params)
    np.testing.assert_allclose(np.asarray(ds.A.todense() if hasattr(ds.A, "todense")
                                          else ds.A), A, rtol=0, atol=0)
    np.testing.assert_array_equal(ds.b, B)
    p = Problem.from_dataset(ds, loss="squared",
                             penalty={"name": "trace_ball", "radius": 0.5, "l2": "10/n"})
    assert p.matrix and p.k == 8 and p.l2 == pytest.approx(10 / 30)
    assert type(make_kernel(p, "block_fw")).__name__ == "BlockFWKernel"  # whole, not OvR
    # a dense A and a label matrix round trip through the store as they are
    save_dataset(tmp_path / "dense.npz", A, B, {"name": "dense"})
    back = load_dataset(tmp_path / "dense.npz")
    assert isinstance(back.A, np.ndarray)
    np.testing.assert_array_equal(back.A, A)
    np.testing.assert_array_equal(back.b, B)
