"""Parquet traces and tables: the trace schema, provenance, and the one Parquet writer.

A trace is one run: its keys (what was run, on which problem) as constant columns, then one
row per evaluation (``TRACE_COLUMNS`` of :mod:`pdsparse.solvers`), with ``status`` on the
last row. The file metadata (key ``pdsparse``) holds the package version, the git commit
and the resolved settings; every file :func:`write_frame` writes also carries its provenance
(:mod:`pdsparse.repro.provenance`: code, software, machine, threads, clock). An aggregate is the
traces of an experiment joined with the certified optimal values of their problems
(:func:`aggregate`); its provenance sums up its inputs' (which commits made them).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pdsparse import __version__
from pdsparse.errors import DataError
from pdsparse.io import DIGEST_KEY, atomic_path, check_metadata, metadata_digest, read_parquet
from pdsparse.repro.provenance import COMMIT_ENV, PROVENANCE_KEY, git_commit, record
from pdsparse.solvers import option_names

__all__ = [
    "COMMIT_ENV",
    "KEY_COLUMNS",
    "METADATA_KEY",
    "aggregate",
    "git_commit",
    "provenance",
    "read_metadata",
    "read_traces",
    "write_frame",
    "write_trace",
]

METADATA_KEY = b"pdsparse"
# Run keys, in column order: the experiment, the problem, the solver and every option of the
# registry ("none" where a solver lacks one), the seed.
KEY_COLUMNS = ("experiment", "dataset", "solver", "loss", "l2", "l1", *option_names(),
               "problem", "seed")


def provenance(arguments: Mapping | None = None) -> dict:
    """Where a result came from: package, version, commit, command line, arguments, time."""
    return {
        "package": "pdsparse",
        "version": __version__,
        "commit": git_commit(),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "arguments": {k: (str(v) if isinstance(v, Path) else v)
                      for k, v in (arguments or {}).items()},
        "created_unix": time.time(),
    }


def write_frame(df: pd.DataFrame, path: str | Path, metadata: dict | None = None,
                sources: Iterable[str | Path] = ()) -> None:
    """Write ``df`` to Parquet atomically, with ``metadata`` as JSON under key ``pdsparse``
    and the provenance (:func:`pdsparse.repro.provenance.record`) under ``pdsparse.provenance``:
    every Parquet file the package writes goes through here. ``sources``: the Parquet files
    ``df`` was made from, whose provenance is summed up in the record's ``inputs``.

    Every data page carries a CRC-32 and the footer's metadata a SHA-256
    (:func:`pdsparse.io.metadata_digest`), which :func:`pdsparse.io.read_parquet` verifies:
    damage on disk or in transfer otherwise decodes to wrong numbers without any error."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    kv = dict(table.schema.metadata or {})
    if metadata is not None:
        kv[METADATA_KEY] = json.dumps(metadata, default=str).encode()
    kv[PROVENANCE_KEY] = json.dumps(record(sources), default=str).encode()
    kv[DIGEST_KEY] = metadata_digest(kv)
    table = table.replace_schema_metadata(kv)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, write_page_checksum=True)


def write_trace(df: pd.DataFrame, path: str | Path, keys: dict, metadata: dict) -> None:
    """Write a run's trace with its ``keys`` prepended as constant columns, atomically.

    ``metadata`` (the resolved run configuration) is stored with the package version and
    the commit.
    """
    out = df.copy()
    for i, (k, v) in enumerate(keys.items()):
        out.insert(i, k, v)
    write_frame(out, path, {"version": __version__, "commit": git_commit(), **metadata})


def read_metadata(path: str | Path) -> dict:
    """The ``pdsparse`` metadata of a trace file."""
    meta = pq.read_schema(path).metadata or {}
    check_metadata(path, meta, "trace")
    if METADATA_KEY not in meta:
        raise DataError(f"{path}: not a pdsparse trace (no '{METADATA_KEY.decode()}' metadata)")
    return json.loads(meta[METADATA_KEY])


def read_traces(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate trace files into one tidy table."""
    frames = [read_parquet(p, "trace") for p in paths]
    if not frames:
        raise DataError("no trace files given")
    return pd.concat(frames, ignore_index=True)


def aggregate(run_paths: Iterable[str | Path], reference_paths: Iterable[str | Path]):
    """Concatenate run traces and attach ``p_star``, ``subopt = primal - p_star``, ``rel_subopt``.

    Traces and references are joined on ``problem`` (the tag of
    :class:`pdsparse.problem.ProblemKey`). The reference columns ``n``, ``d``, ``nnz`` and
    ``rel_gap`` (as ``p_star_rel_gap``) are attached too. ``subopt`` keeps its sign (plots
    clip); ``rel_subopt = subopt / |p_star|``.

    Raises
    ------
    DataError
        A run whose problem has no reference, or a problem with several.
    """
    runs = read_traces(run_paths)
    refs = [read_parquet(p, "reference file") for p in reference_paths]
    if not refs:
        raise DataError("aggregate: no reference files given")
    ref = pd.concat(refs, ignore_index=True)
    for what, frame in (("run traces", runs), ("reference files", ref)):
        if "problem" not in frame.columns:
            raise DataError(f"aggregate: the {what} have no 'problem' column (made by an "
                            "older version: run them again)")
    ref = ref[["problem", "p_star", "rel_gap", "n", "d", "nnz"]].rename(
        columns={"rel_gap": "p_star_rel_gap"}
    )
    dup = ref.duplicated("problem", keep=False)
    if dup.any():
        raise DataError(
            f"aggregate: several reference files for {sorted(set(ref.loc[dup, 'problem']))}"
        )
    out = runs.merge(ref, on="problem", how="left", validate="many_to_one")
    missing = sorted(set(out.loc[out["p_star"].isna(), "problem"]))
    if missing:
        raise DataError(f"aggregate: no reference file for problem(s) {missing}")
    out["subopt"] = out["primal"] - out["p_star"]
    scale = np.maximum(np.abs(out["p_star"].to_numpy(float)), np.finfo(float).tiny)
    out["rel_subopt"] = out["subopt"].to_numpy(float) / scale
    return out
