"""What the benchmark scripts share besides the runner (``bench/``): data, traces, the record.

* the peers: :func:`require_peer` imports one (copt, scikit-learn) or stops with one line on
  stderr saying how to install it (``pip install -e '.[bench]'``) and exit status 2;
* the traces a ``"trace"`` solver of the runner records (``bench.solver.Solver.trace``): our
  kernels evaluated between chunks (:func:`trace_kernel`), copt in its callback
  (:func:`callback_trace`), both in CPU time (``time.process_time``) as the runner's timed
  runs and caps are;
* each data set in a subprocess of its own with single-threaded BLAS, its data prepared in
  another one before (:func:`run_datasets`, :func:`serve_worker`), its prepared data and
  certified references cached (:func:`prepare_cached`, :func:`cached_ref`);
* the machine record: machine and library versions (with the git commit from
  :func:`pdsparse.repro.traces.git_commit`), whether the machine was quiet (no snakemake, few
  cores kept busy by other processes: :class:`Watch`), peak and current RSS, the run's
  metadata (:func:`run_record`).

The scripts run as ``python benchmarks/<name>.py``, so this directory is on ``sys.path``.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "results" / "benchmarks"
DATA_DIR = OUT_DIR / "data"
DEFAULT_MIRROR = Path("/work/shared/datasets")

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
OTHER_MAX = 0.25
"""Quiet: other processes kept fewer cores busy than this, on average, during a measurement."""
NOT_QUIET = "NOT quiet: snakemake or another job ran during part of the measurement"


def make_log(tag: str):
    """``log(msg)``: a time-stamped progress line on stderr, ``[tag HH:MM:SS] msg``."""

    def log(msg: str) -> None:
        print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    return log


def single_thread_env() -> dict:
    """The environment with OMP/OPENBLAS/MKL threads = 1 (set before NumPy loads BLAS)."""
    return dict(os.environ, **{k: "1" for k in THREAD_ENV})


def single_threaded() -> bool:
    return all(os.environ.get(k) == "1" for k in THREAD_ENV)


# ---------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------

INSTALL_HINT = "pip install -e '.[bench]'"
PEER_PACKAGES = {"sklearn": "scikit-learn"}
"""A peer's module name -> the name it is installed under (when they differ)."""


