"""Where a result came from, written into every Parquet file and read back.

A file's provenance (:func:`record`) names the code (package version, git commit, whether the
work tree had uncommitted changes), the software (Python, NumPy, SciPy, pandas, pyarrow), the
machine (CPU model, ``os.cpu_count()``, the cores the process may use, the BLAS and OpenMP
threads in force as :mod:`threadpoolctl` reports them) and the clock that measured ``time_s``
(:data:`pdsparse.solvers.CPU_CLOCK`). :func:`pdsparse.repro.traces.write_frame`, the one Parquet
writer, stores it as JSON under :data:`PROVENANCE_KEY`; :func:`read_provenance` returns it.

A file made from other files (an aggregate from its traces and references) also carries
``inputs``: how many input files came from which commit, CPU model and BLAS thread count
(:func:`summarize`, counted over the *leaves*: an input that is itself made from files
contributes its own inputs), so that a merge of runs from several commits, or from another
machine, is visible in the aggregate and in everything built from it. :func:`describe` says
it in one sentence (the scorecard's header).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from pdsparse import __version__

__all__ = ["COMMIT_ENV", "DIRTY_ENV", "PROVENANCE_KEY", "UNKNOWN", "commit_label", "describe",
           "environment", "git_commit", "git_dirty", "of_results", "read_provenance", "record",
           "summarize"]

COMMIT_ENV = "PDSPARSE_GIT_COMMIT"
DIRTY_ENV = "PDSPARSE_GIT_DIRTY"
PROVENANCE_KEY = b"pdsparse.provenance"
UNKNOWN = "unknown"
_SOURCE = Path(__file__).resolve().parent  # the package's own checkout, not the caller's cwd


def _git(args: list[str], cwd: str | Path | None) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd or _SOURCE, capture_output=True,
                             text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


@functools.cache
def git_commit(cwd: str | Path | None = None) -> str:
    """HEAD of the checkout the package runs from: ``$PDSPARSE_GIT_COMMIT`` if set, else
    ``git rev-parse HEAD``; ``"unknown"`` outside a work tree (an installed package).

    The workflow reads the commit once and hands it to its jobs in the environment, so that
    no job starts git (``workflow/rules/common.smk``)."""
    if os.environ.get(COMMIT_ENV):
        return os.environ[COMMIT_ENV]
    out = _git(["rev-parse", "HEAD"], cwd)
    return out.strip() if out else UNKNOWN


@functools.cache
def git_dirty(cwd: str | Path | None = None) -> bool | None:
    """Whether tracked files differ from HEAD (``$PDSPARSE_GIT_DIRTY`` = 1/0 if set, else
    ``git status --porcelain --untracked-files=no``); None outside a work tree, or when
    ``$PDSPARSE_GIT_COMMIT`` names the commit without it. Untracked files (results,
    compiled kernels) do not count."""
    env = os.environ.get(DIRTY_ENV)
    if env in ("0", "1"):
        return env == "1"
    if os.environ.get(COMMIT_ENV):  # a commit given without its state: not this tree's
        return None
    out = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return None if out is None else bool(out.strip())


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or UNKNOWN


def _threadpools() -> list[dict]:
    """The thread pools loaded in this process (BLAS, OpenMP) and their threads now."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # scikit-learn brings it; without it the count is unknown
        return []
    keys = ("user_api", "internal_api", "num_threads", "version")
    return [{k: pool.get(k) for k in keys} for pool in threadpool_info()]


def environment() -> dict:
    """The provenance fields of this process (code, software, machine, clock).

    Everything but the thread pools is computed once per process; the pools are asked each
    time (``threadpoolctl``, about a millisecond), so the count is the one in force when the
    file is written, after the kernels ran."""
    pools = _threadpools()
    blas = [p["num_threads"] for p in pools if p["user_api"] == "blas"]
    return {**_static(), "blas_threads": max(blas) if blas else None, "threadpools": pools}


@functools.cache
def _static() -> dict:
    import numpy
    import pandas
    import pyarrow
    import scipy

    from pdsparse.solvers import CPU_CLOCK

    clock = getattr(CPU_CLOCK, "__name__", str(CPU_CLOCK))
    info = time.get_clock_info(clock) if hasattr(time, clock) else None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    return {
        "package": "pdsparse", "version": __version__,
        "commit": git_commit(), "dirty": git_dirty(),
        "python": platform.python_version(), "numpy": numpy.__version__,
        "scipy": scipy.__version__, "pandas": pandas.__version__,
        "pyarrow": pyarrow.__version__, "platform": platform.platform(),
        "cpu_model": _cpu_model(), "cpu_count": os.cpu_count(), "cpu_usable": usable,
        "cpu_clock": f"{getattr(CPU_CLOCK, '__module__', 'time')}.{clock}",
        "cpu_clock_implementation": info.implementation if info else UNKNOWN,
        "cpu_clock_resolution": info.resolution if info else None,
    }


