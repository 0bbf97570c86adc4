# cython: language_level=3
"""Scalar losses shared by every kernel: the one home of phi, phi', phi* and the 1-D dual step.

Conventions (Face-Off, Csiba & Richtarik, eqs. (1) and (3)): example j has margin
z = <a_j, w>, loss phi_j(z), and dual variable alpha_j with the dual term
phi_j^*(-alpha_j); at the optimum alpha_j = -phi_j'(<a_j, w>) (the paper prints
+phi', a sign slip: see ``docs`` in ``pdsparse.losses``). For logistic and smooth
hinge the labels are b_j in {-1, +1} and t_j = b_j alpha_j lies in [0, 1].
"""

from libc.math cimport exp, fabs, INFINITY, log, log1p

cdef enum:
    LOGISTIC = 0
    SQUARED = 1
    SMOOTH_HINGE = 2

# Largest number of safeguarded Newton steps in the logistic dual step; it
# converges quadratically from the q = 0 start, so this is a guard, not a budget.
cdef enum:
    NEWTON_MAX_ITER = 60


cdef inline double xlogx(double t) noexcept nogil:
    if t <= 0.0:
        return 0.0
    return t * log(t)


cdef extern from "_fastexp.h" nogil:
    double pd_logistic_dot(const double* val, const int* idx, const double* z,
                           const double* b, long long m)
    double pd_logistic_pass(const double* z, const double* b, const double* s, long long len,
                            double n, double* deriv, double* curv)


cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* min(max(t, 0), 1) in two SSE2 instructions: no branch to mispredict */
    static inline double pd_clip01(double t) {
        __m128d v = _mm_max_sd(_mm_set_sd(t), _mm_setzero_pd());
        return _mm_cvtsd_f64(_mm_min_sd(v, _mm_set_sd(1.0)));
    }
    #else
    static inline double pd_clip01(double t) { return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t); }
    #endif
    """
    double pd_clip01(double t) noexcept nogil


cdef inline double sigmoid(double s) noexcept nogil:
    """1 / (1 + exp(-s)) without overflow for either sign of s.

    One value at a time glibc's exp is the faster; ``_fastexp.h``'s polynomial exp pays
    off four lanes at a time, in the primal kernel's column gradient (``pd_logistic_dot``),
    where the two agree to about 3 ulp.
    """
    cdef double e
    if s >= 0.0:
        return 1.0 / (1.0 + exp(-s))
    e = exp(s)
    return e / (1.0 + e)


cdef inline double loss_value(int loss, double z, double b) noexcept nogil:
    """phi_j(z): logistic log(1 + exp(-b z)), squared (z - b)^2 / 2, smooth hinge h(b z)."""
    cdef double m
    if loss == LOGISTIC:
        m = -b * z
        if m > 0.0:
            return m + log1p(exp(-m))
        return log1p(exp(m))
    elif loss == SQUARED:
        return 0.5 * (z - b) * (z - b)
    else:
        # h(m) = 1/2 - m (m < 0), (1 - m)^2 / 2 (0 <= m <= 1), 0 (m > 1); PDBFW app. B.7
        m = b * z
        if m <= 0.0:
            return 0.5 - m
        if m < 1.0:
            return 0.5 * (1.0 - m) * (1.0 - m)
        return 0.0


cdef inline double loss_deriv(int loss, double z, double b) noexcept nogil:
    """phi_j'(z)."""
    if loss == LOGISTIC:
        # -b sigma(-b z)
        return -b * sigmoid(-b * z)
    elif loss == SQUARED:
        return z - b
    # smooth hinge: -b (m <= 0), -b (1 - m) (0 < m < 1), 0 (m >= 1) with m = b z, written
    # -b clip(1 - m, 0, 1): the same values (up to the sign of a zero) without branches,
    # which margins near 0 of random sign mispredict (faster primal epochs; measured:
    # benchmarks/README.md, "Measurements cited by the code")
    return -b * pd_clip01(1.0 - b * z)


cdef inline double loss_curv(int loss, double z, double b) noexcept nogil:
    """phi_j''(z): logistic sigma(b z) sigma(-b z), squared 1; smooth hinge its generalized
    second derivative, 1 on 0 < b z < 1 and 0 elsewhere (phi' is piecewise linear there)."""
    cdef double s, m
    if loss == LOGISTIC:
        s = sigmoid(-b * z)
        return s * (1.0 - s)
    elif loss == SQUARED:
        return 1.0
    m = b * z
    return 1.0 if 0.0 < m < 1.0 else 0.0


cdef inline double loss_value_deriv_curv(int loss, double z, double b, double *d,
                                         double *c) noexcept nogil:
    """phi_j(z), returned, with phi_j'(z) and phi_j''(z) in ``d`` and ``c``: the logistic
    loss's three from one exp, e = exp(-|m|) with m = -b z, which both branches of
    :func:`loss_value` and of :func:`sigmoid` take (the values of :func:`loss_value`,
    :func:`loss_deriv` and :func:`loss_curv` to the bit, for a third of their exps)."""
    cdef double m, e, s
    if loss == LOGISTIC:
        m = -b * z
        e = exp(-fabs(m))
        s = 1.0 / (1.0 + e) if m >= 0.0 else e / (1.0 + e)  # sigmoid(m)
        d[0] = -b * s
        c[0] = s * (1.0 - s)
        return m + log1p(e) if m > 0.0 else log1p(e)
    d[0] = loss_deriv(loss, z, b)
    c[0] = loss_curv(loss, z, b)
    return loss_value(loss, z, b)


