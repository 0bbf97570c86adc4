# cython: language_level=3
"""Coordinate kernels of the DGPD paper's baselines on any :class:`Lines` (sparse or dense A).

Problem (Lei, Yen, Wu, Dhillon & Ravikumar, *Doubly Greedy Primal-Dual Coordinate Descent
for Sparse Empirical Risk Minimization*, ICML 2017, eq. (1) with g = mu/2 ||x||^2 +
lambda ||x||_1, Sec. 3), in the house's (Face-Off) notation: A is n x d with rows a_j,
labels b, primal w, dual alpha,

    P(w)     = 1/n sum_j phi_j(a_j^T w) + l2/2 ||w||^2 + l1 ||w||_1,
    D(alpha) = -1/n sum_j phi_j^*(-alpha_j) - g^*(v),   v = A^T alpha / n,
    g^*(v)   = ||soft(v, l1)||^2 / (2 l2),              w(alpha) = grad g^*(v) = soft(v, l1) / l2,

(DGPD's mu is l2 and its lambda is l1; its dual y is -alpha). The three baselines of DGPD
Sec. 5, each the published method:

* :func:`primal_rcd`: proximal randomized coordinate descent on P over the columns of A
  (Richtarik & Takac 2014), the DGPD baseline "PrimalRCD";
* :func:`prox_sdca`: Prox-SDCA over the rows (Shalev-Shwartz & Zhang 2014/2016), the
  baseline "DualRCD" (DGPD cites SDCA, their JMLR 2013 paper, which is Prox-SDCA's l1 = 0
  case), for any l1 >= 0;
* :func:`spdc`: SPDC (Zhang & Xiao, arXiv 1409.3257 (2014), ICML 2015, JMLR 18 (2017)),
  Algorithm 1 with batch size 1 and its dense O(d) primal update, as published;
  :func:`spdc_lazy` and :func:`spdc_catch_up`: the same iterates on sparse rows at
  O(nnz(a_k)) a step (the lazy update of the coordinates outside a_k's support).

Every kernel reads A through ``_matrix.pxd``'s ``Lines`` (the rows or columns of a CSR/CSC
matrix, or of one dense C-order array through BLAS), so one code path serves both storages.
As in ``_rcd.pyx``, a call advances the caller-owned state in place until ``budget`` stored
entries of A have been touched (a line with no entry costs one unit, so that the budget
always ends the loop; SPDC's dense primal update costs d) and returns
``(iterations, touched)``; the random state, the alias table and the permutation are
caller-owned too, so chunked calls reproduce one long call exactly. The hot loops hold no
Python object and run without the GIL. The line arguments are the eight of
:meth:`pdsparse.problem.Problem.lines`: ``layout, data, indices, indptr, count, length,
step, inc``.
"""

import numpy as np

from libc.math cimport ceil, fabs, log, log1p, pow
from libc.stdint cimport uint64_t

from pdsparse._losses cimport LOGISTIC, dual_step_exact, loss_deriv, pd_logistic_dot
from pdsparse.solvers._matrix cimport (
    DENSE,
    SPARSE,
    Lines,
    line_axpy,
    line_dot,
    line_nnz,
    lines_init,
    sampler_init_lines,
)
from pdsparse.solvers._sampling cimport Sampler, pd_prefetch, sampler_next


cdef enum:
    DENSE_PREFETCH_MAX = 8192  # entries of a contiguous dense line prefetched ahead (64 KiB)
    DENSE_PREFETCH_STRIDED = 64  # entries of a strided dense line prefetched ahead


cdef inline int check_length(Py_ssize_t got, Py_ssize_t want, str what) except -1:
    if got != want:
        raise ValueError(f"{what} has {got} entries, expected {want}")
    return 0


cdef inline int check_spdc(Py_ssize_t n, Py_ssize_t d, Py_ssize_t n_alpha, Py_ssize_t n_b,
                           Py_ssize_t d_v, Py_ssize_t d_xbar, double tau, double sigma,
                           double theta, double l2, double l1) except -1:
    """The arguments SPDC's dense and lazy kernels share: lengths and Theorem 1's ranges."""
    check_length(n_alpha, n, "alpha")
    check_length(n_b, n, "b")
    check_length(d_v, d, "v")
    check_length(d_xbar, d, "xbar")
    if not (tau > 0.0 and sigma > 0.0 and 0.0 <= theta <= 1.0 and l2 > 0.0 and l1 >= 0.0):
        raise ValueError(f"SPDC needs tau, sigma, l2 > 0, l1 >= 0 and theta in [0, 1], got "
                         f"tau={tau}, sigma={sigma}, theta={theta}, l2={l2}, l1={l1}")
    return 0


