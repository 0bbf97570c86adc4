# cython: language_level=3
"""The inner solver of proximal Newton with working sets: coordinate descent on the
quadratic model of P over a working set of features.

Proximal Newton (Lee, Sun & Saunders, SIAM J. Optim. 24, 2014) minimizes, at an iterate w
with the margins z = A w, the model of P(w + delta)

    q(delta) = g^T delta + 1/2 delta^T (A^T D A + l2 I) delta + l1 ||w + delta||_1,

g = A^T (s phi'(z)) / n + l2 w the gradient of the smooth part and D = diag(s phi''(z) / n),
then line-searches along delta. With working sets (skglm: Bertrand, Klopfenstein, Massias,
Rakotomamonjy, Salmon et al., "Beyond L1: Faster and Better Sparse Models with skglm",
NeurIPS 2022, Algorithms 1 and 2) delta is zero off a few features chosen by their
optimality violation, and q is minimized by cyclic coordinate descent over them: each step
reads one column of A and no exp (the curvature D is fixed), keeping r = A delta up to date.
"""

from libc.math cimport fabs, fmax, sqrt

import numpy as np

from pdsparse._losses cimport LOGISTIC, loss_value_deriv_curv, pd_logistic_pass


cdef inline double violation(double p, double v, double l1) noexcept nogil:
    """A coordinate's optimality violation at v (p the partial derivative of the smooth
    part): the distance of -p from l1 times the subdifferential of |.| at v, |p + l1
    sign(v)| (v != 0) or |p| - l1 (at most 0 where 0 is optimal)."""
    if v > 0.0:
        return fabs(p + l1)
    elif v < 0.0:
        return fabs(p - l1)
    return fabs(p) - l1


cdef inline double cd_step(double p, double v, double h, double l1, double *worst,
                           double *moved, double *biggest) noexcept nogil:
    """One coordinate of the model's descent: the minimizer soft(v - p / h, l1 / h) of
    p (x - v) + h (x - v)^2 / 2 + l1 |x| (p the model's partial derivative at v = w_j +
    delta_j, h its curvature); ``worst`` raised to the coordinate's :func:`violation` at v,
    ``moved`` to |x - v| and ``biggest`` to |x| (the pass's stopping tests)."""
    cdef double u, x, t = l1 / h
    cdef double viol = violation(p, v, l1)
    if viol > worst[0]:
        worst[0] = viol
    u = v - p / h
    x = u - t if u > t else (u + t if u < -t else 0.0)
    if fabs(x - v) > moved[0]:
        moved[0] = fabs(x - v)
    if fabs(x) > biggest[0]:
        biggest[0] = fabs(x)
    return x


cdef inline double intercept_step(double p, double h, double c, double *worst,
                                  double *moved, double *biggest) noexcept nogil:
    """The unpenalized intercept's exact step -p / h (p its partial derivative, h its
    curvature, c = w_c + delta_c before it), with the pass's stopping tests updated."""
    cdef double diff = -p / h
    if fabs(p) > worst[0]:
        worst[0] = fabs(p)
    if fabs(diff) > moved[0]:
        moved[0] = fabs(diff)
    if fabs(c + diff) > biggest[0]:
        biggest[0] = fabs(c + diff)
    return diff


cdef inline void _remember(double[:, ::1] hist, int k, const int[::1] ws,
                           const double[::1] delta, bint intercept, Py_ssize_t c) noexcept nogil:
    """hist[k] = delta on the working set (and the intercept's, last)."""
    cdef Py_ssize_t t, m = ws.shape[0]
    for t in range(m):
        hist[k, t] = delta[ws[t]]
    if intercept:
        hist[k, m] = delta[c]


