"""What ``benchmarks/_harness.py`` shares beside the runner, with fake kernels and a fake copt.

Nothing here times anything for real, so the tests hold on a loaded machine. Covered: the
traces the runner's ``"trace"`` solvers record (our kernels between chunks, copt in its
callback: the max_iter whose complete fit returns each evaluated iterate), forwarding of
options to workers, and a missing peer (one line on stderr, exit status 2), also end to end
for every script that imports a peer. The runner's searches and rounds:
tests/test_bench_runner.py.
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
# Traces
# ---------------------------------------------------------------------------------------------


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
    assert int(tr.cap[(tr.rel_subopt <= 1e-3).idxmax()]) == 3  # the first point at each target
    assert int(tr.cap[(tr.rel_subopt <= 1e-1).idxmax()]) == 1


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
# Options forwarded to the workers
# ---------------------------------------------------------------------------------------------


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

