"""The problem description shared by every solver, objective and reference."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import ConfigError, DataError
from pdsparse.losses import LossInfo, get_loss

_PER_N = re.compile(r"^\s*([0-9.eE+-]+)\s*/\s*n\s*$")


def resolve_l2(spec: float | int | str, n: int) -> float:
    """Turn a regularization setting into a number: ``0.01`` or ``"1/n"``, ``"0.1/n"``."""
    if isinstance(spec, bool):
        raise ConfigError(f"regularization must be a number or 'c/n', got {spec!r}")
    if isinstance(spec, int | float):
        value = float(spec)
    else:
        m = _PER_N.match(str(spec))
        if not m:
            raise ConfigError(
                f"regularization must be a number or 'c/n' (e.g. '1/n'), got {spec!r}")
        try:
            value = float(m.group(1)) / n
        except ValueError:
            raise ConfigError(f"cannot read the constant in {spec!r}") from None
    if not np.isfinite(value) or value < 0:
        raise ConfigError(f"regularization must be finite and >= 0, got {spec!r} -> {value}")
    return value


@dataclass(eq=False)
class Problem:
    """min_w P(w) = 1/n sum_j phi_j(a_j^T w) + l2/2 ||w||^2 + l1 ||w||_1.

    ``A`` is n x d with examples as rows (the Face-Off paper's X is A^T). Both
    the CSR (rows: dual updates) and the CSC (columns: primal updates) copies
    are built once and cached; no solver copies the data again.
    """

    A: sp.spmatrix | sp.sparray
    b: np.ndarray
    loss: str = "logistic"
    l2: float = 1.0
    l1: float = 0.0
    name: str = ""
    _csr: sp.csr_matrix = field(init=False, repr=False)

    def __post_init__(self) -> None:
        info = get_loss(self.loss)
        A = sp.csr_matrix(self.A, dtype=np.float64)
        A.sum_duplicates()
        A.sort_indices()
        n, d = A.shape
        if n == 0 or d == 0:
            raise DataError(f"problem {self.name!r}: empty data matrix of shape {A.shape}")
        if max(n, d, A.nnz) >= 2**31:
            # int32 index arrays: half the index traffic of int64, and scipy's own default
            raise DataError(f"problem {self.name!r}: shape {A.shape} with {A.nnz} nonzeros "
                            "exceeds the int32 indices the kernels use")
        if not np.all(np.isfinite(A.data)):
            raise DataError(f"problem {self.name!r}: the data matrix has NaN or infinite entries")
        b = np.ascontiguousarray(self.b, dtype=np.float64).ravel()
        if b.shape[0] != n:
            raise DataError(f"problem {self.name!r}: {b.shape[0]} labels for {n} examples")
        if info.binary_labels and not np.all(np.abs(b) == 1.0):
            bad = np.unique(b[np.abs(b) != 1.0])[:5]
            raise DataError(
                f"problem {self.name!r}: loss {self.loss!r} needs labels in {{-1, +1}}, "
                f"found {bad.tolist()}"
            )
        if not (np.isfinite(self.l2) and self.l2 > 0):
            raise ConfigError(f"l2 must be > 0 (strong convexity), got {self.l2!r}")
        if not (np.isfinite(self.l1) and self.l1 >= 0):
            raise ConfigError(f"l1 must be >= 0, got {self.l1!r}")
        A.indices = A.indices.astype(np.int32, copy=False)
        A.indptr = A.indptr.astype(np.int32, copy=False)
        self._csr = A
        self.b = b
        self.l2 = float(self.l2)
        self.l1 = float(self.l1)

    @classmethod
    def from_dataset(cls, ds, loss: str = "logistic", l2: float | str = "1/n",
                     l1: float | str = 0.0) -> Problem:
        """Build from a :class:`pdsparse.data.store.Dataset`, resolving ``"c/n"`` settings."""
        n = ds.A.shape[0]
        return cls(ds.A, ds.b, loss=loss, l2=resolve_l2(l2, n), l1=resolve_l2(l1, n),
                   name=ds.name)

    @property
    def info(self) -> LossInfo:
        return get_loss(self.loss)

    @property
    def loss_id(self) -> int:
        return self.info.cid

    @property
    def smoothness(self) -> float:
        return self.info.smoothness

    @property
    def csr(self) -> sp.csr_matrix:
        return self._csr

    @cached_property
    def csc(self) -> sp.csc_matrix:
        C = self._csr.tocsc()
        C.sort_indices()
        C.indices = C.indices.astype(np.int32, copy=False)
        C.indptr = C.indptr.astype(np.int32, copy=False)
        return C

    @property
    def n(self) -> int:
        return self._csr.shape[0]

    @property
    def d(self) -> int:
        return self._csr.shape[1]

    @property
    def nnz(self) -> int:
        return int(self._csr.nnz)

    @cached_property
    def row_sqnorms(self) -> np.ndarray:
        """v_j = ||a_j||^2, the dual ESO parameters for serial sampling (Face-Off eq. 7)."""
        A = self._csr
        # sums of data^2 per row, without a second copy of the index arrays
        sq = sp.csr_matrix((A.data * A.data, A.indices, A.indptr), shape=A.shape)
        return np.asarray(sq.sum(axis=1)).ravel()

    @cached_property
    def col_sqnorms(self) -> np.ndarray:
        """u_i = ||A_{:,i}||^2, the primal ESO parameters for serial sampling (Face-Off eq. 7)."""
        A = self._csr
        return np.bincount(A.indices, weights=A.data * A.data, minlength=A.shape[1])
