"""Atomic file output, and checked input: a reader never sees a half-written result, and a
damaged one is an error naming the file, never wrong numbers."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

DIGEST_KEY = b"pdsparse.sha256"
"""Parquet schema metadata key of :func:`metadata_digest` (footers carry no checksum of
their own: a damaged provenance or pandas schema would otherwise read without error)."""


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    The temporary file lives in the target directory so that the final
    :func:`os.replace` is atomic on POSIX file systems. On any exception the
    temporary file is removed and ``path`` is left untouched, so an interrupted
    job never leaves a truncated output that Snakemake would take as complete.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp creates 0600; give the result the permissions an ordinary open() would
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp_path, 0o666 & ~umask)
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def metadata_digest(metadata: Mapping[bytes, bytes]) -> bytes:
    """SHA-256 (hex) over a Parquet file's key-value metadata, :data:`DIGEST_KEY` left out."""
    digest = hashlib.sha256()
    for key in sorted(k for k in metadata if k != DIGEST_KEY):
        for part in (key, metadata[key]):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
    return digest.hexdigest().encode()


def check_metadata(path: str | os.PathLike, metadata: Mapping[bytes, bytes] | None,
                   what: str = "file") -> None:
    """Raise :class:`~pdsparse.errors.DataError` naming ``path`` when its metadata does not
    match the digest stored with it (files without a digest pass: older results)."""
    from pdsparse.errors import DataError

    metadata = metadata or {}
    stored = metadata.get(DIGEST_KEY)
    if stored is not None and stored != metadata_digest(metadata):
        raise DataError(f"cannot read {what} {path}: its metadata does not match the checksum "
                        "written with it (the file is damaged; delete it and rerun)")


def read_parquet(path: str | os.PathLike, what: str = "file"):
    """Read a Parquet file into a DataFrame; a missing or unreadable file is a
    :class:`~pdsparse.errors.DataError` naming it (``what`` says which kind, e.g. "stats file").

    Page checksums and the metadata digest are verified where the file has them (every file
    the house writes, :func:`pdsparse.repro.traces.write_frame`), so damage is an error, not wrong
    numbers."""
    import pandas as pd

    from pdsparse.errors import DataError

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} {path} does not exist")
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
        frame = pd.read_parquet(path, page_checksum_verification=True)
    except Exception as exc:  # pyarrow raises several unrelated exception types
        raise DataError(f"cannot read {what} {path}: {exc}") from exc
    check_metadata(path, schema.metadata, what)
    return frame
