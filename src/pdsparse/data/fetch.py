"""Fetch a registered raw data file: copy it from a local mirror, or download and verify it.

The raw file lands in ``raw_dir / spec.raw_filename`` (``<name>.bz2`` or ``<name>.txt``) and
only after it has been verified:

* bz2 files are decompressed as a stream (never held in memory) to detect truncation or
  corruption and to hash the text;
* ``sha256`` (of the downloaded bytes) and ``sha256_text`` (of the decompressed text) are
  compared when the registry knows them. A mirror copy is recompressed, so it is checked by
  its text hash (``sha256_text`` or ``mirror_sha256_text``) instead of its bytes;
* the shape (n, d, nnz) is checked later, when :func:`pdsparse.data.prepare.prepare` parses
  the file.

A verified raw file is never lost to a re-run: a hard link to it is kept in
``raw_dir/.verified/`` (:func:`keep`), where the next fetch finds it first.

On any failure the temporary file is removed, nothing is left in ``raw_dir`` and a
:class:`~pdsparse.errors.DataError` says which data set, which URL or mirror path, and how to
fix it.
"""

from __future__ import annotations

import bz2
import errno
import hashlib
import http.client
import os
import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from pdsparse.data.registry import DatasetSpec
from pdsparse.errors import ConfigError, DataError
from pdsparse.io import atomic_path

__all__ = [
    "DOWNLOAD_ENV",
    "MIRROR_ENV",
    "download_allowed",
    "fetch",
    "keep",
    "kept_path",
    "raw_path",
    "resolve_mirror",
    "verify_file",
]

MIRROR_ENV = "PDSPARSE_DATA_MIRROR"
DOWNLOAD_ENV = "PDSPARSE_DATA_DOWNLOAD"
KEPT_DIR = ".verified"
_CHUNK = 1 << 20


def _say(msg: str) -> None:
    print(f"[pdsparse.fetch] {msg}", file=sys.stderr, flush=True)


def resolve_mirror(
    config_value: str | os.PathLike | None, *, must_exist: bool = True
) -> Path | None:
    """Return the offline mirror directory to use, if any.

    Parameters
    ----------
    config_value : str, PathLike or None
        ``data.mirror`` from the workflow config. A non-empty value wins; otherwise the
        environment variable ``PDSPARSE_DATA_MIRROR`` is used; otherwise there is no mirror.
    must_exist : bool
        Raise when the chosen directory does not exist. A mirror that was asked for but is
        not there is a mistake (a typo, or a relative path read from another directory);
        ignoring it would silently plan the run without the data.

    Returns
    -------
    Path or None
        The absolute mirror directory (``~`` and ``$VARS`` expanded; a relative path is
        taken from the current working directory).

    Raises
    ------
    ConfigError
        ``must_exist`` and the directory does not exist; the message names the setting it
        came from, the value as written and the absolute path that was looked for.
    """
    for source, value in (("data.mirror", config_value), (MIRROR_ENV, os.environ.get(MIRROR_ENV))):
        if value is None or not str(value).strip():
            continue
        path = Path(os.path.expandvars(os.path.expanduser(str(value).strip()))).absolute()
        if must_exist and not path.is_dir():
            relative = "" if Path(str(value).strip()).is_absolute() else (
                f" (a relative path is taken from the working directory {os.getcwd()})"
            )
            what = "is not a directory" if path.exists() else "does not exist"
            raise ConfigError(
                f"{source} = {str(value).strip()!r}: the data mirror {path} {what}{relative}. "
                f"Point {source} at the directory holding the raw files (e.g. leu.bz2), "
                "or unset it"
            )
        return path
    return None


def raw_path(spec: DatasetSpec, raw_dir: str | os.PathLike) -> Path:
    """Path of the verified raw file of ``spec`` inside ``raw_dir``."""
    return Path(raw_dir) / spec.raw_filename