cdef inline double soft(double x, double t) noexcept nogil:
    """The soft threshold sign(x) max(|x| - t, 0) = x - clip(x, -t, t), t >= 0.

    Branch-free (the compiler emits min/max, and vectorizes SPDC's dense loop): the signs
    of v in Prox-SDCA's rows and of SPDC's x are unpredictable. Bit for bit the branchy
    x - t (x > t), x + t (x < -t), 0 (otherwise): x - (-t) is x + t, and x - x is +0.
    """
    cdef double c = x if x < t else t
    c = c if c > -t else -t
    return x - c


cdef inline void prefetch_line(const Lines* L, Py_ssize_t k) noexcept nogil:
    """Prefetch dense line k (the sampler prefetches the entries of sparse lines itself).

    A random dense line starts a new hardware-prefetch stream (contiguous rows) or touches
    a new page at every entry (the strided columns of a C-order array), so the kernels
    prefetch the whole line, up to DENSE_PREFETCH_MAX entries, LOOKAHEAD iterations ahead.
    """
    cdef Py_ssize_t p, stride, m
    cdef const double* start
    if L.layout != DENSE:
        return
    start = L.data + k * L.step
    m = min(L.length, DENSE_PREFETCH_MAX)
    if L.inc == 1:  # contiguous: one prefetch per cache line of 8 doubles
        for p in range(0, m, 8):
            pd_prefetch(start + p)
    else:  # strided: every entry is in its own cache line (and page): the first ones only
        stride = L.inc
        for p in range(min(m, DENSE_PREFETCH_STRIDED)):
            pd_prefetch(start + p * stride)


cdef inline double line_dot_soft(const Lines* L, Py_ssize_t k, const double* v,
                                 double thr) noexcept nogil:
    """sum_p a_kp soft(v_p, thr) over the stored entries of line k, in storage order.

    Prox-SDCA's margin <a_k, w> with w = soft(v, l1) / l2 without building w: the threshold
    is applied inside the dot product, at the line's positions only.
    """
    cdef Py_ssize_t p, start, end, stride
    cdef const double* a
    cdef double acc = 0.0
    if L.layout == SPARSE:
        start = L.indptr[k]
        end = L.indptr[k + 1]
        for p in range(start, end):
            acc += L.data[p] * soft(v[L.indices[p]], thr)
        return acc
    a = L.data + k * L.step
    stride = L.inc
    for p in range(L.length):
        acc += a[p * stride] * soft(v[p], thr)
    return acc


cdef inline double column_grad(const Lines* L, Py_ssize_t i, int loss, const double* z,
                               const double* b) noexcept nogil:
    """sum_j phi_j'(z_j) A_ji over the stored entries of column i (unscaled).

    Sparse columns: the operations of ``_rcd.primal_rcd`` in the same order (the 4-lane
    logistic dot of ``_fastexp.h``, else a sequential sum), so the two kernels give the same
    bits on the same CSC matrix. Dense columns: a sequential sum over the strided column of
    a C-order array; four interleaved partial sums over a contiguous one.
    """
    cdef Py_ssize_t p, start, end, stride, m
    cdef const double* a
    cdef double acc = 0.0, acc0 = 0.0, acc1 = 0.0, acc2 = 0.0, acc3 = 0.0
    if L.layout == SPARSE:
        start = L.indptr[i]
        end = L.indptr[i + 1]
        if loss == LOGISTIC and end > start:
            return pd_logistic_dot(&L.data[start], &L.indices[start], z, b, end - start)
        for p in range(start, end):
            acc += loss_deriv(loss, z[L.indices[p]], b[L.indices[p]]) * L.data[p]
        return acc
    a = L.data + i * L.step
    stride = L.inc
    m = L.length
    p = 0
    if stride == 1:
        # a contiguous column (a column-major copy): four partial sums, not one latency chain
        while p + 4 <= m:
            acc0 += loss_deriv(loss, z[p], b[p]) * a[p]
            acc1 += loss_deriv(loss, z[p + 1], b[p + 1]) * a[p + 1]
            acc2 += loss_deriv(loss, z[p + 2], b[p + 2]) * a[p + 2]
            acc3 += loss_deriv(loss, z[p + 3], b[p + 3]) * a[p + 3]
            p += 4
        acc = (acc0 + acc1) + (acc2 + acc3)
    while p < m:
        acc += loss_deriv(loss, z[p], b[p]) * a[p * stride]
        p += 1
    return acc


