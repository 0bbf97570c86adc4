"""Seeded synthetic data sets for the Face-Off experiments (Csiba & Richtárik, JMLR).

Every generator returns ``(A, b)``: ``A`` an ``n x d`` :class:`scipy.sparse.csr_matrix`
(float64, sorted indices, no stored zeros; rows are examples, i.e. ``A = X^T`` for the paper's
``d x n`` matrix ``X``) and labels ``b`` in ``{-1.0, +1.0}`` (float64).

Labels (all generators): ``b = sign(A w_true + e)`` with ``w_true ~ N(0, I_d)`` and
``e ~ label_noise * median|A w_true| * N(0, I_n)`` (seeded), zeros mapped to ``+1``. If all labels
agree and ``n >= 2``, the label of the example with the smallest margin ``|A w_true + e|`` is
flipped, so both classes are always present. The matrix and the labels use independent
streams spawned from ``seed``, so ``label_noise`` never changes ``A``.

Bundled sources (:data:`BUNDLED`) go through the same door (``generate(kind, params, seed)``)
but are fixed data shipped with a library, not random: :func:`digits` is scikit-learn's
copy of the UCI optical digits (1,797 x 64, 10 classes, multiclass labels kept). Their
``seed`` is accepted and ignored.

One generator is for the trace-norm experiments of PDBFW (Sec. 5.1) and returns regression
data instead: :func:`lowrank_sensing` gives a dense ``A`` (``np.ndarray``, n x d) and a real
label matrix ``B = A X0`` (n x c) of a rank-s ground truth X0.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import ConfigError

__all__ = [
    "BUNDLED",
    "GENERATORS",
    "SOURCES",
    "digits",
    "WORST_CASE_GENERAL_EPS",
    "dense_gaussian",
    "generate",
    "lowrank_sensing",
    "lowrank_sensing_truth",
    "make_labels",
    "worst_case_binary_dual",
    "worst_case_general",
    "worst_case_general_default",
    "worst_case_general_default_params",
    "zipf_bow",
]

#: relative size of the small entries of the default X(a, b, c) (see worst_case_general_default)
WORST_CASE_GENERAL_EPS = 0.1


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the matrix and the labels."""
    ss = np.random.SeedSequence(int(seed))
    m, lab = ss.spawn(2)
    return np.random.default_rng(m), np.random.default_rng(lab)


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and float(value).is_integer():
            value = int(value)
        else:
            raise ConfigError(
                f"synthetic data parameter {name!r} must be an integer, got {value!r}"
            )
    value = int(value)
    if value < minimum:
        raise ConfigError(f"synthetic data parameter {name!r} must be >= {minimum}, got {value}")
    return value


def _check_real(name: str, value, *, positive: bool = False, nonzero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ConfigError(
            f"synthetic data parameter {name!r} must be a finite number, got {value!r}"
        )
    value = float(value)
    if positive and value <= 0:
        raise ConfigError(f"synthetic data parameter {name!r} must be > 0, got {value}")
    if nonzero and value == 0:
        raise ConfigError(f"synthetic data parameter {name!r} must be nonzero, got {value}")
    return value


def _check_noise(label_noise) -> float:
    v = _check_real("label_noise", label_noise)
    if v < 0:
        raise ConfigError(f"synthetic data parameter 'label_noise' must be >= 0, got {v}")
    return v


def make_labels(A: sp.csr_matrix, rng: np.random.Generator, label_noise: float = 0.1) -> np.ndarray:
    """Labels ``sign(A w_true + e)`` in ``{-1, +1}`` with both classes present when ``n >= 2``.

    Parameters
    ----------
    A : csr_matrix, shape (n, d)
    rng : numpy Generator
        Source of ``w_true ~ N(0, I_d)`` and the noise.
    label_noise : float
        Noise standard deviation relative to ``median_j |(A w_true)_j|`` (fallbacks: mean, 1).
    """
    n, d = A.shape
    w_true = rng.standard_normal(d)
    z = np.asarray(A @ w_true, dtype=np.float64).ravel()
    absz = np.abs(z)
    scale = float(np.median(absz)) if n else 0.0
    if scale <= 0:
        scale = float(absz.mean()) if n else 0.0
    if scale <= 0:
        scale = 1.0
    m = z + label_noise * scale * rng.standard_normal(n)
    b = np.where(m < 0, -1.0, 1.0)
    if n >= 2 and np.all(b == b[0]):
        j = int(np.argmin(np.abs(m)))
        b[j] = -b[j]
    return b


def _csr_from_rows_cols(n: int, d: int, rows, cols, vals) -> sp.csr_matrix:
    A = sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(n, d))
    A.sum_duplicates()
    A.sort_indices()
    A.eliminate_zeros()
    return A


