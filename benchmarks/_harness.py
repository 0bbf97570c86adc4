"""The benchmark harness: the timing protocol and what every script records beside it.

One home for what ``peers.py``, ``dgpd_peers.py``, ``pdbfw_peers.py``,
``solve_vs_liblinear.py``, ``dgpd_scaling.py`` and ``pdbfw_table1.py`` share (they had copies
of it), so that each script keeps only its problems, its peers and its own output format:

* the peers: :func:`require_peer` imports one (copt, scikit-learn) or stops with one line on
  stderr saying how to install it (``pip install -e '.[bench]'``) and exit status 2;
* the timing protocol: the wall time of one complete solve, setup included, with
  ``gc.collect()`` outside the clock (:func:`timed`, :func:`time_kernel`, :func:`time_copt`);
  repeats by the house rule (:func:`house_repeats`: median of 5 below 0.05 s, of 3 below 1 s,
  else one run) or interleaved across variants (:func:`interleaved`); the median
  (:class:`Timing`); the first setting of a peer that reaches the target: the smallest
  ``max_iter`` by doubling then bisection (:func:`search_max_iter`), the loosest ``tol`` by
  decades then quarter decades (:func:`search_tol`), or the first evaluated point of a trace
  (:func:`first_reaching`; traces of our kernels, :func:`trace_kernel`, and of copt through
  its callback, :func:`callback_trace`); the timed re-runs at each target
  (:func:`timed_at_targets`, :func:`bench_traced`);
* each data set in a subprocess of its own with single-threaded BLAS, its data prepared in
  another one before (:func:`run_datasets`, :func:`serve_worker`);
* the machine record: machine and library versions (with the git commit from
  :func:`pdsparse.repro.traces.git_commit`), whether the machine was quiet (no snakemake, few cores
  kept busy by other processes: :class:`Watch`), peak and current RSS, the run's metadata
  (:func:`run_record`).

The scripts run as ``python benchmarks/<name>.py``, so this directory is on ``sys.path``;
a script loaded by path (``tests/test_peers_mapping.py``) calls :func:`importable` first.
"""

from __future__ import annotations

import gc
import importlib
import json
import math
import os
import pickle
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "results" / "benchmarks"
DATA_DIR = OUT_DIR / "data"
DEFAULT_MIRROR = Path("/work/shared/datasets")

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
OTHER_MAX = 0.25
"""Quiet: other processes kept fewer cores busy than this, on average, during a measurement."""
NOT_QUIET = "NOT quiet: snakemake or another job ran during part of the measurement"


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
# The timing protocol: one complete solve, setup included
# ---------------------------------------------------------------------------------------------


class Run(NamedTuple):
    """One timed complete solve: wall seconds (setup included), the iterate (a copy taken
    inside the clock), the setup's share (ours: ``Problem`` and ``make_kernel``) and the
    iterations the solver reports (-1: not reported)."""

    seconds: float
    x: np.ndarray
    setup_s: float = math.nan
    nit: int = -1


def timed(fn: Callable, clock: Callable[[], float] = time.perf_counter):
    """(seconds of ``clock``, ``fn()``) of one call; ``gc.collect()`` first, outside the
    clock. ``clock``: wall time by default, ``time.process_time`` for CPU time."""
    gc.collect()
    t0 = clock()
    out = fn()
    return clock() - t0, out


def time_kernel(build: Callable, budget: int) -> Run:
    """One complete solve of our kernel, setup included: ``build()`` (``Problem`` ->
    ``make_kernel``, the setup) -> ``kernel.run(budget)`` -> ``kernel.solution().copy()``."""
    gc.collect()
    t0 = time.perf_counter()
    kernel = build()
    t_setup = time.perf_counter()
    if budget > 0:
        kernel.run(budget)
    x = kernel.solution().copy()
    t1 = time.perf_counter()
    del kernel
    return Run(t1 - t0, x, t_setup - t0)


def our_setup(make_problem: Callable, args: tuple, v, seed: int = 0):
    """(problem, kernel): the setup of one of our solves, ``make_problem(*args)`` and
    ``make_kernel`` of ``v`` (an :class:`Ours`) with its options."""
    from pdsparse.solvers import make_kernel

    prob = make_problem(*args)
    return prob, make_kernel(prob, v.method, seed=seed, options=dict(v.options))


def time_ours(make_problem: Callable, args: tuple, v, budget: int, seed: int = 0) -> Run:
    """One complete solve of ours, setup included (:func:`time_kernel` of :func:`our_setup`)."""
    return time_kernel(lambda: our_setup(make_problem, args, v, seed)[1], budget)


