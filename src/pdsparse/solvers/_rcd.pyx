# cython: language_level=3
"""Randomized coordinate descent kernels of Csiba & Richtarik, *Coordinate Descent
Face-Off: Primal or Dual?* (JMLR long version): Algorithm 1 (primal RCD, NSync)
over the CSC matrix and Algorithm 2 (dual RCD, Quartz) over the CSR matrix,
serial sampling (ESO eq. 7), uniform or importance sampling (eq. 14).

Coordinates are drawn i.i.d. uniformly, i.i.d. by importance (Walker alias
table), or in a fresh random permutation every epoch of m draws (the order
LIBLINEAR's dual solver uses; not covered by the paper's theory, offered for
practice). Each call advances the state in place until ``budget`` nonzeros of A
have been touched (one "epoch" is nnz(A) nonzeros, the paper's pass over the
data) and returns ``(iterations, nonzeros_touched)``. The loops hold no Python
objects and run without the GIL; the random state (uint64[4]) and the
permutation state live in caller-owned arrays, so chunked calls reproduce one
long call exactly. The draws and the lookahead prefetch that hides the latency of
random rows come from ``_sampling.pxd`` (``Sampler``, ``sampler_next``).
"""

from libc.stdint cimport uint64_t

from pdsparse._losses cimport LOGISTIC, dual_step_exact, loss_deriv, pd_logistic_dot
from pdsparse.solvers._matrix cimport sparse_dot4
from pdsparse.solvers._sampling cimport Sampler, pd_prefetch, sampler_init, sampler_next


cdef inline int check_length(Py_ssize_t got, Py_ssize_t want, str what) except -1:
    if got != want:
        raise ValueError(f"{what} has {got} entries, expected {want}")
    return 0


def primal_rcd(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const double[::1] b, double[::1] w, double[::1] z,
               const double[::1] lipschitz, double l2, double l1, int loss,
               int mode, const double[::1] prob, const int[::1] alias,
               int[::1] perm, long long[::1] perm_pos,
               uint64_t[::1] state, long long budget, const double[::1] weight=None,
               double intercept_lipschitz=0.0, long long[::1] since=None):
    """Primal RCD (Face-Off Algorithm 1) on P(w) = 1/n sum phi_j(a_j^T w) + l2/2 ||w||^2 + l1 ||w||_1.

    Parameters are the CSC arrays of A (n x d), labels ``b``, the iterate ``w``
    and the maintained margins ``z = A w`` (both updated in place), and
    ``lipschitz[i] = beta u_i / n + l2`` with u_i = ||A_{:,i}||^2 (eq. 7), so that
    the update of coordinate i is Delta_i = -nabla_i P(w) / lipschitz[i], exactly
    the printed step -n / (beta u_i + lambda n) * nabla_i P(w). With ``l1 > 0``
    the step is the proximal (soft-threshold) one of Richtarik & Takac (2014),
    which reduces to the former when l1 = 0. ``mode`` is 0 uniform, 1 alias
    (``prob``, ``alias``), 2 permutation (``perm``, ``perm_pos``, updated in place).

    ``weight`` (n, optional): example weights s, each loss term s_j phi_j, so that
    nabla_i P(w) = 1/n sum_j s_j phi_j'(a_j^T w) A_ji + l2 w_i; the caller's ``lipschitz``
    then reads beta sum_j s_j A_ji^2 / n + l2.

    With ``intercept_lipschitz`` L_c > 0, ``w`` has d + 1 entries, the last an unpenalized
    intercept c included in ``z`` (z = A w + c), and c takes the step -(1/n sum_j s_j
    phi_j'(z_j)) / L_c after every d coordinate draws (once per sweep: its column of ones
    is dense, n entries; outside the paper's theory, a block-cyclic extra coordinate, as
    LIBLINEAR's bias is one more feature); ``since[0]`` counts the draws since its last
    step (caller-owned, so chunked calls reproduce one long call). L_c = beta sum_j s_j / n.
    """
    cdef Py_ssize_t d = w.shape[0]
    cdef bint weighted = weight is not None
    cdef bint has_c = intercept_lipschitz > 0.0
    cdef Py_ssize_t n = z.shape[0], j
    cdef long long pos = 0
    cdef const double* sp = NULL
    cdef double inv_n = 1.0 / z.shape[0]
    cdef long long touched = 0, iters = 0
    cdef int k, start, end
    cdef Py_ssize_t i
    cdef double grad, step, wi, v, thr, delta
    cdef Sampler smp
    sampler_init(&smp, mode, state, prob, alias, perm, perm_pos, indptr, data, indices)
    if has_c:
        d -= 1
        if since is None or since.shape[0] != 1:
            raise ValueError("an intercept needs since, a counter of one entry")
        pos = since[0]
    check_length(d, smp.m, "w")
    check_length(lipschitz.shape[0], d, "lipschitz")
    check_length(b.shape[0], z.shape[0], "b")
    if weighted:
        check_length(weight.shape[0], z.shape[0], "weight")
        if weight.shape[0] > 0:
            sp = &weight[0]
    with nogil:
        while touched < budget:
            i = sampler_next(&smp)
            if smp.ahead >= 0:
                pd_prefetch(&w[smp.ahead])
                pd_prefetch(&lipschitz[smp.ahead])
            start = indptr[i]
            end = indptr[i + 1]
            if weighted:
                grad = 0.0
                for k in range(start, end):
                    grad += (sp[indices[k]] * loss_deriv(loss, z[indices[k]], b[indices[k]])
                             * data[k])
            elif loss == LOGISTIC and end > start:
                # one exp per nonzero dominates this loop: four lanes at a time
                grad = pd_logistic_dot(&data[start], &indices[start], &z[0], &b[0],
                                       end - start)
            else:
                grad = 0.0
                for k in range(start, end):
                    grad += loss_deriv(loss, z[indices[k]], b[indices[k]]) * data[k]
            wi = w[i]
            grad = grad * inv_n + l2 * wi
            step = 1.0 / lipschitz[i]
            if l1 == 0.0:
                delta = -grad * step
            else:
                v = wi - grad * step
                thr = l1 * step
                if v > thr:
                    delta = v - thr - wi
                elif v < -thr:
                    delta = v + thr - wi
                else:
                    delta = -wi
            if delta != 0.0:
                w[i] = wi + delta
                for k in range(start, end):
                    z[indices[k]] += delta * data[k]
            # an empty column still costs one unit, so the budget always ends the loop
            touched += end - start if end > start else 1
            iters += 1
            if has_c:
                pos += 1
                if pos >= d:
                    pos = 0
                    grad = 0.0
                    for j in range(n):
                        if weighted:
                            grad += sp[j] * loss_deriv(loss, z[j], b[j])
                        else:
                            grad += loss_deriv(loss, z[j], b[j])
                    delta = -grad * inv_n / intercept_lipschitz
                    if delta != 0.0:
                        w[d] += delta
                        for j in range(n):
                            z[j] += delta
                    touched += n
    if has_c:
        since[0] = pos
    return iters, touched


