"""Tests of the random feature maps (pdsparse.data.features, pdsparse.data._features).

Tiny data made here: random Fourier features approximate the Gaussian kernel and random
binning features the Laplacian kernel, with an error shrinking in the number of features /
grids; the hashed binning equals a brute-force binning by tuples (a dict), test rows with
unseen bins included; everything is a function of the seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from pdsparse.data.features import (
    RandomBinning,
    RandomFourier,
    make_feature_map,
    median_distance,
)
from pdsparse.errors import ConfigError, DataError


def sparse_rows(n: int, d: int, seed: int, density: float = 0.4) -> sp.csr_matrix:
    """Nonnegative sparse rows in [0, 1] (pixel-like: most coordinates are exactly zero)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) * (rng.random((n, d)) < density)
    return sp.csr_matrix(X)


def off_diagonal(M: np.ndarray) -> np.ndarray:
    return M[~np.eye(M.shape[0], dtype=bool)]


# ------------------------------------------------------------------------------ random Fourier


def test_rf_approximates_the_gaussian_kernel():
    X = sparse_rows(40, 6, seed=1, density=0.7)
    Xd = X.toarray()
    sigma = 0.6
    K = np.exp(-cdist(Xd, Xd, "sqeuclidean") / (2 * sigma**2))
    errors = []
    for D in (30, 300, 3000, 30000):
        Z = RandomFourier(D, sigma, seed=3).fit_transform(X)
        assert isinstance(Z, np.ndarray) and Z.shape == (40, D) and Z.flags.c_contiguous
        errors.append(float(np.abs(off_diagonal(Z @ Z.T - K)).mean()))
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False)), errors
    assert errors[-1] < 0.01
    # Monte Carlo rate ~ D^-1/2: 1000x more features, about 30x smaller error
    assert errors[-1] < errors[0] / 10


def test_rf_dense_and_sparse_input_agree_and_chunks_do_not_matter():
    X = sparse_rows(25, 7, seed=2)
    rf = RandomFourier(50, 1.0, seed=0).fit(X)
    Z = rf.transform(X)
    np.testing.assert_allclose(rf.transform(X.toarray()), Z, rtol=0, atol=1e-14)
    # chunks change only the BLAS rounding (a 1-row chunk takes another BLAS path)
    np.testing.assert_allclose(rf.transform(X, chunk_rows=4), Z, rtol=0, atol=1e-14)
    out = np.empty((25, 50))
    assert rf.transform(X, out=out) is out
    # the formula, row by row
    expected = math.sqrt(2 / 50) * np.cos(X.toarray() @ rf.W.T + rf.c)
    np.testing.assert_allclose(Z, expected, rtol=0, atol=1e-13)
    # a narrower input pads with zero columns
    np.testing.assert_allclose(rf.transform(X[:, :5]),
                               rf.transform(sp.hstack([X[:, :5], sp.csr_matrix((25, 2))])),
                               rtol=0, atol=1e-14)
    with pytest.raises(DataError, match="fitted on 7"):
        rf.transform(sp.csr_matrix((3, 8)))


def test_rf_is_a_function_of_the_seed():
    X = sparse_rows(10, 4, seed=0)
    a = RandomFourier(20, 0.5, seed=7).fit_transform(X)
    b = RandomFourier(20, 0.5, seed=7).fit_transform(X)
    c = RandomFourier(20, 0.5, seed=8).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    p = RandomFourier(20, 0.5, seed=7).fit(X).params()
    assert p["params_sha256"] == RandomFourier(20, 0.5, seed=7).fit(X).params()["params_sha256"]
    assert (p["kind"], p["n_features"], p["sigma"], p["seed"], p["n_input"]) == (
        "rf", 20, 0.5, 7, 4)


# ------------------------------------------------------------------------------ random binning


def test_rb_approximates_the_laplacian_kernel():
    X = sparse_rows(30, 5, seed=4, density=0.8)
    Xd = X.toarray()
    sigma = 1.0
    K = np.exp(-cdist(Xd, Xd, "cityblock") / sigma)
    errors = []
    for P in (10, 100, 1000, 10000):
        Z = RandomBinning(P, sigma, seed=5).fit_transform(X)
        G = (Z @ Z.T).toarray()
        np.testing.assert_allclose(np.diag(G), 1.0)  # every training row: P entries of P^-1/2
        errors.append(float(np.abs(off_diagonal(G - K)).mean()))
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False)), errors
    assert errors[-1] < 0.01


def test_rb_has_exactly_p_nonzeros_per_training_row_grouped_by_grid():
    X = sparse_rows(50, 8, seed=6)
    P = 17
    rb = RandomBinning(P, 0.7, seed=1, block=5)  # a block that does not divide P
    Z = rb.fit_transform(X)
    assert sp.isspmatrix_csr(Z) and Z.indices.dtype == np.int32
    assert Z.shape == (50, rb.n_features) and rb.n_features == rb.bin_offsets[-1]
    np.testing.assert_array_equal(np.diff(Z.indptr), P)
    np.testing.assert_array_equal(Z.data, 1 / math.sqrt(P))
    assert Z.has_canonical_format
    cols = Z.indices.reshape(50, P)
    lo, hi = rb.bin_offsets[:-1], rb.bin_offsets[1:]
    assert np.all((cols >= lo) & (cols < hi))  # entry p of a row lies in grid p's columns
    # every column is occupied by some training row
    assert np.unique(Z.indices).size == rb.n_features
    # transform() of the training rows gives the same matrix; block size is irrelevant
    assert (rb.transform(X) != Z).nnz == 0
    assert (RandomBinning(P, 0.7, seed=1, block=64).fit_transform(X) != Z).nnz == 0
    p = rb.params()
    assert p["n_features"] == rb.n_features and p["bins_per_grid"]["min"] >= 1


