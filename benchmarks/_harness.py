"""What every benchmark script records beside its timings: machine, versions, quietness, memory.

One home for the helpers that ``peers.py``, ``dgpd_peers.py``, ``dgpd_scaling.py``,
``pdbfw_peers.py`` and ``pdbfw_table1.py`` share (they were copied in each): the machine and
library versions (with the git commit from :func:`pdsparse.traces.git_commit`), whether the
machine was quiet (no snakemake, few cores kept busy by other processes), peak and current
RSS, the house rule for repeats, and single-threaded BLAS for child processes.

The scripts run as ``python benchmarks/<name>.py``, so this directory is on ``sys.path``;
a script loaded by path (``tests/test_peers_mapping.py``) calls :func:`importable` first.
"""

from __future__ import annotations

import importlib
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "results" / "benchmarks"
DATA_DIR = OUT_DIR / "data"
DEFAULT_MIRROR = Path("/work/shared/datasets")

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
OTHER_MAX = 0.25
"""Quiet: other processes kept fewer cores busy than this, on average, during a measurement."""


def importable() -> None:
    """Put this directory on ``sys.path`` (for a benchmark module loaded by file path)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)


def make_log(tag: str):
    """``log(msg)``: a time-stamped progress line on stderr, ``[tag HH:MM:SS] msg``."""

    def log(msg: str) -> None:
        print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    return log


def repeats_for(first_s: float) -> int:
    """Median of 5 below 0.05 s, of 3 below 1 s, else one run (the house rule, peers.py)."""
    return 5 if first_s < 0.05 else 3 if first_s < 1.0 else 1


def single_thread_env() -> dict:
    """The environment with OMP/OPENBLAS/MKL threads = 1 (set before NumPy loads BLAS)."""
    return dict(os.environ, **{k: "1" for k in THREAD_ENV})


def single_threaded() -> bool:
    return all(os.environ.get(k) == "1" for k in THREAD_ENV)


# ---------------------------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------------------------


def maxrss_mib() -> float:
    """Peak resident set size of this process so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mib() -> float:
    """Current resident set size of this process, MiB (``/proc/self/status``)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


# ---------------------------------------------------------------------------------------------
# Quietness
# ---------------------------------------------------------------------------------------------


def busy_ticks() -> int:
    """Busy CPU time of the whole machine so far, in clock ticks (/proc/stat)."""
    try:
        with open("/proc/stat") as fh:
            f = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return 0
    return sum(f) - f[3] - (f[4] if len(f) > 4 else 0)  # all but idle and iowait


def own_cpu_s() -> float:
    """CPU seconds of this process and its waited-for children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


class OtherLoad:
    """Average number of cores kept busy by other processes than this one (and its
    children) between start and stop: a concurrent job, which pgrep -f snakemake misses."""

    def __init__(self):
        self.t, self.busy, self.own = time.perf_counter(), busy_ticks(), own_cpu_s()

    def stop(self) -> float:
        hz = os.sysconf("SC_CLK_TCK")
        dt = time.perf_counter() - self.t
        other = (busy_ticks() - self.busy) / hz - (own_cpu_s() - self.own)
        return round(max(other, 0.0) / dt, 3) if dt > 0 else float("nan")


def snakemake_running() -> bool:
    try:
        out = subprocess.run(["pgrep", "-f", "snakemake"], capture_output=True, text=True,
                             timeout=10)
        return bool(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return False


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ---------------------------------------------------------------------------------------------
# Machine and versions
# ---------------------------------------------------------------------------------------------


def machine() -> dict:
    """CPU count and model, memory (GiB) and platform."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")),
                       "")
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"nproc": os.cpu_count(), "cpu": cpu, "mem_gib": mem,
            "platform": platform.platform()}


def versions(*modules: str, env: bool = False) -> dict:
    """Python, numpy, scipy, pandas, pdsparse and the git commit, plus the ``__version__`` of
    each named module (``"copt"``, ``"sklearn"``); ``env``: the BLAS thread variables too."""
    import pandas as pd
    import scipy

    import pdsparse
    from pdsparse.traces import git_commit

    out = {"python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "pandas": pd.__version__}
    for name in modules:
        out[name] = getattr(importlib.import_module(name), "__version__", "?")
    out.update(pdsparse=pdsparse.__version__, git_commit=git_commit(REPO))
    if env:
        out["env"] = {k: os.environ.get(k) for k in THREAD_ENV}
    return out


def rel(p: Path | str) -> str:
    """``p`` relative to the repository when inside it (for messages and outputs)."""
    try:
        return str(Path(p).resolve().relative_to(REPO))
    except ValueError:
        return str(p)


# ---------------------------------------------------------------------------------------------
# copt's view of the problems
# ---------------------------------------------------------------------------------------------


def smooth_hinge_fgrad(A, b, l2: float):
    """f(x) = 1/n sum phi(b_i a_i^T x) + l2/2 ||x||^2 and its gradient, smooth hinge in NumPy:
    the objective handed to copt (``jac=True``), A sparse or dense.

    phi(t) = 1/2 - t (t <= 0), (1 - t)^2 / 2 (0 < t < 1), 0 (t >= 1); with s = 1 - b z and
    r = clip(s, 0, 1): phi = r s - r^2 / 2, d phi / d z = -b r. (The package's own smooth
    hinge lives in ``pdsparse.losses``; this vectorized copy is the peer's side of the
    comparison, checked against ``pdsparse.objective.primal`` by the benchmarks.)
    """
    n = A.shape[0]
    At = A.T

    def f_grad(x):
        z = A @ x
        s = 1.0 - b * z
        r = np.clip(s, 0.0, 1.0)
        f = float(r @ s - 0.5 * (r @ r)) / n + 0.5 * l2 * float(x @ x)
        g = At @ (-(b * r))
        g /= n
        g += l2 * x
        return f, g

    return f_grad
