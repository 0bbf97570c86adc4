"""Prepare a data set by its recipe: ``data/processed/<name>__<recipe tag>.npz``.

One path for real and synthetic data: :func:`prepare` reads a verified raw LIBSVM file,
:func:`prepare_synthetic` runs a seeded generator; both then apply the same
:class:`Recipe` and save atomically. Two papers that prepare one raw file differently name
two recipes and get two files.

Steps for a raw file: parse (:func:`~pdsparse.data.libsvm.read_libsvm`, with
``n_features = spec.d``), check n, d, nnz and label counts against the registry, keep the
rows of some raw labels (``classes``, e.g. PDBFW's MNIST 0 vs 9), map labels to ±1 for a
binary task (or one-vs-rest with ``positive_class``, one label or a set of labels), normalize
(:mod:`pdsparse.data.normalize`; Face-Off Sec. 7 uses ``avg_example_norm``), and save
atomically with metadata (:func:`~pdsparse.data.store.save_dataset`).

Recipes for DGPD (Lei et al. 2017) add, in this order, after the labels:

1. **Split** (``test_rows``, ``subsample``, ``split_seed``): ``perm =
   default_rng(split_seed).permutation(n)``; the test rows are ``perm[:test_rows]``, the
   training rows ``perm[test_rows:]``, or only the first ``subsample`` of those (a smaller
   stand-in keeps the same test rows); both sets are kept in file order. DGPD's Mnist
   58,000 / 2,000 split is not a published split: it is drawn here and recorded as such in
   ``meta["split"]``. The test rows go into the same ``.npz`` (``A_test``, ``b_test``).
   Or the test rows come from a **second file** (``test_file``: a registry name, e.g.
   LIBSVM's published ``sector.scale`` / ``sector.t.scale`` split): it is parsed and checked
   against its own registry entry, then put on the training width: a test file narrower
   than the training file gets zero columns, a wider one loses the entries beyond the
   training width (no training row has those features, so a linear model weighs them 0;
   liblinear's predict ignores them likewise), counted in ``meta["test_file"]``; the class
   filter keeps its rows of the listed labels, and its labels take the training rows' ±1
   mapping (a label the training rows lack is an error unless ``positive_class`` decides
   it). Every later step treats these rows as it treats split-off test rows.
2. **Input scaling** (``input_scale``, with a feature map only): ``max_abs`` divides every
   value by the largest |value| of the training rows (MNIST: raw intensities 0..255 -> [0, 1],
   digits: 0..16 -> [0, 1]); ``max_abs_columns`` divides each column by its own largest
   |value| on the training rows (features of different units: cod-rna's first column reaches
   1,868 where the others stay below 1, so one divisor leaves them below a bin's width);
   ``none`` keeps the values. ``sigma`` is in the scaled units.
3. **Feature map** (``features``: ``rf`` with ``n_features``, ``rb`` with ``n_grids``;
   ``sigma``, ``map_seed``): :mod:`pdsparse.data.features`, fitted on the training rows and
   applied to the test rows. RF gives a dense A (stored dense), RB a sparse one.
4. **Normalization**, computed on the training rows and applied to the test rows with the
   same divisor (``avg_example_norm``) or row by row (``unit_rows``). The DGPD recipes use
   ``none``: both maps already give rows of norm about 1 (RB: exactly 1).

Multiclass labels stay class labels (one-vs-rest is the solvers' business,
:func:`pdsparse.problem.one_vs_rest`) unless ``positive_class`` is set or ``classes`` keeps
exactly two labels.

Recipes for PDBFW (Lei et al. 2019, Table 2) add a **class filter** before everything else
(``classes``: only the rows whose raw label is listed, in file order; the split and the
input scaling then see only those rows) and **label groups** (``positive_class`` as a list:
every listed raw label becomes +1, every other -1, e.g. two groups of newsgroups of the
multiclass news20 as a stand-in of news20.binary).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from pdsparse.data.libsvm import binarize_labels, label_counts, read_libsvm
from pdsparse.data.normalize import normalize
from pdsparse.data.registry import DatasetSpec
from pdsparse.data.store import Dataset, save_dataset
from pdsparse.errors import ConfigError, DataError
from pdsparse.names import NORMALIZATIONS

__all__ = ["FEATURES", "INPUT_SCALES", "Recipe", "binary_labels", "check_shape", "prepare",
           "prepare_synthetic", "select_classes", "split_rows"]

_SAFE = re.compile(r"^[A-Za-z0-9.+-]+$")
#: a registry data-set name (pdsparse.data.registry), for ``test_file``
_REGISTRY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: feature maps of a recipe (:mod:`pdsparse.data.features`)
FEATURES = ("rf", "rb")
#: input scalings applied before a feature map
INPUT_SCALES = ("max_abs", "max_abs_columns", "none")


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


@dataclass(frozen=True)
class Recipe:
    """How a data set is prepared, named in config; :meth:`tag` names the processed file.

    normalization : {"avg_example_norm", "unit_rows", "none"}
        :func:`pdsparse.data.normalize.normalize` (Face-Off Sec. 7: ``avg_example_norm``);
        with a split, computed on the training rows and applied to the test rows alike.
    positive_class : str or list of labels, optional
        One-vs-rest: this raw label becomes +1, every other -1. A list of (numeric) labels is
        a group: each of them becomes +1, every other label -1 (a list of one label is that
        label). Without it multiclass labels are kept as class labels.
    classes : list of labels, optional
        Keep only the rows whose raw label is one of these (at least two numeric labels),
        in file order, before any other step (PDBFW Table 2: MNIST digits 0 and 9). With
        exactly two classes and no ``positive_class`` the labels become ±1, the larger
        label +1 (as :func:`pdsparse.data.libsvm.binarize_labels` maps a two-valued set);
        a ``positive_class`` must be among the classes and leave a negative one.
    features : {"rf", "rb"}, optional
        Random Fourier (``n_features`` = D, dense output) or random binning (``n_grids`` = P,
        sparse output) features (:mod:`pdsparse.data.features`) with bandwidth ``sigma`` and
        seed ``map_seed``, fitted on the training rows.
    input_scale : {"max_abs", "max_abs_columns", "none"}
        Before the feature map: divide by the training rows' largest |value| (MNIST pixels /
        255), each column by its own largest |value|, or not. Only with ``features``.
    test_rows : int
        Rows of the file held out as test rows (0: none), drawn with ``split_seed``.
    subsample : int, optional
        Keep only this many training rows (a stand-in such as ``mnist10k``), drawn with
        ``split_seed`` after the test rows, so the test rows do not change.
    split_seed : int
        Seed of the split and the subsample (only with ``test_rows`` or ``subsample``).
    test_file : str, optional
        A second registry data set whose rows are the test rows (a published split, e.g.
        LIBSVM's ``sector.scale`` / ``sector.t.scale``), in place of ``test_rows``: read,
        checked against its own registry entry, put on the training width (module
        docstring), labelled and transformed exactly as the training rows (class filter,
        ±1 mapping, input scaling, feature map and normalization fitted on the training rows).

    Settings that would have no effect (``sigma`` without ``features``, ``split_seed``
    without a split, ...) are errors, so that one file has one recipe. The module docstring
    gives the order of the steps. Tags (``-`` separated, path-safe, never ``__``):
    ``avg_example_norm``, ``none-pos3``, ``none-rb1000-sig39.5-ms0-te2000-ss0``,
    ``none-rf10000-sig10-ms0-te2000-sub10000-ss0``; labels of a list are joined by ``+``:
    ``unit_rows-pos1+2+3``, ``none-cl0+9-rb100-sig0.1-ms0``; a test file adds ``tf`` and
    its registry name: ``unit_rows-tfsector.t.scale``. Lists are stored as sorted tuples of
    canonical label texts, so ``[9, 0]`` and ``[0.0, 9]`` are one recipe.
    """

    normalization: str = "avg_example_norm"
    positive_class: str | None = None
    features: str | None = None
    n_features: int | None = None
    n_grids: int | None = None
    sigma: float | None = None
    map_seed: int = 0
    input_scale: str = "max_abs"
    test_rows: int = 0
    subsample: int | None = None
    split_seed: int = 0
    classes: tuple[str, ...] | None = None
    test_file: str | None = None

    def __post_init__(self) -> None:
        if self.normalization not in NORMALIZATIONS:
            raise ConfigError(
                f"recipe: unknown normalization {self.normalization!r}; "
                f"choose one of {', '.join(NORMALIZATIONS)}"
            )
        set_ = object.__setattr__
        pos = self.positive_class
        if pos is not None and not isinstance(pos, str | bytes) and hasattr(pos, "__iter__"):
            group = _labels_field("positive_class", pos)
            set_(self, "positive_class", group[0] if len(group) == 1 else group)
        elif pos is not None and not _SAFE.match(str(pos)):
            raise ConfigError(f"recipe: positive_class {pos!r} is not a label")
        if self.classes is not None:
            kept = _labels_field("classes", self.classes)
            if len(kept) < 2:
                raise ConfigError(f"recipe: classes must keep at least two labels, got "
                                  f"{list(kept)}")
            set_(self, "classes", kept)
            positives = self.positive_labels
            if positives is not None:
                outside = [p for p in positives if p not in kept]
                if outside:
                    raise ConfigError(f"recipe: positive_class {', '.join(outside)} is not "
                                      f"among classes {', '.join(kept)}")
                if len(positives) == len(kept):
                    raise ConfigError("recipe: positive_class covers every one of classes "
                                      f"{', '.join(kept)}: no row would be -1")
        if self.features is not None and self.features not in FEATURES:
            raise ConfigError(f"recipe: unknown features {self.features!r}; choose one of "
                              f"{', '.join(FEATURES)} (or none)")
        if self.input_scale not in INPUT_SCALES:
            raise ConfigError(f"recipe: unknown input_scale {self.input_scale!r}; choose one "
                              f"of {', '.join(INPUT_SCALES)}")
        set_(self, "map_seed", _int_field("map_seed", self.map_seed, 0))
        set_(self, "test_rows", _int_field("test_rows", self.test_rows, 0))
        set_(self, "subsample", _int_field("subsample", self.subsample, 1, allow_none=True))
        set_(self, "split_seed", _int_field("split_seed", self.split_seed, 0))
        size = {"rf": "n_features", "rb": "n_grids"}
        if self.features is None:
            given = [k for k in ("n_features", "n_grids", "sigma") if getattr(self, k) is not None]
            if self.map_seed != 0:
                given.append("map_seed")
            if self.input_scale != "max_abs":
                given.append("input_scale")
            if given:
                raise ConfigError(f"recipe: {', '.join(given)} only apply to a feature map; "
                                  "set features: rf or rb")
        else:
            need, other = size[self.features], size["rb" if self.features == "rf" else "rf"]
            if getattr(self, other) is not None:
                raise ConfigError(f"recipe: {other} does not apply to features "
                                  f"{self.features!r} (it takes {need})")
            if getattr(self, need) is None:
                raise ConfigError(f"recipe: features {self.features!r} needs {need}")
            set_(self, need, _int_field(need, getattr(self, need), 1))
            sigma = self.sigma
            if sigma is None:
                raise ConfigError(f"recipe: features {self.features!r} needs sigma (the kernel "
                                  "bandwidth)")
            if isinstance(sigma, bool) or not isinstance(sigma, Real) or not math.isfinite(sigma):
                raise ConfigError(f"recipe: sigma must be a finite number, got {sigma!r}")
            if sigma <= 0:
                raise ConfigError(f"recipe: sigma (the kernel bandwidth) must be > 0, "
                                  f"got {sigma!r}")
            set_(self, "sigma", float(sigma))
        if self.split_seed != 0 and not (self.test_rows or self.subsample):
            raise ConfigError("recipe: split_seed only applies with test_rows or subsample")
        if self.test_file is not None:
            name = self.test_file
            if not isinstance(name, str) or not _REGISTRY_NAME.match(name) or "__" in name:
                raise ConfigError(f"recipe: test_file must be a registry data-set name, got "
                                  f"{name!r}")
            if self.test_rows:
                raise ConfigError(f"recipe: test_rows and test_file {name!r} both give test "
                                  "rows; keep one")

    @property
    def legacy(self) -> bool:
        """Only normalization and one positive_class (the Face-Off recipes): prepared exactly
        as before the DGPD fields existed (same files, same metadata)."""
        return (self.features is None and self.test_rows == 0 and self.subsample is None
                and self.classes is None and not isinstance(self.positive_class, tuple)
                and self.test_file is None)

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
    def map_size(self) -> int | None:
        """D (rf) or P (rb)."""
        return self.n_features if self.features == "rf" else self.n_grids

    def tag(self) -> str:
        """``avg_example_norm``, ``none-pos3``, ``none-rb1000-sig39.5-ms0-te2000-ss0``: safe
        in file names, distinct per recipe."""
        parts = [self.normalization]
        if self.classes is not None:
            parts.append("cl" + "+".join(self.classes))
        if isinstance(self.positive_class, tuple):
            parts.append("pos" + "+".join(self.positive_class))
        elif self.positive_class is not None:
            parts.append(f"pos{self.positive_class}")
        if self.features is not None:
            parts += [f"{self.features}{self.map_size}", f"sig{_num(self.sigma)}",
                      f"ms{self.map_seed}"]
            if self.input_scale != "max_abs":
                parts.append(f"in{self.input_scale}")
        if self.test_file is not None:
            parts.append(f"tf{self.test_file}")
        if self.test_rows:
            parts.append(f"te{self.test_rows}")
        if self.subsample is not None:
            parts.append(f"sub{self.subsample}")
        if self.test_rows or self.subsample is not None:
            parts.append(f"ss{self.split_seed}")
        return "-".join(parts)

    def to_dict(self) -> dict:
        """The fields that differ from their defaults (for metadata and config)."""
        defaults = Recipe()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(defaults, f.name)
                or f.name == "normalization"}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def check_shape(spec: DatasetSpec, n: int, d: int, nnz: int, source: str = "") -> None:
    """Compare a parsed shape with the registry; ``None`` fields of ``spec`` are not checked.

    Raises
    ------
    DataError
        Naming the data set, the file, and expected vs found values.
    """
    found = {"n": n, "d": d, "nnz": nnz}
    expected = {k: getattr(spec, k) for k in found if getattr(spec, k) is not None}
    bad = [k for k, v in expected.items() if found[k] != v]
    if bad:
        exp = ", ".join(f"{k}={expected[k]:,}" for k in bad)
        got = ", ".join(f"{k}={found[k]:,}" for k in bad)
        where = f" (file {source})" if source else ""
        raise DataError(
            f"dataset {spec.name!r}{where}: shape does not match config/datasets.yaml: "
            f"expected {exp}; found {got}. Wrong or truncated file, or a wrong registry entry"
        )


def _check_labels(spec: DatasetSpec, y: np.ndarray, source: str) -> None:
    if spec.label_counts is None:
        return
    values, counts = np.unique(y, return_counts=True)
    found = {float(v): int(c) for v, c in zip(values, counts, strict=True)}
    if found != spec.label_counts:

        def fmt(dct: dict[float, int]) -> str:
            return "{" + ", ".join(f"{v:g}: {c}" for v, c in sorted(dct.items())) + "}"

        raise DataError(
            f"dataset {spec.name!r} (file {source}): label counts {fmt(found)} differ from "
            f"config/datasets.yaml {fmt(spec.label_counts)}"
        )


def select_classes(A: sp.csr_matrix, y: np.ndarray, recipe: Recipe,
                   name: str = "") -> tuple[sp.csr_matrix, np.ndarray, dict | None]:
    """The rows of ``A``, ``y`` whose raw label is in ``recipe.classes`` (file order), and
    the metadata entry of the filter (None, and A, y unchanged, without ``classes``).

    Raises
    ------
    DataError
        A listed class has no row (the message names the data set and the labels found).
    """
    if recipe.classes is None:
        return A, y, None
    wanted = np.array([float(c) for c in recipe.classes])
    present = np.unique(y)
    missing = [c for c, v in zip(recipe.classes, wanted, strict=True) if v not in present]
    if missing:
        shown = ", ".join(_num(v) for v in present[:25]) + (" ..." if present.size > 25 else "")
        where = f"data set {name!r}: " if name else ""
        raise DataError(f"{where}recipe classes {', '.join(missing)} do not occur in the "
                        f"labels ({shown})")
    rows = np.flatnonzero(np.isin(y, wanted))
    meta = {"kept": list(recipe.classes), "n_file": int(y.shape[0]), "n_kept": int(rows.size),
            "rows": "the rows whose raw label is listed, in file order, before any split"}
    return A[rows], y[rows], meta


def binary_labels(y: np.ndarray, recipe: Recipe, name: str = "") -> np.ndarray | None:
    """±1 labels of ``y`` under the recipe, or None when the labels stay class labels.

    ``positive_class`` one label: :func:`~pdsparse.data.libsvm.binarize_labels`; a group:
    the listed labels +1, every other -1 (each must occur). Without ``positive_class`` and
    with exactly two ``classes``: the larger label +1. Otherwise None.

    Raises
    ------
    DataError
        A positive label absent from ``y`` (the message names the data set).
    """
    where = f"data set {name!r}: " if name else ""
    pos = recipe.positive_class
    if isinstance(pos, tuple):
        wanted = np.array([float(c) for c in pos])
        present = np.unique(y)
        missing = [c for c, v in zip(pos, wanted, strict=True) if v not in present]
        if missing:
            raise DataError(f"{where}positive_class {', '.join(missing)} does not occur in "
                            "the labels")
        if np.isin(present, wanted).all():
            raise DataError(f"{where}positive_class {'+'.join(pos)} covers every label: no "
                            "row would be -1")
        return np.where(np.isin(y, wanted), 1.0, -1.0)
    if pos is not None:
        try:
            return binarize_labels(y, positive=_label(str(pos)))
        except DataError as exc:
            raise DataError(f"{where}{exc}") from exc
    if recipe.classes is not None and len(recipe.classes) == 2:
        return np.where(y == float(recipe.classes[1]), 1.0, -1.0)
    return None


def split_rows(n: int, recipe: Recipe, name: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Training and test row indices (sorted) of an n-row file under ``recipe``.

    ``perm = default_rng(split_seed).permutation(n)``; test = ``perm[:test_rows]``; training =
    ``perm[test_rows:]``, cut to the first ``subsample`` rows when set. Without a split or
    subsample: all rows for training, none for test.

    Raises
    ------
    DataError
        ``test_rows >= n`` or ``subsample > n - test_rows`` (the message names the setting).
    """
    where = f"data set {name!r}: " if name else ""
    t, k = recipe.test_rows, recipe.subsample
    if t >= n:
        raise DataError(f"{where}recipe test_rows={t} leaves no training rows: the file has "
                        f"{n} rows")
    if k is not None and k > n - t:
        raise DataError(f"{where}recipe subsample={k} exceeds the {n - t} training rows "
                        f"({n} rows - test_rows {t})")
    if not t and k is None:
        return np.arange(n), np.empty(0, dtype=np.int64)
    perm = np.random.default_rng(recipe.split_seed).permutation(n)
    test = np.sort(perm[:t])
    train = np.sort(perm[t:] if k is None else perm[t:t + k])
    return train, test


def _row_norms(A, chunk_nnz: int = 1 << 22) -> np.ndarray:
    """Row 2-norms of a dense array or a CSR matrix, with bounded temporaries (a CSR is
    squared ~4 M stored entries at a time; ``A.multiply(A)`` would copy all of A)."""
    if isinstance(A, np.ndarray):
        return np.sqrt(np.einsum("ij,ij->i", A, A))
    n = A.shape[0]
    out = np.zeros(n)
    indptr = A.indptr
    start = 0
    while start < n:
        stop = int(np.searchsorted(indptr, indptr[start] + chunk_nnz, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        counts = np.diff(indptr[start:stop + 1])
        rows = np.repeat(np.arange(stop - start), counts)
        sq = A.data[indptr[start]:indptr[stop]] ** 2
        out[start:stop] = np.bincount(rows, weights=sq, minlength=stop - start)
        start = stop
    return np.sqrt(out)


def _normalize_inplace(A, A_test, method: str) -> dict:
    """``normalize`` semantics on the training rows A (in place, dense or sparse), applied
    to the test rows alike: ``avg_example_norm`` divides both by the TRAINING mean row norm,
    ``unit_rows`` scales every row to norm 1."""
    if method not in NORMALIZATIONS:
        raise ConfigError(f"unknown normalization {method!r}; valid methods: "
                          f"{', '.join(NORMALIZATIONS)}")
    norms = _row_norms(A)
    before = float(norms.mean()) if norms.size else 0.0
    info: dict = {"method": method, "mean_row_norm_before": before}

    def values(M):
        return M if isinstance(M, np.ndarray) else M.data

    if method == "avg_example_norm":
        if not before > 0.0:
            raise DataError("avg_example_norm: every example is zero; cannot normalize")
        for M in (A, A_test):
            if M is not None:
                values(M)[...] /= before
        info["scale"] = before
    elif method == "unit_rows":
        zero_rows = 0
        for M, nrm in ((A, norms), (A_test, None)):
            if M is None:
                continue
            nrm = _row_norms(M) if nrm is None else nrm
            zero = nrm == 0.0
            inv = np.divide(1.0, nrm, out=np.ones_like(nrm), where=~zero)
            if isinstance(M, np.ndarray):
                M *= inv[:, None]
            else:
                M.data *= np.repeat(inv, np.diff(M.indptr))
            zero_rows += int(zero.sum()) if M is A else 0
        info["zero_rows"] = zero_rows
    else:
        info["scale"] = 1.0
    info["mean_row_norm_after"] = (before if method == "none"
                                   else float(_row_norms(A).mean()) if A.shape[0] else 0.0)
    info["computed_on"] = "training rows"
    return info


def _apply_recipe(A: sp.csr_matrix, b: np.ndarray, recipe: Recipe, name: str,
                  test: tuple[sp.csr_matrix, np.ndarray] | None = None):
    """Split, scale, map and normalize (module docstring). ``A`` is consumed (its values may
    be scaled in place). ``test``: the rows and labels of a ``test_file``, already on A's
    width and labelled (:func:`_read_test_file`). Returns A, b, A_test, b_test (None without
    test rows), the normalization info and the metadata entries of these steps."""
    from pdsparse.data.features import make_feature_map, median_distance

    n = A.shape[0]
    train, test_idx = split_rows(n, recipe, name)
    meta: dict[str, Any] = {"recipe": recipe.to_dict(), "recipe_tag": recipe.tag()}
    if test is not None:
        meta["split"] = {
            "method": f"test rows: every row of the registry file {recipe.test_file!r} in "
                      "file order; training rows: the training file"
                      + (" (perm = numpy.random.default_rng(split_seed).permutation(n_file); "
                         "train = perm[:subsample], sorted)" if recipe.subsample else ""),
            "split_seed": recipe.split_seed, "n_file": n, "n_train": int(train.size),
            "n_test": int(test[1].shape[0]), "subsample": recipe.subsample,
            "test_file": recipe.test_file, "published": True,
            "note": "the data set's own training / test files (e.g. LIBSVM's sector.scale / "
                    "sector.t.scale), not a split drawn here",
            "train_rows_sha256": hashlib.sha256(train.astype(np.int64).tobytes()).hexdigest(),
        }
        A_tr, b_tr = (A[train], b[train]) if recipe.subsample is not None else (A, b)
        A_te, b_te = test
        if not b_te.shape[0]:
            A_te = b_te = None
    elif recipe.test_rows or recipe.subsample is not None:
        meta["split"] = {
            "method": "perm = numpy.random.default_rng(split_seed).permutation(n_file); "
                      "test = perm[:test_rows]; train = perm[test_rows:][:subsample]; "
                      "both sorted (file order)",
            "split_seed": recipe.split_seed, "n_file": n, "n_train": int(train.size),
            "n_test": int(test_idx.size), "subsample": recipe.subsample,
            "published": False,
            "note": "derived from the training file with a recorded seed; not a published "
                    "split (DGPD's Mnist 58,000 / 2,000 split was not published)",
            "train_rows_sha256": hashlib.sha256(train.astype(np.int64).tobytes()).hexdigest(),
            "test_rows": test_idx.tolist(),
        }
        A_tr, b_tr = A[train], b[train]
        A_te, b_te = (A[test_idx], b[test_idx]) if test_idx.size else (None, None)
    else:
        A_tr, b_tr, A_te, b_te = A, b, None, None
    del A

    if recipe.features is not None:
        scale = 1.0
        if recipe.input_scale == "max_abs":
            scale = float(np.abs(A_tr.data).max()) if A_tr.nnz else 0.0
            if not scale > 0:
                raise DataError(f"data set {name!r}: input_scale max_abs: the training rows "
                                "are all zero")
            A_tr.data /= scale
            if A_te is not None:
                A_te.data /= scale
        elif recipe.input_scale == "max_abs_columns":
            cols = np.asarray(abs(A_tr).max(axis=0).todense()).ravel()
            cols[cols == 0] = 1.0  # a column zero on every training row stays zero
            A_tr.data /= cols[A_tr.indices]
            if A_te is not None:
                A_te.data /= cols[A_te.indices]
            scale = {"min": float(cols.min()), "max": float(cols.max())}
        fmap = make_feature_map(recipe.features, recipe.map_size, recipe.sigma, recipe.map_seed)
        metric = "l2" if recipe.features == "rf" else "l1"
        median = median_distance(A_tr, metric, n_sample=1000, seed=recipe.map_seed) \
            if A_tr.shape[0] >= 2 else None
        d_in = int(A_tr.shape[1])
        Z = fmap.fit_transform(A_tr)
        del A_tr
        Z_te = fmap.transform(A_te) if A_te is not None else None
        meta["features"] = {
            **fmap.params(),
            "input_scale": {"method": recipe.input_scale, "divisor": scale,
                            "computed_on": "training rows"},
            "n_input": d_in,
            f"median_{metric}_distance": median,
            "median_distance_note": f"median pairwise {metric} distance of up to 1,000 scaled "
                                    "training rows (seed map_seed), for judging sigma",
        }
        A_tr, A_te = Z, Z_te
    info = _normalize_inplace(A_tr, A_te, recipe.normalization)
    return A_tr, b_tr, A_te, b_te, info, meta


def _stored(A) -> int:
    return int(A.size) if isinstance(A, np.ndarray) else int(A.nnz)


def _save_recipe(out_path, name: str, A, b, A_te, b_te, info: dict, meta: dict,
                 extra: dict) -> Dataset:
    meta.update(extra)
    meta.update({
        "normalization": info,
        "n": int(A.shape[0]),
        "d": int(A.shape[1]),
        "nnz": _stored(A),
        "dense": isinstance(A, np.ndarray),
        "n_test": 0 if b_te is None else int(b_te.shape[0]),
    })
    if "task" in meta:
        meta["label_counts"] = label_counts(b)
        if b_te is not None:
            meta["test_label_counts"] = label_counts(b_te)
    save_dataset(out_path, A, b, meta, A_test=A_te, b_test=b_te)
    return Dataset(name=name, A=A, b=b, meta=meta, A_test=A_te, b_test=b_te)


def prepare(
    raw_path: str | os.PathLike,
    spec: DatasetSpec,
    normalization: str | Recipe,
    out_path: str | os.PathLike,
    positive_class: float | int | str | None = None,
    test: tuple[str | os.PathLike, DatasetSpec] | None = None,
) -> Dataset:
    """Parse, check, binarize, (split, map,) normalize and save one data set.

    Parameters
    ----------
    raw_path : str or PathLike
        The raw LIBSVM file (from :func:`pdsparse.data.fetch.fetch`).
    spec : DatasetSpec
        Its registry entry (expected n, d, nnz and label counts are checked when given).
    normalization : {"avg_example_norm", "unit_rows", "none"} or Recipe
        See :func:`pdsparse.data.normalize.normalize`; or a whole :class:`Recipe` (then
        ``positive_class`` comes from it and must not be given here).
    out_path : str or PathLike
        Output ``.npz`` (written atomically).
    positive_class : number or str, optional
        One-vs-rest: this label becomes +1, the others -1 (allowed for both tasks; needed to
        turn a multiclass set into a binary problem). Without it a binary task maps its two
        labels to ±1 and a multiclass task keeps its labels.
    test : (raw path, DatasetSpec), optional
        The raw file and registry entry of the recipe's ``test_file`` (required with it, an
        error without it): its rows become the test rows (module docstring).

    Returns
    -------
    Dataset
        The saved data set. ``meta`` holds name, source_file, source_sha256, url, task,
        original_task, positive_class, normalization (info dict), n, d, nnz, label_counts
        (of b), raw_label_counts and pdsparse_version; with a DGPD recipe also recipe,
        recipe_tag, split, features, dense, n_test and test_label_counts, and ``n``, ``d``,
        ``nnz`` (stored entries) describe the training rows after the map; with
        ``classes`` also classes (the kept labels and row counts; ``raw_label_counts`` are
        those of the whole file); with ``test_file`` also test_file (its name, file,
        sha256, shape, raw label counts and what putting it on the training width dropped
        or padded).

    Raises
    ------
    DataError
        Unparsable file, shape or label-count mismatch, labels that cannot be binarized, a
        split that leaves no training rows.
    ConfigError
        Unknown normalization, a bad recipe.
    """
    from pdsparse import __version__

    recipe = None
    if isinstance(normalization, Recipe):
        if positive_class is not None:
            raise ConfigError("give positive_class in the recipe, not beside it")
        recipe, normalization = normalization, normalization.normalization
        positive_class = recipe.positive_class
        if recipe.legacy:
            recipe = None
    wanted = None if recipe is None else recipe.test_file
    if test is None and wanted is not None:
        raise ConfigError(f"dataset {spec.name!r}: recipe test_file {wanted!r} needs its raw "
                          "file and registry entry (test=)")
    if test is not None and test[1].name != wanted:
        raise ConfigError(f"dataset {spec.name!r}: test= gives the file of {test[1].name!r}, "
                          f"but the recipe's test_file is {wanted!r}")

    raw_path = Path(raw_path)
    A, y = _read_checked(raw_path, spec, f"dataset {spec.name!r}")
    if recipe is not None:
        return _prepare_recipe(A, y, raw_path, spec, recipe, out_path, __version__, test)

    if positive_class is not None or spec.task == "binary":
        try:
            b = binarize_labels(y, positive=positive_class)
        except DataError as exc:
            raise DataError(f"dataset {spec.name!r} (file {raw_path}): {exc}") from exc
        task = "binary"
    else:
        b = y.copy()
        task = "multiclass"

    source = {
        "name": spec.name,
        "source_file": raw_path.name,
        "source_sha256": _sha256(raw_path),
        "url": spec.url,
        "task": task,
        "original_task": spec.task,
        "positive_class": None if positive_class is None else str(positive_class),
    }
    A, info = normalize(A, normalization)
    meta = {
        **source,
        "normalization": info,
        "n": int(A.shape[0]),
        "d": int(A.shape[1]),
        "nnz": int(A.nnz),
        "label_counts": label_counts(b),
        "raw_label_counts": label_counts(y),
        "pdsparse_version": __version__,
    }
    save_dataset(out_path, A, b, meta)
    return Dataset(name=spec.name, A=A, b=b, meta=meta)


def _positive_text(recipe: Recipe) -> str | None:
    pos = recipe.positive_class
    return None if pos is None else "+".join(pos) if isinstance(pos, tuple) else str(pos)


def _prepare_recipe(A, y, raw_path: Path, spec: DatasetSpec, recipe: Recipe, out_path,
                    version: str, test=None) -> Dataset:
    """The recipe path of :func:`prepare` after the file checks: class filter, labels, then
    :func:`_apply_recipe` (``test``: the test file's raw path and registry entry)."""
    raw_counts = label_counts(y)
    test_rows = None if test is None else _read_test_file(*test, A.shape[1], spec.name)
    A, y, kept = select_classes(A, y, recipe, spec.name)
    if spec.task == "binary" and recipe.positive_class is None:
        try:
            b = binarize_labels(y)
        except DataError as exc:
            raise DataError(f"dataset {spec.name!r} (file {raw_path}): {exc}") from exc
    else:
        try:
            b = binary_labels(y, recipe, spec.name)
        except DataError as exc:
            raise DataError(f"{exc} (file {raw_path})") from exc
    task = "multiclass" if b is None else "binary"
    b = y.copy() if b is None else b
    source = {
        "name": spec.name,
        "source_file": raw_path.name,
        "source_sha256": _sha256(raw_path),
        "url": spec.url,
        "task": task,
        "original_task": spec.task,
        "positive_class": _positive_text(recipe),
        "raw_label_counts": raw_counts,
        "pdsparse_version": version,
    }
    if kept is not None:
        source["classes"] = kept
    external = None
    if test_rows is not None:
        A_te, y_te, test_meta = test_rows
        if recipe.classes is not None:
            rows = np.flatnonzero(np.isin(y_te, [float(c) for c in recipe.classes]))
            A_te, y_te = A_te[rows], y_te[rows]
            test_meta["rows_kept_by_classes"] = int(rows.size)
        b_te = y_te.copy() if task == "multiclass" else _test_labels(
            y, b, y_te, recipe, f"data set {spec.name!r}: test file {recipe.test_file!r}")
        source["test_file"] = test_meta
        external = (A_te, b_te)
    A, b, A_te, b_te, info, meta = _apply_recipe(A, b, recipe, spec.name, external)
    return _save_recipe(out_path, spec.name, A, b, A_te, b_te, info, meta, source)


def _read_checked(raw_path: Path, spec: DatasetSpec, what: str):
    """A LIBSVM file read and checked against its registry entry (shape, nnz, labels);
    errors start with ``what``."""
    try:
        A, y = read_libsvm(raw_path, n_features=spec.d)
    except DataError as exc:
        extra = f" (registry d={spec.d:,})" if spec.d is not None else ""
        raise DataError(f"{what}: {exc}{extra}") from exc
    check_shape(spec, A.shape[0], A.shape[1], A.nnz, source=str(raw_path))
    _check_labels(spec, y, str(raw_path))
    return A, y


def _read_test_file(raw_path, spec: DatasetSpec, width: int, name: str):
    """Rows, raw labels and metadata of a recipe's ``test_file``: parsed and checked against
    its own registry entry, then put on the training ``width`` (module docstring)."""
    raw_path = Path(raw_path)
    A, y = _read_checked(raw_path, spec, f"data set {name!r}: test file {spec.name!r}")
    d_file = int(A.shape[1])
    dropped_nnz = dropped_cols = 0
    if d_file > width:
        beyond = A.indices >= width
        dropped_nnz = int(beyond.sum())
        dropped_cols = int(np.unique(A.indices[beyond]).size)
        A = sp.csr_matrix(A[:, :width])
    elif d_file < width:
        A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], width))
    if d_file == width:
        how = "the training width"
    elif d_file < width:
        how = f"padded from {d_file:,} to the training width {width:,} with zero columns"
    else:
        how = (f"cut to the training width {width:,}: {dropped_nnz:,} stored entries in "
               f"{dropped_cols:,} columns beyond it dropped (no training row has these "
               "features, so a linear model weighs them 0)")
    meta = {
        "name": spec.name,
        "source_file": raw_path.name,
        "source_sha256": _sha256(raw_path),
        "url": spec.url,
        "n_file": int(A.shape[0]),
        "d_file": d_file,
        "width": how,
        "dropped_nnz": dropped_nnz,
        "dropped_columns": dropped_cols,
        "raw_label_counts": label_counts(y),
    }
    return A, y, meta


