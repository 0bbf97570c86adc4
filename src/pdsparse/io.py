"""Atomic file output: a reader never sees a half-written result."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


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


def read_parquet(path: str | os.PathLike, what: str = "file"):
    """Read a Parquet file into a DataFrame; a missing or unreadable file is a
    :class:`~pdsparse.errors.DataError` naming it (``what`` says which kind, e.g. "stats file")."""
    import pandas as pd

    from pdsparse.errors import DataError

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} {path} does not exist")
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated exception types
        raise DataError(f"cannot read {what} {path}: {exc}") from exc