# ---------------------------------------------------------------------------------------------
# Theorem 3: X(a, b, c)
# ---------------------------------------------------------------------------------------------


def worst_case_general(
    d: int, n: int, a: float, b: float, c: float, seed: int, *, label_noise: float = 0.1
) -> tuple[sp.csr_matrix, np.ndarray]:
    """The tight example ``X(a, b, c)`` of the proof of Face-Off Theorem 3, as ``A = X^T``.

    ``X_{ij} = a`` if ``i != 1, j = 1``; ``b`` if ``i = 1, j != 1``; ``c`` at ``(1, 1)``; 0
    otherwise (``X`` is ``d x n``). In our orientation (``A`` is ``n x d``): example 1 is
    ``(c, a, ..., a)`` and examples ``2..n`` are ``b e_1``. Closed forms (verified numerically):
    ``C_P = (d-1) a^2 + n(n-1) b^2 + n c^2``, ``C_D = d(d-1) a^2 + (n-1) b^2 + d c^2``, so
    ``C_P/C_D -> 1/d`` as ``b, c -> 0`` (primal RCD up to ``d`` times faster) and ``-> n`` as
    ``a, c -> 0``. The matrix is deterministic; ``seed`` only drives the labels.

    Parameters
    ----------
    d, n : int
        Number of features and examples (``>= 1``).
    a, b, c : float
        Nonzero entries (nonzero so that no row/column is empty).
    seed : int
    label_noise : float
        See :func:`make_labels`.
    """
    d = _check_int("d", d)
    n = _check_int("n", n)
    a = _check_real("a", a, nonzero=True)
    b_ = _check_real("b", b, nonzero=True)
    c = _check_real("c", c, nonzero=True)
    noise = _check_noise(label_noise)
    _, rng_lab = _streams(seed)
    rows = np.concatenate([np.zeros(d, dtype=np.int64), np.arange(1, n, dtype=np.int64)])
    cols = np.concatenate([np.arange(d, dtype=np.int64), np.zeros(n - 1, dtype=np.int64)])
    vals = np.concatenate([[c], np.full(d - 1, a), np.full(n - 1, b_)])
    A = _csr_from_rows_cols(n, d, rows, cols, vals)
    return A, make_labels(A, rng_lab, noise)


def worst_case_general_default_params(d: int, n: int) -> dict[str, float]:
    """Default magnitudes ``a = 1``, ``b = c = eps sqrt(max(d-1, 1)) / n`` with ``eps = 0.1``.

    Choice: the primal-favouring limit ``b, c -> 0`` of Theorem 3 (Sec. 7.1 / Figure 1a, 1b:
    "primal should be better"). With these values ``n(n-1) b^2 + n c^2 = eps^2 (d-1) a^2``, so
    ``C_P = (1 + eps^2)(d-1)`` and ``C_P/C_D`` is within about 1% of its infimum ``1/d``, while
    ``b`` shrinks like ``sqrt(d)/n`` -- entries differ by ``log10(10 n / sqrt(d - 1))`` orders of
    magnitude (2.5 for ``d = n = 1000``, 5.5 for ``d = 10, n = 10^5``), as the paper notes.
    """
    d = _check_int("d", d)
    n = _check_int("n", n)
    small = WORST_CASE_GENERAL_EPS * math.sqrt(max(d - 1, 1)) / n
    return {"a": 1.0, "b": small, "c": small}


def worst_case_general_default(
    d: int, n: int, seed: int, *, label_noise: float = 0.1
) -> tuple[sp.csr_matrix, np.ndarray]:
    """:func:`worst_case_general` with :func:`worst_case_general_default_params` magnitudes."""
    p = worst_case_general_default_params(d, n)
    return worst_case_general(d, n, p["a"], p["b"], p["c"], seed, label_noise=label_noise)


