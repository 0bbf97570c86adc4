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
long call exactly.
"""

from libc.stdint cimport uint64_t

from pdsparse._losses cimport LOGISTIC, dual_step_exact, loss_deriv, pd_logistic_dot
from pdsparse._sampling cimport alias_draw, next_below, next_double, permutation_next

cdef extern from *:
    """
    #define PD_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    """
    void PD_PREFETCH(const void* p) noexcept nogil

cdef enum:
    UNIFORM = 0
    ALIAS = 1
    PERMUTATION = 2


cdef struct Sampler:
    int mode
    Py_ssize_t m
    uint64_t* st
    const double* prob
    const int* alias
    int* perm
    long long* pos


cdef inline Sampler make_sampler(int mode, Py_ssize_t m, uint64_t[::1] state,
                                 const double[::1] prob, const int[::1] alias,
                                 int[::1] perm, long long[::1] pos):
    cdef Sampler s
    s.mode = mode
    s.m = m
    s.st = &state[0]
    s.prob = &prob[0] if mode == ALIAS else NULL
    s.alias = &alias[0] if mode == ALIAS else NULL
    s.perm = &perm[0] if mode == PERMUTATION else NULL
    s.pos = &pos[0] if mode == PERMUTATION else NULL
    return s


cdef inline Py_ssize_t sample(Sampler* s) noexcept nogil:
    if s.mode == ALIAS:
        return alias_draw(s.st, s.prob, s.alias, s.m)
    if s.mode == PERMUTATION:
        return permutation_next(s.perm, s.pos, s.m, s.st)
    return next_below(s.st, s.m)


# Coordinates are drawn ahead by a second copy of the random stream, in three stages
# LOOKAHEAD iterations apart: the draw (prefetching the alias table entry), the
# resolved coordinate (prefetching its row or column pointer), and the entries of
# that row or column. Random order otherwise stalls on memory once A outgrows the
# cache. The copy only prefetches; the coordinates used come from the caller's
# stream, so results are bit-identical with and without it. A permutation order
# needs no copy: its future coordinates are already in the array, up to the epoch's end.
DEF LOOKAHEAD = 4
DEF RING = 16  # power of two > 3 * LOOKAHEAD
DEF PREFETCH_MAX = 128  # entries of a row or column prefetched ahead (16 cache lines of data)


cdef struct Lookahead:
    uint64_t st[4]
    Py_ssize_t raw[RING]
    double u[RING]
    Py_ssize_t coord[RING]


cdef inline void stage_draw(Lookahead* la, const Sampler* s, long long t) noexcept nogil:
    # the same numbers, in the same order, as alias_draw / next_below consume
    cdef int r = t & (RING - 1)
    la.raw[r] = next_below(la.st, s.m)
    if s.mode == ALIAS:
        la.u[r] = next_double(la.st)
        PD_PREFETCH(&s.prob[la.raw[r]])
        PD_PREFETCH(&s.alias[la.raw[r]])


cdef inline void stage_resolve(Lookahead* la, const Sampler* s, long long t,
                               const int* indptr) noexcept nogil:
    cdef int r = t & (RING - 1)
    cdef Py_ssize_t k = la.raw[r]
    if s.mode == ALIAS and not (la.u[r] < s.prob[k]):
        k = s.alias[k]
    la.coord[r] = k
    PD_PREFETCH(&indptr[k])


cdef inline void prefetch_entries(Py_ssize_t c, const int* indptr, const double* data,
                                  const int* indices) noexcept nogil:
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


cdef inline void lookahead_start(Lookahead* la, const Sampler* s,
                                 const int* indptr) noexcept nogil:
    cdef int u
    if s.mode == PERMUTATION:
        return
    for u in range(4):
        la.st[u] = s.st[u]
    for u in range(3 * LOOKAHEAD):
        stage_draw(la, s, u)
    for u in range(2 * LOOKAHEAD):
        stage_resolve(la, s, u, indptr)


cdef inline Py_ssize_t lookahead_step(Lookahead* la, const Sampler* s, long long t,
                                      const int* indptr, const double* data,
                                      const int* indices) noexcept nogil:
    """Prefetch for iteration t + L; return its coordinate, or -1 when it is not known yet."""
    cdef Py_ssize_t c
    cdef long long p
    if s.mode == PERMUTATION:
        p = s.pos[0] + LOOKAHEAD
        if p >= s.m:
            return -1
        c = s.perm[p]
    else:
        stage_draw(la, s, t + 3 * LOOKAHEAD)
        stage_resolve(la, s, t + 2 * LOOKAHEAD, indptr)
        c = la.coord[(t + LOOKAHEAD) & (RING - 1)]
    prefetch_entries(c, indptr, data, indices)
    return c