cdef inline double loss_conj_neg(int loss, double alpha, double b) noexcept nogil:
    """phi_j^*(-alpha), the dual term of Face-Off eq. (3); +inf outside the domain."""
    cdef double t
    if loss == SQUARED:
        # phi^*(y) = y^2 / 2 + b y
        return 0.5 * alpha * alpha - b * alpha
    t = b * alpha
    # 1e-12 absorbs the rounding of b * alpha; kernels keep t in [0, 1] exactly.
    if t < -1e-12 or t > 1.0 + 1e-12:
        return INFINITY
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    if loss == LOGISTIC:
        # (-yb) log(-yb) + (1 + yb) log(1 + yb) at y = -alpha
        return xlogx(t) + xlogx(1.0 - t)
    # smooth hinge: h^*(u) = u^2 / 2 + u on [-1, 0], at u = -t
    return 0.5 * t * t - t


cdef inline double conj_deriv(int loss, double alpha, double b) noexcept nogil:
    """(phi^*)'(y) at y = -alpha, the derivative of the dual term ``loss_conj_neg`` in y.

    Squared phi^*(y) = y^2/2 + b y and smooth hinge phi^*(y) = h^*(b y), h^*(v) = v^2/2 + v
    (b^2 = 1) both give y + b = b - alpha; logistic, t = b alpha in [0, 1]:
    b log((1 - t) / t) (+-inf at the boundary). DGPD's dual gradient, eqs. (7) and (12).
    """
    cdef double t
    if loss == LOGISTIC:
        t = b * alpha
        return b * (log1p(-t) - log(t))
    return b - alpha


cdef inline double dual_step_exact(int loss, double alpha, double b, double z,
                                   double q) noexcept nogil:
    """New alpha_j maximizing the 1-D dual model of Face-Off Algorithm 2.

    argmax_a { -phi^*(-a) - (a - alpha) z - q (a - alpha)^2 / 2 } with
    q = v_j / (lambda n) = ||a_j||^2 / (lambda n) for serial sampling (eq. 7);
    this is exact coordinate maximization of D. Squared loss and smooth hinge
    have closed forms; logistic is solved by safeguarded Newton in the logit
    s = log(t / (1 - t)), where the optimality condition
    g(s) = s + b z + q (sigma(s) - t) = 0 has 1 <= g'(s) <= 1 + q / 4
    (LIBLINEAR's dual logistic solver makes the same change of variable).
    """
    cdef double t, tn, s, sn, lo, hi, g, gp, sig, dx, dx_old, step
    cdef int it
    if loss == SQUARED:
        return (b - z + q * alpha) / (1.0 + q)
    t = b * alpha
    if loss == SMOOTH_HINGE:
        tn = (1.0 - b * z + q * t) / (1.0 + q)
        if tn < 0.0:
            tn = 0.0
        elif tn > 1.0:
            tn = 1.0
        return b * tn
    # logistic: the root lies in [-b z - q (1 - t), -b z + q t] since sigma - t in (-t, 1 - t)
    lo = -b * z - q * (1.0 - t)
    hi = -b * z + q * t
    # start at the q = 0 solution: near optimality t = sigma(-b z), so this is close to the
    # root (closer, measured, than the logit of the current alpha, and without a log)
    s = -b * z
    # Newton safeguarded by bisection (rtsafe, Press et al., Numerical Recipes 9.4): a
    # Newton step is taken only if it stays in the bracket and halves |g| at least as
    # fast as bisection would; for large q, g is sigmoid-shaped and plain Newton cycles.
    dx_old = INFINITY  # the first Newton step is judged by the bracket alone
    dx = INFINITY
    for it in range(NEWTON_MAX_ITER):
        sig = sigmoid(s)
        g = s + b * z + q * (sig - t)
        if g == 0.0:
            return b * sig
        if g > 0.0:
            hi = s
        else:
            lo = s
        gp = 1.0 + q * sig * (1.0 - sig)
        sn = s - g / gp
        step = sn - s
        if step * step * (1.0 + q) <= 2e-13:
            # accept sigma(s) + sigma'(s) step for sigma(root): quadratic convergence puts
            # sn within max|g''| / (2 min g') step^2 <= q step^2 / 20 of the root
            # (|sigma''| <= 1 / (6 sqrt 3), g' >= 1), and the linearization misses sigma(sn)
            # by a relative step^2 / 2: a relative error <= (1 + q) step^2 / 2 <= 1e-13 in t.
            # A test on the step alone (|step| <= 1e-10) needs one more sigmoid to see the
            # step shrink (this one makes logistic dual epochs faster; measured:
            # benchmarks/README.md, "Measurements cited by the code").
            return b * (sig + sig * (1.0 - sig) * step)
        if sn <= lo or sn >= hi or fabs(2.0 * g) > fabs(dx_old * gp):
            dx_old = dx
            dx = 0.5 * (hi - lo)
            s = lo + dx
            if dx <= 1e-15 * (1.0 + fabs(s)):
                break
        else:
            dx_old = dx
            dx = -step
            s = sn
    return b * sigmoid(s)
