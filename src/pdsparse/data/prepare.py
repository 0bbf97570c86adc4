"""Prepare a data set by its recipe: ``data/processed/<name>__<recipe tag>.npz``.

One path for real and synthetic data: :func:`prepare` reads a verified raw LIBSVM file,
:func:`prepare_synthetic` runs a seeded generator; both then apply the same
:class:`Recipe` and save atomically. Two papers that prepare one raw file differently name
two recipes and get two files.

Steps for a raw file: parse (:func:`~pdsparse.data.libsvm.read_libsvm`, with
``n_features = spec.d``), check n, d, nnz and label counts against the registry, map
labels to ±1 for a binary task (or one-vs-rest with ``positive_class``), normalize
(:mod:`pdsparse.data.normalize`; Face-Off Sec. 7 uses ``avg_example_norm``), and save
atomically with metadata (:func:`~pdsparse.data.store.save_dataset`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pdsparse.data.libsvm import binarize_labels, label_counts, read_libsvm
from pdsparse.data.normalize import normalize
from pdsparse.data.registry import DatasetSpec
from pdsparse.data.store import Dataset, save_dataset
from pdsparse.errors import ConfigError, DataError
from pdsparse.names import NORMALIZATIONS

__all__ = ["Recipe", "check_shape", "prepare", "prepare_synthetic"]

_SAFE = re.compile(r"^[A-Za-z0-9.+-]+$")


@dataclass(frozen=True)
class Recipe:
    """How a data set is prepared, named in config; :meth:`tag` names the processed file.

    normalization : {"avg_example_norm", "unit_rows", "none"}
        :func:`pdsparse.data.normalize.normalize` (Face-Off Sec. 7: ``avg_example_norm``).
    positive_class : str, optional
        One-vs-rest: this raw label becomes +1, every other -1.
    """

    normalization: str = "avg_example_norm"
    positive_class: str | None = None

    def __post_init__(self) -> None:
        if self.normalization not in NORMALIZATIONS:
            raise ConfigError(
                f"recipe: unknown normalization {self.normalization!r}; "
                f"choose one of {', '.join(NORMALIZATIONS)}"
            )
        if self.positive_class is not None and not _SAFE.match(str(self.positive_class)):
            raise ConfigError(f"recipe: positive_class {self.positive_class!r} is not a label")

    def tag(self) -> str:
        """``avg_example_norm``, ``none-pos3``: safe in file names, distinct per recipe."""
        parts = [self.normalization]
        if self.positive_class is not None:
            parts.append(f"pos{self.positive_class}")
        return "-".join(parts)


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


def prepare(
    raw_path: str | os.PathLike,
    spec: DatasetSpec,
    normalization: str,
    out_path: str | os.PathLike,
    positive_class: float | int | str | None = None,
) -> Dataset:
    """Parse, check, binarize, normalize and save one data set.

    Parameters
    ----------
    raw_path : str or PathLike
        The raw LIBSVM file (from :func:`pdsparse.data.fetch.fetch`).
    spec : DatasetSpec
        Its registry entry (expected n, d, nnz and label counts are checked when given).
    normalization : {"avg_example_norm", "unit_rows", "none"}
        See :func:`pdsparse.data.normalize.normalize`.
    out_path : str or PathLike
        Output ``.npz`` (written atomically).
    positive_class : number or str, optional
        One-vs-rest: this label becomes +1, the others -1 (allowed for both tasks; needed to
        turn a multiclass set into a binary problem). Without it a binary task maps its two
        labels to ±1 and a multiclass task keeps its labels.

    Returns
    -------
    Dataset
        The saved data set. ``meta`` holds name, source_file, source_sha256, url, task,
        original_task, positive_class, normalization (info dict), n, d, nnz, label_counts
        (of b), raw_label_counts and pdsparse_version.

    Raises
    ------
    DataError
        Unparsable file, shape or label-count mismatch, labels that cannot be binarized.
    ConfigError
        Unknown normalization.
    """
    from pdsparse import __version__

    raw_path = Path(raw_path)
    try:
        A, y = read_libsvm(raw_path, n_features=spec.d)
    except DataError as exc:
        extra = f" (registry d={spec.d:,})" if spec.d is not None else ""
        raise DataError(f"dataset {spec.name!r}: {exc}{extra}") from exc
    check_shape(spec, A.shape[0], A.shape[1], A.nnz, source=str(raw_path))
    _check_labels(spec, y, str(raw_path))

    if positive_class is not None or spec.task == "binary":
        try:
            b = binarize_labels(y, positive=positive_class)
        except DataError as exc:
            raise DataError(f"dataset {spec.name!r} (file {raw_path}): {exc}") from exc
        task = "binary"
    else:
        b = y.copy()
        task = "multiclass"

    A, info = normalize(A, normalization)
    meta = {
        "name": spec.name,
        "source_file": raw_path.name,
        "source_sha256": _sha256(raw_path),
        "url": spec.url,
        "task": task,
        "original_task": spec.task,
        "positive_class": None if positive_class is None else str(positive_class),
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


def prepare_synthetic(
    name: str,
    kind: str,
    params: Mapping[str, Any],
    seed: int,
    normalization: str,
    out_path: str | os.PathLike,
) -> Dataset:
    """Generate a seeded synthetic data set (:func:`pdsparse.data.synthetic.generate`),
    normalize it like real data and save it; ``meta`` records the generator and its seed."""
    from pdsparse import __version__
    from pdsparse.data.synthetic import generate

    A, b = generate(kind, dict(params), seed)
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
        "nnz": int(A.nnz),
        "pdsparse_version": __version__,
    }
    save_dataset(out_path, A, b, meta)
    return Dataset(name=name, A=A, b=b, meta=meta)
