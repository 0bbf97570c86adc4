"""Registry of real data sets (``config/datasets.yaml``): where to get them, what they hold.

Each entry becomes a :class:`DatasetSpec`. The registry is validated strictly on load: an
unknown key, a missing required key or a value of the wrong type raises
:class:`~pdsparse.errors.ConfigError` naming the file, the data set and the key, so a typo in
the config fails before any download or long run starts.

Shapes follow the package convention: ``n`` examples (rows of A) by ``d`` features (columns of
A). The Face-Off paper (Csiba & Richtárik, Table 1) lists data as X = A^T (d x n).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pdsparse.errors import ConfigError

__all__ = ["DatasetSpec", "load_registry", "parse_registry", "COMPRESSIONS", "TASKS"]

COMPRESSIONS = ("bz2", "none")
TASKS = ("binary", "multiclass")

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_URL_PREFIXES = ("https://", "http://", "file://")
_TOP_KEYS = {"version", "datasets"}
_REQUIRED = ("url", "filename", "compression", "task")
_LOCAL_REQUIRED = ("path", "task")
"""A local file's entry: its path and its task; filename and compression follow the path."""
_OPTIONAL = (
    "path",
    "n",
    "d",
    "nnz",
    "sha256",
    "sha256_text",
    "mirror_sha256_text",
    "label_counts",
    "description",
    "papers",
)


@dataclass(frozen=True)
class DatasetSpec:
    """One registry entry: a LIBSVM-format data file and what it is expected to contain.

    Attributes
    ----------
    name : str
        Registry key; also names the raw and processed files (``data/raw/<name>.bz2``).
    url : str
        Canonical download URL (the LIBSVM data page for the LIBSVM sets).
    filename : str
        File name at the URL and in a local mirror directory, e.g. ``"leu.bz2"``.
    compression : {"bz2", "none"}
        Compression of the downloaded file.
    task : {"binary", "multiclass"}
        Label type of the file.
    n, d, nnz : int or None
        Expected number of examples (rows of A), features (columns of A) and stored nonzeros
        (explicit zeros in the file are not counted); ``None`` when unknown, then unchecked.
    sha256 : str or None
        SHA-256 of the file as downloaded from ``url`` (compressed bytes).
    sha256_text : str or None
        SHA-256 of the decompressed text of the canonical file; valid for a download and for a
        mirror copy that holds the same text.
    mirror_sha256_text : str or None
        SHA-256 of the decompressed text of the offline-mirror copy when that copy was rebuilt
        and its text is not known to equal the canonical file's; only checked for mirror copies.
    label_counts : dict[float, int] or None
        Expected count of each raw label value in the file (before any binarization).
    description : str
        Free text.
    papers : list[str]
        Short ids of the papers that use the data set (``faceoff``, ``dgpd``, ``pdbfw``).
    path : str or None
        One's own file on this machine (absolute, or relative to the working directory): the
        fetch copies it from there, with no URL and no download; ``url`` is then
        ``file://`` + its absolute path, ``filename`` its name and ``compression`` ``bz2`` for
        a ``.bz2`` file, else ``none``.
    """

    name: str
    url: str
    filename: str
    compression: str
    task: str
    n: int | None = None
    d: int | None = None
    nnz: int | None = None
    sha256: str | None = None
    sha256_text: str | None = None
    mirror_sha256_text: str | None = None
    label_counts: dict[float, int] | None = None
    description: str = ""
    papers: list[str] = field(default_factory=list)
    path: str | None = None

    @property
    def raw_filename(self) -> str:
        """File name used in the raw-data directory: ``<name>.bz2`` or ``<name>.txt``."""
        return f"{self.name}.bz2" if self.compression == "bz2" else f"{self.name}.txt"

    @property
    def mirror_filenames(self) -> tuple[str, ...]:
        """Names under which an offline mirror may hold the file, first found wins:
        ``filename``, and for an uncompressed set also ``filename + ".bz2"`` (a mirror
        keeps every file bzip2-compressed; the fetch decompresses it)."""
        if self.compression == "none":
            return (self.filename, f"{self.filename}.bz2")
        return (self.filename,)

    @property
    def text_hashes(self) -> tuple[str, ...]:
        """Accepted SHA-256 values of the decompressed text (canonical, then mirror)."""
        return tuple(h for h in (self.sha256_text, self.mirror_sha256_text) if h)


def _fail(where: str, msg: str) -> ConfigError:
    return ConfigError(f"{where}: {msg}")


def _int_or_none(value: Any, where: str, key: str, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"key '{key}' must be an integer or null, got {value!r}")
    if value < minimum:
        raise _fail(where, f"key '{key}' must be >= {minimum}, got {value}")
    return value


def _str(value: Any, where: str, key: str, allow_none: bool = False) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not value.strip():
        kind = "a non-empty string" + (" or null" if allow_none else "")
        raise _fail(where, f"key '{key}' must be {kind}, got {value!r}")
    return value


def _sha(value: Any, where: str, key: str) -> str | None:
    value = _str(value, where, key, allow_none=True)
    if value is not None and not _SHA_RE.match(value):
        raise _fail(where, f"key '{key}' must be 64 lowercase hex digits or null, got {value!r}")
    return value


