"""The problem description shared by every solver, objective and reference.

min_W P(W) = 1/n sum_i sum_c phi(a_i^T W_{:,c}, B_{i,c}) + g(W): data ``A`` (n x d), labels
``b`` (n,) with a vector variable w (d,), or a label matrix ``B`` (n, k) with a matrix variable
W (d, k), a loss from :mod:`pdsparse.losses` and a penalty g from :mod:`pdsparse.penalties`.
:class:`ProblemKey` names a problem (reference files, trace keys, the aggregate join).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from pdsparse import _products
from pdsparse.errors import ConfigError, DataError
from pdsparse.losses import LossInfo, get_loss
from pdsparse.penalties import (
    PENALTY_PARAMS,
    ElasticNet,
    Penalty,
    check_params,
    penalty_class,
    resolve_penalty,
    resolve_value,
)

_UNSET: Any = object()

CSC_BAND = 256
"""The CSC copy is built in bands of this many columns (``_products.csr_to_csc``) when the
rows hold at least :data:`CSC_BAND_ROW_ENTRIES` entries a band on average: each band's
column cursors stay in the cache, where thousands of columns' cursors leave it between two
entries of a column; on short rows a visit to every row per band costs more than it saves
(benchmarks/README.md, "Measurements cited by the code")."""
CSC_BAND_ROW_ENTRIES = 16


def one_class_message(label: float) -> str:
    """What a one-class file with a classification loss means, in one line: the one home of
    the warning of :meth:`Problem.from_libsvm` and ``pdsparse advise``.

    Both warn rather than refuse: the problem is well posed (the l2 term gives a unique
    finite minimizer, which every solver reaches), the data statistics that read A alone are
    still right, and a one-class file can be a legitimate piece (a test split, a shard), but
    the classifier is trivial: every margin is pushed the same way."""
    shown = str(int(label)) if float(label).is_integer() else repr(float(label))
    return (f"the file has one class only (label {shown}): a classifier on it is trivial (it "
            "pushes every margin the same way)")


def _sample_weights(sample_weight, n: int, name: str) -> np.ndarray | None:
    """Example weights scaled to mean 1 (None: all 1). P(w) = 1/n sum_i s_i phi_i(a_i^T w) +
    g(w) with s = n sample_weight / sum(sample_weight): a weight of 2 is a duplicated row
    (with n counting it twice) and a weight of 0 a removed one, scikit-learn's semantics."""
    if sample_weight is None:
        return None
    s = np.asarray(sample_weight, dtype=np.float64)
    if s.shape != (n,):
        raise DataError(f"problem {name!r}: sample_weight of shape {s.shape} for {n} examples")
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise DataError(f"problem {name!r}: sample_weight must be finite and >= 0")
    total = float(s.sum())
    if not total > 0:
        raise DataError(f"problem {name!r}: sample_weight sums to 0 (no example counts)")
    if np.all(s == s[0]):  # equal weights are no weights: the unweighted kernels, to the bit
        return None
    return np.ascontiguousarray(s * (n / total))


def resolve_l2(spec: float | int | str, n: int) -> float:
    """Turn a regularization setting into a number: ``0.01`` or ``"1/n"``, ``"0.1/n"``."""
    return resolve_value(spec, n, "regularization")


