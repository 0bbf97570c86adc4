"""Read LIBSVM / SVMlight text files (plain, .bz2 or .gz) into CSR matrices; binarize labels.

The parser is scikit-learn's compiled :func:`sklearn.datasets.load_svmlight_file`, which
streams ``.bz2``/``.gz`` files (the text is never held in memory as a whole); on large files
bz2 decompression takes over half the time (measured: benchmarks/README.md, "Measurements cited
by the code"). Conventions of the result:

* ``A`` is n x d (rows = examples), ``scipy.sparse.csr_matrix``, float64, with sorted column
  indices, no duplicates, and **no explicit zeros** (an ``i:0`` entry in the text is dropped),
  so ``A.nnz`` counts true nonzeros: the ``||X||_0`` of Face-Off (X = A^T), and the same for a
  file with or without explicit zeros. Index arrays are int32 when they fit (SciPy's default).
* LIBSVM feature indices are 1-based; the file is read with ``zero_based=False`` explicitly,
  so feature ``j`` of the file is column ``j - 1`` of ``A``; an index 0 is an error.
"""

from __future__ import annotations

import bz2
import gzip
import math
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import DataError

__all__ = ["read_libsvm", "write_libsvm", "binarize_labels", "label_counts", "find_bad_line",
           "scan_labels"]


def _open_binary(path: Path):
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _check_line(raw: bytes, n_features: int | None, finite: bool = False) -> str | None:
    """Return why one LIBSVM line is invalid, or None if it is fine (or blank/comment);
    ``finite``: NaN and infinite values are invalid too."""
    text = raw.split(b"#", 1)[0].decode("utf-8", errors="replace")
    tokens = text.split()
    if not tokens:
        return None
    try:
        label = float(tokens[0])
    except ValueError:
        return f"label {tokens[0]!r} is not a number"
    if finite and not math.isfinite(label):
        return f"label {tokens[0]!r} is not finite"
    prev = 0
    for tok in tokens[1:]:
        if tok.startswith("qid:"):
            continue
        idx_s, sep, val_s = tok.partition(":")
        if not sep:
            return f"expected 'index:value', got {tok!r}"
        try:
            idx = int(idx_s)
        except ValueError:
            return f"feature index {idx_s!r} in {tok!r} is not an integer"
        try:
            value = float(val_s)
        except ValueError:
            return f"value {val_s!r} in {tok!r} is not a number"
        if finite and not math.isfinite(value):
            return f"value {val_s!r} in {tok!r} is not finite"
        if idx < 1:
            return f"feature index {idx} < 1 (LIBSVM indices are 1-based)"
        if idx <= prev:
            return f"feature indices must be strictly increasing ({prev} then {idx})"
        if n_features is not None and idx > n_features:
            return f"feature index {idx} exceeds n_features={n_features}"
        prev = idx
    return None


def scan_labels(path: str | os.PathLike) -> set[str]:
    """The distinct labels of a LIBSVM file (the first token of each example line), read
    line by line without parsing the features."""
    labels: set[str] = set()
    with _open_binary(Path(path)) as fh:
        for raw in fh:
            tokens = raw.split(b"#", 1)[0].split(maxsplit=1)
            if tokens:
                labels.add(tokens[0].decode("utf-8", errors="replace"))
    return labels


