# cython: language_level=3
"""Kernels of PDBFW's l1-ball baselines (Lei et al., Sec. 5): the per-sample and O(d) loops.

Problem: P(x) = f(x) + indicator{||x||_1 <= r}, f(x) = 1/n sum_i phi(a_i^T x, b_i) +
mu/2 ||x||^2, with f_i(x) = phi(a_i^T x, b_i) + mu/2 ||x||^2 (so grad f_i(x) - grad f_i(y) =
(phi'(a_i^T x) - phi'(a_i^T y)) a_i + mu (x - y): the mu term is never sampled).
:mod:`pdsparse.solvers_ball` drives these; full products with A go through SciPy there.

* :func:`project_l1`: Euclidean projection onto the l1 ball by Condat's algorithm
  (L. Condat, "Fast projection onto the simplex and the l1 ball", Math. Prog. 158, 2016,
  Sec. 3, the proposed algorithm), applied to |v| (Duchi et al., ICML 2008, Lemma 3: the
  projection onto the ball keeps the signs and projects |v| onto the simplex of radius r);
  observed O(d), no sort.
* :func:`cndg`: the CndG procedure of conditional gradient sliding (Lan & Zhou, SIAM J.
  Optim. 26(2), 2016, procedure CndG of Algorithm 1), used by SCGS and STORC: Frank-Wolfe
  with exact line search on the prox-model <g, x> + beta/2 ||x - u||^2 until its Wolfe gap
  V <= eta; over the l1 ball the linear oracle is a signed vertex, so an iteration is one
  O(d) pass.
* :func:`minibatch_gradient`: (1/m) sum_{draws} grad f_i(z), or the variance-reduced
  grad f(y0) + (1/m) sum (grad f_i(z) - grad f_i(y0)) of STORC (Hazan & Luo, ICML 2016,
  Algorithm 2, line 8), m uniform draws with replacement.
* :func:`svrg_steps`: inner steps of projected SVRG (Johnson & Zhang, NIPS 2013; Prox-SVRG,
  Xiao & Zhang, SIAM J. Optim. 24(4), 2014, Algorithm 1 with R the indicator of the ball):
  x <- Proj(x - eta (grad f_i(x) - grad f_i(x~) + grad f(x~))).
* :func:`fw_line_search`: exact minimizer over [0, 1] of P along a Frank-Wolfe segment for
  the smooth hinge (piecewise quadratic: the derivative is piecewise linear between the
  breakpoints where a margin crosses 0 or 1) and the squared loss.

Work units (the ``touched`` of the registry's kernels): stored entries of A read, plus d for
every dense O(d) pass (a projection, a CndG iteration, the dense part of a step), as SPDC's
dense primal update is counted in ``_erm.pyx``. A sampled gradient reads its row twice
(a_i^T z, then the update): 2 nnz(a_i), so that n draws cost what a full gradient does
(A z and A^T phi'(A z): 2 nnz(A)). Random draws use the caller's xoshiro256**
state (``_sampling.pxd``'s ``next_below``), so that a NumPy transcription given
``_sampling.uniform_ints`` of a copy of the state replays them.
"""

import numpy as np

from libc.math cimport fabs
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, qsort

from pdsparse._losses cimport SMOOTH_HINGE, SQUARED, loss_deriv
from pdsparse._matrix cimport Lines, line_axpy, line_dot, line_nnz, lines_init
from pdsparse._sampling cimport next_below


# ---------------------------------------------------------------------------------------------
# Projection onto the l1 ball (Condat 2016)
# ---------------------------------------------------------------------------------------------

