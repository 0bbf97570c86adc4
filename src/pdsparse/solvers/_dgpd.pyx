# cython: language_level=3
"""Doubly Greedy Primal-Dual coordinate descent (DGPD) of Lei, Yen, Wu, Dhillon & Ravikumar,
ICML 2017: Algorithm 1 (:func:`dgpd_full`) and Algorithm 2 with active sets (:func:`dgpd`,
the method of the paper's experiments, Sec. 5), on typed memoryviews of the rows and the
columns of A (``_matrix.pxd`` ``Lines``: CSR + CSC, or one dense C-order array).

Problem: P(x) = 1/n sum_i phi_i(a_i^T x) + g(x), g(x) = mu/2 ||x||^2 + lambda ||x||_1, and the
saddle function (3) L(x, y) = g(x) + 1/n y^T A x - 1/n sum_i phi_i^*(y_i).

House convention (``_losses.pxd``, ``pdsparse.objective``): the dual variable is
``alpha = -y`` (phi_i^*(y_i) = phi_i^*(-alpha_i), the term ``loss_conj_neg`` evaluates), so
the kernels keep

* ``x`` (d): DGPD's x, the house's primal w;
* ``alpha`` (n): -y;
* ``m`` (n): margins A x (DGPD's w);
* ``u`` (d): A^T alpha = -z (DGPD's z = A^T y);

and x_bar(y) = argmin_x L(x, y) = soft(u / n, lambda) / mu (eq. (4), the house's
``objective.w_of_alpha``).

**The dual step (8)/(13)** argmax_beta {1/n <a_i, x> beta - 1/n phi_i^*(beta) - (beta -
y_i)^2 / (2 eta)}, multiplied by n and written in a = -beta, is argmax_a {-phi_i^*(-a) -
(a - alpha_i) <a_i, x> - (n / eta) (a - alpha_i)^2 / 2}: ``dual_step_exact(loss, alpha_i,
b_i, z = <a_i, x>, q = n / eta)`` (the house's one 1-D dual step; tested). Algorithm 1's (8)
prints phi^* without the 1/n, a typo against the saddle function (3) and against (13).

**The greedy dual rule (7)/(12)** is Gauss-Southwell on grad_y L(x, y)_k = 1/n (<a_k, x> -
(phi_k^*)'(y_k)) (the printed rules put the 1/n on the second term only, a slip: at a saddle
point <a_k, x> = (phi_k^*)'(y_k) with no factor). The constant 1/n is dropped. Where y_k is on
the boundary of dom phi_k^* (smooth hinge, logistic: t = b_k alpha_k in {0, 1}) the
gradient is the minimum-norm element of the supergradient set, i.e. 0 when it points out of
the domain (the projected gradient): otherwise a coordinate whose step is zero (a row with
margin > 1 at alpha_k = 0) would be selected forever. Inside the domain this is the printed
rule. For the logistic loss |(phi^*)'| = inf at t in {0, 1}, so every row at alpha_k = 0 ties
at +inf and the lowest index wins.

Ties in every argmax / argmin are broken towards the lowest index.

**Step size** (Theorem 4.2, eq. (16)): eta = 2 n^2 mu / ((5 R^2 + n gamma mu) s), R =
max_i ||a_i||, phi_i (1/gamma)-smooth, s the sparsity bound; as q = n / eta = q_per_s * s,
where the caller passes ``q_per_s`` = (5 R^2 + n gamma mu) / (2 n mu) divided by the eta
multiplier, or a fixed ``q_fixed`` > 0 (an absolute eta). Algorithm 1 uses s = max(1,
||x - x_bar||_0), counted in its O(d) primal scan before the primal update; Algorithm 2 uses
s = max(1, |A_x|) after the search.

**Work.** A call advances the state until ``budget`` units of work are done (and at least one
iteration) and returns ``(iterations, touched)``; one unit is one stored entry of A read (a
line in a search, an entry of the active submatrix in an inner pass) or one coordinate
examined or updated by a greedy scan or a block update. Iterations are Algorithm 1's t or
Algorithm 2's outer iterations (one search and its inner passes). All state lives in
caller-owned arrays, so chunked calls reproduce one long call exactly.
"""