cdef double model_value(const double[::1] r, const double[::1] curv, const int[::1] ws,
                        const double[::1] grad, const double[::1] w, const double[::1] x,
                        double l2, double l1, bint intercept, Py_ssize_t c) noexcept nogil:
    """q(delta) = g^T delta + 1/2 sum_i D_i r_i^2 + l2/2 ||delta||^2 + l1 ||w + delta||_1 over
    the working set (``x``: delta there, then the intercept's; ``r`` = A delta): the model
    Anderson's acceptance compares (its l1 part without the features off the working set,
    the same for both points)."""
    cdef Py_ssize_t t, i, m = ws.shape[0]
    cdef double value = 0.0, quad = 0.0
    for t in range(m):
        value += grad[ws[t]] * x[t] + 0.5 * l2 * x[t] * x[t] + l1 * fabs(w[ws[t]] + x[t])
    if intercept:
        value += grad[c] * x[m]
    for i in range(r.shape[0]):
        quad += curv[i] * r[i] * r[i]
    return value + 0.5 * quad


cdef long long _extrapolate(const double[::1] data, const int[::1] indices,
                            const int[::1] indptr, const int[::1] ws, const double[::1] curv,
                            const double[::1] grad, const double[::1] w, double[::1] delta,
                            double[::1] r, double l2, double l1, bint intercept,
                            double[:, ::1] hist, double[::1] coef, double[:, ::1] gram,
                            double[::1] r_e) noexcept nogil:
    """:func:`pn_inner`'s Anderson step from the iterates ``hist`` (K + 1 rows): x_e, its
    r_e = A x_e, and both taken if q(x_e) < q(x_K). Returns the work (entries read)."""
    cdef Py_ssize_t K = hist.shape[0] - 1, q = hist.shape[1], m = ws.shape[0]
    cdef Py_ssize_t a, e, t, k, j, i, n = r.shape[0], c = w.shape[0] - 1
    cdef double acc, total, trace = 0.0, x_t
    cdef long long touched = 0
    # G = U^T U, U's columns the K steps x_k - x_(k-1)
    for a in range(K):
        for e in range(a, K):
            acc = 0.0
            for t in range(q):
                acc += (hist[a + 1, t] - hist[a, t]) * (hist[e + 1, t] - hist[e, t])
            gram[a, e] = acc
            gram[e, a] = acc
        trace += gram[a, a]
    if not trace > 0.0:
        return touched
    for a in range(K):  # a ridge of 1e-10 of the mean step: the steps are nearly parallel
        gram[a, a] += 1e-10 * trace / K
    # G c = 1 by Cholesky (G = L L^T, L stored in gram's lower triangle)
    for a in range(K):
        for e in range(a + 1):
            acc = gram[a, e]
            for k in range(e):
                acc -= gram[a, k] * gram[e, k]
            if a == e:
                if not acc > 0.0:
                    return touched
                gram[a, a] = sqrt(acc)
            else:
                gram[a, e] = acc / gram[e, e]
    for a in range(K):
        acc = 1.0
        for k in range(a):
            acc -= gram[a, k] * coef[k]
        coef[a] = acc / gram[a, a]
    for a in range(K - 1, -1, -1):
        acc = coef[a]
        for k in range(a + 1, K):
            acc -= gram[k, a] * coef[k]
        coef[a] = acc / gram[a, a]
    total = 0.0
    for a in range(K):
        total += coef[a]
    if not fabs(total) > 0.0:
        return touched
    # x_e = sum_k c_k x_(k+1) / sum c, into hist[0] (x_0 is not needed any more), and its r_e
    for t in range(q):
        acc = 0.0
        for a in range(K):
            acc += coef[a] * hist[a + 1, t]
        hist[0, t] = acc / total
    for i in range(n):
        r_e[i] = 0.0
    for t in range(m):
        j = ws[t]
        x_t = hist[0, t]
        if x_t != 0.0:
            for k in range(indptr[j], indptr[j + 1]):
                r_e[indices[k]] += x_t * data[k]
        touched += indptr[j + 1] - indptr[j]
    if intercept:
        for i in range(n):
            r_e[i] += hist[0, m]
    touched += 3 * n
    for t in range(q):  # x_K, for its value
        hist[1, t] = hist[K, t]
    if model_value(r_e, curv, ws, grad, w, hist[0], l2, l1, intercept, c) \
            < model_value(r, curv, ws, grad, w, hist[1], l2, l1, intercept, c):
        for t in range(m):
            delta[ws[t]] = hist[0, t]
        if intercept:
            delta[c] = hist[0, m]
        for i in range(n):
            r[i] = r_e[i]
    return touched


