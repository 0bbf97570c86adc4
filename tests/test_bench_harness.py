"""The shared timing protocol of ``benchmarks/_harness.py``, with fake solvers and fake peers.

Nothing here times anything for real: the fakes report the seconds they are told to, and the
accuracy of a fake peer is a known function of its ``max_iter`` or ``tol``, so the tests hold
on a loaded machine. Covered: the search for the first setting that reaches a target (caps by
doubling and bisection, tolerances by decades, the first point of a trace, copt's callback
trace), the timed re-runs at each target (house repeats, once per budget, the median), the
interleaved order of repeats, and a missing peer (one line on stderr, exit status 2), also
end to end for every script that imports a peer.
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def h():
    name = "pdsparse_bench_harness"
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "_harness.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(name, None)


# ---------------------------------------------------------------------------------------------
# The first setting that reaches the target
# ---------------------------------------------------------------------------------------------


class FakePeer:
    """A peer whose relative suboptimality after ``max_iter`` iterations is 10 / max_iter:
    it reaches 1e-1 from 100 iterations on, 1e-2 from 1000 on."""

    def __init__(self, stops_at: int | None = None):
        self.probed: list[int] = []
        self.stops_at = stops_at  # stops by itself after this many iterations

    def probe(self, cap: int) -> dict:
        self.probed.append(cap)
        iters = cap if self.stops_at is None else min(cap, self.stops_at)
        return {"rel": 10.0 / iters, "iters": iters, "secs": [0.001]}


def test_search_max_iter_finds_the_first_cap_exactly(h):
    peer = FakePeer()
    runs, stop = h.search_max_iter(peer.probe, [1e-1, 1e-2], max_cap=10**6, bisect_rel=0.0)
    assert stop == ""
    assert h.first_cap(runs, 1e-1) == 100
    assert h.first_cap(runs, 1e-2) == 1000
    assert h.first_cap(runs, 1e-3) is None
    # doubling from 1 up to the first cap at the smallest tolerance, then bisection
    assert peer.probed[:11] == [2**k for k in range(11)]
    assert len(peer.probed) == len(set(peer.probed))  # no cap is fitted twice


def test_search_max_iter_bisects_to_within_its_tolerance(h):
    runs, _ = h.search_max_iter(FakePeer().probe, [1e-2], max_cap=10**6, bisect_rel=0.03)
    cap = h.first_cap(runs, 1e-2)
    assert 1000 <= cap <= 1000 + max(1, int(0.03 * cap))
    below = [c for c in runs if c < cap]
    assert all(runs[c]["rel"] > 1e-2 for c in below)  # every smaller probe missed it


def test_search_max_iter_stops_at_max_cap_and_when_the_peer_gives_up(h):
    peer = FakePeer()
    runs, stop = h.search_max_iter(peer.probe, [1e-1, 1e-2], max_cap=300, bisect_rel=0.0)
    assert stop == "cap 300 reached"
    assert peer.probed[:10] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]  # the last: max_cap
    assert h.first_cap(runs, 1e-2) is None and h.first_cap(runs, 1e-1) == 100

    quitter = FakePeer(stops_at=50)

    def give_up(cap, r):
        return f"stopped by itself after {r['iters']}" if r["iters"] < cap else ""

    runs, stop = h.search_max_iter(quitter.probe, [1e-2], max_cap=10**6, give_up=give_up)
    assert stop == "stopped by itself after 50"
    assert max(runs) == 64 and h.first_cap(runs, 1e-2) is None


def test_search_tol_finds_the_loosest_tolerance(h):
    asked = []

    def ok(tol):  # a peer whose fit reaches the target for tol <= 3e-4
        asked.append(tol)
        return tol <= 3e-4

    assert h.search_tol(ok) == pytest.approx(10.0 ** -3.75)
    assert asked[:4] == pytest.approx([1e-1, 1e-2, 1e-3, 1e-4])  # decades until one works
    assert h.search_tol(lambda tol: False) is None
    assert h.search_tol(lambda tol: True) == pytest.approx(10.0 ** -0.25)


def test_first_reaching(h):
    rels = [1.0, 0.5, 0.01, 0.001, 0.02]
    assert h.first_reaching(rels, 0.01) == 2
    assert h.first_reaching(rels, 0.5) == 1
    assert h.first_reaching(rels, 1e-9) is None


def test_callback_trace_gives_the_first_max_iter_at_the_target(h):
    """A fake copt: the k-th callback sees the iterate that max_iter = k - 1 returns (x holds
    that number), and rel(max_iter = m) = 10^-m."""

    def fit(callback):
        for k in range(10**6):
            if callback({"x": np.array([k - 1.0])}) is False:
                return SimpleNamespace(x=np.array([k - 1.0]), nit=k)
        raise AssertionError("the trace did not stop")

    def evaluate(x):
        rel = 10.0 ** -x[0]
        return 1.0 + rel, rel

    tr, stop = h.callback_trace(fit, evaluate, 1e-3, cap=math.inf)
    assert stop == "target"
    assert list(tr.columns) == h.CALLBACK_COLUMNS
    assert list(tr.cap) == [0, 1, 2, 3]  # max_iter = -1 (call 0) is dropped
    assert int(tr.cap[h.first_reaching(tr.rel_subopt, 1e-3)]) == 3
    assert int(tr.cap[h.first_reaching(tr.rel_subopt, 1e-1)]) == 1


def test_callback_trace_when_copt_stops_by_itself(h):
    def fit(callback):
        for k in range(5):
            callback({"x": np.array([k - 1.0])})
        return SimpleNamespace(x=np.array([4.0]), nit=5)

    tr, stop = h.callback_trace(fit, lambda x: (1.0, 1.0 / (2 + x[0])), 1e-6, cap=math.inf)
    assert stop == "copt stopped by itself after 5 iterations"
    assert list(tr.cap) == [0, 1, 2, 3, 4]  # the final iterate at max_iter = calls - 1


class FakeKernel:
    """Touches exactly its budget; its iterate is the work done, rel = 1 / (1 + work)."""

    def __init__(self):
        self.touched = 0
        self.budgets = []

    def run(self, budget):
        self.budgets.append(budget)
        self.touched += budget
        return budget, budget

    def solution(self):
        return np.array([float(self.touched)])


def test_trace_kernel_evaluates_every_1_64_epoch_then_2_percent(h):
    kernel = FakeKernel()
    prob = SimpleNamespace(nnz=6400)
    tr, setup, stop = h.trace_kernel(lambda: (prob, kernel), lambda x: (0.0, 1.0 / (1 + x[0])),
                                     1e-4, time_frac=0.0)
    assert stop == "target" and setup >= 0.0
    assert list(tr.columns) == h.TRACE_COLUMNS
    assert tr.rel_subopt.iloc[-1] <= 1e-4 < tr.rel_subopt.iloc[-2]
    for t, b in zip(tr.touched[:-1], kernel.budgets, strict=True):
        assert max(100, 0.02 * t) <= b <= max(100, 0.02 * t) + 1  # 1/64 epoch = 100 units
    tr2, _, stop2 = h.trace_kernel(lambda: (prob, FakeKernel()),
                                   lambda x: (0.0, 1.0 / (1 + x[0])), 1e-9, max_epochs=2.0,
                                   time_frac=0.0)
    assert stop2.startswith("limit") and tr2.touched.iloc[-1] >= 2 * 6400


# ---------------------------------------------------------------------------------------------
# Timed runs: house repeats, median, interleaving
# ---------------------------------------------------------------------------------------------


def fake_runs(h, seconds):
    """run() returning the given seconds in turn (and its call number as the iterate)."""
    it = iter(seconds)
    calls = []

    def run():
        calls.append(len(calls))
        return h.Run(next(it), np.array([float(len(calls))]))

    return run, calls


@pytest.mark.parametrize(("first", "n"), [(0.01, 5), (0.049, 5), (0.05, 3), (0.5, 3), (1.0, 1),
                                          (30.0, 1)])
def test_house_repeats_follow_the_first_run(h, first, n):
    run, calls = fake_runs(h, [first] + [9.0] * 10)
    runs = h.house_repeats(run)
    assert len(runs) == n == len(calls)
    run, calls = fake_runs(h, [9.0] * 10)
    runs = h.house_repeats(run, first=h.Run(first, np.zeros(1)))  # first run already had
    assert len(runs) == n and len(calls) == n - 1 and runs[0].seconds == first


def test_timing_is_the_median_of_the_runs(h):
    runs = [h.Run(s, np.array([1.0]), setup_s=su) for s, su in ((0.03, 0.3), (0.01, 0.1),
                                                                (0.02, 0.2))]
    t = h.Timing.of(runs, lambda x: (2.0, 0.5))
    assert t.seconds == 0.02 and t.setup_s == 0.2 and t.repeats == 3
    assert t.samples == "0.03 0.01 0.02"
    assert (t.p, t.rel) == (2.0, 0.5)
    assert t.check(2.0) == ""
    assert t.check(2.1, "callback") == "re-run P 2.0 != callback P 2.1"
    assert math.isnan(h.Timing.of([h.Run(1.0, np.zeros(1))], lambda x: (1, 1)).setup_s)


def test_timed_at_targets_reruns_the_first_budget_at_each_target_once(h):
    trace = pd.DataFrame({"touched": [0, 10, 20, 40], "rel_subopt": [1.0, 0.05, 1e-3, 1e-7]})
    budgets = []

    def run(k):
        budgets.append(k)
        return h.Run(0.5, np.array([float(k)]))  # below 1 s: 3 runs

    out = list(h.timed_at_targets(trace, [1e-1, 1e-2, 1e-3, 1e-9], "touched", run,
                                  lambda x: (x[0], 1.0 / (1 + x[0]))))
    assert [(tgt, k) for tgt, _r, k, _t in out] == [(1e-1, 10), (1e-2, 20), (1e-3, 20),
                                                  (1e-9, None)]
    assert budgets == [10] * 3 + [20] * 3  # 1e-2 and 1e-3 share the row of 20
    assert out[1][3] is out[2][3]
    assert out[3][1] is None and out[3][3] is None
    assert out[0][3].seconds == 0.5 and out[0][3].p == 10.0


def test_interleaved_runs_every_job_once_per_round(h):
    order = []
    jobs = {name: (lambda name=name: order.append(name) or name.upper())
            for name in ("a", "b", "c")}
    times, outs = h.interleaved(jobs, 3)
    assert order == ["a", "b", "c"] * 3
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3, "c": 3}
    assert outs == {"a": "A", "b": "B", "c": "C"}
    assert h.medians({"a": [3.0, 1.0, 2.0]}) == {"a": 2.0}


def test_pass_on_forwards_what_is_set(h):
    assert h.pass_on((("--cap", 10.0), ("--mirror", None), ("--targets", "1e-3")),
                     [("--fresh-refs", False), ("--quick", True)]) == [
        "--cap", "10.0", "--targets", "1e-3", "--quick"]


# ---------------------------------------------------------------------------------------------
# A missing peer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("module", "package"), [("copt", "copt"), ("sklearn", "scikit-learn")])
def test_require_peer_missing_is_one_line_and_exit_2(h, monkeypatch, capsys, module, package):
    monkeypatch.setitem(sys.modules, module, None)  # import raises ModuleNotFoundError
    with pytest.raises(SystemExit) as exc:
        h.require_peer(module, "dgpd_peers.py")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err == f"dgpd_peers.py: {package} is not installed; pip install -e '.[bench]'\n"


def test_require_peer_present_returns_the_module(h):
    assert h.require_peer("json").dumps([1]) == "[1]"


def test_require_peer_broken_dependency(h, monkeypatch, capsys):
    def broken(name):
        raise ModuleNotFoundError("No module named 'numba'", name="numba")

    monkeypatch.setattr(h.importlib, "import_module", broken)
    with pytest.raises(SystemExit) as exc:
        h.require_peer("copt", "x.py")
    assert exc.value.code == 2
    assert capsys.readouterr().err == ("x.py: copt cannot be imported (No module named 'numba'); "
                                       "pip install -e '.[bench]'\n")


@pytest.mark.parametrize(("script", "module", "package"), [
    ("dgpd_peers.py", "copt", "copt"),
    ("pdbfw_peers.py", "copt", "copt"),
    ("peers.py", "sklearn", "scikit-learn"),
    ("solve_vs_liblinear.py", "sklearn", "scikit-learn"),
])
def test_scripts_stop_on_a_missing_peer(tmp_path, script, module, package):
    """Each script that imports a peer, run as ``python benchmarks/<script>`` with the peer
    hidden (a ``sitecustomize`` sets ``sys.modules[peer] = None``): one line, exit status 2,
    before any work (nothing is written to the output directory)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"import sys\nsys.modules[{module!r}] = None\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--out-dir",
                           str(out)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(site)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"{script}: {package} is not installed; pip install -e '.[bench]'\n"
    assert proc.stdout == ""
    assert list(out.iterdir()) == []

