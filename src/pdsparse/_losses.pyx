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


def curvatures(int loss, const double[::1] z, const double[::1] b):
    """phi_j''(z_j) for every j (the smooth hinge's generalized one)."""
    cdef Py_ssize_t j, n = z.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    with nogil:
        for j in range(n):
            o[j] = loss_curv(loss, z[j], b[j])
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