# ------------------------------------------------------------------------------------------
# PrimalRCD: proximal randomized coordinate descent over the columns
# ------------------------------------------------------------------------------------------

def primal_rcd(int layout, const double[::1] data, const int[::1] indices,
               const int[::1] indptr, Py_ssize_t count, Py_ssize_t length, Py_ssize_t step,
               Py_ssize_t inc,
               const double[::1] b, double[::1] w, double[::1] z,
               const double[::1] lipschitz, double l2, double l1, int loss,
               int mode, const double[::1] prob, const int[::1] alias,
               int[::1] perm, long long[::1] perm_pos,
               uint64_t[::1] state, long long budget):
    """Proximal randomized coordinate descent on P over the columns A^i of any ``Lines``.

    Richtarik & Takac, *Iteration complexity of randomized block-coordinate descent methods
    for minimizing a composite function*, Math. Prog. 144 (2014): UCDC, their uniform
    coordinate descent for composite functions, with blocks of size one (importance and
    permutation orders are offered too, as in Face-Off; R&T analyse the composite case
    under uniform sampling). With f(w) = 1/n sum_j phi_j(a_j^T w) +
    l2/2 ||w||^2 and Psi = l1 ||.||_1, the coordinate Lipschitz constants are
    ``lipschitz[i] = L_i = beta ||A^i||^2 / n + l2`` (phi_j (beta = 1/gamma)-smooth) and
    the step on coordinate i is

        w_i <- argmin_t { grad_i f(w) (t - w_i) + L_i/2 (t - w_i)^2 + l1 |t| }
             = soft(w_i - grad_i f(w) / L_i, l1 / L_i),

    grad_i f(w) = 1/n sum_j phi_j'(z_j) A_ji + l2 w_i with z = A w maintained (updated in
    place with ``w``). The arithmetic is that of ``_rcd.primal_rcd`` (Face-Off Algorithm 1
    with the prox step), so on the same CSC matrix both give the same bits; this kernel also
    takes the strided columns of a dense C-order matrix. ``mode`` 0 uniform, 1 alias
    (``prob``, ``alias``), 2 permutation (``perm``, ``perm_pos``, updated in place).
    Returns ``(iterations, entries touched)``; a column costs its stored entries (n dense).
    """
    cdef Lines L
    cdef Sampler smp
    cdef Py_ssize_t d, n, i
    cdef long long touched = 0, iters = 0, nnz
    cdef double inv_n, grad, h, wi, v, thr, delta
    lines_init(&L, layout, data, indices, indptr, count, length, step, inc)
    d = L.count
    n = z.shape[0]
    check_length(w.shape[0], d, "w")
    check_length(lipschitz.shape[0], d, "lipschitz")
    check_length(b.shape[0], n, "b")
    if L.layout == DENSE:
        check_length(L.length, n, "a column of A")
    sampler_init_lines(&smp, mode, state, prob, alias, perm, perm_pos, &L)
    inv_n = 1.0 / n
    with nogil:
        while touched < budget:
            i = sampler_next(&smp)
            if smp.ahead >= 0:
                pd_prefetch(&w[smp.ahead])
                pd_prefetch(&lipschitz[smp.ahead])
                prefetch_line(&L, smp.ahead)
            grad = column_grad(&L, i, loss, &z[0], &b[0])
            wi = w[i]
            grad = grad * inv_n + l2 * wi
            h = 1.0 / lipschitz[i]
            if l1 == 0.0:
                delta = -grad * h
            else:
                v = wi - grad * h
                thr = l1 * h
                if v > thr:
                    delta = v - thr - wi
                elif v < -thr:
                    delta = v + thr - wi
                else:
                    delta = -wi
            if delta != 0.0:
                w[i] = wi + delta
                line_axpy(&L, i, delta, &z[0])
            nnz = line_nnz(&L, i)
            touched += nnz if nnz > 0 else 1
            iters += 1
    return iters, touched


# ------------------------------------------------------------------------------------------
# Prox-SDCA: dual coordinate ascent over the rows, w = soft(v, l1) / l2 on the fly
# ------------------------------------------------------------------------------------------

