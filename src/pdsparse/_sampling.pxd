# cython: language_level=3
"""Seeded random numbers and O(1) weighted draws for the coordinate kernels.

xoshiro256** (Blackman & Vigna, 2018) seeded through splitmix64: fast, with a
state of four uint64 that the kernels carry between calls so that a run split
into chunks draws exactly the same coordinates as one uninterrupted call.
"""

from libc.stdint cimport uint64_t


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