def house_repeats(run: Callable[[], Run], first: Run | None = None) -> list[Run]:
    """Complete timed runs by the house rule: the first (``first`` when it was had already),
    then more up to :func:`repeats_for` its seconds (5 below 0.05 s, 3 below 1 s, else 1)."""
    runs = [first if first is not None else run()]
    while len(runs) < repeats_for(runs[0].seconds):
        runs.append(run())
    return runs


def interleaved(jobs: dict[str, Callable], repeats: int,
                clock: Callable[[], float] = time.perf_counter) -> tuple[dict, dict]:
    """``repeats`` rounds, each running every job once in order (:func:`timed` on ``clock``),
    so that a drift of the machine's load hits all of them alike: ({job: [seconds of each
    round]}, {job: its last output})."""
    times: dict[str, list[float]] = {}
    outs: dict[str, object] = {}
    for _ in range(repeats):
        for key, fn in jobs.items():
            sec, out = timed(fn, clock)
            times.setdefault(key, []).append(sec)
            outs[key] = out
    return times, outs


def medians(times: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in times.items()}


def samples_text(secs) -> str:
    """The timed samples as written in the outputs (``seconds_samples``)."""
    return " ".join(f"{s:.6g}" for s in secs)


@dataclass
class Timing:
    """The timed runs of one setting, summarized: the median of their wall seconds, and P and
    the relative suboptimality of the first run's iterate."""

    runs: list[Run]
    p: float
    rel: float

    @classmethod
    def of(cls, runs: list[Run], evaluate: Callable) -> Timing:
        p, rel = evaluate(runs[0].x)
        return cls(runs, p, rel)

    @property
    def secs(self) -> list[float]:
        return [r.seconds for r in self.runs]

    @property
    def seconds(self) -> float:
        return statistics.median(self.secs)

    @property
    def repeats(self) -> int:
        return len(self.runs)

    @property
    def samples(self) -> str:
        return samples_text(self.secs)

    @property
    def setup_s(self) -> float:
        return statistics.median(r.setup_s for r in self.runs)

    def check(self, p_trace: float, what: str = "trace") -> str:
        """'' when the re-run ended at the traced iterate (same P to 1e-12), else a note."""
        if abs(self.p - p_trace) <= 1e-12 * abs(p_trace):
            return ""
        return f"re-run P {self.p!r} != {what} P {p_trace!r}"


# ---------------------------------------------------------------------------------------------
# The first setting that reaches the target
# ---------------------------------------------------------------------------------------------


def first_reaching(rels, target: float) -> int | None:
    """Position of the first value <= target (a trace's first point at it), else None."""
    hit = np.flatnonzero(np.asarray(rels, dtype=float) <= target)
    return int(hit[0]) if len(hit) else None


def search_max_iter(probe: Callable[[int], dict], tols, max_cap: int, *,
                    bisect_rel: float = 0.03,
                    give_up: Callable[[int, dict], str] | None = None) -> tuple[dict, str]:
    """Probe a peer with growing ``max_iter`` caps, for a peer that exposes no trace.

    ``probe(cap)`` runs one complete fit and returns a record with ``"rel"``, its relative
    suboptimality. Caps double from 1 until the smallest tolerance is reached, ``give_up(cap,
    record)`` gives a reason to stop (the solver stopped by itself, a fit took too long) or
    ``max_cap`` is probed (the last cap is ``max_cap`` itself); then, for each tolerance from
    the largest, the caps around the first probed cap at it are bisected to within
    max(1, ``bisect_rel`` of it) iterations. Returns ({cap: record}, the reason the doubling
    stopped before the smallest tolerance, '' if it did not); :func:`first_cap` reads it.
    """
    runs: dict[int, dict] = {}

    def run(cap: int) -> dict:
        runs[cap] = probe(cap)
        return runs[cap]

    stop = ""
    cap = 1
    while True:
        r = run(cap)
        if r["rel"] <= min(tols):
            break
        stop = give_up(cap, r) if give_up is not None else ""
        if stop:
            break
        if cap >= max_cap:
            stop = f"cap {max_cap} reached"
            break
        cap = min(2 * cap, max_cap)
    for tol in sorted(tols, reverse=True):
        hi = first_cap(runs, tol)
        if hi is None:
            continue
        lo = max([c for c in runs if c < hi], default=0)
        while hi - lo > max(1, int(bisect_rel * hi)):
            mid = (lo + hi) // 2
            if run(mid)["rel"] <= tol:
                hi = mid
            else:
                lo = mid
    return runs, stop