def prox_sdca(int layout, const double[::1] data, const int[::1] indices,
              const int[::1] indptr, Py_ssize_t count, Py_ssize_t length, Py_ssize_t step,
              Py_ssize_t inc,
              const double[::1] b, double[::1] alpha, double[::1] v,
              const double[::1] curvature, double l2, double l1, int loss,
              int mode, const double[::1] prob, const int[::1] alias,
              int[::1] perm, long long[::1] perm_pos,
              uint64_t[::1] state, long long budget):
    """Prox-SDCA on D over the rows a_j of any ``Lines``, for l1 >= 0.

    Shalev-Shwartz & Zhang, *Accelerated proximal stochastic dual coordinate ascent for
    regularized loss minimization*, Math. Prog. 155 (2016) (ICML 2014; arXiv 1309.2375),
    procedure Prox-SDCA with Option I, the exact maximization of the dual lower bound;
    with l1 = 0 it is SDCA of their JMLR 14 (2013) paper (*Stochastic dual coordinate
    ascent methods for regularized loss minimization*) with its exact coordinate
    maximization. Their
    lambda g(w) is ours with lambda = l2 and g(w) = ||w||^2/2 + (l1/l2) ||w||_1 (1-strongly
    convex), so their v = A^T alpha / (lambda n) and w = grad g^*(v) is our soft(v, l1)/l2
    with ``v = A^T alpha / n`` kept in step (updated in place with ``alpha``).

    Step on row j: z_j = <a_j, w> = <a_j, soft(v, l1)> / l2, the threshold applied inside
    the dot product at the row's positions (no dense w is rebuilt), then

        alpha_j <- argmax_a { -phi_j^*(-a) - (a - alpha_j) z_j - q_j (a - alpha_j)^2 / 2 },

    ``curvature[j] = q_j = ||a_j||^2 / (l2 n)`` (``_losses.dual_step_exact``: closed form
    for squared loss and smooth hinge, safeguarded Newton for logistic), and
    v += (alpha_j^new - alpha_j) a_j / n. The model is the quadratic upper bound of g^*
    with constant 1/l2, valid everywhere although g^*(v) = ||soft(v, l1)||^2 / (2 l2) is
    smooth only piecewise: soft(., l1) is 1-Lipschitz, so grad g^* is (1/l2)-Lipschitz and
    g^* is (1/l2)-smooth; every step therefore increases D (a minorant is maximized), as
    Prox-SDCA's analysis requires. With l1 = 0 this is ``_rcd.dual_rcd`` with the Newton
    step (w = v / l2), equal to rounding. Sampling arguments as in :func:`primal_rcd`.
    A row costs its stored entries (d dense).
    """
    cdef Lines L
    cdef Sampler smp
    cdef Py_ssize_t n, d, j, p
    cdef long long touched = 0, iters = 0, nnz
    cdef double inv_n, inv_l2, zj, aj, anew
    cdef double[::1] work = np.empty(v.shape[0])  # dense rows with l1 > 0: soft(v, l1)
    lines_init(&L, layout, data, indices, indptr, count, length, step, inc)
    n = L.count
    d = v.shape[0]
    check_length(alpha.shape[0], n, "alpha")
    check_length(b.shape[0], n, "b")
    check_length(curvature.shape[0], n, "curvature")
    if L.layout == DENSE:
        check_length(L.length, d, "a row of A")
    if not l2 > 0.0 or not l1 >= 0.0:
        raise ValueError(f"Prox-SDCA needs l2 > 0 and l1 >= 0, got {l2}, {l1}")
    sampler_init_lines(&smp, mode, state, prob, alias, perm, perm_pos, &L)
    inv_n = 1.0 / n
    inv_l2 = 1.0 / l2
    with nogil:
        while touched < budget:
            j = sampler_next(&smp)
            if smp.ahead >= 0:
                pd_prefetch(&alpha[smp.ahead])
                pd_prefetch(&b[smp.ahead])
                pd_prefetch(&curvature[smp.ahead])
                prefetch_line(&L, smp.ahead)
            if l1 == 0.0:
                zj = line_dot(&L, j, &v[0]) * inv_l2
            elif L.layout == SPARSE:
                zj = line_dot_soft(&L, j, &v[0], l1) * inv_l2
            else:
                # a dense row meets all of v: threshold it in one vectorized pass (v is
                # cache-resident), then BLAS ddot; faster than the fused scalar loop
                for p in range(d):
                    work[p] = soft(v[p], l1)
                zj = line_dot(&L, j, &work[0]) * inv_l2
            aj = alpha[j]
            anew = dual_step_exact(loss, aj, b[j], zj, curvature[j])
            if anew != aj:
                alpha[j] = anew
                line_axpy(&L, j, (anew - aj) * inv_n, &v[0])
            nnz = line_nnz(&L, j)
            touched += nnz if nnz > 0 else 1
            iters += 1
    return iters, touched