from libc.math cimport fabs

from pdsparse._losses cimport LOGISTIC, SQUARED, conj_deriv, dual_step_exact
from pdsparse.solvers._matrix cimport DENSE, Lines, line_axpy, line_entry, line_nnz, lines_init

# Slots of the caller-owned ``info`` (long long, zero at the start) of both kernels.
cdef enum:
    I_NX = 0  # |A_x|: act_x[:nx] is the primal active set (Algorithm 2)
    I_NY = 1  # |A_y|
    I_NLIST_D = 2  # columns touched by the last recomputation of u (sparse)
    I_NLIST_N = 3  # rows touched by the last recomputation of m (sparse)
    I_NEED = 4  # > 0: the active submatrix needs this capacity; grow ridx/rval and call again
    I_SEARCH = 5  # cumulative work of the searches (10), (12) and the submatrix builds
    I_INNER = 6  # cumulative work of the inner passes (11), (13)
    I_J = 7  # last primal coordinate chosen ((5) or (10); -1: none)
    I_I = 8  # last dual coordinate chosen ((7) or (12); -1: none)
    I_S = 9  # s of the last dual step
    I_SUBNNZ = 10  # entries of the last active submatrix
    I_ITERS = 11  # iterations so far
    INFO_SIZE = 16

# s of the Theorem 4.2 step in Algorithm 2 (``dgpd``'s ``s_rule``)
cpdef enum:
    S_ACTIVE = 0  # max(1, |A_x|) after the search (as Algorithm 2 applies the theorem)
    S_MOVED = 1  # max(1, ||x - x_bar(y)||_0) at the search (eq. (16) literally)

INFO = {"nx": I_NX, "ny": I_NY, "nlist_d": I_NLIST_D, "nlist_n": I_NLIST_N, "need": I_NEED,
        "search": I_SEARCH, "inner": I_INNER, "j": I_J, "i": I_I, "s": I_S,
        "subnnz": I_SUBNNZ, "iters": I_ITERS, "size": INFO_SIZE}
"""Slots of ``info``, by name (for the Python side)."""


cdef inline double soft_l2(double v, double l1, double l2) noexcept nogil:
    """argmin_a {-v a + l2/2 a^2 + l1 |a|} = soft(v, l1) / l2: eq. (4) with v = u_k / n."""
    if v > l1:
        return (v - l1) / l2
    if v < -l1:
        return (v + l1) / l2
    return 0.0


cdef inline double g_coord(double a, double l1, double l2) noexcept nogil:
    """g_k(a) = mu/2 a^2 + lambda |a|."""
    return 0.5 * l2 * a * a + l1 * fabs(a)


cdef inline double dual_grad(int loss, double m, double alpha, double b) noexcept nogil:
    """n grad_{y_k} L = <a_k, x> - (phi_k^*)'(y_k), projected at the boundary of the domain.

    t = b alpha = -b y moves by -b dy, so the ascent direction in t is -b g: at t = 0 (t = 1)
    a gradient with b g > 0 (< 0) points out of the domain and the minimum-norm supergradient
    is 0.
    """
    cdef double g = m - conj_deriv(loss, alpha, b)
    cdef double t
    if loss != SQUARED:
        t = b * alpha
        if (t <= 0.0 and b * g > 0.0) or (t >= 1.0 and b * g < 0.0):
            return 0.0
    return g


cdef inline bint better(double v, Py_ssize_t k, double best, Py_ssize_t kbest) noexcept nogil:
    """v at k beats best at kbest: larger, or equal and at a lower index (kbest >= 0)."""
    return v > best or (v == best and kbest >= 0 and k < kbest)


