"""The ``slow`` marker (issue 29 item 13): ``pytest -m "not slow"`` leaves out the
whole-workflow runs, live SLURM and the report in a browser, and nothing else of the files
that hold them; plain ``pytest`` (``.ci/run``) still collects everything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FILES = ["tests/test_workflow.py", "tests/test_slurm.py", "tests/test_report.py"]
SLOW = {"test_tiny_workflow_end_to_end",
        "test_reruns_never_lose_verified_data_nor_keep_stale_items",
        "test_plain_rerun_after_ctrl_c_completes"}


def collected(*args: str) -> set[str]:
    res = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "--strict-markers", "-p", "no:cacheprovider", *args, *FILES],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return {line.split("::")[1].split("[")[0] for line in res.stdout.splitlines()
            if "::" in line}


def test_not_slow_leaves_out_exactly_the_slow_tests():
    everything = collected()
    quick = collected("-m", "not slow")
    assert SLOW <= everything and not SLOW & quick
    assert {"test_lint_clean", "test_dry_run_default_config_plans_everything_offline"} <= quick
    left_out = everything - quick
    slurm_and_report = {n for n in left_out if n not in SLOW}
    assert slurm_and_report  # every test of test_slurm.py and test_report.py
    assert left_out == SLOW | slurm_and_report


@pytest.mark.xdist_group("suite-markers")
def test_a_group_stays_on_one_worker(request):
    """Under ``pytest -n --dist loadgroup`` (pyproject's addopts) the tests of one
    ``xdist_group`` share a worker, so a costly session fixture (the tiny workflow run, the
    SLURM cluster) is built once. pytest-xdist 3.8 marks the group in the node id, which
    pytest 9.2 no longer lets it change (pytest-dev/pytest-xdist#1386): the groups were
    silently spread over the workers, and the tiny run, its report and the cluster were each
    built twice. The [test] extra pins pytest below 9.2 until xdist has the fix."""
    if not request.config.getoption("loadgroup", default=False):
        pytest.skip("not a pytest-xdist worker with --dist loadgroup")
    assert request.node.nodeid.endswith("@suite-markers"), request.node.nodeid
