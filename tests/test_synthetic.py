"""Tests of pdsparse.data.synthetic generators."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse import stats
from pdsparse.data import synthetic as syn
from pdsparse.errors import ConfigError


def same(x, y) -> bool:
    (A1, b1), (A2, b2) = x, y
    return (
        A1.shape == A2.shape
        and np.array_equal(A1.indptr, A2.indptr)
        and np.array_equal(A1.indices, A2.indices)
        and np.array_equal(A1.data, A2.data)
        and np.array_equal(b1, b2)
    )


def check_common(A, b, n, d, *, no_empty_rows=True, no_empty_cols=True):
    assert sp.isspmatrix_csr(A) or isinstance(A, sp.csr_array | sp.csr_matrix)
    assert A.shape == (n, d) and A.dtype == np.float64
    assert A.has_canonical_format  # sorted indices, no duplicates
    assert np.all(A.data != 0)
    assert b.shape == (n,) and b.dtype == np.float64
    assert set(np.unique(b)) <= {-1.0, 1.0}
    if n >= 2:
        assert set(np.unique(b)) == {-1.0, 1.0}
    if no_empty_rows:
        assert np.all(np.diff(A.indptr) > 0)
    if no_empty_cols:
        assert np.all(np.bincount(A.indices, minlength=d) > 0)


CASES = [
    ("worst_case_general", {"d": 6, "n": 9, "a": 1.0, "b": 1e-3, "c": 2e-3}),
    ("worst_case_general", {"d": 6, "n": 9}),
    ("worst_case_binary_dual", {"d": 10, "n": 7, "alpha": 23}),
    ("dense_gaussian", {"n": 12, "d": 5}),
    ("zipf_bow", {"n": 50, "d": 300, "mean_nnz_per_row": 12, "exponent": 1.1}),
]


@pytest.mark.parametrize("kind,params", CASES)
def test_generate_determinism(kind, params):
    x = syn.generate(kind, params, seed=3)
    assert same(x, syn.generate(kind, dict(params), seed=3))
    n, d = params["n"], params["d"]
    check_common(*x, n, d, no_empty_cols=kind != "zipf_bow")
    if kind != "worst_case_general":  # X(a,b,c) is deterministic; only labels use the seed
        assert not same(x, syn.generate(kind, params, seed=4))


def test_generate_matches_direct_calls():
    assert same(
        syn.generate("zipf_bow", {"n": 20, "d": 40, "mean_nnz_per_row": 5, "exponent": 1}, 1),
        syn.zipf_bow(20, 40, 5, 1, 1),
    )
    assert same(
        syn.generate("worst_case_general", {"d": 4, "n": 5}, 2),
        syn.worst_case_general_default(4, 5, 2),
    )
    assert same(
        syn.generate("worst_case_binary_dual", {"d": 4, "n": 5, "alpha": 9, "label_noise": 0}, 2),
        syn.worst_case_binary_dual(4, 5, 9, 2, label_noise=0.0),
    )


def test_generate_errors():
    with pytest.raises(ConfigError, match="no_such_kind"):
        syn.generate("no_such_kind", {}, 0)
    with pytest.raises(ConfigError, match="densty"):
        syn.generate("dense_gaussian", {"n": 3, "d": 2, "densty": 0.1}, 0)
    with pytest.raises(ConfigError, match="'d'"):
        syn.generate("dense_gaussian", {"n": 3}, 0)
    with pytest.raises(ConfigError, match="alpha"):
        syn.generate("worst_case_binary_dual", {"d": 3, "n": 4}, 0)
    with pytest.raises(ConfigError, match="'n'"):
        syn.generate("dense_gaussian", {"n": 2.5, "d": 3}, 0)
    with pytest.raises(ConfigError, match="exponent"):
        syn.generate("zipf_bow", {"n": 2, "d": 3, "mean_nnz_per_row": 1, "exponent": -1}, 0)
    with pytest.raises(ConfigError, match="mean_nnz_per_row"):
        syn.generate("zipf_bow", {"n": 2, "d": 3, "mean_nnz_per_row": 4, "exponent": 1}, 0)
    with pytest.raises(ConfigError, match="'b'"):
        syn.worst_case_general(3, 3, 1.0, 0.0, 1.0, 0)


# ------------------------------------------------------------------ worst_case_general


def test_worst_case_general_structure():
    d, n, a, b, c = 4, 6, 2.0, -0.5, 3.0
    A, y = syn.worst_case_general(d, n, a, b, c, seed=0)
    X = np.zeros((d, n))
    X[1:, 0] = a
    X[0, 1:] = b
    X[0, 0] = c
    np.testing.assert_array_equal(A.toarray(), X.T)
    check_common(A, y, n, d)


@pytest.mark.parametrize("d,n", [(100, 100), (1000, 1000), (10, 10_000), (50, 2000)])
def test_worst_case_general_default_primal_wins(d, n):
    A, y = syn.worst_case_general_default(d, n, seed=0)
    ratio = stats.c_primal(A) / stats.c_dual(A)
    assert 1 / d <= ratio <= 1.02 / d
    p = syn.worst_case_general_default_params(d, n)
    assert p["a"] == 1.0 and p["b"] == p["c"] < 1e-2
    check_common(A, y, n, d)


# ------------------------------------------------------------------ worst_case_binary_dual

BINARY_CASES = [
    (100, 10, 100),
    (100, 10, 101),
    (100, 10, 357),
    (100, 10, 1000),
    (100, 100, 100),
    (100, 100, 1234),
    (100, 1000, 1000),
    (100, 1000, 5003),
    (100, 1000, 99_999),
    (7, 13, 13),
    (7, 13, 50),
    (13, 7, 13),
    (13, 7, 90),
    (1, 5, 5),
    (5, 1, 5),
    (1, 1, 1),
    (2, 2, 3),
    (3, 3, 9),
    (17, 23, 17 * 23 - 1),
]


@pytest.mark.parametrize("d,n,alpha", BINARY_CASES)
def test_worst_case_binary_dual_extremal(d, n, alpha):
    A, y = syn.worst_case_binary_dual(d, n, alpha, seed=7)
    check_common(A, y, n, d)
    assert A.nnz == alpha
    assert set(np.unique(A.data)) <= {-1.0, 1.0}
    assert stats.c_dual(A) == stats.U(alpha, n, d)  # max C_D, Lemma 10 (21)
    assert stats.c_primal(A) == stats.L(alpha, d)  # min C_P, Lemma 10 (20)
    cols = np.bincount(A.indices, minlength=d)
    assert cols.max() - cols.min() <= 1  # balanced feature counts
    if alpha >= 2 * max(d, n) and min(d, n) > 1:
        assert len(np.unique(A.data)) == 2  # random signs


def test_worst_case_binary_dual_range():
    syn.worst_case_binary_dual(5, 3, 5, 0)  # alpha = max(d, n) < n + d - 1 is fine
    for alpha in (4, 16, 0):
        with pytest.raises(ValueError, match="alpha"):
            syn.worst_case_binary_dual(5, 3, alpha, 0)


# ------------------------------------------------------------------ dense_gaussian


def test_dense_gaussian():
    A, y = syn.dense_gaussian(30, 8, seed=1)
    check_common(A, y, 30, 8)
    assert A.nnz == 240
    f = float((A.data**2).sum())
    assert stats.c_primal(A) == pytest.approx(30 * f) and stats.c_dual(A) == pytest.approx(8 * f)
    # labels mostly agree with the noiseless sign(A w_true)
    A0, y0 = syn.dense_gaussian(30, 8, seed=1, label_noise=0.0)
    assert same((A, y[:0]), (A0, y0[:0])) and np.mean(y == y0) > 0.8


# ------------------------------------------------------------------ zipf_bow


def test_zipf_bow_properties():
    n, d, mean = 2000, 5000, 40
    A, y = syn.zipf_bow(n, d, mean, 1.0, seed=0)
    check_common(A, y, n, d, no_empty_cols=False)
    row_nnz = np.diff(A.indptr)
    assert row_nnz.mean() == pytest.approx(mean, rel=0.03)
    assert row_nnz.std() < 2 * np.sqrt(mean)  # concentrated around the mean
    assert row_nnz.max() <= d
    # no duplicate (row, col) pairs
    rows = np.repeat(np.arange(n), row_nnz)
    assert np.unique(rows * d + A.indices).size == A.nnz
    # values are term counts >= 1
    assert A.data.min() >= 1 and np.all(A.data == np.round(A.data))
    col_nnz = np.bincount(A.indices, minlength=d)
    assert col_nnz.max() > 20 * max(np.median(col_nnz), 1)  # Zipf skew
    assert col_nnz[:10].mean() > col_nnz[-1000:].mean() * 20
    # the skewed features / uniform examples favour the dual method (Sec. 7.3)
    assert stats.c_primal(A) > stats.c_dual(A)


def test_zipf_bow_uniform_and_dense_rows():
    A, y = syn.zipf_bow(100, 60, 59.5, 0.0, seed=2)  # nearly dense rows
    check_common(A, y, 100, 60, no_empty_cols=False)
    assert np.diff(A.indptr).max() == 60
    B, _ = syn.zipf_bow(50, 40, 40, 3.0, seed=2)  # near-dense rows, very skewed vocabulary
    check_common(B, _, 50, 40, no_empty_cols=False)
    # exact completion path for rows that rejection sampling cannot fill
    d = 40
    w = np.arange(1, d + 1.0) ** -3.0
    target = np.array([40, 1, 39, 20])
    keys = syn._sample_distinct_keys(
        np.random.default_rng(0), target, d, np.cumsum(w) / w.sum(), w, max_rounds=1
    )
    assert np.unique(keys).size == keys.size == target.sum()
    assert np.bincount(keys // d, minlength=4).tolist() == target.tolist()
    C, yc = syn.zipf_bow(3, 1, 1, 1.0, seed=0)
    assert C.nnz == 3 and set(yc) == {-1.0, 1.0}


def test_zipf_bow_million_nonzeros():
    A, _ = syn.zipf_bow(4000, 200_000, 250, 1.0, seed=0)  # 1M nonzeros
    assert A.nnz == pytest.approx(1_000_000, rel=0.01)


def test_labels_both_classes_even_when_degenerate():
    A = sp.csr_matrix(np.ones((5, 2)))
    y = syn.make_labels(A, np.random.default_rng(0), label_noise=0.0)
    assert set(y) == {-1.0, 1.0}
    y1 = syn.make_labels(sp.csr_matrix((1, 3)), np.random.default_rng(0))
    assert y1.tolist() == [1.0]