cdef inline Py_ssize_t top_insert(double v, Py_ssize_t k, double* vals, int* idx,
                                  Py_ssize_t cnt, Py_ssize_t size) noexcept nogil:
    """Insert (v, k) into the ``cnt`` best so far, ``vals[:cnt]`` / ``idx[:cnt]`` ordered by
    :func:`better` (largest first, ties to the lowest index), keeping at most ``size``;
    returns the new count. ``size`` = 1 is a running argmax."""
    cdef Py_ssize_t p = cnt
    while p > 0 and better(v, k, vals[p - 1], idx[p - 1]):
        p -= 1
    if p >= size:
        return cnt
    if cnt == size:
        cnt -= 1
    cdef Py_ssize_t t = cnt
    while t > p:
        vals[t] = vals[t - 1]
        idx[t] = idx[t - 1]
        t -= 1
    vals[p] = v
    idx[p] = <int>k
    return cnt + 1


def conj_derivs(int loss, const double[::1] alpha, const double[::1] b):
    """(phi_k^*)'(-alpha_k) for every k (tests)."""
    import numpy as np
    out = np.empty(alpha.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t k
    for k in range(alpha.shape[0]):
        o[k] = conj_deriv(loss, alpha[k], b[k])
    return out


def dual_grads(int loss, const double[::1] m, const double[::1] alpha, const double[::1] b):
    """The projected dual gradients of (7)/(12), times n, for every k (tests)."""
    import numpy as np
    out = np.empty(alpha.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t k
    for k in range(alpha.shape[0]):
        o[k] = dual_grad(loss, m[k], alpha[k], b[k])
    return out


cdef inline int check(Py_ssize_t got, Py_ssize_t want, str what) except -1:
    if got != want:
        raise ValueError(f"{what} has {got} entries, expected {want}")
    return 0


cdef int init_rows_cols(Lines* R, Lines* C, int r_layout, const double[::1] r_data,
                        const int[::1] r_indices, const int[::1] r_indptr, Py_ssize_t r_count,
                        Py_ssize_t r_length, Py_ssize_t r_step, Py_ssize_t r_inc,
                        int c_layout, const double[::1] c_data, const int[::1] c_indices,
                        const int[::1] c_indptr, Py_ssize_t c_count, Py_ssize_t c_length,
                        Py_ssize_t c_step, Py_ssize_t c_inc) except -1:
    lines_init(R, r_layout, r_data, r_indices, r_indptr, r_count, r_length, r_step, r_inc)
    lines_init(C, c_layout, c_data, c_indices, c_indptr, c_count, c_length, c_step, c_inc)
    if R.layout != C.layout:
        raise ValueError("rows and columns must be stored alike (both sparse or both dense)")
    if R.layout == DENSE and (R.length != C.count or C.length != R.count):
        raise ValueError(f"dense rows ({R.count} x {R.length}) and columns ({C.count} x "
                         f"{C.length}) of different matrices")
    return 0


# ---------------------------------------------------------------------------------------------
# Algorithm 1
# ---------------------------------------------------------------------------------------------

def dgpd_full(int r_layout, const double[::1] r_data, const int[::1] r_indices,
              const int[::1] r_indptr, Py_ssize_t r_count, Py_ssize_t r_length,
              Py_ssize_t r_step, Py_ssize_t r_inc,
              int c_layout, const double[::1] c_data, const int[::1] c_indices,
              const int[::1] c_indptr, Py_ssize_t c_count, Py_ssize_t c_length,
              Py_ssize_t c_step, Py_ssize_t c_inc,
              const double[::1] b, double[::1] x, double[::1] alpha, double[::1] m,
              double[::1] u, double l2, double l1, int loss, double q_per_s, double q_fixed,
              long long[::1] info, long long budget):
    """DGPD Algorithm 1: per iteration t,

    (5) x_bar_k = soft(u_k / n, lambda) / mu for all k in [d] and j = argmin_k
        {-(u_k / n)(x_bar_k - x_k) + g_k(x_bar_k) - g_k(x_k)} (= L(x + (x_bar_k - x_k) e_k, y)
        - L(x, y); z = -u), x_j <- x_bar_j; s = max(1, #{k: x_bar_k != x_k}) on the way;
    (6) m += (x_j_new - x_j_old) A^j;
    (7) i = argmax_k |m_k - (phi_k^*)'(y_k)| over [n] (projected, see the module docstring),
        with the updated margins m (the step (8) uses w^(t); (7) prints w^(t-1), an index
        slip: Algorithm 2's (12) and the analysis use x^(t));
    (8) alpha_i <- dual_step_exact(loss, alpha_i, b_i, m_i, q), q = q_fixed or q_per_s * s;
    (9) u += (alpha_i_new - alpha_i_old) a_i.

    Cost per iteration O(n + d + nnz(A^j) + nnz(a_i)), counted as d + n + the entries of the
    two lines read. ``x``, ``alpha``, ``m = A x``, ``u = A^T alpha`` are updated in place
    (m and u must be consistent with x and alpha at the call); ``info`` (long long[16])
    receives the last j, i and s.
    """
    cdef Lines R, C
    init_rows_cols(&R, &C, r_layout, r_data, r_indices, r_indptr, r_count, r_length, r_step,
                   r_inc, c_layout, c_data, c_indices, c_indptr, c_count, c_length, c_step,
                   c_inc)
    cdef Py_ssize_t n = R.count, d = C.count
    check(x.shape[0], d, "x")
    check(u.shape[0], d, "u")
    check(alpha.shape[0], n, "alpha")
    check(m.shape[0], n, "m")
    check(b.shape[0], n, "b")
    if info.shape[0] < INFO_SIZE:
        raise ValueError(f"info needs {INFO_SIZE} entries")
    if not (l2 > 0.0 and l1 >= 0.0 and (q_fixed > 0.0 or q_per_s > 0.0)):
        raise ValueError("need l2 > 0, l1 >= 0 and a positive step")
    cdef double inv_n = 1.0 / n
    cdef long long touched = 0, iters = 0, work, s
    cdef Py_ssize_t k, j, i
    cdef double v, xb, xk, dk, best, xbj, dx, gk, q, anew, da
    with nogil:
        while touched < budget:
            # (5): the primal coordinate of most descent of L(., y), s = ||x - x_bar||_0
            best = 0.0
            j = -1
            xbj = 0.0
            s = 0
            for k in range(d):
                v = u[k] * inv_n
                xb = soft_l2(v, l1, l2)
                xk = x[k]
                if xb != xk:
                    s += 1
                    dk = -v * (xb - xk) + (g_coord(xb, l1, l2) - g_coord(xk, l1, l2))
                else:
                    dk = 0.0
                if j < 0 or dk < best:
                    best = dk
                    j = k
                    xbj = xb
            work = d
            # (6)
            dx = xbj - x[j]
            if dx != 0.0:
                x[j] = xbj
                line_axpy(&C, j, dx, &m[0])
                work += line_nnz(&C, j)
            # (7): Gauss-Southwell on the (projected) dual gradient at the new margins
            best = 0.0
            i = -1
            for k in range(n):
                gk = fabs(dual_grad(loss, m[k], alpha[k], b[k]))
                if i < 0 or gk > best:
                    best = gk
                    i = k
            work += n
            # (8), (9)
            if s < 1:
                s = 1
            q = q_fixed if q_fixed > 0.0 else q_per_s * s
            anew = dual_step_exact(loss, alpha[i], b[i], m[i], q)
            da = anew - alpha[i]
            if da != 0.0:
                alpha[i] = anew
                line_axpy(&R, i, da, &u[0])
                work += line_nnz(&R, i)
            touched += work
            iters += 1
            info[I_J] = j
            info[I_I] = i
            info[I_S] = s
            info[I_ITERS] += 1
    return iters, touched


# ---------------------------------------------------------------------------------------------
# Algorithm 2
# ---------------------------------------------------------------------------------------------

cdef inline long long gather(const Lines* L, const int* act, Py_ssize_t nact, const double* coef,
                             double* out, Py_ssize_t length, signed char* mark, int* lst,
                             long long* nlist, const int* extra, Py_ssize_t nextra) noexcept nogil:
    """out <- sum_{t < nact} coef[act[t]] line act[t] (eq. (14)); returns the entries read.

    Sparse: only the positions written since the last call are cleared (the previous list
    ``lst[:nlist]`` and ``extra[:nextra]``), and the positions touched now are listed in
    ``lst`` (``mark`` flags them), so that the cost is the entries of the lines, not
    ``length``. Dense: ``out`` is cleared and every position counts as touched.
    """
    cdef Py_ssize_t t, k, p
    cdef long long reads = 0, cnt
    cdef double c
    cdef int pos
    if L.layout == DENSE:
        for k in range(length):
            out[k] = 0.0
        for t in range(nact):
            c = coef[act[t]]
            if c != 0.0:
                line_axpy(L, act[t], c, out)
                reads += L.length
        nlist[0] = length
        return reads
    for t in range(nlist[0]):
        out[lst[t]] = 0.0
        mark[lst[t]] = 0
    for t in range(nextra):
        out[extra[t]] = 0.0
    cnt = 0
    for t in range(nact):
        k = act[t]
        c = coef[k]
        if c == 0.0:
            continue
        for p in range(L.indptr[k], L.indptr[k + 1]):
            pos = L.indices[p]
            if not mark[pos]:
                mark[pos] = 1
                lst[cnt] = pos
                cnt += 1
            out[pos] += c * L.data[p]
        reads += L.indptr[k + 1] - L.indptr[k]
    nlist[0] = cnt
    return reads


def dgpd(int r_layout, const double[::1] r_data, const int[::1] r_indices,
         const int[::1] r_indptr, Py_ssize_t r_count, Py_ssize_t r_length,
         Py_ssize_t r_step, Py_ssize_t r_inc,
         int c_layout, const double[::1] c_data, const int[::1] c_indices,
         const int[::1] c_indptr, Py_ssize_t c_count, Py_ssize_t c_length,
         Py_ssize_t c_step, Py_ssize_t c_inc,
         const double[::1] b, const int[::1] order, double[::1] x, double[::1] alpha,
         double[::1] m, double[::1] u, int[::1] act_x, int[::1] act_y,
         signed char[::1] in_x, signed char[::1] in_y, int[::1] list_d, int[::1] list_n,
         signed char[::1] mark_d, signed char[::1] mark_n,
         int[::1] rptr, int[::1] ridx, double[::1] rval,
         double l2, double l1, int loss, double q_per_s, double q_fixed, int inner,
         long long max_row_nnz, long long[::1] info, long long budget,
         int batch=1, bint gauss_seidel=False, int s_rule=S_ACTIVE,
         double[::1] top_v=None, int[::1] top_i=None):
    """DGPD Algorithm 2 (active sets), ``inner`` passes per search (Sec. 5 uses 5).

    One outer iteration (as printed with ``batch`` = 1, ``gauss_seidel`` off, ``s_rule`` =
    ``S_ACTIVE``; the three are the choices the paper leaves open, see below):

    1. (10), with eq. (14): u = A^T alpha from the rows of A_y, then j = argmax_{k not in A_x}
       |x_bar_k| = argmax |u_k| among |u_k| / n > lambda (soft thresholding is monotone);
       A_x += {j} if x_bar_j != 0. With ``batch`` = B the B largest join, best first (Sec.
       3: "the extension to a batch of coordinates is straightforward").
    2. (11): x_k <- x_bar_k for k in A_x (given y, the primal block update is exact and
       separable).
    3. (12), with eq. (14): m = A x from the columns of A_x, then i = argmax_{k not in A_y}
       |m_k - (phi_k^*)'(y_k)| (projected; at y_k = 0); A_y += {i} if it is > 0 (the B
       largest with ``batch`` = B).
    4. The active submatrix [A]_{A_y, A_x} is rebuilt as a CSR (``rptr``, ``ridx``, ``rval``):
       the rows of A_y in ``act_y`` order restricted to the columns of A_x (sparse: in
       column order, by a scan of the row; dense: in ``act_x`` order).
    5. (13) for i in A_y: m_i = <[a_i]_{A_x}, x>, the dual step with q = q_fixed or
       q_per_s * s, u_{A_x} += (delta alpha_i) [a_i]_{A_x}; s = max(1, |A_x|) (``S_ACTIVE``,
       Theorem 4.2 as Algorithm 2 applies it) or s = max(1, ||x - x_bar(y)||_0) counted at
       the search before step 2 (``S_MOVED``, eq. (16) literally, as Algorithm 1 counts it).
       With ``gauss_seidel`` each dual step also refreshes x_k = x_bar_k on the row's
       active columns (its u_k just changed), so the next row's m_i sees the new x; as
       printed (Jacobi) x is refreshed once per pass, by (11).
    6. ``inner - 1`` more passes of (11) (Jacobi only: under Gauss-Seidel x = x_bar on A_x
       already) then (13) on the active sets.
    7. Step 6 of the algorithm: rows with alpha_i = 0 and columns with x_j = 0 leave the
       active sets (which stay the supports; order kept).

    Cost: the searches read the active rows and columns of A once each (sum_{A_y} nnz(a_i) +
    sum_{A_x} nnz(A^j), the paper's nnz_x |A_y| + nnz_y |A_x|, Sec. 3.2) and scan only the
    touched positions (sparse; dense: n + d); the build reads the active rows once more; an
    inner pass costs |A_x| + |A_y| + twice the submatrix entries. Nothing costs n d or, for
    sparse data, n + d: untouched rows (m_k = 0) are ranked through ``order`` (the rows by
    |b_k| descending, then index: their dual gradient depends on b_k only), walked past the
    touched and active rows.

    u is recomputed at every search, not maintained on the full rows: keeping all of A^T y
    would make every dual step cost nnz(a_i) instead of nnz([a_i]_{A_x}), ``inner`` times per
    search, against one pass over the active rows here. Between searches u is kept on A_x
    only, and m only through the submatrix rows.

    State: ``x``, ``alpha``, the active lists ``act_x[:nx]``, ``act_y[:ny]`` with flags
    ``in_x``, ``in_y`` (nx, ny in ``info``), ``u``, ``m`` with their touched lists
    ``list_d``/``list_n`` and flags ``mark_d``/``mark_n``; ``rptr`` (n + 1), ``ridx``,
    ``rval`` are scratch whose capacity must cover the submatrix: an outer iteration starts
    only if sum_{A_y} min(nnz(a_i), |A_x| + B) + B min(max_row_nnz, |A_x| + B) fits, otherwise
    the call returns with that number in ``info[I_NEED]`` (grow and call again; the state
    is untouched); ``top_v``, ``top_i`` are scratch of at least B entries (B > 1). Start: x =
    0, u = 0, m = 0, flags 0, and A_y = supp(alpha) (any order).
    """
    cdef Lines R, C
    init_rows_cols(&R, &C, r_layout, r_data, r_indices, r_indptr, r_count, r_length, r_step,
                   r_inc, c_layout, c_data, c_indices, c_indptr, c_count, c_length, c_step,
                   c_inc)
    cdef Py_ssize_t n = R.count, d = C.count
    for arr, want, what in ((x.shape[0], d, "x"), (u.shape[0], d, "u"),
                            (act_x.shape[0], d, "act_x"), (in_x.shape[0], d, "in_x"),
                            (list_d.shape[0], d, "list_d"), (mark_d.shape[0], d, "mark_d"),
                            (alpha.shape[0], n, "alpha"), (m.shape[0], n, "m"),
                            (b.shape[0], n, "b"), (order.shape[0], n, "order"),
                            (act_y.shape[0], n, "act_y"), (in_y.shape[0], n, "in_y"),
                            (list_n.shape[0], n, "list_n"), (mark_n.shape[0], n, "mark_n"),
                            (rptr.shape[0], n + 1, "rptr"),
                            (rval.shape[0], ridx.shape[0], "rval")):
        check(arr, want, what)
    if info.shape[0] < INFO_SIZE:
        raise ValueError(f"info needs {INFO_SIZE} entries")
    if not (l2 > 0.0 and l1 >= 0.0 and (q_fixed > 0.0 or q_per_s > 0.0) and inner >= 1):
        raise ValueError("need l2 > 0, l1 >= 0, a positive step and inner >= 1")
    if s_rule not in (S_ACTIVE, S_MOVED) or batch < 1:
        raise ValueError(f"need batch >= 1 and s_rule in ({S_ACTIVE}, {S_MOVED})")
    cdef double one_v = 0.0
    cdef int one_i = 0
    cdef double* tv = &one_v
    cdef int* ti = &one_i
    if batch > 1:
        if top_v is None or top_i is None or top_v.shape[0] < batch or top_i.shape[0] < batch:
            raise ValueError(f"batch {batch} needs top_v and top_i of at least {batch} entries")
        tv = &top_v[0]
        ti = &top_i[0]
    if not (0 <= info[I_NX] <= d and 0 <= info[I_NY] <= n):
        raise ValueError("info holds inconsistent active-set sizes")
    cdef double inv_n = 1.0 / n
    cdef long long cap = ridx.shape[0]
    cdef long long touched = 0, iters = 0, search, work, need, rl, nl, cnt, moved
    cdef Py_ssize_t nx = info[I_NX], ny = info[I_NY]
    cdef Py_ssize_t t, r, k, j, i, p, e, e0, e1, pss, ntop, found
    cdef double best, a, gk, q, mi, ai, anew, da
    cdef long long nlist_d = info[I_NLIST_D], nlist_n = info[I_NLIST_N]
    cdef bint dense = R.layout == DENSE
    cdef int* ax = &act_x[0]
    cdef int* ay = &act_y[0]
    with nogil:
        while touched < budget:
            # capacity of the active submatrix for this outer iteration (one more row, column)
            need = batch * min(max_row_nnz, nx + batch)
            for r in range(ny):
                need += min(line_nnz(&R, ay[r]), nx + batch)
            if need > cap:
                info[I_NEED] = need
                break
            # 1. (10) with (14): u = A^T alpha over the active rows; touched columns only
            search = gather(&R, ay, ny, &alpha[0], &u[0], d, &mark_d[0], &list_d[0],
                            &nlist_d, ax, nx)
            ntop = 0
            moved = 0
            cnt = nlist_d
            for t in range(cnt):
                k = t if dense else list_d[t]
                if s_rule == S_MOVED and soft_l2(u[k] * inv_n, l1, l2) != x[k]:
                    moved += 1
                if in_x[k]:
                    continue
                a = fabs(u[k])
                if a * inv_n > l1:
                    ntop = top_insert(a, k, tv, ti, ntop, batch)
            search += cnt
            if s_rule == S_MOVED and not dense:
                # active columns no active row reaches: u_k = 0, so x_bar_k = 0
                for t in range(nx):
                    k = ax[t]
                    if not mark_d[k] and x[k] != 0.0:
                        moved += 1
                search += nx
            j = ti[0] if ntop > 0 else -1
            for t in range(ntop):
                ax[nx] = ti[t]
                nx += 1
                in_x[ti[t]] = 1
            # 2. (11), first pass
            for t in range(nx):
                k = ax[t]
                x[k] = soft_l2(u[k] * inv_n, l1, l2)
            work = nx
            # 3. (12) with (14): m = A x over the active columns; touched rows, then the best
            # untouched row (m_k = 0) through ``order``
            search += gather(&C, ax, nx, &x[0], &m[0], n, &mark_n[0], &list_n[0],
                             &nlist_n, NULL, 0)
            ntop = 0
            cnt = nlist_n
            for t in range(cnt):
                k = t if dense else list_n[t]
                if in_y[k]:
                    continue
                gk = fabs(dual_grad(loss, m[k], alpha[k], b[k]))
                if gk > 0.0:
                    ntop = top_insert(gk, k, tv, ti, ntop, batch)
            search += cnt
            if not dense:
                # the untouched rows best first: the first B free ones compete
                found = 0
                for t in range(n):
                    if found >= batch:
                        break
                    k = order[t]
                    search += 1
                    if in_y[k] or mark_n[k]:
                        continue
                    found += 1
                    gk = fabs(dual_grad(loss, 0.0, alpha[k], b[k]))
                    if gk > 0.0:
                        ntop = top_insert(gk, k, tv, ti, ntop, batch)
            i = ti[0] if ntop > 0 else -1
            info[I_J] = j
            info[I_I] = i
            for t in range(ntop):
                ay[ny] = ti[t]
                ny += 1
                in_y[ti[t]] = 1
            # 4. the active submatrix, rows of A_y restricted to the columns of A_x
            e = 0
            rptr[0] = 0
            for r in range(ny):
                i = ay[r]
                if dense:
                    for t in range(nx):
                        a = line_entry(&R, i, ax[t])
                        if a != 0.0:
                            ridx[e] = ax[t]
                            rval[e] = a
                            e += 1
                    search += nx
                else:
                    for p in range(R.indptr[i], R.indptr[i + 1]):
                        if in_x[R.indices[p]]:
                            ridx[e] = R.indices[p]
                            rval[e] = R.data[p]
                            e += 1
                    search += R.indptr[i + 1] - R.indptr[i]
                rptr[r + 1] = <int>e
            info[I_SUBNNZ] = e
            if s_rule == S_MOVED:
                info[I_S] = moved if moved > 1 else 1
            else:
                info[I_S] = nx if nx > 1 else 1
            q = q_fixed if q_fixed > 0.0 else q_per_s * info[I_S]
            # 5., 6. inner passes: (13) on A_y, then (11) on A_x again
            for pss in range(inner):
                if pss > 0 and not gauss_seidel:
                    for t in range(nx):
                        k = ax[t]
                        x[k] = soft_l2(u[k] * inv_n, l1, l2)
                    work += nx
                for r in range(ny):
                    i = ay[r]
                    e0 = rptr[r]
                    e1 = rptr[r + 1]
                    mi = 0.0
                    for e in range(e0, e1):
                        mi += rval[e] * x[ridx[e]]
                    ai = alpha[i]
                    anew = dual_step_exact(loss, ai, b[i], mi, q)
                    work += e1 - e0 + 1
                    if anew != ai:
                        alpha[i] = anew
                        da = anew - ai
                        for e in range(e0, e1):
                            u[ridx[e]] += da * rval[e]
                        work += e1 - e0
                        if gauss_seidel:
                            for e in range(e0, e1):
                                k = ridx[e]
                                x[k] = soft_l2(u[k] * inv_n, l1, l2)
                            work += e1 - e0
            # 7. kick out zeros (step 6): the active sets stay the supports
            t = 0
            for r in range(nx):
                k = ax[r]
                if x[k] != 0.0:
                    ax[t] = <int>k
                    t += 1
                else:
                    in_x[k] = 0
                    u[k] = 0.0  # written by the inner passes; the next gather clears A_x only
            nx = t
            t = 0
            for r in range(ny):
                k = ay[r]
                if alpha[k] != 0.0:
                    ay[t] = <int>k
                    t += 1
                else:
                    in_y[k] = 0
            ny = t
            if search + work == 0:
                work = 1  # an empty problem still ends the loop
            info[I_SEARCH] += search
            info[I_INNER] += work
            info[I_ITERS] += 1
            touched += search + work
            iters += 1
        info[I_NX] = nx
        info[I_NY] = ny
        info[I_NLIST_D] = nlist_d
        info[I_NLIST_N] = nlist_n
    return iters, touched
