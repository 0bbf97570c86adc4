# cython: language_level=3
"""Seeded random numbers, O(1) weighted draws, and the coordinate sampler of every kernel.

xoshiro256** (Blackman & Vigna, 2018) seeded through splitmix64: fast, with a
state of four uint64 that the kernels carry between calls so that a run split
into chunks draws exactly the same coordinates as one uninterrupted call.

A kernel over the rows (or columns) of a CSR (CSC) matrix gets its coordinates,
and the prefetching that hides their memory latency, from one ``Sampler``::

    from pdsparse.solvers._sampling cimport Sampler, sampler_init, sampler_next, pd_prefetch

    cdef Sampler smp
    sampler_init(&smp, mode, state, prob, alias, perm, perm_pos, indptr, data, indices)
    with nogil:
        while ...:
            j = sampler_next(&smp)          # this iteration's coordinate
            if smp.ahead >= 0:              # the coordinate LOOKAHEAD iterations on:
                pd_prefetch(&x[smp.ahead])  # prefetch the kernel's own arrays at it
            ... update coordinate j from data[indptr[j]:indptr[j + 1]] ...

Why the lookahead: a random coordinate's row lies anywhere in memory, so once A
outgrows the cache every iteration would stall on three dependent loads (the alias
table entry, the row pointer, the row's entries), and a short row does too little work
to hide them. The sampler therefore draws ahead with a second copy of the random
stream, in three stages LOOKAHEAD iterations apart, each prefetching what the next
stage reads: the draw (prefetching its alias-table entry), the resolved coordinate
(prefetching its row pointer) and, LOOKAHEAD iterations before its use, the row's
entries. The copy only prefetches: the coordinates used come from the caller's
stream, so results are bit-identical with and without it. A permutation order needs
no copy: its future coordinates are already in the array, up to the epoch's end.
"""

from libc.stdint cimport uint64_t

cdef extern from *:
    """
    #ifndef PD_PREFETCH
    #define PD_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #endif
    """
    void pd_prefetch "PD_PREFETCH"(const void* p) noexcept nogil

# sampling modes (the kernels' ``mode`` argument; Python names in ``_sampling.MODES``)
cdef enum:
    UNIFORM = 0
    ALIAS = 1  # importance sampling through a Walker alias table
    PERMUTATION = 2  # a fresh random order every m draws

cdef enum:
    LOOKAHEAD = 4  # iterations between the lookahead's stages
    RING = 16  # power of two > 3 * LOOKAHEAD: slots of drawn-ahead coordinates
    PREFETCH_MAX = 128  # entries of a row or column prefetched ahead (16 cache lines of data)


# ---- the random stream ----

cdef inline uint64_t rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t next_u64(uint64_t* s) noexcept nogil:
    cdef uint64_t result = rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 45)
    return result


cdef inline double next_double(uint64_t* s) noexcept nogil:
    """Uniform on [0, 1) with 53 random bits."""
    return (next_u64(s) >> 11) * (1.0 / 9007199254740992.0)


cdef inline Py_ssize_t next_below(uint64_t* s, Py_ssize_t m) noexcept nogil:
    """Uniform integer in [0, m) by Lemire's multiply-shift (m < 2**32)."""
    return <Py_ssize_t>(((next_u64(s) >> 32) * <uint64_t>m) >> 32)


cdef inline Py_ssize_t alias_draw(uint64_t* s, const double* prob, const int* alias,
                                  Py_ssize_t m) noexcept nogil:
    """Walker's alias method: one index with P(k) given by the table, in O(1)."""
    cdef Py_ssize_t k = next_below(s, m)
    if next_double(s) < prob[k]:
        return k
    return alias[k]


cdef inline void shuffle(int* perm, Py_ssize_t m, uint64_t* s) noexcept nogil:
    """Fisher-Yates shuffle of perm[0:m] in place (a new random epoch order)."""
    cdef Py_ssize_t k, j
    cdef int tmp
    for k in range(m - 1, 0, -1):
        j = next_below(s, k + 1)
        tmp = perm[k]
        perm[k] = perm[j]
        perm[j] = tmp