def _label_counts(value: Any, where: str) -> dict[float, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise _fail(where, f"key 'label_counts' must be a non-empty mapping or null, got {value!r}")
    out: dict[float, int] = {}
    for label, count in value.items():
        try:
            key = float(label) if not isinstance(label, bool) else math.nan
        except (TypeError, ValueError):
            key = math.nan
        if not math.isfinite(key):
            raise _fail(where, f"key 'label_counts': label {label!r} is not a number")
        if key in out:
            raise _fail(where, f"key 'label_counts': label {label!r} given twice")
        out[key] = _int_or_none(count, where, f"label_counts[{label}]", 0)  # type: ignore[assignment]
        if out[key] is None:
            raise _fail(where, f"key 'label_counts[{label}]' must be an integer")
    return out


def _parse_entry(name: Any, entry: Any, source: str) -> DatasetSpec:
    where = f"{source}: dataset {name!r}"
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise _fail(where, "dataset names must match [A-Za-z0-9][A-Za-z0-9._-]*")
    if not isinstance(entry, dict):
        raise _fail(where, f"entry must be a mapping, got {type(entry).__name__}")
    unknown = sorted(str(k) for k in entry if k not in _REQUIRED and k not in _OPTIONAL)
    if unknown:
        valid = ", ".join(_REQUIRED + _OPTIONAL)
        raise _fail(where, f"unknown key(s) {', '.join(unknown)} (valid keys: {valid})")
    local = entry.get("path")
    if local is not None:
        if "url" in entry:
            raise _fail(where, "give either 'url' (a download) or 'path' (a file on this "
                        "machine), not both")
        local = _str(local, where, "path")
        entry = dict(entry)
        name_of = Path(local).name  # type: ignore[arg-type]
        if name_of.endswith(".gz"):
            raise _fail(where, f"path {local!r}: a .gz file; give it plain or as .bz2")
        entry.setdefault("filename", name_of)
        entry.setdefault("compression", "bz2" if name_of.endswith(".bz2") else "none")
        entry["url"] = Path(local).absolute().as_uri()  # type: ignore[arg-type]
    missing = [k for k in (_LOCAL_REQUIRED if local is not None else _REQUIRED)
               if k not in entry]
    if missing:
        hint = "" if local is not None else " (or 'path' and 'task' for a file on this machine)"
        raise _fail(where, f"missing required key(s) {', '.join(missing)}{hint}")

    url = _str(entry["url"], where, "url")
    if not url.startswith(_URL_PREFIXES):  # type: ignore[union-attr]
        raise _fail(where, f"key 'url' must start with one of {_URL_PREFIXES}, got {url!r}")
    filename = _str(entry["filename"], where, "filename")
    if "/" in filename or "\\" in filename or filename in (".", ".."):  # type: ignore[operator]
        raise _fail(where, f"key 'filename' must be a bare file name, got {filename!r}")
    compression = entry["compression"]
    if compression not in COMPRESSIONS:
        raise _fail(where, f"key 'compression' must be one of {COMPRESSIONS}, got {compression!r}")
    if (compression == "bz2") != filename.endswith(".bz2"):  # type: ignore[union-attr]
        raise _fail(
            where,
            f"key 'compression' is {compression!r} but filename {filename!r} "
            + ("does not end" if compression == "bz2" else "ends")
            + " in .bz2",
        )
    task = entry["task"]
    if task not in TASKS:
        raise _fail(where, f"key 'task' must be one of {TASKS}, got {task!r}")

    description = entry.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise _fail(where, f"key 'description' must be a string, got {description!r}")
    papers = entry.get("papers", [])
    if papers is None:
        papers = []
    if not isinstance(papers, list) or not all(isinstance(p, str) and p for p in papers):
        raise _fail(where, f"key 'papers' must be a list of strings, got {papers!r}")

    return DatasetSpec(
        name=name,
        url=url,  # type: ignore[arg-type]
        filename=filename,  # type: ignore[arg-type]
        compression=compression,
        task=task,
        n=_int_or_none(entry.get("n"), where, "n", 1),
        d=_int_or_none(entry.get("d"), where, "d", 1),
        nnz=_int_or_none(entry.get("nnz"), where, "nnz", 0),
        sha256=_sha(entry.get("sha256"), where, "sha256"),
        sha256_text=_sha(entry.get("sha256_text"), where, "sha256_text"),
        mirror_sha256_text=_sha(entry.get("mirror_sha256_text"), where, "mirror_sha256_text"),
        label_counts=_label_counts(entry.get("label_counts"), where),
        description=description,
        path=local,
        papers=list(papers),
    )


def parse_registry(doc: Any, source: str = "<registry>") -> dict[str, DatasetSpec]:
    """Validate an already-parsed registry document (``{"datasets": {name: entry}}``).

    Parameters
    ----------
    doc : object
        The YAML document.
    source : str
        Name used in error messages (normally the file path).

    Returns
    -------
    dict[str, DatasetSpec]
        Specs keyed by data-set name, in file order.

    Raises
    ------
    ConfigError
        On any structural or type error; the message names ``source``, the data set and key.
    """
    if not isinstance(doc, dict):
        raise _fail(source, "the registry must be a mapping with a top-level 'datasets' key")
    unknown = sorted(str(k) for k in doc if k not in _TOP_KEYS)
    if unknown:
        keys = ", ".join(unknown)
        raise _fail(source, f"unknown top-level key(s) {keys} (valid: datasets, version)")
    datasets = doc.get("datasets")
    if not isinstance(datasets, dict) or not datasets:
        raise _fail(source, "'datasets' must be a non-empty mapping of name -> entry")
    return {name: _parse_entry(name, entry, source) for name, entry in datasets.items()}


def load_registry(path: str | os.PathLike) -> dict[str, DatasetSpec]:
    """Read and validate a data-set registry YAML file (normally ``config/datasets.yaml``).

    Parameters
    ----------
    path : str or PathLike
        The YAML file.

    Returns
    -------
    dict[str, DatasetSpec]
        Specs keyed by data-set name.

    Raises
    ------
    ConfigError
        If the file is missing, is not valid YAML, or an entry is invalid. The message names
        the file and, for entry errors, the data set and the key.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read data-set registry ({exc.strerror or exc})") from exc
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from exc
    return parse_registry(doc, source=str(path))