cdef double simplex_threshold(const double* y, Py_ssize_t m, double a, double* v,
                              double* vt) noexcept nogil:
    """tau with sum_i max(y_i - tau, 0) = a, for y >= 0 with sum y > a > 0.

    Condat (2016), Sec. 3, steps 1-5: ``v`` holds the candidate active set and ``vt``
    (Condat's v~) the entries set aside by step 2; rho is kept as (sum v - a) / |v|, updated
    one entry at a time. Workspaces ``v``, ``vt``: m doubles each.
    """
    cdef Py_ssize_t i, nv = 1, nvt = 0, kept, old
    cdef double rho, yi
    # 1. v = {y_1}, rho = y_1 - a
    v[0] = y[0]
    rho = y[0] - a
    # 2. one pass: grow v while rho stays above y_n - a; else restart v at y_n
    for i in range(1, m):
        yi = y[i]
        if yi > rho:
            rho = rho + (yi - rho) / (nv + 1)
            if rho > yi - a:
                v[nv] = yi
                nv += 1
            else:
                for kept in range(nv):
                    vt[nvt + kept] = v[kept]
                nvt += nv
                v[0] = yi
                nv = 1
                rho = yi - a
    # 3. the set-aside entries above rho join v
    for i in range(nvt):
        yi = vt[i]
        if yi > rho:
            v[nv] = yi
            nv += 1
            rho = rho + (yi - rho) / nv
    # 4. drop the entries of v at or below rho until v is stable
    while True:
        old = nv
        kept = 0
        for i in range(old):
            yi = v[i]
            if yi > rho:
                v[kept] = yi
                kept += 1
            else:
                # |v| after the removal: the kept ones and the ones not yet visited
                rho = rho + (rho - yi) / (kept + old - i - 1)
        nv = kept
        if nv == old:
            break
    return rho


cdef double l1_project(const double* src, double* dst, Py_ssize_t m, double r,
                       double* work) noexcept nogil:
    """dst = Proj_{||.||_1 <= r}(src) (dst may be src); returns the threshold (0 inside).

    ``work``: 3 m doubles (|src| and the two workspaces of :func:`simplex_threshold`).
    """
    cdef Py_ssize_t i
    cdef double total = 0.0, tau, a, s
    cdef double* y = work
    for i in range(m):
        y[i] = fabs(src[i])
        total += y[i]
    if total <= r:
        if dst != src:
            for i in range(m):
                dst[i] = src[i]
        return 0.0
    tau = simplex_threshold(y, m, r, work + m, work + 2 * m)
    for i in range(m):
        a = y[i] - tau
        s = src[i]
        if a > 0.0:
            dst[i] = a if s > 0.0 else -a
        else:
            dst[i] = 0.0
    return tau


def project_l1(const double[::1] v, double radius, double[::1] out=None):
    """Proj_{||x||_1 <= radius}(v) by Condat's algorithm; returns ``(out, tau)``.

    tau is the soft threshold (out = sign(v) max(|v| - tau, 0); 0 when v is inside). ``out``
    may be ``v`` itself (in place) or None (a new array).
    """
    cdef Py_ssize_t m = v.shape[0]
    if not radius > 0:
        raise ValueError(f"radius must be > 0, got {radius}")
    if out is None:
        out = np.empty(m)
    if out.shape[0] != m:
        raise ValueError(f"out has {out.shape[0]} entries, expected {m}")
    if m == 0:
        return np.asarray(out), 0.0
    cdef double* work = <double*>malloc(3 * m * sizeof(double))
    cdef double tau
    if work == NULL:
        raise MemoryError()
    try:
        with nogil:
            tau = l1_project(&v[0], &out[0], m, radius, work)
    finally:
        free(work)
    return np.asarray(out), tau


# ---------------------------------------------------------------------------------------------
# CndG (conditional gradient sliding's inner loop) over the l1 ball
# ---------------------------------------------------------------------------------------------

