"""Random feature maps of Rahimi & Recht (NIPS 2007) for the DGPD data sets (Lei et al. 2017).

DGPD (Sec. 5, Table 2) trains linear models on Mnist and Aloi mapped by *random Fourier*
features (dense; Gaussian kernel) and *random binning* features (sparse; Laplacian kernel).
Both maps here are fitted on the training rows and then applied unchanged to test rows; both
are deterministic functions of their seed (NumPy ``default_rng(seed)``, PCG64; the draws and
their order are listed in each class), and :meth:`params` records everything needed to redo
them, with a SHA-256 of the drawn parameters to catch a changed random stream.

:class:`RandomFourier`
    ``z(x) = sqrt(2/D) cos(W x + c)``, ``W ~ N(0, sigma^-2 I)`` (D x d), ``c ~ U[0, 2 pi)``,
    so ``E z(x)^T z(y) = exp(-||x - y||^2 / (2 sigma^2))``. Output: a dense C-order float64
    (n x D) array, filled in row chunks by one BLAS product per chunk, so the peak memory is
    the output plus one chunk (a few tens of MB): Mnist-RF, 58,000 x 10,000, is one 4.6 GB
    array.
:class:`RandomBinning`
    For each of P grids and each input dimension j a pitch ``delta ~ Gamma(shape 2, scale
    sigma)`` and a shift ``u ~ U[0, delta)``; the bin of x in grid p is the tuple
    ``(floor((x_j - u_pj) / delta_pj))_j``. The features are the one-hot indicators of the bins
    occupied by the TRAINING rows, value ``1/sqrt(P)``, so ``E z(x)^T z(y) = exp(-||x - y||_1 /
    sigma)`` and every training row has exactly P nonzeros. A test row whose bin in grid p
    was never occupied by a training row has no entry for grid p. Output: CSR, int32 column
    indices, columns grouped by grid (grid 0's bins first), numbered within a grid by their
    hash (below).

Fast binning: the tuple of a row is hashed per grid in O(nnz of the row)
(:func:`pdsparse.data._features.rb_hash_block`): ``h_p(x) = sum_j R_pj k_pj(x) mod 2^64`` with
random 64-bit multipliers ``R_pj``. A zero coordinate falls in the known bin
``k0_pj = floor(-u_pj / delta_pj)``, so ``sum_j R_pj k0_pj`` is computed once per grid and the
row's stored entries only add ``R_pj (k_pj(x) - k0_pj)``. Bins are then numbered by the sorted
distinct hashes of each grid (``np.unique``). Two distinct tuples collide only if
``sum_j R_pj e_j = 0 mod 2^64`` for their nonzero difference e; over the random R this has
probability ``2^(t - 64)`` where ``2^t`` is the largest power of two dividing every ``e_j``
(bin differences are small integers, so t is small): for Mnist-RB (1,000 grids of ~1,600 bins)
the chance of any collision is below 1e-7, and a collision would only merge two bins of one
grid. This is accepted and not checked.
"""

from __future__ import annotations

import hashlib
import math
from numbers import Real

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import ConfigError, DataError

__all__ = [
    "FEATURE_MAPS",
    "RandomBinning",
    "RandomFourier",
    "make_feature_map",
    "median_distance",
]

#: bytes of dense input per RF chunk (rows = this / d): the peak memory beyond the output
RF_CHUNK_BYTES = 32 << 20
#: grids hashed per pass over the rows (the parameters of a block stay in cache)
RB_BLOCK = 32


