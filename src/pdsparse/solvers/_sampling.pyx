# cython: language_level=3
"""Python side of ``_sampling.pxd``: seeding, alias tables, the kernels' sampling arguments.

The draws themselves happen in the kernels (``Sampler`` in ``_sampling.pxd``); the
functions below that draw exist for tests and diagnostics.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint64_t

from pdsparse.solvers._sampling cimport (
    ALIAS,
    LOOKAHEAD,
    PERMUTATION,
    UNIFORM,
    Sampler,
    alias_draw,
    next_below,
    next_double,
    next_u64,
    permutation_next,
    sampler_init,
    sampler_next,
)

cnp.import_array()

#: the kernels' ``mode`` argument for each sampling
MODES = {"uniform": UNIFORM, "importance": ALIAS, "permutation": PERMUTATION}
#: iterations between the sampler's lookahead stages (``_sampling.pxd``)
LOOKAHEAD_ITERATIONS = LOOKAHEAD


def seed_state(seed):
    """xoshiro256** state (4 x uint64) from an integer seed via splitmix64."""
    cdef uint64_t x = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t z
    state = np.empty(4, dtype=np.uint64)
    cdef uint64_t[::1] st = state
    cdef int i
    for i in range(4):
        x += 0x9E3779B97F4A7C15ULL
        z = x
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
        st[i] = z ^ (z >> 31)
    return state


def build_alias(weights):
    """Vose's O(m) construction of Walker's alias table for ``weights`` (not normalized).

    Returns ``(prob, alias)``: draw k uniformly, keep it with probability
    ``prob[k]``, else take ``alias[k]``.
    """
    w = np.asarray(weights, dtype=np.float64)
    m = w.shape[0]
    if m == 0:
        raise ValueError("cannot sample from an empty set of coordinates")
    if m >= 2**31:
        raise ValueError("alias tables hold at most 2**31 - 1 coordinates")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("sampling weights must be finite, non-negative and not all zero")
    scaled = w * (m / w.sum())
    prob = np.ones(m)
    alias = np.arange(m, dtype=np.int32)
    cdef double[::1] sc = scaled
    cdef double[::1] pr = prob
    cdef int[::1] al = alias
    small = np.empty(m, dtype=np.int64)
    large = np.empty(m, dtype=np.int64)
    cdef long long[::1] sm = small
    cdef long long[::1] lg = large
    cdef Py_ssize_t ns = 0, nl = 0, i, s, l
    for i in range(m):
        if sc[i] < 1.0:
            sm[ns] = i
            ns += 1
        else:
            lg[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = sm[ns]
        l = lg[nl - 1]
        pr[s] = sc[s]
        al[s] = <int>l
        sc[l] = (sc[l] + sc[s]) - 1.0
        if sc[l] < 1.0:
            nl -= 1
            sm[ns] = l
            ns += 1
    # leftovers have probability 1 up to rounding
    return prob, alias


def sampler_arrays(sampling, probs):
    """The kernels' sampling arguments ``(mode, prob, alias, perm, perm_pos)``.

    ``probs`` (length m) are the importance probabilities (weights; only read for
    "importance"). Unused arrays are length-1 placeholders; a permutation starts at
    ``perm_pos = m``, so that the first draw shuffles and the first epoch is random too.
    """
    if sampling not in MODES:
        raise ValueError(f"unknown sampling {sampling!r}; choose one of {list(MODES)}")
    m = len(probs)
    prob, alias = np.zeros(1), np.zeros(1, dtype=np.int32)
    perm, pos = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64)
    if sampling == "importance":
        prob, alias = build_alias(probs)
    elif sampling == "permutation":
        perm, pos = np.arange(m, dtype=np.int32), np.array([m], dtype=np.int64)
    return (MODES[sampling], prob, alias, perm, pos)


def draw(state, prob, alias, Py_ssize_t count):
    """``count`` alias draws advancing ``state`` in place (for tests and diagnostics)."""
    cdef uint64_t[::1] st = state
    cdef const double[::1] pr = prob
    cdef const int[::1] al = alias
    cdef Py_ssize_t m = pr.shape[0], i
    out = np.empty(count, dtype=np.int64)
    cdef long long[::1] o = out
    with nogil:
        for i in range(count):
            o[i] = alias_draw(&st[0], &pr[0], &al[0], m)
    return out


def uniform_ints(state, Py_ssize_t m, Py_ssize_t count):
    """``count`` uniform draws from [0, m) advancing ``state`` in place."""
    cdef uint64_t[::1] st = state
    cdef Py_ssize_t i
    out = np.empty(count, dtype=np.int64)
    cdef long long[::1] o = out
    with nogil:
        for i in range(count):
            o[i] = next_below(&st[0], m)
    return out


def uniform_doubles(state, Py_ssize_t count):
    """``count`` uniform doubles on [0, 1) advancing ``state`` in place."""
    cdef uint64_t[::1] st = state
    cdef Py_ssize_t i
    out = np.empty(count)
    cdef double[::1] o = out
    with nogil:
        for i in range(count):
            o[i] = next_double(&st[0])
    return out


def raw_u64(state, Py_ssize_t count):
    """Raw xoshiro256** outputs (for the reference-vector test)."""
    cdef uint64_t[::1] st = state
    cdef Py_ssize_t i
    out = np.empty(count, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    for i in range(count):
        o[i] = next_u64(&st[0])
    return out


def permutation_draws(state, Py_ssize_t m, Py_ssize_t count):
    """``count`` coordinates of the random-permutation order (for tests), from a fresh order."""
    cdef uint64_t[::1] st = state
    perm = np.arange(m, dtype=np.int32)
    cdef int[::1] pm = perm
    cdef long long pos = m
    cdef Py_ssize_t i
    out = np.empty(count, dtype=np.int64)
    cdef long long[::1] o = out
    for i in range(count):
        o[i] = permutation_next(&pm[0], &pos, m, &st[0])
    return out


def sampler_draws(int mode, prob, alias, perm, perm_pos, state, indptr, Py_ssize_t count):
    """``count`` draws of the kernels' ``Sampler`` (for tests), advancing the state in place.

    Arguments as the kernels' (``indptr`` of the matrix whose rows are the coordinates).
    Returns ``(coords, ahead)``: the coordinates drawn, and at each iteration t the
    lookahead's coordinate for iteration t + LOOKAHEAD_ITERATIONS (-1 when not known).
    """
    cdef const int[::1] ip = indptr
    cdef Py_ssize_t nnz = ip[ip.shape[0] - 1] if ip.shape[0] > 0 else 0
    data, indices = np.zeros(nnz), np.zeros(nnz, dtype=np.int32)
    cdef Sampler smp
    sampler_init(&smp, mode, state, prob, alias, perm, perm_pos, ip, data, indices)
    coords = np.empty(count, dtype=np.int64)
    ahead = np.empty(count, dtype=np.int64)
    cdef long long[::1] c = coords
    cdef long long[::1] a = ahead
    cdef Py_ssize_t t
    with nogil:
        for t in range(count):
            c[t] = sampler_next(&smp)
            a[t] = smp.ahead
    return coords, ahead