cdef long long cndg_l1(const double* g, const double* u, double* ut, Py_ssize_t d,
                       double beta, double eta, double r, long long max_iter,
                       double* gap) noexcept nogil:
    """Lan & Zhou's CndG(g, u, beta, eta) with ``ut`` = u_1 on entry and the output on exit.

    With h = g + beta (u_t - u) (the gradient of the prox-model at u_t):
    v_t = argmin_{||x||_1 <= r} <h, x> = -r sign(h_j) e_j, j = argmax |h_j| (first on ties);
    V_t = <h, u_t - v_t> = <h, u_t> + r |h_j|; stop when V_t <= eta; else
    alpha_t = min{1, <beta (u - u_t) - g, v_t - u_t> / (beta ||v_t - u_t||^2)}
    (= min{1, V_t / (beta ||v_t - u_t||^2)}, the exact line search of the model) and
    u_{t+1} = (1 - alpha_t) u_t + alpha_t v_t. One fused O(d) pass per iteration updates
    u_t, recomputes h from its definition (no drift), <h, u_t>, ||u_t||^2 and the argmax.
    Returns the iterations taken (``max_iter`` guards rounding; Lan & Zhou bound them by
    6 beta D^2 / eta); ``gap[0]`` is the last V_t.
    """
    cdef Py_ssize_t p, j = 0, jv
    cdef long long it = 0
    cdef double h, hu = 0.0, uu = 0.0, best = -1.0, vj, s, V, denom, alpha, keep
    for p in range(d):
        h = g[p] + beta * (ut[p] - u[p])
        hu += h * ut[p]
        uu += ut[p] * ut[p]
        if fabs(h) > best:
            best = fabs(h)
            j = p
    while True:
        h = g[j] + beta * (ut[j] - u[j])
        s = 1.0 if h > 0.0 else -1.0
        vj = -r * s
        V = hu + r * best
        gap[0] = V
        if V <= eta or it >= max_iter:
            break
        denom = uu - 2.0 * ut[j] * vj + r * r  # ||v - u_t||^2
        alpha = V / (beta * denom) if denom > 0.0 else 1.0
        if alpha > 1.0:
            alpha = 1.0
        keep = 1.0 - alpha
        hu = 0.0
        uu = 0.0
        best = -1.0
        jv = j  # the vertex's index (j becomes the next argmax during the pass)
        for p in range(d):
            if p == jv:
                ut[p] = keep * ut[p] + alpha * vj
            else:
                ut[p] = keep * ut[p]
            h = g[p] + beta * (ut[p] - u[p])
            hu += h * ut[p]
            uu += ut[p] * ut[p]
            if fabs(h) > best:
                best = fabs(h)
                j = p
        it += 1
    return it


def cndg(const double[::1] g, const double[::1] u, double[::1] ut, double beta, double eta,
         double radius, long long max_iter):
    """Run CndG(g, u, beta, eta) over the l1 ball of ``radius`` from ``ut`` (in place).

    Returns ``(iterations, last Wolfe gap V)``; each iteration costs one O(d) pass.
    """
    cdef Py_ssize_t d = g.shape[0]
    cdef long long it
    cdef double gap = 0.0
    if u.shape[0] != d or ut.shape[0] != d:
        raise ValueError("g, u and ut differ in length")
    if not (beta > 0 and radius > 0):
        raise ValueError(f"beta and radius must be > 0, got {beta}, {radius}")
    with nogil:
        it = cndg_l1(&g[0], &u[0], &ut[0], d, beta, eta, radius, max_iter, &gap)
    return it, gap


# ---------------------------------------------------------------------------------------------
# Minibatch gradients (SCGS, STORC)
# ---------------------------------------------------------------------------------------------

def minibatch_gradient(int layout, const double[::1] data, const int[::1] indices,
                       const int[::1] indptr, Py_ssize_t count, Py_ssize_t length,
                       Py_ssize_t step, Py_ssize_t inc, const double[::1] b,
                       const double[::1] z, const double[::1] zsnap,
                       const double[::1] base, double mu, int loss, uint64_t[::1] state,
                       long long m, double[::1] out):
    """out = base + mu z + (1/m) sum_{t=1}^m c_t a_{i_t}, i_t uniform on the rows (drawn in
    order from ``state``), c_t = phi'(a_i^T z) - phi'(zsnap_i) (STORC's variance-reduced
    estimate, ``zsnap`` = A y0 and ``base`` the loss part of grad f(y0)) or phi'(a_i^T z)
    (SCGS: ``zsnap`` and ``base`` empty). Returns the entries touched: twice the entries of
    each row drawn (read for a_i^T z and for the update) plus d for the dense part.
    """
    cdef Lines L
    lines_init(&L, layout, data, indices, indptr, count, length, step, inc)
    cdef Py_ssize_t n = L.count, d = z.shape[0], p, i
    cdef long long t, touched = d
    cdef bint snap = zsnap.shape[0] > 0
    cdef double c
    if m < 1:
        raise ValueError(f"minibatch of {m} rows")
    if b.shape[0] != n or out.shape[0] != d or (snap and zsnap.shape[0] != n) or (
            base.shape[0] not in (0, d)):
        raise ValueError("minibatch_gradient: inconsistent array lengths")
    with nogil:
        for p in range(d):
            out[p] = mu * z[p]
        if base.shape[0] > 0:
            for p in range(d):
                out[p] = base[p] + out[p]
        for t in range(m):
            i = next_below(&state[0], n)
            c = loss_deriv(loss, line_dot(&L, i, &z[0]), b[i])
            if snap:
                c = c - loss_deriv(loss, zsnap[i], b[i])
            if c != 0.0:
                line_axpy(&L, i, c / m, &out[0])
            touched += 2 * line_nnz(&L, i)
    return touched


