"""Processed data sets on disk: one ``.npz`` holding A, labels, optional test rows and metadata.

File layout (``numpy.savez``, uncompressed so loading is a plain read; no pickles):

``format``   int, layout version: 1 when every matrix is sparse, 2 when A or A_test is dense
             (a version-1 reader cannot read a dense matrix; both versions are read here)
``data``, ``indices``, ``indptr``, ``shape``   the CSR parts of A (n x d, float64), or
``A``        A itself as a dense C-order (n x d) float64 array (random Fourier features)
``b``        labels, float64, shape (n,), or a real label matrix B of shape (n, k) (multi-output
             regression: PDBFW's low-rank sensing, solved whole as a matrix problem)
``meta``     0-d unicode array holding a JSON object (name, source, normalization, ...)

Optional test rows (a split made by the recipe, :mod:`pdsparse.data.prepare`):

``b_test``   test labels, float64, shape (n_test,) (or (n_test, k)), with either
``test_data``, ``test_indices``, ``test_indptr``, ``test_shape``   CSR parts of A_test, or
``A_test``   a dense (n_test x d) float64 array.

A dense A is loaded as one array: ``numpy.load`` reads a stored member straight into the
result in 256 KiB pieces, so a 4.6 GB file takes 4.6 GB (and a 256 KiB buffer), never two
copies; ``load_dataset(path, mmap=True)`` instead maps dense parts read-only from the file
(no copy at all; processes on one machine then share the page cache).

Writes are atomic (:func:`pdsparse.io.atomic_path`); loads validate every part and raise
:class:`~pdsparse.errors.DataError` naming the file.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import DataError
from pdsparse.io import atomic_path

__all__ = ["Dataset", "save_dataset", "load_dataset", "file_kind", "FORMAT_VERSION"]

#: the newest layout version written (2: dense matrices); version 1 files are still read
FORMAT_VERSION = 2
_VERSIONS = (1, 2)
_CSR_KEYS = ("data", "indices", "indptr", "shape")
_TEST_CSR_KEYS = ("test_data", "test_indices", "test_indptr", "test_shape")
#: rows per slice when checking a dense matrix for NaN/inf (a bounded temporary)
_FINITE_CHUNK = 1 << 22


@dataclass(frozen=True)
class Dataset:
    """A processed data set: ``A`` (n x d, rows = examples), labels ``b``, metadata, and
    optional test rows ``A_test`` / ``b_test`` (``None`` when the recipe made no split).

    ``A`` is a CSR float64 matrix, or a dense C-order float64 ``np.ndarray`` (random Fourier
    features; :class:`pdsparse.problem.Problem` keeps it as its one copy). Face-Off's data
    matrix is X = A^T (d x n).
    """

    name: str
    A: sp.csr_matrix | np.ndarray
    b: np.ndarray
    meta: dict = field(default_factory=dict)
    A_test: sp.csr_matrix | np.ndarray | None = None
    b_test: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of examples (rows of A)."""
        return int(self.A.shape[0])

    @property
    def d(self) -> int:
        """Number of features (columns of A)."""
        return int(self.A.shape[1])

    @property
    def nnz(self) -> int:
        """Stored entries of A: its nonzeros if sparse, n * d if dense."""
        return int(self.A.size) if isinstance(self.A, np.ndarray) else int(self.A.nnz)

    @property
    def dense(self) -> bool:
        """Whether A is a dense array."""
        return isinstance(self.A, np.ndarray)

    @property
    def n_test(self) -> int:
        """Number of test rows (0 without a split)."""
        return 0 if self.b_test is None else int(self.b_test.shape[0])


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"metadata value of type {type(obj).__name__} is not JSON-serializable")


def _all_finite(a: np.ndarray) -> bool:
    """``np.isfinite(a).all()`` with a bounded temporary (dense matrices may be GBs)."""
    flat = a.reshape(-1)
    return all(np.isfinite(flat[i:i + _FINITE_CHUNK]).all()
               for i in range(0, flat.size, _FINITE_CHUNK))


