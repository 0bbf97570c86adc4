# cython: language_level=3
"""Kernels of PDBFW's l1-ball baselines (Lei et al., Sec. 5): the per-sample and O(d) loops.

Problem: P(x) = f(x) + indicator{||x||_1 <= r}, f(x) = 1/n sum_i phi(a_i^T x, b_i) +
mu/2 ||x||^2, with f_i(x) = phi(a_i^T x, b_i) + mu/2 ||x||^2 (so grad f_i(x) - grad f_i(y) =
(phi'(a_i^T x) - phi'(a_i^T y)) a_i + mu (x - y): the mu term is never sampled).
:mod:`pdsparse.solvers.ball` drives these; full products with A go through SciPy there.

* :func:`project_l1`: Euclidean projection onto the l1 ball by Condat's algorithm
  (L. Condat, "Fast projection onto the simplex and the l1 ball", Math. Prog. 158, 2016,
  Sec. 3, the proposed algorithm), applied to |v| (Duchi et al., ICML 2008, Lemma 3: the
  projection onto the ball keeps the signs and projects |v| onto the simplex of radius r);
  observed O(d), no sort.
* :func:`cndg`: the CndG procedure of conditional gradient sliding (Lan & Zhou, SIAM J.
  Optim. 26(2), 2016, procedure CndG of Algorithm 1), used by SCGS and STORC: Frank-Wolfe
  with exact line search on the prox-model <g, x> + beta/2 ||x - u||^2 until its Wolfe gap
  V <= eta; over the l1 ball the linear oracle is a signed vertex, and off the support of
  the iterates the model's gradient is g itself, so an iteration sweeps the support only.
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

from libc.math cimport INFINITY, fabs
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc

from pdsparse._losses cimport SMOOTH_HINGE, SQUARED, loss_deriv
from pdsparse.solvers._matrix cimport Lines, line_axpy, line_dot, line_nnz, lines_init
from pdsparse.solvers._sampling cimport next_below


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

cdef inline bint above(double a, Py_ssize_t i, double b, Py_ssize_t j) noexcept nogil:
    """|h_i| = a ranks above |h_j| = b: larger, or equal with the smaller index (the first
    maximum, as NumPy's argmax)."""
    return a > b or (a == b and i < j)


cdef enum:
    TOP = 16  # off-support candidates kept per scan of g


cdef Py_ssize_t scan_top(const double* g, const char* member, Py_ssize_t d, double* tv,
                         int* ti) noexcept nogil:
    """The TOP largest |g_j| off the support (ties to the smaller index), in order, in
    (tv, ti); returns how many (fewer than TOP: all that are off the support)."""
    cdef Py_ssize_t p, k, nt = 0
    cdef double a
    for p in range(d):
        if member[p]:
            continue
        a = fabs(g[p])
        if nt == TOP and not above(a, p, tv[TOP - 1], ti[TOP - 1]):
            continue
        k = nt if nt < TOP else TOP - 1
        while k > 0 and above(a, p, tv[k - 1], ti[k - 1]):
            tv[k] = tv[k - 1]
            ti[k] = ti[k - 1]
            k -= 1
        tv[k] = a
        ti[k] = <int>p
        if nt < TOP:
            nt += 1
    return nt


cdef long long cndg_l1(const double* g, const double* u, double* ut, Py_ssize_t d,
                       double beta, double eta, double r, long long max_iter, double* gap,
                       int* S, char* member, long long* work) noexcept nogil:
    """Lan & Zhou's CndG(g, u, beta, eta) with ``ut`` = u_1 = u on entry, the output on exit.

    With h = g + beta (u_t - u) (the gradient of the prox-model at u_t):
    v_t = argmin_{||x||_1 <= r} <h, x> = -r sign(h_j) e_j, j = argmax |h_j| (first on ties);
    V_t = <h, u_t - v_t> = <h, u_t> + r |h_j|; stop when V_t <= eta; else
    alpha_t = min{1, <beta (u - u_t) - g, v_t - u_t> / (beta ||v_t - u_t||^2)}
    (= min{1, V_t / (beta ||v_t - u_t||^2)}, the exact line search of the model) and
    u_{t+1} = (1 - alpha_t) u_t + alpha_t v_t.

    Off the support S of u and of the vertices taken so far, u_t = u = 0 and h_j = g_j does
    not change; so the coordinates of S are swept (u_t, h recomputed from its definition,
    <h, u_t>, ||u_t||^2, the argmax), and the best ones off S come from one scan of g that
    keeps the TOP largest (rescanned only if more vertices than that join S). An iteration
    costs O(|S|) instead of O(d) (S holds the few coordinates of the sparse iterates of
    SCGS and STORC); the arithmetic is the dense method's (the terms off S are zeros).
    Workspaces of d entries: ``S``, ``member``. Returns the iterations taken (``max_iter``
    guards rounding; Lan & Zhou bound them by 6 beta D^2 / eta); ``gap[0]`` is the last
    V_t, ``work[0]`` the entries swept.
    """
    cdef Py_ssize_t p, q, j, jv, ns = 0, nt, head = 0
    cdef long long it = 0
    cdef double h, hu, uu, best, vj, s, V, denom, alpha, keep
    cdef double tv[TOP]
    cdef int ti[TOP]
    cdef bint from_top
    for p in range(d):
        member[p] = ut[p] != 0.0 or u[p] != 0.0
        if member[p]:
            S[ns] = <int>p
            ns += 1
    nt = scan_top(g, member, d, tv, ti)
    work[0] = 2 * d
    alpha = 0.0
    jv = -1
    vj = 0.0
    while True:
        # sweep S: take the step of the previous iteration (none at first), then h, sums
        keep = 1.0 - alpha
        hu = 0.0
        uu = 0.0
        best = -1.0
        j = -1
        for q in range(ns):
            p = S[q]
            if alpha > 0.0:
                if p == jv:
                    ut[p] = keep * ut[p] + alpha * vj
                else:
                    ut[p] = keep * ut[p]
            h = g[p] + beta * (ut[p] - u[p])
            hu += h * ut[p]
            uu += ut[p] * ut[p]
            if j < 0 or above(fabs(h), p, best, j):
                best = fabs(h)
                j = p
        work[0] += ns
        if head == nt and nt == TOP:  # the kept candidates joined S: scan again
            nt = scan_top(g, member, d, tv, ti)
            head = 0
            work[0] += d
        from_top = False
        if head < nt and (j < 0 or above(tv[head], ti[head], best, j)):
            best = tv[head]
            j = ti[head]
            from_top = True
        if j < 0:  # d = 0
            gap[0] = 0.0
            return it
        h = g[j] + beta * (ut[j] - u[j])
        s = 1.0 if h > 0.0 else -1.0
        vj = -r * s
        V = hu + r * best
        gap[0] = V
        if V <= eta or it >= max_iter:
            break
        if from_top:  # the vertex joins S
            head += 1
            member[j] = 1
            S[ns] = <int>j
            ns += 1
        denom = uu - 2.0 * ut[j] * vj + r * r  # ||v - u_t||^2
        alpha = V / (beta * denom) if denom > 0.0 else 1.0
        if alpha > 1.0:
            alpha = 1.0
        jv = j
        it += 1
    return it


def cndg(const double[::1] g, const double[::1] u, double[::1] ut, double beta, double eta,
         double radius, long long max_iter):
    """Run CndG(g, u, beta, eta) over the l1 ball of ``radius`` from ``ut`` (in place; it
    must equal u on entry). Returns ``(iterations, last Wolfe gap V, entries swept)``: O(d)
    to set up, then O(|support|) per iteration.
    """
    cdef Py_ssize_t d = g.shape[0]
    cdef long long it, work = 0
    cdef double gap = 0.0
    cdef int* S
    cdef char* member
    if u.shape[0] != d or ut.shape[0] != d:
        raise ValueError("g, u and ut differ in length")
    if not (beta > 0 and radius > 0):
        raise ValueError(f"beta and radius must be > 0, got {beta}, {radius}")
    if d == 0:
        return 0, 0.0, 0
    S = <int*>malloc(d * sizeof(int))
    member = <char*>malloc(d * sizeof(char))
    try:
        if S == NULL or member == NULL:
            raise MemoryError()
        with nogil:
            it = cndg_l1(&g[0], &u[0], &ut[0], d, beta, eta, radius, max_iter, &gap, S,
                         member, &work)
    finally:
        free(S)
        free(member)
    return it, gap, work


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


cdef inline int hinge_region(double m, double dm) noexcept nogil:
    """The region of the margin just after it is m, moving by dm (at a breakpoint the
    direction decides)."""
    if m < 0.0 or (m == 0.0 and dm <= 0.0):
        return 0
    if m > 1.0 or (m == 1.0 and dm >= 0.0):
        return 2
    return 1


cdef double hinge_slope(const double* z, const double* dz, const double* b, Py_ssize_t n,
                        double t, double mu, double xd, double dd, double* slope,
                        double* next_bp) noexcept nogil:
    """P'(t) for the smooth hinge, with the slope of P' just right of t and the next
    breakpoint after t (inf if none): P'(u) = P'(t) + slope (u - t) on [t, next_bp]."""
    cdef Py_ssize_t i
    cdef double A = 0.0, S = 0.0, nb = INFINITY, m0, dm, a, s, bp
    cdef int k
    for i in range(n):
        dm = b[i] * dz[i]
        if dm == 0.0:  # a margin that does not move adds nothing to P'
            continue
        m0 = b[i] * z[i]
        k = hinge_region(m0 + t * dm, dm)
        hinge_piece(k, m0, dm, &a, &s)
        A += a
        S += s
        # the breakpoint that ends this region ahead: m = 0 at -m0 / dm, m = 1 at (1 - m0) / dm
        if dm > 0.0:
            bp = -m0 / dm if k == 0 else ((1.0 - m0) / dm if k == 1 else INFINITY)
        else:
            bp = (1.0 - m0) / dm if k == 2 else (-m0 / dm if k == 1 else INFINITY)
        if bp < nb:
            nb = bp
    slope[0] = S / n + mu * dd
    next_bp[0] = nb
    return (A + S * t) / n + mu * (xd + t * dd)


cdef double exact_step(int loss, const double* z, const double* dz, const double* b,
                       Py_ssize_t n, double mu, double xd, double dd) noexcept nogil:
    """The body of :func:`fw_line_search`."""
    cdef Py_ssize_t it
    cdef double A = 0.0, S = 0.0, lo = 0.0, hi = 1.0, plo, phi, slo, nlo, p, sl, nb, c, t
    cdef double width = 1.0
    cdef bint bisect = False
    if loss == SQUARED:
        for it in range(n):
            A += (z[it] - b[it]) * dz[it]
            S += dz[it] * dz[it]
        A = A / n + mu * xd
        S = S / n + mu * dd
        if A >= 0.0:
            return 0.0
        if A + S <= 0.0:
            return 1.0
        return -A / S
    plo = hinge_slope(z, dz, b, n, 0.0, mu, xd, dd, &slo, &nlo)
    if plo >= 0.0:
        return 0.0
    phi = hinge_slope(z, dz, b, n, 1.0, mu, xd, dd, &sl, &nb)
    if phi <= 0.0:
        return 1.0
    c = 1.0
    for it in range(200):
        c = lo - plo / slo if slo > 0.0 else INFINITY
        if c <= nlo:  # P' is linear on [lo, nlo] and vanishes at c
            return c if c < hi else hi
        t = c if c < hi else lo - plo * (hi - lo) / (phi - plo)
        if bisect or not (lo < t < hi):
            t = 0.5 * (lo + hi)
        if t < nlo < hi:  # the root lies beyond the piece at lo
            t = nlo
        p = hinge_slope(z, dz, b, n, t, mu, xd, dd, &sl, &nb)
        if p < 0.0:
            lo, plo, slo, nlo = t, p, sl, nb
        elif p == 0.0:
            return t
        else:
            hi, phi = t, p
        bisect = hi - lo > 0.5 * width  # the bracket did not halve: bisect next
        width = hi - lo
    return lo if c < lo else (hi if c > hi else c)


def fw_line_search(int loss, const double[::1] z, const double[::1] dz, const double[::1] b,
                   double mu, double xd, double dd):
    """argmin over t in [0, 1] of P(t) = 1/n sum_i phi(z_i + t dz_i, b_i) + mu/2 ||x + t s||^2.

    ``xd`` = <x, s>, ``dd`` = ||s||^2 for the segment direction s = v - x. P'(t) = 1/n sum_i
    phi'(z_i + t dz_i) dz_i + mu (xd + t dd) is continuous and nondecreasing; linear for the
    squared loss (closed form), piecewise linear for the smooth hinge, its pieces ending
    where a margin b_i (z_i + t dz_i) crosses 0 or 1. For the smooth hinge a bracket
    [lo, hi] with P'(lo) < 0 <= P'(hi) is narrowed by Newton steps on the piece at lo
    (secant or bisection when they leave the bracket or stall) until the piece at lo holds
    the root, which is then solved exactly: a few O(n) passes, no sort.
    """
    cdef Py_ssize_t n = z.shape[0]
    cdef double t
    if dz.shape[0] != n or b.shape[0] != n:
        raise ValueError("z, dz and b differ in length")
    if loss != SMOOTH_HINGE and loss != SQUARED:
        raise ValueError("exact line search: smooth hinge or squared loss only")
    if n == 0:
        raise ValueError("empty segment")
    with nogil:
        t = exact_step(loss, &z[0], &dz[0], &b[0], n, mu, xd, dd)
    return t