def first_cap(runs: dict[int, dict], tol: float) -> int | None:
    """The smallest probed cap whose fit reached ``tol`` (None: none did)."""
    return min((c for c in runs if runs[c]["rel"] <= tol), default=None)


def search_tol(ok: Callable[[float], bool], decades=range(1, 16),
               quarters=(0.75, 0.5, 0.25)) -> float | None:
    """The loosest ``tol`` of a peer whose fit reaches the target (``ok(tol)``): tol = 1e-1,
    1e-2, ... until one does, then the quarter decades above it. None: no decade does."""
    good = next((k for k in decades if ok(10.0 ** -k)), None)
    if good is None:
        return None
    best = 10.0 ** -good
    for q in quarters:
        t = 10.0 ** -(good - 1 + q)
        if ok(t):
            best = max(best, t)
    return best


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

    t0 = time.perf_counter()
    prob, kernel = build()
    setup = time.perf_counter() - t0
    nnz = prob.nnz
    touched = iters = 0
    ktime = 0.0

    def point():
        te = time.perf_counter()
        x = kernel.solution()
        p, rel = evaluate(x)
        eval_s = time.perf_counter() - te
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
        t = time.perf_counter()
        k_it, k_t = kernel.run(budget)
        ktime += time.perf_counter() - t
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
    t0 = time.perf_counter()

    def callback(loc):
        te = time.perf_counter()
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
        state["eval_s"] += time.perf_counter() - te
        return None if go else False

    res = fit(callback)
    if not state["stop"]:
        state["stop"] = f"copt stopped by itself after {int(res.nit)} iterations"
        x = np.asarray(res.x)
        pk, rk = evaluate(x)
        rows.append((end_index(state["k"], res), time.perf_counter() - t0 - state["eval_s"],
                     pk, rk, int(np.count_nonzero(x))))
    tr = pd.DataFrame(rows, columns=CALLBACK_COLUMNS)
    tr = tr[tr.cap >= 0].drop_duplicates("cap", keep="first").reset_index(drop=True)
    return tr, state["stop"]


def timed_at_targets(trace, targets, budget_column: str, run: Callable[[int], Run],
                     evaluate: Callable) -> Iterator[tuple]:
    """For each target: (target, the first trace row at it or None, budget, :class:`Timing` of
    the complete re-runs with that row's budget or None). The re-runs follow the house rule and
    are made once per budget (several targets may share the first row that reaches them)."""
    done: dict[int, Timing] = {}
    for target in targets:
        i = first_reaching(trace.rel_subopt, target)
        if i is None:
            yield target, None, None, None
            continue
        r = trace.iloc[i]
        k = int(r[budget_column])
        if k not in done:
            done[k] = Timing.of(house_repeats(lambda k=k: run(k)), evaluate)
        yield target, r, k, done[k]


class Relative:
    """``rel(x)``: P(x) and its relative suboptimality (P - P*)/P*, evaluated with
    :func:`pdsparse.objective.primal` on ``self.prob`` (outside every timer)."""

    prob: object
    p_star: float

    def rel(self, x: np.ndarray) -> tuple[float, float]:
        from pdsparse import objective

        p = objective.primal(self.prob, x)
        return p, (p - self.p_star) / self.p_star


@dataclass
class Case(Relative):
    """One problem of a benchmark (a data set at one setting): how to evaluate an iterate,
    what its rows and kept traces are made of, and where they go.

    ``head``: the columns that name the problem (first in every row and trace record);
    ``tail``: the columns after the solver's (P*, its certificate, ...); ``args``: what the
    script's timing functions take before the solver (A, b and the parameters)."""

    head: dict
    tail: dict
    args: tuple
    prob: object  # evaluation only (outside every timer)
    p_star: float
    opts: dict
    rows: list = field(default_factory=list)
    traces: list = field(default_factory=list)

    def row(self, target, solver, config, ours, seconds, **extra) -> None:
        self.rows.append({**self.head, "target": target, "solver": solver, "config": config,
                          "ours": ours, "seconds": seconds, **extra, **self.tail})

    def keep_trace(self, solver, config, setup_s, stop, trace) -> None:
        self.traces.append({**self.head, "solver": solver, "config": config,
                            "setup_s": setup_s, "stop": stop,
                            "trace": trace.to_dict(orient="list")})