# ---------------------------------------------------------------------------------------------
# Projected SVRG / Prox-SVRG inner steps
# ---------------------------------------------------------------------------------------------

def svrg_steps(int layout, const double[::1] data, const int[::1] indices,
               const int[::1] indptr, Py_ssize_t count, Py_ssize_t length, Py_ssize_t step,
               Py_ssize_t inc, const double[::1] b, double[::1] x, const double[::1] zsnap,
               const double[::1] gsnap, double eta, double mu, double radius, int loss,
               uint64_t[::1] state, long long steps, long long budget, double[::1] xsum,
               double[::1] work):
    """Up to ``steps`` inner steps of projected SVRG, stopping once ``budget`` is touched.

    Step (Xiao & Zhang 2014, Algorithm 1, lines 5-6, R = indicator of the ball): i uniform,
    v = (phi'(a_i^T x) - phi'(zsnap_i)) a_i + gsnap + mu x, x <- Proj(x - eta v), with
    ``zsnap`` = A x~ and ``gsnap`` = A^T phi'(A x~) / n (the loss part of grad f(x~); the mu
    terms of grad f_i(x) - grad f_i(x~) + grad f(x~) sum to mu x exactly). ``xsum`` (length
    d, or empty) accumulates the iterates for Prox-SVRG's averaged snapshot. ``work``: 4 d
    doubles. A step costs 2 nnz(a_i) + d. Returns ``(steps taken, touched)``.
    """
    cdef Lines L
    lines_init(&L, layout, data, indices, indptr, count, length, step, inc)
    cdef Py_ssize_t n = L.count, d = x.shape[0], p, i
    cdef long long done = 0, touched = 0
    cdef bint average = xsum.shape[0] > 0
    cdef double c
    cdef double* v = &work[0]
    if b.shape[0] != n or zsnap.shape[0] != n or gsnap.shape[0] != d or (
            average and xsum.shape[0] != d) or work.shape[0] < 4 * d:
        raise ValueError("svrg_steps: inconsistent array lengths")
    with nogil:
        while done < steps and touched < budget:
            i = next_below(&state[0], n)
            c = loss_deriv(loss, line_dot(&L, i, &x[0]), b[i]) - loss_deriv(loss, zsnap[i], b[i])
            for p in range(d):
                v[p] = gsnap[p] + mu * x[p]
            if c != 0.0:
                line_axpy(&L, i, c, v)
            for p in range(d):
                v[p] = x[p] - eta * v[p]
            l1_project(v, &x[0], d, radius, &work[d])
            if average:
                for p in range(d):
                    xsum[p] += x[p]
            touched += 2 * line_nnz(&L, i) + d
            done += 1
    return done, touched


# ---------------------------------------------------------------------------------------------
# Exact line search of Frank-Wolfe (smooth hinge, squared loss)
# ---------------------------------------------------------------------------------------------

cdef struct Event:
    double at  # the step where sample ``i`` enters ``region``
    int i
    int region


cdef int event_cmp(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const Event*>a).at, y = (<const Event*>b).at
    return -1 if x < y else (1 if x > y else 0)


cdef inline void hinge_piece(int region, double m0, double dm, double* a, double* s) noexcept nogil:
    """h'(m0 + t dm) dm = a + s t on the smooth hinge's region (0: m <= 0, 1: 0 < m < 1,
    2: m >= 1), h'(m) = -1, m - 1, 0."""
    if region == 0:
        a[0] = -dm
        s[0] = 0.0
    elif region == 1:
        a[0] = (m0 - 1.0) * dm
        s[0] = dm * dm
    else:
        a[0] = 0.0
        s[0] = 0.0