def require_peer(module: str, prog: str | None = None):
    """The peer library ``module`` (``"copt"``, ``"sklearn"``), imported; when it cannot be,
    one line on stderr saying how to install it (the ``bench`` extra) and exit status 2.

    ``prog``: the script's name for the message (default: ``sys.argv[0]``'s)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        prog = prog or Path(sys.argv[0]).name
        package = PEER_PACKAGES.get(module, module)
        missing = getattr(exc, "name", None)
        if missing is None or missing.split(".")[0] == module:
            what = "is not installed"
        else:  # installed, but something it needs is not
            what = f"cannot be imported ({(str(exc).splitlines() or [''])[0]})"
        print(f"{prog}: {package} {what}; {INSTALL_HINT}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


# ---------------------------------------------------------------------------------------------
# Traces: our kernels between chunks, copt in its callback
# ---------------------------------------------------------------------------------------------

PEER_TOL = 1e-15
"""The ``tol`` handed to a peer, so that its ``max_iter`` is what stops it."""
EVAL_MIN_EPOCHS = 1.0 / 64
EVAL_REL_STEP = 0.02
EVAL_TIME_FRAC = 0.5  # a trace chunk runs at least this fraction of one evaluation's time
TRACE_COLUMNS = ["touched", "iterations", "kernel_s", "primal", "rel_subopt"]
CALLBACK_COLUMNS = ["cap", "net_s", "primal", "rel_subopt", "nnz_x"]


def trace_kernel(build: Callable, evaluate: Callable, target: float, *,
                 cap: float = math.inf, max_epochs: float = math.inf,
                 max_kernel_s: float = math.inf, time_frac: float = EVAL_TIME_FRAC,
                 extra: Callable | None = None, extra_columns=(),
                 diverged: str = "diverged"):
    """Run our kernel to ``target`` or a limit, evaluating P between chunks.

    ``build()`` -> (problem, kernel), timed as the setup; ``evaluate(x)`` -> (P, rel), outside
    the kernel's clock. Chunks of max(1/64 epoch, 2% of the work done) work units, and (with
    ``time_frac``) at least enough for the kernel to run that fraction of one evaluation's
    time, the last one cut to what is left of ``cap`` (setup + kernel seconds). Chunked calls
    reproduce one call, so a re-run with the work of a row ends at its iterate. ``extra(kernel,
    x)`` -> more values of each row (``extra_columns``). Returns (trace, setup s, why it
    stopped); the trace's columns are :data:`TRACE_COLUMNS` and ``extra_columns``.
    """
    import pandas as pd

    t0 = time.process_time()
    prob, kernel = build()
    setup = time.process_time() - t0
    nnz = prob.nnz
    touched = iters = 0
    ktime = 0.0

    def point():
        te = time.process_time()
        x = kernel.solution()
        p, rel = evaluate(x)
        eval_s = time.process_time() - te
        return p, rel, eval_s, (touched, iters, ktime, p, rel, *(extra(kernel, x) if extra
                                                                 else ()))

    p, rel, eval_s, row = point()
    rows = [row]
    while True:
        if not np.isfinite(p):
            stop = diverged
            break
        if rel <= target:
            stop = "target"
            break
        if setup + ktime >= cap:
            stop = f"cap {cap:g} s (setup {setup:.2f} s + kernel {ktime:.1f} s)"
            break
        if touched / nnz >= max_epochs or ktime >= max_kernel_s:
            stop = f"limit {touched / nnz:.4g} epochs / {ktime:.3g} s kernel"
            break
        ep = touched / nnz
        nxt = ep + max(EVAL_MIN_EPOCHS, EVAL_REL_STEP * ep)  # the next evaluation, in epochs
        chunk = int(math.ceil(nxt * nnz)) - touched
        if time_frac and ktime > 0 and touched > 0:
            speed = touched / ktime
            chunk = max(chunk, time_frac * eval_s * speed)
            chunk = min(chunk, max(1.0, 1.05 * (cap - setup - ktime) * speed))
        budget = max(1, int(math.ceil(chunk)))
        t = time.process_time()
        k_it, k_t = kernel.run(budget)
        ktime += time.process_time() - t
        iters += k_it
        touched += k_t
        p, rel, eval_s, row = point()
        rows.append(row)
    return pd.DataFrame(rows, columns=[*TRACE_COLUMNS, *extra_columns]), setup, stop


def callback_trace(fit: Callable, evaluate: Callable, target: float, cap: float, *,
                   index: Callable | None = None, end_index: Callable | None = None,
                   diverged: str = "diverged"):
    """One copt run evaluating P in its callback (the callback's time is taken off the clock),
    to ``target`` or ``cap`` seconds: the smallest ``max_iter`` at the target without a search.

    ``fit(callback)`` runs copt with a huge ``max_iter``; copt is deterministic and calls
    ``callback(locals())`` every iteration. Each row's ``cap`` is the ``max_iter`` whose complete
    fit returns the evaluated iterate: ``index(k, locals)`` at the k-th call from 0 (default
    k - 1: the proximal-gradient loop, whose callback opens each iteration), ``end_index(k,
    result)`` when copt stopped by itself (default k - 1). Evaluations at every iteration, then
    every 2%; a call after the trace stopped is answered False again (Frank-Wolfe's final
    call repeats an iterate). Returns (trace with :data:`CALLBACK_COLUMNS`, why it stopped).
    """
    import pandas as pd

    index = index or (lambda k, loc: k - 1)
    end_index = end_index or (lambda k, res: k - 1)
    rows = []
    state = {"k": 0, "next": 0, "eval_s": 0.0, "stop": "", "done": False}
    t0 = time.process_time()

    def callback(loc):
        te = time.process_time()
        if state["done"]:
            return False
        k = state["k"]
        state["k"] += 1
        net = te - t0 - state["eval_s"]
        go = True
        if k >= state["next"] or net >= cap:
            pk, rk = evaluate(loc["x"])
            rows.append((index(k, loc), net, pk, rk, int(np.count_nonzero(loc["x"]))))
            state["next"] = max(k + 1, int(math.ceil(k * (1 + EVAL_REL_STEP))))
            if rk <= target:
                state["stop"] = "target"
                go = False
            elif not np.isfinite(pk):
                state["stop"] = diverged
                go = False
        if go and net >= cap:
            state["stop"] = f"cap {cap:g} s ({k} iterations)"
            go = False
        state["done"] = not go
        state["eval_s"] += time.process_time() - te
        return None if go else False

    res = fit(callback)
    if not state["stop"]:
        state["stop"] = f"copt stopped by itself after {int(res.nit)} iterations"
        x = np.asarray(res.x)
        pk, rk = evaluate(x)
        rows.append((end_index(state["k"], res), time.process_time() - t0 - state["eval_s"],
                     pk, rk, int(np.count_nonzero(x))))
    tr = pd.DataFrame(rows, columns=CALLBACK_COLUMNS)
    tr = tr[tr.cap >= 0].drop_duplicates("cap", keep="first").reset_index(drop=True)
    return tr, state["stop"]


def solve_reference(prob, rtol: float, max_seconds: float) -> tuple:
    """(reference, record): :func:`pdsparse.reference.reference_solution` and the record kept
    of it (p_star, rel_gap, method, seconds)."""
    from pdsparse.reference import reference_solution

    t = time.perf_counter()
    ref = reference_solution(prob, rtol=rtol, max_seconds=max_seconds)
    return ref, {"p_star": float(ref.p_star), "rel_gap": float(ref.rel_gap),
                 "method": ref.method, "seconds": time.perf_counter() - t}


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


class Watch:
    """Whether one measurement ran on a quiet machine: snakemake seen at its start or end,
    the cores other processes kept busy (:class:`OtherLoad`), the load average."""

    def __init__(self):
        self.t = time.perf_counter()
        self.other = OtherLoad()
        self.quiet0 = not snakemake_running()
        self.load0 = loadavg()

    def stop(self) -> dict:
        """seconds, other_cores, snakemake (seen), quiet, loadavg (start, end)."""
        other_cores = self.other.stop()
        snake = not (self.quiet0 and not snakemake_running())
        return {"seconds": time.perf_counter() - self.t, "other_cores": other_cores,
                "snakemake": snake, "quiet": bool(not snake and other_cores < OTHER_MAX),
                "loadavg": [self.load0, loadavg()]}


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
    from pdsparse.repro.traces import git_commit

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


def run_record(watch: Watch, opts: dict, versions: dict, *, results=None, skip=()) -> dict:
    """The head of a run's metadata: total seconds since ``watch`` started, machine, versions,
    quiet (when the workers' ``results`` are given: no snakemake seen at the start or the
    end, every worker quiet), load average before and after, the settings (``opts`` but
    ``skip``; sets sorted)."""
    out = {"total_seconds": time.perf_counter() - watch.t, "machine": machine(),
           "versions": versions}
    if results is not None:
        out["quiet"] = (watch.quiet0 and not snakemake_running()
                        and all(r.get("quiet", True) for r in results))
    out.update(loadavg_before=watch.load0, loadavg_after=loadavg(),
               settings={k: (sorted(v) if isinstance(v, set) else v) for k, v in opts.items()
                         if k not in skip})
    return out


# ---------------------------------------------------------------------------------------------
# Each data set in its own subprocesses: data prepared in one, measured in the next
# ---------------------------------------------------------------------------------------------


def bench_parser(doc: str, datasets, quick_datasets: str, quick_help: str):
    """The argument parser of a benchmark: its description (the docstring's first paragraph
    and, in ``--help``, the rest), ``--datasets`` (out of ``datasets``) and ``--quick``."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=None,
                    help=f"comma list out of {','.join(datasets)} (default: all; --quick: "
                         f"{quick_datasets})")
    ap.add_argument("--quick", action="store_true", help=quick_help)
    return ap


