"""``benchmarks/dgpd_peers.py`` on the runner: its copt solver (a complete fit with a traced
``max_iter`` ends at the iterate the callback saw), its verdict of our fastest against the
best peer, and one small run end to end (worker subprocesses, the long Parquet, the report).
No timings are asserted."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import BENCHMARKS, bench_script


@pytest.fixture(scope="module")
def dp():
    pytest.importorskip("copt")
    with bench_script("dgpd_peers.py") as mod:
        yield mod


def test_copt_rerun_at_a_traced_max_iter_ends_at_the_traced_iterate(dp):
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_solution

    A, b = zipf_bow(80, 60, 6, 1.0, 3)
    prob = Problem(A, b, loss=dp.LOSS, l2=0.5 / 80, l1=0.05 / 80)
    ref = reference_solution(prob, rtol=1e-10)
    cell = dp.Cell({"dataset": "zipf"}, prob, float(ref.p_star), float(ref.rel_gap))
    for accelerated in (True, False):
        s = dp.Copt(accelerated)
        s.set_problem(prob)
        points, stop = s.trace(cell.subopt, 1e-6, cap=30.0)
        assert stop == "target" and points[-1][1] <= 1e-6
        for budget, sub, _ in points[:: max(1, len(points) // 5)] + points[-1:]:
            s.run(budget)
            assert cell.subopt(s.result) == pytest.approx(sub, rel=1e-9, abs=1e-15)
            assert s.details()["nit"] <= budget


def per(*rows):
    """Rows of ``bench.report.times`` of one cell x target: (solver, ours, seconds, why)."""
    out = []
    for name, ours, secs, why in rows:
        ok = secs < math.inf
        out.append({"solver": name, "ours": ours, "seconds": secs,
                    "fastest": 0.9 * secs if ok else math.nan,
                    "slowest": 1.1 * secs if ok else math.nan, "budget": 7.0, "why": why})
    return pd.DataFrame(out)


CAPPED = "not reached: trace stopped at subopt 0.1: cap 10 s (40 iterations)"


def test_verdict_of_our_fastest_against_the_best_peer(dp):
    r, v, why = dp.verdict(per(("a", True, 2.0, ""), ("b", True, 1.0, ""),
                               ("p", False, 5.0, ""), ("q", False, 3.0, "")), cap=10.0)
    assert (r["ours"], r["peer"], v, why) == ("b", "q", "ahead", "")
    assert r["ratio"] == pytest.approx(1 / 3)
    r, v, why = dp.verdict(per(("b", True, 1.0, ""), ("q", False, 0.5, "")), cap=10.0)
    assert v == "behind" and why.startswith("q 0.5 s (max_iter 7) vs our fastest b")
    _, v, _ = dp.verdict(per(("b", True, 1.0, ""), ("q", False, 1.05, "")), cap=10.0)
    assert v == "inconclusive"  # the ranges overlap
    # no peer reached the target: ahead, unless one stopped at a cap our fastest passed
    _, v, _ = dp.verdict(per(("b", True, 1.0, ""), ("q", False, math.inf, CAPPED)), cap=10.0)
    assert v == "ahead"
    _, v, why = dp.verdict(per(("b", True, 12.0, ""), ("q", False, math.inf, CAPPED)), cap=10.0)
    assert v == "inconclusive" and "undecided" in why
    _, v, why = dp.verdict(per(("b", True, math.inf, CAPPED), ("q", False, 3.0, "")), cap=10.0)
    assert v == "behind" and why.startswith("no solver of ours")
    _, v, _ = dp.verdict(per(("b", True, math.inf, CAPPED), ("q", False, math.inf, CAPPED)),
                         cap=10.0)
    assert v == "n/a"


def test_dgpd_peers_small_run_writes_the_long_frame_and_the_report(tmp_path):
    pytest.importorskip("copt")
    out, data = tmp_path / "out", tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "dgpd_peers.py"), "--datasets", "digits-rb",
         "--settings", "0.1,1.0", "--targets", "1e-3", "--repeats", "2", "--cap", "20",
         "--solvers", "dual_rcd,copt_pg", "--data-dir", str(data), "--out-dir", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} == {"dgpd_peers.parquet", "dgpd_peers.json",
                                               "dgpd_peers.md"}
    frame = pd.read_parquet(out / "dgpd_peers.parquet")
    assert set(frame.solver) == {dp_name := "dual_rcd:sampling=uniform:dual_step=newton",
                                 "copt_pg"}
    assert set(frame.sampling) == {"trace"}
    assert set(frame[frame.status == "search"].solver) == set(frame.solver)
    timed = frame[frame["round"] >= 0]
    assert len(timed) == 2 * 2 and (timed.status == "reached").all()
    assert (timed[timed.solver == "copt_pg"].details.map(json.loads)
            .map(lambda d: d["nit"] >= 1)).all()
    assert np.all(frame.p_star > 0)
    md = (out / "dgpd_peers.md").read_text()
    assert md.count("| digits-rb | 0.1 | 1") == 2  # the report's table, ours' fastest
    assert f"| {dp_name} |" in md and "## Data sets" in md
    meta = json.loads((out / "dgpd_peers.json").read_text())
    assert meta["targets"] == [1e-3] and meta["repeats"] == 2
    assert meta["datasets"][0]["refs"][0]["rel_gap"] <= 1e-9
    assert (data / "dgpd_peers_digits-rb.pkl").is_file()  # kept for --reuse
