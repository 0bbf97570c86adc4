"""``benchmarks/compare_prepared.py``'s comparison of two prepared files, on tiny files written
here: equal files are identical, added metadata is listed, a changed bit or metadata value is
a difference and names the member or key."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from pdsparse.data.store import save_dataset

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location(
    "compare_prepared", REPO / "benchmarks" / "compare_prepared.py"
)
compare_prepared = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = compare_prepared
SPEC.loader.exec_module(compare_prepared)

A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
B = np.array([1.0, -1.0])
META = {"name": "toy", "normalization": {"method": "none", "scale": 1.0},
        "pdsparse_version": "0.1+old"}


def write(path: Path, A=A, meta=None, **test) -> Path:
    save_dataset(path, A, B, dict(meta or META), **test)
    return path


def test_equal_files_are_identical_whatever_the_version(tmp_path):
    old = write(tmp_path / "old.npz")
    new = write(tmp_path / "new.npz", meta={**META, "pdsparse_version": "0.1+new"})
    assert compare_prepared.compare(old, new) == ("identical", [])


def test_metadata_the_new_file_adds_is_listed_not_a_difference(tmp_path):
    old = write(tmp_path / "old.npz")
    meta = {**META, "recipe_tag": "none",
            "normalization": {**META["normalization"], "computed_on": "training rows"}}
    verdict, details = compare_prepared.compare(old, write(tmp_path / "new.npz", meta=meta))
    assert verdict == "identical arrays; meta adds 2"
    assert details == ["meta adds recipe_tag, normalization.computed_on"]


def test_a_changed_bit_or_value_is_a_difference(tmp_path):
    old = write(tmp_path / "old.npz")
    bumped = A.copy()
    bumped.data[1] = np.nextafter(2.0, 3.0)
    verdict, details = compare_prepared.compare(old, write(tmp_path / "a.npz", A=bumped))
    assert verdict == "DIFFERENT"
    assert details == ["member data.npy: 1 values differ, first at 1: np.float64(2.0) vs "
                       "np.float64(2.0000000000000004)"]
    meta = {**META, "normalization": {"method": "none", "scale": 2.0}}
    verdict, details = compare_prepared.compare(old, write(tmp_path / "m.npz", meta=meta))
    assert verdict == "DIFFERENT" and details == ["meta normalization.scale: 1.0 -> 2.0"]
    verdict, details = compare_prepared.compare(
        old, write(tmp_path / "t.npz", A_test=A[:1], b_test=B[:1]))
    assert verdict == "DIFFERENT" and "member b_test.npy only in NEW" in details
