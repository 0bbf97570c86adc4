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
     Selection is a quickselect (expected O(d), :func:`select_top`), the projection sorts the
     s kept values. x^(t) = (1 - eta) x' + eta x~.
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
(11) I = the k rows of largest |y~_i - y_i| (the GS-r rule), y_i <- y~_i on I.
(12) z += A_I^T (y^(t) - y^(t-1)): the entries of the rows of I that moved.

Ties in both selections go to the lower index (a strict total order: the selected sets are
unique, whatever the pivots); the selected indices are applied in increasing order.

**s and k.** The caller passes s and k in ``info`` and whether to adapt them. With ``adapt``,
after each iteration: if the s-sparse step (8) was not the full projected step (some |v_j|
left out exceeds the projection's threshold theta: the l1-ball projection of v has more than
s nonzeros), s doubles (up to d); if it was, the full step's support is x~'s, and s shrinks
to max(``s_floor``, 2 nnz(x~)) when that is smaller. With ``k_auto`` k follows as max(1,
ceil(n s / d)) (the text after Corollary 4.1.1). q = n / delta = ``q_per_k`` * k (delta
proportional to 1/k, Corollary 4.1.1), or ``q_fixed`` when > 0. The rule and its measured
alternatives are discussed in :mod:`pdsparse.solvers_pdbfw`.

**Work.** A call runs whole iterations until ``budget`` stored entries of A have been read
(the columns of (9), the rows of (12); an iteration that reads none counts 1) and returns
``(iterations, touched)``. The O(n + d) scans and selections are not counted: they read no
entry of A. All state is in caller-owned arrays, so chunked calls reproduce one long call.
"""

from libc.math cimport ceil, fabs
from libc.stdlib cimport qsort

from pdsparse._losses cimport SMOOTH_HINGE, SQUARED, dual_step_exact
from pdsparse._matrix cimport DENSE, Lines, line_axpy, line_nnz, lines_init

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
    INFO_SIZE = 16

INFO = {"s": I_S, "k": I_K, "iters": I_ITERS, "exact": I_EXACT, "xnnz": I_XNNZ,
        "grown": I_GROWN, "primal": I_PRIMAL, "dual": I_DUAL, "moved": I_MOVED,
        "size": INFO_SIZE}
"""Slots of ``info``, by name (for the Python side)."""


# ---------------------------------------------------------------------------------------------
# Top-k selection: quickselect under a strict total order
# ---------------------------------------------------------------------------------------------

cdef enum:
    SMALL = 16  # ranges this short are finished by insertion sort


cdef inline bint before(const double* key, int a, int b) noexcept nogil:
    """a ranks before b: a larger key, or an equal key and a lower index (a strict total
    order on distinct indices, so the top k are one set whatever the pivots)."""
    return key[a] > key[b] or (key[a] == key[b] and a < b)


cdef inline unsigned long long xorshift(unsigned long long* st) noexcept nogil:
    st[0] ^= st[0] << 13
    st[0] ^= st[0] >> 7
    st[0] ^= st[0] << 17
    return st[0]


cdef inline void swap(int* idx, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef int t = idx[i]
    idx[i] = idx[j]
    idx[j] = t


cdef void insertion(const double* key, int* idx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Sort idx[lo..hi] (inclusive) into ``before`` order."""
    cdef Py_ssize_t i, j
    cdef int v
    for i in range(lo + 1, hi + 1):
        v = idx[i]
        j = i - 1
        while j >= lo and before(key, v, idx[j]):
            idx[j + 1] = idx[j]
            j -= 1
        idx[j + 1] = v


cdef void sift(const double* key, int* idx, Py_ssize_t lo, Py_ssize_t root,
               Py_ssize_t size) noexcept nogil:
    """Restore the heap (the root ranks *last*) of idx[lo .. lo + size) below ``root``."""
    cdef Py_ssize_t child
    while 2 * root + 1 < size:
        child = 2 * root + 1
        if child + 1 < size and before(key, idx[lo + child], idx[lo + child + 1]):
            child += 1
        if before(key, idx[lo + root], idx[lo + child]):
            swap(idx, lo + root, lo + child)
            root = child
        else:
            return