cdef inline int hinge_region(double m0, double dm) noexcept nogil:
    """The region of m0 + t dm for small t > 0 (at a breakpoint the direction decides)."""
    if m0 < 0.0 or (m0 == 0.0 and dm <= 0.0):
        return 0
    if m0 > 1.0 or (m0 == 1.0 and dm >= 0.0):
        return 2
    return 1


def fw_line_search(int loss, const double[::1] z, const double[::1] dz, const double[::1] b,
                   double mu, double xd, double dd):
    """argmin over t in [0, 1] of P(t) = 1/n sum_i phi(z_i + t dz_i, b_i) + mu/2 ||x + t s||^2.

    ``xd`` = <x, s>, ``dd`` = ||s||^2 for the segment direction s = v - x. P'(t) = 1/n sum_i
    phi'(z_i + t dz_i) dz_i + mu (xd + t dd) is continuous, nondecreasing and piecewise
    linear for the smooth hinge (pieces change where a margin b_i (z_i + t dz_i) crosses 0 or
    1) and linear for the squared loss: the breakpoints in (0, 1) are sorted and swept until
    P' changes sign, and the root is solved on that piece. O(n log n).
    """
    cdef Py_ssize_t n = z.shape[0], i, ne = 0, k
    cdef double A = 0.0, S = 0.0, m0, dm, a0, s0, a1, s1, t, lo = 0.0, hi
    cdef Event* ev
    if dz.shape[0] != n or b.shape[0] != n:
        raise ValueError("z, dz and b differ in length")
    if loss != SMOOTH_HINGE and loss != SQUARED:
        raise ValueError("exact line search: smooth hinge or squared loss only")
    ev = <Event*>malloc((2 * n + 1) * sizeof(Event))
    if ev == NULL:
        raise MemoryError()
    try:
        with nogil:
            if loss == SQUARED:
                for i in range(n):
                    A += (z[i] - b[i]) * dz[i]
                    S += dz[i] * dz[i]
            else:
                for i in range(n):
                    dm = b[i] * dz[i]
                    if dm == 0.0:  # a margin that does not move adds nothing to P'
                        continue
                    m0 = b[i] * z[i]
                    k = hinge_region(m0, dm)
                    hinge_piece(k, m0, dm, &a0, &s0)
                    A += a0
                    S += s0
                    # breakpoints ahead: m = 0 at -m0 / dm, m = 1 at (1 - m0) / dm
                    if dm > 0.0:
                        if k == 0:
                            ev[ne].at = -m0 / dm
                            ev[ne].i = <int>i
                            ev[ne].region = 1
                            ne += 1
                        if k <= 1:
                            ev[ne].at = (1.0 - m0) / dm
                            ev[ne].i = <int>i
                            ev[ne].region = 2
                            ne += 1
                    else:
                        if k == 2:
                            ev[ne].at = (1.0 - m0) / dm
                            ev[ne].i = <int>i
                            ev[ne].region = 1
                            ne += 1
                        if k >= 1:
                            ev[ne].at = -m0 / dm
                            ev[ne].i = <int>i
                            ev[ne].region = 0
                            ne += 1
                qsort(ev, ne, sizeof(Event), event_cmp)
            A = A / n + mu * xd
            S = S / n + mu * dd
            t = 1.0
            if A >= 0.0:
                t = 0.0
            else:
                k = 0
                while True:
                    hi = ev[k].at if k < ne and ev[k].at < 1.0 else 1.0
                    if A + S * hi >= 0.0:  # the root lies in [lo, hi]
                        t = -A / S if S > 0.0 else hi
                        t = lo if t < lo else (hi if t > hi else t)
                        break
                    if hi >= 1.0:
                        t = 1.0
                        break
                    # sample ev[k].i changes piece at hi
                    i = ev[k].i
                    m0 = b[i] * z[i]
                    dm = b[i] * dz[i]
                    hinge_piece(ev[k].region, m0, dm, &a1, &s1)
                    hinge_piece(ev[k].region - 1 if dm > 0.0 else ev[k].region + 1, m0, dm,
                                &a0, &s0)
                    A = A + (a1 - a0) / n
                    S = S + (s1 - s0) / n
                    lo = hi
                    k += 1
    finally:
        free(ev)
    return t