def pick_datasets(ap, args, known, quick: list[str], default: list[str],
                  extra=()) -> list[str]:
    """The data sets of ``--datasets`` (else ``quick`` with ``--quick``, else ``default``),
    then those of ``extra`` not among them; an unknown one is a usage error."""
    if args.datasets:
        datasets = [x.strip() for x in args.datasets.split(",") if x.strip()]
    else:
        datasets = list(quick if args.quick else default)
    datasets += [x for x in extra if x not in datasets]
    bad = [x for x in datasets if x not in known]
    if bad:
        ap.error(f"--datasets: unknown {bad}; choose from {list(default)}")
    return datasets


def pass_on(values, switches=()) -> list[str]:
    """The options a worker is called with: ``flag value`` for each (flag, value) whose value
    is not None, then each (flag, on) switch that is on."""
    out = []
    for flag, val in values:
        if val is not None:
            out += [flag, str(val)]
    return out + [flag for flag, on in switches if on]


def add_data_args(ap, refs: str, ref_max_s: float, ref_help: str | None = None) -> None:
    """``--mirror``, ``--data-dir`` (prepared data and cached references), ``--out-dir``,
    ``--fresh-refs`` (the cache file ``refs`` under the data dir) and ``--ref-max-s``."""
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--out-dir", default=str(OUT_DIR))
    ap.add_argument("--fresh-refs", action="store_true",
                    help=f"recompute P* even when cached in <data-dir>/{refs}")
    ap.add_argument("--ref-max-s", type=float, default=ref_max_s, help=ref_help)