cdef void heapsort(const double* key, int* idx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Sort idx[lo..hi] into ``before`` order in O(m log m): the introselect fallback."""
    cdef Py_ssize_t size = hi - lo + 1, i
    if size < 2:
        return
    i = size // 2 - 1
    while i >= 0:
        sift(key, idx, lo, i, size)
        i -= 1
    i = size - 1
    while i > 0:
        swap(idx, lo, lo + i)
        sift(key, idx, lo, 0, i)
        i -= 1


cdef void select_top(const double* key, int* idx, Py_ssize_t m, Py_ssize_t k,
                     int depth=-1) noexcept nogil:
    """Permute idx[0..m) (any permutation of indices into ``key``) so that idx[0..k) holds
    the k indices that rank first under :func:`before`: the largest keys, ties to the lower
    index. Quickselect (Hoare's FIND) with the median of three random positions as pivot and
    Lomuto's partition, expected O(m); after 2 log2(m) + 4 partitions the remaining range is
    heap-sorted (introselect, Musser 1997), so the worst case is O(m log m); ``depth`` >= 0
    overrides that limit (tests). The pivot positions come from a generator reseeded on
    every call: the result (the set, and its order) depends only on the keys and the input
    permutation."""
    cdef Py_ssize_t lo = 0, hi = m - 1, target = k - 1, i, store, p, a, b, c, span
    cdef unsigned long long st = 0x9E3779B97F4A7C15ULL
    cdef int pv
    if k <= 0 or k >= m:
        return
    if depth < 0:
        depth = 4
        span = m
        while span > 1:
            depth += 2
            span >>= 1
    while lo < hi:
        if hi - lo < SMALL and depth != 0:
            insertion(key, idx, lo, hi)
            return
        if depth == 0:
            heapsort(key, idx, lo, hi)
            return
        depth -= 1
        span = hi - lo + 1
        a = lo + <Py_ssize_t>(xorshift(&st) % <unsigned long long>span)
        b = lo + <Py_ssize_t>(xorshift(&st) % <unsigned long long>span)
        c = lo + <Py_ssize_t>(xorshift(&st) % <unsigned long long>span)
        # median of the three: p ranks between the other two
        if before(key, idx[a], idx[b]):
            if before(key, idx[b], idx[c]):
                p = b
            elif before(key, idx[a], idx[c]):
                p = c
            else:
                p = a
        else:
            if before(key, idx[a], idx[c]):
                p = a
            elif before(key, idx[b], idx[c]):
                p = c
            else:
                p = b
        swap(idx, p, hi)
        pv = idx[hi]
        store = lo
        for i in range(lo, hi):
            if before(key, idx[i], pv):
                swap(idx, i, store)
                store += 1
        swap(idx, store, hi)
        if store == target:
            return
        if store < target:
            lo = store + 1
        else:
            hi = store - 1


cdef int cmp_int(const void* a, const void* b) noexcept nogil:
    cdef int x = (<const int*>a)[0], y = (<const int*>b)[0]
    return (x > y) - (x < y)


cdef int cmp_desc(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    return (x < y) - (x > y)


cdef inline void sort_ints(int* v, Py_ssize_t m) noexcept nogil:
    if m > 1:
        qsort(v, m, sizeof(int), cmp_int)


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


cdef double sparse_step(const double* v, double* key, int* idx, Py_ssize_t d, Py_ssize_t s,
                        double radius, double* xt, double* mags, bint* exact) noexcept nogil:
    """The s-sparse projection of v onto the l1 ball: on return idx[0..s) holds the kept
    indices in increasing order and xt[0..s) their values; returns theta. ``key`` must hold
    |v|; ``exact`` says whether this is the full projection (no |v_j| left out exceeds
    theta)."""
    cdef Py_ssize_t t
    cdef double theta, mx = 0.0, a, vj
    select_top(key, idx, d, s)
    for t in range(s, d):
        if key[idx[t]] > mx:
            mx = key[idx[t]]
    sort_ints(idx, s)
    for t in range(s):
        mags[t] = key[idx[t]]
    theta = l1_threshold(mags, s, radius)
    for t in range(s):
        vj = v[idx[t]]
        a = fabs(vj) - theta
        if a > 0.0:
            xt[t] = a if vj > 0.0 else -a
        else:
            xt[t] = 0.0
    exact[0] = mx <= theta
    return theta


# ---------------------------------------------------------------------------------------------
# Python entry points for the tests and Algorithm 2
# ---------------------------------------------------------------------------------------------

def top_k(const double[::1] key, Py_ssize_t k):
    """The indices of the k largest keys (ties to the lower index), in increasing order:
    :func:`select_top` then a sort of the k (what both algorithms do)."""
    import numpy as np
    cdef Py_ssize_t m = key.shape[0]
    if not 0 <= k <= m:
        raise ValueError(f"k = {k} out of [0, {m}]")
    order = np.arange(m, dtype=np.int32)
    cdef int[::1] idx = order
    if m == 0 or k == 0:
        return order[:0].copy()
    with nogil:
        select_top(&key[0], &idx[0], m, k)
        sort_ints(&idx[0], k)
    return order[:k].copy()


def select_in_place(const double[::1] key, int[::1] idx, Py_ssize_t k, int depth=-1):
    """:func:`select_top` on a caller's permutation ``idx`` of range(len(key)); ``depth``:
    partitions before the heapsort fallback (-1: the default limit; 0: heapsort at once)
    (tests)."""
    if idx.shape[0] != key.shape[0] or not 0 <= k <= key.shape[0]:
        raise ValueError("idx must permute range(len(key)) and 0 <= k <= len(key)")
    if key.shape[0] > 0:
        with nogil:
            select_top(&key[0], &idx[0], key.shape[0], k, depth)


def sparse_l1_projection(const double[::1] v, Py_ssize_t s, double radius):
    """(x, theta, exact): the projection of v onto {||x||_1 <= radius, ||x||_0 <= s}, as the
    kernel's step (8) computes it; ``exact`` says it is also the projection onto the l1 ball
    alone (tests)."""
    import numpy as np
    cdef Py_ssize_t d = v.shape[0], t
    if not 1 <= s <= d:
        raise ValueError(f"s = {s} out of [1, {d}]")
    keys = np.abs(np.asarray(v))
    order = np.arange(d, dtype=np.int32)
    xt = np.zeros(s)
    mags = np.zeros(s)
    out = np.zeros(d)
    cdef double[::1] kv = keys, xv = xt, mv = mags, ov = out
    cdef int[::1] iv = order
    cdef bint exact = False
    cdef double theta
    with nogil:
        theta = sparse_step(&v[0], &kv[0], &iv[0], d, s, radius, &xv[0], &mv[0], &exact)
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
             double q_fixed, bint adapt, long long s_floor, bint k_auto, double[::1] v,
             double[::1] key_d, int[::1] idx_d, double[::1] xt, double[::1] mags,
             double[::1] cand, double[::1] key_n, int[::1] idx_n, long long[::1] info,
             long long budget):
    """PDBFW Algorithm 1 (see the module docstring): iterations (8)-(12) until ``budget``
    entries of A are read. ``x``, ``alpha``, ``w = A x`` and ``u = A^T alpha`` are updated in
    place and must be consistent at the call; ``v``, ``key_d``, ``xt``, ``mags`` (d),
    ``cand``, ``key_n`` (n) are scratch; ``idx_d`` and ``idx_n`` must hold permutations of
    range(d) and range(n) (kept between calls); ``info`` (long long[16]) holds s and k and
    receives the counters of ``INFO``."""
    cdef Lines R, C
    lines_init(&R, r_layout, r_data, r_indices, r_indptr, r_count, r_length, r_step, r_inc)
    lines_init(&C, c_layout, c_data, c_indices, c_indptr, c_count, c_length, c_step, c_inc)
    if R.layout != C.layout:
        raise ValueError("rows and columns must be stored alike (both sparse or both dense)")
    if R.layout == DENSE and (R.length != C.count or C.length != R.count):
        raise ValueError(f"dense rows ({R.count} x {R.length}) and columns ({C.count} x "
                         f"{C.length}) of different matrices")
    cdef Py_ssize_t n = R.count, d = C.count
    for arr, want, what in ((x, d, "x"), (u, d, "u"), (v, d, "v"), (key_d, d, "key_d"),
                            (xt, d, "xt"), (mags, d, "mags"), (alpha, n, "alpha"),
                            (w, n, "w"), (b, n, "b"), (cand, n, "cand"),
                            (key_n, n, "key_n")):
        check(arr.shape[0], want, what)
    check(idx_d.shape[0], d, "idx_d")
    check(idx_n.shape[0], n, "idx_n")
    if info.shape[0] < INFO_SIZE:
        raise ValueError(f"info needs {INFO_SIZE} entries")
    if loss != SMOOTH_HINGE and loss != SQUARED:
        raise ValueError("PDBFW takes the smooth hinge or the squared loss")
    if not (l2 > 0.0 and radius > 0.0 and 0.0 < eta <= 1.0 and (q_fixed > 0.0 or q_per_k > 0.0)):
        raise ValueError("need l2 > 0, radius > 0, 0 < eta <= 1 and a positive dual step")
    cdef Py_ssize_t s = info[I_S], k = info[I_K]
    if not (1 <= s <= d and 1 <= k <= n and 1 <= s_floor <= d):
        raise ValueError(f"need 1 <= s, s_floor <= {d} and 1 <= k <= {n}, got s = {s}, "
                         f"s_floor = {s_floor}, k = {k}")
    cdef double inv_n = 1.0 / n, step = l2 * eta, keep = 1.0 - eta, gj, q, a, da
    cdef long long touched = 0, iters = 0, work, xnnz, moved
    cdef Py_ssize_t j, i, t
    cdef bint exact = True
    with nogil:
        while touched < budget:
            # (8): v = x' - (z/n + mu x') / (L eta), z = -u, L = mu; the s-sparse projection
            for j in range(d):
                gj = l2 * x[j] - u[j] * inv_n
                v[j] = x[j] - gj / step
                key_d[j] = fabs(v[j])
            sparse_step(&v[0], &key_d[0], &idx_d[0], d, s, radius, &xt[0], &mags[0], &exact)
            # x = (1 - eta) x' + eta x~ and (9) w = (1 - eta) w + eta A x~
            for j in range(d):
                x[j] = keep * x[j]
            for i in range(n):
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
            # (10): the candidate of every row; (11): the k of largest |y~_i - y_i|
            q = q_fixed if q_fixed > 0.0 else q_per_k * k
            for i in range(n):
                cand[i] = dual_step_exact(loss, alpha[i], b[i], w[i], q)
                key_n[i] = fabs(cand[i] - alpha[i])
            select_top(&key_n[0], &idx_n[0], n, k)
            sort_ints(&idx_n[0], k)
            # (12): u = A^T alpha follows the rows that moved
            moved = 0
            for t in range(k):
                i = idx_n[t]
                da = cand[i] - alpha[i]
                if da != 0.0:
                    alpha[i] = cand[i]
                    line_axpy(&R, i, da, &u[0])
                    work += line_nnz(&R, i)
                    info[I_DUAL] += line_nnz(&R, i)
                    moved += 1
            touched += work if work > 0 else 1
            iters += 1
            info[I_ITERS] += 1
            info[I_EXACT] = exact
            info[I_XNNZ] = xnnz
            info[I_MOVED] = moved
            if adapt and ((not exact and s < d) or (exact and s > s_floor and 2 * xnnz < s)):
                if not exact:
                    s = 2 * s if 2 * s < d else d
                    info[I_GROWN] += 1
                else:
                    s = 2 * xnnz if 2 * xnnz > s_floor else s_floor
                if k_auto:
                    k = <Py_ssize_t>ceil(<double>n * s / d)
                    k = 1 if k < 1 else (n if k > n else k)
            info[I_S] = s
            info[I_K] = k
    return iters, touched
