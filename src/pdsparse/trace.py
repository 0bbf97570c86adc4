"""Parquet traces: one file per run, run keys as columns, provenance in file metadata."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pdsparse import __version__
from pdsparse.errors import DataError
from pdsparse.io import atomic_path, read_parquet

METADATA_KEY = b"pdsparse"


def git_commit(cwd: str | Path | None = None) -> str:
    """The checkout's HEAD commit, or ``"unknown"`` outside a git work tree."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                             text=True, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_trace(df: pd.DataFrame, path: str | Path, keys: dict, metadata: dict) -> None:
    """Write ``df`` with the run ``keys`` prepended as constant columns, atomically.

    ``metadata`` (the resolved run configuration) is stored as JSON under the
    file-level key ``pdsparse`` together with the package version and commit.
    """
    out = df.copy()
    for i, (k, v) in enumerate(keys.items()):
        out.insert(i, k, v)
    table = pa.Table.from_pandas(out, preserve_index=False)
    meta = {"version": __version__, "commit": git_commit(), **metadata}
    existing = table.schema.metadata or {}
    table = table.replace_schema_metadata(
        {**existing, METADATA_KEY: json.dumps(meta, default=str).encode()})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_metadata(path: str | Path) -> dict:
    """The ``pdsparse`` metadata of a trace file."""
    meta = pq.read_schema(path).metadata or {}
    if METADATA_KEY not in meta:
        raise DataError(f"{path}: not a pdsparse trace (no '{METADATA_KEY.decode()}' metadata)")
    return json.loads(meta[METADATA_KEY])


def read_traces(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate trace files into one tidy table."""
    frames = []
    for p in paths:
        frames.append(read_parquet(p, "trace"))
    if not frames:
        raise DataError("no trace files given")
    return pd.concat(frames, ignore_index=True)
