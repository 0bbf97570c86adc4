# cython: language_level=3
"""Primal-Dual Block Frank-Wolfe (PDBFW) of Lei, Zhuo, Caramanis, Dhillon & Dimakis (2019),
Algorithm 1 (the l1 ball), on the rows and the columns of A (``_matrix.pxd`` ``Lines``: CSR +
CSC, or one dense C-order array); and the top-k selection Algorithm 2 shares.

Problem (5): P(x) = 1/n sum_i f_i(a_i^T x) + g(x) over ||x||_1 <= r, g = mu/2 ||x||^2 (mu > 0),
saddle function (6) L(x, y) = g(x) + 1/n y^T A x - 1/n sum_i f_i^*(y_i).

House convention (``_losses.pxd``, ``pdsparse.objective``): the dual variable is
``alpha = -y`` (f_i^*(y_i) = phi_i^*(-alpha_i), the term ``loss_conj_neg`` evaluates), so the
kernel keeps

* ``x`` (d): the primal iterate;
* ``alpha`` (n): -y;
* ``w`` (n): A x (the paper's w);
* ``u`` (d): A^T alpha = -z (the paper's z = A^T y).

One iteration t of Algorithm 1:

(8)  x~ = argmin_{||x||_1 <= r, ||x||_0 <= s} <z/n + grad g(x'), x> + (L eta / 2) ||x - x'||^2
     (x' = x^(t-1), grad g(x') = mu x', L = mu: g's smoothness) is the Euclidean projection
     of v = x' - (z/n + mu x') / (L eta) onto {||x||_1 <= r} with at most s nonzeros. It keeps
     the s largest |v_j| and projects those onto the l1 ball (Duchi et al. 2008, Fig. 1):
     Kyrillidis, Becker, Cevher & Koch, "Sparse projections onto the simplex", ICML 2013,
     show greedy selection exact for such sets; for the l1 ball the exchange argument is
     short: if |v_a| < |v_b|, a in the support, b not, and x_a has magnitude m <= |v_a|, moving
     that magnitude to b (with v_b's sign) changes the squared distance by
     v_a^2 - v_b^2 + (|v_b| - m)^2 - (|v_a| - m)^2 = 2 m (|v_a| - |v_b|) <= 0.
     Selection is a quickselect of the s-th largest |v_j| and one scan (expected O(d),
     :func:`select_top`); the projection sorts the s kept values. x^(t) = (1 - eta) x' +
     eta x~.
(9)  w^(t) = (1 - eta) w^(t-1) + eta A x~: O(n) for the scaling plus the entries of the
     columns of x~'s support (the paper prints A Delta x; A x^(t) needs A x~).
(10) y~_i = argmax_y' 1/n (w_i y' - f_i^*(y')) - (y' - y_i)^2 / (2 delta). The printed (10)
     has f^* without the 1/n, a slip against the saddle function (6) and against the
     analysis, whose (19) reads y^(t) - y^(t-1) = delta (1/n A x^(t) - g), g in
     d(1/n sum_i f_i^*)(y^(t)) (Appendix B.2): the printed form has the fixed point
     y_i = f_i'(w_i / n), the consistent one the saddle point y_i = f_i'(a_i^T x). Multiplied
     by n and written in a = -y' it is argmax_a {-phi_i^*(-a) - (a - alpha_i) w_i -
     (n / delta)(a - alpha_i)^2 / 2}: ``dual_step_exact(loss, alpha_i, b_i, w_i, q = n /
     delta)``, the house's one 1-D dual step (a clip for the smooth hinge, closed form for
     the squared loss). It uses w^(t), after the primal update, as (19) does.
    With ``theta`` > 0 (not the printed algorithm: an ablation after the description of a
    public ``PDFW.m`` of the trace-norm experiments, which updates every dual row and
    extrapolates the primal iterate), (10) reads w_i + theta (w_i - w_i^(t-1)) = a_i^T (x^(t)
    + theta (x^(t) - x^(t-1))) instead of w_i: the extrapolation of Chambolle & Pock (2011),
    whose theta = 1 is the ``extrapolate`` option's.
(11) I = the k rows of largest |y~_i - y_i| (the GS-r rule), y_i <- y~_i on I.
(12) z += A_I^T (y^(t) - y^(t-1)): the entries of the rows of I that moved.

Ties in both selections go to the lower index (a strict total order: the selected sets are
unique, whatever the pivots); the selected indices are applied in increasing order. The
quickselect runs on a contiguous copy of (a sampled superset of) the keys, not on an index
permutation, whose gathers miss the cache once the d-vectors outgrow it: measured CPU time
per iteration, n = 20000, nnz(A) = 10^6, d = 10^6, index quickselect vs this selection,
3.6 vs 2.8 ms at s = 100, 9.8 vs 4.7 ms at s = 10^4; equal within 10% for d <= 10^5.

**s and k.** The caller passes s and k in ``info`` and whether to adapt them. With ``adapt``,
after each iteration: if the s-sparse step (8) was not the full projected step (some |v_j|
left out exceeds the projection's threshold theta: the l1-ball projection of v has more than
s nonzeros), s doubles (up to d); if it was, the full step's support is x~'s, and after
``CALM`` such exact steps in a row s shrinks to max(``s_floor``, 2 max nnz(x~)) over them
when that is smaller (a window, not the last step alone: supports that alternate between
two sizes would otherwise shrink s below the larger one, and the truncated steps keep the
alternation going). ``k_rule`` sets k: ``K_FIXED`` keeps the caller's; ``K_PRINTED``
follows s as max(1, ceil(n s / d)) (the text after Corollary 4.1.1: the dual block costs
what the primal one does when A is dense); ``K_BALANCE`` makes that balance hold on sparse
data, k = ceil(entries of A read by (9) / (nnz(A) / n)) of the same iteration, clipped to
[1, n] (the k average rows that cost what the primal update just did). q = n / delta =
``q_per_k`` * k (delta proportional to 1/k, Corollary 4.1.1), or ``q_fixed`` when > 0; both
0 is exact maximization of (10) (delta = inf: y~_i = f_i'(w_i), no proximal term). The rules
and their measured alternatives are discussed in :mod:`pdsparse.solvers.pdbfw`.

**Work.** A call runs whole iterations until ``budget`` units of work are done and returns
``(iterations, touched)``: the stored entries of A read (the columns of (9), the rows of
(12)) plus the n + d coordinates each iteration scans (forming v and selecting its s
largest; the n candidates (10) and their k largest): an iteration costs at least that even
when it reads few entries of A, and a pass count that left it out would flatter PDBFW
(4-5x on mnist09-rb). All state is in caller-owned arrays, so chunked calls reproduce one
long call.
"""