cdef inline Py_ssize_t permutation_next(int* perm, long long* pos, Py_ssize_t m,
                                        uint64_t* s) noexcept nogil:
    """Next coordinate of a random-permutation order: a fresh shuffle every m draws."""
    if pos[0] >= m:
        shuffle(perm, m, s)
        pos[0] = 0
    pos[0] += 1
    return perm[pos[0] - 1]


# ---- the sampler: coordinates of one call, with the lookahead prefetch ----

cdef struct Sampler:
    # the draws: from the caller's arrays, advanced in place
    int mode  # UNIFORM, ALIAS or PERMUTATION
    Py_ssize_t m  # coordinates 0 .. m-1: the rows (CSR) or columns (CSC) of the matrix
    uint64_t* st  # xoshiro256** state, uint64[4]
    const double* prob  # ALIAS: the Walker table (NULL otherwise)
    const int* alias
    int* perm  # PERMUTATION: this epoch's order and how many of it are used (NULL otherwise)
    long long* pos
    # the matrix whose row (column) k, data[indptr[k]:indptr[k + 1]], coordinate k reads
    const int* indptr
    const double* data
    const int* indices
    # the lookahead (unused by PERMUTATION)
    long long t  # iterations drawn since sampler_init
    Py_ssize_t ahead  # after sampler_next: the coordinate of iteration t + LOOKAHEAD, or -1
    uint64_t la_st[4]  # the copy of the stream, 3 * LOOKAHEAD iterations ahead
    Py_ssize_t raw[RING]  # per iteration (slot t & (RING - 1)): the uniform index,
    double u[RING]  # the alias coin,
    Py_ssize_t coord[RING]  # and the resolved coordinate


cdef inline void _stage_draw(Sampler* s, long long t) noexcept nogil:
    # the same numbers, in the same order, as alias_draw / next_below consume
    cdef int r = t & (RING - 1)
    s.raw[r] = next_below(s.la_st, s.m)
    if s.mode == ALIAS:
        s.u[r] = next_double(s.la_st)
        pd_prefetch(&s.prob[s.raw[r]])
        pd_prefetch(&s.alias[s.raw[r]])


cdef inline void _stage_resolve(Sampler* s, long long t) noexcept nogil:
    cdef int r = t & (RING - 1)
    cdef Py_ssize_t k = s.raw[r]
    if s.mode == ALIAS and not (s.u[r] < s.prob[k]):
        k = s.alias[k]
    s.coord[r] = k
    if s.indptr != NULL:
        pd_prefetch(&s.indptr[k])


cdef inline void _prefetch_entries(const Sampler* s, Py_ssize_t c) noexcept nogil:
    cdef int start, stop, k
    if s.indptr == NULL:  # no matrix given (dense lines): the kernel prefetches its own
        return
    start = s.indptr[c]
    stop = s.indptr[c + 1]
    # whole short rows; a long row's tail is left to the hardware's stream prefetcher
    if stop > start + PREFETCH_MAX:
        stop = start + PREFETCH_MAX
    for k in range(start, stop, 8):
        pd_prefetch(&s.data[k])
    for k in range(start, stop, 16):
        pd_prefetch(&s.indices[k])


cdef inline void _lookahead_start(Sampler* s) noexcept nogil:
    cdef int u
    s.t = 0
    s.ahead = -1
    if s.mode == PERMUTATION:
        return
    for u in range(4):
        s.la_st[u] = s.st[u]
    for u in range(3 * LOOKAHEAD):
        _stage_draw(s, u)
    for u in range(2 * LOOKAHEAD):
        _stage_resolve(s, u)


cdef inline Py_ssize_t _lookahead_step(Sampler* s) noexcept nogil:
    # prefetch for iteration t + LOOKAHEAD; return its coordinate, or -1 when not known yet
    cdef Py_ssize_t c
    cdef long long p
    if s.mode == PERMUTATION:
        p = s.pos[0] + LOOKAHEAD
        if p >= s.m:
            return -1
        c = s.perm[p]
    else:
        _stage_draw(s, s.t + 3 * LOOKAHEAD)
        _stage_resolve(s, s.t + 2 * LOOKAHEAD)
        c = s.coord[(s.t + LOOKAHEAD) & (RING - 1)]
    _prefetch_entries(s, c)
    return c


