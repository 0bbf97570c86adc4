"""Tests of pdsparse.stats: Face-Off eqs. (7), (12)-(16), Theorems 2 and 3."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse import stats
from pdsparse.data.synthetic import worst_case_general
from pdsparse.errors import ConfigError


def random_sparse_no_empty(n: int, d: int, density: float, seed: int) -> sp.csr_matrix:
    """Random sparse n x d matrix with wildly varying magnitudes and no zero row/column."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=density, random_state=rng, format="lil")
    A = A.tocsr()
    A.data = rng.standard_normal(A.nnz) * 10.0 ** rng.uniform(-3, 3, A.nnz)
    # guarantee every row and column is nonzero
    k = max(n, d)
    extra = sp.csr_matrix(
        (rng.uniform(0.5, 2.0, k), (np.arange(k) % n, np.arange(k) % d)), shape=(n, d)
    )
    A = (A + extra).tocsr()
    A.eliminate_zeros()
    assert np.all(np.diff(A.indptr) > 0) and np.all(np.bincount(A.indices, minlength=d) > 0)
    return A


# -------------------------------------------------------------------------- hand computed


def test_tiny_hand_computed():
    # A is n x d = 2 x 3 (rows = examples); X = A^T
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, -1.0]]))
    # columns (features): nnz [1, 1, 2], sq [1, 9, 5] -> C_P = 1 + 9 + 10 = 20
    # rows (examples):    nnz [2, 2],    sq [5, 10]   -> C_D = 10 + 20 = 30
    assert stats.c_primal(A) == 20.0
    assert stats.c_dual(A) == 30.0
    l2, beta = 0.5, 0.25  # l2 * n = 1, beta / (l2 n) = 0.25
    s = stats.data_stats(A, l2, beta)
    assert s["n"] == 2 and s["d"] == 3 and s["nnz"] == 4
    assert s["density"] == pytest.approx(4 / 6)
    assert s["frob2"] == 15.0
    assert s["C_P"] == 20.0 and s["C_D"] == 30.0
    assert s["C_P_over_C_D"] == pytest.approx(2 / 3)
    assert s["T_P_importance"] == pytest.approx(4 + 0.25 * 20)  # 9
    assert s["T_D_importance"] == pytest.approx(4 + 0.25 * 30)  # 11.5
    assert s["T_P_over_T_D"] == pytest.approx(9 / 11.5)
    assert s["T_P_uniform"] == pytest.approx(4 * (1 + 0.25 * 9))  # max col sq = 9
    assert s["T_D_uniform"] == pytest.approx(4 * (1 + 0.25 * 10))  # max row sq = 10
    expected_keys = {
        "n",
        "d",
        "nnz",
        "density",
        "frob2",
        "C_P",
        "C_D",
        "C_P_over_C_D",
        "T_P_uniform",
        "T_D_uniform",
        "T_P_importance",
        "T_D_importance",
        "T_P_over_T_D",
    }
    assert set(s) == expected_keys
    assert all(type(v) in (int, float) for v in s.values())


def test_explicit_zeros_and_dense_input():
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, -1.0]]))
    B = A.copy()
    B.data[0] = 0.0  # stored zero must not count as a nonzero
    dense = B.toarray()
    prof = stats.matrix_profiles(B)
    assert prof["row_nnz"].tolist() == [1, 2]
    assert prof["col_nnz"].tolist() == [0, 1, 2]
    assert stats.c_primal(B) == stats.c_primal(dense) == 9.0 + 2 * 5
    assert stats.c_dual(B) == stats.c_dual(dense) == 4.0 + 2 * 10
    # empty rows and columns are fine
    E = sp.csr_matrix((3, 4))
    assert stats.c_primal(E) == 0.0 and stats.data_stats(E, 1.0, 1.0)["nnz"] == 0


def test_c_primal_is_c_dual_of_transpose():
    A = random_sparse_no_empty(30, 17, 0.2, 0)
    assert stats.c_primal(A) == pytest.approx(stats.c_dual(A.T.tocsr()))
    assert stats.c_dual(A) == pytest.approx(stats.c_primal(A.T.tocsc()))


# -------------------------------------------------------------------------- Theorem 3


@pytest.mark.parametrize("seed", range(6))
def test_theorem3_bounds_random(seed):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(2, 60, size=2)
    A = random_sparse_no_empty(int(n), int(d), float(rng.uniform(0.02, 0.5)), seed)
    f = stats.data_stats(A, 1.0, 1.0)["frob2"]
    cp, cd = stats.c_primal(A), stats.c_dual(A)
    tol = 1 + 1e-12
    assert f <= cp * tol and cp <= n * f * tol
    assert f <= cd * tol and cd <= d * f * tol
    assert 1 / d <= cp / cd * tol and cp / cd <= n * tol


def test_dense_data_sec61():
    rng = np.random.default_rng(3)
    A = sp.csr_matrix(rng.standard_normal((7, 5)))
    f = float((A.data**2).sum())
    assert stats.c_primal(A) == pytest.approx(7 * f)
    assert stats.c_dual(A) == pytest.approx(5 * f)


@pytest.mark.parametrize("d,n", [(2, 2), (5, 3), (4, 9), (30, 30), (3, 100)])
def test_theorem3_closed_forms_xabc(d, n):
    a, b, c = 1.7, -0.3, 2.2
    A, _ = worst_case_general(d, n, a, b, c, seed=0)
    cp = (d - 1) * a**2 + n * (n - 1) * b**2 + n * c**2
    cd = d * (d - 1) * a**2 + (n - 1) * b**2 + d * c**2
    assert stats.c_primal(A) == pytest.approx(cp, rel=1e-13)
    assert stats.c_dual(A) == pytest.approx(cd, rel=1e-13)