def _check_int(what: str, name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Real) or not float(value).is_integer():
        raise ConfigError(f"{what}: {name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ConfigError(f"{what}: {name} must be >= {minimum}, got {value}")
    return value


def _check_sigma(what: str, sigma) -> float:
    if isinstance(sigma, bool) or not isinstance(sigma, Real) or not math.isfinite(sigma):
        raise ConfigError(f"{what}: sigma must be a finite number > 0, got {sigma!r}")
    if sigma <= 0:
        raise ConfigError(f"{what}: sigma (the kernel bandwidth) must be > 0, got {sigma!r}")
    return float(sigma)


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _input(X, what: str, d: int | None = None):
    """CSR or dense float64 view of X with a finite check; ``d`` = the fitted input width."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    elif isinstance(X, np.ndarray):
        if X.ndim != 2:
            raise DataError(f"{what}: input must be 2-D, got shape {X.shape}")
        X = np.asarray(X, dtype=np.float64)
        values = X
    else:
        raise DataError(f"{what}: input must be a SciPy sparse matrix or a 2-D NumPy array, "
                        f"got {type(X).__name__}")
    if not np.all(np.isfinite(values)):
        raise DataError(f"{what}: input has NaN or infinite entries")
    if d is not None and X.shape[1] > d:
        raise DataError(f"{what}: input has {X.shape[1]} columns, the map was fitted on {d}")
    return X


def median_distance(X, metric: str = "l2", n_sample: int = 1000, seed: int = 0) -> float:
    """Median pairwise distance between ``n_sample`` rows of X drawn without replacement
    (seeded): the median heuristic for a kernel bandwidth. ``metric`` is ``"l2"`` (Gaussian
    kernel, random Fourier) or ``"l1"`` (Laplacian kernel, random binning)."""
    from scipy.spatial.distance import pdist

    if metric not in ("l1", "l2"):
        raise ConfigError(f"median_distance: metric must be 'l1' or 'l2', got {metric!r}")
    X = _input(X, "median_distance")
    n = X.shape[0]
    if n < 2:
        raise DataError("median_distance: needs at least 2 rows")
    rows = np.sort(np.random.default_rng(seed).choice(n, size=min(n, n_sample), replace=False))
    S = X[rows]
    S = S.toarray() if sp.issparse(S) else np.asarray(S)
    return float(np.median(pdist(S, "cityblock" if metric == "l1" else "euclidean")))


class RandomFourier:
    """Random Fourier features for the Gaussian kernel ``exp(-||x - y||^2 / (2 sigma^2))``.

    Draws (``rng = np.random.default_rng(seed)``, at :meth:`fit`, for input width d):
    ``W = rng.standard_normal((D, d)) / sigma``, then ``c = rng.uniform(0, 2 pi, D)``.

    Parameters
    ----------
    n_features : int
        D, the number of features (output columns), >= 1.
    sigma : float
        Kernel bandwidth, > 0 (in the units of the input as given to :meth:`fit`).
    seed : int
        Seed of the draws, >= 0.
    """

    kind = "rf"

    def __init__(self, n_features: int, sigma: float, seed: int = 0):
        what = "random Fourier features"
        self.n_features = _check_int(what, "n_features", n_features, 1)
        self.sigma = _check_sigma(what, sigma)
        self.seed = _check_int(what, "seed", seed, 0)
        self.W: np.ndarray | None = None
        self.c: np.ndarray | None = None

    @property
    def n_input(self) -> int | None:
        return None if self.W is None else int(self.W.shape[1])

    def fit(self, X) -> RandomFourier:
        """Draw W and c for the input width of X (only its number of columns is used)."""
        d = int(X.shape[1])
        if d < 1:
            raise DataError("random Fourier features: input has no columns")
        rng = np.random.default_rng(self.seed)
        W = rng.standard_normal((self.n_features, d))
        W /= self.sigma
        self.W = W
        self.c = rng.uniform(0.0, 2.0 * math.pi, self.n_features)
        return self

    def transform(self, X, out: np.ndarray | None = None,
                  chunk_rows: int | None = None) -> np.ndarray:
        """``sqrt(2/D) cos(X W^T + c)`` as a dense C-order (n, D) float64 array.

        Rows are processed ``chunk_rows`` at a time (default: 32 MB of dense input), each by
        one matrix product written straight into ``out`` (allocated if not given), so no
        second (n, D) array is ever made. A sparse X is densified one chunk at a time. The
        product is the BLAS's: the same inputs, chunk size and BLAS give the same bits; another
        chunk size or BLAS may change the last bit.
        """
        if self.W is None:
            raise DataError("random Fourier features: call fit() before transform()")
        X = _input(X, "random Fourier features", self.n_input)
        n, d = X.shape
        D = self.n_features
        if out is None:
            out = np.empty((n, D), dtype=np.float64)
        elif out.shape != (n, D) or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise DataError(f"random Fourier features: out must be a C-contiguous float64 "
                            f"array of shape {(n, D)}")
        WT = self.W[:, :d].T  # a narrower input pads with zero columns
        if chunk_rows is None:
            chunk_rows = max(1, RF_CHUNK_BYTES // (8 * max(d, 1)))
        scale = math.sqrt(2.0 / D)
        for start in range(0, n, chunk_rows):
            stop = min(n, start + chunk_rows)
            block = X[start:stop]
            block = block.toarray() if sp.issparse(block) else np.ascontiguousarray(block)
            dest = out[start:stop]
            np.matmul(block, WT, out=dest)
            dest += self.c
            np.cos(dest, out=dest)
            dest *= scale
        return out

    def fit_transform(self, X, **kw) -> np.ndarray:
        return self.fit(X).transform(X, **kw)

    def params(self) -> dict:
        """JSON-serializable record of the map (after :meth:`fit`)."""
        out = {
            "kind": self.kind,
            "n_features": self.n_features,
            "sigma": self.sigma,
            "seed": self.seed,
            "kernel": "gaussian exp(-||x-y||_2^2 / (2 sigma^2))",
            "map": "sqrt(2/D) cos(W x + c)",
            "draws": "rng = numpy.random.default_rng(seed); W = rng.standard_normal((D, d)) "
                     "/ sigma; c = rng.uniform(0, 2 pi, D)",
        }
        if self.W is not None:
            out["n_input"] = self.n_input
            out["params_sha256"] = _digest(self.W, self.c)
        return out


class RandomBinning:
    """Random binning features for the Laplacian kernel ``exp(-||x - y||_1 / sigma)``.

    Draws (``rng = np.random.default_rng(seed)``, at :meth:`fit`, for input width d; arrays
    are (P, d), grid-major): ``delta = rng.gamma(2, sigma, (P, d))``, then
    ``u = rng.uniform(0, 1, (P, d)) * delta``, then the hash multipliers
    ``R = rng.integers(0, 2^64, (P, d), dtype=uint64)``. See the module docstring for the
    hashing and its collision bound.

    Parameters
    ----------
    n_grids : int
        P, the number of grids, >= 1 (each training row gets exactly P nonzeros).
    sigma : float
        Kernel bandwidth, > 0 (in the units of the input as given to :meth:`fit`).
    seed : int
        Seed of the draws, >= 0.
    block : int
        Grids hashed per pass over the rows (speed only; results do not depend on it).

    Attributes (after fit)
    ----------------------
    delta, shift : (P, d) arrays of the pitches and shifts.
    bin_hashes : (n_features,) uint64, the sorted distinct hashes of each grid, grid after grid.
    bin_offsets : (P + 1,) int64, grid p's columns are ``bin_offsets[p] .. bin_offsets[p+1]-1``.
    """

    kind = "rb"

    def __init__(self, n_grids: int, sigma: float, seed: int = 0, block: int = RB_BLOCK):
        what = "random binning features"
        self.n_grids = _check_int(what, "n_grids", n_grids, 1)
        self.sigma = _check_sigma(what, sigma)
        self.seed = _check_int(what, "seed", seed, 0)
        self.block = _check_int(what, "block", block, 1)
        self._delta_t: np.ndarray | None = None  # (d, P) copies for the kernel
        self._shift_t: np.ndarray | None = None
        self._mult_t: np.ndarray | None = None
        self._k0_t: np.ndarray | None = None
        self._h0: np.ndarray | None = None
        self.bin_hashes: np.ndarray | None = None
        self.bin_offsets: np.ndarray | None = None
        self._digest = ""

    # ------------------------------------------------------------------ parameters
    @property
    def n_input(self) -> int | None:
        return None if self._delta_t is None else int(self._delta_t.shape[0])

    @property
    def delta(self) -> np.ndarray:
        return self._delta_t.T

    @property
    def shift(self) -> np.ndarray:
        return self._shift_t.T

    @property
    def n_features(self) -> int | None:
        return None if self.bin_offsets is None else int(self.bin_offsets[-1])

    def _draw(self, d: int) -> None:
        if d < 1:
            raise DataError("random binning features: input has no columns")
        P = self.n_grids
        rng = np.random.default_rng(self.seed)
        delta = rng.gamma(2.0, self.sigma, (P, d))
        shift = rng.uniform(0.0, 1.0, (P, d)) * delta
        mult = rng.integers(0, np.iinfo(np.uint64).max, (P, d), dtype=np.uint64, endpoint=True)
        if not np.all(delta > 0):  # Gamma draws are > 0; an underflow to 0 would divide by 0
            raise DataError(f"random binning features: a pitch underflowed to 0 (sigma "
                            f"{self.sigma!r} is too small)")
        self._digest = _digest(delta, shift, mult)
        k0 = np.floor((0.0 - shift) / delta).astype(np.int64)
        with np.errstate(over="ignore"):
            h0 = (mult * k0.astype(np.uint64)).sum(axis=1, dtype=np.uint64)
        self._delta_t = np.ascontiguousarray(delta.T)
        self._shift_t = np.ascontiguousarray(shift.T)
        self._mult_t = np.ascontiguousarray(mult.T)
        self._k0_t = np.ascontiguousarray(k0.T)
        self._h0 = h0

    # ------------------------------------------------------------------ hashing
    def _csr(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        X = _input(X, "random binning features", self.n_input)
        if not sp.issparse(X):
            X = sp.csr_matrix(X)
        n, d = X.shape
        if X.nnz and (X.indices.min() < 0 or X.indices.max() >= d):
            raise DataError("random binning features: column index out of range")
        return (np.ascontiguousarray(X.indptr, dtype=np.int64),
                np.ascontiguousarray(X.indices, dtype=np.int32),
                np.ascontiguousarray(X.data, dtype=np.float64), n)

    def _blocks(self, csr):
        """Yield ``(p0, hashes)`` with hashes (G, n) uint64 of grids p0 .. p0 + G - 1."""
        from pdsparse.data._features import rb_hash_block

        indptr, indices, data, n = csr
        buf = np.empty((min(self.block, self.n_grids), n), dtype=np.uint64)
        for p0 in range(0, self.n_grids, self.block):
            G = min(self.block, self.n_grids - p0)
            out = buf[:G]
            rb_hash_block(indptr, indices, data, self._delta_t, self._shift_t, self._mult_t,
                          self._k0_t, self._h0, p0, out)
            yield p0, out

    def hashes(self, X) -> np.ndarray:
        """(P, n) uint64 bin hashes of the rows of X (after :meth:`fit`; for tests)."""
        csr = self._csr(X)
        out = np.empty((self.n_grids, csr[3]), dtype=np.uint64)
        for p0, h in self._blocks(csr):
            out[p0:p0 + h.shape[0]] = h
        return out

    # ------------------------------------------------------------------ fit / transform
    def fit(self, X) -> RandomBinning:
        """Draw the grids for X's width and record the bins the rows of X occupy."""
        self._fit(X, keep_columns=False)
        return self

    def fit_transform(self, X) -> sp.csr_matrix:
        """:meth:`fit` on X and the features of X (exactly P nonzeros per row)."""
        return self._fit(X, keep_columns=True)

    def _fit(self, X, keep_columns: bool):
        self._draw(int(X.shape[1]))
        csr = self._csr(X)
        n, P = csr[3], self.n_grids
        self._check_size(n)
        # column of every (row, grid), int32: becomes the CSR indices without a copy
        cols = np.empty((n, P), dtype=np.int32) if keep_columns else None
        uniques, offsets = [], np.zeros(P + 1, dtype=np.int64)
        for p0, h in self._blocks(csr):
            for q in range(h.shape[0]):
                p = p0 + q
                if keep_columns:
                    u, inv = np.unique(h[q], return_inverse=True)
                    if offsets[p] + u.size >= 2**31:
                        raise DataError("random binning features: more than 2^31 - 1 bins")
                    cols[:, p] = inv
                    cols[:, p] += np.int32(offsets[p])
                else:
                    u = np.unique(h[q])
                uniques.append(u)
                offsets[p + 1] = offsets[p] + u.size
        self.bin_hashes = np.concatenate(uniques) if uniques else np.empty(0, np.uint64)
        self.bin_offsets = offsets
        if not keep_columns:
            return None
        return self._assemble(cols, n, complete=True)

    def _check_size(self, n: int) -> None:
        if n * self.n_grids >= 2**31:
            raise DataError(f"random binning features: {n} rows x {self.n_grids} grids exceed "
                            "the int32 indices of the kernels")

    def transform(self, X) -> sp.csr_matrix:
        """Features of X on the fitted bins: a row gets no entry in a grid whose bin no
        training row occupied."""
        if self.bin_offsets is None:
            raise DataError("random binning features: call fit() before transform()")
        csr = self._csr(X)
        n = csr[3]
        self._check_size(n)
        cols = np.empty((n, self.n_grids), dtype=np.int32)
        for p0, h in self._blocks(csr):
            for q in range(h.shape[0]):
                p = p0 + q
                lo, hi = self.bin_offsets[p], self.bin_offsets[p + 1]
                u = self.bin_hashes[lo:hi]
                pos = np.searchsorted(u, h[q])
                found = pos < u.size
                found[found] = u[pos[found]] == h[q][found]
                cols[:, p] = np.where(found, pos + lo, -1)  # < 2^31: checked at fit
        return self._assemble(cols, n, complete=False)

    def _assemble(self, cols: np.ndarray, n: int, complete: bool) -> sp.csr_matrix:
        """CSR from the (n, P) int32 columns (-1: no entry); consumes ``cols``."""
        P = self.n_grids
        if complete:
            indices = cols.reshape(-1)  # row-major: sorted within a row (grids in order)
            indptr = np.arange(0, n * P + 1, P, dtype=np.int32)
        else:
            mask = cols >= 0
            indices = cols[mask]
            indptr = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(mask.sum(axis=1), out=indptr[1:])
        data = np.full(indices.size, 1.0 / math.sqrt(P))
        A = sp.csr_matrix((data, indices, indptr), shape=(n, self.n_features))
        A.has_sorted_indices = True
        return A

    def params(self) -> dict:
        """JSON-serializable record of the map (after :meth:`fit`: bins per grid too)."""
        out = {
            "kind": self.kind,
            "n_grids": self.n_grids,
            "sigma": self.sigma,
            "seed": self.seed,
            "kernel": "laplacian exp(-||x-y||_1 / sigma)",
            "map": "one-hot of the training-occupied bins floor((x - u) / delta) per grid, "
                   "value 1/sqrt(P)",
            "draws": "rng = numpy.random.default_rng(seed); delta = rng.gamma(2, sigma, (P, d)); "
                     "u = rng.uniform(0, 1, (P, d)) * delta; R = rng.integers(0, 2^64, (P, d), "
                     "uint64)",
            "hash": "sum_j R_pj floor((x_j - u_pj) / delta_pj) mod 2^64, bins numbered by "
                    "sorted hash within a grid; a collision would merge two bins of a grid "
                    "(probability about P * bins_per_grid^2 / 2^64), not checked",
        }
        if self.bin_offsets is not None:
            per = np.diff(self.bin_offsets)
            out.update(n_input=self.n_input, params_sha256=self._digest,
                       n_features=self.n_features,
                       bins_per_grid={"mean": float(per.mean()), "min": int(per.min()),
                                      "max": int(per.max())})
        return out


FEATURE_MAPS = {"rf": RandomFourier, "rb": RandomBinning}


def make_feature_map(kind: str, size: int, sigma: float, seed: int = 0):
    """``RandomFourier(size, sigma, seed)`` for ``"rf"``, ``RandomBinning(size, ...)`` for
    ``"rb"`` (size = D features or P grids)."""
    if kind not in FEATURE_MAPS:
        raise ConfigError(f"unknown feature map {kind!r}; choose one of "
                          f"{', '.join(FEATURE_MAPS)}")
    return FEATURE_MAPS[kind](size, sigma, seed)