def _matrix_parts(path: Path, A, what: str, prefix: str) -> dict[str, np.ndarray]:
    """The npz members of one matrix: a dense 2-D array as it is (no copy when it is already
    C-order float64), anything else as canonical CSR parts."""
    if isinstance(A, np.ndarray):
        if A.ndim != 2:
            raise DataError(f"{path}: dense {what} must be 2-D, got shape {A.shape}")
        A = np.ascontiguousarray(A, dtype=np.float64)
        if not _all_finite(A):
            raise DataError(f"{path}: {what} contains NaN or infinity")
        return {("A" if prefix == "" else "A_test"): A}
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sort_indices()
    if not np.isfinite(A.data).all():
        raise DataError(f"{path}: {what} contains NaN or infinity")
    return {f"{prefix}data": A.data, f"{prefix}indices": A.indices,
            f"{prefix}indptr": A.indptr,
            f"{prefix}shape": np.asarray(A.shape, dtype=np.int64)}


def _label_shape_ok(b: np.ndarray, n: int) -> bool:
    """Labels (n,) or a label matrix (n, k), k >= 1."""
    return b.shape[:1] == (n,) and (b.ndim == 1 or (b.ndim == 2 and b.shape[1] >= 1))


def _labels(path: Path, b, n: int, what: str) -> np.ndarray:
    b = np.asarray(b, dtype=np.float64)
    if not _label_shape_ok(b, n):
        raise DataError(f"{path}: {what} have shape {b.shape}, expected ({n},) or ({n}, k)")
    if not np.isfinite(b).all():
        raise DataError(f"{path}: {what} contain NaN or infinity")
    return b


def save_dataset(path: str | os.PathLike, A, b: np.ndarray, meta: dict,
                 A_test=None, b_test: np.ndarray | None = None) -> None:
    """Write ``A``, ``b``, ``meta`` and optional test rows atomically to the ``.npz`` ``path``.

    Parameters
    ----------
    path : str or PathLike
        Output file (parent directories are created).
    A : scipy sparse matrix or np.ndarray
        n x d data; sparse is stored as CSR float64 with sorted indices, a dense 2-D array
        as one float64 array (written in pieces: no second copy is made when it is already
        C-order float64).
    b : array_like
        Labels, shape (n,), or a label matrix (n, k); stored as float64.
    meta : dict
        JSON-serializable metadata (NumPy scalars and arrays are converted).
    A_test, b_test : optional
        Test rows (n_test x d, sparse or dense) and their labels; both or neither.

    Raises
    ------
    DataError
        Shape mismatch between A and b (or A_test and b_test, or the widths of A and
        A_test), non-finite values, or unserializable metadata.
    """
    path = Path(path)
    parts = _matrix_parts(path, A, "A", "")
    n, d = (parts["A"].shape if "A" in parts else tuple(int(v) for v in parts["shape"]))
    parts["b"] = _labels(path, b, n, "labels")
    if (A_test is None) != (b_test is None):
        raise DataError(f"{path}: give both A_test and b_test, or neither")
    if A_test is not None:
        test = _matrix_parts(path, A_test, "A_test", "test_")
        n_t, d_t = (test["A_test"].shape if "A_test" in test
                    else tuple(int(v) for v in test["test_shape"]))
        if d_t != d:
            raise DataError(f"{path}: A_test has {d_t} columns, A has {d}")
        parts.update(test)
        parts["b_test"] = _labels(path, b_test, n_t, "test labels")
        if parts["b_test"].shape[1:] != parts["b"].shape[1:]:
            raise DataError(f"{path}: test labels of shape {parts['b_test'].shape} do not match "
                            f"the labels' {parts['b'].shape}")
    if not isinstance(meta, dict):
        raise DataError(f"{path}: meta must be a dict, got {type(meta).__name__}")
    try:
        meta_json = json.dumps(meta, default=_json_default, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path}: metadata is not JSON-serializable: {exc}") from exc
    version = 2 if ("A" in parts or "A_test" in parts) else 1
    with atomic_path(path) as tmp:
        # Write through a file object: np.savez would append ".npz" to the temp file's name.
        with open(tmp, "wb") as fh:
            np.savez(fh, format=np.int64(version), **parts, meta=np.asarray(meta_json))


