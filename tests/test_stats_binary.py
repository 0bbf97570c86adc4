"""Binary-data theory of Face-Off (appendix): L, U, R, Lemma 10, Theorems 4, 5, 9, Lemma 11.

Lemma 10 and Theorem 9 are checked by exhaustive enumeration of all binary d x n matrices
(the paper's X, d features x n examples) without zero rows/columns for tiny sizes.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse import stats
from pdsparse.data.synthetic import worst_case_binary_dual

SIZES = [(1, 3), (3, 1), (2, 2), (2, 3), (3, 2), (3, 3), (2, 5), (3, 4), (4, 3), (4, 4)]


def enumerate_binary(d: int, n: int):
    """(alpha, C_P, C_D) of every binary d x n X without zero rows/columns."""
    m = d * n
    codes = np.arange(2**m, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(m)) & 1).astype(np.int64).reshape(-1, d, n)
    feat = bits.sum(axis=2)  # ||X_{i:}||_0, shape (N, d)
    ex = bits.sum(axis=1)  # ||X_{:j}||_0, shape (N, n)
    ok = (feat > 0).all(axis=1) & (ex > 0).all(axis=1)
    feat, ex = feat[ok], ex[ok]
    return feat.sum(axis=1), (feat**2).sum(axis=1), (ex**2).sum(axis=1)


def abar(a: int, b: int) -> int:
    return 0 if b == 0 else b * (a // b)


def L_literal(alpha: int, n: int) -> Fraction:
    """Paper's formula verbatim (rational arithmetic)."""
    ab = abar(alpha, n)
    return Fraction(ab * ab + (alpha - ab) * (2 * ab + n), n)


def U_literal(alpha: int, d: int, n: int) -> int:
    m = abar(alpha - d, n - 1)
    return (n + 1) * m + d - 1 + (alpha - d + 1 - m) ** 2


@pytest.mark.parametrize("d,n", SIZES)
def test_lemma10_and_theorem9_brute_force(d, n):
    alpha, cp, cd = enumerate_binary(d, n)
    # admissible range is max(d, n) <= alpha <= d n (not n + d - 1 as in the Thm 4 proof)
    assert alpha.min() == max(d, n) and alpha.max() == d * n
    for a in range(max(d, n), d * n + 1):
        sel = alpha == a
        assert sel.any()
        assert cd[sel].min() == stats.L(a, n)  # (19)
        assert cp[sel].min() == stats.L(a, d)  # (20)
        assert cd[sel].max() == stats.U(a, n, d)  # (21)
        assert cp[sel].max() == stats.U(a, d, n)  # (22)
        ratio = cp[sel] / cd[sel]
        # Theorem 9 as printed: 1/R(a, n, d) <= C_P/C_D <= R(a, d, n), both tight
        assert ratio.max() == pytest.approx(stats.R(a, d, n), rel=1e-14)
        assert ratio.min() == pytest.approx(1 / stats.R(a, n, d), rel=1e-14)
        # ... and the swapped combination is NOT a valid bound in general
        # (checked below in test_swapped_combination_fails)


def test_swapped_combination_fails():
    """R(a, n, d) is not an upper bound on C_P/C_D (it bounds C_D/C_P)."""
    alpha, cp, cd = enumerate_binary(2, 5)
    a = 6
    sel = alpha == a
    # C_P/C_D max = R(6, 2, 5) = U(6, 2, 5) / L(6, 5); R(6, 5, 2) is the other side's bound
    assert (cp[sel] / cd[sel]).max() == pytest.approx(stats.R(a, 2, 5))
    assert (cp[sel] / cd[sel]).max() > stats.R(a, 5, 2)


def test_L_U_exact_match_paper_formulas():
    for d, n in itertools.product(range(1, 9), range(1, 9)):
        for a in range(max(d, n), d * n + 1):
            lval = stats.L(a, n)
            assert isinstance(lval, int) and Fraction(lval) == L_literal(a, n)
            uval = stats.U(a, d, n)
            assert isinstance(uval, int) and uval == U_literal(a, d, n)
            assert stats.R(a, d, n) == pytest.approx(float(Fraction(uval) / L_literal(a, n)))
    assert stats.a_bar_b(17, 5) == 15 and stats.a_bar_b(3, 0) == 0


