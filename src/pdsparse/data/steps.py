"""The steps of a data recipe: small frozen dataclasses, each with its ``tag`` and its ``apply``.

A :class:`~pdsparse.data.prepare.Recipe` (the config mapping) builds an ordered tuple of them;
:func:`pdsparse.data.prepare.prepare` loads a source (a registry file, a generator, a bundled
set) into :class:`Rows` and applies the steps in that order. Each step checks its own settings
in ``__post_init__`` (a :class:`~pdsparse.errors.ConfigError` naming the config key); ``apply``
changes the rows in place and adds its entry to their metadata; a
:class:`~pdsparse.errors.DataError` of ``apply`` is prefixed with the data set and its source
by the caller.

Apply order (:attr:`Recipe.steps <pdsparse.data.prepare.Recipe.steps>`):

1. :class:`SelectClasses` (``classes``): only the rows whose raw label is listed, in file
   order, before everything else (PDBFW's MNIST 0 vs 9); the split and the input scaling then
   see only those rows. A test file's rows are filtered alike.
2. :class:`Binarize` (``positive_class``; always present): labels to ±1 for a binary task, or
   one-vs-rest with ``positive_class`` (one label or a group of labels: every listed label +1,
   every other -1), or ±1 when exactly two ``classes`` were kept (the larger label +1);
   otherwise class labels stay class labels (one-vs-rest is the solvers' business,
   :func:`pdsparse.problem.one_vs_rest`). A test file's labels take the training rows' ±1
   mapping (a label the training rows lack is an error unless ``positive_class`` decides it).
3. :class:`SplitFile` (``test_file``): the test rows are every row of a second registry file
   (a published split, e.g. LIBSVM's ``sector.scale`` / ``sector.t.scale``), read by the
   source, on the training width; recorded as a published split in ``meta["split"]``.
4. :class:`SplitRows` (``test_rows``, ``subsample``, ``split_seed``): ``perm =
   default_rng(split_seed).permutation(n)``; the test rows are ``perm[:test_rows]``, the
   training rows ``perm[test_rows:]``, or only the first ``subsample`` of those (a smaller
   stand-in keeps the same test rows: one draw, hence one step); both sets are kept in file
   order. DGPD's Mnist 58,000 / 2,000 split is not a published split: it is drawn here and
   recorded as such. After a :class:`SplitFile` only the subsample is drawn.
5. :class:`ScaleInputs` (``input_scale``, with a feature map only): ``max_abs`` divides every
   value by the largest |value| of the training rows (MNIST: 0..255 -> [0, 1], digits: 0..16
   -> [0, 1]); ``max_abs_columns`` divides each column by its own largest |value| on the
   training rows (cod-rna's first column reaches 1,868 where the others stay below 1);
   ``none`` keeps the values. ``sigma`` is in the scaled units.
6. :class:`FeatureMap` (``features``: ``rf`` with ``n_features``, ``rb`` with ``n_grids``;
   ``sigma``, ``map_seed``): :mod:`pdsparse.data.features`, fitted on the training rows and
   applied to the test rows. RF gives a dense A (stored dense), RB a sparse one.
7. :class:`Normalize` (``normalization``; always present), computed on the training rows
   and applied to the test rows with the same divisor (``avg_example_norm``) or row by row
   (``unit_rows``); ``none`` keeps the values. Face-Off Sec. 7 uses ``avg_example_norm``; the
   DGPD recipes ``none`` (both maps already give rows of norm about 1; RB: exactly 1).

Tag order (:func:`compose_tag`, :data:`TAG_ORDER`): the processed files are named by tags
that list the normalization first, then the label steps, the feature map with its input
scaling, then the split, e.g. ``none-pos0-rb1000-sig39.5-ms0-te2000-ss0``; steps whose
setting is the default (no positive class, ``max_abs`` input scaling) add nothing, so a
recipe that only normalizes is named by its normalization (``avg_example_norm``).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from pdsparse.data.libsvm import binarize_labels
from pdsparse.data.normalize import normalize_rows
from pdsparse.errors import ConfigError, DataError
from pdsparse.names import FEATURE_MAPS, INPUT_SCALES, NORMALIZATIONS

__all__ = ["FEATURES", "INPUT_SCALES", "TAG_ORDER", "Binarize", "FeatureMap", "Normalize",
           "Rows", "ScaleInputs", "SelectClasses", "SplitFile", "SplitRows", "compose_tag"]

_SAFE = re.compile(r"^[A-Za-z0-9.+-]+$")
#: a registry data-set name (pdsparse.data.registry), for ``test_file``
_REGISTRY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: feature maps of a recipe (:mod:`pdsparse.data.features`)
FEATURES = FEATURE_MAPS
#: how :class:`Binarize` treats the labels of a source without ``positive_class``
LABEL_KINDS = ("binary", "classes", "as_generated")
#: how :class:`Normalize` sums a sparse row's squares
ROW_SUMS = ("pairwise", "sequential")


# ---------------------------------------------------------------------------- settings


def _num(value: float) -> str:
    """Shortest round-trip text of a float without a trailing ``.0`` or an exponent's ``+``
    (``40.0`` -> ``40``, ``0.1`` -> ``0.1``, ``1e-05``, ``1e+20`` -> ``1e20``): distinct
    numbers give distinct texts, and the text suits a ProblemKey's recipe name."""
    text = repr(float(value)).replace("e+", "e")
    return text[:-2] if text.endswith(".0") else text