def violations(const double[::1] grad, const double[::1] w, double l1, double[::1] out):
    """Each feature's :func:`violation` at w_j from the gradient ``grad`` of the smooth part
    (0 where 0 is optimal) into ``out``; returns the largest (0 for no feature)."""
    cdef Py_ssize_t j
    cdef double v, worst = 0.0
    with nogil:
        for j in range(grad.shape[0]):
            v = fmax(violation(grad[j], w[j], l1), 0.0)
            out[j] = v
            worst = fmax(worst, v)
    return worst


def ws_violation(const double[::1] grad, const double[::1] w, const int[::1] ws, double l1):
    """The largest :func:`violation` over the features ``ws`` (0 for none)."""
    cdef Py_ssize_t t
    cdef double worst = 0.0
    with nogil:
        for t in range(ws.shape[0]):
            worst = fmax(worst, violation(grad[ws[t]], w[ws[t]], l1))
    return worst


def pn_inner(const double[::1] data, const int[::1] indices, const int[::1] indptr,
             const int[::1] ws, const double[::1] curv, const double[::1] grad,
             const double[::1] w, double[::1] delta, double[::1] r,
             double l2, double l1, int max_passes, double tol, bint intercept=False,
             double viol_tol=0.0, int anderson=0):
    """Cyclic coordinate descent on q over the features ``ws`` (CSC arrays of A; ``curv``:
    D's diagonal, n entries; ``grad``, ``w``, ``delta``: d entries; ``r`` = A delta, n
    entries; ``delta`` and ``r`` updated in place). Coordinate j: the model's partial
    derivative p_j = g_j + sum_i A_ij D_i r_i + l2 delta_j and curvature
    H_jj = sum_i A_ij^2 D_i + l2, the step w_j + delta_j <- soft(w_j + delta_j - p_j / H_jj,
    l1 / H_jj). Passes stop after ``max_passes``, once no step moves w_j + delta_j by more
    than ``tol`` times its largest entry, or once the model's optimality violation is at most
    ``viol_tol`` at the end of a pass: the largest over the working set of
    :func:`violation` (and |p_c| for the intercept). It is read first from the partial
    derivatives the pass computes anyway, each before its coordinate's step; only when those
    are all small is it computed at the pass's end (one more read of the columns): on
    correlated columns each step can be small while their sum moves every p_j, so that the
    pass-time test alone stopped after one pass with the model's violation unchanged (20
    Newton steps of one pass each on gisette, a relative gap stalled near 1e-4 on
    Mnist-RB). Only a pass over every coordinate stops the descent: after one that does not,
    the passes visit the nonzero coordinates alone (w_j + delta_j != 0, at their turn) until
    those settle by the same tests, then every coordinate again (glmnet's active-set cycles:
    Friedman, Hastie & Tibshirani, J. Stat. Softw. 33(1), 2010, Sec. 2.6; LIBLINEAR's
    newGLMNET shrinks its inner passes alike): a zero coordinate that stays zero is read once
    a cycle, not once a pass. With ``intercept`` the last entry of ``w``,
    ``grad`` and ``delta`` is an unpenalized intercept c, a column of ones: each pass ends
    with its exact step, delta_c -= (g_c + sum_i D_i r_i) / sum_i D_i, r += that (n reads).

    ``anderson`` = K > 0: Anderson extrapolation of the passes over the nonzero coordinates
    (Bertrand & Massias, "Anderson acceleration of coordinate descent", AISTATS 2021, Alg. 1
    with skglm's acceptance test): after K such passes in a row, from the K + 1 iterates
    x_0..x_K (delta on the working set and the intercept, x_0 the pass over every coordinate
    before them), c solves (U^T U) c = 1 normalized to sum 1 (U's columns x_k - x_(k-1)) and
    x_e = sum_k c_k x_k, r_e = A x_e (one pass over the working set's columns) replace the
    iterate if q(x_e) < q(x_K) (:func:`model_value`); then K more. On an ill-conditioned
    model (d >> n, no l2: the sweeps run out of passes) the sequence's slow directions
    cancel. Returns (entries read, passes)."""
    cdef Py_ssize_t m = ws.shape[0], n = r.shape[0], t, k, j, c = w.shape[0] - 1
    cdef Py_ssize_t q = m + 1 if intercept else m
    cdef int stored = 0
    cdef double[:, ::1] hist = _zeros((anderson + 1) * q).reshape(anderson + 1, q) \
        if anderson > 0 else None
    cdef double[::1] coef = _zeros(anderson + 1), r_e = _zeros(n) if anderson > 0 else None
    cdef double[:, ::1] gram = _zeros(anderson * anderson).reshape(anderson, anderson) \
        if anderson > 0 else None
    cdef double hc = 0.0
    cdef long long touched = 0
    cdef int passes = 0
    cdef double h, p, v, diff, biggest, moved, worst
    cdef bint full = True
    cdef double[::1] hjj = _zeros(m)
    with nogil:
        for t in range(m):
            j = ws[t]
            h = l2
            for k in range(indptr[j], indptr[j + 1]):
                h += data[k] * data[k] * curv[indices[k]]
            hjj[t] = h if h > 1e-300 else 1e-300
            touched += indptr[j + 1] - indptr[j]
        if intercept:
            for k in range(n):
                hc += curv[k]
        while passes < max_passes:
            passes += 1
            biggest = 0.0
            moved = 0.0
            worst = 0.0
            for t in range(m):
                j = ws[t]
                v = w[j] + delta[j]
                if v == 0.0 and not full:
                    continue
                p = grad[j] + l2 * delta[j]
                for k in range(indptr[j], indptr[j + 1]):
                    p += data[k] * curv[indices[k]] * r[indices[k]]
                diff = cd_step(p, v, hjj[t], l1, &worst, &moved, &biggest) - v
                if diff != 0.0:
                    delta[j] += diff
                    for k in range(indptr[j], indptr[j + 1]):
                        r[indices[k]] += diff * data[k]
                touched += 2 * (indptr[j + 1] - indptr[j])
            if intercept and hc > 1e-300:
                p = grad[c]
                for k in range(n):
                    p += curv[k] * r[k]
                diff = intercept_step(p, hc, w[c] + delta[c], &worst, &moved, &biggest)
                if diff != 0.0:
                    delta[c] += diff
                    for k in range(n):
                        r[k] += diff
                touched += 2 * n
            if not full:  # the nonzero coordinates settled: every coordinate next
                full = moved <= tol * biggest or worst <= viol_tol
                if anderson > 0 and not full:
                    _remember(hist, stored, ws, delta, intercept, c)
                    stored += 1
                    if stored == anderson + 1:
                        touched += _extrapolate(data, indices, indptr, ws, curv, grad, w,
                                                delta, r, l2, l1, intercept, hist, coef, gram,
                                                r_e)
                        _remember(hist, 0, ws, delta, intercept, c)
                        stored = 1
                continue
            full = False
            if anderson > 0:  # the cycle's first iterate
                _remember(hist, 0, ws, delta, intercept, c)
                stored = 1
            if moved <= tol * biggest:
                break
            if worst <= viol_tol:
                worst = 0.0  # the violation at the pass's end: p_j at the final delta
                for t in range(m):
                    j = ws[t]
                    p = grad[j] + l2 * delta[j]
                    for k in range(indptr[j], indptr[j + 1]):
                        p += data[k] * curv[indices[k]] * r[indices[k]]
                    worst = fmax(worst, violation(p, w[j] + delta[j], l1))
                    touched += indptr[j + 1] - indptr[j]
                if intercept and hc > 1e-300:
                    p = grad[c]
                    for k in range(n):
                        p += curv[k] * r[k]
                    worst = fmax(worst, fabs(p))
                    touched += n
                if worst <= viol_tol:
                    break
    return touched, passes


