"""``benchmarks/pdbfw_peers.py`` on the runner: its copt solvers and ours on the l1 ball (a
complete run at a traced budget ends at the traced iterate), its checks (our fastest against
every copt method, each of ours against its counterparts), and its report drawn from a small
race. No timings are asserted."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest import bench_script


@pytest.fixture(scope="module")
def pp():
    pytest.importorskip("copt")
    with bench_script("pdbfw_peers.py") as mod:
        yield mod


@pytest.fixture(scope="module")
def cell(pp):
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.reference import reference_solution

    A, b = zipf_bow(80, 60, 6, 1.0, 3)
    prob = pp.make_problem(A, b, 1.0, 10.0 / 80)
    ref = reference_solution(prob, rtol=1e-10)
    assert ref.rel_gap <= 1e-9
    return pp.Cell({"dataset": "zipf", "radius_kind": "config", "radius": "1"}, prob,
                   float(ref.p_star), float(ref.rel_gap))


@pytest.mark.parametrize("name", ["copt_apg", "copt_pg", "copt_fw", "copt_pfw"])
def test_copt_rerun_at_a_traced_max_iter_ends_at_the_traced_iterate(pp, cell, name):
    s = pp.Copt(name)
    assert s.supports(cell.problem) == ""
    s.set_problem(cell.problem)
    points, stop = s.trace(cell.subopt, 1e-4, cap=20.0)
    assert points and set(s.work) == {p[0] for p in points}
    for budget, sub, _ in points[:: max(1, len(points) // 6)] + points[-1:]:
        s.run(budget)
        assert cell.subopt(s.result) == pytest.approx(sub, rel=1e-9, abs=1e-15), (budget, stop)


def test_ours_on_the_ball_rebuilt_from_the_rows_ends_at_the_traced_iterate(pp, cell):
    dd = pp.DataDef("zipf", "zipf", {}, "", options=(("pdbfw", (("delta", "x10"),)),))
    ours = pp.ours_solvers((("pdbfw", (("delta", "x100"),)), ("acc_pg", ()), ("nope", ())), dd)
    assert [s.name for s in ours] == ["pdbfw", "acc_pg"]  # an unknown method is left out
    assert ours[0].options == {"delta": "x10"}  # the data set's override
    for s in ours:
        s.set_problem(cell.problem)
        assert s.build()[0].penalty == cell.problem.penalty  # the ball and mu rebuilt
        points, stop = s.trace(cell.subopt, 1e-6, cap=20.0)
        assert stop == "target"
        s.run(points[-1][0])
        assert cell.subopt(s.result) == pytest.approx(points[-1][1], rel=1e-9, abs=1e-15)
        assert len(s.setups) == 1 and s.work[points[-1][0]] >= 1


def row(solver, ours, seconds, *, spread=0.05, why="", lower=math.nan, it=10):
    ok = seconds < math.inf
    return {"dataset": "d", "radius_kind": "config", "radius": "1", "target": 1e-4,
            "solver": solver, "method": solver.split(":")[0], "ours": ours,
            "seconds": seconds, "fastest": seconds * (1 - spread) if ok else math.nan,
            "slowest": seconds * (1 + spread) if ok else math.nan, "why": why,
            "lower_s": lower, "iterations": it, "setup_s": 0.001 if ours else math.nan,
            "subopt": 1e-5 if ok else 1e-3, "budget": 1.0}


def test_checks_of_one_row(pp):
    capped = "not reached: trace stopped at subopt 0.001: cap 10 s"
    g = pd.DataFrame([row("acc_pg", True, 1.0), row("fw", True, 5.0),
                      row("copt_apg", False, 2.0), row("copt_pg", False, 1.01),
                      row("copt_fw", False, math.inf, why=capped, lower=3.0),
                      row("copt_pfw", False, math.inf, why=capped, lower=10.0)])
    v = pp.verdicts(g)
    assert v["acc_pg vs copt_apg"][0] == "ahead"
    assert v["acc_pg vs copt_pg"][0] == "inconclusive"  # the ranges overlap
    assert "iterations" in v["acc_pg vs copt_pg"][1]
    assert v["fw vs copt_fw"][0] == "inconclusive"  # copt_fw stopped at the cap at 3 s < 5 s
    assert v["fw vs copt_pfw"][0] == "ahead"
    assert v["fastest"][0] == "inconclusive"
    g.loc[g.solver == "copt_pg", ["seconds", "fastest", "slowest"]] = [0.5, 0.49, 0.51]
    v = pp.verdicts(g)
    assert v["fastest"][0] == "behind" and v["fastest"][1].startswith("acc_pg 1 s")
    none = pd.DataFrame([row("fw", True, math.inf, why=capped, lower=10.0),
                         row("copt_fw", False, math.inf, why=capped, lower=10.0)])
    v = pp.verdicts(none)
    assert v["fastest"][0] == "n/a" and v["fw vs copt_fw"] == ("n/a", "")


def test_report_drawn_from_a_small_race(pp, cell):
    solvers = [*pp.ours_solvers((("acc_pg", ()), ("fw", ())), pp.DataDef("z", "z", {}, "")),
               pp.Copt("copt_apg"), pp.Copt("copt_fw")]
    from bench.runner import race

    frame = pd.DataFrame(race(cell, solvers, [1e-2, 1e-4], repeats=2, cap=2.0))
    assert set(frame.solver) == {"acc_pg", "fw", "copt_apg", "copt_fw"}
    work = [{**cell.labels, "solver": s.name, "budget": k, "iterations": it,
             "setup_s": math.nan} for s in solvers for k, it in s.work.items()]
    frame = frame.merge(pd.DataFrame(work), how="left", on=[*pp.KEYS, "solver", "budget"],
                        validate="many_to_one")
    assert frame[frame.status == "search"].iterations.notna().all()
    ref = {"radius_kind": "config", "radius": 1.0, "solution_norm": 1.0, "solution_nnz": 3,
           "active": True, "p_star": cell.p_star, "rel_gap": cell.ref_gap, "method": "x",
           "seconds": 0.0, "cached": True}
    meta = {"repeats": 2, "cap_s": 2.0, "ours": ["acc_pg"], "datasets": [{
        "dataset": "zipf", "paper": "", "n": 80, "d": 60, "stored": 1, "dense": False,
        "l2_ref": {"solution_norm": 2.0, "solution_nnz": 4}, "radius_source": "test",
        "options": {"acc_pg": {}, "fw": {}}, "refs": [ref], "load_s": 0.0,
        "prep": {"note": ""}, "memory": {"peak_rss_mib": 1.0, "after_load_rss_mib": 1.0},
        "fcheck": 0.0, "watch": {"quiet": True, "other_cores": 0.0, "loadavg": [],
                                 "seconds": 1.0}}]}
    md = pp.render(frame, meta)
    assert "| target | acc_pg | fw | copt_apg | copt_fw | fastest |" in md
    assert "acc_pg vs copt_apg" in md and "## Rows where a check is not ahead" in md