# ------------------------------------------------------------------------------------------
# SPDC: stochastic primal-dual coordinate method, batch size 1, dense primal update
# ------------------------------------------------------------------------------------------

def spdc(int layout, const double[::1] data, const int[::1] indices,
         const int[::1] indptr, Py_ssize_t count, Py_ssize_t length, Py_ssize_t step,
         Py_ssize_t inc,
         const double[::1] b, double[::1] alpha, double[::1] v, double[::1] x,
         double[::1] xbar, double[::1] row, double tau, double sigma, double theta,
         double l2, double l1, int loss, uint64_t[::1] state, long long budget):
    """SPDC (Zhang & Xiao, ICML 2015 / JMLR 18 (2017)), Algorithm 1 with batch size m = 1.

    Saddle problem min_x max_y g(x) + 1/n sum_k (y_k <a_k, x> - phi_k^*(y_k)), g = l2/2
    ||x||^2 + l1 ||x||_1, in the house's variables alpha = -y and ``v = A^T alpha / n``
    (the paper's u = A^T y / n = -v). One iteration, k uniform on the n rows:

    1. y_k^+ = argmax_beta { beta <a_k, xbar> - phi_k^*(beta) - (beta - y_k)^2 / (2 sigma) },
       i.e. alpha_k^+ = argmax_a { -phi_k^*(-a) - (a - alpha_k) <a_k, xbar>
       - (a - alpha_k)^2 / (2 sigma) } = ``dual_step_exact(.., z = <a_k, xbar>, q = 1/sigma)``;
    2. x^+ = argmin_x { g(x) + <u + (y_k^+ - y_k) a_k, x> + ||x - x^t||^2 / (2 tau) }
           = soft(x^t + tau r, tau l1) / (1 + tau l2),  r = v + (alpha_k^+ - alpha_k) a_k
       (computed as a product with 1 / (1 + tau l2): a division per coordinate would
       bound the dense loop),
       the paper's x-update with batch m = 1: its (1/m) sum_{k in K} (y_k^+ - y_k) a_k has no
       1/n, because u + (y_k^+ - y_k) a_k is an unbiased estimate of A^T y^+ / n, where
       y^+ is the full dual update (E_k[(y_k^+ - y_k) a_k] = 1/n sum_i (y_i^+ - y_i) a_i);
       dense, every one of the d coordinates, as published (the O(d) cost DGPD criticizes);
    3. u <- u + (y_k^+ - y_k) a_k / n, i.e. v <- v + (alpha_k^+ - alpha_k) a_k / n;
    4. xbar <- x^+ + theta (x^+ - x^t).

    ``tau``, ``sigma``, ``theta`` are those of the paper's Theorem 1 with batch size m = 1,
    for phi_k (1/gamma)-smooth, g mu-strongly convex (mu = l2) and R = max_k ||a_k||:
    tau = sqrt(gamma / (n mu)) / (2R), sigma = sqrt(n mu / gamma) / (2R),
    theta = 1 - 1 / (n + R sqrt(n / (mu gamma))) (set by
    :func:`pdsparse.solvers.erm.spdc_parameters`). ``x``, ``xbar``, ``alpha``, ``v`` are
    updated in place; ``row`` is a caller-owned d-vector of zeros that the kernel uses to
    scatter a sparse row for step 2 and leaves zero again (unused for dense data, where the
    row is read in place). Sampling is uniform, as published. An iteration costs
    d + nnz(a_k) entries.
    """
    cdef Lines L
    cdef Sampler smp
    cdef Py_ssize_t n, d, k, j, p, start = 0, end = 0, rinc
    cdef long long touched = 0, iters = 0
    cdef double inv_n, q, tl, shrink, zk, ak, anew, delta, r, t, xn
    cdef const double* rowp
    cdef double[::1] no_prob = None
    cdef int[::1] no_int = None
    cdef long long[::1] no_pos = None
    lines_init(&L, layout, data, indices, indptr, count, length, step, inc)
    n = L.count
    d = x.shape[0]
    check_spdc(n, d, alpha.shape[0], b.shape[0], v.shape[0], xbar.shape[0], tau, sigma,
               theta, l2, l1)
    if L.layout == DENSE:
        check_length(L.length, d, "a row of A")
    else:
        check_length(row.shape[0], d, "row")
    sampler_init_lines(&smp, 0, state, no_prob, no_int, no_int, no_pos, &L)
    inv_n = 1.0 / n
    q = 1.0 / sigma
    tl = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    with nogil:
        while touched < budget:
            k = sampler_next(&smp)
            if smp.ahead >= 0:
                pd_prefetch(&alpha[smp.ahead])
                pd_prefetch(&b[smp.ahead])
                prefetch_line(&L, smp.ahead)
            # 1. the dual coordinate at the extrapolated primal point
            zk = line_dot(&L, k, &xbar[0])
            ak = alpha[k]
            anew = dual_step_exact(loss, ak, b[k], zk, q)
            delta = anew - ak
            alpha[k] = anew
            # 2. the dense primal prox step and 4. the extrapolation
            if L.layout == DENSE:
                rowp = L.data + k * L.step
                rinc = L.inc
            else:
                start = L.indptr[k]
                end = L.indptr[k + 1]
                for p in range(start, end):
                    row[L.indices[p]] = L.data[p]
                rowp = &row[0]
                rinc = 1
            for j in range(d):
                r = v[j] + delta * rowp[j * rinc]
                t = x[j] + tau * r
                xn = soft(t, tl) * shrink
                xbar[j] = xn + theta * (xn - x[j])
                x[j] = xn
            if L.layout == SPARSE:
                for p in range(start, end):
                    row[L.indices[p]] = 0.0
            # 3. u <- u + (y_k^+ - y_k) a_k / n
            if delta != 0.0:
                line_axpy(&L, k, delta * inv_n, &v[0])
            touched += d + line_nnz(&L, k)
            iters += 1
    return iters, touched