# ---------------------------------------------------------------------------------------------
# Theorem 9 / Lemma 10: binary worst case for dual RCD
# ---------------------------------------------------------------------------------------------


def _dual_worst_row_counts(d: int, n: int, alpha: int) -> np.ndarray:
    """Per-example nonzero counts maximising ``C_D`` (proof of Lemma 10 (iii), eq. 21).

    ``a = floor((alpha - n)/(d - 1))`` full examples (``d`` nonzeros), one example with
    ``alpha - n + 1 - a (d - 1)`` in ``[1, d - 1]`` nonzeros, the remaining ``n - a - 1`` with
    a single nonzero; if ``a = n`` (``alpha = d n``) all examples are full.
    """
    if d == 1:
        return np.ones(n, dtype=np.int64)  # alpha == n
    full = (alpha - n) // (d - 1)
    if full >= n:
        return np.full(n, d, dtype=np.int64)
    part = alpha - n + 1 - full * (d - 1)
    return np.concatenate([np.full(full, d), [part], np.ones(n - full - 1)]).astype(np.int64)


def worst_case_binary_dual(
    d: int, n: int, alpha: int, seed: int, *, label_noise: float = 0.1
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Binary worst case for dual RCD of Face-Off Theorem 9 (Sec. 7.2, Figure 2).

    Returns ``A`` (``n x d``) with entries in ``{-1, 0, +1}`` (random seeded signs), exactly
    ``alpha`` nonzeros and no zero row or column, such that simultaneously

    * ``C_D = max = U(alpha, n, d)`` (Lemma 10 (21)): example nonzero counts follow the
      profile of the proof of Lemma 10 (iii) -- ``floor((alpha-n)/(d-1))`` full examples, one
      partial example, the rest with a single nonzero;
    * ``C_P = min = L(alpha, d)`` (Lemma 10 (20)): feature nonzero counts are balanced,
      ``floor(alpha/d)`` or ``ceil(alpha/d)`` (proof of Lemma 10 (i)).

    Hence ``C_P/C_D = 1/R(alpha, n, d)``, the lower bound of Theorem 9 (primal favoured).
    Construction ("cyclic fill"): the ``alpha`` nonzeros are laid out example after example on
    the cyclic sequence of features ``0, 1, ..., d-1, 0, 1, ...``; each example takes ``<= d``
    consecutive positions, so it never repeats a feature, and every feature receives
    ``floor(alpha/d)`` or ``ceil(alpha/d)`` nonzeros. Rows and columns are then permuted
    (seeded), which changes neither ``C_P`` nor ``C_D``. This realises explicitly the paper's
    argument that entries can be swapped to reach min ``C_P`` without changing ``C_D``.

    Parameters
    ----------
    d, n : int
        Features and examples (``>= 1``).
    alpha : int
        Number of nonzeros, ``max(d, n) <= alpha <= d n`` (Lemma 10). ``max(d, n)`` is the true
        minimum for a matrix without zero rows/columns (e.g. a permutation matrix); the
        ``n + d - 1`` of the proof of Theorem 4 is not required.
    seed : int
    label_noise : float
        See :func:`make_labels`.

    Raises
    ------
    ConfigError (a ValueError)
        If ``alpha`` is outside ``[max(d, n), d n]``.
    """
    d = _check_int("d", d)
    n = _check_int("n", n)
    alpha = _check_int("alpha", alpha)
    noise = _check_noise(label_noise)
    lo, hi = max(d, n), d * n
    if not lo <= alpha <= hi:
        raise ConfigError(
            f"worst_case_binary_dual: alpha={alpha} out of range; a {d}x{n} binary matrix "
            f"(d x n) without zero rows/columns needs max(d, n) = {lo} <= alpha <= d*n = {hi}"
        )
    rng, rng_lab = _streams(seed)
    counts = _dual_worst_row_counts(d, n, alpha)
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    cols = np.arange(alpha, dtype=np.int64) % d
    row_perm = rng.permutation(n)
    col_perm = rng.permutation(d)
    signs = rng.choice(np.array([-1.0, 1.0]), size=alpha)
    A = _csr_from_rows_cols(n, d, row_perm[rows], col_perm[cols], signs)
    return A, make_labels(A, rng_lab, noise)


# ---------------------------------------------------------------------------------------------
# dense Gaussian
# ---------------------------------------------------------------------------------------------


def dense_gaussian(
    n: int, d: int, seed: int, *, label_noise: float = 0.1
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Dense i.i.d. ``N(0, 1)`` data (Face-Off Sec. 6.1 / appendix "Random data").

    For dense data ``C_P = n ||X||_F^2`` and ``C_D = d ||X||_F^2``: everything is ``d`` vs ``n``.
    """
    n = _check_int("n", n)
    d = _check_int("d", d)
    noise = _check_noise(label_noise)
    rng, rng_lab = _streams(seed)
    A = sp.csr_matrix(rng.standard_normal((n, d)))
    A.eliminate_zeros()
    return A, make_labels(A, rng_lab, noise)


# ---------------------------------------------------------------------------------------------
# Zipf bag of words
# ---------------------------------------------------------------------------------------------


def zipf_bow(
    n: int,
    d: int,
    mean_nnz_per_row: float,
    exponent: float,
    seed: int,
    *,
    label_noise: float = 0.1,
    tf_p: float = 0.6,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Bag-of-words-like sparse data (the news20 situation of Face-Off Sec. 7.3).

    * Feature popularity is Zipf-skewed: a draw picks feature ``k`` (0-based) with probability
      proportional to ``(k + 1) ** -exponent`` -- feature 0 is the most frequent word. Rare
      features may end up in no example (empty columns are allowed).
    * Distinct words per example are concentrated around the mean (as for real articles):
      ``k_j = 1 + Poisson(mean_nnz_per_row - 1)``, clipped to ``[1, d]`` (standard deviation
      about ``sqrt(mean)``; every example is nonempty; the clipping lowers the realised mean
      slightly when the mean is within a few ``sqrt(mean)`` of ``d``).
    * Each example's ``k_j`` distinct features are drawn by successive sampling *without*
      replacement with the Zipf weights (draws are made in vectorised rounds and duplicates
      rejected in draw order, so no ``(row, col)`` pair repeats).
    * Values are term counts ``tf ~ Geometric(tf_p)`` on ``{1, 2, ...}`` (``P(tf = 1) = tf_p``).

    The time is dominated by the inverse-CDF ``searchsorted`` (measured: benchmarks/README.md,
    "Measurements cited by the code").

    Parameters
    ----------
    n, d : int
        Examples and vocabulary size.
    mean_nnz_per_row : float
        Target mean number of distinct features per example, ``1 <= mean <= d``.
    exponent : float
        Zipf exponent ``>= 0`` (0 = uniform features; about 1 for natural text).
    seed : int
    label_noise : float
        See :func:`make_labels`.
    tf_p : float
        Success probability of the geometric term counts, in ``(0, 1]`` (1 gives binary data).
    """
    n = _check_int("n", n)
    d = _check_int("d", d)
    mean = _check_real("mean_nnz_per_row", mean_nnz_per_row)
    if not 1 <= mean <= d:
        raise ConfigError(
            f"synthetic data parameter 'mean_nnz_per_row' must be in [1, d={d}], got {mean}"
        )
    expo = _check_real("exponent", exponent)
    if expo < 0:
        raise ConfigError(f"synthetic data parameter 'exponent' must be >= 0, got {expo}")
    tf_p = _check_real("tf_p", tf_p)
    if not 0 < tf_p <= 1:
        raise ConfigError(f"synthetic data parameter 'tf_p' must be in (0, 1], got {tf_p}")
    noise = _check_noise(label_noise)
    rng, rng_lab = _streams(seed)

    target = np.minimum(1 + rng.poisson(mean - 1.0, size=n), d).astype(np.int64)
    weights = np.arange(1, d + 1, dtype=np.float64) ** (-expo)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]

    keys = _sample_distinct_keys(rng, target, d, cdf, weights)
    rows = keys // d
    cols = keys - rows * d
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    vals = rng.geometric(tf_p, size=keys.size).astype(np.float64)
    idx_dtype = np.int32 if max(d, keys.size) < 2**31 - 1 else np.int64
    A = sp.csr_matrix((vals, cols.astype(idx_dtype), indptr.astype(idx_dtype)), shape=(n, d))
    A.has_sorted_indices = True
    return A, make_labels(A, rng_lab, noise)


def _sample_distinct_keys(
    rng: np.random.Generator,
    target: np.ndarray,
    d: int,
    cdf: np.ndarray,
    weights: np.ndarray,
    max_rounds: int = 60,
) -> np.ndarray:
    """Sorted keys ``row * d + col`` with ``target[row]`` distinct columns per row.

    Successive weighted sampling without replacement: candidates are drawn i.i.d. from ``cdf``
    in rounds (oversampled), and accepted in draw order if new for their row and the row is
    not yet full. Rows still short after ``max_rounds`` (only when a row needs most of a very
    skewed vocabulary) are completed exactly with ``Generator.choice(replace=False)``.
    """
    n = target.size
    have = np.zeros(n, dtype=np.int64)
    accepted: list[np.ndarray] = []
    factor = 1.25
    for _ in range(max_rounds):
        deficit = target - have
        short = np.flatnonzero(deficit > 0)
        if short.size == 0:
            break
        draws = np.ceil(deficit[short] * factor).astype(np.int64) + 1
        cand_rows = np.repeat(short, draws)
        cand_cols = np.searchsorted(cdf, rng.random(cand_rows.size), side="right")
        np.minimum(cand_cols, d - 1, out=cand_cols)
        cand = cand_rows * d + cand_cols
        # previously accepted keys of the short rows come first (they win ties)
        if accepted:
            prev = np.concatenate(accepted)
            if short.size < n:
                is_short = np.zeros(n, dtype=bool)
                is_short[short] = True
                prev = prev[is_short[prev // d]]
        else:
            prev = np.empty(0, dtype=np.int64)
        allk = np.concatenate([prev, cand])
        _, first = np.unique(allk, return_index=True)
        first = np.sort(first[first >= prev.size])  # new distinct keys, in draw order
        new = allk[first]
        new_rows = new // d
        # rank of each new key within its row (draw order), offset by what the row has
        order = np.argsort(new_rows, kind="stable")
        sorted_rows = new_rows[order]
        pos = np.arange(order.size)
        is_start = np.ones(order.size, dtype=bool)
        is_start[1:] = sorted_rows[1:] != sorted_rows[:-1]
        starts = np.maximum.accumulate(np.where(is_start, pos, 0)) if order.size else pos
        rank = np.empty_like(order)
        rank[order] = pos - starts
        keep = rank < (target - have)[new_rows]
        kept = new[keep]
        accepted.append(kept)
        have += np.bincount(kept // d, minlength=n)
        factor = min(factor * 2.0, 64.0)
    deficit = target - have
    short = np.flatnonzero(deficit > 0)
    if short.size:
        allk = np.concatenate(accepted) if accepted else np.empty(0, dtype=np.int64)
        extra = []
        for r in short:
            taken = allk[allk // d == r] - r * d
            free = np.setdiff1d(np.arange(d), taken, assume_unique=True)
            p = weights[free] / weights[free].sum()
            pick = rng.choice(free, size=int(deficit[r]), replace=False, p=p)
            extra.append(r * d + pick.astype(np.int64))
        accepted.extend(extra)
    return np.sort(np.concatenate(accepted)) if accepted else np.empty(0, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# low-rank matrix sensing (PDBFW Sec. 5.1)
# ---------------------------------------------------------------------------------------------


def _sensing_params(n, d, c, rank, nuclear_norm) -> tuple[int, int, int, int, float]:
    n, d, c = _check_int("n", n), _check_int("d", d), _check_int("c", c)
    rank = _check_int("rank", rank)
    if rank > min(d, c):
        raise ConfigError(f"synthetic data parameter 'rank' must be <= min(d, c) = "
                          f"{min(d, c)}, got {rank}")
    return n, d, c, rank, _check_real("nuclear_norm", nuclear_norm, positive=True)


def _truth(rng: np.random.Generator, d: int, c: int, rank: int, nuclear_norm: float):
    L = rng.standard_normal((d, rank))
    R = rng.standard_normal((c, rank))
    # ||L R^T||_* from the rank x rank core of the two thin QR factorizations
    core = np.linalg.qr(L, mode="r") @ np.linalg.qr(R, mode="r").T
    return (L * (nuclear_norm / np.linalg.svd(core, compute_uv=False).sum())) @ R.T


def lowrank_sensing_truth(*, rank: int, nuclear_norm: float, seed: int, n: int = 1000,
                          d: int = 800, c: int = 600) -> np.ndarray:
    """The ground truth X0 (d x c) of :func:`lowrank_sensing` with the same arguments."""
    n, d, c, rank, nuclear_norm = _sensing_params(n, d, c, rank, nuclear_norm)
    return _truth(_streams(seed)[1], d, c, rank, nuclear_norm)


def lowrank_sensing(*, rank: int, nuclear_norm: float, seed: int, n: int = 1000, d: int = 800,
                    c: int = 600) -> tuple[np.ndarray, np.ndarray]:
    """Low-rank matrix sensing data of PDBFW Sec. 5.1: ``(A, B)`` with B = A X0.

    * ``A`` (n x d): a dense sensing matrix of i.i.d. N(0, 1) entries (unscaled, the standard
      Gaussian ensemble; the paper says only "dense"). With the house's
      P(X) = 1/(2n) ||AX - B||_F^2 + mu/2 ||X||_F^2 the Hessian of the loss is A^T A / n, whose
      eigenvalues fill the Marchenko-Pastur interval [(1 - sqrt(d/n))^2, (1 + sqrt(d/n))^2]
      = [0.011, 3.59] for d/n = 0.8, so mu = 10/n = 0.01 matters and the condition number is
      about 170. (Rows scaled to unit norm would make mu dominate: condition number ~1.5.)
    * ``X0`` (d x c, :func:`lowrank_sensing_truth`) = L R^T of rank ``rank`` with L (d x s) and
      R (c x s) i.i.d. N(0, 1), scaled so that ||X0||_* = ``nuclear_norm`` (required, so that
      the data set's metadata, whose ``params`` are the generator's arguments, always records
      it; 1 in our configs). The problem is homogeneous (scaling X0 and the radius by t scales
      the optimum by t), so only radius / ||X0||_* matters, and fixing ||X0||_* lets one
      radius serve every rank.
    * ``B = A X0`` (n x c), noiseless as in the paper.

    Defaults n = 1000, d = 800, c = 600 as in the paper (which varies s in {10, 20, 100}).
    ``A`` and ``X0`` come from independent streams of ``seed``: for one seed every rank
    shares the same A.

    **The radius.** With mu = 10/n and ||X0||_* = 1 the unconstrained (ridge) optimum has
    ||X_ridge||_* = 0.960 for s = 10, 20 and 100 (seed 0, measured), so a radius theta >= 0.961
    leaves the ball inactive, and any theta < 0.96 makes it active at the optimum (F is
    strongly convex and its unconstrained minimizer lies outside the ball). We recommend
    theta = 0.5 ||X0||_*: for s = 10 (seed 0, block FW to a certified relative gap of 4e-8)
    the optimum has ||X*||_* = 0.5 and rank 10 (sigma_10 = 0.038, sigma_11 = 4e-17), with
    the constraint's multiplier ||grad F(X*)||_2 = 0.040 well away from 0 (on an earlier draw
    theta = 0.9 gave 0.0024: barely active). For s = 100 the rank of X* was not measured
    (block FW had not converged in 900 s).

    **Loss scaling.** The paper writes f(AX) = ||AX - B||_F^2 (no 1/n, no 1/2) inside
    (1/n) sum_i f_i + g; the house solves (1/n) sum_{i,c} 1/2 ((AX)_{ic} - B_{ic})^2 +
    mu/2 ||X||_F^2, i.e. half the paper's loss: for a penalty g = mu_p/2 ||X||^2 of the paper,
    P_paper(X; mu_p) = 2 P_house(X; mu_p / 2), the same minimizers with mu = mu_p / 2. We keep
    mu = 10/n in the house's scaling (the paper does not state the form of g).
    """
    n, d, c, rank, nuclear_norm = _sensing_params(n, d, c, rank, nuclear_norm)
    rng_a, rng_x = _streams(seed)
    A = rng_a.standard_normal((n, d))
    X0 = _truth(rng_x, d, c, rank, nuclear_norm)
    return A, A @ X0


# ---------------------------------------------------------------------------------------------
# dispatch
# ---------------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[..., tuple[sp.csr_matrix | np.ndarray, np.ndarray]]] = {
    "worst_case_general": worst_case_general,
    "worst_case_binary_dual": worst_case_binary_dual,
    "dense_gaussian": dense_gaussian,
    "zipf_bow": zipf_bow,
    "lowrank_sensing": lowrank_sensing,
}



# ---------------------------------------------------------------------------------------------
# bundled data
# ---------------------------------------------------------------------------------------------


def digits(seed: int = 0, *, n_class: int = 10) -> tuple[sp.csr_matrix, np.ndarray]:
    """scikit-learn's bundled handwritten digits (``sklearn.datasets.load_digits``; offline).

    The UCI "Optical Recognition of Handwritten Digits" test set: 1,797 images of 8 x 8 pixels
    with integer intensities 0..16, classes 0..9. Returns ``A`` (1,797 x 64 CSR float64, raw
    intensities, zeros not stored, rows in the bundled order) and the class labels as float64
    (multiclass, not binarized). A small stand-in for MNIST (``digits-rb``, ``digits-rf``:
    digits + a feature-map recipe). ``seed`` is ignored: the data are fixed.

    Parameters
    ----------
    n_class : int
        Keep the classes ``0 .. n_class - 1`` (2..10), as ``load_digits(n_class=...)``.
    """
    from sklearn.datasets import load_digits

    n_class = _check_int("n_class", n_class, minimum=2)
    if n_class > 10:
        raise ConfigError(f"bundled data parameter 'n_class' must be <= 10, got {n_class}")
    bunch = load_digits(n_class=n_class)
    A = sp.csr_matrix(np.asarray(bunch.data, dtype=np.float64))
    A.eliminate_zeros()
    A.sort_indices()
    return A, np.asarray(bunch.target, dtype=np.float64)


#: fixed data shipped with a library; multiclass labels
BUNDLED: dict[str, Callable[..., tuple[sp.csr_matrix, np.ndarray]]] = {"digits": digits}
#: every kind :func:`generate` accepts
SOURCES = {**GENERATORS, **BUNDLED}


def generate(kind: str, params: Mapping, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Dispatch to a generator by name.

    Parameters
    ----------
    kind : str
        One of ``worst_case_general``, ``worst_case_binary_dual``, ``dense_gaussian``,
        ``zipf_bow`` (:data:`GENERATORS`, binary labels) or a bundled source such as ``digits``
        (:data:`BUNDLED`, multiclass labels).
    params : mapping
        Keyword arguments of the generator except ``seed`` (e.g. ``{"n": 100, "d": 50}``). For
        ``worst_case_general`` the magnitudes ``a``, ``b``, ``c`` are optional; missing ones
        come from :func:`worst_case_general_default_params`.
    seed : int

    Raises
    ------
    ConfigError
        Unknown ``kind``, unknown or missing parameter, or invalid value (message names it).
    """
    if kind not in SOURCES:
        raise ConfigError(
            f"unknown synthetic data kind {kind!r}; expected one of {sorted(SOURCES)}"
        )
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"synthetic data params for {kind!r} must be a mapping, got {params!r}")
    seed = _check_int("seed", seed, minimum=0)
    fn = SOURCES[kind]
    sig = inspect.signature(fn)
    allowed = [p for p in sig.parameters if p != "seed"]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(
            f"unknown parameter(s) {unknown} for synthetic data kind {kind!r}; allowed: {allowed}"
        )
    kwargs = dict(params)
    if kind == "worst_case_general" and not {"a", "b", "c"} <= set(kwargs):
        for name in ("d", "n"):
            if name not in kwargs:
                raise ConfigError(f"missing parameter {name!r} for synthetic data kind {kind!r}")
        defaults = worst_case_general_default_params(kwargs["d"], kwargs["n"])
        for k, v in defaults.items():
            kwargs.setdefault(k, v)
    required = [
        p.name
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty and p.name != "seed"
    ]
    missing = [p for p in required if p not in kwargs]
    if missing:
        raise ConfigError(f"missing parameter(s) {missing} for synthetic data kind {kind!r}")
    return fn(seed=seed, **kwargs)
