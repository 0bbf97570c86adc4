# cython: language_level=3
"""Array wrappers over the scalar losses of ``_losses.pxd`` for objective evaluation."""

import numpy as np

cimport numpy as cnp

from pdsparse._losses cimport (
    dual_step_exact,
    pd_logistic_dot,
    loss_conj_neg,
    loss_deriv,
    loss_value,
)

cnp.import_array()


def values(int loss, const double[::1] z, const double[::1] b):
    """phi_j(z_j) for every j."""
    cdef Py_ssize_t j, n = z.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    with nogil:
        for j in range(n):
            o[j] = loss_value(loss, z[j], b[j])
    return out


def derivs(int loss, const double[::1] z, const double[::1] b):
    """phi_j'(z_j) for every j."""
    cdef Py_ssize_t j, n = z.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    with nogil:
        for j in range(n):
            o[j] = loss_deriv(loss, z[j], b[j])
    return out


def conj_neg(int loss, const double[::1] alpha, const double[::1] b):
    """phi_j^*(-alpha_j) for every j (+inf outside the domain)."""
    cdef Py_ssize_t j, n = alpha.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    with nogil:
        for j in range(n):
            o[j] = loss_conj_neg(loss, alpha[j], b[j])
    return out


def dual_steps(int loss, const double[::1] alpha, const double[::1] b,
               const double[::1] z, const double[::1] q):
    """Exact 1-D dual maximizers, elementwise (used by tests and the reference)."""
    cdef Py_ssize_t j, n = alpha.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    with nogil:
        for j in range(n):
            o[j] = dual_step_exact(loss, alpha[j], b[j], z[j], q[j])
    return out


def logistic_dot(const double[::1] val, const int[::1] idx, const double[::1] z,
                 const double[::1] b):
    """sum_t phi'(z[idx[t]]) val[t] for the logistic loss: the primal kernel's column
    gradient (4-lane, run-time dispatched), exposed for tests."""
    if val.shape[0] == 0:
        return 0.0
    return pd_logistic_dot(&val[0], &idx[0], &z[0], &b[0], val.shape[0])


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
