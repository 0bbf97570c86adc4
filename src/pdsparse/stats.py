"""Data statistics of Csiba & Richtárik, "Coordinate Descent Face-Off: Primal or Dual?" (JMLR).

Notation
--------
Our data matrix ``A`` is ``n x d`` with one *example per row*; the paper's ``X`` is ``A^T``
(``d x n``). Hence the paper's feature row ``X_{i:}`` is our **column** ``i`` and the paper's
example column ``X_{:j}`` is our **row** ``j``:

* ``C_P(X) = sum_i ||X_{i:}||_0 ||X_{i:}||_2^2`` = sum over the columns of ``A`` (eq. 16),
* ``C_D(X) = sum_j ||X_{:j}||_0 ||X_{:j}||_2^2`` = sum over the rows of ``A`` (eq. 16),
* serial ESO parameters (eq. 7): ``u = Diag(X X^T)`` = squared column norms of ``A``,
  ``v = Diag(X^T X)`` = squared row norms of ``A``.

``l2`` is the paper's ``lambda`` and ``beta`` the smoothness constant of the losses ``phi_j``;
the ``lambda n`` in eqs. (8)-(15) always uses ``n`` = number of examples (rows of ``A``).

All matrix statistics are vectorised (``np.bincount`` over the CSR arrays) and take well under
a second for news20.binary-sized inputs (9M stored entries). Explicitly stored zeros are *not*
counted as nonzeros.

Binary-data theory (appendix "Further theory on binary data")
-------------------------------------------------------------
For ``X`` with entries in ``{-1, 0, 1}``, ``C_P = sum_i ||X_{i:}||_0^2`` and
``C_D = sum_j ||X_{:j}||_0^2`` (the paper's appendix writes ``X_{:i}`` for the first one, a typo).
With ``a_bar_b = b * floor(a / b)`` the paper defines ``L(alpha, n)``, ``U(alpha, d, n)`` and
``R(alpha, d, n) = U(alpha, d, n) / L(alpha, n)``. ``L(alpha, p)`` is the minimal sum of squares
of ``p`` positive integers summing to ``alpha`` (balanced parts) and ``U(alpha, p, c)`` the maximal
sum of squares of ``p`` integers in ``[1, c]`` summing to ``alpha`` (as many full parts as
possible, one remainder part, the rest ones). Lemma 10: ``min C_D = L(alpha, n)`` (19),
``min C_P = L(alpha, d)`` (20), ``max C_D = U(alpha, n, d)`` (21), ``max C_P = U(alpha, d, n)``
(22), over ``X`` in ``B_{!=0}^{d x n}`` with ``||X||_0 = alpha``.

**Consistency of Theorem 9 with Lemma 10 (checked by brute force).** Theorem 9 states
``1/R(alpha, n, d) <= C_P/C_D <= R(alpha, d, n)``. By the definition of ``R`` this is
``L(alpha, d)/U(alpha, n, d) <= C_P/C_D <= U(alpha, d, n)/L(alpha, n)``, i.e.
``min C_P / max C_D <= C_P/C_D <= max C_P / min C_D`` with the extremes of Lemma 10
(20)/(21) and (22)/(19) -- so the printed statement *is* the right combination; the apparent
clash only comes from the argument order of ``R`` (``R(alpha, n, d) = U(alpha, n, d)/L(alpha, d)``).
Exhaustive enumeration of all ``{0,1}`` matrices without zero rows/columns for
``(d, n)`` in ``{(1,3), (3,1), (2,2), (2,3), (3,2), (3,3), (2,5), (3,4), (4,3), (4,4)}`` and every
admissible ``alpha`` (``tests/test_stats_binary.py``) confirms (19)-(22) exactly and that both
bounds of Theorem 9 are attained (tightness: ``max C_P`` and ``min C_D`` are reached by the same
matrix, cf. :func:`pdsparse.data.synthetic.worst_case_binary_dual`). The same enumeration
shows that the admissible range is ``max(d, n) <= alpha <= d n`` as stated in Lemma 10 -- the
bound ``n + d - 1 <= alpha`` used in the proof of Theorem 4 is not necessary (e.g. the identity
matrix has ``alpha = d = n``); it is the nnz minimum of a *connected* bipartite pattern only.
Other typos found: in the proof of Lemma 10 (iii) ``floor((a - n)/(d - 1))`` should read
``floor((alpha - n)/(d - 1))``; the closed forms ``C_P(X(a,b,c))`` and ``C_D(X(a,b,c))`` in the
proof of Theorem 3 are correct (checked numerically).

Table 1 (leukemia) -- which preprocessing reproduces the printed numbers
-------------------------------------------------------------------------
LIBSVM ``leu`` (n = 38, d = 7129, dense, nnz = 270,902), ``l2 = 1/n`` (so ``l2 n = 1``),
importance-sampling complexities (15). Values computed with :func:`data_stats`:

==================  ========  ========  =================  ================
normalization       C_P       C_D       T_P/T_D (beta=1/4)  T_P/T_D (beta=1)
==================  ========  ========  =================  ================
none (raw)          1.042e7   1.955e9   0.0059              0.0055
avg example norm    1544      2.896e5   0.790               0.486
unit rows           1444      2.709e5   0.801               0.503
==================  ========  ========  =================  ================

The printed ``C_P = 1x10^7`` and ``C_D = 2x10^9`` are reproduced only by the *raw, unnormalized*
data (normalization rescales both by ``1/mean_j ||a_j||^2``, about ``1/6750``). The printed
``T_P/T_D = 0.5`` is reproduced only by *normalized* data (dividing by the average example
norm, as Sec. 7 says: 0.486; or unit rows: 0.503) with ``beta = 1``; the logistic smoothness
``beta = 1/4`` gives about 0.79-0.80, and the raw data give about 0.006 for either ``beta``.
(Uniform sampling with average-norm normalization and ``beta = 1/4`` also happens to give
0.50, but Sec. 5.2/6 and Table 1's ``C_P``/``C_D`` columns refer to importance sampling.) So
Table 1 mixes two preprocessings: ``C_P``/``C_D`` from the raw file and ``T_P/T_D`` from the
normalized data with ``beta = 1``. (For a dense matrix ``C_P/C_D = n/d`` regardless, 0.0053.)
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import ConfigError

__all__ = [
    "L",
    "R",
    "U",
    "a_bar_b",
    "c_dual",
    "c_primal",
    "complexity_from_probabilities",
    "data_stats",
    "dataset_stats",
    "format_summary",
    "importance_probabilities",
    "matrix_profiles",
    "total_complexity",
]

Side = Literal["primal", "dual"]
Sampling = Literal["uniform", "importance"]


# ---------------------------------------------------------------------------------------------
# matrix profiles
# ---------------------------------------------------------------------------------------------


def _as_csr(A) -> sp.csr_matrix:
    """Return ``A`` as CSR float64 without copying when it already is one."""
    if sp.issparse(A):
        A = A.tocsr()
    else:
        A = sp.csr_matrix(np.atleast_2d(np.asarray(A, dtype=np.float64)))
    if A.dtype != np.float64:
        A = A.astype(np.float64)
    return A


def matrix_profiles(A) -> dict[str, np.ndarray]:
    """Per-row and per-column nonzero counts and squared norms of ``A`` (n x d).

    Parameters
    ----------
    A : sparse matrix or array_like, shape (n, d)
        Rows are examples (the paper's ``X = A^T``).

    Returns
    -------
    dict
        ``row_nnz`` (int64, n), ``row_sq`` (float64, n) -- the paper's ``||X_{:j}||_0`` and
        ``v_j = ||X_{:j}||_2^2`` (eq. 7); ``col_nnz`` (int64, d), ``col_sq`` (float64, d) -- the
        paper's ``||X_{i:}||_0`` and ``u_i = ||X_{i:}||_2^2``. Stored zeros are not counted.
    """
    A = _as_csr(A)
    n, d = A.shape
    data = A.data
    indices = A.indices
    counts = np.diff(A.indptr)
    sq = data * data
    nz = data != 0
    if nz.all():
        row_nnz = counts.astype(np.int64)
        col_nnz = np.bincount(indices, minlength=d).astype(np.int64)
    else:
        rows = np.repeat(np.arange(n), counts)
        row_nnz = np.bincount(rows[nz], minlength=n).astype(np.int64)
        col_nnz = np.bincount(indices[nz], minlength=d).astype(np.int64)
    # row sums of squares: reduceat on CSR segments (bincount needs a row index array)
    row_sq = np.zeros(n, dtype=np.float64)
    if sq.size:
        nonempty = counts > 0
        starts = A.indptr[:-1][nonempty]
        row_sq[nonempty] = np.add.reduceat(sq, starts)
    col_sq = np.bincount(indices, weights=sq, minlength=d).astype(np.float64, copy=False)
    return {"row_nnz": row_nnz, "row_sq": row_sq, "col_nnz": col_nnz, "col_sq": col_sq}


def c_primal(A) -> float:
    """``C_P(X) = sum_i ||X_{i:}||_0 ||X_{i:}||_2^2`` (Face-Off eq. 16), ``X = A^T``.

    The sum runs over the *columns* (features) of our ``A`` (n x d).
    """
    p = matrix_profiles(A)
    return float(np.dot(p["col_nnz"].astype(np.float64), p["col_sq"]))


def c_dual(A) -> float:
    """``C_D(X) = sum_j ||X_{:j}||_0 ||X_{:j}||_2^2`` (Face-Off eq. 16), ``X = A^T``.

    The sum runs over the *rows* (examples) of our ``A`` (n x d).
    """
    p = matrix_profiles(A)
    return float(np.dot(p["row_nnz"].astype(np.float64), p["row_sq"]))


# ---------------------------------------------------------------------------------------------
# total complexity, eqs. (12)-(15)
# ---------------------------------------------------------------------------------------------


def _check_reg(l2: float, beta: float, n: int) -> None:
    if not (np.isfinite(l2) and l2 > 0):
        raise ConfigError(f"l2 must be a positive finite number (Face-Off lambda), got {l2!r}")
    if not (np.isfinite(beta) and beta >= 0):
        raise ConfigError(f"beta (loss smoothness) must be finite and >= 0, got {beta!r}")
    if n < 1:
        raise ConfigError(f"the data matrix must have at least one example, got n={n}")


def importance_probabilities(sqnorms, l2: float, n: int, beta: float) -> np.ndarray:
    """Importance-sampling probabilities of Face-Off eq. (14).

    ``p_i = (beta u_i + l2 n) / sum_l (beta u_l + l2 n)`` for the primal (``sqnorms = u`` =
    squared column norms of ``A``) and likewise ``q_j`` for the dual (``sqnorms = v`` = squared
    row norms of ``A``).

    Parameters
    ----------
    sqnorms : array_like
        ESO parameters ``u`` (eq. 7) -- squared norms of the sampled coordinates' data.
    l2 : float
        The regularization ``lambda`` (> 0).
    n : int
        Number of examples (the ``n`` in ``lambda n``; also for the primal side).
    beta : float
        Smoothness of the losses.
    """
    _check_reg(l2, beta, n)
    s = beta * np.asarray(sqnorms, dtype=np.float64) + l2 * n
    return s / s.sum()


def complexity_from_probabilities(
    sqnorms, nnz, probabilities, l2: float, beta: float, n: int
) -> float:
    """Total complexity ``T = K W`` of eq. (12) (primal) / (13) (dual) for a serial sampling.

    ``T = (max_i (beta u_i + l2 n) / (p_i l2 n)) * sum_i p_i ||X_i||_0`` (log factor dropped).

    Parameters
    ----------
    sqnorms : array_like
        ESO parameters (eq. 7): squared column norms of ``A`` (primal) or row norms (dual).
    nnz : array_like
        Nonzero counts of the same columns (primal) / rows (dual).
    probabilities : array_like
        Serial sampling probabilities (nonnegative, summing to one); a zero probability
        gives ``inf`` (the sampling is not proper).
    l2, beta, n
        As in :func:`importance_probabilities`.
    """
    _check_reg(l2, beta, n)
    u = np.asarray(sqnorms, dtype=np.float64)
    w = np.asarray(nnz, dtype=np.float64)
    p = np.asarray(probabilities, dtype=np.float64)
    if not (u.shape == w.shape == p.shape):
        raise ValueError(f"shape mismatch: sqnorms {u.shape}, nnz {w.shape}, p {p.shape}")
    if np.any(p < 0):
        raise ValueError("probabilities must be nonnegative")
    s = beta * u + l2 * n
    with np.errstate(divide="ignore"):
        k = np.max(np.where(p > 0, s / (p * (l2 * n)), np.inf))
    return float(k * np.dot(p, w))


def total_complexity(
    A, l2: float, beta: float, side: Side = "primal", sampling: Sampling = "importance"
) -> float:
    """Total arithmetic complexity ``T_P`` / ``T_D`` of Face-Off Sec. 5 (log factor dropped).

    * uniform sampling (Sec. 5.1): ``T = ||X||_0 (1 + beta/(l2 n) max_i u_i)``;
    * importance sampling (eq. 15): ``T = ||X||_0 + beta/(l2 n) C``, ``C = C_P`` or ``C_D``,

    which equal eqs. (12)/(13) evaluated with the respective probabilities (eq. 14 for
    importance), with the serial ESO ``u = Diag(X X^T)`` / ``v = Diag(X^T X)`` (eq. 7).

    Parameters
    ----------
    A : sparse matrix, shape (n, d)
        Examples in rows (``X = A^T``).
    l2 : float
        Regularization ``lambda`` (> 0).
    beta : float
        Smoothness of the losses (1/4 for logistic, 1 for squared loss).
    side : {"primal", "dual"}
        Primal RCD (Algorithm 1, samples features = columns of ``A``) or dual RCD
        (Algorithm 2, samples examples = rows of ``A``).
    sampling : {"uniform", "importance"}
    """
    if side not in ("primal", "dual"):
        raise ConfigError(f"side must be 'primal' or 'dual', got {side!r}")
    if sampling not in ("uniform", "importance"):
        raise ConfigError(f"sampling must be 'uniform' or 'importance', got {sampling!r}")
    prof = matrix_profiles(A)
    n = int(prof["row_nnz"].shape[0])
    _check_reg(l2, beta, n)
    key = "col" if side == "primal" else "row"
    return _total_complexity_from_profile(
        prof[f"{key}_nnz"], prof[f"{key}_sq"], l2, beta, n, sampling
    )


def _total_complexity_from_profile(nnz, sq, l2, beta, n, sampling) -> float:
    total_nnz = float(nnz.sum())
    factor = beta / (l2 * n)
    if sampling == "uniform":
        smax = float(sq.max()) if sq.size else 0.0
        return total_nnz * (1.0 + factor * smax)
    return total_nnz + factor * float(np.dot(nnz.astype(np.float64), sq))


def data_stats(A, l2: float, beta: float) -> dict:
    """Face-Off data statistics of ``A`` (n x d, rows = examples, ``X = A^T``).

    Parameters
    ----------
    A : sparse matrix, shape (n, d)
    l2 : float
        Regularization ``lambda`` (the paper's experiments use ``1/n``).
    beta : float
        Loss smoothness (logistic: 1/4).

    Returns
    -------
    dict
        ``n``, ``d``, ``nnz`` (``||X||_0``), ``density`` (``nnz/(n d)``), ``frob2``
        (``||X||_F^2``), ``C_P``, ``C_D`` (eq. 16), ``C_P_over_C_D``, ``T_P_uniform``,
        ``T_D_uniform`` (Sec. 5.1), ``T_P_importance``, ``T_D_importance`` (eq. 15) and
        ``T_P_over_T_D`` (importance sampling, the last column of Table 1). Plain Python
        ints/floats (JSON-serialisable).

    Notes
    -----
    Table 1 of the paper (leukemia: ``C_P = 1e7``, ``C_D = 2e9``, ``T_P/T_D = 0.5``) is
    reproduced only by mixing preprocessings: ``C_P = 1.04e7`` and ``C_D = 1.96e9`` come from
    the raw LIBSVM file, while ``T_P/T_D = 0.5`` needs data normalized by the average example
    norm (0.486) or to unit rows (0.503) *and* ``beta = 1`` (``beta = 1/4`` gives 0.79/0.80;
    raw data give 0.006). See the module docstring for the full table.
    """
    prof = matrix_profiles(A)
    n = int(prof["row_nnz"].shape[0])
    d = int(prof["col_nnz"].shape[0])
    _check_reg(l2, beta, n)
    nnz = int(prof["row_nnz"].sum())
    c_p = float(np.dot(prof["col_nnz"].astype(np.float64), prof["col_sq"]))
    c_d = float(np.dot(prof["row_nnz"].astype(np.float64), prof["row_sq"]))
    out: dict = {
        "n": n,
        "d": d,
        "nnz": nnz,
        "density": nnz / (n * d) if n * d else 0.0,
        "frob2": float(prof["row_sq"].sum()),
        "C_P": c_p,
        "C_D": c_d,
        "C_P_over_C_D": c_p / c_d if c_d > 0 else float("nan"),
    }
    for sampling in ("uniform", "importance"):
        for side, key in (("P", "col"), ("D", "row")):
            out[f"T_{side}_{sampling}"] = _total_complexity_from_profile(
                prof[f"{key}_nnz"], prof[f"{key}_sq"], l2, beta, n, sampling
            )
    td = out["T_D_importance"]
    out["T_P_over_T_D"] = out["T_P_importance"] / td if td > 0 else float("nan")
    return out


# ---------------------------------------------------------------------------------------------
# binary-data theory: L, U, R (appendix "Further theory on binary data")
# ---------------------------------------------------------------------------------------------


def _int_args(*args):
    """Return (is_scalar, arrays) with integer validation; arrays are int64 or object."""
    arrs = [np.asarray(a) for a in args]
    for a in arrs:
        if a.dtype.kind not in "iu":
            if a.dtype.kind == "f" and np.all(np.floor(a) == a):
                continue
            if a.dtype.kind == "O":
                continue
            raise ValueError(f"L/U/R need integer arguments, got dtype {a.dtype}")
    scalar = all(a.ndim == 0 for a in arrs)
    if scalar:
        return True, [int(a) for a in arrs]
    big = max(int(np.max(np.abs(a))) for a in arrs)
    dtype = np.int64 if big < 2**30 else object
    return False, [a if a.dtype.kind == "O" else a.astype(np.int64).astype(dtype) for a in arrs]


def a_bar_b(a, b):
    """``a_bar_b = b floor(a / b)``: ``a`` rounded down to a multiple of ``b`` (appendix).

    By convention ``a_bar_0 = 0`` (needed for ``U(alpha, d, 1)``). Exact integers.
    """
    scalar, (a, b) = _int_args(a, b)
    if scalar:
        return 0 if b == 0 else b * (a // b)
    bb = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, bb * (a // bb))


def L(alpha, n):
    """``L(alpha, n) = (abar_n^2 + (alpha - abar_n)(2 abar_n + n)) / n`` (appendix, Sec. 6.2).

    The minimal sum of squares of ``n`` positive integers summing to ``alpha`` (Lemma 10 (19):
    ``min C_D = L(alpha, n)``, (20): ``min C_P = L(alpha, d)``). Computed exactly as
    ``n q^2 + r (2 q + 1)`` with ``alpha = q n + r`` (the same number; the division is exact).

    Parameters
    ----------
    alpha, n : int or array_like of int
        Requires ``n >= 1`` and ``alpha >= n``.

    Returns
    -------
    int or ndarray of int64 (object dtype for very large arguments)
    """
    scalar, (alpha, n) = _int_args(alpha, n)
    if np.any(np.asarray(n) < 1) or np.any(np.asarray(alpha) < np.asarray(n)):
        raise ValueError(f"L(alpha, n) needs n >= 1 and alpha >= n, got alpha={alpha}, n={n}")
    q, r = (alpha // n, alpha % n)
    return n * q * q + r * (2 * q + 1)


def U(alpha, d, n):
    """Upper extremal function ``U(alpha, d, n)`` of the appendix (Sec. 6.2 notation).

    ``U(alpha, d, n) = (n+1) m + d - 1 + (alpha - d + 1 - m)^2`` with ``m = bar(alpha-d)_{n-1}``.

    The maximal ``C_P = sum_i ||X_{i:}||_0^2`` over binary ``d x n`` matrices without zero
    rows/columns and ``alpha`` nonzeros (Lemma 10 (22)); ``U(alpha, n, d)`` is the maximal
    ``C_D`` (21). The extremal profile has ``a = floor((alpha - d)/(n - 1))`` full rows, one row
    with ``b = alpha - d + 1 - bar(alpha-d)_{n-1}`` nonzeros and ``d - a - 1`` rows with one.
    For ``n = 1`` (so ``alpha = d``) the convention ``bar(x)_0 = 0`` gives ``U = d``.

    Parameters
    ----------
    alpha, d, n : int or array_like of int
        Requires ``d, n >= 1`` and ``max(d, n) <= alpha <= d n``.
    """
    scalar, (alpha, d, n) = _int_args(alpha, d, n)
    a_, d_, n_ = (np.asarray(x) for x in (alpha, d, n))
    if np.any(d_ < 1) or np.any(n_ < 1) or np.any(a_ < np.maximum(d_, n_)) or np.any(a_ > d_ * n_):
        raise ValueError(
            f"U(alpha, d, n) needs d, n >= 1 and max(d, n) <= alpha <= d*n, "
            f"got alpha={alpha}, d={d}, n={n}"
        )
    m = a_bar_b(alpha - d, n - 1)
    rem = alpha - d + 1 - m
    return (n + 1) * m + d - 1 + rem * rem


def R(alpha, d, n):
    """``R(alpha, d, n) = U(alpha, d, n) / L(alpha, n)`` (float; appendix, Theorem 9).

    Theorem 9: ``1/R(alpha, n, d) <= C_P(X)/C_D(X) <= R(alpha, d, n)`` for all binary ``X``
    (``d x n``, no zero rows/columns, ``alpha`` nonzeros); both bounds are tight. See the
    module docstring for the brute-force check of this combination against Lemma 10.
    """
    u = U(alpha, d, n)
    lo = L(alpha, n)
    if isinstance(u, int) and isinstance(lo, int):
        return u / lo
    return np.asarray(u, dtype=np.float64) / np.asarray(lo, dtype=np.float64)


def dataset_stats(ds, l2: float | str, beta: float, normalization: str | None = None,
                  name: str | None = None) -> dict:
    """:func:`data_stats` of a prepared data set, as one row with its setting.

    ``l2`` may be ``"c/n"``. ``normalization``: recompute the statistics under another
    normalization than the stored one, by undoing the stored single scale factor
    (``avg_example_norm`` and ``none`` record it; ``unit_rows`` cannot be undone). Used for
    Face-Off Table 1's variants: the paper does not say under which scaling it computed it.
    """
    from pdsparse.data.normalize import normalize
    from pdsparse.errors import DataError
    from pdsparse.problem import resolve_l2

    info = ds.meta.get("normalization")
    stored = str(info.get("method", "unknown")) if isinstance(info, dict) else str(info)
    A, method = ds.A, stored
    if normalization is not None and normalization != stored:
        scale = info.get("scale") if isinstance(info, dict) else None
        if scale is None or not float(scale) > 0:
            raise DataError(
                f"data set {ds.name!r}: stored normalization {stored!r} records no scale, so "
                f"the statistics cannot be recomputed under {normalization!r}"
            )
        A = ds.A.copy()
        A.data *= float(scale)
        A, method = normalize(A, normalization)[0], normalization
    value = resolve_l2(l2, ds.n)
    row = {"dataset": name or ds.name, **data_stats(A, value, beta)}
    row.update(normalization=method, l2=value, l2_spec=str(l2), beta=float(beta))
    return row


def format_summary(row: dict) -> str:
    """A few lines for a person out of a :func:`dataset_stats` row."""

    def g(x: float) -> str:
        return f"{x:.4g}"

    uniform = row["T_P_uniform"] / row["T_D_uniform"] if row["T_D_uniform"] else float("nan")
    return "\n".join([
        f"{row['dataset']}: n = {row['n']}, d = {row['d']}, nnz = {row['nnz']}, "
        f"density = {row['density']:.3g}",
        f"  C_P = {g(row['C_P'])}, C_D = {g(row['C_D'])} (eq. 16), "
        f"C_P/C_D = {g(row['C_P_over_C_D'])}",
        f"  T_P/T_D = {g(row['T_P_over_T_D'])} (importance sampling, eq. 15), "
        f"{g(uniform)} (uniform)",
        f"  normalization {row['normalization']}, l2 = {row['l2_spec']} = {g(row['l2'])}, "
        f"beta = {g(row['beta'])}",
    ])