def test_L_U_R_vectorised_and_large():
    d, n = 100, 1000
    alpha = np.arange(max(d, n), d * n + 1, 997)
    lv, uv, rv = stats.L(alpha, n), stats.U(alpha, d, n), stats.R(alpha, d, n)
    assert lv.dtype == np.int64 and uv.dtype == np.int64 and rv.dtype == np.float64
    for k in range(0, alpha.size, 7):
        a = int(alpha[k])
        assert lv[k] == stats.L(a, n) and uv[k] == stats.U(a, d, n)
        assert rv[k] == stats.R(a, d, n)
    # exact for huge arguments (Python ints, no overflow)
    big = 10**12
    assert stats.L(big * 3 + 1, big) == L_literal(big * 3 + 1, big)
    assert stats.U(big + 5, big, 7) == U_literal(big + 5, big, 7)
    with pytest.raises(ValueError):
        stats.U(2, 3, 3)  # alpha < max(d, n)
    with pytest.raises(ValueError):
        stats.U(10, 3, 3)  # alpha > d n
    with pytest.raises(ValueError):
        stats.L(2, 3)


def random_binary_no_empty(d: int, n: int, alpha: int, rng) -> np.ndarray:
    """Random signed binary d x n X with exactly alpha nonzeros and no zero row/column."""
    X = np.zeros((d, n))
    k = max(d, n)
    X[np.arange(k) % d, rng.permutation(k) % n] = 1
    free = np.flatnonzero(X.ravel() == 0)
    X.ravel()[rng.choice(free, alpha - int(X.sum()), replace=False)] = 1
    return X * rng.choice([-1.0, 1.0], size=X.shape)


def test_theorem9_random_binary():
    rng = np.random.default_rng(0)
    for _ in range(200):
        d, n = (int(v) for v in rng.integers(1, 25, size=2))
        alpha = int(rng.integers(max(d, n), d * n + 1))
        X = random_binary_no_empty(d, n, alpha, rng)
        A = sp.csr_matrix(X.T)  # our orientation
        assert A.nnz == alpha
        ratio = stats.c_primal(A) / stats.c_dual(A)
        assert 1 / stats.R(alpha, n, d) <= ratio * (1 + 1e-12)
        assert ratio <= stats.R(alpha, d, n) * (1 + 1e-12)


@pytest.mark.parametrize("d,n", [(100, 10), (100, 100), (100, 1000), (7, 13), (13, 7)])
def test_theorem9_tight_by_construction(d, n):
    for alpha in np.unique(np.linspace(max(d, n), d * n, 9).astype(int)):
        A, _ = worst_case_binary_dual(d, n, int(alpha), seed=1)
        ratio = stats.c_primal(A) / stats.c_dual(A)
        assert ratio == pytest.approx(1 / stats.R(int(alpha), n, d), rel=1e-12)
        # the transposed construction attains the upper bound
        B, _ = worst_case_binary_dual(n, d, int(alpha), seed=1)  # B is d x n in our layout
        At = B.T.tocsr()  # n x d, examples in rows
        assert stats.c_primal(At) / stats.c_dual(At) == pytest.approx(
            stats.R(int(alpha), d, n), rel=1e-12
        )


def test_lemma11_grid():
    for n in range(1, 13):
        for d in range(n, 3 * n * n + 4):
            lo = max(n * n + 3 * n, d)
            if lo > d * n:
                continue
            alpha = np.arange(lo, d * n + 1)
            assert np.all(stats.R(alpha, d, n) <= 1.0)  # first part
    for d in range(1, 13):
        for n in range(d, 3 * d * d + 4):
            lo = max(d * d + 3 * d, n)
            if lo > d * n:
                continue
            assert np.all(stats.R(np.arange(lo, d * n + 1), n, d) <= 1.0)  # second part


def test_theorem5_random_spot_checks():
    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(1, 6))
        d = int(rng.integers(max(n, n + 3), 4 * n * n + 10))
        if n * n + 3 * n > d * n:
            continue
        alpha = int(rng.integers(max(n * n + 3 * n, d), d * n + 1))
        X = random_binary_no_empty(d, n, alpha, rng)
        A = sp.csr_matrix(X.T)
        assert stats.c_primal(A) <= stats.c_dual(A)  # d >= n, ||X||_0 >= n^2 + 3n
        # symmetric statement on the transpose
        assert stats.c_dual(A.T.tocsr()) <= stats.c_primal(A.T.tocsr())


@pytest.mark.parametrize("d", [12, 14, 20])
def test_theorem4_existence(d):
    """For d <= n <= d^2/4 - 3d/2 - 1, alpha = d(d-1)/2 gives C_P < C_D (proof of Thm 4)."""
    alpha = d * (d - 1) // 2
    for n in range(d, int(d * d / 4 - 1.5 * d - 1) + 1):
        A, _ = worst_case_binary_dual(d, n, alpha, seed=0)
        assert stats.c_primal(A) < stats.c_dual(A)
        assert stats.L(alpha, d) < stats.U(alpha, n, d)
