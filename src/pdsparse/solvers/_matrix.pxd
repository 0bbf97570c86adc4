# cython: language_level=3
"""The lines (rows or columns) of a data matrix, sparse or dense, for any kernel.

A coordinate kernel reads A one line at a time: a row a_i (dual and primal-dual methods)
or a column A^j (primal methods). ``Lines`` describes one family of lines of one stored
copy of A, so that a kernel is written once for both storages:

* ``SPARSE``: the rows of a CSR or the columns of a CSC matrix, line k being
  ``data[indptr[k]:indptr[k + 1]]`` at positions ``indices[...]``;
* ``DENSE``: a dense C-order n x d array, read by rows (``step = d``, ``inc = 1``) or by
  columns (``step = 1``, ``inc = d``) of the *same* copy: dense features (random Fourier,
  DGPD's Mnist-RF is 58,000 x 10,000 = 4.6 GB) are never stored twice. Dense lines go
  through BLAS ``ddot`` / ``daxpy`` (``scipy.linalg.cython_blas``, as scikit-learn's
  ``_cd_fast.pyx`` does), which vectorize the contiguous rows and the strided columns.

Python builds the arguments with :meth:`pdsparse.problem.Problem.lines`: ``(layout, data,
indices, indptr, count, length, step, inc)``; :func:`lines_init` checks and wraps them.
"""

from libc.stdint cimport uint64_t
from scipy.linalg.cython_blas cimport daxpy, ddot

from pdsparse.solvers._sampling cimport Sampler, sampler_init_m

cdef enum:
    SPARSE = 0
    DENSE = 1


cdef struct Lines:
    int layout  # SPARSE or DENSE
    Py_ssize_t count  # number of lines (n for rows, d for columns)
    Py_ssize_t length  # entries of a dense line (the other dimension)
    Py_ssize_t step  # DENSE: distance in data between the starts of lines k and k + 1
    int inc  # DENSE: distance in data between consecutive entries of one line
    const double* data
    const int* indices  # SPARSE only (NULL otherwise)
    const int* indptr  # SPARSE only


cdef inline int lines_init(Lines* L, int layout, const double[::1] data,
                           const int[::1] indices, const int[::1] indptr,
                           Py_ssize_t count, Py_ssize_t length, Py_ssize_t step,
                           Py_ssize_t inc) except -1:
    """Fill ``L``; raises ValueError on arrays that do not describe ``count`` lines."""
    L.layout = layout
    L.count = count
    L.length = length
    L.data = &data[0] if data.shape[0] > 0 else NULL
    L.indices = NULL
    L.indptr = NULL
    L.step = 0
    L.inc = 1
    if count < 1:
        raise ValueError(f"a matrix with {count} lines")
    if layout == SPARSE:
        if indptr.shape[0] != count + 1:
            raise ValueError(f"indptr has {indptr.shape[0]} entries, expected {count + 1}")
        if indices.shape[0] != data.shape[0] or indptr[count] > data.shape[0]:
            raise ValueError("indices, data and indptr disagree in length")
        L.indices = &indices[0] if indices.shape[0] > 0 else NULL
        L.indptr = &indptr[0]
    elif layout == DENSE:
        if length < 1 or inc < 1 or inc >= 2**31 or step < 1:
            raise ValueError(f"dense lines: length {length}, step {step}, inc {inc}")
        if (count - 1) * step + (length - 1) * inc >= data.shape[0]:
            raise ValueError(f"dense lines overrun the {data.shape[0]} stored entries")
        L.step = step
        L.inc = <int>inc
    else:
        raise ValueError(f"unknown matrix layout {layout}")
    return 0


cdef inline long long line_nnz(const Lines* L, Py_ssize_t k) noexcept nogil:
    """Stored entries of line k: the unit of the kernels' work budgets."""
    if L.layout == SPARSE:
        return L.indptr[k + 1] - L.indptr[k]
    return L.length


cdef inline double line_dot(const Lines* L, Py_ssize_t k, const double* x) noexcept nogil:
    """<line k, x>, x indexed by the line's positions (length ``length`` when dense)."""
    cdef int p, start, end, n, one = 1
    cdef double acc = 0.0
    if L.layout == SPARSE:
        start = L.indptr[k]
        end = L.indptr[k + 1]
        for p in range(start, end):
            acc += L.data[p] * x[L.indices[p]]
        return acc
    n = <int>L.length
    return ddot(&n, <double*>(L.data + k * L.step), <int*>&L.inc, <double*>x, &one)


cdef inline double sparse_dot4(const double* data, const int* indices, int start, int end,
                               const double* x) noexcept nogil:
    """sum_p data[p] * x[indices[p]] over p in [start, end), in four interleaved partial
    sums (entry p into sum p mod 4, combined as (s0 + s1) + (s2 + s3)): one running sum
    is a chain of dependent additions, 4 cycles per entry whatever the memory delivers;
    four chains let the loads of a long row overlap (dual RCD's epoch: leu, 7,000 entries a
    row, 1.45x faster; dense 1,000 x 1,000 1.3x; gisette_scale.t, memory-bound, 1.1x). A fixed order: the same bits on every machine
    (no -ffast-math, no FMA contraction)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int p = start
    while p + 4 <= end:
        s0 += data[p] * x[indices[p]]
        s1 += data[p + 1] * x[indices[p + 1]]
        s2 += data[p + 2] * x[indices[p + 2]]
        s3 += data[p + 3] * x[indices[p + 3]]
        p += 4
    if p < end:
        s0 += data[p] * x[indices[p]]
        if p + 1 < end:
            s1 += data[p + 1] * x[indices[p + 1]]
            if p + 2 < end:
                s2 += data[p + 2] * x[indices[p + 2]]
    return (s0 + s1) + (s2 + s3)


cdef inline void line_axpy(const Lines* L, Py_ssize_t k, double a, double* y) noexcept nogil:
    """y += a * line k."""
    cdef int p, start, end, n, one = 1
    if L.layout == SPARSE:
        start = L.indptr[k]
        end = L.indptr[k + 1]
        for p in range(start, end):
            y[L.indices[p]] += a * L.data[p]
        return
    n = <int>L.length
    daxpy(&n, &a, <double*>(L.data + k * L.step), <int*>&L.inc, y, &one)


cdef inline double line_entry(const Lines* L, Py_ssize_t k, Py_ssize_t pos) noexcept nogil:
    """The entry of line k at position ``pos`` (a search in a sparse line: O(log nnz))."""
    cdef int lo, hi, mid
    if L.layout == DENSE:
        return L.data[k * L.step + pos * L.inc]
    lo = L.indptr[k]
    hi = L.indptr[k + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if L.indices[mid] < pos:
            lo = mid + 1
        else:
            hi = mid
    if lo < L.indptr[k + 1] and L.indices[lo] == pos:
        return L.data[lo]
    return 0.0


cdef inline int sampler_init_lines(Sampler* s, int mode, uint64_t[::1] state,
                                   const double[::1] prob, const int[::1] alias,
                                   int[::1] perm, long long[::1] pos,
                                   const Lines* L) except -1:
    """A :class:`Sampler` over the lines of ``L`` (prefetching the entries of sparse lines)."""
    if L.layout == SPARSE:
        return sampler_init_m(s, mode, state, prob, alias, perm, pos, L.count, L.indptr,
                              L.data, L.indices)
    return sampler_init_m(s, mode, state, prob, alias, perm, pos, L.count, NULL, NULL, NULL)