@pytest.mark.parametrize("d,n", [(5, 5), (4, 50), (40, 6)])
def test_theorem3_tightness(d, n):
    eps = 1e-7
    A, _ = worst_case_general(d, n, 1.0, eps, eps, seed=0)
    assert stats.c_primal(A) / stats.c_dual(A) == pytest.approx(1 / d, rel=1e-6)
    B, _ = worst_case_general(d, n, eps, 1.0, eps, seed=0)
    assert stats.c_primal(B) / stats.c_dual(B) == pytest.approx(n, rel=1e-6)
    # the C_P / C_D bounds themselves: C_P -> ||X||_F^2 and C_P -> n ||X||_F^2
    fa, fb = float((A.data**2).sum()), float((B.data**2).sum())
    assert stats.c_primal(A) == pytest.approx(fa, rel=1e-6)
    assert stats.c_dual(A) == pytest.approx(d * fa, rel=1e-6)
    assert stats.c_primal(B) == pytest.approx(n * fb, rel=1e-6)
    assert stats.c_dual(B) == pytest.approx(fb, rel=1e-6)


# -------------------------------------------------------------------------- eqs. (12)-(15)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("beta", [0.25, 1.0])
def test_eq15_equals_eq12_13_with_eq14(seed, beta):
    A = random_sparse_no_empty(40, 25, 0.15, seed)
    n = A.shape[0]
    l2 = 1.0 / n if seed % 2 else 0.37
    prof = stats.matrix_profiles(A)
    for side, key, ncoord in (("primal", "col", A.shape[1]), ("dual", "row", n)):
        sq, nnz = prof[f"{key}_sq"], prof[f"{key}_nnz"]
        p_imp = stats.importance_probabilities(sq, l2, n, beta)
        assert p_imp.sum() == pytest.approx(1.0)
        t12 = stats.complexity_from_probabilities(sq, nnz, p_imp, l2, beta, n)
        t15 = stats.total_complexity(A, l2, beta, side, "importance")
        assert t12 == pytest.approx(t15, rel=1e-12)
        c = stats.c_primal(A) if side == "primal" else stats.c_dual(A)
        assert t15 == pytest.approx(A.nnz + beta / (l2 * n) * c, rel=1e-12)
        p_uni = np.full(ncoord, 1.0 / ncoord)
        t_uni = stats.complexity_from_probabilities(sq, nnz, p_uni, l2, beta, n)
        assert t_uni == pytest.approx(stats.total_complexity(A, l2, beta, side, "uniform"))
        # Sec. 5.2: importance sampling never worse than uniform
        assert t15 <= t_uni * (1 + 1e-12)
    s = stats.data_stats(A, l2, beta)
    assert s["T_P_importance"] == pytest.approx(stats.total_complexity(A, l2, beta, "primal"))
    assert s["T_D_uniform"] == pytest.approx(stats.total_complexity(A, l2, beta, "dual", "uniform"))


@pytest.mark.parametrize("seed", range(3))
def test_theorem2_importance_is_optimal(seed):
    rng = np.random.default_rng(seed)
    A = random_sparse_no_empty(30, 20, 0.2, seed)
    n = A.shape[0]
    l2, beta = 1.0 / n, 0.25
    prof = stats.matrix_profiles(A)
    for key in ("col", "row"):
        sq, nnz = prof[f"{key}_sq"], prof[f"{key}_nnz"]
        p_star = stats.importance_probabilities(sq, l2, n, beta)
        t_star = stats.complexity_from_probabilities(sq, nnz, p_star, l2, beta, n)
        for _ in range(300):
            p = rng.dirichlet(np.full(sq.size, rng.choice([0.3, 1.0, 10.0])))
            assert stats.complexity_from_probabilities(sq, nnz, p, l2, beta, n) >= t_star * (
                1 - 1e-12
            )
            # small perturbations of p_star are not better either
            q = p_star * np.exp(1e-3 * rng.standard_normal(sq.size))
            q /= q.sum()
            assert stats.complexity_from_probabilities(sq, nnz, q, l2, beta, n) >= t_star * (
                1 - 1e-12
            )
    assert stats.complexity_from_probabilities([1.0, 1.0], [1, 1], [1.0, 0.0], 1, 1, 2) == np.inf


def test_bad_arguments():
    A = random_sparse_no_empty(5, 4, 0.5, 0)
    with pytest.raises(ConfigError, match="side"):
        stats.total_complexity(A, 1.0, 1.0, side="both")
    with pytest.raises(ConfigError, match="sampling"):
        stats.total_complexity(A, 1.0, 1.0, sampling="optimal")
    with pytest.raises(ConfigError, match="l2"):
        stats.data_stats(A, 0.0, 1.0)
    with pytest.raises(ValueError):
        stats.complexity_from_probabilities([1.0], [1, 2], [1.0], 1.0, 1.0, 1)


def test_large_sparse_matrix():
    rng = np.random.default_rng(0)
    n, d, nnz = 20_000, 1_000_000, 3_000_000
    indptr = np.linspace(0, nnz, n + 1).astype(np.int64)
    indices = rng.integers(0, d, nnz).astype(np.int32)
    A = sp.csr_matrix((rng.random(nnz), indices, indptr), shape=(n, d))
    s = stats.data_stats(A, 1.0 / n, 0.25)  # speed is a benchmark concern, not a test's
    assert s["nnz"] == np.count_nonzero(A.data)
