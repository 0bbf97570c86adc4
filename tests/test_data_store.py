"""Tests of pdsparse.data.store (processed .npz data sets)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse.data.store import Dataset, load_dataset, save_dataset
from pdsparse.errors import DataError


def toy():
    A = sp.random(20, 7, density=0.3, format="csr", random_state=0)
    b = np.where(np.arange(20) % 3 == 0, 1.0, -1.0)
    return A, b


def test_round_trip(tmp_path):
    A, b = toy()
    meta = {"name": "toy", "n": np.int64(20), "scale": np.float64(0.5), "tags": ["x"]}
    path = tmp_path / "sub" / "toy.npz"
    save_dataset(path, A, b, meta)
    assert path.is_file()
    assert [p.name for p in path.parent.iterdir()] == ["toy.npz"]  # no temp file left
    ds = load_dataset(path)
    assert isinstance(ds, Dataset)
    assert ds.name == "toy"
    assert (ds.n, ds.d, ds.nnz) == (20, 7, A.nnz)
    assert sp.isspmatrix_csr(ds.A) and ds.A.dtype == np.float64
    assert ds.A.has_sorted_indices
    assert (ds.A != A).nnz == 0
    np.testing.assert_array_equal(ds.b, b)
    assert ds.meta == {"name": "toy", "n": 20, "scale": 0.5, "tags": ["x"]}
    with pytest.raises(AttributeError):
        ds.name = "other"  # frozen


def test_name_defaults_to_stem(tmp_path):
    A, b = toy()
    save_dataset(tmp_path / "stem.npz", A, b, {})
    assert load_dataset(tmp_path / "stem.npz").name == "stem"


def test_save_rejects_bad_input(tmp_path):
    A, b = toy()
    with pytest.raises(DataError, match="labels have shape"):
        save_dataset(tmp_path / "x.npz", A, b[:-1], {})
    with pytest.raises(DataError, match="not JSON-serializable"):
        save_dataset(tmp_path / "x.npz", A, b, {"f": object()})
    b2 = b.copy()
    b2[0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        save_dataset(tmp_path / "x.npz", A, b2, {})
    assert list(tmp_path.iterdir()) == []


def _write_parts(path, **over):
    A, b = toy()
    parts = {
        "format": np.int64(1),
        "data": A.data,
        "indices": A.indices,
        "indptr": A.indptr,
        "shape": np.asarray(A.shape, dtype=np.int64),
        "b": b,
        "meta": np.asarray('{"name": "t"}'),
    }
    parts.update(over)
    parts = {k: v for k, v in parts.items() if v is not None}
    with open(path, "wb") as fh:
        np.savez(fh, **parts)


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"b": None}, "missing b"),
        ({"format": np.int64(9)}, "format version 9"),
        ({"indptr": np.zeros(5, dtype=np.int32)}, "indptr inconsistent"),
        ({"shape": np.asarray([20, 2])}, "column index out of range"),
        ({"b": np.ones(3)}, "labels have shape"),
        ({"meta": np.asarray("{not json")}, "not valid JSON"),
        ({"meta": np.asarray("[1]")}, "must be a JSON object"),
        ({"data": np.ones(1)}, "lengths differ"),
    ],
)
def test_load_validates_and_names_file(tmp_path, over, needle):
    path = tmp_path / "bad.npz"
    _write_parts(path, **over)
    with pytest.raises(DataError, match=needle) as err:
        load_dataset(path)
    assert str(path) in str(err.value)


def test_load_missing_and_garbage(tmp_path):
    with pytest.raises(DataError, match="not found"):
        load_dataset(tmp_path / "none.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(DataError, match="junk.npz"):
        load_dataset(junk)


# ------------------------------------------------------------------------------ dense A, test rows


def test_dense_round_trip_without_copies(tmp_path):
    import tracemalloc

    rng = np.random.default_rng(0)
    A = rng.standard_normal((3000, 1000))  # 24 MB, C-order float64
    b = rng.integers(0, 3, 3000).astype(float)
    path = tmp_path / "dense.npz"
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        save_dataset(path, A, b, {"name": "dense"})
        _, peak_save = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        ds = load_dataset(path)
        _, peak_load = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # numpy.savez writes 16 MiB pieces; np.load reads into the one array it returns
    assert peak_save < 0.75 * A.nbytes
    assert peak_load < 1.25 * A.nbytes
    assert isinstance(ds.A, np.ndarray) and ds.A.flags.c_contiguous and ds.A.dtype == np.float64
    assert ds.dense and (ds.n, ds.d, ds.nnz) == (3000, 1000, 3000 * 1000)
    np.testing.assert_array_equal(ds.A, A)
    np.testing.assert_array_equal(ds.b, b)
    assert ds.A_test is None and ds.b_test is None and ds.n_test == 0
    with np.load(path) as npz:
        assert int(npz["format"]) == 2 and "A" in npz.files and "data" not in npz.files
    mapped = load_dataset(path, mmap=True)
    assert isinstance(mapped.A, np.memmap) and not mapped.A.flags.writeable
    np.testing.assert_array_equal(mapped.A, A)
    # a Problem keeps the mapped array as its one copy
    from pdsparse.problem import Problem

    prob = Problem(mapped.A, np.where(b > 0, 1.0, -1.0), loss="logistic")
    assert np.shares_memory(prob.mat, mapped.A)


@pytest.mark.parametrize("dense_test", [False, True])
def test_test_rows_round_trip(tmp_path, dense_test):
    A, b = toy()
    T = sp.random(6, 7, density=0.4, format="csr", random_state=1)
    bt = np.arange(6, dtype=float)
    path = tmp_path / "split.npz"
    save_dataset(path, A, b, {"name": "s"}, A_test=T.toarray() if dense_test else T, b_test=bt)
    ds = load_dataset(path)
    assert ds.n_test == 6 and not ds.dense
    assert isinstance(ds.A_test, np.ndarray) == dense_test
    np.testing.assert_array_equal(
        ds.A_test if dense_test else ds.A_test.toarray(), T.toarray())
    np.testing.assert_array_equal(ds.b_test, bt)
    with np.load(path) as npz:  # sparse-only files keep layout version 1
        assert int(npz["format"]) == (2 if dense_test else 1)


def test_version_1_files_still_load(tmp_path):
    """A file written before dense matrices and test rows existed (the old layout)."""
    path = tmp_path / "old.npz"
    _write_parts(path)
    ds = load_dataset(path)
    assert ds.name == "t" and ds.A_test is None and not ds.dense


def test_bad_test_rows(tmp_path):
    A, b = toy()
    with pytest.raises(DataError, match="both A_test and b_test"):
        save_dataset(tmp_path / "x.npz", A, b, {}, A_test=A)
    with pytest.raises(DataError, match="A_test has 3 columns, A has 7"):
        save_dataset(tmp_path / "x.npz", A, b, {}, A_test=np.ones((2, 3)), b_test=np.ones(2))
    with pytest.raises(DataError, match="test labels have shape"):
        save_dataset(tmp_path / "x.npz", A, b, {}, A_test=np.ones((2, 7)), b_test=np.ones(3))
    with pytest.raises(DataError, match="A contains NaN"):
        save_dataset(tmp_path / "x.npz", np.full((2, 2), np.nan), np.ones(2), {})
    path = tmp_path / "bad.npz"
    _write_parts(path, A_test=np.ones((2, 7)))
    with pytest.raises(DataError, match="test rows without test labels"):
        load_dataset(path)
    _write_parts(path, A=np.ones((20, 7)))  # a dense matrix in a version-1 file
    with pytest.raises(DataError, match="version 1 cannot hold a dense"):
        load_dataset(path)
