"""Tests of pdsparse.data.normalize."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse.data.normalize import METHODS, normalize, row_norms
from pdsparse.errors import ConfigError, DataError


def toy() -> sp.csr_matrix:
    # row norms 5, 1, 0, 2 -> mean 2
    return sp.csr_matrix(
        np.array([[3.0, 4.0, 0.0], [0.0, 0.0, -1.0], [0.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    )


def test_avg_example_norm_divides_by_mean_row_norm():
    A = toy()
    B, info = normalize(A, "avg_example_norm")
    assert info["method"] == "avg_example_norm"
    assert info["scale"] == pytest.approx(2.0)
    np.testing.assert_allclose(B.toarray(), A.toarray() / 2.0)
    assert row_norms(B).mean() == pytest.approx(1.0)
    assert info["mean_row_norm_after"] == pytest.approx(1.0)
    # Face-Off's X = A^T: the average column norm of X equals the average row norm of A.
    X = A.T.tocsc()
    col_norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=0)).ravel())
    assert info["scale"] == pytest.approx(col_norms.mean())


def test_unit_rows_leaves_zero_rows():
    B, info = normalize(toy(), "unit_rows")
    np.testing.assert_allclose(row_norms(B), [1.0, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(B.toarray()[0], [0.6, 0.8, 0.0])
    assert info["zero_rows"] == 1


def test_none_is_a_copy_and_input_untouched():
    A = toy()
    before = A.toarray().copy()
    B, info = normalize(A, "none")
    assert info["scale"] == 1.0
    B.data[:] = 7.0
    np.testing.assert_array_equal(A.toarray(), before)
    for method in METHODS:
        C, _ = normalize(A, method)
        assert sp.isspmatrix_csr(C) and C.dtype == np.float64
        np.testing.assert_array_equal(A.toarray(), before)


def test_unknown_method_lists_valid_ones():
    with pytest.raises(ConfigError, match="avg_example_norm, unit_rows, none"):
        normalize(toy(), "l2")


def test_all_zero_matrix():
    with pytest.raises(DataError, match="every example is zero"):
        normalize(sp.csr_matrix((3, 2)), "avg_example_norm")


@pytest.mark.parametrize("method", ["none", "unit_rows", "avg_example_norm"])
def test_dense_data_stays_dense_with_the_same_scaling(method):
    """A dense generator (low-rank sensing) keeps one dense C-order copy; it used to come out
    as CSR, 3.5x slower for the BLAS kernels."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((12, 5))
    A[3] = 0.0
    dense, info = normalize(A, method)
    sparse, info_s = normalize(sp.csr_matrix(A), method)
    assert isinstance(dense, np.ndarray) and dense.flags.c_contiguous
    np.testing.assert_allclose(dense, sparse.toarray(), rtol=1e-15, atol=0)
    assert info.keys() == info_s.keys()


def test_low_rank_sensing_is_prepared_dense(tmp_path):
    from pdsparse.data.prepare import prepare_synthetic
    from pdsparse.data.store import load_dataset

    params = {"n": 30, "d": 20, "c": 10, "rank": 2, "nuclear_norm": 1.0}
    prepare_synthetic("s", "lowrank_sensing", params, 0, "none", tmp_path / "s.npz")
    ds = load_dataset(tmp_path / "s.npz")
    assert isinstance(ds.A, np.ndarray) and ds.meta["nnz"] == 600 and ds.b.shape == (30, 10)
