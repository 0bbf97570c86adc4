"""``pdsparse run`` prints a progress line per evaluation (issue 11): a long run on the user's
own data is never silent. ``solve(progress=...)`` is the hook underneath."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest

from pdsparse.cli import main

# [dual_rcd seed 0] epoch 3.00  time 0.012 s  gap 1.23e-05  P 0.6931 [status]
LINE = re.compile(
    r"^\[(?P<solver>\w+) seed (?P<seed>\d+)\] epoch (?P<epoch>[0-9.]+)  "
    r"time (?P<time>[0-9.]+) s  gap (?P<gap>\S+)  P (?P<primal>\S+)(  (?P<status>\w+))?$"
)


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("progress")
    npz, ref = tmp / "tiny.npz", tmp / "ref.parquet"
    for argv in (
        ["prepare", "--dataset", "tiny", "--generator", "worst_case_binary_dual", "--param",
         "d=8", "--param", "n=30", "--param", "alpha=80", "--seed", "1", "--out", npz],
        ["reference", "--data", npz, "--loss", "logistic", "--l2", "1/n", "--rtol", "1e-10",
         "--out", ref],
    ):
        assert main([str(a) for a in argv]) == 0
    return tmp, npz, ref


def run_args(problem, *extra):
    tmp, npz, ref = problem
    return ["run", "--data", str(npz), "--reference", str(ref), "--experiment", "exp",
            "--solver", "dual_rcd", "--max-epochs", "3", "--eval-every", "1",
            "--out", str(tmp / "trace.parquet"), *extra]


def test_a_line_per_evaluation_and_seed(problem, capsys):
    assert main(run_args(problem, "--seed", "0", "1")) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [m for m in map(LINE.match, err) if m]
    trace = pd.read_parquet(problem[0] / "trace.parquet")
    assert len(lines) == len(trace)  # one line per trace row, every seed
    for seed in (0, 1):
        rows = trace[trace["seed"] == seed]
        mine = [m for m in lines if m["seed"] == str(seed)]
        assert [float(m["epoch"]) for m in mine] == pytest.approx(rows["epoch"], abs=5e-3)
        assert [float(m["gap"]) for m in mine] == pytest.approx(rows["gap"], rel=1e-2)
        assert all(m["solver"] == "dual_rcd" for m in mine)
        # the status only on the last line of a seed
        assert [m["status"] for m in mine[:-1]] == [None] * (len(mine) - 1)
        assert mine[-1]["status"] == rows["status"].iloc[-1]
    # the progress lines come before the final summary
    assert err.index(lines[-1].string) < next(i for i, s in enumerate(err) if "seed=1:" in s)


def test_quiet_prints_only_the_summary(problem, capsys):
    assert main(run_args(problem, "--quiet")) == 0
    err = capsys.readouterr().err.splitlines()
    assert not any(LINE.match(s) for s in err)
    assert any("seed=0:" in s for s in err)


def test_lines_are_written_when_stderr_is_a_pipe(problem):
    # not a terminal (a job log, `| tee`): every line still arrives whole (flushed each)
    proc = subprocess.run([sys.executable, "-m", "pdsparse.cli", *run_args(problem)],
                          capture_output=True, text=True, check=True)
    assert sum(bool(LINE.match(s)) for s in proc.stderr.splitlines()) >= 4


def test_solve_calls_progress_with_each_trace_row(data):
    from pdsparse.problem import Problem
    from pdsparse.solvers import TRACE_COLUMNS, solve

    A, b = data
    rows = []
    result = solve(Problem(A, b, "logistic", 0.01), "primal_rcd", max_epochs=4, eval_every=1,
                   tol=0, progress=rows.append)
    assert [list(r) for r in rows] == [TRACE_COLUMNS] * len(result.trace)
    got = pd.DataFrame(rows, columns=TRACE_COLUMNS)
    pd.testing.assert_frame_equal(got, result.trace, check_dtype=False)