def ws_hessian(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const int[::1] ws, const double[::1] curv, bint intercept=False,
               const int[::1] order=None):
    """Q = A_ws^T D A_ws (``curv``: D's diagonal), with the intercept's column of ones as
    its last row and column when ``intercept``: the Hessian of the smooth part's loss term on
    the working set, without l2 (glmnet's covariance updates: Friedman, Hastie & Tibshirani,
    J. Stat. Softw. 33(1), 2010, Sec. 2.2). The columns are taken in ``order`` (positions in
    ``ws``; None: ws's own), each scattered once into an n-vector (times D) and dotted with
    itself and the columns after it, so that a column is read as often as its rank: the
    caller puts the longest first (zipf 5,000 x 5,000's working sets of 24 and 52 features:
    192,000 and 270,000 reads against 398,000 and 910,000 in ws's order). Q[t, s] sums
    a_is (a_it D_i) over the rows, t the column taken first: in ws's order the bits of
    :func:`ws_hessian_rows`, in another within rounding. Returns (Q, entries read)."""
    cdef Py_ssize_t m = ws.shape[0], n = curv.shape[0], r, r2, t, s, k, j
    cdef Py_ssize_t q = m + 1 if intercept else m
    cdef long long touched = 0
    cdef double acc
    if order is None:
        order = np.arange(m, dtype=np.int32)
    elif order.shape[0] != m:
        raise ValueError(f"ws_hessian: an order of {order.shape[0]} for {m} features")
    out = _zeros(q * q).reshape(q, q)
    cdef double[:, ::1] Q = out
    cdef double[::1] scat = _zeros(n)
    with nogil:
        for r in range(m):
            t = order[r]
            j = ws[t]
            acc = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                scat[indices[k]] = data[k] * curv[indices[k]]
                acc += scat[indices[k]]
            if intercept:
                Q[t, m] = acc
                Q[m, t] = acc
            for r2 in range(r, m):
                s = order[r2]
                acc = 0.0
                for k in range(indptr[ws[s]], indptr[ws[s] + 1]):
                    acc += data[k] * scat[indices[k]]
                Q[t, s] = acc
                Q[s, t] = acc
                touched += indptr[ws[s] + 1] - indptr[ws[s]]
            for k in range(indptr[j], indptr[j + 1]):
                scat[indices[k]] = 0.0
            touched += 2 * (indptr[j + 1] - indptr[j])
        if intercept:
            acc = 0.0
            for k in range(n):
                acc += curv[k]
            Q[m, m] = acc
            touched += n
    return out, touched


