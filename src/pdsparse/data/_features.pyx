# cython: language_level=3
"""Hot loop of the random-binning features (:class:`pdsparse.data.features.RandomBinning`).

:func:`rb_hash_block` hashes, for a block of grids ``p0 <= p < p1`` and every row ``i`` of a
CSR matrix, the row's bin tuple in grid ``p``,

    h_p(x) = sum_j R[j, p] * k_pj(x)  (mod 2^64),   k_pj(x) = floor((x_j - u[j, p]) / delta[j, p]),

in O(nnz of the row) per grid: a zero coordinate falls in the known bin
``k0[j, p] = floor(-u[j, p] / delta[j, p])``, so ``H0[p] = sum_j R[j, p] * k0[j, p]`` is
precomputed once per grid and corrected only at the row's stored entries by
``R[j, p] * (k_pj(x) - k0[j, p])``. Parameters are laid out ``[j, p]`` (feature-major), so
the grids of one block are contiguous for a feature; the rows are streamed once per block.

The floor is computed as truncation toward zero corrected by one for negative non-integers,
which equals ``floor`` for |value| < 2^62; values are clamped to +-2^62 first (only reached for
a pitch below about 1e-18 times the data range, probability ~1e-36 per draw), so the integer
conversion is always defined. No fused multiply-add (setup.py: -ffp-contract=off): the
quotient is the IEEE ``(x - u) / delta`` that a Python transcription computes.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy as np

cdef double _CLAMP = 4611686018427387904.0  # 2^62


cdef inline int64_t _floor_div(double x, double u, double delta) noexcept nogil:
    cdef double v = (x - u) / delta
    cdef int64_t k
    if v > _CLAMP:
        v = _CLAMP
    elif v < -_CLAMP:
        v = -_CLAMP
    k = <int64_t>v
    if v < <double>k:
        k -= 1
    return k


def rb_hash_block(
    const int64_t[::1] indptr,
    const int32_t[::1] indices,
    const double[::1] data,
    const double[:, ::1] delta,
    const double[:, ::1] shift,
    const uint64_t[:, ::1] mult,
    const int64_t[:, ::1] k0,
    const uint64_t[::1] h0,
    Py_ssize_t p0,
    uint64_t[:, ::1] out,
):
    """Hash the bin tuples of every CSR row for grids ``p0 .. p0 + out.shape[0] - 1``.

    Parameters
    ----------
    indptr, indices, data : CSR parts (int64, int32, float64) of the n x d input.
    delta, shift, mult, k0 : (d, P) pitches, shifts, 64-bit multipliers and zero bins.
    h0 : (P,) hash of the all-zero row per grid.
    p0 : first grid of the block.
    out : (G, n) uint64, written: ``out[q, i]`` = hash of row ``i`` in grid ``p0 + q``.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t G = out.shape[0]
    cdef Py_ssize_t d = delta.shape[0]
    cdef Py_ssize_t P = delta.shape[1]
    cdef Py_ssize_t i, t, q, j, p
    cdef double x
    cdef int64_t k
    if out.shape[1] != n:
        raise ValueError(f"out has {out.shape[1]} columns for {n} rows")
    if p0 < 0 or p0 + G > P:
        raise ValueError(f"grid block [{p0}, {p0 + G}) outside [0, {P})")
    if shift.shape[0] != d or mult.shape[0] != d or k0.shape[0] != d:
        raise ValueError("parameter arrays disagree on the input dimension")
    if shift.shape[1] != P or mult.shape[1] != P or k0.shape[1] != P or h0.shape[0] != P:
        raise ValueError("parameter arrays disagree on the number of grids")
    if indices.shape[0] != data.shape[0] or indptr[n] > data.shape[0]:
        raise ValueError("CSR parts are inconsistent")
    cdef uint64_t[::1] h = np.empty(G, dtype=np.uint64)
    with nogil:
        for i in range(n):
            for q in range(G):
                h[q] = h0[p0 + q]
            for t in range(indptr[i], indptr[i + 1]):
                j = indices[t]
                if j < 0 or j >= d:
                    with gil:
                        raise ValueError(f"column index {j} outside [0, {d})")
                x = data[t]
                for q in range(G):
                    p = p0 + q
                    k = _floor_div(x, shift[j, p], delta[j, p])
                    h[q] += mult[j, p] * <uint64_t>(k - k0[j, p])
            for q in range(G):
                out[q, i] = h[q]
