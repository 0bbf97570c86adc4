"""Tests of pdsparse.data.prepare, plus an end-to-end fetch + prepare of `leu` from the mirror."""

from __future__ import annotations

import bz2
import os
from pathlib import Path

import numpy as np
import pytest

from pdsparse.data.fetch import fetch, resolve_mirror
from pdsparse.data.prepare import check_shape, prepare
from pdsparse.data.registry import DatasetSpec, load_registry
from pdsparse.data.store import load_dataset
from pdsparse.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[1]
# 4 examples, d = 5 (feature 5 never occurs), labels {1, 2}
TEXT = b"1 1:3 2:4\n2 3:1\n2 1:1 4:-2\n1 2:2\n"


def make_spec(**over) -> DatasetSpec:
    base = dict(
        name="toy",
        url="https://example.invalid/toy.bz2",
        filename="toy.bz2",
        compression="bz2",
        task="binary",
        n=4,
        d=5,
        nnz=6,
        label_counts={1.0: 2, 2.0: 2},
    )
    base.update(over)
    return DatasetSpec(**base)


@pytest.fixture
def raw(tmp_path) -> Path:
    path = tmp_path / "toy.bz2"
    path.write_bytes(bz2.compress(TEXT))
    return path


def test_prepare_binary(tmp_path, raw):
    out = tmp_path / "proc" / "toy.npz"
    ds = prepare(raw, make_spec(), "avg_example_norm", out)
    assert (ds.n, ds.d, ds.nnz) == (4, 5, 6)  # d from the registry, not the file
    np.testing.assert_array_equal(ds.b, [-1.0, 1.0, 1.0, -1.0])  # {1, 2} -> {-1, +1}
    # row norms 5, 1, sqrt(5), 2
    scale = (5 + 1 + np.sqrt(5) + 2) / 4
    assert ds.meta["normalization"]["scale"] == pytest.approx(scale)
    np.testing.assert_allclose(ds.A.toarray()[0], np.array([3, 4, 0, 0, 0]) / scale)
    loaded = load_dataset(out)
    assert loaded.name == "toy"
    assert (loaded.A != ds.A).nnz == 0
    np.testing.assert_array_equal(loaded.b, ds.b)
    meta = loaded.meta
    assert meta["source_file"] == "toy.bz2"
    assert meta["label_counts"] == {"-1": 2, "1": 2}
    assert meta["raw_label_counts"] == {"1": 2, "2": 2}
    assert (meta["n"], meta["d"], meta["nnz"]) == (4, 5, 6)
    assert meta["task"] == "binary" and meta["positive_class"] is None
    assert len(meta["source_sha256"]) == 64


def test_prepare_multiclass(tmp_path, raw):
    spec = make_spec(task="multiclass")
    ds = prepare(raw, spec, "none", tmp_path / "mc.npz")
    np.testing.assert_array_equal(ds.b, [1, 2, 2, 1])
    assert ds.meta["task"] == "multiclass"
    ovr = prepare(raw, spec, "none", tmp_path / "ovr.npz", positive_class=1)
    np.testing.assert_array_equal(ovr.b, [1, -1, -1, 1])
    assert ovr.meta["task"] == "binary" and ovr.meta["positive_class"] == "1"


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"n": 5}, "expected n=5; found n=4"),
        ({"nnz": 7, "n": 3}, "expected n=3, nnz=7; found n=4, nnz=6"),
        ({"d": 3}, "feature index 4 exceeds n_features=3"),
        ({"label_counts": {-1.0: 2, 1.0: 2}}, "label counts"),
    ],
)
def test_prepare_mismatch_names_dataset(tmp_path, raw, over, needle):
    out = tmp_path / "toy.npz"
    with pytest.raises(DataError, match=needle) as err:
        prepare(raw, make_spec(**over), "none", out)
    assert "'toy'" in str(err.value)
    assert not out.exists()


def test_prepare_unknown_shape_and_bad_normalization(tmp_path, raw):
    spec = make_spec(n=None, d=None, nnz=None, label_counts=None)
    ds = prepare(raw, spec, "unit_rows", tmp_path / "t.npz")
    assert ds.d == 4  # without a registry d the file's largest index decides
    with pytest.raises(ConfigError, match="valid methods"):
        prepare(raw, spec, "bogus", tmp_path / "u.npz")
    assert not (tmp_path / "u.npz").exists()


def test_prepare_binary_task_with_multiclass_file(tmp_path):
    path = tmp_path / "mc.bz2"
    path.write_bytes(bz2.compress(b"1 1:1\n2 1:1\n3 1:1\n"))
    spec = make_spec(n=3, d=1, nnz=3, label_counts=None)
    with pytest.raises(DataError, match="'toy'.*positive_class"):
        prepare(path, spec, "none", tmp_path / "mc.npz")


def test_check_shape_ignores_unknown():
    check_shape(make_spec(n=None, d=None, nnz=None), 1, 2, 3)


def _mirror() -> Path:
    env = os.environ.get("PDSPARSE_DATA_MIRROR")
    return Path(env) if env else (REPO.parent / "shared" / "datasets")


@pytest.mark.skipif(
    not (_mirror() / "leu.bz2").is_file(),
    reason=f"offline LIBSVM mirror with leu.bz2 not found at {_mirror()} "
    "(set PDSPARSE_DATA_MIRROR to a directory holding leu.bz2)",
)
def test_fetch_and_prepare_leu_from_mirror(tmp_path):
    spec = load_registry(REPO / "config" / "datasets.yaml")["leu"]
    raw = fetch(spec, tmp_path / "raw", mirror=resolve_mirror(str(_mirror())), progress=False)
    ds = prepare(raw, spec, "avg_example_norm", tmp_path / "processed" / "leu.npz")
    assert (ds.n, ds.d, ds.nnz) == (38, 7129, 270902)
    assert ds.meta["label_counts"] == {"-1": 11, "1": 27}
    loaded = load_dataset(tmp_path / "processed" / "leu.npz")
    assert (loaded.n, loaded.d, loaded.nnz) == (38, 7129, 270902)
    norms = np.sqrt(np.asarray(loaded.A.multiply(loaded.A).sum(axis=1)).ravel())
    assert norms.mean() == pytest.approx(1.0)