def data_meta(path: str | os.PathLike) -> dict:
    """The metadata of a prepared ``.npz`` without reading its arrays (a lazy npz member)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return json.loads(str(npz["meta"][()]))
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"prepared data file {path}: cannot read its metadata ({exc})") from None



def file_kind(path: str | os.PathLike) -> str:
    """What a file looks like from its first bytes (no parsing).

    Returns ``"npz"`` (a zip archive, as written by :func:`save_dataset`), ``"npy"``, ``"bz2"``,
    ``"gzip"``, ``"empty"``, ``"text"`` (no NUL byte in the first 4 KiB, e.g. LIBSVM text) or
    ``"binary"``.
    """
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if not head:
        return "empty"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "npz"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    return "binary" if b"\x00" in head else "text"


def _not_npz_error(path: Path, kind: str) -> DataError:
    what = {
        "empty": "is empty",
        "npy": "is a single .npy array",
        "bz2": "is bz2-compressed (a raw LIBSVM file?)",
        "gzip": "is gzip-compressed (a raw LIBSVM file?)",
        "text": "looks like a raw LIBSVM text file",
        "binary": "is not a .npz archive",
    }[kind]
    return DataError(
        f"{path}: not a processed pdsparse data set (.npz): the file {what}. Convert a raw "
        f"LIBSVM file with 'pdsparse prepare --raw FILE' (synthetic data: "
        f"'pdsparse prepare --generator KIND'), or get "
        f"its primal-vs-dual statistics directly with 'pdsparse advise {path}'"
    )


def _mapped_member(path: Path, zf: zipfile.ZipFile, key: str) -> np.ndarray:
    """A read-only memory map of the stored (uncompressed) ``.npy`` member ``key``."""
    info = zf.getinfo(f"{key}.npy")
    if info.compress_type != zipfile.ZIP_STORED:
        raise DataError(f"{path}: member {key} is compressed; cannot map it (load without mmap)")
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        local = fh.read(30)
        if local[:4] != b"PK\x03\x04":
            raise DataError(f"{path}: bad zip local header for member {key}")
        name_len = int.from_bytes(local[26:28], "little")
        extra_len = int.from_bytes(local[28:30], "little")
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        version = np.lib.format.read_magic(fh)
        readers = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}
        if version not in readers:
            raise DataError(f"{path}: member {key} has .npy version {version}; cannot map it "
                            "(load without mmap)")
        shape, fortran, dtype = readers[version](fh)
        offset = fh.tell()
    if dtype.hasobject:
        raise DataError(f"{path}: member {key} holds Python objects")
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                     order="F" if fortran else "C")


def _read_parts(path: Path, mmap: bool) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            files = set(npz.files)
            dense = {k for k in ("A", "A_test") if k in files}
            parts = {k: npz[k] for k in files if not (mmap and k in dense)}
        if mmap and dense:
            with zipfile.ZipFile(path) as zf:
                for k in dense:
                    parts[k] = _mapped_member(path, zf, k)
    except DataError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise DataError(f"{path}: cannot read data set ({exc})") from exc
    return parts


def _check_csr(path: Path, parts: dict, prefix: str, what: str) -> sp.csr_matrix:
    shape = parts[f"{prefix}shape"]
    data, indices, indptr = (parts[f"{prefix}{k}"] for k in ("data", "indices", "indptr"))
    if shape.shape != (2,) or (shape < 0).any():
        raise DataError(f"{path}: bad {what} shape {shape.tolist()}")
    n, d = (int(s) for s in shape)
    if data.dtype != np.float64:
        raise DataError(f"{path}: {what} data must be float64 ({data.dtype})")
    if not (np.issubdtype(indices.dtype, np.integer) and np.issubdtype(indptr.dtype, np.integer)):
        raise DataError(f"{path}: {what} CSR index arrays must be integers")
    if data.ndim != 1 or indices.shape != data.shape:
        raise DataError(f"{path}: {what} CSR data/indices lengths differ")
    if indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != data.size:
        raise DataError(f"{path}: {what} CSR indptr inconsistent with shape ({n}, {d}) and nnz")
    if (np.diff(indptr) < 0).any():
        raise DataError(f"{path}: {what} CSR indptr is not nondecreasing")
    if indices.size and (indices.min() < 0 or indices.max() >= d):
        raise DataError(f"{path}: {what} CSR column index out of range [0, {d})")
    if not np.isfinite(data).all():
        raise DataError(f"{path}: {what} contains NaN or infinity")
    A = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    if not A.has_canonical_format:
        raise DataError(f"{path}: {what} CSR column indices are unsorted or duplicated "
                        "within a row")
    return A


def _check_dense(path: Path, A: np.ndarray, what: str) -> np.ndarray:
    if A.ndim != 2 or A.dtype != np.float64:
        raise DataError(f"{path}: dense {what} must be a 2-D float64 array "
                        f"({A.ndim}-D {A.dtype})")
    if not A.flags.c_contiguous:
        raise DataError(f"{path}: dense {what} must be stored in C order")
    if not _all_finite(A):
        raise DataError(f"{path}: {what} contains NaN or infinity")
    return A


def _matrix(path: Path, parts: dict, version: int, dense_key: str, prefix: str, what: str):
    if dense_key in parts:
        if version < 2:
            raise DataError(f"{path}: format version {version} cannot hold a dense {what}")
        return _check_dense(path, parts[dense_key], what)
    keys = [f"{prefix}{k}" for k in _CSR_KEYS]
    missing = [k for k in keys if k not in parts]
    if missing:
        raise DataError(f"{path}: not a pdsparse data set (missing {', '.join(missing)})")
    return _check_csr(path, parts, prefix, what)


def load_dataset(path: str | os.PathLike, mmap: bool = False) -> Dataset:
    """Read and validate a data set written by :func:`save_dataset`.

    Parameters
    ----------
    path : str or PathLike
        The ``.npz`` file.
    mmap : bool
        Map dense matrices read-only from the file instead of reading them into memory
        (sparse parts are always read).

    Returns
    -------
    Dataset
        With ``name`` from the metadata (else the file stem); ``A_test``/``b_test`` when
        the file holds test rows.

    Raises
    ------
    DataError
        Missing or unreadable file, a file that is not a ``.npz`` archive (e.g. a raw LIBSVM
        file: the message suggests ``pdsparse prepare`` / ``pdsparse advise``), missing parts,
        wrong format version, an inconsistent CSR structure, wrong label length, non-finite
        values or bad metadata. The message names the file.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: processed data file not found")
    try:
        kind = file_kind(path)
    except OSError as exc:
        raise DataError(f"{path}: cannot read data set ({exc})") from exc
    if kind != "npz":
        raise _not_npz_error(path, kind)
    parts = _read_parts(path, mmap)
    required = ("format", "b", "meta", *(() if "A" in parts else _CSR_KEYS))
    missing = [k for k in required if k not in parts]
    if missing:
        raise DataError(f"{path}: not a pdsparse data set (missing {', '.join(missing)})")

    version = int(parts["format"])
    if version not in _VERSIONS:
        raise DataError(f"{path}: format version {version}, this pdsparse reads "
                        f"{', '.join(map(str, _VERSIONS))}")
    A = _matrix(path, parts, version, "A", "", "A")
    n, d = A.shape
    b = parts["b"]
    if b.dtype != np.float64:
        raise DataError(f"{path}: data and labels must be float64 ({b.dtype})")
    if not _label_shape_ok(b, n):
        raise DataError(f"{path}: labels have shape {b.shape}, expected ({n},) or ({n}, k)")
    if not np.isfinite(b).all():
        raise DataError(f"{path}: A or b contains NaN or infinity")
    A_test = b_test = None
    if "b_test" in parts:
        A_test = _matrix(path, parts, version, "A_test", "test_", "A_test")
        b_test = parts["b_test"]
        if A_test.shape[1] != d:
            raise DataError(f"{path}: A_test has {A_test.shape[1]} columns, A has {d}")
        if b_test.dtype != np.float64 or not _label_shape_ok(b_test, A_test.shape[0]) \
                or b_test.shape[1:] != b.shape[1:]:
            raise DataError(f"{path}: test labels must be float64 of shape "
                            f"({A_test.shape[0]},) + {b.shape[1:]}, got {b_test.dtype} "
                            f"{b_test.shape}")
        if not np.isfinite(b_test).all():
            raise DataError(f"{path}: test labels contain NaN or infinity")
    elif "A_test" in parts or any(k in parts for k in _TEST_CSR_KEYS):
        raise DataError(f"{path}: test rows without test labels (b_test)")
    try:
        meta = json.loads(str(parts["meta"]))
    except ValueError as exc:
        raise DataError(f"{path}: metadata is not valid JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise DataError(f"{path}: metadata must be a JSON object")
    name = meta.get("name") if isinstance(meta.get("name"), str) else path.stem
    return Dataset(name=name, A=A, b=b, meta=meta, A_test=A_test, b_test=b_test)