cdef inline Py_ssize_t sampler_next(Sampler* s) noexcept nogil:
    """The coordinate of the next iteration, advancing the caller's state.

    Also moves the lookahead one iteration on: prefetches the entries of the
    coordinate LOOKAHEAD iterations ahead and leaves it in ``s.ahead`` (-1 when not
    known yet: the last LOOKAHEAD draws of a permutation epoch), for the kernel to
    prefetch its own per-coordinate arrays. Call it once per iteration: the lookahead
    counts calls.
    """
    s.ahead = _lookahead_step(s)
    s.t += 1
    if s.mode == ALIAS:
        return alias_draw(s.st, s.prob, s.alias, s.m)
    if s.mode == PERMUTATION:
        return permutation_next(s.perm, s.pos, s.m, s.st)
    return next_below(s.st, s.m)


cdef inline int sampler_init(Sampler* s, int mode, uint64_t[::1] state,
                             const double[::1] prob, const int[::1] alias,
                             int[::1] perm, long long[::1] pos,
                             const int[::1] indptr, const double[::1] data,
                             const int[::1] indices) except -1:
    """Set up ``s`` over the rows (columns) of the CSR (CSC) matrix (indptr, data, indices).

    The coordinates are 0 .. len(indptr) - 2. ``state`` is the uint64[4] random state;
    ``prob``, ``alias`` the Walker table (read when mode is ALIAS), ``perm``, ``pos``
    (int32[m], int64[1]) the permutation order and its position (when PERMUTATION);
    the arrays of the other modes are not read and may be any length. ``state``,
    ``perm`` and ``pos`` are advanced in place by ``sampler_next``, so that chunked
    calls reproduce one long call; the lookahead lives in ``s`` only. Raises
    ValueError on arrays inconsistent with ``mode``.
    """
    if indices.shape[0] != data.shape[0]:
        raise ValueError("indices and data differ in length")
    return sampler_init_m(s, mode, state, prob, alias, perm, pos, indptr.shape[0] - 1,
                          &indptr[0], &data[0] if data.shape[0] > 0 else NULL,
                          &indices[0] if indices.shape[0] > 0 else NULL)


cdef inline int sampler_init_m(Sampler* s, int mode, uint64_t[::1] state,
                               const double[::1] prob, const int[::1] alias,
                               int[::1] perm, long long[::1] pos, Py_ssize_t m,
                               const int* indptr, const double* data,
                               const int* indices) except -1:
    """:func:`sampler_init` over m coordinates; ``indptr`` NULL: no entries to prefetch
    (dense lines, or a kernel that prefetches its own)."""
    if mode != UNIFORM and mode != ALIAS and mode != PERMUTATION:
        raise ValueError(f"unknown sampling mode {mode}")
    if m < 1 or m >= 2**31:
        raise ValueError(f"cannot sample from {m} coordinates (need 1 <= m < 2**31)")
    if state.shape[0] != 4:
        raise ValueError("the random state must be uint64[4]")
    if mode == ALIAS and (prob.shape[0] != m or alias.shape[0] != m):
        raise ValueError(f"the alias table must have {m} entries")
    if mode == PERMUTATION and (perm.shape[0] != m or pos.shape[0] < 1 or pos[0] < 0):
        raise ValueError(f"the permutation must have {m} entries and pos[0] >= 0")
    s.mode = mode
    s.m = m
    s.st = &state[0]
    s.prob = &prob[0] if mode == ALIAS else NULL
    s.alias = &alias[0] if mode == ALIAS else NULL
    s.perm = &perm[0] if mode == PERMUTATION else NULL
    s.pos = &pos[0] if mode == PERMUTATION else NULL
    s.indptr = indptr
    s.data = data
    s.indices = indices
    _lookahead_start(s)
    return 0