def add_worker_args(ap) -> None:
    """The hidden options by which :func:`run_datasets` calls the script on one data set."""
    import argparse

    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--prep", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--prep-file", default=None, help=argparse.SUPPRESS)


def serve_worker(args, prep: Callable[[], dict], run: Callable[[dict], dict]) -> int:
    """The script called by :func:`run_datasets`: ``prep()`` (``--prep``: make the data file)
    or ``run(what prep returned)``, its result pickled to ``--worker-out``."""
    if args.prep:
        res = prep()
    else:
        with open(args.prep_file, "rb") as fh:
            res = run(pickle.load(fh))
    with open(args.worker_out, "wb") as fh:
        pickle.dump(res, fh)
    return 0


def run_datasets(script: Path, datasets: list[str], common: list[str], *, log: Callable,
                 t0: float, tmp_prefix: str, pass_tmp_dir: bool = False,
                 failed_hint: str = "", reuse: Callable | None = None,
                 after: Callable | None = None) -> list[dict]:
    """Each data set in two subprocesses of ``script`` with single-threaded BLAS: ``--prep``
    (parsing or generating needs temporaries several times the matrix; kept out of the
    measuring process, whose peak RSS is then the solvers') and the measurement, both with
    the options ``common``. A failed step or a data set the prep skips gives ``{"dataset",
    "skipped": why}``. ``reuse(i, name)``: a result kept from an earlier run instead (None:
    run it); ``after(name, result)`` -> the result to keep."""
    results = []
    env = single_thread_env()
    with tempfile.TemporaryDirectory(prefix=tmp_prefix) as td:
        for i, ds in enumerate(datasets):
            res = reuse(i, ds) if reuse is not None else None
            if res is not None:
                results.append(res)
                continue
            log(f"[{i + 1}/{len(datasets)}] {ds} (elapsed {time.perf_counter() - t0:.0f} s)")
            prep_out, out = Path(td) / f"{i}.prep.pkl", Path(td) / f"{i}.pkl"
            prep_extra = ["--prep", *(["--tmp-dir", td] if pass_tmp_dir else [])]
            for step, extra, path in (("prep", prep_extra, prep_out),
                                      ("run", ["--prep-file", str(prep_out)], out)):
                cmd = [sys.executable, str(Path(script).resolve()), "--worker", ds,
                       "--worker-out", str(path), *common, *extra]
                proc = subprocess.run(cmd, env=env)
                if proc.returncode != 0 or not path.is_file():
                    res = {"dataset": ds,
                           "skipped": f"{step} failed (exit {proc.returncode}){failed_hint}"}
                    log(f"{ds}: {res['skipped']}")
                    break
                with open(path, "rb") as fh:
                    res = pickle.load(fh)
                if "skipped" in res:
                    res = {"dataset": ds, **res}
                    log(f"{ds}: skipped: {res['skipped']}")
                    break
            results.append(after(ds, res) if after is not None else res)
    return results


def cache_path(data_dir: Path, base: str, recipe: dict) -> Path:
    """The prepared ``.npz`` of raw data ``base`` (a registry name or a generator) under a
    recipe of :class:`pdsparse.data.prepare.Recipe`."""
    from pdsparse.data.prepare import Recipe

    return Path(data_dir) / f"{base}__{Recipe(**recipe).tag()}.npz"