def _hash_file(path: Path, compression: str, label: str) -> tuple[str, str]:
    """Return (sha256 of the bytes, sha256 of the decompressed text), streaming.

    Raises DataError if a bz2 stream is truncated or corrupt, or the text looks like HTML.
    """
    file_hash = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            file_hash.update(chunk)
    if compression == "none":
        text_hash = file_hash.copy()
        with open(path, "rb") as fh:
            head = fh.read(512)
    else:
        text_hash = hashlib.sha256()
        head = b""
        try:
            with bz2.open(path, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    if len(head) < 512:
                        head += chunk[:512]
                    text_hash.update(chunk)
        except (EOFError, OSError, ValueError) as exc:
            raise DataError(
                f"{label}: corrupt or truncated bz2 file ({exc}); the download or copy was "
                "incomplete or the file is damaged"
            ) from exc
    stripped = head.lstrip()
    if not stripped:
        raise DataError(f"{label}: the file is empty")
    if stripped[:1] == b"<":
        raise DataError(
            f"{label}: the content looks like an HTML/XML page, not LIBSVM text "
            "(a proxy or error page instead of the data file?)"
        )
    return file_hash.hexdigest(), text_hash.hexdigest()


def verify_file(
    path: str | os.PathLike,
    spec: DatasetSpec,
    origin: str = "download",
    describe: str | None = None,
) -> None:
    """Check a raw file against the checksums of ``spec``.

    Parameters
    ----------
    path : str or PathLike
        The file (compressed as ``spec.compression`` says).
    spec : DatasetSpec
        The registry entry.
    origin : {"download", "mirror", "existing"}
        ``"download"``: a file from ``spec.url``; ``sha256`` and ``sha256_text`` must match
        when known. ``"mirror"`` / ``"existing"``: a possibly recompressed copy; its text hash
        must be one of ``sha256_text`` / ``mirror_sha256_text`` (or its bytes match
        ``sha256``); with no text hash known, ``sha256`` must match when known.
    describe : str, optional
        How to name the file in messages (default: ``"<origin> <path>"``).

    Raises
    ------
    DataError
        Truncated/corrupt bz2, HTML instead of data, or a checksum mismatch.
    """
    if origin not in ("download", "mirror", "existing"):
        raise ValueError(f"origin must be 'download', 'mirror' or 'existing', not {origin!r}")
    path = Path(path)
    label = f"dataset {spec.name!r} ({describe or f'{origin} {path}'})"
    file_sha, text_sha = _hash_file(path, spec.compression, label)
    problems: list[str] = []
    if origin == "download":
        if spec.sha256 and file_sha != spec.sha256:
            problems.append(f"sha256 of the file is {file_sha}, expected {spec.sha256}")
        if spec.sha256_text and text_sha != spec.sha256_text:
            problems.append(
                f"sha256 of the decompressed text is {text_sha}, expected {spec.sha256_text}"
            )
    else:
        accepted = spec.text_hashes
        bytes_ok = bool(spec.sha256) and file_sha == spec.sha256
        if accepted and not bytes_ok and text_sha not in accepted:
            problems.append(
                f"sha256 of the decompressed text is {text_sha}, expected " + " or ".join(accepted)
            )
        elif not accepted and spec.sha256 and not bytes_ok:
            problems.append(
                f"sha256 of the file is {file_sha}, expected {spec.sha256} (a recompressed "
                "copy needs sha256_text or mirror_sha256_text in the registry)"
            )
    if problems:
        raise DataError(
            f"{label}: checksum mismatch: {'; '.join(problems)}. The file is damaged or a "
            "different version; delete it and fetch again, or correct config/datasets.yaml"
        )


def _copy_from_mirror(src: Path, tmp: Path, spec: DatasetSpec, progress: bool) -> None:
    """Copy ``src`` to ``tmp``; a ``.bz2`` copy of an uncompressed set is decompressed."""
    t0 = time.perf_counter()
    unpack = spec.compression == "none" and src.name != spec.filename
    try:
        with (bz2.open(src, "rb") if unpack else open(src, "rb")) as fin, \
                open(tmp, "wb") as fout:
            shutil.copyfileobj(fin, fout, _CHUNK)
    except (EOFError, OSError, ValueError) as exc:
        if not unpack:
            raise
        raise DataError(
            f"dataset {spec.name!r} (mirror copy of {src}): cannot decompress it, corrupt or "
            f"truncated bz2 file? ({exc})"
        ) from exc
    if progress:
        size = tmp.stat().st_size
        how = "decompressed" if unpack else "copied"
        _say(f"{spec.name}: {how} {src} ({size / 1e6:.1f} MB) in "
             f"{time.perf_counter() - t0:.2f} s")


def _no_network_hint(spec: DatasetSpec) -> str:
    return (
        "no network or the host is unreachable? Set data.mirror in the config or "
        f"{MIRROR_ENV} to a directory holding {spec.filename}"
    )


def _download(spec: DatasetSpec, tmp: Path, timeout: float, progress: bool, why: str) -> None:
    url = spec.url
    prefix = f"dataset {spec.name!r}: {why}" if why else f"dataset {spec.name!r}: "
    from pdsparse import __version__

    request = urllib.request.Request(url, headers={"User-Agent": f"pdsparse/{__version__}"})
    if progress:
        _say(f"{spec.name}: downloading {url}")
    t0 = last = time.perf_counter()
    received = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp, open(tmp, "wb") as out:
            length = resp.headers.get("Content-Length") if resp.headers else None
            total = int(length) if length and str(length).isdigit() else None
            next_pct = 10
            while chunk := resp.read(_CHUNK):
                out.write(chunk)
                received += len(chunk)
                now = time.perf_counter()
                if not progress:
                    continue
                if total:
                    pct = 100 * received // total
                    if pct >= next_pct:
                        _say(f"{spec.name}: {received / 1e6:.1f}/{total / 1e6:.1f} MB ({pct}%)")
                        next_pct = (pct // 10 + 1) * 10
                elif now - last >= 5.0:
                    _say(f"{spec.name}: {received / 1e6:.1f} MB")
                    last = now
    except urllib.error.HTTPError as exc:
        raise DataError(
            f"{prefix}download of {url} failed: HTTP {exc.code} {exc.reason}. Check the url in "
            f"config/datasets.yaml, or set data.mirror / {MIRROR_ENV} to a directory holding "
            f"{spec.filename}"
        ) from exc
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DataError(
            f"{prefix}download of {url} failed ({reason}): {_no_network_hint(spec)}"
        ) from exc
    except http.client.HTTPException as exc:  # e.g. IncompleteRead: connection cut mid-file
        raise DataError(
            f"{prefix}download of {url} was interrupted ({exc!r}); try again. "
            + _no_network_hint(spec)
        ) from exc
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS):
            raise DataError(
                f"{prefix}cannot write the download of {url} into {tmp.parent}: {exc}"
            ) from exc
        raise DataError(
            f"{prefix}download of {url} failed ({exc}): {_no_network_hint(spec)}"
        ) from exc
    if total is not None and received != total:
        raise DataError(
            f"{prefix}download of {url} is truncated: received {received} of {total} bytes; "
            "try again"
        )
    if progress:
        _say(f"{spec.name}: downloaded {received / 1e6:.1f} MB in {time.perf_counter() - t0:.1f} s")


def kept_path(spec: DatasetSpec, raw_dir: str | os.PathLike) -> Path:
    """Where a second link to the raw file of ``spec`` is kept (``raw_dir/.verified/``).

    Snakemake deletes a rule's output before it re-runs the rule (after a change of a
    setting, of the rule's code, or ``--forcerun``). The raw file is linked here, outside
    every rule's outputs, so such a re-run finds it again instead of losing it.
    """
    return Path(raw_dir) / KEPT_DIR / spec.raw_filename


def keep(path: str | os.PathLike, spec: DatasetSpec, raw_dir: str | os.PathLike) -> Path | None:
    """Hard-link the raw file ``path`` into :func:`kept_path` (no copy, no extra space).

    Returns the kept path, or None when the file system has no hard links (nothing is
    kept then; a copy would double the disk use of every data set).
    """
    kept = kept_path(spec, raw_dir)
    src = Path(path)
    try:
        if kept.exists() and os.path.samefile(kept, src):
            return kept
        kept.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(kept) as tmp:
            tmp.unlink()
            os.link(src, tmp)
    except OSError as exc:
        _say(f"{spec.name}: cannot keep a link to {src} in {kept.parent} ({exc})")
        return None
    return kept


def download_allowed(default: bool = True) -> bool:
    """Whether downloads are allowed: ``$PDSPARSE_DATA_DOWNLOAD`` (0/1) if set, else ``default``.

    The workflow passes ``data.download`` to its fetch jobs this way rather than on the
    command line, so that changing it does not re-run (and first delete) fetched files.
    """
    value = os.environ.get(DOWNLOAD_ENV, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise ConfigError(f"{DOWNLOAD_ENV} = {value!r}: expected 1 or 0")


def _still_good(path: Path, spec: DatasetSpec, what: str) -> bool:
    """True if ``path`` exists and verifies; a file that fails is removed (said on stderr)."""
    if not path.is_file():
        return False
    try:
        verify_file(path, spec, origin="existing")
    except DataError as exc:
        _say(f"{spec.name}: {what} {path} fails verification ({exc}); removing it")
        path.unlink()
        return False
    return True


def fetch(
    spec: DatasetSpec,
    raw_dir: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    timeout: float = 60.0,
    progress: bool = True,
    force: bool = False,
    download: bool = True,
) -> Path:
    """Put the verified raw file of ``spec`` into ``raw_dir`` and return its path.

    Sources, in order: the file already in ``raw_dir``; the link kept by an earlier fetch
    (:func:`kept_path`); the mirror; the URL. Whatever the source, the file is verified
    before it is put in place, and then linked into :func:`kept_path`.

    Parameters
    ----------
    spec : DatasetSpec
        The registry entry.
    raw_dir : str or PathLike
        Destination directory (created if needed); the file is ``raw_dir/spec.raw_filename``.
    mirror : str, PathLike or None
        Offline mirror directory (see :func:`resolve_mirror`). If ``mirror/spec.filename``
        exists it is copied (an uncompressed set may be there as ``<filename>.bz2``: it is
        decompressed); if the mirror is set but lacks the file, a note is printed and
        the file is downloaded from ``spec.url``.
    timeout : float
        Socket timeout of the download, seconds.
    progress : bool
        Print progress lines to stderr (notes about a mirror fallback are always printed).
    force : bool
        Fetch again from the mirror or URL even if a verified file is already present.
    download : bool
        Allow downloading from ``spec.url``; when False and no other source has the file,
        fail with a message saying how to provide it.

    Returns
    -------
    Path
        The raw file.

    Raises
    ------
    DataError
        Network/HTTP failure, truncated or corrupt file, checksum mismatch, or no source
        (``download=False``). Nothing new is left in ``raw_dir``; the message names the data
        set, the URL or mirror path and a fix.
    """
    target = raw_path(spec, raw_dir)
    kept = kept_path(spec, raw_dir)
    if not force and _still_good(target, spec, "existing"):
        if progress:
            _say(f"{spec.name}: {target} already present and verified")
        keep(target, spec, raw_dir)
        return target
    if not force and _still_good(kept, spec, "kept copy"):
        with atomic_path(target) as tmp:
            tmp.unlink()
            os.link(kept, tmp)
        _say(f"{spec.name}: restored the verified {target} from {kept}")
        return target

    why = ""
    source: Path | None = None
    if spec.path is not None:  # one's own file: copied from its path, never downloaded
        source = Path(spec.path)
        if not source.is_file():
            raise DataError(f"data set {spec.name!r}: its path {spec.path} "
                            f"{'is a directory' if source.is_dir() else 'does not exist'} "
                            "(the registry entry's 'path:')")
    elif mirror is not None:
        mirror_dir = Path(mirror)
        source = next((mirror_dir / name for name in spec.mirror_filenames
                       if (mirror_dir / name).is_file()), None)
        if source is None and not mirror_dir.is_dir():
            why = f"mirror directory {mirror_dir} does not exist; "
        elif source is None:
            why = f"mirror {mirror_dir} has no {spec.filename}; "
        if source is None and download:
            _say(f"{spec.name}: {why}falling back to download from {spec.url}")
    if source is None and not download:
        where = (
            f"the mirror {mirror} has no {spec.filename}"
            if mirror is not None
            else f"no mirror is set (data.mirror / {MIRROR_ENV})"
        )
        raise DataError(
            f"data set {spec.name!r}: {where} and downloading is disabled "
            f"(data.download: false). Put {spec.filename} in a mirror directory and set "
            f"data.mirror or {MIRROR_ENV}, or set data.download: true to fetch {spec.url}"
        )

    with atomic_path(target) as tmp:
        if source is not None:
            what = "file" if spec.path is not None else "mirror file"
            try:
                _copy_from_mirror(source, tmp, spec, progress)
            except OSError as exc:
                raise DataError(
                    f"dataset {spec.name!r}: cannot copy {what} {source}: {exc}"
                ) from exc
            verify_file(tmp, spec, origin="download" if spec.path is not None else "mirror",
                        describe=f"copy of {source}")
        else:
            _download(spec, tmp, timeout, progress, why)
            verify_file(tmp, spec, origin="download", describe=f"download of {spec.url}")
    keep(target, spec, raw_dir)
    return target