def ws_hessian_rows(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                    const int[::1] pos, Py_ssize_t m, const double[::1] curv,
                    bint intercept=False):
    """:func:`ws_hessian`'s Q = A_ws^T D A_ws from the rows of A (CSR arrays, each row's
    indices increasing; ``pos``: each feature's position in the working set, -1 off it, ``m``
    its size): each row adds D_i a_it a_is to Q[t, s] for each pair t <= s of its entries in
    the working set, so that the cost is a scan of A plus sum_i k_i (k_i + 1) / 2 (k_i: the
    row's entries in the working set) where the columns' version reads |ws| nnz_ws / 2: on
    short rows and a wide working set (n >> d, a bag of words: 10 entries a row, 200
    features) a few passes' worth instead of a hundred. The same sums to the bit: every
    Q[t, s] adds its rows' terms a_is (a_it D_i) in row order, as the columns' dot products
    do. Returns (Q, entries scanned, pairs added)."""
    cdef Py_ssize_t n = curv.shape[0], q = m + 1 if intercept else m
    cdef Py_ssize_t i, k, a, e, t, cnt, longest = 0
    cdef long long pairs = 0
    cdef double di, va
    out = _zeros(q * q).reshape(q, q)
    cdef double[:, ::1] Q = out
    for i in range(n):
        longest = max(longest, indptr[i + 1] - indptr[i])
    cdef int[::1] at = np.empty(longest, dtype=np.int32)
    cdef double[::1] val = _zeros(longest)
    with nogil:
        for i in range(n):
            di = curv[i]
            cnt = 0
            for k in range(indptr[i], indptr[i + 1]):
                if pos[indices[k]] >= 0:
                    at[cnt] = pos[indices[k]]
                    val[cnt] = data[k]
                    cnt += 1
            pairs += cnt * (cnt + 1) // 2
            for a in range(cnt):
                t = at[a]
                va = val[a] * di
                for e in range(a, cnt):
                    Q[t, at[e]] += val[e] * va
                if intercept:
                    Q[t, m] += va
            if intercept:
                Q[m, m] += di
        for t in range(q):
            for a in range(t + 1, q):
                Q[a, t] = Q[t, a]
    return out, indptr[n], pairs