class Problem:
    """min_W 1/n sum_i phi(a_i^T W, b_i) + g(W), g a :class:`~pdsparse.penalties.Penalty`.

    ``Problem(A, b, loss, l2=..., l1=...)`` is the Face-Off shorthand for
    ``penalty=ElasticNet(l2, l1)``; ``Problem(A, B, loss, penalty)`` takes any penalty (also
    in the fourth place) or a config mapping ``{"name": ..., <params>}`` whose ``"c/n"``
    values are resolved with this ``n``. Labels ``b`` of shape (n,) make the variable a
    vector (d,); a label matrix ``B`` (n, k) makes it a matrix (d, k), one column per label
    column, and the loss is summed over the k columns (P = sum over columns of the k vector
    problems when g is separable, as the elastic net is).

    ``A`` is n x d with examples as rows (the Face-Off paper's X is A^T). Both the CSR (rows:
    dual updates) and the CSC (columns: primal updates) copies are built once and cached; no
    solver copies the data again. ``key`` is the :class:`ProblemKey` naming the problem
    (set by :meth:`from_dataset`, else None).

    ``intercept``: an unpenalized intercept c, P(w, c) = 1/n sum s_i phi_i(a_i^T w + c) +
    g(w), the variable's last entry (``var_shape``); the dual gains the constraint
    sum_i s_i alpha_i = 0 (:mod:`pdsparse.objective`). Primal RCD fits it.

    ``sample_weight`` (n,), optional: example weights, scaled to mean 1 (``weights``; None
    when absent or all equal), each loss term s_i phi_i (:mod:`pdsparse.objective`); primal
    and dual RCD read them in their kernels and every other solver refuses a weighted problem
    (:attr:`pdsparse.solvers.registry.SolverSpec.weights`).

    Code written for the elastic net with a vector variable (the Face-Off kernels) should take
    its weights from :meth:`elastic_net`, which refuses a ball or a label matrix; ``l2``,
    ``l1`` (0 for a ball) and ``radius`` (inf for the elastic net) are plain views.
    """

    def __init__(self, A: sp.spmatrix | sp.sparray, b: np.ndarray, loss: str = "logistic",
                 l2: float | Penalty = _UNSET, l1: float = _UNSET, name: str = "",
                 penalty: Penalty | Mapping | None = None, key: ProblemKey | None = None,
                 sample_weight: np.ndarray | None = None, intercept: bool = False):
        if isinstance(l2, Penalty | Mapping):
            if penalty is not None:
                raise ConfigError("give the penalty once (fourth argument or penalty=)")
            penalty, l2 = l2, _UNSET
        if penalty is not None and (l2 is not _UNSET or l1 is not _UNSET):
            raise ConfigError("give either penalty= or the shorthand l2=/l1=, not both")
        self.A = A
        self.loss = loss
        self.name = name
        self.key = key
        info = get_loss(loss)
        if isinstance(A, np.ndarray):
            # dense features (random Fourier): kept as the one C-order copy, never as CSR
            if A.ndim != 2:
                raise DataError(f"problem {name!r}: a dense data matrix must be 2-D, "
                                f"got shape {A.shape}")
            A = np.ascontiguousarray(A, dtype=np.float64)
            n, d = A.shape
            dense = A
        else:
            # scipy caches a matrix's canonical-format check (an O(nnz) scan) on the object:
            # asked of the caller's CSR, repeated fits on one matrix scan it once
            canonical = sp.issparse(A) and A.format == "csr" and A.has_canonical_format
            A = sp.csr_matrix(A, dtype=np.float64)
            if canonical:
                A.has_canonical_format = True
            A.sum_duplicates()
            A.sort_indices()
            n, d = A.shape
            dense = None
        if n == 0 or d == 0:
            raise DataError(f"problem {name!r}: empty data matrix of shape {A.shape}")
        stored = n * d if dense is not None else A.nnz
        if max(n, d, stored) >= 2**31:
            # int32 index arrays: half the index traffic of int64, and scipy's own default
            raise DataError(f"problem {name!r}: shape {A.shape} with {stored} stored entries "
                            "exceeds the int32 indices the kernels use")
        if not np.all(np.isfinite(A if dense is not None else A.data)):
            raise DataError(f"problem {name!r}: the data matrix has NaN or infinite entries")
        b = np.asarray(b, dtype=np.float64)
        if b.ndim == 2:
            b = np.ascontiguousarray(b)
        else:
            b = np.ascontiguousarray(b, dtype=np.float64).ravel()
        if b.shape[0] != n:
            raise DataError(f"problem {name!r}: {b.shape[0]} labels for {n} examples")
        if b.ndim == 2 and b.shape[1] == 0:
            raise DataError(f"problem {name!r}: a label matrix with no columns")
        if not np.all(np.isfinite(b)):
            raise DataError(f"problem {name!r}: the labels have NaN or infinite entries")
        if info.binary_labels and not np.all(np.abs(b) == 1.0):
            bad = np.unique(b[np.abs(b) != 1.0])[:5]
            raise DataError(
                f"problem {name!r}: loss {loss!r} needs labels in {{-1, +1}}, "
                f"found {bad.tolist()}"
            )
        if penalty is None:
            penalty = ElasticNet(1.0 if l2 is _UNSET else l2, 0.0 if l1 is _UNSET else l1)
        elif isinstance(penalty, Mapping):
            penalty = resolve_penalty(penalty, n)
        elif not isinstance(penalty, Penalty):
            raise ConfigError(f"penalty must be a pdsparse.penalties.Penalty or a mapping, "
                              f"got {penalty!r}")
        if penalty.matrix_only and b.ndim != 2:
            raise ConfigError(f"problem {name!r}: {type(penalty).__name__} needs a matrix "
                              "variable: give a label matrix B (n, k)")
        if dense is None:
            A.indices = A.indices.astype(np.int32, copy=False)
            A.indptr = A.indptr.astype(np.int32, copy=False)
        self._csr = A if dense is None else None
        self._dense = dense
        self.b = b
        self.penalty = penalty
        self.weights = _sample_weights(sample_weight, n, name)
        self.intercept = bool(intercept)

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.shape)) + (" dense" if self.dense else "")
        labels = f", k={self.k}" if self.matrix else ""
        weighted = (", weighted" if self.weights is not None else "") + (
            ", intercept" if self.intercept else "")
        return (f"Problem({self.name!r}, {shape}, nnz={self.nnz}{labels}, loss={self.loss!r}, "
                f"penalty={self.penalty!r}{weighted})")

    @classmethod
    def from_spec(cls, spec: ProblemKey, ds) -> Problem:
        """The problem ``spec`` names, on the data of ``ds`` (a
        :class:`pdsparse.data.store.Dataset`): the one constructor of a problem from a spec,
        which :meth:`from_dataset`, :meth:`from_libsvm`, the workflow's runs and references
        and ``pdsparse reference`` all go through.

        The penalty's ``"c/n"`` values are resolved with the data's n; a multiclass data set
        with a loss that needs +-1 labels is solved one-vs-rest (a label matrix). The
        problem's ``key`` is ``spec``.
        """
        if not isinstance(spec, ProblemKey):
            raise ConfigError(f"a problem spec is a ProblemKey, got {spec!r}")
        b = ds.b
        meta = getattr(ds, "meta", None) or {}
        if meta.get("task") == "multiclass" and get_loss(spec.loss).binary_labels:
            b, _ = one_vs_rest(ds.b)
        return cls(ds.A, b, loss=spec.loss, penalty=spec.resolve(ds.A.shape[0]), name=ds.name,
                   key=spec)

    @classmethod
    def from_dataset(cls, ds, loss: str = "logistic", l2: float | str = _UNSET,
                     l1: float | str = _UNSET, penalty: Mapping | Penalty | None = None,
                     recipe: str = "") -> Problem:
        """Build from a :class:`pdsparse.data.store.Dataset`, resolving ``"c/n"`` settings.

        Either ``l2``/``l1`` (the elastic net; l2 defaults to ``"1/n"``) or ``penalty``, a
        config mapping ``{"name": "l1_ball", "radius": 300, "l2": "10/n"}`` (or a Penalty).
        The problem's ``key`` is the :class:`ProblemKey` of the settings as given
        (:meth:`from_spec`).
        """
        if penalty is not None:
            if l2 is not _UNSET or l1 is not _UNSET:
                raise ConfigError("give either penalty= or the shorthand l2=/l1=, not both")
            if isinstance(penalty, Penalty):
                spec = {"name": penalty.name, **penalty.params()}
            else:
                spec = dict(penalty)
        else:
            spec = {"name": "elastic_net", "l2": "1/n" if l2 is _UNSET else l2,
                    "l1": 0.0 if l1 is _UNSET else l1}
        if "name" not in spec:
            raise ConfigError(f"a penalty is a mapping with a 'name' and its parameters, got "
                              f"{spec!r}")
        params = {k: v for k, v in spec.items() if k != "name"}
        return cls.from_spec(ProblemKey(ds.name, loss, spec["name"], params, recipe=recipe), ds)

    @classmethod
    def from_libsvm(cls, path: str | os.PathLike, loss: str = "logistic",
                    l2: float | str = _UNSET, l1: float | str = _UNSET,
                    penalty: Mapping | Penalty | None = None,
                    positive_class: float | int | str | None = None,
                    normalization: str = "none") -> Problem:
        """A problem from one's own LIBSVM file (plain, ``.bz2`` or ``.gz``) in one call: no
        registry entry, no workflow.

        Labels: two classes become -1/+1 (the smaller label -1); with ``positive_class``
        that class is +1 and every other -1; a multiclass file without it is solved
        one-vs-rest (a label matrix, one column per class) by a loss that needs +-1 labels,
        as is (the squared loss) otherwise. ``normalization``: "none", "unit_rows" or
        "avg_example_norm" (:func:`pdsparse.data.normalize.normalize`). The penalty as in
        :meth:`from_dataset` (``l2`` default "1/n", resolved with the file's n). Errors name
        the file and line (:func:`pdsparse.data.libsvm.read_libsvm`). A file with one class
        and a classification loss is solved with a ``UserWarning`` (:func:`one_class_message`:
        the classifier is trivial), as ``pdsparse advise`` warns.
        """
        from pdsparse.data.libsvm import binarize_labels, read_libsvm
        from pdsparse.data.normalize import normalize
        from pdsparse.data.store import Dataset

        A, y = read_libsvm(path)
        A, _ = normalize(A, normalization)
        classes = np.unique(y)
        binary = get_loss(loss).binary_labels
        if binary and classes.size == 1:
            warnings.warn(f"{path}: {one_class_message(classes[0])}", UserWarning,
                          stacklevel=2)
        if positive_class is not None or (binary and classes.size <= 2):
            b, task = binarize_labels(y, positive_class), "binary"
        else:
            b, task = y, "multiclass" if classes.size > 2 else "binary"
        name = Path(path).name
        ds = Dataset(name=name, A=A, b=b, meta={"task": task})
        return cls.from_dataset(ds, loss, l2, l1, penalty, recipe=normalization)

    def with_penalty(self, penalty: Penalty) -> Problem:
        """The same data and labels under another penalty, sharing this problem's matrices,
        their CSC copy and norms (no copy of A); ``key`` is dropped (it names the penalty)."""
        if penalty.matrix_only and not self.matrix:
            raise ConfigError(f"problem {self.name!r}: {type(penalty).__name__} needs a matrix "
                              "variable: give a label matrix B (n, k)")
        other = object.__new__(Problem)
        other.__dict__.update(self.__dict__)
        other.penalty, other.key = penalty, None
        return other

    def column(self, c: int) -> Problem:
        """The vector problem of label column ``c`` (one class of one-vs-rest), sharing this
        problem's data: no copy of A, its CSC or its norms is made."""
        if not self.matrix:
            if c != 0:
                raise IndexError(f"problem {self.name!r} has one label column, not {c + 1}")
            return self
        sub = object.__new__(Problem)
        sub.__dict__.update({k: v for k, v in self.__dict__.items()
                             if k in ("A", "loss", "key", "_csr", "_dense", "csc",
                                      "row_sqnorms", "col_sqnorms", "weights", "intercept")})
        # the CSC and the norms are cached properties: make them once, here, for every column
        for name in ("row_sqnorms", "col_sqnorms") + (() if self.dense else ("csc",)):
            sub.__dict__[name] = getattr(self, name)
        sub.name = f"{self.name}[{c}]"
        sub.b = np.ascontiguousarray(self.b[:, c])
        sub.penalty = self.penalty
        return sub

    # -- the penalty ---------------------------------------------------------------------

    @property
    def l2(self) -> float:
        """The l2 weight of the penalty (mu in DGPD/PDBFW, lambda in Face-Off)."""
        return self.penalty.l2

    @property
    def l1(self) -> float:
        """The l1 weight: the elastic net's; 0 for the balls (no l1 term)."""
        return self.penalty.l1

    @property
    def radius(self) -> float:
        """The ball's radius; inf for the elastic net (no constraint)."""
        return self.penalty.radius

    def elastic_net(self, who: str = "this method") -> ElasticNet:
        """The penalty, checked to be an :class:`ElasticNet` (for code written for
        g = l2/2 ||w||^2 + l1 ||w||_1 with a vector variable, e.g. the Face-Off kernels)."""
        if not isinstance(self.penalty, ElasticNet):
            raise ConfigError(f"{who} handles the elastic net only; problem {self.name!r} has "
                              f"{self.penalty!r}")
        if self.matrix:
            raise ConfigError(f"{who} handles a vector variable only; problem {self.name!r} "
                              f"has a label matrix with k = {self.k} columns")
        return self.penalty

    # -- labels and shapes -----------------------------------------------------------------

    @property
    def B(self) -> np.ndarray:
        """The labels: (n,) or (n, k), the same array as ``b``."""
        return self.b

    @property
    def matrix(self) -> bool:
        """Labels are a matrix B (n, k), so the variable is a matrix W (d, k)."""
        return self.b.ndim == 2

    @property
    def k(self) -> int:
        """Columns of the label matrix (1 for a label vector)."""
        return self.b.shape[1] if self.b.ndim == 2 else 1

    @property
    def var_shape(self) -> tuple[int, ...]:
        """Shape of the primal variable: (d,) or (d, k); one more row, the unpenalized
        intercept, with ``intercept`` (its last entry: w = (coefficients, c))."""
        rows = self.d + 1 if self.intercept else self.d
        return (rows, self.k) if self.matrix else (rows,)

    @property
    def dual_shape(self) -> tuple[int, ...]:
        """Shape of the dual variable: (n,) or (n, k)."""
        return self.b.shape

    # -- the loss ---------------------------------------------------------------------------

    @property
    def info(self) -> LossInfo:
        return get_loss(self.loss)

    @property
    def loss_id(self) -> int:
        return self.info.cid

    @property
    def smoothness(self) -> float:
        return self.info.smoothness

    # -- the data ---------------------------------------------------------------------------

    @property
    def dense(self) -> bool:
        """The data matrix is a dense array (one C-order copy; no CSR or CSC)."""
        return self._dense is not None

    @property
    def shape(self) -> tuple[int, int]:
        return self.mat.shape

    @property
    def mat(self) -> sp.csr_matrix | np.ndarray:
        """A as stored: the CSR matrix, or the dense array. ``mat @ w`` and ``mat.T @ alpha``
        are the products every evaluation uses (:mod:`pdsparse.objective`)."""
        return self._dense if self._dense is not None else self._csr

    @cached_property
    def mat_t(self) -> sp.csc_matrix | np.ndarray:
        """A^T as stored, ``mat.T`` made once: a CSC view of the CSR's arrays (no copy), or the
        dense array's transpose. The products A^T alpha of every evaluation use it; scipy
        builds a new matrix object at each ``.T``, a large share of an evaluation of a small
        problem (measured: benchmarks/README.md, "Measurements cited by the code")."""
        return self.mat.T

    @property
    def csr(self) -> sp.csr_matrix:
        if self._csr is None:
            raise ConfigError(f"problem {self.name!r} has dense data: use Problem.mat or "
                              "Problem.lines (a CSR copy of dense features is never made)")
        return self._csr

    @property
    def csc_built(self) -> bool:
        """The CSC copy exists already (a column kernel or an evaluation asked for it)."""
        return "csc" in self.__dict__

    @cached_property
    def csc(self) -> sp.csc_matrix:
        """The CSC copy of A (int32 indices): scipy's ``tocsc``, or the same arrays built in
        bands of :data:`CSC_BAND` columns (``_products.csr_to_csc``) where the rows are long
        enough."""
        R = self.csr
        n, d = R.shape
        if d > CSC_BAND and R.nnz >= CSC_BAND_ROW_ENTRIES * n * -(-d // CSC_BAND):
            data, indices, indptr = _products.csr_to_csc(R.data, R.indices, R.indptr, d,
                                                         CSC_BAND)
            C = sp.csc_matrix((data, indices, indptr), shape=R.shape, copy=False)
            C.has_canonical_format = True  # each column's rows in order, no duplicate
            return C
        C = R.tocsc()
        C.sort_indices()
        C.indices = C.indices.astype(np.int32, copy=False)
        C.indptr = C.indptr.astype(np.int32, copy=False)
        return C

    def lines(self, by: str) -> tuple:
        """Kernel arguments for the rows (``by="rows"``) or columns (``"cols"``) of A: the
        ``(layout, data, indices, indptr, count, length, step, inc)`` of ``_matrix.pxd``'s
        ``lines_init``. Sparse rows come from the CSR, sparse columns from the CSC (built
        once); dense rows and columns are both views of the one dense array."""
        if by not in ("rows", "cols"):
            raise ValueError(f"lines: by must be 'rows' or 'cols', got {by!r}")
        none = np.empty(0, dtype=np.int32)
        n, d = self.shape
        if self._dense is not None:
            flat = self._dense.reshape(-1)
            if by == "rows":
                return (1, flat, none, none, n, d, d, 1)
            return (1, flat, none, none, d, n, 1, d)
        M = self._csr if by == "rows" else self.csc
        count = n if by == "rows" else d
        return (0, M.data, M.indices, M.indptr, count, 0, 0, 0)

    @property
    def n(self) -> int:
        return self.shape[0]

    @property
    def d(self) -> int:
        return self.shape[1]

    @property
    def nnz(self) -> int:
        """Stored entries of A (n d when dense): the unit of the kernels' work budgets."""
        if self._dense is not None:
            return int(self._dense.size)
        return int(self._csr.nnz)

    @cached_property
    def loss_gradient_at_zero(self) -> np.ndarray:
        """The gradient of the averaged loss at w = 0 (coefficients and intercept), A^T (s
        phi'(0, b)) / n: one pass over A, with the example weights s. Computed once:
        lambda_max's without an intercept (``pdsparse.solvers.predict``, which "auto" asks)
        and prox_newton's first gradient from w = 0 are the one vector. The arithmetic of
        ``objective.loss_gradient`` at w = 0 (the same bits), kept here because the problem
        cannot import the objective."""
        from pdsparse import losses

        g = losses.derivs(self.loss_id, np.zeros(self.n), self.b)
        if self.weights is not None:
            g = g * self.weights
        return np.asarray(self.mat_t @ g, dtype=np.float64).reshape(-1) / self.n

    @cached_property
    def row_sqnorms(self) -> np.ndarray:
        """v_j = ||a_j||^2, the dual ESO parameters for serial sampling (Face-Off eq. 7)."""
        if self._dense is not None:
            return np.einsum("ij,ij->i", self._dense, self._dense)
        A = self._csr
        # sums of data^2 per row: scipy's csr .sum(axis=1) (a reduceat over the nonempty
        # rows), without the matrix objects around it (two thirds of a dual RCD setup on a
        # 100 x 10 problem)
        out = np.zeros(A.shape[0])
        rows = np.flatnonzero(np.diff(A.indptr))
        if rows.size:
            out[rows] = np.add.reduceat(A.data * A.data, A.indptr[rows].astype(np.intp))
        return out

    @cached_property
    def weighted_col_sqnorms(self) -> np.ndarray:
        """sum_j s_j A_ji^2, the column norms under the example weights s (``col_sqnorms``
        when unweighted): primal RCD's coordinate Lipschitz constants."""
        if self.weights is None:
            return self.col_sqnorms
        if self._dense is not None:
            return self.weights @ (self._dense * self._dense)
        A = self._csr
        rows = np.repeat(self.weights, np.diff(A.indptr))
        return np.bincount(A.indices, weights=A.data * A.data * rows, minlength=A.shape[1])

    @cached_property
    def col_sqnorms(self) -> np.ndarray:
        """u_i = ||A_{:,i}||^2, the primal ESO parameters for serial sampling (Face-Off eq. 7)."""
        if self._dense is not None:
            return np.einsum("ij,ij->j", self._dense, self._dense)
        A = self._csr
        return np.bincount(A.indices, weights=A.data * A.data, minlength=A.shape[1])


# ------------------------------------------------------------------------------------------
# Problem keys
# ------------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_RECIPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+_-]*$")
_SHORT = {"l1_ball": "l1ball", "trace_ball": "traceball"}
_FROM_SHORT = {v: k for k, v in _SHORT.items()}


def _spec_value(value: Any, what: str) -> float | str:
    """A parameter as given in config, normalized: a float, or ``"c/n"`` without blanks."""
    resolve_value(value, 1, what)  # validates: a number >= 0 or "c/n"
    if isinstance(value, str):
        return re.sub(r"\s+", "", value)
    return float(value)


def _spec_tag(value: float | str) -> str:
    """``"1/n" -> "1_n"``, numbers by ``repr``: ``0.001 -> "0.001"`` (repro.config.l2_tag)."""
    if isinstance(value, str):
        return value.replace("/", "_")
    return repr(float(value))


def _spec_from_tag(text: str) -> float | str:
    return text[:-2] + "/n" if text.endswith("_n") else float(text)


@dataclass(frozen=True)
class ProblemKey:
    """The one name of a problem: data set (+ preparation recipe), loss, penalty as configured.

    ``params`` holds the penalty's parameters as given in config (``{"l2": "1/n"}``; a
    mapping is accepted and stored as a tuple of pairs in the penalty's parameter order);
    parameters equal to their default 0 (l1 of the elastic net, l2 of a ball) are dropped, so
    ``l1: 0`` and no l1 give the same key. ``recipe`` names the preparation of the data set
    ("" for the plain processed file, as in Face-Off).

    ``tag()`` joins, with ``"__"``:

    * the data set, ``<dataset>`` or ``<dataset>+<recipe>``;
    * the loss;
    * the penalty's parameters as ``<key>-<value>``, the value being ``"c/n"`` with ``/`` made
      ``_`` or the ``repr`` of the number: the elastic net gives ``l2-<v>`` then, if l1 > 0,
      ``l1-<v>``; a ball gives ``l1ball-<radius>`` or ``traceball-<radius>`` then, if l2 > 0,
      ``l2-<v>``.

    So Face-Off's problems keep their reference names ``<dataset>__<loss>__l2-<tag>``
    (``rcv1.binary__logistic__l2-1_n``), and e.g. DGPD's and PDBFW's are
    ``mnist+rb1000__smooth_hinge__l2-0.1__l1-0.01`` and
    ``rcv1.binary__smooth_hinge__l1ball-300.0__l2-10_n``. Data set and recipe names match
    ``[A-Za-z0-9][A-Za-z0-9._-]*`` without ``__``, so ``from_tag`` inverts ``tag``.
    """

    dataset: str
    loss: str
    penalty: str = "elastic_net"
    params: tuple[tuple[str, float | str], ...] | Mapping[str, Any] = ()
    recipe: str = ""

    def __post_init__(self) -> None:
        # a recipe may join labels with "+" (``cl0+9``): the tag's head splits at the first
        # "+", and data set names have none
        for what, text, required, pattern in (
                ("dataset", self.dataset, True, _NAME_RE),
                ("recipe", self.recipe, False, _RECIPE_RE)):
            if not isinstance(text, str) or (required or text) and (
                    not pattern.match(text) or "__" in text):
                raise ConfigError(f"problem key: {what} {text!r} must match "
                                  f"{pattern.pattern[1:-1]} without '__'")
        get_loss(self.loss)
        penalty_class(self.penalty)
        given = dict(self.params)
        check_params(self.penalty, given)
        params = []
        for name, default in PENALTY_PARAMS[self.penalty]:
            if name not in given:
                continue
            value = _spec_value(given[name], f"penalty {self.penalty!r}: {name}")
            if default == 0.0 and resolve_value(value, 1) == 0.0:
                continue
            params.append((name, value))
        object.__setattr__(self, "params", tuple(params))

    @classmethod
    def faceoff(cls, dataset: str, loss: str, l2: float | str) -> ProblemKey:
        """Face-Off's problems: the elastic net with l1 = 0, no recipe."""
        return cls(dataset, loss, "elastic_net", {"l2": l2})

    def param_dict(self) -> dict[str, float | str]:
        """The parameters as given (defaults dropped)."""
        return dict(self.params)

    def penalty_spec(self) -> dict[str, Any]:
        """``{"name": ..., <params>}`` for :func:`pdsparse.penalties.resolve_penalty`."""
        return {"name": self.penalty, **self.param_dict()}

    def resolve(self, n: int) -> Penalty:
        """The penalty for a data set of ``n`` examples."""
        return resolve_penalty(self.penalty_spec(), n)

    def tag(self) -> str:
        head = f"{self.dataset}+{self.recipe}" if self.recipe else self.dataset
        tokens = [head, self.loss]
        params = self.param_dict()
        if self.penalty == "elastic_net":
            order = ["l2", "l1"]
        else:
            order = ["radius", "l2"]
        for name in order:
            if name in params:
                label = _SHORT[self.penalty] if name == "radius" else name
                tokens.append(f"{label}-{_spec_tag(params[name])}")
        return "__".join(tokens)

    @classmethod
    def from_tag(cls, tag: str) -> ProblemKey:
        """The key whose ``tag()`` is ``tag``."""
        parts = tag.split("__")
        if len(parts) < 3:
            raise ConfigError(f"problem tag {tag!r}: expected <dataset>__<loss>__<penalty...>")
        head, loss, tokens = parts[0], parts[1], parts[2:]
        dataset, _, recipe = head.partition("+")
        penalty = "elastic_net"
        params: dict[str, float | str] = {}
        for token in tokens:
            label, sep, value = token.partition("-")
            if not sep:
                raise ConfigError(f"problem tag {tag!r}: cannot read {token!r}")
            try:
                parsed = _spec_from_tag(value)
            except ValueError:
                raise ConfigError(f"problem tag {tag!r}: cannot read {token!r}") from None
            if label in _FROM_SHORT:
                penalty, label = _FROM_SHORT[label], "radius"
            params[label] = parsed
        key = cls(dataset, loss, penalty, params, recipe=recipe)
        if key.tag() != tag:
            raise ConfigError(f"problem tag {tag!r} is not in canonical form ({key.tag()!r})")
        return key



def one_vs_rest(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels of a multiclass data set as a one-vs-rest label matrix ``B`` (n, k) in {-1, +1}
    (column c: class ``classes[c]`` against the rest), and the sorted ``classes``.

    DGPD's data sets are multiclass; the DGPD text does not say how its binary smooth-hinge
    problems were formed from them, so we solve one-vs-rest (../shared/ALGORITHMS.md, "Multiclass"):
    P(W) = sum over the k columns of the binary problems, which decouple for a separable
    penalty (the elastic net).
    """
    y = np.asarray(y).ravel()
    classes = np.unique(y)
    if classes.size < 2:
        raise DataError(f"one-vs-rest needs at least two classes, found {classes.tolist()}")
    B = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    return np.ascontiguousarray(B), classes