def bench_traced(case: Case, trace, *, key: str, solver: str, config: str, ours: bool,
                 setup: float, stop: str, run: Callable[[int], Run], iterations: Callable,
                 extra: Callable, log: Callable) -> None:
    """The rows of one traced solver (ours: :func:`trace_kernel`; copt: :func:`callback_trace`)
    at each target of ``case.opts["targets"]``: the median of the complete timed re-runs
    ``run(budget)`` with the budget of the trace's first row at it (ours: the work
    ``touched``; copt: ``cap``, a max_iter), or, when the trace stopped first, the time it
    ran as a lower bound (``setup`` included: NaN for copt, whose setup is inside its
    iterations). ``iterations(row, timing)`` and ``extra(row, budget)`` (more columns) are the
    solver's. The trace is kept in ``case.traces``."""
    budget_column, time_column, what = (("touched", "kernel_s", "trace") if ours else
                                        ("cap", "net_s", "callback trace"))
    last = trace.iloc[-1]
    if ours:
        log(f"  {key}: trace {int(last.iterations)} iterations, kernel {last.kernel_s:.3g} s, "
            f"setup {setup:.3g} s, rel {last.rel_subopt:.2e} ({stop})")
    else:
        log(f"  {key}: trace to max_iter {int(last.cap)}, {last.net_s:.3g} s, rel "
            f"{last.rel_subopt:.2e} ({stop})")
    case.keep_trace(solver, config, setup if ours else 0.0, stop, trace)
    for target, r, k, t in timed_at_targets(trace, case.opts["targets"], budget_column, run,
                                            case.rel):
        if r is None:
            case.row(target, solver, config, ours, np.nan, repeats=0, reached=False,
                     lower_bound_s=float(np.nan_to_num(setup) + last[time_column]),
                     seconds_samples="", setup_s=setup, budget=np.nan,
                     iterations=iterations(last, None), trace_s=float(last[time_column]),
                     p_reached=float(last.primal), rel_subopt=float(last.rel_subopt),
                     nnz_x=int(last.nnz_x), **extra(last, None),
                     how=f"{what} stopped before the target: {stop}", note="")
            continue
        case.row(target, solver, config, ours, t.seconds, repeats=t.repeats,
                 reached=bool(t.rel <= target), lower_bound_s=np.nan, seconds_samples=t.samples,
                 setup_s=t.setup_s, budget=float(k), iterations=iterations(r, t),
                 trace_s=float(r[time_column]), p_reached=t.p, rel_subopt=t.rel,
                 nnz_x=int(r.nnz_x), **extra(r, k), how=how_traced(ours, t.repeats, k),
                 note=t.check(r.primal, what.split()[0]))


def how_traced(ours: bool, repeats: int, budget: int) -> str:
    """How a row of :func:`bench_traced` was measured (its ``how`` column)."""
    if ours:
        return ("trace -> smallest evaluated work T at the target; median of "
                f"{repeats} complete timed re-runs Problem->make_kernel->run(T)->x")
    return (f"callback trace -> smallest max_iter at the target; median of {repeats} complete "
            f"fits (tol={PEER_TOL:g}, max_iter={budget})")


def measure(cases, ours, peers, bench_ours: Callable, bench_peer: Callable, mem: dict,
            kept: str = "traces") -> tuple[list, list]:
    """Every solver of ours, then every peer, on each problem of a data set; ``cases``
    yields (tag, case). The peak RSS after each group goes in ``mem``
    (``after_ours_<tag>_maxrss_mib``, ``after_peers_<tag>_maxrss_mib``). Returns the rows and
    what the cases kept beside them (their attribute ``kept``)."""
    rows, traces = [], []
    for tag, case in cases:
        for v in ours:
            bench_ours(case, v)
        mem[f"after_ours_{tag}_maxrss_mib"] = maxrss_mib()
        for p in peers:
            bench_peer(case, p)
        mem[f"after_peers_{tag}_maxrss_mib"] = maxrss_mib()
        rows += case.rows
        traces += getattr(case, kept)
        del case
        gc.collect()
    return rows, traces


@dataclass(frozen=True)
class Ours:
    """One of our solvers: a method of ``pdsparse.solvers`` with its options."""

    method: str
    options: tuple = ()

    @property
    def name(self) -> str:
        return self.method

    @property
    def config(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.options) or "default"

    @property
    def key(self) -> str:
        return f"{self.method}[{self.config}]"


def solve_reference(prob, rtol: float, max_seconds: float) -> tuple:
    """(reference, record): :func:`pdsparse.reference.reference_solution` and the record kept
    of it (p_star, rel_gap, method, seconds)."""
    from pdsparse.reference import reference_solution

    t = time.perf_counter()
    ref = reference_solution(prob, rtol=rtol, max_seconds=max_seconds)
    return ref, {"p_star": float(ref.p_star), "rel_gap": float(ref.rel_gap),
                 "method": ref.method, "seconds": time.perf_counter() - t}


