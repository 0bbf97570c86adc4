"""Prepare a data set by its recipe: ``data/processed/<name>__<recipe tag>.npz``.

One path for every source: a **source** loads the rows (:class:`RegistryFile`: a verified
raw LIBSVM file, checked against its registry entry, with the test file of a published
split; :class:`Generator`: a seeded synthetic generator; :class:`BundledSet`: a data set
bundled with scikit-learn, e.g. ``digits``), then the :class:`Recipe`'s ordered **steps**
(:mod:`pdsparse.data.steps`: select classes, binarize, split by a test file or by drawn
rows and a subsample, scale the inputs, feature map, normalize) change them in turn, and
the result is saved atomically with its metadata
(:func:`~pdsparse.data.store.save_dataset`). Two papers that prepare one raw file
differently name two recipes and get two files; the file is named by the recipe tag, the
steps' tags composed (:func:`pdsparse.data.steps.compose_tag`): ``avg_example_norm``,
``none-pos0-rb1000-sig39.5-ms0-te2000-ss0``.

A registry file is parsed (:func:`~pdsparse.data.libsvm.read_libsvm`, with ``n_features =
spec.d``) and its n, d, nnz and label counts are checked against the registry. A recipe's
``test_file`` is a second registry data set (e.g. LIBSVM's ``sector.scale`` /
``sector.t.scale``): it is parsed and checked against its own registry entry, then put on the
training width: a test file narrower than the training file gets zero columns, a wider one
loses the entries beyond the training width (no training row has those features, so a linear
model weighs them 0; liblinear's predict ignores them likewise), counted in
``meta["test_file"]``. Every step treats its rows as it treats split-off test rows.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from pdsparse.data.libsvm import label_counts, read_libsvm
from pdsparse.data.recipe import Recipe
from pdsparse.data.registry import DatasetSpec
from pdsparse.data.steps import (
    FEATURES,
    INPUT_SCALES,
    Binarize,
    Rows,
    SelectClasses,
    SplitRows,
)
from pdsparse.data.store import Dataset, save_dataset
from pdsparse.errors import ConfigError, DataError

__all__ = ["FEATURES", "INPUT_SCALES", "BundledSet", "Generator", "Recipe", "RegistryFile",
           "binary_labels", "check_shape", "prepare", "prepare_synthetic", "select_classes",
           "split_rows"]


# ----------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class RegistryFile:
    """A raw LIBSVM file and its registry entry, with the raw file and registry entry of the
    recipe's ``test_file`` (``test``) when it has one."""

    raw_path: Path
    spec: DatasetSpec
    test: tuple[Path, DatasetSpec] | None = None

    @property
    def where(self) -> str:
        return f"file {self.raw_path}"

    def load(self) -> Rows:
        """The checked rows and raw labels; ``meta``: name, source_file, source_sha256, url,
        original_task, raw_label_counts (the whole file), pdsparse_version and, with a test
        file, test_file."""
        from pdsparse import __version__

        spec, raw_path = self.spec, Path(self.raw_path)
        A, y = _read_checked(raw_path, spec, f"dataset {spec.name!r}")
        meta = {
            "name": spec.name,
            "source_file": raw_path.name,
            "source_sha256": _sha256(raw_path),
            "url": spec.url,
            "original_task": spec.task,
            "raw_label_counts": label_counts(y),
            "pdsparse_version": __version__,
        }
        rows = Rows(spec.name, A, y, labels="binary" if spec.task == "binary" else "classes",
                    meta=meta)
        if self.test is not None:
            rows.A_test, rows.y_test, meta["test_file"] = _read_test_file(
                *self.test, A.shape[1], spec.name)
        return rows


@dataclass(frozen=True)
class Generator:
    """A seeded synthetic generator (:func:`pdsparse.data.synthetic.generate`); its labels
    are kept as generated (±1, or a label matrix) unless the recipe has a positive class."""

    name: str
    kind: str
    params: Mapping[str, Any]
    seed: int

    source = "synthetic"
    labels = "as_generated"
    original_task = "binary"

    @property
    def where(self) -> str:
        return f"{self.source} {self.kind}"

    def load(self) -> Rows:
        """The generated rows and labels; ``meta``: name, source, kind, params, seed,
        pdsparse_version and, for labels that are a vector, original_task and
        raw_label_counts."""
        from pdsparse import __version__
        from pdsparse.data.synthetic import generate

        A, y = generate(self.kind, dict(self.params), self.seed)
        meta = {
            "name": self.name,
            "source": self.source,
            "kind": self.kind,
            "params": dict(self.params),
            "seed": self.seed,
            "pdsparse_version": __version__,
        }
        if np.ndim(y) == 1:
            meta.update(original_task=self.original_task, raw_label_counts=label_counts(y))
        meta.update(self.extra_meta())
        return Rows(self.name, A, y, labels=self.labels, meta=meta)

    def extra_meta(self) -> dict:
        return {}


@dataclass(frozen=True)
class BundledSet(Generator):
    """A data set bundled with the package's dependencies (``digits``:
    :data:`pdsparse.data.synthetic.BUNDLED`); multiclass labels, the seed unused."""

    source = "bundled"
    labels = "classes"
    original_task = "multiclass"

    def extra_meta(self) -> dict:
        import sklearn

        return {"origin": f"sklearn.datasets.load_{self.kind} (scikit-learn "
                          f"{sklearn.__version__}, bundled with the package; seed unused)"}