def _labels_field(name: str, value) -> tuple[str, ...]:
    """A list of raw labels as canonical texts sorted by value: ``[9, 0.0]`` -> ``("0", "9")``.

    LIBSVM labels are numbers (:func:`pdsparse.data.libsvm.read_libsvm`), so every entry must
    be one; the canonical text (:func:`_num`) makes ``9``, ``9.0`` and ``"9"`` one label and
    never contains ``+``, which joins labels in a tag."""
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise ConfigError(f"recipe: {name} must be a list of labels, got {value!r}")
    out: dict[float, str] = {}
    for item in value:
        try:
            num = float(item) if not isinstance(item, bool) else math.nan
        except (TypeError, ValueError):
            num = math.nan
        if not math.isfinite(num):
            raise ConfigError(f"recipe: {name}: {item!r} is not a label (labels are numbers)")
        if num in out:
            raise ConfigError(f"recipe: {name}: label {item!r} is listed twice")
        out[num] = _num(num)
    if not out:
        raise ConfigError(f"recipe: {name} is an empty list")
    return tuple(out[k] for k in sorted(out))


def _int_field(name: str, value, minimum: int, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Real) or not float(value).is_integer():
        raise ConfigError(f"recipe: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise ConfigError(f"recipe: {name} must be >= {minimum}, got {value!r}")
    return int(value)


def _label(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


# ------------------------------------------------------------------------------- rows


@dataclass(eq=False)
class Rows:
    """The data between two steps, changed in place by each step's ``apply``.

    ``A`` (CSR, or dense after random Fourier features) and ``y`` are the training rows and
    their labels (raw until :class:`Binarize`, then ±1 or class labels); ``A_test`` /
    ``y_test`` the test rows (a test file's, from the source, or split off by
    :class:`SplitRows`; None without). ``labels`` says what :class:`Binarize` does without
    ``positive_class`` (:data:`LABEL_KINDS`: a binary file's two labels become ±1, class
    labels stay, a generator's labels are kept); ``classes`` are the labels
    :class:`SelectClasses` kept; ``task`` ("binary", "multiclass", or None for a label
    matrix) is set by :class:`Binarize`; ``meta`` collects the source's and the steps'
    metadata entries.
    """

    name: str
    A: Any
    y: np.ndarray
    labels: str = "classes"
    A_test: Any = None
    y_test: np.ndarray | None = None
    classes: tuple[str, ...] | None = None
    task: str | None = None
    meta: dict = field(default_factory=dict)


def _values(M):
    """The stored values of a dense array or a CSR matrix (a view, scaled in place)."""
    return M if isinstance(M, np.ndarray) else M.data


# ------------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class SelectClasses:
    """Keep the rows whose raw label is listed (at least two numeric labels), in file order.

    ``classes`` is stored as canonical label texts sorted by value, so ``[9, 0]`` and
    ``[0.0, 9]`` are one step. Tag ``cl0+9``."""

    classes: tuple[str, ...]

    def __post_init__(self) -> None:
        kept = _labels_field("classes", self.classes)
        if len(kept) < 2:
            raise ConfigError(f"recipe: classes must keep at least two labels, got {list(kept)}")
        object.__setattr__(self, "classes", kept)

    def tag(self) -> str:
        return "cl" + "+".join(self.classes)

    def rows(self, y: np.ndarray) -> np.ndarray:
        """Indices (file order) of the rows of ``y`` with a listed label.

        Raises
        ------
        DataError
            A listed class has no row (the message names the labels found).
        """
        wanted = np.array([float(c) for c in self.classes])
        present = np.unique(y)
        missing = [c for c, v in zip(self.classes, wanted, strict=True) if v not in present]
        if missing:
            shown = ", ".join(_num(v) for v in present[:25]) + (" ..." if present.size > 25
                                                                 else "")
            raise DataError(f"recipe classes {', '.join(missing)} do not occur in the labels "
                            f"({shown})")
        return np.flatnonzero(np.isin(y, wanted))

    def meta(self, n_file: int, n_kept: int) -> dict:
        return {"kept": list(self.classes), "n_file": n_file, "n_kept": n_kept,
                "rows": "the rows whose raw label is listed, in file order, before any split"}

    def apply(self, rows: Rows) -> None:
        keep = self.rows(rows.y)
        rows.meta["classes"] = self.meta(int(rows.y.shape[0]), int(keep.size))
        rows.A, rows.y = rows.A[keep], rows.y[keep]
        if rows.y_test is not None:  # a test file's rows: the same labels kept
            keep = np.flatnonzero(np.isin(rows.y_test, [float(c) for c in self.classes]))
            rows.A_test, rows.y_test = rows.A_test[keep], rows.y_test[keep]
            if "test_file" in rows.meta:
                rows.meta["test_file"]["rows_kept_by_classes"] = int(keep.size)
        rows.classes = self.classes


@dataclass(frozen=True)
class Binarize:
    """Labels to ±1, or class labels kept (the module docstring, step 2).

    positive_class : str, number or list of labels, optional
        One-vs-rest: this raw label becomes +1, every other -1. A list of (numeric) labels is
        a group: each of them becomes +1, every other label -1 (a list of one label is that
        label). Tag ``pos3``, ``pos1+2+3``; none without a positive class.
    """

    positive_class: Any = None

    def __post_init__(self) -> None:
        pos = self.positive_class
        if pos is not None and not isinstance(pos, str | bytes) and hasattr(pos, "__iter__"):
            group = _labels_field("positive_class", pos)
            object.__setattr__(self, "positive_class", group[0] if len(group) == 1 else group)
        elif pos is not None and not _SAFE.match(str(pos)):
            raise ConfigError(f"recipe: positive_class {pos!r} is not a label")

    def tag(self) -> str | None:
        pos = self.positive_class
        if isinstance(pos, tuple):
            return "pos" + "+".join(pos)
        return None if pos is None else f"pos{pos}"

    @property
    def positive_labels(self) -> tuple[str, ...] | None:
        """The raw labels that become +1, as canonical texts (None: no positive_class)."""
        pos = self.positive_class
        if pos is None:
            return None
        if isinstance(pos, tuple):
            return pos
        try:
            return (_num(float(pos)),)
        except ValueError:
            return (str(pos),)

    @property
    def text(self) -> str | None:
        """The positive class as metadata records it (a group joined by ``+``)."""
        pos = self.positive_class
        return None if pos is None else "+".join(pos) if isinstance(pos, tuple) else str(pos)

    def binary(self, y: np.ndarray, classes: tuple[str, ...] | None = None) -> np.ndarray | None:
        """±1 labels of ``y``, or None when the labels stay class labels.

        ``positive_class`` one label: :func:`~pdsparse.data.libsvm.binarize_labels`; a group:
        the listed labels +1, every other -1 (each must occur). Without ``positive_class`` and
        with exactly two kept ``classes``: the larger label +1. Otherwise None.

        Raises
        ------
        DataError
            A positive label absent from ``y``, or a group that covers every label.
        """
        pos = self.positive_class
        if isinstance(pos, tuple):
            wanted = np.array([float(c) for c in pos])
            present = np.unique(y)
            missing = [c for c, v in zip(pos, wanted, strict=True) if v not in present]
            if missing:
                raise DataError(f"positive_class {', '.join(missing)} does not occur in the "
                                "labels")
            if np.isin(present, wanted).all():
                raise DataError(f"positive_class {'+'.join(pos)} covers every label: no row "
                                "would be -1")
            return np.where(np.isin(y, wanted), 1.0, -1.0)
        if pos is not None:
            return binarize_labels(y, positive=_label(str(pos)))
        if classes is not None and len(classes) == 2:
            return np.where(y == float(classes[1]), 1.0, -1.0)
        return None

    def test_labels(self, y: np.ndarray, b: np.ndarray, y_te: np.ndarray) -> np.ndarray:
        """±1 labels of the test rows' raw labels ``y_te`` under the training rows' mapping
        (raw ``y`` -> ``b``): ``positive_class`` decides any label (the listed ones +1);
        without it a label the training rows lack cannot be mapped (DataError)."""
        positives = self.positive_labels
        if positives is not None:
            return np.where(np.isin(y_te, [float(p) for p in positives]), 1.0, -1.0)
        values, first = np.unique(y, return_index=True)
        pos = np.minimum(np.searchsorted(values, y_te), max(values.size - 1, 0))
        unseen = values[pos] != y_te
        if unseen.any():
            shown = ", ".join(_num(v) for v in np.unique(y_te[unseen])[:10])
            raise DataError(f"labels {shown} do not occur in the training rows, so they have no "
                            "±1 value; give positive_class")
        return b[first][pos].astype(np.float64)

    def apply(self, rows: Rows) -> None:
        y = rows.y
        if self.positive_class is None and rows.labels == "as_generated":
            b, task = y, ("binary" if y.ndim == 1 else None)  # a label matrix: no task
        elif self.positive_class is None and rows.labels == "binary":
            b, task = binarize_labels(y), "binary"
        else:
            if y.ndim != 1:
                raise DataError("positive_class needs one label per row; the labels are a "
                                "matrix")
            b = self.binary(y, rows.classes)
            task = "multiclass" if b is None else "binary"
            b = y.copy() if b is None else b
        if rows.y_test is not None:  # a test file's labels, mapped as the training rows'
            try:
                rows.y_test = (rows.y_test.copy() if task == "multiclass"
                               else self.test_labels(y, b, rows.y_test))
            except DataError as exc:
                name = rows.meta.get("test_file", {}).get("name")
                raise DataError(f"test file {name!r}: {exc}") from exc
        rows.y, rows.task = b, task
        if task is not None:
            rows.meta["task"] = task
            rows.meta["positive_class"] = self.text


@dataclass(frozen=True)
class SplitFile:
    """The test rows are a second registry data set's (``test_file``, e.g. LIBSVM's
    ``sector.t.scale``): read by the source, checked against its own registry entry and put
    on the training width (:func:`pdsparse.data.prepare.prepare`); here recorded as a
    published split. Tag ``tfsector.t.scale``."""

    test_file: str

    def __post_init__(self) -> None:
        name = self.test_file
        if not isinstance(name, str) or not _REGISTRY_NAME.match(name) or "__" in name:
            raise ConfigError(f"recipe: test_file must be a registry data-set name, got "
                              f"{name!r}")

    def tag(self) -> str:
        return f"tf{self.test_file}"

    def apply(self, rows: Rows) -> None:
        if rows.meta.get("test_file", {}).get("name") != self.test_file:
            raise ConfigError(f"recipe test_file {self.test_file!r}: the source has not read "
                              "that file (only a registry data set has a test file)")
        n = int(rows.A.shape[0])
        n_test = int(rows.y_test.shape[0])
        rows.meta["split"] = {
            "method": f"test rows: every row of the registry file {self.test_file!r} in "
                      "file order; training rows: the training file",
            "split_seed": 0, "n_file": n, "n_train": n, "n_test": n_test, "subsample": None,
            "test_file": self.test_file, "published": True,
            "note": "the data set's own training / test files (e.g. LIBSVM's sector.scale / "
                    "sector.t.scale), not a split drawn here",
            "train_rows_sha256": _rows_sha256(np.arange(n)),
        }
        if not n_test:
            rows.A_test = rows.y_test = None


def _rows_sha256(rows: np.ndarray) -> str:
    return hashlib.sha256(rows.astype(np.int64).tobytes()).hexdigest()


@dataclass(frozen=True)
class SplitRows:
    """Test rows and a training subsample drawn from one seeded permutation (the module
    docstring, step 4). ``test_rows`` 0 and no ``subsample`` draw nothing (a recipe then has
    no such step). Tags ``te2000-ss0``, ``sub100-ss0``, ``te2000-sub10000-ss0``."""

    test_rows: int = 0
    subsample: int | None = None
    split_seed: int = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "test_rows", _int_field("test_rows", self.test_rows, 0))
        set_(self, "subsample", _int_field("subsample", self.subsample, 1, allow_none=True))
        set_(self, "split_seed", _int_field("split_seed", self.split_seed, 0))
        if self.split_seed != 0 and not self.draws:
            raise ConfigError("recipe: split_seed only applies with test_rows or subsample")

    @property
    def draws(self) -> bool:
        """Whether the step draws any rows (test rows or a subsample)."""
        return bool(self.test_rows) or self.subsample is not None

    def tag(self) -> str | None:
        if not self.draws:
            return None
        parts = [f"te{self.test_rows}"] if self.test_rows else []
        if self.subsample is not None:
            parts.append(f"sub{self.subsample}")
        return "-".join([*parts, f"ss{self.split_seed}"])

    def draw(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Training and test row indices (sorted) of an n-row file.

        ``perm = default_rng(split_seed).permutation(n)``; test = ``perm[:test_rows]``;
        training = ``perm[test_rows:]``, cut to the first ``subsample`` rows when set. Without
        a split or subsample: all rows for training, none for test.

        Raises
        ------
        DataError
            ``test_rows >= n`` or ``subsample > n - test_rows`` (the message names the
            setting).
        """
        t, k = self.test_rows, self.subsample
        if t >= n:
            raise DataError(f"recipe test_rows={t} leaves no training rows: the file has {n} "
                            "rows")
        if k is not None and k > n - t:
            raise DataError(f"recipe subsample={k} exceeds the {n - t} training rows ({n} rows "
                            f"- test_rows {t})")
        if not self.draws:
            return np.arange(n), np.empty(0, dtype=np.int64)
        perm = np.random.default_rng(self.split_seed).permutation(n)
        test = np.sort(perm[:t])
        train = np.sort(perm[t:] if k is None else perm[t:t + k])
        return train, test

    def apply(self, rows: Rows) -> None:
        n = int(rows.A.shape[0])
        train, test = self.draw(n)
        split = rows.meta.get("split")
        if split is not None:  # the test rows are a test file's (SplitFile): a subsample only
            split.update(
                method=split["method"] + " (perm = numpy.random.default_rng(split_seed)."
                "permutation(n_file); train = perm[:subsample], sorted)",
                split_seed=self.split_seed, n_train=int(train.size), subsample=self.subsample,
                train_rows_sha256=_rows_sha256(train))
        else:
            rows.meta["split"] = {
                "method": "perm = numpy.random.default_rng(split_seed).permutation(n_file); "
                          "test = perm[:test_rows]; train = perm[test_rows:][:subsample]; "
                          "both sorted (file order)",
                "split_seed": self.split_seed, "n_file": n, "n_train": int(train.size),
                "n_test": int(test.size), "subsample": self.subsample,
                "published": False,
                "note": "derived from the training file with a recorded seed; not a published "
                        "split (DGPD's Mnist 58,000 / 2,000 split was not published)",
                "train_rows_sha256": _rows_sha256(train),
                "test_rows": test.tolist(),
            }
            if test.size:
                rows.A_test, rows.y_test = rows.A[test], rows.y[test]
        rows.A, rows.y = rows.A[train], rows.y[train]


@dataclass(frozen=True)
class ScaleInputs:
    """Divide the inputs of a feature map (the module docstring, step 5); part of a recipe
    only with a feature map. Tag ``inmax_abs_columns``, ``innone``; none for ``max_abs``
    (the default)."""

    input_scale: str = "max_abs"

    def __post_init__(self) -> None:
        if self.input_scale not in INPUT_SCALES:
            raise ConfigError(f"recipe: unknown input_scale {self.input_scale!r}; choose one "
                              f"of {', '.join(INPUT_SCALES)}")

    def tag(self) -> str | None:
        return None if self.input_scale == "max_abs" else f"in{self.input_scale}"

    def apply(self, rows: Rows) -> None:
        A, A_te = rows.A, rows.A_test
        scale: Any = 1.0
        if self.input_scale == "max_abs":
            scale = float(np.abs(A.data).max()) if A.nnz else 0.0
            if not scale > 0:
                raise DataError("input_scale max_abs: the training rows are all zero")
            A.data /= scale
            if A_te is not None:
                A_te.data /= scale
        elif self.input_scale == "max_abs_columns":
            cols = np.asarray(abs(A).max(axis=0).todense()).ravel()
            cols[cols == 0] = 1.0  # a column zero on every training row stays zero
            A.data /= cols[A.indices]
            if A_te is not None:
                A_te.data /= cols[A_te.indices]
            scale = {"min": float(cols.min()), "max": float(cols.max())}
        rows.meta.setdefault("features", {})["input_scale"] = {
            "method": self.input_scale, "divisor": scale, "computed_on": "training rows"}


@dataclass(frozen=True)
class FeatureMap:
    """Random Fourier (``features: rf``, ``size`` = D = ``n_features``, dense output) or
    random binning (``rb``, ``size`` = P = ``n_grids``, sparse output) features
    (:mod:`pdsparse.data.features`) with bandwidth ``sigma`` and seed ``map_seed``, fitted on
    the training rows. Tag ``rb1000-sig39.5-ms0``."""

    features: str
    size: int | None
    sigma: float | None
    map_seed: int = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.features not in FEATURES:
            raise ConfigError(f"recipe: unknown features {self.features!r}; choose one of "
                              f"{', '.join(FEATURES)} (or none)")
        set_(self, "map_seed", _int_field("map_seed", self.map_seed, 0))
        if self.size is None:
            raise ConfigError(f"recipe: features {self.features!r} needs {self.size_key}")
        set_(self, "size", _int_field(self.size_key, self.size, 1))
        sigma = self.sigma
        if sigma is None:
            raise ConfigError(f"recipe: features {self.features!r} needs sigma (the kernel "
                              "bandwidth)")
        if isinstance(sigma, bool) or not isinstance(sigma, Real) or not math.isfinite(sigma):
            raise ConfigError(f"recipe: sigma must be a finite number, got {sigma!r}")
        if sigma <= 0:
            raise ConfigError(f"recipe: sigma (the kernel bandwidth) must be > 0, got {sigma!r}")
        set_(self, "sigma", float(sigma))

    @property
    def size_key(self) -> str:
        """The config key of the size: ``n_features`` (rf) or ``n_grids`` (rb)."""
        return "n_features" if self.features == "rf" else "n_grids"

    def tag(self) -> str:
        return f"{self.features}{self.size}-sig{_num(self.sigma)}-ms{self.map_seed}"

    def apply(self, rows: Rows) -> None:
        from pdsparse.data.features import make_feature_map, median_distance

        fmap = make_feature_map(self.features, self.size, self.sigma, self.map_seed)
        metric = "l2" if self.features == "rf" else "l1"
        median = median_distance(rows.A, metric, n_sample=1000, seed=self.map_seed) \
            if rows.A.shape[0] >= 2 else None
        d_in = int(rows.A.shape[1])
        rows.A = fmap.fit_transform(rows.A)
        if rows.A_test is not None:
            rows.A_test = fmap.transform(rows.A_test)
        rows.meta.setdefault("features", {}).update({
            **fmap.params(),
            "n_input": d_in,
            f"median_{metric}_distance": median,
            "median_distance_note": f"median pairwise {metric} distance of up to 1,000 scaled "
                                    "training rows (seed map_seed), for judging sigma",
        })


@dataclass(frozen=True)
class Normalize:
    """:func:`pdsparse.data.normalize.normalize` semantics on the training rows, applied to
    the test rows alike (the module docstring, step 7). Tag: the method.

    ``row_sums`` is how a sparse row's squares are summed for its norm (:data:`ROW_SUMS`):
    ``pairwise`` as scipy's CSR row sums do (numpy's pairwise summation,
    :func:`pdsparse.data.normalize.row_norms`), ``sequential`` in file order with bounded
    temporaries (:func:`row_norms`). The two differ in the last bits of some rows (sector.scale:
    3,041 of 6,412 norms); the recipe picks the one its files were made with, so that no file
    changes (:class:`pdsparse.data.prepare.Recipe`). Dense rows are summed one way."""

    normalization: str = "avg_example_norm"
    row_sums: str = "sequential"

    def __post_init__(self) -> None:
        if self.normalization not in NORMALIZATIONS:
            raise ConfigError(f"recipe: unknown normalization {self.normalization!r}; valid "
                              f"methods: {', '.join(NORMALIZATIONS)}")
        if self.row_sums not in ROW_SUMS:
            raise ConfigError(f"normalize: unknown row_sums {self.row_sums!r}; choose one of "
                              f"{', '.join(ROW_SUMS)}")

    def tag(self) -> str:
        return self.normalization

    def apply(self, rows: Rows) -> None:
        rows.meta["normalization"] = normalize_rows(rows.A, rows.A_test, self.normalization,
                                                    self.row_sums)


#: the order of the steps' tags in a recipe tag (today's file names; not the apply order)
TAG_ORDER = (Normalize, SelectClasses, Binarize, FeatureMap, ScaleInputs, SplitFile, SplitRows)


def compose_tag(steps) -> str:
    """The recipe tag of ``steps``: their tags in :data:`TAG_ORDER`, joined by ``-``
    (path-safe, never ``__``)."""
    ordered = sorted(steps, key=lambda step: TAG_ORDER.index(type(step)))
    return "-".join(tag for step in ordered if (tag := step.tag()))