def record(sources: Iterable[str | Path] = ()) -> dict:
    """The provenance of a file written now: :func:`environment`, the time, and, for a file
    made from ``sources`` (Parquet files), their summary under ``inputs``."""
    out = {**environment(), "created_unix": time.time()}
    sources = list(sources)
    if sources:
        out["inputs"] = summarize(read_provenance(p) for p in sources)
    return out


def read_provenance(path: str | Path) -> dict | None:
    """The provenance of a Parquet file (:func:`record`); None for a file written before
    provenance was recorded. A damaged footer is a :class:`~pdsparse.errors.DataError`."""
    import pyarrow.parquet as pq

    from pdsparse.errors import DataError
    from pdsparse.io import check_metadata

    try:
        meta = pq.read_schema(path).metadata or {}
    except Exception as exc:  # pyarrow raises several unrelated exception types
        raise DataError(f"cannot read the provenance of {path}: {exc}") from exc
    check_metadata(path, meta)
    raw = meta.get(PROVENANCE_KEY)
    return None if raw is None else json.loads(raw)


def commit_label(prov: Mapping | None) -> str:
    """``<commit>``, ``<commit>+dirty`` (uncommitted changes) or ``unknown``."""
    if not prov:
        return f"{UNKNOWN} (no provenance)"
    commit = str(prov.get("commit") or UNKNOWN)
    return commit + ("+dirty" if prov.get("dirty") else "")


_COUNTED = {"commits": commit_label,
            "cpu_models": lambda p: (f"{p.get('cpu_model', UNKNOWN)} ({p.get('cpu_count')} cores)"
                                     if p else UNKNOWN),
            "blas_threads": lambda p: str(p.get("blas_threads")) if p else UNKNOWN,
            "cpu_clocks": lambda p: str(p.get("cpu_clock", UNKNOWN)) if p else UNKNOWN,
            "versions": lambda p: (", ".join(f"{name} {p.get(k, '?')}" for k, name in
                                             (("version", "pdsparse"), ("python", "Python"),
                                              ("numpy", "NumPy"), ("scipy", "SciPy"),
                                              ("pandas", "pandas")))
                                   if p else UNKNOWN)}


def summarize(provenances: Iterable[Mapping | None]) -> dict:
    """How many leaf files came from each commit (:func:`commit_label`), CPU model, BLAS
    thread count and software versions. A provenance with ``inputs`` adds its inputs'
    counts, not itself: an aggregate written later by another commit does not hide which
    commit made its traces."""
    counts: dict[str, Counter] = {k: Counter() for k in _COUNTED}
    files = 0
    for prov in provenances:
        inputs = prov.get("inputs") if prov else None
        if inputs:
            files += int(inputs.get("files", 0))
            for key in _COUNTED:
                counts[key].update(inputs.get(key, {}))
            continue
        files += 1
        for key, label in _COUNTED.items():
            counts[key][label(prov)] += 1
    return {"files": files, **{k: dict(sorted(c.items())) for k, c in counts.items()}}


def of_results(results: str | Path = "results", files: Iterable[str | Path] | None = None) -> dict:
    """:func:`summarize` of ``files``, by default every Parquet file under ``results`` but
    the traces (``runs/``: the aggregates carry theirs) and ``benchmarks/``."""
    if files is None:
        results = Path(results)
        files = sorted(p for p in results.rglob("*.parquet")
                       if p.relative_to(results).parts[0] not in ("runs", "benchmarks"))
    return summarize(read_provenance(p) for p in files)


def _short(label: str) -> str:
    """A :func:`commit_label` with the hash cut to 12 digits, its ``+dirty`` kept."""
    sha, plus, rest = label.partition("+")
    return (sha[:12] if len(sha) == 40 else sha) + plus + rest


def describe(summary: Mapping) -> str:
    """One sentence on a :func:`summarize` of results: the commit and environment of one
    clean run, or every commit (with its file count) when they are mixed."""
    commits = summary.get("commits", {})
    files = summary.get("files", 0)
    if not files:
        return "Provenance: no result files with provenance."
    if len(commits) != 1:
        listed = ", ".join(f"{_short(c)} ({k} files)" for c, k in
                           sorted(commits.items(), key=lambda item: -item[1]))
        return (f"Provenance: MIXED: the {files} result files come from {len(commits)} "
                f"commits, not one clean run: {listed}.")
    (commit,) = commits
    if commit == commit_label(None):
        return (f"Provenance: none of the {files} result files records its provenance "
                "(written by a version before it was recorded).")
    clean = ("with uncommitted changes" if commit.endswith("+dirty")
             else "a clean checkout" if not commit.startswith(UNKNOWN) else "no git checkout")
    parts = [f"Provenance: all {files} result files from commit {_short(commit.split('+')[0])} "
             f"({clean})"]
    for key, what in (("versions", "software"), ("cpu_models", "CPU"),
                      ("blas_threads", "BLAS threads"), ("cpu_clocks", "time_s clock")):
        values = summary.get(key, {})
        parts.append(f"{what}: " + "; ".join(values) if len(values) == 1 else
                     f"{what}: mixed ({'; '.join(f'{v} x{k}' for v, k in values.items())})")
    return ", ".join(parts[:1]) + "; " + "; ".join(parts[1:]) + "."
