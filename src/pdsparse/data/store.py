"""Processed data sets on disk: one ``.npz`` holding a CSR matrix, labels and JSON metadata.

File layout (``numpy.savez``, uncompressed so loading is a plain read; no pickles):

``format``   int, layout version (1)
``data``, ``indices``, ``indptr``, ``shape``   the CSR parts of A (n x d, float64)
``b``        labels, float64, shape (n,)
``meta``     0-d unicode array holding a JSON object (name, source, normalization, ...)

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

FORMAT_VERSION = 1
_KEYS = ("format", "data", "indices", "indptr", "shape", "b", "meta")


@dataclass(frozen=True)
class Dataset:
    """A processed data set: ``A`` (n x d CSR float64, rows = examples), labels ``b``, metadata.

    Face-Off's data matrix is X = A^T (d x n).
    """

    name: str
    A: sp.csr_matrix
    b: np.ndarray
    meta: dict = field(default_factory=dict)

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
        """Stored nonzeros of A."""
        return int(self.A.nnz)


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


def save_dataset(path: str | os.PathLike, A: sp.spmatrix, b: np.ndarray, meta: dict) -> None:
    """Write ``A``, ``b`` and ``meta`` atomically to the ``.npz`` file ``path``.

    Parameters
    ----------
    path : str or PathLike
        Output file (parent directories are created).
    A : scipy sparse matrix
        n x d data; stored as CSR float64 with sorted indices.
    b : array_like
        Labels, shape (n,); stored as float64.
    meta : dict
        JSON-serializable metadata (NumPy scalars and arrays are converted).

    Raises
    ------
    DataError
        Shape mismatch between A and b, non-finite values, or unserializable metadata.
    """
    path = Path(path)
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sort_indices()
    b = np.asarray(b, dtype=np.float64)
    if b.ndim != 1 or b.shape[0] != A.shape[0]:
        raise DataError(f"{path}: labels have shape {b.shape}, expected ({A.shape[0]},)")
    if not (np.isfinite(A.data).all() and np.isfinite(b).all()):
        raise DataError(f"{path}: A or b contains NaN or infinity")
    if not isinstance(meta, dict):
        raise DataError(f"{path}: meta must be a dict, got {type(meta).__name__}")
    try:
        meta_json = json.dumps(meta, default=_json_default, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path}: metadata is not JSON-serializable: {exc}") from exc
    with atomic_path(path) as tmp:
        # Write through a file object: np.savez would append ".npz" to the temp file's name.
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                format=np.int64(FORMAT_VERSION),
                data=A.data,
                indices=A.indices,
                indptr=A.indptr,
                shape=np.asarray(A.shape, dtype=np.int64),
                b=b,
                meta=np.asarray(meta_json),
            )


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
        f"LIBSVM file with 'pdsparse prepare' (or 'pdsparse synth' for synthetic data), or get "
        f"its primal-vs-dual statistics directly with 'pdsparse advise {path}'"
    )


def load_dataset(path: str | os.PathLike) -> Dataset:
    """Read and validate a data set written by :func:`save_dataset`.

    Parameters
    ----------
    path : str or PathLike
        The ``.npz`` file.

    Returns
    -------
    Dataset
        With ``name`` from the metadata (else the file stem).

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
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [k for k in _KEYS if k not in npz.files]
            if missing:
                raise DataError(f"{path}: not a pdsparse data set (missing {', '.join(missing)})")
            parts = {k: npz[k] for k in _KEYS}
    except DataError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{path}: cannot read data set ({exc})") from exc

    version = int(parts["format"])
    if version != FORMAT_VERSION:
        raise DataError(f"{path}: format version {version}, this pdsparse reads {FORMAT_VERSION}")
    shape = parts["shape"]
    data, indices, indptr, b = parts["data"], parts["indices"], parts["indptr"], parts["b"]
    if shape.shape != (2,) or (shape < 0).any():
        raise DataError(f"{path}: bad matrix shape {shape.tolist()}")
    n, d = (int(s) for s in shape)
    if data.dtype != np.float64 or b.dtype != np.float64:
        raise DataError(f"{path}: data and labels must be float64 ({data.dtype}, {b.dtype})")
    if not (np.issubdtype(indices.dtype, np.integer) and np.issubdtype(indptr.dtype, np.integer)):
        raise DataError(f"{path}: CSR index arrays must be integers")
    if data.ndim != 1 or indices.shape != data.shape:
        raise DataError(f"{path}: CSR data/indices lengths differ")
    if indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != data.size:
        raise DataError(f"{path}: CSR indptr inconsistent with shape ({n}, {d}) and nnz")
    if (np.diff(indptr) < 0).any():
        raise DataError(f"{path}: CSR indptr is not nondecreasing")
    if indices.size and (indices.min() < 0 or indices.max() >= d):
        raise DataError(f"{path}: CSR column index out of range [0, {d})")
    if b.shape != (n,):
        raise DataError(f"{path}: labels have shape {b.shape}, expected ({n},)")
    if not (np.isfinite(data).all() and np.isfinite(b).all()):
        raise DataError(f"{path}: A or b contains NaN or infinity")
    try:
        meta = json.loads(str(parts["meta"]))
    except ValueError as exc:
        raise DataError(f"{path}: metadata is not valid JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise DataError(f"{path}: metadata must be a JSON object")

    A = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    if not A.has_canonical_format:
        raise DataError(f"{path}: CSR column indices are unsorted or duplicated within a row")
    name = meta.get("name") if isinstance(meta.get("name"), str) else path.stem
    return Dataset(name=name, A=A, b=b, meta=meta)