def primal_rcd(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const double[::1] b, double[::1] w, double[::1] z,
               const double[::1] lipschitz, double l2, double l1, int loss,
               int mode, const double[::1] prob, const int[::1] alias,
               int[::1] perm, long long[::1] perm_pos,
               uint64_t[::1] state, long long budget):
    """Primal RCD (Face-Off Algorithm 1) on P(w) = 1/n sum phi_j(a_j^T w) + l2/2 ||w||^2 + l1 ||w||_1.

    Parameters are the CSC arrays of A (n x d), labels ``b``, the iterate ``w``
    and the maintained margins ``z = A w`` (both updated in place), and
    ``lipschitz[i] = beta u_i / n + l2`` with u_i = ||A_{:,i}||^2 (eq. 7), so that
    the update of coordinate i is Delta_i = -nabla_i P(w) / lipschitz[i], exactly
    the printed step -n / (beta u_i + lambda n) * nabla_i P(w). With ``l1 > 0``
    the step is the proximal (soft-threshold) one of Richtarik & Takac (2014),
    which reduces to the former when l1 = 0. ``mode`` is 0 uniform, 1 alias
    (``prob``, ``alias``), 2 permutation (``perm``, ``perm_pos``, updated in place).
    """
    cdef Py_ssize_t d = w.shape[0]
    cdef double inv_n = 1.0 / z.shape[0]
    cdef long long touched = 0, iters = 0
    cdef int k, start, end
    cdef Py_ssize_t i, ia
    cdef double grad, step, wi, v, thr, delta
    cdef Sampler smp = make_sampler(mode, d, state, prob, alias, perm, perm_pos)
    cdef Lookahead la
    with nogil:
        lookahead_start(&la, &smp, &indptr[0])
        while touched < budget:
            ia = lookahead_step(&la, &smp, iters, &indptr[0], &data[0], &indices[0])
            if ia >= 0:
                PD_PREFETCH(&w[ia])
                PD_PREFETCH(&lipschitz[ia])
            i = sample(&smp)
            start = indptr[i]
            end = indptr[i + 1]
            if loss == LOGISTIC and end > start:
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
    return iters, touched


def dual_rcd(const double[::1] data, const int[::1] indices, const int[::1] indptr,
             const double[::1] b, double[::1] alpha, double[::1] w,
             const double[::1] curvature, const double[::1] fixed_step,
             double l2, int loss, bint newton,
             int mode, const double[::1] prob, const int[::1] alias,
             int[::1] perm, long long[::1] perm_pos,
             uint64_t[::1] state, long long budget):
    """Dual RCD (Face-Off Algorithm 2) with w = A^T alpha / (l2 n) kept in step.

    ``curvature[j] = v_j / (l2 n)`` with v_j = ||a_j||^2 (eq. 7). With
    ``newton`` the step is the exact argmax of Algorithm 2 (closed form for
    squared and smooth hinge, safeguarded 1-D Newton for logistic). Otherwise it
    is the Section 7 fixed step, with the paper's sign slip corrected and the
    Quartz scaling by 1/q_j (Qu, Richtarik & Zhang 2015, Algorithm 1):
    alpha_j += fixed_step[j] * (-phi_j'(a_j^T w) - alpha_j), where
    fixed_step[j] = theta / q_j and theta = min_l q_l l2 n / (beta v_l + l2 n).
    Sampling arguments as in :func:`primal_rcd`.
    """
    cdef Py_ssize_t n = alpha.shape[0]
    cdef double scale = 1.0 / (l2 * n)
    cdef long long touched = 0, iters = 0
    cdef int k, start, end
    cdef Py_ssize_t j, ja
    cdef double zj, aj, anew, c
    cdef Sampler smp = make_sampler(mode, n, state, prob, alias, perm, perm_pos)
    cdef Lookahead la
    with nogil:
        lookahead_start(&la, &smp, &indptr[0])
        while touched < budget:
            ja = lookahead_step(&la, &smp, iters, &indptr[0], &data[0], &indices[0])
            if ja >= 0:
                PD_PREFETCH(&alpha[ja])
                PD_PREFETCH(&b[ja])
                PD_PREFETCH(&curvature[ja])
                PD_PREFETCH(&fixed_step[ja])
            j = sample(&smp)
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
