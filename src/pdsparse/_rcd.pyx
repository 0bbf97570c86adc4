# cython: language_level=3
"""Randomized coordinate descent kernels of Csiba & Richtarik, *Coordinate Descent
Face-Off: Primal or Dual?* (JMLR long version): Algorithm 1 (primal RCD, NSync)
over the CSC matrix and Algorithm 2 (dual RCD, Quartz) over the CSR matrix,
serial sampling (ESO eq. 7), uniform or importance sampling (eq. 14).

Each call advances the state in place until ``budget`` nonzeros of A have been
touched (one "epoch" is nnz(A) nonzeros, the paper's pass over the data) and
returns ``(iterations, nonzeros_touched)``. The loops hold no Python objects
and run without the GIL; the random state lives in a caller-owned uint64[4]
array, so chunked calls reproduce one long call exactly.
"""

from libc.stdint cimport uint64_t

from pdsparse._losses cimport dual_step_exact, loss_deriv
from pdsparse._sampling cimport alias_draw, next_below, next_double

cdef extern from *:
    """
    #define PD_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    """
    void PD_PREFETCH(const void* p) noexcept nogil

# Coordinates are drawn ahead by a second copy of the random stream, in three stages
# LOOKAHEAD iterations apart: the draw (prefetching the alias table entry), the
# resolved coordinate (prefetching its row or column pointer), and the entries of
# that row or column. Random order otherwise stalls on memory once A outgrows the
# cache. The copy only prefetches; the coordinates used come from the caller's stream,
# so results are bit-identical with and without it.
DEF LOOKAHEAD = 4
DEF RING = 16  # power of two > 3 * LOOKAHEAD
DEF PREFETCH_MAX = 128  # entries of a row or column prefetched ahead (16 cache lines of data)


cdef struct Lookahead:
    uint64_t st[4]
    Py_ssize_t raw[RING]
    double u[RING]
    Py_ssize_t coord[RING]


cdef inline Py_ssize_t draw(uint64_t* st, bint use_alias, const double* pr, const int* al,
                            Py_ssize_t m) noexcept nogil:
    if use_alias:
        return alias_draw(st, pr, al, m)
    return next_below(st, m)


cdef inline void stage_draw(Lookahead* la, long long t, bint use_alias, const double* pr,
                            const int* al, Py_ssize_t m) noexcept nogil:
    # the same two numbers, in the same order, as alias_draw / next_below consume
    cdef int s = t & (RING - 1)
    la.raw[s] = next_below(la.st, m)
    if use_alias:
        la.u[s] = next_double(la.st)
        PD_PREFETCH(&pr[la.raw[s]])
        PD_PREFETCH(&al[la.raw[s]])


cdef inline void stage_resolve(Lookahead* la, long long t, bint use_alias, const double* pr,
                               const int* al, const int* indptr) noexcept nogil:
    cdef int s = t & (RING - 1)
    cdef Py_ssize_t k = la.raw[s]
    if use_alias and not (la.u[s] < pr[k]):
        k = al[k]
    la.coord[s] = k
    PD_PREFETCH(&indptr[k])


cdef inline Py_ssize_t stage_entries(Lookahead* la, long long t, const int* indptr,
                                     const double* data, const int* indices) noexcept nogil:
    cdef Py_ssize_t c = la.coord[t & (RING - 1)]
    cdef int start = indptr[c]
    cdef int stop = indptr[c + 1]
    cdef int k
    # whole short rows; a long row's tail is left to the hardware's stream prefetcher
    if stop > start + PREFETCH_MAX:
        stop = start + PREFETCH_MAX
    for k in range(start, stop, 8):
        PD_PREFETCH(&data[k])
    for k in range(start, stop, 16):
        PD_PREFETCH(&indices[k])
    return c


cdef inline void lookahead_start(Lookahead* la, const uint64_t* st, bint use_alias,
                                 const double* pr, const int* al, Py_ssize_t m,
                                 const int* indptr) noexcept nogil:
    cdef int u
    for u in range(4):
        la.st[u] = st[u]
    for u in range(3 * LOOKAHEAD):
        stage_draw(la, u, use_alias, pr, al, m)
    for u in range(2 * LOOKAHEAD):
        stage_resolve(la, u, use_alias, pr, al, indptr)


cdef inline Py_ssize_t lookahead_step(Lookahead* la, long long t, bint use_alias,
                                      const double* pr, const int* al, Py_ssize_t m,
                                      const int* indptr, const double* data,
                                      const int* indices) noexcept nogil:
    """Advance the three stages at iteration t; return the coordinate of iteration t + L."""
    stage_draw(la, t + 3 * LOOKAHEAD, use_alias, pr, al, m)
    stage_resolve(la, t + 2 * LOOKAHEAD, use_alias, pr, al, indptr)
    return stage_entries(la, t + LOOKAHEAD, indptr, data, indices)