# ---------------------------------------------------------------------------------------------
# SPDC with the lazy primal update (sparse rows)
# ---------------------------------------------------------------------------------------------

cdef inline double prox_power(double x, double p, double s, double i) noexcept nogil:
    """x_i = p + s^i (x - p): i steps of the affine map x -> p + s (x - p)."""
    return p + pow(s, i) * (x - p)


cdef inline double prox_exit(double x, double p, double s, double ls, double bound,
                             int up) noexcept nogil:
    """The first i >= 1 at which x_i = p + s^i (x - p) crosses ``bound`` (x_i <= bound when
    decreasing, ``up`` = 0; x_i >= bound when increasing), p beyond the bound; ``ls`` =
    log(s) < 0. From the logarithm, then corrected by evaluating x_i (so that it agrees with
    :func:`prox_power` to the last bit): s^i <= rho = (bound - p) / (x - p) in both cases."""
    cdef double rho = (bound - p) / (x - p), i
    i = ceil(log(rho) / ls) if rho > 0.0 else 1.0
    if not i >= 1.0:
        i = 1.0
    if up:
        while i > 1.0 and prox_power(x, p, s, i - 1.0) >= bound:
            i -= 1.0
        while prox_power(x, p, s, i) < bound:
            i += 1.0
    else:
        while i > 1.0 and prox_power(x, p, s, i - 1.0) <= bound:
            i -= 1.0
        while prox_power(x, p, s, i) > bound:
            i += 1.0
    return i