def gram_cd(const double[:, ::1] Q, const int[::1] ws, const double[::1] grad,
            const double[::1] w, double[::1] delta, double l2, double l1, int max_passes,
            double tol, bint intercept=False, double viol_tol=0.0):
    """:func:`pn_inner`'s coordinate descent, the same steps in the same order, on the
    model's Hessian formed (``Q`` of :func:`ws_hessian`): a step updates h = Q delta in
    O(|ws|) instead of reading its column twice, and r = A delta is left to the caller (one
    pass at the end, :func:`ws_margins`). ``delta`` is zero off the working set (and the
    intercept). Returns (operations: |ws|^2 a pass, passes)."""
    cdef Py_ssize_t m = ws.shape[0], t, s, j, c = w.shape[0] - 1
    cdef Py_ssize_t q = m + 1 if intercept else m
    cdef long long touched = 0
    cdef int passes = 0
    cdef double h, p, v, diff, biggest, moved, worst, acc
    cdef bint full = True
    cdef double[::1] hq = _zeros(q), hjj = _zeros(q)
    with nogil:
        for t in range(q):
            acc = 0.0
            for s in range(q):
                acc += Q[t, s] * (delta[ws[s]] if s < m else delta[c])
            hq[t] = acc
            h = Q[t, t] + (l2 if t < m else 0.0)
            hjj[t] = h if h > 1e-300 else 1e-300
        while passes < max_passes:
            passes += 1
            biggest = 0.0
            moved = 0.0
            worst = 0.0
            for t in range(m):
                j = ws[t]
                v = w[j] + delta[j]
                if v == 0.0 and not full:
                    continue
                p = grad[j] + l2 * delta[j] + hq[t]
                diff = cd_step(p, v, hjj[t], l1, &worst, &moved, &biggest) - v
                if diff != 0.0:
                    delta[j] += diff
                    for s in range(q):
                        hq[s] += diff * Q[s, t]
                touched += q
            if intercept and Q[m, m] > 1e-300:
                diff = intercept_step(grad[c] + hq[m], Q[m, m], w[c] + delta[c], &worst,
                                      &moved, &biggest)
                if diff != 0.0:
                    delta[c] += diff
                    for s in range(q):
                        hq[s] += diff * Q[s, m]
                touched += q
            if not full:  # pn_inner's passes over the nonzero coordinates
                full = moved <= tol * biggest or worst <= viol_tol
                continue
            full = False
            if moved <= tol * biggest:
                break
            if worst <= viol_tol:  # then the violation at the pass's end (pn_inner's test)
                worst = 0.0
                for t in range(m):
                    j = ws[t]
                    worst = fmax(worst, violation(grad[j] + l2 * delta[j] + hq[t],
                                                 w[j] + delta[j], l1))
                if intercept and Q[m, m] > 1e-300:
                    worst = fmax(worst, fabs(grad[c] + hq[m]))
                if worst <= viol_tol:
                    break
    return touched, passes


