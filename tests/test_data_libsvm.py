"""Tests of pdsparse.data.libsvm (LIBSVM parsing and label binarization)."""

from __future__ import annotations

import bz2

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse.data.libsvm import binarize_labels, find_bad_line, label_counts, read_libsvm
from pdsparse.errors import DataError

TEXT = b"+1 1:0.5 3:2\n-1 2:1.5 4:0\n# comment line\n\n+1 1:-1 2:1e-3 # trailing comment\n"


def test_reads_plain_one_based_csr(tmp_path):
    path = tmp_path / "toy.txt"
    path.write_bytes(TEXT)
    A, y = read_libsvm(path)
    assert sp.isspmatrix_csr(A) and A.dtype == np.float64
    assert A.shape == (3, 4)  # d = largest index in the file, explicit zeros included
    np.testing.assert_array_equal(
        A.toarray(), [[0.5, 0.0, 2.0, 0.0], [0.0, 1.5, 0.0, 0.0], [-1.0, 1e-3, 0.0, 0.0]]
    )
    assert A.nnz == 5  # explicit zero "4:0" is not stored
    assert A.has_sorted_indices
    assert A.indices.dtype == np.int32
    np.testing.assert_array_equal(y, [1.0, -1.0, 1.0])


def test_reads_bz2_and_n_features(tmp_path):
    path = tmp_path / "toy.bz2"
    path.write_bytes(bz2.compress(TEXT))
    A, y = read_libsvm(path, n_features=10)
    assert A.shape == (3, 10)
    assert A.nnz == 5


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (b"1 1:1\n1 2:abc\n", 2, "value 'abc'"),
        (b"1 1:1\n\n1 3:1 2:1\n", 3, "strictly increasing"),
        (b"1 0:1\n", 1, "1-based"),
        (b"1 1:1\nfoo 1:1\n", 2, "label 'foo'"),
        (b"1 1:1 2\n", 1, "expected 'index:value'"),
        (b"1 1:1\n1 x:1\n", 2, "not an integer"),
    ],
)
def test_malformed_line_error_names_file_and_line(tmp_path, text, line, needle):
    path = tmp_path / "bad.txt"
    path.write_bytes(text)
    with pytest.raises(DataError) as err:
        read_libsvm(path)
    msg = str(err.value)
    assert str(path) in msg
    assert f"line {line}" in msg
    assert needle in msg


def test_index_beyond_n_features(tmp_path):
    path = tmp_path / "wide.bz2"
    path.write_bytes(bz2.compress(b"1 1:1\n-1 5:1\n"))
    with pytest.raises(DataError, match=r"wide.bz2, line 2: feature index 5 exceeds n_features=4"):
        read_libsvm(path, n_features=4)


def test_missing_corrupt_and_empty(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_libsvm(tmp_path / "nope.txt")
    trunc = tmp_path / "trunc.bz2"
    trunc.write_bytes(bz2.compress(TEXT * 50)[:-20])
    with pytest.raises(DataError, match="trunc.bz2"):
        read_libsvm(trunc)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="empty.txt"):
        read_libsvm(empty)


def test_non_finite_value(tmp_path):
    """The file's line is named (a comment and a blank line before it count), not the
    example's number."""
    path = tmp_path / "nan.txt"
    path.write_bytes(b"# a header\n1 1:1\n\n1 2:nan\n")
    with pytest.raises(DataError, match=r"nan.txt, line 4: value 'nan' in '2:nan' is not finite"):
        read_libsvm(path)
    path.write_bytes(b"1 1:1\ninf 2:1\n")
    with pytest.raises(DataError, match=r"nan.txt, line 2: label 'inf' is not finite"):
        read_libsvm(path)


def test_a_directory_is_named_as_such(tmp_path):
    with pytest.raises(DataError, match=r"is a directory, not a LIBSVM file"):
        read_libsvm(tmp_path)


def test_find_bad_line_none_for_valid(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_bytes(TEXT)
    assert find_bad_line(path) is None


@pytest.mark.parametrize(
    "labels", [[0, 1, 1, 0], [1, 2, 2, 1], [-1, 1, 1, -1], [-1.0, 1.0, 1.0, -1.0]]
)
def test_binarize_two_classes(labels):
    b = binarize_labels(np.array(labels))
    np.testing.assert_array_equal(b, [-1.0, 1.0, 1.0, -1.0])
    assert b.dtype == np.float64


def test_binarize_multiclass_needs_positive():
    y = np.array([1, 2, 3, 2])
    with pytest.raises(DataError, match=r"multiclass \(3 classes: 1, 2, 3\).*positive_class"):
        binarize_labels(y)
    np.testing.assert_array_equal(binarize_labels(y, positive=2), [-1, 1, -1, 1])
    np.testing.assert_array_equal(binarize_labels(y, positive="3"), [-1, -1, 1, -1])
    with pytest.raises(DataError, match="does not occur"):
        binarize_labels(y, positive=7)


def test_binarize_single_class():
    np.testing.assert_array_equal(binarize_labels(np.array([1.0, 1.0])), [1.0, 1.0])
    with pytest.raises(DataError, match="single class 3"):
        binarize_labels(np.array([3, 3]))
    with pytest.raises(DataError, match="NaN"):
        binarize_labels(np.array([1.0, np.nan]))


def test_label_counts_keys():
    assert label_counts(np.array([-1.0, 1.0, 1.0, 2.5])) == {"-1": 1, "1": 2, "2.5": 1}


def test_early_error_in_large_bz2_does_not_hang(tmp_path):
    # the bad first line stops the parser while the decompressing thread still has > 64 KiB
    # (a pipe buffer) to write; it must end, and the error must name line 1
    path = tmp_path / "big.bz2"
    path.write_bytes(bz2.compress(b"1 x:1\n" + b"1 1:1 2:2\n" * 100_000))
    with pytest.raises(DataError, match=r"big.bz2, line 1: feature index 'x'"):
        read_libsvm(path)


def test_bz2_and_plain_agree(tmp_path):
    text = b"".join(b"%d 1:%d 7:0.25\n" % (i % 3, i) for i in range(1, 30_000))
    (tmp_path / "a.txt").write_bytes(text)
    (tmp_path / "a.bz2").write_bytes(bz2.compress(text))
    A1, y1 = read_libsvm(tmp_path / "a.txt")
    A2, y2 = read_libsvm(tmp_path / "a.bz2")
    assert (A1 != A2).nnz == 0 and A1.shape == A2.shape == (29_999, 7)
    np.testing.assert_array_equal(y1, y2)