cdef inline double prox_advance(double x, double c, double tl, double tl2, double s,
                                double ls, long long m) noexcept nogil:
    """m >= 0 steps of SPDC's primal update of a coordinate outside the sampled rows,
    x -> T(x) = soft(x + c, tl) s with c = tau v_j (v_j fixed while row j is not touched),
    tl = tau l1, s = 1 / (1 + tl2), tl2 = tau l2, ls = log(s), in closed form.

    T is piecewise affine, continuous, nondecreasing and an s-contraction, so its iterates
    move monotonically to its fixed point: on x + c > tl, T(x) = p+ + s (x - p+) with
    p+ = (c - tl) / tl2 (= (v_j - l1) / l2), so x_i = p+ + s^i (x - p+) while the region
    holds; on x + c < -tl the same with p- = (c + tl) / tl2; on |x + c| <= tl, T(x) = 0. A
    region whose own fixed point lies in it is never left; otherwise the exit step is
    :func:`prox_exit`'s, after which the sequence is in another region (at most three
    visits: the affine region, possibly 0, then the fixed point's). T's continuity makes a
    crossing decided one step off by rounding cost only rounding, so the result agrees with
    m applications of T to rounding (``tests/test_erm_kernels.py``). The closed forms of
    Zhang & Xiao (JMLR 2017, Sec. 5, "efficient implementation with sparse data") for the
    l2 + l1 regularizer are of this kind; the derivation here is ours.
    """
    cdef double p, bound, i
    cdef double left = <double>m
    cdef int visits = 0
    while left > 0.0:
        visits += 1
        if visits > 8:  # never seen; stepping is always right
            x = soft(x + c, tl) * s
            left -= 1.0
            continue
        if x + c > tl:
            p = (c - tl) / tl2
            bound = tl - c
            if p > bound or p == bound:  # the fixed point is here (or on the edge): stay
                return prox_power(x, p, s, left)
            i = prox_exit(x, p, s, ls, bound, 0)
        elif x + c < -tl:
            p = (c + tl) / tl2
            bound = -tl - c
            if p < bound or p == bound:
                return prox_power(x, p, s, left)
            i = prox_exit(x, p, s, ls, bound, 1)
        else:
            x = 0.0
            left -= 1.0
            if fabs(c) <= tl:  # 0 is the fixed point
                return 0.0
            continue
        if i >= left:
            return prox_power(x, p, s, left)
        x = prox_power(x, p, s, i)
        left -= i
    return x


cdef inline void catch_up(double* x, double* xbar, double c, double tl, double tl2,
                          double s, double ls, double theta, long long m) noexcept nogil:
    """Bring a coordinate m >= 1 steps forward: x^(t-1) in closed form, then the last step as
    the dense kernel takes it, and xbar^(t) = x^(t) + theta (x^(t) - x^(t-1))."""
    cdef double xp = prox_advance(x[0], c, tl, tl2, s, ls, m - 1)
    cdef double xn = soft(xp + c, tl) * s
    xbar[0] = xn + theta * (xn - xp)
    x[0] = xn


def spdc_lazy(int layout, const double[::1] data, const int[::1] indices,
              const int[::1] indptr, Py_ssize_t count, Py_ssize_t length, Py_ssize_t step,
              Py_ssize_t inc,
              const double[::1] b, double[::1] alpha, double[::1] v, double[::1] x,
              double[::1] xbar, long long[::1] last, long long[::1] clock, double tau,
              double sigma, double theta, double l2, double l1, int loss,
              uint64_t[::1] state, long long budget):
    """SPDC's iterations of :func:`spdc` on sparse rows at O(nnz(a_k)) each: the lazy
    primal update.

    Step 2 of SPDC moves every coordinate, but off the support of the sampled row a_k it is
    x_j <- soft(x_j + tau v_j, tau l1) / (1 + tau l2) with v_j fixed (v_j changes, in step
    3, only when a row holding j is drawn): k times that map is a closed form
    (:func:`prox_advance`). So coordinate j is stored as of iteration ``last[j]`` (x_j and
    xbar_j then), ``clock[0]`` is the iteration count t, and an iteration on row k first
    brings the coordinates of a_k to t (:func:`catch_up`), then takes steps 1-4 of
    :func:`spdc` on them only: the same arithmetic as the dense loop there. Zhang & Xiao
    (JMLR 18 (2017), Sec. 5) describe this implementation for sparse data. The iterates
    equal the dense kernel's to rounding (the closed form's s^m against m products;
    ``tests/test_erm_kernels.py`` compares them iterate by iterate); x and xbar of the
    current iteration are :func:`spdc_catch_up`'s, which callers run before reading them.

    ``layout`` must be sparse (a dense row has every coordinate in its support: use
    :func:`spdc`). An iteration costs 2 nnz(a_k) entries (the row read for the dot product
    and the axpy, and the nnz(a_k) coordinate updates), at least 1; the dense kernel's d +
    nnz(a_k).
    """
    cdef Lines L
    cdef Sampler smp
    cdef Py_ssize_t n, d, k, j, p, start, end
    cdef long long touched = 0, iters = 0, t, m
    cdef double inv_n, q, tl, tl2, shrink, ls, zk, ak, anew, delta, r, xo, xn
    cdef double[::1] no_prob = None
    cdef int[::1] no_int = None
    cdef long long[::1] no_pos = None
    lines_init(&L, layout, data, indices, indptr, count, length, step, inc)
    if L.layout != SPARSE:
        raise ValueError("spdc_lazy takes sparse rows (dense rows: spdc)")
    n = L.count
    d = x.shape[0]
    check_spdc(n, d, alpha.shape[0], b.shape[0], v.shape[0], xbar.shape[0], tau, sigma,
               theta, l2, l1)
    check_length(last.shape[0], d, "last")
    check_length(clock.shape[0], 1, "clock")
    sampler_init_lines(&smp, 0, state, no_prob, no_int, no_int, no_pos, &L)
    inv_n = 1.0 / n
    q = 1.0 / sigma
    tl = tau * l1
    tl2 = tau * l2
    shrink = 1.0 / (1.0 + tl2)
    ls = -log1p(tl2)
    t = clock[0]
    with nogil:
        while touched < budget:
            k = sampler_next(&smp)
            if smp.ahead >= 0:
                pd_prefetch(&alpha[smp.ahead])
                pd_prefetch(&b[smp.ahead])
            start = L.indptr[k]
            end = L.indptr[k + 1]
            # the row's coordinates as of iteration t (x^(t), xbar^(t))
            for p in range(start, end):
                j = L.indices[p]
                m = t - last[j]
                if m > 0:
                    catch_up(&x[j], &xbar[j], tau * v[j], tl, tl2, shrink, ls, theta, m)
                    last[j] = t
            # 1. the dual coordinate at the extrapolated primal point
            zk = line_dot(&L, k, &xbar[0])
            ak = alpha[k]
            anew = dual_step_exact(loss, ak, b[k], zk, q)
            delta = anew - ak
            alpha[k] = anew
            t += 1
            # 2. and 4. on the row's coordinates (the others: catch_up, when read)
            for p in range(start, end):
                j = L.indices[p]
                r = v[j] + delta * L.data[p]
                xo = x[j]
                xn = soft(xo + tau * r, tl) * shrink
                xbar[j] = xn + theta * (xn - xo)
                x[j] = xn
                last[j] = t
            # 3. u <- u + (y_k^+ - y_k) a_k / n
            if delta != 0.0:
                line_axpy(&L, k, delta * inv_n, &v[0])
            touched += max(2 * (end - start), 1)
            iters += 1
    clock[0] = t
    return iters, touched