def ws_margins(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const int[::1] ws, const double[::1] step, bint intercept, double[::1] r):
    """r += A_ws step (``step``: one entry per working-set feature, then the intercept's
    when ``intercept``), one pass over the working set's columns. Returns the entries
    read."""
    cdef Py_ssize_t m = ws.shape[0], n = r.shape[0], t, k, j
    cdef long long touched = 0
    cdef double diff
    with nogil:
        for t in range(m):
            j = ws[t]
            diff = step[t]
            if diff != 0.0:
                for k in range(indptr[j], indptr[j + 1]):
                    r[indices[k]] += diff * data[k]
            touched += indptr[j + 1] - indptr[j]
        if intercept and step[m] != 0.0:
            diff = step[m]
            for k in range(n):
                r[k] += diff
            touched += n
    return touched


cdef _zeros(Py_ssize_t m):
    import numpy as np
    return np.zeros(m)


def col_norms(const double[::1] data, const int[::1] indptr):
    """||a_j||_2 of each column (CSC arrays), one pass: Gap Safe screening's column norms."""
    cdef Py_ssize_t d = indptr.shape[0] - 1, j, k
    cdef double acc
    out = _zeros(d)
    cdef double[::1] norms = out
    with nogil:
        for j in range(d):
            acc = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                acc += data[k] * data[k]
            norms[j] = sqrt(acc)
    return out


def ws_gradient(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                const int[::1] ws, const double[::1] deriv, double[::1] out):
    """out[j] = sum_i A_ij deriv_i for the features j in ``ws`` (CSC arrays), the others
    untouched: the loss gradient on the working set (deriv = s phi'(z) / n). Returns the
    entries read."""
    cdef Py_ssize_t t, k, j
    cdef long long touched = 0
    cdef double acc
    with nogil:
        for t in range(ws.shape[0]):
            j = ws[t]
            acc = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                acc += data[k] * deriv[indices[k]]
            out[j] = acc
            touched += indptr[j + 1] - indptr[j]
    return touched


def pn_value_derivs(int loss, const double[::1] z, const double[::1] b, const double[::1] s,
                    double n, double[::1] deriv, double[::1] curv):
    """Returns sum_i s_i phi(z_i) / n, and sets deriv_i = s_i phi'(z_i) / n and
    curv_i = s_i phi''(z_i) / n (``s`` empty: no weights), in one pass: the line search's
    value at a trial point gives the next Newton model's D and gradient too. The logistic
    loss's three come from one exp four lanes at a time (``_fastexp.h``'s
    ``pd_logistic_pass``: its exp, a series log1p and phi'' as sigma(m) sigma(-m), within a
    few ulp of the exact values and the same bits on every CPU; the pass a Newton step takes
    over all examples), the others from ``_losses.loss_value_deriv_curv``. The sum is compensated
    (Neumaier): the line search compares two such sums within a few ulps of P, which a
    plain running sum's error (up to n ulps) swamps near the optimum (steps refused, the
    run stalled at a relative gap of 3e-11 on a heavy-tailed problem)."""
    cdef Py_ssize_t i, m = z.shape[0]
    cdef bint weighted = s.shape[0] > 0
    cdef double v, d, c, t, total = 0.0, comp = 0.0
    if loss == LOGISTIC:
        if m == 0:
            return 0.0
        with nogil:
            total = pd_logistic_pass(&z[0], &b[0], &s[0] if weighted else NULL, m, n,
                                     &deriv[0], &curv[0])
        return total
    with nogil:
        for i in range(m):
            v = loss_value_deriv_curv(loss, z[i], b[i], &d, &c)
            if weighted:
                v = v * s[i]
                d = d * s[i]
                c = c * s[i]
            t = total + v
            if fabs(total) >= fabs(v):
                comp += (total - t) + v
            else:
                comp += (v - t) + total
            total = t
            deriv[i] = d / n
            curv[i] = c / n
    return (total + comp) / n
