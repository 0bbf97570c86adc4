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