def warm_up(ours, time_ours: Callable, peers=(), time_peer: Callable | None = None, *,
            n: int = 60, dense: bool = False) -> None:
    """First calls (imports, first touch of code) of every solver on a tiny problem, outside
    every timer: ``time_ours(A, b, v, budget)``, ``time_peer(A, b, p, max_iter)`` (and on the
    dense array when ``dense``)."""
    from pdsparse.data.synthetic import zipf_bow

    A, b = zipf_bow(n, 40, 5, 1.0, 1)
    for v in ours:
        time_ours(A, b, v, 5 * A.nnz)
    for p in peers:
        time_peer(A, b, p, 3)
        if dense:
            time_peer(A.toarray(), b, p, 3)


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


def rows_frame(results: list[dict]):
    """The rows of every data set's worker, one frame (exit when every data set was
    skipped)."""
    import pandas as pd

    df = pd.DataFrame([r for w in results if "rows" in w for r in w["rows"]])
    if df.empty:
        raise SystemExit("no results (every data set was skipped)")
    return df


def worker_records(results: list[dict], drop=("rows", "traces")) -> list[dict]:
    """What the metadata keeps of each data set's worker (its rows and traces go elsewhere)."""
    return [{k: v for k, v in r.items() if k not in drop} for r in results]


def cells_of(g, present: list[str], cell: Callable) -> list[str]:
    """The table cells of one row group ``g`` (one frame row per solver key, column ``key``)
    in the order ``present``: ``cell(row)``, bold for the fastest that reached the target,
    empty where a solver has no row."""
    fastest = g.seconds[g.reached].min() if g.reached.any() else np.nan
    cells = []
    for k in present:
        r = g[g.key == k]
        if r.empty:
            cells.append("")
            continue
        r = r.iloc[0]
        c = cell(r)
        cells.append(f"**{c}**" if r.reached and r.seconds == fastest else c)
    return cells


def log_total(log: Callable, meta: dict) -> None:
    """The closing line: the run's total seconds (and whether it was quiet)."""
    quiet = f"; quiet: {meta['quiet']}" if "quiet" in meta else ""
    log(f"total runtime {meta['total_seconds']:.0f} s{quiet}")


def add_ratios(df, keys: list[str], against_ours: bool):
    """``ratio`` (and ``ratio_lower_bound``, of the lower bounds): seconds over the fastest of
    ours (``against_ours``) or of the peers in each group of ``keys``."""
    import pandas as pd

    ratio, lower = [], []
    for _, g in df.groupby(keys, sort=False):
        best = g.seconds[g.ours if against_ours else ~g.ours].min()
        ratio.append(g.seconds / best)
        lower.append(g.lower_bound_s / best)
    df["ratio"] = pd.concat(ratio)
    df["ratio_lower_bound"] = pd.concat(lower)
    return df


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


def worker_line(w: dict) -> str:
    """Data load, peak RSS and seconds of one data set's worker (for the markdown)."""
    m = w["memory"]
    return (f"Data load {w['load_s']:.1f} s ({w['prep']['note']}); peak RSS of the worker "
            f"{m['peak_rss_mib']:,.0f} MiB (after loading {m['after_load_rss_mib']:,.0f} MiB); "
            f"worker {w['seconds']:.0f} s")


def write_outputs(out_dir: Path, stem: str, df, md: str, meta: dict) -> None:
    """``<stem>.csv``, ``<stem>.md`` and ``<stem>.json`` (metadata) in ``out_dir``, atomically;
    the markdown printed."""
    from pdsparse.io import atomic_path

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_dir / f"{stem}.csv") as tmp:
        df.to_csv(tmp, index=False, na_rep="")
    with atomic_path(out_dir / f"{stem}.md") as tmp:
        tmp.write_text(md)
    with atomic_path(out_dir / f"{stem}.json") as tmp:
        tmp.write_text(json.dumps(meta, indent=1, default=float))
    print(md)


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


def time_copt(fit: Callable) -> Run:
    """One complete copt fit ``fit()``: wall seconds, its x (copied inside the clock) and
    copt's ``nit``."""

    def call():
        res = fit()
        return np.asarray(res.x).copy(), int(res.nit)

    s, (x, nit) = timed(call)
    return Run(s, x, math.nan, nit)
