# cython: language_level=3
"""Products with the data matrix that the evaluation of P and D needs
(:func:`pdsparse.objective.evaluate`), written where scipy's would read A twice.
Not a loss: the losses live in ``_losses``."""

import numpy as np


def csr_products(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 const double[::1] w, const double[::1] alpha):
    """(A w, A^T alpha) of a CSR matrix A in one pass over it, each with the floating-point
    operations of scipy's ``A @ w`` and ``A.T @ alpha`` in their order (row sums from 0.0,
    entry by entry; A^T alpha scattered row by row into zeros): the same bits, and the
    evaluation of P and D (:func:`pdsparse.objective.evaluate`) reads A once, not twice."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, d = w.shape[0], j, k
    if alpha.shape[0] != n:
        raise ValueError(f"alpha of length {alpha.shape[0]} for {n} rows")
    z = np.zeros(n)
    v = np.zeros(d)
    cdef double[::1] zv = z
    cdef double[::1] vv = v
    cdef double s, a
    with nogil:
        for j in range(n):
            s = 0.0
            a = alpha[j]
            for k in range(indptr[j], indptr[j + 1]):
                s = s + data[k] * w[indices[k]]
                vv[indices[k]] += data[k] * a
            zv[j] = s
    return z, v


def csc_products(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 const double[::1] w, const double[::1] alpha):
    """(A w, A^T alpha) of a CSC matrix A (n rows) in one pass over its columns: A w
    scattered column by column into zeros, A^T alpha as column sums from 0.0. With sorted
    indices both add the same products in the same order as :func:`csr_products` on the CSR
    of the same A (row i's sum runs over j ascending, column j's over i ascending): the same
    bits. Its random accesses go to z and alpha (length n) where the CSR pass's go to w and
    A^T alpha (length d): on a wide matrix (d >> n, e.g. Mnist-RB, d = 1.6e6, n = 5.8e4) the
    short vectors stay in cache (measured: benchmarks/README.md, "Measurements cited by the
    code")."""
    cdef Py_ssize_t d = indptr.shape[0] - 1, n = alpha.shape[0], j, k
    if w.shape[0] != d:
        raise ValueError(f"w of length {w.shape[0]} for {d} columns")
    z = np.zeros(n)
    v = np.zeros(d)
    cdef double[::1] zv = z
    cdef double[::1] vv = v
    cdef double s, wj
    with nogil:
        for j in range(d):
            s = 0.0
            wj = w[j]
            for k in range(indptr[j], indptr[j + 1]):
                zv[indices[k]] += data[k] * wj
                s = s + data[k] * alpha[indices[k]]
            vv[j] = s
    return z, v


def csc_matvec(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const double[::1] w, Py_ssize_t n):
    """A w of a CSC matrix A with n rows, scattered column by column into zeros: the bits
    of scipy's CSR ``A @ w`` when the indices are sorted (see :func:`csc_products`)."""
    cdef Py_ssize_t d = indptr.shape[0] - 1, j, k
    if w.shape[0] != d:
        raise ValueError(f"w of length {w.shape[0]} for {d} columns")
    z = np.zeros(n)
    cdef double[::1] zv = z
    cdef double wj
    with nogil:
        for j in range(d):
            wj = w[j]
            for k in range(indptr[j], indptr[j + 1]):
                zv[indices[k]] += data[k] * wj
    return z


def csc_rmatvec(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                const double[::1] alpha):
    """A^T alpha of a CSC matrix A as column sums from 0.0: the bits of scipy's
    ``A.T @ alpha`` on the CSR when the indices are sorted (see :func:`csc_products`)."""
    cdef Py_ssize_t d = indptr.shape[0] - 1, j, k
    v = np.zeros(d)
    cdef double[::1] vv = v
    cdef double s
    with nogil:
        for j in range(d):
            s = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                s = s + data[k] * alpha[indices[k]]
            vv[j] = s
    return v


def csr_to_csc(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               Py_ssize_t d, Py_ssize_t block):
    """The CSC arrays (data, indices, indptr; int32) of a CSR matrix with ``d`` columns and
    sorted indices: a counting sort by column, each column's entries in row order (scipy's
    ``tocsc``, the same arrays). The rows are read one band of ``block`` columns at a
    time (``block`` >= d: all at once, scipy's order): each entry's write goes to its
    column's cursor, and with thousands of columns those cursors and their lines of the
    output leave the cache between two entries of a column; a band keeps them in it, at
    the cost of a visit to every row per band (:data:`pdsparse.problem.CSC_BAND`)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, nnz = indptr[n], i, k, j, dest, lo, hi, end
    out_ptr = np.zeros(d + 1, dtype=np.int32)
    out_idx = np.empty(nnz, dtype=np.int32)
    out_val = np.empty(nnz, dtype=np.float64)
    cdef int[::1] ptr = out_ptr, idx = out_idx, cur = np.empty(d, dtype=np.int32)
    cdef int[::1] at = np.empty(n, dtype=np.int32)
    cdef double[::1] val = out_val
    cdef int acc = 0
    if block < 1:
        raise ValueError(f"csr_to_csc: block must be positive, got {block}")
    with nogil:
        for k in range(nnz):
            ptr[indices[k] + 1] += 1
        for j in range(d):
            acc += ptr[j + 1]
            ptr[j + 1] = acc
            cur[j] = ptr[j]
        for i in range(n):
            at[i] = indptr[i]
        lo = 0
        while lo < d:
            hi = lo + block
            for i in range(n):
                k = at[i]
                end = indptr[i + 1]
                while k < end and indices[k] < hi:
                    j = indices[k]
                    dest = cur[j]
                    cur[j] = dest + 1
                    idx[dest] = i
                    val[dest] = data[k]
                    k += 1
                at[i] = k
            lo = hi
    return out_val, out_idx, out_ptr