def spdc_catch_up(const double[::1] v, const double[::1] x, const double[::1] xbar,
                  const long long[::1] last, const long long[::1] clock, double tau,
                  double theta, double l2, double l1, double[::1] x_now,
                  double[::1] xbar_now):
    """x and xbar of iteration ``clock[0]`` from :func:`spdc_lazy`'s state, written to
    ``x_now`` and ``xbar_now`` (the dense kernel's to rounding). The lazy state is left as it
    is, so that chunked calls of :func:`spdc_lazy` still reproduce one long call exactly.
    Returns the work: d (one pass over the coordinates)."""
    cdef Py_ssize_t j, d = x.shape[0]
    cdef long long t, m
    cdef double tl = tau * l1, tl2 = tau * l2, shrink, ls
    for arr, what in ((v, "v"), (xbar, "xbar"), (x_now, "x_now"), (xbar_now, "xbar_now")):
        check_length(arr.shape[0], d, what)
    check_length(last.shape[0], d, "last")
    check_length(clock.shape[0], 1, "clock")
    if not (tau > 0.0 and 0.0 <= theta <= 1.0 and l2 > 0.0 and l1 >= 0.0):
        raise ValueError(f"SPDC needs tau, l2 > 0, l1 >= 0 and theta in [0, 1], got "
                         f"tau={tau}, theta={theta}, l2={l2}, l1={l1}")
    shrink = 1.0 / (1.0 + tl2)
    ls = -log1p(tl2)
    t = clock[0]
    with nogil:
        for j in range(d):
            x_now[j] = x[j]
            xbar_now[j] = xbar[j]
            m = t - last[j]
            if m > 0:
                catch_up(&x_now[j], &xbar_now[j], tau * v[j], tl, tl2, shrink, ls, theta, m)
    return d


def spdc_advance(double x, double c, double tl, double tl2, long long m):
    """m steps of x -> soft(x + c, tl) / (1 + tl2) in closed form (:func:`prox_advance`; for
    the tests)."""
    if not (tl2 > 0.0 and tl >= 0.0 and m >= 0):
        raise ValueError(f"spdc_advance needs tl2 > 0, tl >= 0, m >= 0; got {tl2}, {tl}, {m}")
    return prox_advance(x, c, tl, tl2, 1.0 / (1.0 + tl2), -log1p(tl2), m)