def _test_labels(y: np.ndarray, b: np.ndarray, y_te: np.ndarray, recipe: Recipe,
                 where: str) -> np.ndarray:
    """±1 labels of a test file's raw labels ``y_te`` under the training rows' mapping
    (raw ``y`` -> ``b``): ``positive_class`` decides any label (the listed ones +1); without
    it a label the training rows lack cannot be mapped (DataError)."""
    positives = recipe.positive_labels
    if positives is not None:
        return np.where(np.isin(y_te, [float(p) for p in positives]), 1.0, -1.0)
    values, first = np.unique(y, return_index=True)
    pos = np.minimum(np.searchsorted(values, y_te), max(values.size - 1, 0))
    unseen = values[pos] != y_te
    if unseen.any():
        shown = ", ".join(_num(v) for v in np.unique(y_te[unseen])[:10])
        raise DataError(f"{where}: labels {shown} do not occur in the training rows, so they "
                        "have no ±1 value; give positive_class")
    return b[first][pos].astype(np.float64)


def prepare_synthetic(
    name: str,
    kind: str,
    params: Mapping[str, Any],
    seed: int,
    normalization: str | Recipe,
    out_path: str | os.PathLike,
) -> Dataset:
    """Generate a seeded synthetic data set (:func:`pdsparse.data.synthetic.generate`) or load
    a bundled one (``digits``), prepare it like real data and save it; ``meta`` records the
    source, its parameters and seed.

    ``normalization`` is a normalization name or a whole :class:`Recipe` (feature map, split,
    ``positive_class`` for one-vs-rest of a bundled multiclass set).
    """
    from pdsparse import __version__
    from pdsparse.data.synthetic import BUNDLED, generate

    recipe = normalization if isinstance(normalization, Recipe) else None
    if recipe is not None:
        normalization = recipe.normalization
        if recipe.test_file is not None:
            raise ConfigError(f"data set {name!r} ({kind}): recipe test_file "
                              f"{recipe.test_file!r} only applies to a registry data set")
    A, b = generate(kind, dict(params), seed)
    bundled = kind in BUNDLED
    legacy = recipe is None or (recipe.legacy and recipe.positive_class is None)
    if legacy and not bundled:
        A, info = normalize(A, normalization)
        meta = {
            "name": name,
            "source": "synthetic",
            "kind": kind,
            "params": dict(params),
            "seed": seed,
            "normalization": info,
            "n": int(A.shape[0]),
            "d": int(A.shape[1]),
            "nnz": int(A.size if isinstance(A, np.ndarray) else A.nnz),
            "pdsparse_version": __version__,
        }
        save_dataset(out_path, A, b, meta)
        return Dataset(name=name, A=A, b=b, meta=meta)

    recipe = recipe or Recipe(normalization)
    raw_counts = label_counts(b)
    A, y, kept = select_classes(A, b, recipe, name)
    task = "multiclass" if bundled else "binary"
    b = y
    if recipe.positive_class is not None or (bundled and recipe.classes is not None):
        try:
            binary = binary_labels(y, recipe)
        except DataError as exc:
            raise DataError(f"data set {name!r} ({kind}): {exc}") from exc
        if binary is not None:
            b, task = binary, "binary"
    source = {
        "name": name,
        "source": "bundled" if bundled else "synthetic",
        "kind": kind,
        "params": dict(params),
        "seed": seed,
        "task": task,
        "original_task": "multiclass" if bundled else "binary",
        "positive_class": (recipe.positive_class if not isinstance(recipe.positive_class, tuple)
                           else _positive_text(recipe)),
        "raw_label_counts": raw_counts,
        "pdsparse_version": __version__,
    }
    if kept is not None:
        source["classes"] = kept
    if bundled:
        import sklearn

        source["origin"] = (f"sklearn.datasets.load_{kind} (scikit-learn {sklearn.__version__}, "
                            "bundled with the package; seed unused)")
    A, b, A_te, b_te, info, meta = _apply_recipe(A, b, recipe, name)
    return _save_recipe(out_path, name, A, b, A_te, b_te, info, meta, source)


def _label(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value
