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