def brute_force_bins(X: np.ndarray, delta: np.ndarray, shift: np.ndarray):
    """Per grid, the bin tuple of every row: floor((x - u) / delta) over all dimensions."""
    P, d = delta.shape
    return [[tuple(math.floor((float(x[j]) - shift[p, j]) / delta[p, j]) for j in range(d))
             for x in X] for p in range(P)]


def test_hashed_binning_equals_brute_force_tuples_with_unseen_test_bins():
    rng = np.random.default_rng(11)
    X = sparse_rows(60, 6, seed=12, density=0.35)
    # test rows: some copies of training rows, some shifted far (unseen bins), some zero
    T = np.vstack([X[:5].toarray(), X[5:10].toarray() + 3.0, np.zeros((2, 6)),
                   rng.random((6, 6)) * (rng.random((6, 6)) < 0.5)])
    P, sigma = 12, 0.5
    rb = RandomBinning(P, sigma, seed=2, block=4)
    Z = rb.fit_transform(X)
    Zt = rb.transform(sp.csr_matrix(T))
    train_bins = brute_force_bins(X.toarray(), rb.delta, rb.shift)
    test_bins = brute_force_bins(T, rb.delta, rb.shift)
    cols = Z.indices.reshape(X.shape[0], P)
    for p in range(P):
        seen: dict[tuple, int] = {}
        for i, key in enumerate(train_bins[p]):
            # same tuple <=> same column (a bijection between tuples and grid p's columns)
            assert seen.setdefault(key, int(cols[i, p])) == cols[i, p]
        assert len(set(seen.values())) == len(seen)
        assert len(seen) == rb.bin_offsets[p + 1] - rb.bin_offsets[p]
        for i, key in enumerate(test_bins[p]):
            row = Zt.indices[Zt.indptr[i]:Zt.indptr[i + 1]]
            in_grid = row[(row >= rb.bin_offsets[p]) & (row < rb.bin_offsets[p + 1])]
            if key in seen:
                assert in_grid.tolist() == [seen[key]]
            else:  # a bin no training row occupied: no entry for this grid
                assert in_grid.size == 0
    # the shifted rows do land in unseen bins somewhere, copies never do
    nnz_test = np.diff(Zt.indptr)
    assert np.all(nnz_test[:5] == P) and nnz_test[5:10].min() < P
    np.testing.assert_array_equal(Zt.data, 1 / math.sqrt(P))


def test_rb_hash_is_the_documented_sum_mod_2_64():
    X = sparse_rows(8, 5, seed=3)
    rb = RandomBinning(3, 0.4, seed=9).fit(X)
    H = rb.hashes(X)
    mult = rb._mult_t.T  # (P, d)
    Xd = X.toarray()
    for p in range(3):
        for i in range(8):
            k = [math.floor((Xd[i, j] - rb.shift[p, j]) / rb.delta[p, j]) for j in range(5)]
            expected = sum(int(m) * kk for m, kk in zip(mult[p], k, strict=True)) % 2**64
            assert int(H[p, i]) == expected


def test_rb_explicit_zeros_and_dense_input_change_nothing():
    X = sparse_rows(20, 5, seed=8)
    rb = RandomBinning(6, 0.5, seed=0)
    Z = rb.fit_transform(X)
    with_zeros = sp.csr_matrix(X.toarray() + 0.0)
    with_zeros.data[::3] = 0.0  # stored zeros
    dense = with_zeros.toarray()
    for Y in (with_zeros, dense):
        assert (rb.transform(Y) != rb.transform(sp.csr_matrix(dense))).nnz == 0
    assert Z.nnz == 20 * 6


def test_rb_is_a_function_of_the_seed():
    X = sparse_rows(30, 5, seed=0)
    a = RandomBinning(8, 0.5, seed=4).fit_transform(X)
    b = RandomBinning(8, 0.5, seed=4).fit_transform(X)
    c = RandomBinning(8, 0.5, seed=5)
    c.fit(X)
    assert (a != b).nnz == 0
    ra, rc = RandomBinning(8, 0.5, seed=4).fit(X), c
    assert ra.params()["params_sha256"] != rc.params()["params_sha256"]
    assert not np.array_equal(ra.delta, rc.delta)


def test_median_distance():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    assert median_distance(X, "l2") == pytest.approx(5.0)
    assert median_distance(X, "l1") == pytest.approx(7.0)
    with pytest.raises(ConfigError, match="metric"):
        median_distance(X, "cosine")


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: RandomBinning(0, 1.0), "n_grids must be >= 1"),
        (lambda: RandomBinning(5, -1.0), "sigma"),
        (lambda: RandomBinning(5, 0.0), "sigma"),
        (lambda: RandomFourier(10, float("nan")), "sigma"),
        (lambda: RandomFourier(0, 1.0), "n_features must be >= 1"),
        (lambda: RandomFourier(2.5, 1.0), "n_features must be an integer"),
        (lambda: RandomFourier(10, 1.0, seed=-1), "seed"),
        (lambda: make_feature_map("poly", 10, 1.0), "unknown feature map"),
    ],
)
def test_bad_parameters_name_the_setting(make, needle):
    with pytest.raises(ConfigError, match=needle):
        make()


def test_bad_input():
    with pytest.raises(DataError, match="NaN"):
        RandomBinning(2, 1.0).fit(np.array([[np.nan, 1.0]]))
    with pytest.raises(DataError, match="fit"):
        RandomBinning(2, 1.0).transform(np.ones((2, 2)))
    with pytest.raises(DataError, match="fit"):
        RandomFourier(2, 1.0).transform(np.ones((2, 2)))