def find_bad_line(
    path: str | os.PathLike, n_features: int | None = None, finite: bool = False
) -> tuple[int, str, str] | None:
    """Locate the first line of a LIBSVM file that does not parse (slow, pure Python).

    Used on the error path of :func:`read_libsvm` to turn the parser's message into one
    naming the line.

    Returns
    -------
    (line_number, reason, line_text) or None
        1-based line number; ``None`` if every line is valid.
    """
    path = Path(path)
    with _open_binary(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            reason = _check_line(raw, n_features, finite)
            if reason is not None:
                shown = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(shown) > 120:
                    shown = shown[:117] + "..."
                return lineno, reason, shown
    return None


_LOAD_KW = dict(dtype=np.float64, zero_based=False, query_id=False, multilabel=False)


def _load_svmlight(path: Path, n_features: int | None):
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(str(path), n_features=n_features, **_LOAD_KW)


def read_libsvm(
    path: str | os.PathLike, n_features: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read a LIBSVM-format file into ``(A, y)``.

    Parameters
    ----------
    path : str or PathLike
        Plain text, ``.bz2`` or ``.gz`` file (compression chosen by suffix).
    n_features : int, optional
        Number of columns of ``A``. LIBSVM files do not record d, so a file whose last
        features never occur would otherwise come out narrower; pass the registry's ``d``.

    Returns
    -------
    A : scipy.sparse.csr_matrix
        n x d, float64, sorted indices, explicit zeros removed.
    y : numpy.ndarray
        Labels as read (float64, shape (n,)).

    Raises
    ------
    DataError
        Missing/unreadable/corrupt file, a malformed line (the message gives file, line number
        and reason), an index beyond ``n_features``, non-finite values, or no examples.
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a LIBSVM file")
    if not path.is_file():
        raise DataError(f"{path}: LIBSVM file not found")
    try:
        A, y = _load_svmlight(path, n_features)
    except ValueError as exc:
        try:
            bad = find_bad_line(path, n_features)
        except (OSError, EOFError) as exc2:
            raise DataError(f"{path}: cannot read file ({exc2})") from exc
        if bad is None:
            raise DataError(f"{path}: cannot parse as LIBSVM text: {exc}") from exc
        lineno, reason, shown = bad
        raise DataError(f"{path}, line {lineno}: {reason}: {shown!r}") from exc
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read file (corrupt or truncated?): {exc}") from exc

    A = sp.csr_matrix(A, dtype=np.float64)
    if A.shape[0] == 0:
        raise DataError(f"{path}: no examples in file")
    A.eliminate_zeros()
    if not A.has_sorted_indices:
        A.sort_indices()
    if A.nnz < 2**31 - 1 and A.shape[1] < 2**31 - 1:
        A.indices = A.indices.astype(np.int32, copy=False)
        A.indptr = A.indptr.astype(np.int32, copy=False)
    y = np.asarray(y, dtype=np.float64)
    if not (np.isfinite(A.data).all() and np.isfinite(y).all()):
        _raise_bad_line(path, n_features, "non-finite value")
    return A, y


def _raise_bad_line(path: Path, n_features: int | None, what: str) -> None:
    """A DataError naming the file's line (blank and comment lines counted) with ``what``."""
    bad = find_bad_line(path, n_features, finite=True)
    if bad is None:
        raise DataError(f"{path}: {what}")
    lineno, reason, shown = bad
    raise DataError(f"{path}, line {lineno}: {reason}: {shown!r}")


def write_libsvm(path: str | os.PathLike, A, y: np.ndarray) -> Path:
    """Write ``A`` (n x d, sparse or dense) and labels ``y`` as LIBSVM text, 1-based feature
    indices (what :func:`read_libsvm` reads back exactly: ``%.17g`` values), atomically; a
    ``.bz2`` or ``.gz`` suffix compresses it. Returns the path."""
    from sklearn.datasets import dump_svmlight_file

    from pdsparse.io import atomic_path

    path = Path(path)
    A = sp.csr_matrix(A, dtype=np.float64)
    A.eliminate_zeros()
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.shape[0] != A.shape[0]:
        raise DataError(f"{path}: {y.shape[0]} labels for {A.shape[0]} rows")
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    with atomic_path(path) as tmp, opener(tmp, "wb") as fh:
        dump_svmlight_file(A, y, fh, zero_based=False)
    return path


def _label_str(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def label_counts(y: np.ndarray) -> dict[str, int]:
    """Count each label value; keys are strings (``"-1"``, ``"1"``, ``"2.5"``) for JSON."""
    values, counts = np.unique(np.asarray(y, dtype=np.float64), return_counts=True)
    return {_label_str(v): int(c) for v, c in zip(values, counts, strict=True)}


def binarize_labels(y: np.ndarray, positive: float | int | str | None = None) -> np.ndarray:
    """Map labels to ±1 (float64).

    Parameters
    ----------
    y : array_like
        Raw labels, shape (n,).
    positive : number or str, optional
        The class mapped to +1; every other class becomes -1 (one-vs-rest). Required when
        there are more than two classes. Must occur in ``y``.

    Returns
    -------
    numpy.ndarray
        Labels in {-1, +1}. Without ``positive``, a two-valued label set {u < v} maps u -> -1,
        v -> +1 (so {0, 1}, {1, 2} and {-1, 1} all become {-1, +1}); a one-valued set is kept
        if it is already in {-1, +1}.

    Raises
    ------
    DataError
        Non-finite labels, more than two classes without ``positive``, an absent ``positive``,
        or a single class outside {-1, +1}.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    if not np.isfinite(y).all():
        raise DataError("labels contain NaN or infinity")
    classes = np.unique(y)
    if positive is not None:
        try:
            pos = float(positive)
        except (TypeError, ValueError) as exc:
            raise DataError(f"positive class {positive!r} is not a number") from exc
        if not math.isfinite(pos) or pos not in classes:
            shown = ", ".join(_label_str(c) for c in classes[:25])
            raise DataError(f"positive class {positive!r} does not occur in the labels ({shown})")
        return np.where(y == pos, 1.0, -1.0)
    if classes.size == 2:
        return np.where(y == classes[1], 1.0, -1.0)
    if classes.size == 1 and classes[0] in (-1.0, 1.0):
        return y.copy()
    if classes.size == 1:
        raise DataError(
            f"labels have a single class {_label_str(classes[0])}; cannot tell which sign it "
            "is: give positive_class"
        )
    shown = ", ".join(_label_str(c) for c in classes[:25]) + (" ..." if classes.size > 25 else "")
    raise DataError(
        f"labels are multiclass ({classes.size} classes: {shown}); give positive_class for a "
        "one-vs-rest binary problem"
    )