from libc.math cimport INFINITY, ceil, fabs
from libc.stdlib cimport qsort

from pdsparse._losses cimport SMOOTH_HINGE, SQUARED, dual_step_exact
from pdsparse.solvers._matrix cimport DENSE, Lines, line_axpy, line_nnz, lines_init

# Slots of the caller-owned ``info`` (long long).
cdef enum:
    I_S = 0  # s, the sparsity of the block step (8) (in: the start; out: the current)
    I_K = 1  # k, the dual block (11)
    I_ITERS = 2  # iterations so far
    I_EXACT = 3  # 1 if the last step (8) was the full projected step, else 0
    I_XNNZ = 4  # nonzeros of the last x~
    I_GROWN = 5  # times s has doubled (s=auto)
    I_PRIMAL = 6  # cumulative entries of A read by (9)
    I_DUAL = 7  # cumulative entries of A read by (12)
    I_MOVED = 8  # rows of the last I whose y moved
    I_CALM = 9  # exact steps since s last changed or was checked (s=auto)
    I_PEAK = 10  # the largest nnz(x~) over those steps
    I_SCAN = 11  # cumulative coordinates scanned ((8) and (10)-(11): n + d per iteration)
    INFO_SIZE = 16

cdef enum:
    CALM = 5  # s=auto shrinks after this many exact steps in a row

