"""Normalization of a data matrix A (n x d, rows = examples), applied once in ``prepare``.

Methods
-------
``"avg_example_norm"``
    Divide every entry by the average example norm ``s = (1/n) sum_j ||a_j||_2`` (a_j = row j
    of A). Face-Off (Csiba & Richtárik), Sec. 7: "we normalized all the entries of X by the
    average column norm"; their X = A^T is d x n with examples as columns, so the average
    column norm of X is the average row norm of A. Afterwards the mean row norm is 1.
``"unit_rows"``
    Scale every nonzero row to unit 2-norm (all-zero rows are left as they are).
``"none"``
    Leave A unchanged (a copy is returned).

The input matrix is never modified.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import ConfigError, DataError
from pdsparse.names import NORMALIZATIONS

__all__ = ["METHODS", "normalize", "normalize_rows", "row_norms", "row_norms_sequential"]

METHODS = NORMALIZATIONS


def row_norms(A: sp.spmatrix) -> np.ndarray:
    """Euclidean norm of each row (example) of a sparse matrix, shape (n,)."""
    A = sp.csr_matrix(A)
    return np.sqrt(np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel())


def normalize(A: sp.spmatrix, method: str) -> tuple[sp.csr_matrix, dict]:
    """Normalize ``A`` by ``method`` (see the module docstring).

    Parameters
    ----------
    A : scipy sparse matrix
        n x d data, rows = examples.
    method : {"avg_example_norm", "unit_rows", "none"}
        Normalization method.

    Returns
    -------
    A_normalized : scipy.sparse.csr_matrix
        New float64 CSR matrix (sorted indices, same sparsity pattern).
    info : dict
        JSON-serializable: ``method``; ``scale`` (the divisor, for ``avg_example_norm``;
        1.0 for ``none``); ``mean_row_norm_before``/``after``; for ``unit_rows`` also
        ``zero_rows`` (count of all-zero rows left unscaled).

    Raises
    ------
    ConfigError
        Unknown method (the message lists the valid ones).
    DataError
        ``avg_example_norm`` of an all-zero matrix.
    """
    if method not in METHODS:
        raise ConfigError(f"unknown normalization {method!r}; valid methods: {', '.join(METHODS)}")
    if isinstance(A, np.ndarray):  # dense data (low-rank sensing) stays dense: one C copy
        A = np.array(A, dtype=np.float64, order="C", copy=True)
    else:
        A = sp.csr_matrix(A, dtype=np.float64, copy=True)
        A.sort_indices()
    info = normalize_rows(A, None, method, row_sums="pairwise")
    del info["computed_on"]
    return A, info


def row_norms_sequential(A, chunk_nnz: int = 1 << 22) -> np.ndarray:
    """Row 2-norms of a dense array or a CSR matrix, with bounded temporaries (a CSR is
    squared ~4 M stored entries at a time; ``A.multiply(A)`` would copy all of A)."""
    if isinstance(A, np.ndarray):
        return np.sqrt(np.einsum("ij,ij->i", A, A))
    n = A.shape[0]
    out = np.zeros(n)
    indptr = A.indptr
    start = 0
    while start < n:
        stop = int(np.searchsorted(indptr, indptr[start] + chunk_nnz, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        counts = np.diff(indptr[start:stop + 1])
        rows = np.repeat(np.arange(stop - start), counts)
        sq = A.data[indptr[start]:indptr[stop]] ** 2
        out[start:stop] = np.bincount(rows, weights=sq, minlength=stop - start)
        start = stop
    return np.sqrt(out)


def _pairwise_row_norms(A) -> np.ndarray:
    """Row 2-norms with each sparse row's squares summed as scipy's CSR row sums do."""
    return row_norms_sequential(A) if isinstance(A, np.ndarray) else row_norms(A)


def normalize_rows(A, A_test, method: str, row_sums: str = "sequential") -> dict:
    """``normalize`` semantics on the training rows A (in place, dense or sparse), applied
    to the test rows alike: ``avg_example_norm`` divides both by the TRAINING mean row norm,
    ``unit_rows`` scales every row to norm 1; ``row_sums`` as :class:`Normalize` says.
    Returns the info dict of :func:`normalize` plus
    ``computed_on``."""
    if method not in NORMALIZATIONS:
        raise ConfigError(f"unknown normalization {method!r}; valid methods: "
                          f"{', '.join(NORMALIZATIONS)}")
    norms_of = row_norms_sequential if row_sums == "sequential" else _pairwise_row_norms
    norms = norms_of(A)
    before = float(norms.mean()) if norms.size else 0.0
    info: dict = {"method": method, "mean_row_norm_before": before}
    if method == "avg_example_norm":
        if not before > 0.0:
            raise DataError("avg_example_norm: every example is zero; cannot normalize")
        for M in (A, A_test):
            if M is not None:
                (M if isinstance(M, np.ndarray) else M.data)[...] /= before
        info["scale"] = before
    elif method == "unit_rows":
        zero_rows = 0
        for M, nrm in ((A, norms), (A_test, None)):
            if M is None:
                continue
            nrm = norms_of(M) if nrm is None else nrm
            zero = nrm == 0.0
            inv = np.divide(1.0, nrm, out=np.ones_like(nrm), where=~zero)
            if isinstance(M, np.ndarray):
                M *= inv[:, None]
            else:
                M.data *= np.repeat(inv, np.diff(M.indptr))
            zero_rows += int(zero.sum()) if M is A else 0
        info["zero_rows"] = zero_rows
    else:
        info["scale"] = 1.0
    info["mean_row_norm_after"] = (before if method == "none"
                                   else float(norms_of(A).mean()) if A.shape[0] else 0.0)
    info["computed_on"] = "training rows"
    return info