def dual_rcd(const double[::1] data, const int[::1] indices, const int[::1] indptr,
             const double[::1] b, double[::1] alpha, double[::1] w,
             const double[::1] curvature, const double[::1] fixed_step,
             double l2, int loss, bint newton,
             int mode, const double[::1] prob, const int[::1] alias,
             int[::1] perm, long long[::1] perm_pos,
             uint64_t[::1] state, long long budget, const double[::1] weight=None):
    """Dual RCD (Face-Off Algorithm 2) with w = A^T alpha / (l2 n) kept in step.

    ``curvature[j] = v_j / (l2 n)`` with v_j = ||a_j||^2 (eq. 7). With
    ``newton`` the step is the exact argmax of Algorithm 2 (closed form for
    squared and smooth hinge, safeguarded 1-D Newton for logistic). Otherwise it
    is the Section 7 fixed step, with the paper's sign slip corrected and the
    Quartz scaling by 1/q_j (Qu, Richtarik & Zhang 2015, Algorithm 1):
    alpha_j += fixed_step[j] * (-phi_j'(a_j^T w) - alpha_j), where
    fixed_step[j] = theta / q_j and theta = min_l q_l l2 n / (beta v_l + l2 n).
    Sampling arguments as in :func:`primal_rcd`.

    ``weight`` (n, optional): example weights s, each loss term s_j phi_j; then
    w = A^T (s alpha) / (l2 n), and in alpha_j the dual is, up to the factor s_j / n, the
    unweighted one with the curvature s_j v_j / (l2 n): the caller passes that
    ``curvature`` (the exact step; the fixed step is not defined for weights).
    """
    cdef Py_ssize_t n = alpha.shape[0]
    cdef bint weighted = weight is not None
    cdef double scale = 1.0 / (l2 * n)
    cdef long long touched = 0, iters = 0
    cdef int k, start, end
    cdef Py_ssize_t j
    cdef double zj, aj, anew, c
    cdef Sampler smp
    sampler_init(&smp, mode, state, prob, alias, perm, perm_pos, indptr, data, indices)
    check_length(n, smp.m, "alpha")
    check_length(b.shape[0], n, "b")
    check_length(curvature.shape[0], n, "curvature")
    check_length(fixed_step.shape[0], n, "fixed_step")
    if weighted:
        check_length(weight.shape[0], n, "weight")
    cdef const double* dp = &data[0] if data.shape[0] > 0 else NULL
    cdef const int* ip = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const double* wp = &w[0] if w.shape[0] > 0 else NULL
    with nogil:
        while touched < budget:
            j = sampler_next(&smp)
            if smp.ahead >= 0:
                pd_prefetch(&alpha[smp.ahead])
                pd_prefetch(&b[smp.ahead])
                pd_prefetch(&curvature[smp.ahead])
                pd_prefetch(&fixed_step[smp.ahead])
            start = indptr[j]
            end = indptr[j + 1]
            zj = sparse_dot4(dp, ip, start, end, wp)
            aj = alpha[j]
            if newton:
                anew = dual_step_exact(loss, aj, b[j], zj, curvature[j])
            else:
                anew = aj + fixed_step[j] * (-loss_deriv(loss, zj, b[j]) - aj)
            if anew != aj:
                alpha[j] = anew
                c = (anew - aj) * scale
                if weighted:
                    c = c * weight[j]
                for k in range(start, end):
                    w[indices[k]] += c * data[k]
            touched += end - start if end > start else 1
            iters += 1
    return iters, touched