def prepare_cached(base: str, recipe: dict, opts: dict, *, generator: bool = False) -> dict:
    """``{"path", "note", "prep_s"}`` of a data set prepared once into ``opts["data_dir"]``
    (reused when present): from the registry's raw file in the mirror (never downloaded;
    ``{"skipped": why}`` when the mirror lacks it), or from a generator of
    :func:`pdsparse.data.prepare.prepare_synthetic`."""
    from pdsparse.data.prepare import Recipe, prepare, prepare_synthetic

    data_dir = Path(opts["data_dir"])
    path = cache_path(data_dir, base, recipe)
    if path.is_file():
        return {"path": str(path), "note": f"reused {rel(path)}", "prep_s": 0.0}
    r = Recipe(**recipe)
    t = time.perf_counter()
    if generator:
        prepare_synthetic(base, base, {}, 0, r, path)
        how = f"prepare_synthetic({base!r}, recipe {r.tag()})"
    else:
        from pdsparse.data.fetch import fetch, resolve_mirror
        from pdsparse.data.registry import load_registry

        spec = load_registry(REPO / "config" / "datasets.yaml")[base]
        mirror = resolve_mirror(opts.get("mirror")) or DEFAULT_MIRROR
        if not (Path(mirror) / spec.filename).is_file():
            return {"skipped": f"{spec.filename} is not in the mirror {mirror} (no download)"}
        raw = fetch(spec, data_dir / "raw", mirror=mirror, progress=False, download=False)
        prepare(raw, spec, r, path)
        how = f"prepare({rel(raw)}, recipe {r.tag()})"
    secs = time.perf_counter() - t
    return {"path": str(path), "note": f"prepared {rel(path)}: {how} in {secs:.0f} s",
            "prep_s": secs}


def load_prepared(path) -> tuple:
    """(A, labels, meta, load seconds, dense) of a prepared data file; a sparse A as CSR with
    sorted indices (float64)."""
    import scipy.sparse as sp

    from pdsparse.data.store import load_dataset

    t = time.perf_counter()
    ds = load_dataset(path)
    A, y, meta = ds.A, ds.b, ds.meta
    del ds
    load_s = time.perf_counter() - t
    dense = isinstance(A, np.ndarray)
    if not dense:
        A = sp.csr_matrix(A, dtype=np.float64)
        A.sort_indices()
    return A, y, meta, load_s, dense


# ---------------------------------------------------------------------------------------------
# References, cached by key
# ---------------------------------------------------------------------------------------------


def load_refs(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def save_ref(path: Path, key: str, value: dict) -> None:
    from pdsparse.io import atomic_path

    refs = load_refs(path)
    refs[key] = value
    with atomic_path(Path(path)) as tmp:
        tmp.write_text(json.dumps(refs, indent=1, sort_keys=True))


def cached_ref(path: Path, key: str, fresh: bool, compute: Callable[[], dict],
               what: str | None) -> dict:
    """The reference record of ``key`` in the JSON file ``path`` (``compute()`` and kept
    there when absent or ``fresh``), with ``cached`` saying which. With ``what`` (the
    problem, for the message), its relative duality gap must be far below the smallest
    target (<= 1e-9), else RuntimeError."""
    ref = None if fresh else load_refs(path).get(key)
    if ref is not None:
        ref = {**ref, "cached": True}
    else:
        out = compute()
        save_ref(path, key, out)
        ref = {**out, "cached": False}
    if what is not None and not ref["rel_gap"] <= 1e-9:
        raise RuntimeError(f"{what}: reference rel gap {ref['rel_gap']:.2e}")
    return ref


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


def fmt_ratio(r: float) -> str:
    if not np.isfinite(r):
        return ""
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


def machine_line(meta: dict, quiet: str) -> str:
    """Machine, BLAS threads, ``quiet`` (what a quiet run means) or :data:`NOT_QUIET`, load."""
    m = meta["machine"]
    return (f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['mem_gib']:.0f} GiB; single-threaded "
            f"BLAS; {quiet if meta['quiet'] else NOT_QUIET}; load average before/after "
            f"{meta['loadavg_before']} / {meta['loadavg_after']}.")


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