def _run(source, recipe: Recipe, out_path) -> Dataset:
    """Load ``source``, apply the recipe's steps in order, save to ``out_path``."""
    rows = source.load()
    for step in recipe.steps:
        try:
            step.apply(rows)
        except DataError as exc:
            raise DataError(f"data set {rows.name!r} ({source.where}): {exc}") from exc
    A, b, A_te, b_te, meta = rows.A, rows.y, rows.A_test, rows.y_test, rows.meta
    meta.update({
        "recipe": recipe.to_dict(),
        "recipe_tag": recipe.tag(),
        "n": int(A.shape[0]),
        "d": int(A.shape[1]),
        "nnz": int(A.size) if isinstance(A, np.ndarray) else int(A.nnz),
        "dense": isinstance(A, np.ndarray),
        "n_test": 0 if b_te is None else int(b_te.shape[0]),
    })
    if rows.task is not None:
        meta["label_counts"] = label_counts(b)
        if b_te is not None:
            meta["test_label_counts"] = label_counts(b_te)
    save_dataset(out_path, A, b, meta, A_test=A_te, b_test=b_te)
    return Dataset(name=rows.name, A=A, b=b, meta=meta, A_test=A_te, b_test=b_te)


def prepare(
    raw_path: str | os.PathLike,
    spec: DatasetSpec,
    normalization: str | Recipe,
    out_path: str | os.PathLike,
    positive_class: float | int | str | None = None,
    test: tuple[str | os.PathLike, DatasetSpec] | None = None,
) -> Dataset:
    """Parse, check, then apply the recipe's steps to one registry data set, and save it.

    Parameters
    ----------
    raw_path : str or PathLike
        The raw LIBSVM file (from :func:`pdsparse.data.fetch.fetch`).
    spec : DatasetSpec
        Its registry entry (expected n, d, nnz and label counts are checked when given).
    normalization : {"avg_example_norm", "unit_rows", "none"} or Recipe
        The recipe's normalization (with ``positive_class``: ``Recipe(normalization,
        positive_class)``); or a whole :class:`Recipe` (then ``positive_class`` comes from
        it and must not be given here).
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
        original_task, positive_class, raw_label_counts (of the whole file), recipe,
        recipe_tag, normalization (info dict), n, d, nnz (stored entries of the training
        rows after every step), dense, n_test, label_counts (of b) and pdsparse_version;
        with a split also split and test_label_counts; with a feature map features; with
        ``classes`` also classes (the kept labels and row counts); with ``test_file`` also
        test_file (its name, file, sha256, shape, raw label counts and what putting it on
        the training width dropped or padded).

    Raises
    ------
    DataError
        Unparsable file, shape or label-count mismatch, labels that cannot be binarized, a
        split that leaves no training rows.
    ConfigError
        Unknown normalization, a bad recipe.
    """
    if isinstance(normalization, Recipe):
        if positive_class is not None:
            raise ConfigError("give positive_class in the recipe, not beside it")
        recipe = normalization
    else:
        recipe = Recipe(normalization, positive_class)
    wanted = recipe.test_file
    if test is None and wanted is not None:
        raise ConfigError(f"dataset {spec.name!r}: recipe test_file {wanted!r} needs its raw "
                          "file and registry entry (test=)")
    if test is not None and test[1].name != wanted:
        raise ConfigError(f"dataset {spec.name!r}: test= gives the file of {test[1].name!r}, "
                          f"but the recipe's test_file is {wanted!r}")
    return _run(RegistryFile(Path(raw_path), spec, test), recipe, out_path)


def prepare_synthetic(
    name: str,
    kind: str,
    params: Mapping[str, Any],
    seed: int,
    normalization: str | Recipe,
    out_path: str | os.PathLike,
) -> Dataset:
    """Generate a seeded synthetic data set (:func:`pdsparse.data.synthetic.generate`) or load
    a bundled one (``digits``), apply the recipe's steps like real data and save it;
    ``meta`` records the source, its parameters and seed.

    ``normalization`` is a normalization name or a whole :class:`Recipe` (feature map, split,
    ``positive_class`` for one-vs-rest of a bundled multiclass set).
    """
    from pdsparse.data.synthetic import BUNDLED

    recipe = normalization if isinstance(normalization, Recipe) else Recipe(normalization)
    if recipe.test_file is not None:
        raise ConfigError(f"data set {name!r} ({kind}): recipe test_file "
                          f"{recipe.test_file!r} only applies to a registry data set")
    source = (BundledSet if kind in BUNDLED else Generator)(name, kind, dict(params), seed)
    return _run(source, recipe, out_path)


# ------------------------------------------------- the steps one at a time, by a recipe


def _named(name: str, exc: DataError) -> DataError:
    return DataError(f"data set {name!r}: {exc}" if name else str(exc))


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
    step = SelectClasses(recipe.classes)
    try:
        rows = step.rows(y)
    except DataError as exc:
        raise _named(name, exc) from exc
    return A[rows], y[rows], step.meta(int(y.shape[0]), int(rows.size))


def binary_labels(y: np.ndarray, recipe: Recipe, name: str = "") -> np.ndarray | None:
    """±1 labels of ``y`` under the recipe, or None when the labels stay class labels
    (:meth:`pdsparse.data.steps.Binarize.binary` with the recipe's classes).

    Raises
    ------
    DataError
        A positive label absent from ``y`` (the message names the data set).
    """
    try:
        return Binarize(recipe.positive_class).binary(y, recipe.classes)
    except DataError as exc:
        raise _named(name, exc) from exc


def split_rows(n: int, recipe: Recipe, name: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Training and test row indices (sorted) of an n-row file under ``recipe``
    (:meth:`pdsparse.data.steps.SplitRows.draw`).

    Raises
    ------
    DataError
        ``test_rows >= n`` or ``subsample > n - test_rows`` (the message names the setting).
    """
    try:
        return SplitRows(recipe.test_rows, recipe.subsample, recipe.split_seed).draw(n)
    except DataError as exc:
        raise _named(name, exc) from exc


# -------------------------------------------------------------------- registry files


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


