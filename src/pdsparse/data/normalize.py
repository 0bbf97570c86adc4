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

__all__ = ["METHODS", "normalize", "row_norms"]

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
        return _normalize_dense(A, method)
    A = sp.csr_matrix(A, dtype=np.float64, copy=True)
    A.sort_indices()
    norms = row_norms(A)
    before = float(norms.mean()) if norms.size else 0.0
    info: dict = {"method": method, "mean_row_norm_before": before}
    if method == "avg_example_norm":
        if not before > 0.0:
            raise DataError("avg_example_norm: every example is zero; cannot normalize")
        A.data /= before
        info["scale"] = before
    elif method == "unit_rows":
        zero = norms == 0.0
        inv = np.divide(1.0, norms, out=np.ones_like(norms), where=~zero)
        A.data *= np.repeat(inv, np.diff(A.indptr))
        info["zero_rows"] = int(zero.sum())
    else:
        info["scale"] = 1.0
    info["mean_row_norm_after"] = float(row_norms(A).mean()) if A.shape[0] else 0.0
    return A, info


def _normalize_dense(A: np.ndarray, method: str) -> tuple[np.ndarray, dict]:
    """:func:`normalize` of a dense array: the same scalings, a C-order float64 array."""
    A = np.array(A, dtype=np.float64, order="C", copy=True)
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    before = float(norms.mean()) if norms.size else 0.0
    info: dict = {"method": method, "mean_row_norm_before": before}
    if method == "avg_example_norm":
        if not before > 0.0:
            raise DataError("avg_example_norm: every example is zero; cannot normalize")
        A /= before
        info["scale"] = before
    elif method == "unit_rows":
        zero = norms == 0.0
        A *= np.divide(1.0, norms, out=np.ones_like(norms), where=~zero)[:, None]
        info["zero_rows"] = int(zero.sum())
    else:
        info["scale"] = 1.0
    info["mean_row_norm_after"] = (float(np.sqrt(np.einsum("ij,ij->i", A, A)).mean())
                                   if A.shape[0] else 0.0)
    return A, info