# how k is set (``pdbfw_l1``'s ``k_rule``)
cpdef enum:
    K_FIXED = 0  # the caller's k
    K_PRINTED = 1  # max(1, ceil(n s / d)), following s
    K_BALANCE = 2  # ceil(entries read by (9) / (nnz(A) / n)): the sparse balance

INFO = {"s": I_S, "k": I_K, "iters": I_ITERS, "exact": I_EXACT, "xnnz": I_XNNZ,
        "grown": I_GROWN, "primal": I_PRIMAL, "dual": I_DUAL, "moved": I_MOVED,
        "calm": I_CALM, "peak": I_PEAK, "scan": I_SCAN, "size": INFO_SIZE}
CALM_STEPS = CALM
"""Slots of ``info``, by name (for the Python side)."""


# ---------------------------------------------------------------------------------------------
# Top-k selection: the k-th largest value by quickselect, then one scan
# ---------------------------------------------------------------------------------------------

cdef inline unsigned long long xorshift(unsigned long long* st) noexcept nogil:
    st[0] ^= st[0] << 13
    st[0] ^= st[0] >> 7
    st[0] ^= st[0] << 17
    return st[0]


cdef inline void dswap(double* a, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef double t = a[i]
    a[i] = a[j]
    a[j] = t


cdef int cmp_desc(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    return (x < y) - (x > y)


cdef double kth_largest(double* buf, Py_ssize_t m, Py_ssize_t k, int depth,
                        Py_ssize_t* above) noexcept nogil:
    """The k-th largest of buf[0..m) (1 <= k <= m), permuting ``buf``, and in ``above`` the
    number of values strictly larger (every partition leaves the values left of the range
    strictly larger than those in it): quickselect (Hoare's
    FIND) on the values themselves, contiguous, with Dijkstra's three-way partition
    [> p | == p | < p] so that repeated values (the zeros of untouched coordinates) cost
    O(m), and the median of three random positions as pivot: expected O(m). After
    ``depth`` partitions (-1: 2 log2(m) + 4) the remaining range is sorted instead
    (introselect, Musser 1997), so the worst case is O(m log m). The pivot positions come
    from a generator reseeded on every call: the result depends on the values alone."""
    cdef Py_ssize_t lo = 0, hi = m - 1, target = k - 1, lt, gt, i, span, a, b, c
    cdef unsigned long long st = 0x9E3779B97F4A7C15ULL
    cdef double p, x, y, z
    if depth < 0:
        depth = 4
        span = m
        while span > 1:
            depth += 2
            span >>= 1
    while lo < hi:
        if depth == 0:
            qsort(buf + lo, hi - lo + 1, sizeof(double), cmp_desc)
            i = target
            while i > lo and buf[i - 1] == buf[target]:
                i -= 1
            above[0] = i
            return buf[target]
        depth -= 1
        span = hi - lo + 1
        a = lo + <Py_ssize_t>(xorshift(&st) % <unsigned long long>span)
        b = lo + <Py_ssize_t>(xorshift(&st) % <unsigned long long>span)
        c = lo + <Py_ssize_t>(xorshift(&st) % <unsigned long long>span)
        x, y, z = buf[a], buf[b], buf[c]
        if x < y:
            x, y = y, x
        if y < z:
            y = z
            if x < y:
                y = x
        p = y  # the median of x, y, z
        lt = lo
        gt = hi
        i = lo
        while i <= gt:
            if buf[i] > p:
                dswap(buf, i, lt)
                lt += 1
                i += 1
            elif buf[i] < p:
                dswap(buf, i, gt)
                gt -= 1
            else:  # equal (or NaN: kept in the middle, so the loop always ends)
                i += 1
        if target < lt:
            hi = lt - 1
        elif target > gt:
            lo = gt + 1
        else:
            above[0] = lt
            return p
    above[0] = target
    return buf[target]


cdef enum:
    SAMPLE = 4096  # keys sampled for the first pivot of select_top
    SAMPLE_MIN = 32768  # smaller inputs are copied whole


cdef double sample_pivot(const double* val, Py_ssize_t m, Py_ssize_t k,
                         double* sample) noexcept nogil:
    """A value expected a little above the k-th largest |val| (Floyd & Rivest, CACM 1975,
    Algorithm 489, in one step): the key of rank k SAMPLE / m + 3 sqrt(SAMPLE) in a sorted
    random sample of SAMPLE keys (drawn with replacement), so that about k + 3 sqrt(SAMPLE)
    m / SAMPLE (k + 5% m) keys are >= it; fewer than k are only if the sample holds more
    than k SAMPLE / m + 192 of the top k keys, probability <= exp(-2 192^2 / SAMPLE) < 2e-8
    (Hoeffding), and :func:`select_top` then copies every key. -inf when that rank falls
    outside the sample."""
    cdef unsigned long long st = 0xD1B54A32D192ED03ULL
    cdef Py_ssize_t t, rank = <Py_ssize_t>((<double>k * SAMPLE) / m) + 192  # 3 sqrt(4096)
    if rank >= SAMPLE:
        return -INFINITY
    for t in range(SAMPLE):
        sample[t] = fabs(val[<Py_ssize_t>(xorshift(&st) % <unsigned long long>m)])
    qsort(sample, SAMPLE, sizeof(double), cmp_desc)
    return sample[rank]


cdef double select_top(const double* val, double* buf, int* out, Py_ssize_t m,
                       Py_ssize_t k) noexcept nogil:
    """out[0..k) = the indices of the k largest keys |val_j|, ties to the lower index, in
    increasing order (a strict total order, so the set is unique), ``buf`` (m) scratch:
    tau = the k-th largest key by :func:`kth_largest` on a copy of the keys, then one scan
    keeps the keys above tau and the first ties at tau. For m >= SAMPLE_MIN the copy holds
    only the keys >= :func:`sample_pivot` when at least k are (counted first), i.e. about
    k + 5% of m, so that a call reads ``val`` three times and writes little (the keys are
    taken as |val| on the way: no array of keys is written). Returns the largest key left
    out (-inf if none)."""
    cdef Py_ssize_t j, cnt = 0, above = 0, ties, size = m
    cdef double tau, p, rest = -INFINITY
    if k <= 0:
        for j in range(m):
            if fabs(val[j]) > rest:
                rest = fabs(val[j])
        return rest
    if k >= m:
        for j in range(m):
            out[j] = <int>j
        return rest
    p = -INFINITY
    if m >= SAMPLE_MIN:
        p = sample_pivot(val, m, k, buf)
        if p > -INFINITY:
            size = 0
            for j in range(m):
                if fabs(val[j]) >= p:
                    size += 1
            if size < k:  # an unlucky sample: copy every key
                p = -INFINITY
    if p > -INFINITY:
        size = 0
        for j in range(m):
            if fabs(val[j]) >= p:
                buf[size] = fabs(val[j])
                size += 1
    else:
        size = m
        for j in range(m):
            buf[j] = fabs(val[j])
    # the keys left out are < p <= tau: the count of keys above tau is the copy's
    tau = kth_largest(buf, size, k, -1, &above)
    ties = k - above  # ties at tau taken, lowest indices first
    for j in range(m):
        if fabs(val[j]) > tau:
            out[cnt] = <int>j
            cnt += 1
        elif fabs(val[j]) == tau and ties > 0:
            out[cnt] = <int>j
            cnt += 1
            ties -= 1
        elif fabs(val[j]) > rest:
            rest = fabs(val[j])
    if cnt < k:  # NaN keys (a diverged run) compare false: keep out valid indices anyway
        for j in range(k):
            out[j] = <int>j
    return rest


# ---------------------------------------------------------------------------------------------
# The s-sparse step onto the l1 ball
# ---------------------------------------------------------------------------------------------

cdef double l1_threshold(double* mags, Py_ssize_t s, double radius) noexcept nogil:
    """theta of the projection of s magnitudes onto the l1 ball of ``radius`` (0 if they lie
    in it): Duchi, Shalev-Shwartz, Singer & Chandra (ICML 2008), Fig. 1, with u = the
    magnitudes sorted decreasing, rho = max{j : u_j - (sum_{i<=j} u_i - r) / j > 0},
    theta = (sum_{i<=rho} u_i - r) / rho. Sorts ``mags`` in place."""
    cdef Py_ssize_t j, rho = 0
    cdef double total = 0.0, css = 0.0, css_rho = 0.0
    for j in range(s):
        total += mags[j]
    if total <= radius:
        return 0.0
    qsort(mags, s, sizeof(double), cmp_desc)
    for j in range(s):
        css += mags[j]
        if mags[j] - (css - radius) / (j + 1) > 0.0:
            rho = j + 1
            css_rho = css
    return (css_rho - radius) / rho


cdef double sparse_step(const double* v, double* buf, int* idx, Py_ssize_t d, Py_ssize_t s,
                        double radius, double* xt, bint* exact) noexcept nogil:
    """The s-sparse projection of v onto the l1 ball: on return idx[0..s) holds the kept
    indices in increasing order and xt[0..s) their values; returns theta. ``buf`` (d) is
    scratch; ``exact`` says whether this is the full projection (no |v_j| left out exceeds
    theta)."""
    cdef Py_ssize_t t
    cdef double theta, rest, a, vj
    rest = select_top(v, buf, idx, d, s)
    for t in range(s):
        buf[t] = fabs(v[idx[t]])
    theta = l1_threshold(buf, s, radius)
    for t in range(s):
        vj = v[idx[t]]
        a = fabs(vj) - theta
        if a > 0.0:
            xt[t] = a if vj > 0.0 else -a
        else:
            xt[t] = 0.0
    exact[0] = rest <= theta
    return theta


# ---------------------------------------------------------------------------------------------
# Python entry points for the tests and Algorithm 2
# ---------------------------------------------------------------------------------------------

def top_k(const double[::1] key, Py_ssize_t k):
    """The indices of the k largest |key_j| (ties to the lower index), in increasing order:
    :func:`select_top`, the selection of both algorithms."""
    import numpy as np
    cdef Py_ssize_t m = key.shape[0]
    if not 0 <= k <= m:
        raise ValueError(f"k = {k} out of [0, {m}]")
    out = np.zeros(k, dtype=np.int32)
    if k == 0:
        return out
    buf = np.empty(max(m, SAMPLE))
    cdef double[::1] bv = buf
    cdef int[::1] ov = out
    with nogil:
        select_top(&key[0], &bv[0], &ov[0], m, k)
    return out


def kth(const double[::1] key, Py_ssize_t k, int depth=-1):
    """(the k-th largest key, how many keys are larger) by :func:`kth_largest` on a copy;
    ``depth``: partitions before the sort fallback (-1: the default limit; 0: sort at once)
    (tests)."""
    import numpy as np
    cdef Py_ssize_t m = key.shape[0], above = -1
    if not 1 <= k <= m:
        raise ValueError(f"k = {k} out of [1, {m}]")
    buf = np.array(key, dtype=np.float64)
    cdef double[::1] bv = buf
    cdef double out
    with nogil:
        out = kth_largest(&bv[0], m, k, depth, &above)
    return out, above


def sparse_l1_projection(const double[::1] v, Py_ssize_t s, double radius):
    """(x, theta, exact): the projection of v onto {||x||_1 <= radius, ||x||_0 <= s}, as the
    kernel's step (8) computes it; ``exact`` says it is also the projection onto the l1 ball
    alone (tests)."""
    import numpy as np
    cdef Py_ssize_t d = v.shape[0], t
    if not 1 <= s <= d:
        raise ValueError(f"s = {s} out of [1, {d}]")
    order = np.zeros(d, dtype=np.int32)
    xt = np.zeros(s)
    buf = np.zeros(d)
    out = np.zeros(d)
    cdef double[::1] xv = xt, bv = buf, ov = out
    cdef int[::1] iv = order
    cdef bint exact = False
    cdef double theta
    with nogil:
        theta = sparse_step(&v[0], &bv[0], &iv[0], d, s, radius, &xv[0], &exact)
        for t in range(s):
            ov[iv[t]] = xv[t]
    return out, theta, bool(exact)


# ---------------------------------------------------------------------------------------------
# Algorithm 1
# ---------------------------------------------------------------------------------------------

cdef inline int check(Py_ssize_t got, Py_ssize_t want, str what) except -1:
    if got != want:
        raise ValueError(f"{what} has {got} entries, expected {want}")
    return 0


def pdbfw_l1(int r_layout, const double[::1] r_data, const int[::1] r_indices,
             const int[::1] r_indptr, Py_ssize_t r_count, Py_ssize_t r_length,
             Py_ssize_t r_step, Py_ssize_t r_inc,
             int c_layout, const double[::1] c_data, const int[::1] c_indices,
             const int[::1] c_indptr, Py_ssize_t c_count, Py_ssize_t c_length,
             Py_ssize_t c_step, Py_ssize_t c_inc,
             const double[::1] b, double[::1] x, double[::1] alpha, double[::1] w,
             double[::1] u, double l2, double radius, int loss, double eta, double q_per_k,
             double q_fixed, bint adapt, long long s_floor, int k_rule, double[::1] v,
             double[::1] buf_d, int[::1] idx_d, double[::1] xt, double[::1] cand,
             double[::1] dy, double[::1] buf_n, int[::1] idx_n, long long[::1] info,
             long long budget, double theta=0.0):
    """PDBFW Algorithm 1 (see the module docstring): iterations (8)-(12) until ``budget``
    entries of A are read. ``x``, ``alpha``, ``w = A x`` and ``u = A^T alpha`` are updated in
    place and must be consistent at the call; ``v``, ``buf_d``, ``xt`` (d), ``cand``,
    ``dy``, ``buf_n`` (n) and ``idx_d`` (int, d), ``idx_n`` (int, n) are scratch; ``info``
    (long long[16]) holds s and k and receives the counters of ``INFO``; ``theta``: the
    extrapolation of the primal point the dual step (10) reads (0: as printed)."""
    cdef Lines R, C
    lines_init(&R, r_layout, r_data, r_indices, r_indptr, r_count, r_length, r_step, r_inc)
    lines_init(&C, c_layout, c_data, c_indices, c_indptr, c_count, c_length, c_step, c_inc)
    if R.layout != C.layout:
        raise ValueError("rows and columns must be stored alike (both sparse or both dense)")
    if R.layout == DENSE and (R.length != C.count or C.length != R.count):
        raise ValueError(f"dense rows ({R.count} x {R.length}) and columns ({C.count} x "
                         f"{C.length}) of different matrices")
    cdef Py_ssize_t n = R.count, d = C.count
    for arr, want, what in ((x, d, "x"), (u, d, "u"), (v, d, "v"), (xt, d, "xt"),
                            (buf_d, d, "buf_d"), (alpha, n, "alpha"), (w, n, "w"),
                            (b, n, "b"), (cand, n, "cand"), (dy, n, "dy"),
                            (buf_n, n, "buf_n")):
        check(arr.shape[0], want, what)
    check(idx_d.shape[0], d, "idx_d")
    check(idx_n.shape[0], n, "idx_n")
    if info.shape[0] < INFO_SIZE:
        raise ValueError(f"info needs {INFO_SIZE} entries")
    if loss != SMOOTH_HINGE and loss != SQUARED:
        raise ValueError("PDBFW takes the smooth hinge or the squared loss")
    if not (l2 > 0.0 and radius > 0.0 and 0.0 < eta <= 1.0 and q_fixed >= 0.0
            and q_per_k >= 0.0 and theta >= 0.0):
        raise ValueError("need l2 > 0, radius > 0, 0 < eta <= 1, a dual step q >= 0 and "
                         "theta >= 0")
    if k_rule not in (K_FIXED, K_PRINTED, K_BALANCE):
        raise ValueError(f"unknown k_rule {k_rule}")
    cdef Py_ssize_t s = info[I_S], k = info[I_K]
    if not (1 <= s <= d and 1 <= k <= n and 1 <= s_floor <= d):
        raise ValueError(f"need 1 <= s, s_floor <= {d} and 1 <= k <= {n}, got s = {s}, "
                         f"s_floor = {s_floor}, k = {k}")
    cdef double inv_n = 1.0 / n, step = l2 * eta, keep = 1.0 - eta, gj, q, a, da
    cdef long long touched = 0, iters = 0, work, xnnz, moved, s_old
    cdef double row_nnz = (<double>R.indptr[n] if R.layout != DENSE else <double>n * d) / n
    if row_nnz <= 0.0:
        row_nnz = 1.0
    cdef Py_ssize_t j, i, t
    cdef bint exact = True
    with nogil:
        while touched < budget:
            # (8): v = x' - (z/n + mu x') / (L eta), z = -u, L = mu; the s-sparse projection.
            # x' is read here for the last time: its scaling of x = (1 - eta) x' + eta x~
            # rides along
            for j in range(d):
                gj = l2 * x[j] - u[j] * inv_n
                v[j] = x[j] - gj / step
                x[j] = keep * x[j]
            sparse_step(&v[0], &buf_d[0], &idx_d[0], d, s, radius, &xt[0], &exact)
            # x += eta x~ and (9) w = (1 - eta) w + eta A x~
            for i in range(n):
                if theta > 0.0:
                    cand[i] = w[i]  # w^(t-1), for the extrapolation in (10)
                w[i] = keep * w[i]
            work = 0
            xnnz = 0
            for t in range(s):
                if xt[t] != 0.0:
                    j = idx_d[t]
                    a = eta * xt[t]
                    x[j] += a
                    line_axpy(&C, j, a, &w[0])
                    work += line_nnz(&C, j)
                    xnnz += 1
            info[I_PRIMAL] += work
            if k_rule == K_BALANCE:
                k = <Py_ssize_t>ceil(work / row_nnz)
                k = 1 if k < 1 else (n if k > n else k)
            # (10): the candidate of every row; (11): the k of largest |y~_i - y_i|
            q = q_fixed if q_fixed > 0.0 else q_per_k * k
            for i in range(n):
                a = w[i] + theta * (w[i] - cand[i]) if theta > 0.0 else w[i]
                cand[i] = dual_step_exact(loss, alpha[i], b[i], a, q)
                dy[i] = cand[i] - alpha[i]
            select_top(&dy[0], &buf_n[0], &idx_n[0], n, k)
            # (12): u = A^T alpha follows the rows that moved
            moved = 0
            for t in range(k):
                i = idx_n[t]
                da = dy[i]
                if da != 0.0:
                    alpha[i] = cand[i]
                    line_axpy(&R, i, da, &u[0])
                    work += line_nnz(&R, i)
                    info[I_DUAL] += line_nnz(&R, i)
                    moved += 1
            work += n + d
            info[I_SCAN] += n + d
            touched += work
            iters += 1
            info[I_ITERS] += 1
            info[I_EXACT] = exact
            info[I_XNNZ] = xnnz
            info[I_MOVED] = moved
            if adapt:
                s_old = s
                if not exact:
                    s = 2 * s if 2 * s < d else d
                    info[I_GROWN] += 1
                    info[I_CALM] = 0
                    info[I_PEAK] = 0
                else:
                    info[I_CALM] += 1
                    if xnnz > info[I_PEAK]:
                        info[I_PEAK] = xnnz
                    if info[I_CALM] >= CALM:
                        if 2 * info[I_PEAK] < s:
                            s = 2 * info[I_PEAK] if 2 * info[I_PEAK] > s_floor else s_floor
                        info[I_CALM] = 0
                        info[I_PEAK] = 0
                if k_rule == K_PRINTED and s != s_old:
                    k = <Py_ssize_t>ceil(<double>n * s / d)
                    k = 1 if k < 1 else (n if k > n else k)
            info[I_S] = s
            info[I_K] = k
    return iters, touched