def primal_rcd(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const double[::1] b, double[::1] w, double[::1] z,
               const double[::1] lipschitz, double l2, double l1, int loss,
               const double[::1] prob, const int[::1] alias, bint use_alias,
               uint64_t[::1] state, long long budget):
    """Primal RCD (Face-Off Algorithm 1) on P(w) = 1/n sum phi_j(a_j^T w) + l2/2 ||w||^2 + l1 ||w||_1.

    Parameters are the CSC arrays of A (n x d), labels ``b``, the iterate ``w``
    and the maintained margins ``z = A w`` (both updated in place), and
    ``lipschitz[i] = beta u_i / n + l2`` with u_i = ||A_{:,i}||^2 (eq. 7), so that
    the update of coordinate i is Delta_i = -nabla_i P(w) / lipschitz[i], exactly
    the printed step -n / (beta u_i + lambda n) * nabla_i P(w). With ``l1 > 0``
    the step is the proximal (soft-threshold) one of Richtarik & Takac (2014),
    which reduces to the former when l1 = 0.
    """
    cdef Py_ssize_t d = w.shape[0]
    cdef double inv_n = 1.0 / z.shape[0]
    cdef long long touched = 0, iters = 0
    cdef int k, start, end
    cdef Py_ssize_t i, ia
    cdef double grad, step, wi, v, thr, delta
    cdef uint64_t* st = &state[0]
    cdef const double* pr = NULL
    cdef const int* al = NULL
    cdef Lookahead la
    if use_alias:
        pr = &prob[0]
        al = &alias[0]
    with nogil:
        lookahead_start(&la, st, use_alias, pr, al, d, &indptr[0])
        while touched < budget:
            ia = lookahead_step(&la, iters, use_alias, pr, al, d, &indptr[0], &data[0],
                                &indices[0])
            PD_PREFETCH(&w[ia])
            PD_PREFETCH(&lipschitz[ia])
            i = draw(st, use_alias, pr, al, d)
            start = indptr[i]
            end = indptr[i + 1]
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
    return iters, touched


def dual_rcd(const double[::1] data, const int[::1] indices, const int[::1] indptr,
             const double[::1] b, double[::1] alpha, double[::1] w,
             const double[::1] curvature, const double[::1] fixed_step,
             double l2, int loss, bint newton,
             const double[::1] prob, const int[::1] alias, bint use_alias,
             uint64_t[::1] state, long long budget):
    """Dual RCD (Face-Off Algorithm 2) with w = A^T alpha / (l2 n) kept in step.

    ``curvature[j] = v_j / (l2 n)`` with v_j = ||a_j||^2 (eq. 7). With
    ``newton`` the step is the exact argmax of Algorithm 2 (closed form for
    squared and smooth hinge, safeguarded 1-D Newton for logistic). Otherwise it
    is the Section 7 fixed step, with the paper's sign slip corrected and the
    Quartz scaling by 1/q_j (Qu, Richtarik & Zhang 2015, Algorithm 1):
    alpha_j += fixed_step[j] * (-phi_j'(a_j^T w) - alpha_j), where
    fixed_step[j] = theta / q_j and theta = min_l q_l l2 n / (beta v_l + l2 n).
    """
    cdef Py_ssize_t n = alpha.shape[0]
    cdef double scale = 1.0 / (l2 * n)
    cdef long long touched = 0, iters = 0
    cdef int k, start, end
    cdef Py_ssize_t j, ja
    cdef double zj, aj, anew, c
    cdef uint64_t* st = &state[0]
    cdef const double* pr = NULL
    cdef const int* al = NULL
    cdef Lookahead la
    if use_alias:
        pr = &prob[0]
        al = &alias[0]
    with nogil:
        lookahead_start(&la, st, use_alias, pr, al, n, &indptr[0])
        while touched < budget:
            ja = lookahead_step(&la, iters, use_alias, pr, al, n, &indptr[0], &data[0],
                                &indices[0])
            PD_PREFETCH(&alpha[ja])
            PD_PREFETCH(&b[ja])
            PD_PREFETCH(&curvature[ja])
            PD_PREFETCH(&fixed_step[ja])
            j = draw(st, use_alias, pr, al, n)
            start = indptr[j]
            end = indptr[j + 1]
            zj = 0.0
            for k in range(start, end):
                zj += data[k] * w[indices[k]]
            aj = alpha[j]
            if newton:
                anew = dual_step_exact(loss, aj, b[j], zj, curvature[j])
            else:
                anew = aj + fixed_step[j] * (-loss_deriv(loss, zj, b[j]) - aj)
            if anew != aj:
                alpha[j] = anew
                c = (anew - aj) * scale
                for k in range(start, end):
                    w[indices[k]] += c * data[k]
            touched += end - start if end > start else 1
            iters += 1
    return iters, touched
