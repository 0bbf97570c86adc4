"""The benchmarks' one runner (``benchmarks/bench``): its searches, its interleaved rounds,
its long format and its report's verdicts.

The fakes' accuracy is a known function of their budget (their iterate is ``[subopt]`` and
the fake cell reads it back), and the report is fed rows with given times, so that nothing
here depends on the machine's speed or load. The real solvers of ``bench.solver`` are run
once on a tiny problem against its certified optimum.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        import bench.report
        import bench.runner
        import bench.solver

        yield bench
    finally:
        sys.path.remove(str(BENCH))


class FakeCell:
    """A cell whose iterate ``[s]`` has relative suboptimality s."""

    def __new__(cls, bench, **labels):
        cell = bench.runner.Cell(labels or {"set": "fake"}, problem=None, p_star=1.0)
        cell.subopt = lambda x: math.inf if x is None else float(x[0])
        return cell


def fake(bench, name, sampling, accuracy, *, ours=False, calls=None, supports=""):
    """A solver whose iterate at ``budget`` has suboptimality ``accuracy(budget, k)`` (k: the
    how-many-th run of it), recording each run in ``calls``."""

    class Fake(bench.solver.Solver):
        def __init__(self):
            self.name, self.sampling, self.ours, self.k = name, sampling, ours, 0

        def supports(self, problem):
            return supports

        def run(self, budget):
            self.k += 1
            if calls is not None:
                calls.append((name, budget))
            self.result = np.array([accuracy(budget, self.k)])

    return Fake()


def test_tolerance_search_takes_the_loosest_tolerance_reaching_each_target(bench):
    s = fake(bench, "t", "tolerance", lambda tol, k: tol / 20)
    s.set_problem(None)
    found = bench.runner.find_budgets(s, FakeCell(bench), [1e-3, 1e-6], cap=math.inf)
    assert found[1e-3].budget == pytest.approx(1e-2)  # 1e-2 / 20 <= 1e-3
    assert found[1e-6].budget == pytest.approx(1e-5)
    stalls = fake(bench, "s", "tolerance", lambda tol, k: max(tol, 1e-4))
    stalls.set_problem(None)
    f = bench.runner.find_budgets(stalls, FakeCell(bench), [1e-6], cap=math.inf)[1e-6]
    assert f.budget is None and f.why.startswith("not reached: tightest tol")


def test_iteration_search_finds_the_smallest_cap_within_three_percent(bench):
    # subopt 1/k: the target 1e-3 is first reached at k = 1000
    s = fake(bench, "i", "iteration", lambda k, _: 1.0 / k)
    s.set_problem(None)
    f = bench.runner.find_budgets(s, FakeCell(bench), [1e-3], cap=math.inf)[1e-3]
    assert 1000 <= f.budget <= 1000 * (1 + bench.runner.BISECT_REL) + 1
    assert f.subopt <= 1e-3
    # a solver that stops improving by itself (same iterate at k and 2k) reaches nothing
    flat = fake(bench, "f", "iteration", lambda k, _: max(1.0 / k, 0.01))
    flat.set_problem(None)
    f = bench.runner.find_budgets(flat, FakeCell(bench), [1e-3], cap=math.inf)[1e-3]
    assert f.budget is None and "stopped by itself" in f.why


def test_trace_search_takes_the_first_point_at_each_target(bench):
    s = fake(bench, "tr", "trace", lambda b, k: 0.0)
    s.trace = lambda subopt, target, cap: ([(10, 1e-1, 0.1), (20, 1e-4, 0.2), (40, 1e-7, 0.4)],
                                           "target")
    s.set_problem(None)
    found = bench.runner.find_budgets(s, FakeCell(bench), [1e-3, 1e-6], cap=1.0)
    assert (found[1e-3].budget, found[1e-6].budget) == (20, 40)


def test_failures_divergence_and_cap_reach_nothing(bench):
    def boom(budget, k):
        raise FloatingPointError("overflow")

    cell = FakeCell(bench)
    for s, why in ((fake(bench, "b", "tolerance", boom), "failed: FloatingPointError"),
                   (fake(bench, "d", "tolerance", lambda t, k: math.inf), "failed: P not"),
                   (fake(bench, "di", "iteration", lambda t, k: math.inf), "failed: P not")):
        s.set_problem(None)
        f = bench.runner.find_budgets(s, cell, [1e-6], cap=math.inf)[1e-6]
        assert f.budget is None and f.why.startswith(why), f.why
    slow = fake(bench, "slow", "tolerance", lambda t, k: t)
    slow.set_problem(None)
    f = bench.runner.find_budgets(slow, cell, [1e-6], cap=-1.0)[1e-6]
    assert f.budget is None and "> cap" in f.why


def test_race_interleaves_the_rounds_and_writes_one_row_per_timed_run(bench):
    calls: list = []
    a = fake(bench, "a", "tolerance", lambda t, k: t / 20, ours=True, calls=calls)
    b = fake(bench, "b", "tolerance", lambda t, k: t / 2, calls=calls)
    c = fake(bench, "c", "tolerance", lambda t, k: 1.0, calls=calls)  # never reaches
    u = fake(bench, "u", "tolerance", lambda t, k: 0.0, supports="not this loss")
    rows = bench.runner.race(FakeCell(bench, set="x"), [a, b, c, u], [1e-4], repeats=3,
                             cap=math.inf)
    timed = [c for c in calls if c[0] in "ab"][-6:]  # the rounds after the searches
    assert timed == [("a", 1e-3), ("b", 1e-4)] * 3
    frame = pd.DataFrame(rows)
    assert set(bench.runner.COLUMNS) <= set(frame.columns) and "set" in frame.columns
    search = frame[frame.status == "search"]  # the searches' runs, kept as curves
    assert list(search[search.solver == "b"].budget) == [1e-2, 1e-3, 1e-4]
    assert (search["round"] == -2).all() and search.target.isna().all()
    frame = frame[frame.status != "search"]
    by = frame.groupby("solver")
    assert list(by.get_group("a")["round"]) == [0, 1, 2]
    assert set(by.get_group("a").status) == {"reached"}
    assert by.get_group("c").status.tolist() == ["not reached"]
    assert math.isnan(by.get_group("c").cpu_s.iloc[0])
    assert by.get_group("u").status.tolist() == ["unsupported"]


def test_a_rerun_that_misses_its_target_is_recorded_and_never_counts(bench):
    # reaches 1e-6 at tol 1e-5 (its 4th run), then misses it on the second timed round
    flaky = fake(bench, "flaky", "tolerance", lambda t, k: t / 20 if k != 6 else 1.0)
    ours = fake(bench, "ours", "tolerance", lambda t, k: t / 20, ours=True)
    rows = bench.runner.race(FakeCell(bench), [ours, flaky], [1e-6], repeats=3,
                             cap=math.inf)
    frame = pd.DataFrame(rows)
    assert "missed" in set(frame[frame.solver == "flaky"].status)
    assert (frame.status == "search").sum() == 8  # 1e-2 .. 1e-5, each solver
    per = bench.report.times(frame, ["set"])
    assert per.set_index("solver").loc["flaky", "seconds"] == math.inf
    table = bench.report.against_best(per, ["set"])
    assert table.verdict.iloc[0] == "ahead (no rival reached the target)"


def rows_of(bench, times: dict[str, list[float]], ours: str) -> pd.DataFrame:
    rows = []
    for solver, secs in times.items():
        for r, s in enumerate(secs):
            rows.append({"set": "x", "solver": solver, "ours": solver == ours,
                         "sampling": "tolerance", "target": 1e-6, "budget": 1e-3,
                         "status": "reached" if s == s else "not reached",
                         "round": r if s == s else -1, "cpu_s": s, "subopt": 1e-7,
                         "note": "", "load1": 0.0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("ours_s", "rival_s", "verdict"), [
    ([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], "ahead"),
    ([2.0, 2.1, 2.2], [1.0, 1.1, 1.2], "behind"),
    ([0.9, 1.0, 1.2], [1.0, 1.05, 1.1], "inconclusive"),  # the range straddles 1
])
def test_the_report_sets_ours_against_the_fastest_rival_that_counts(bench, ours_s, rival_s,
                                                                     verdict):
    frame = rows_of(bench, {"ours": ours_s, "rival": rival_s, "slower": [9.0, 9.0, 9.0],
                            "failed": [math.nan]}, "ours")
    table = bench.report.against_best(bench.report.times(frame, ["set"]), ["set"])
    row = table.iloc[0]
    assert row.rival == "rival" and row.verdict == verdict
    assert row.ratio == pytest.approx(np.median(ours_s) / np.median(rival_s))
    assert row.range_lo == pytest.approx(min(ours_s) / max(rival_s))
    assert row.range_hi == pytest.approx(max(ours_s) / min(rival_s))
    md = bench.report.markdown(frame, {"repeats": 3}, title="t", keys=["set"])
    assert verdict in md and "failed" in md.split("Did not count:")[1]


def test_write_keeps_the_measurements_when_the_report_fails(bench, tmp_path):
    frame = rows_of(bench, {"ours": [1.0], "rival": [2.0]}, "ours")

    def broken(f, m):
        raise RuntimeError("report bug")

    with pytest.raises(RuntimeError):
        bench.report.write(frame, {"repeats": 1}, tmp_path / "x.y", broken)
    assert pd.read_parquet(tmp_path / "x.y.parquet").equals(frame)
    assert not (tmp_path / "x.y.md").exists()


def test_ours_and_the_library_peers_reach_the_certified_optimum(bench):
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.penalties import ElasticNet
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_solution

    A, b = zipf_bow(80, 30, 6, 1.0, 3)
    problem = Problem(A, b, "logistic", penalty=ElasticNet(0.0, 0.01))
    ref = reference_solution(problem, rtol=1e-10)
    cell = bench.runner.Cell({"set": "zipf"}, problem, float(ref.p_star))
    solvers = [bench.solver.OursEstimator("auto"), bench.solver.OursSolve("prox_newton"),
               *[s for s in bench.solver.library_peers()
                 if s.peer.name in ("sklearn liblinear", "skglm ProxNewton", "celer")]]
    frame = pd.DataFrame(bench.runner.race(cell, solvers, [1e-6], repeats=1, cap=60.0))
    done = frame[~frame.status.isin(["unsupported", "search"])]
    assert {"ours (auto)", "ours (prox_newton)", "sklearn liblinear"} <= set(done.solver)
    assert (done.status == "reached").all(), done[["solver", "status", "note"]]
    assert (done.subopt <= 1e-6).all()


def test_with_an_intercept_ours_and_the_peers_that_fit_one_reach_the_target(bench):
    """``sparse_vs_peers --intercept``: the estimator fits the intercept (its w is (coef, c))
    and so do the peers that take one unpenalized; LIBLINEAR, which penalizes its intercept,
    is left out as unsupported."""
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.penalties import ElasticNet
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_solution

    A, b = zipf_bow(300, 80, 8, 1.0, 2)
    b = np.where(np.arange(300) % 3 == 0, 1.0, b)  # more +1: an intercept that matters
    problem = Problem(A, b, "logistic", penalty=ElasticNet(0.0, 0.01), intercept=True)
    ref = reference_solution(problem, rtol=1e-10)
    cell = bench.runner.Cell({"set": "zipf"}, problem, float(ref.p_star))
    solvers = [bench.solver.OursEstimator("auto"),
               *[s for s in bench.solver.library_peers()
                 if s.peer.name in ("sklearn liblinear", "sklearn saga")]]
    frame = pd.DataFrame(bench.runner.race(cell, solvers, [1e-6], repeats=1, cap=60.0))
    assert set(frame[frame.status == "unsupported"].solver) == {"sklearn liblinear"}
    done = frame[~frame.status.isin(["unsupported", "search"])]
    assert {"ours (auto)", "sklearn saga"} <= set(done.solver)
    assert (done.status == "reached").all(), done[["solver", "status", "note"]]
    assert (done.subopt <= 1e-6).all()


def test_our_kernel_traced_then_rerun_ends_at_the_traced_iterate(bench):
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_solution

    A, b = zipf_bow(100, 40, 6, 1.0, 5)
    problem = Problem(A, b, "logistic", l2=0.01)
    cell = bench.runner.Cell({"set": "zipf"}, problem, float(reference_solution(problem).p_star))
    k = bench.solver.OursKernel("dual_rcd", sampling="uniform", dual_step="fixed")
    assert k.supports(problem) == ""
    k.set_problem(problem)
    points, stop = k.trace(cell.subopt, 1e-6, cap=60.0)
    assert stop == "target" and points[-1][1] <= 1e-6 < points[-2][1]
    for budget, sub, _ in points[1:]:  # a complete run at a traced budget ends at its iterate
        k.run(budget)
        assert cell.subopt(k.result) == pytest.approx(sub, rel=1e-9, abs=1e-15)
    frame = pd.DataFrame(bench.runner.race(cell, [k], [1e-3, 1e-6], repeats=2, cap=60.0))
    frame = frame[frame.status != "search"]
    assert (frame.status == "reached").all() and len(frame) == 4
    assert (frame.subopt <= frame.target).all()  # (the chunks follow the evaluations' time)


def test_target_sampling_runs_the_solver_once_at_the_target(bench):
    calls: list = []
    own = fake(bench, "own", "target", lambda t, k: t / 2, calls=calls)
    short = fake(bench, "short", "target", lambda t, k: t * 2)  # its own stop falls short
    cell = FakeCell(bench)
    for s in (own, short):
        s.set_problem(None)
    found = bench.runner.find_budgets(own, cell, [1e-3, 1e-6], cap=math.inf)
    assert calls == [("own", 1e-3), ("own", 1e-6)]
    assert {t: f.budget for t, f in found.items()} == {1e-3: 1e-3, 1e-6: 1e-6}
    f = bench.runner.find_budgets(short, cell, [1e-6], cap=math.inf)[1e-6]
    assert f.budget is None and "its own stop" in f.why


def test_a_failure_keeps_the_targets_the_search_had_reached(bench):
    def breaks_late(tol, k):
        if tol < 1e-4:
            raise RuntimeError("no convergence")
        return tol / 20

    s = fake(bench, "late", "tolerance", breaks_late)
    s.set_problem(None)
    found = bench.runner.find_budgets(s, FakeCell(bench), [1e-3, 1e-6], cap=math.inf)
    assert found[1e-3].budget == pytest.approx(1e-2)
    assert found[1e-6].budget is None and "RuntimeError: no convergence" in found[1e-6].why


def test_the_report_lists_targets_loosest_first_and_solvers_as_given(bench):
    never = fake(bench, "never", "tolerance", lambda t, k: 1.0)  # its rows come first
    ours = fake(bench, "ours", "tolerance", lambda t, k: t / 20, ours=True)
    rows = bench.runner.race(FakeCell(bench), [ours, never], [1e-6, 1e-2], repeats=1,
                             cap=math.inf)
    per = bench.report.times(pd.DataFrame(rows), ["set"])
    assert list(zip(per.target, per.solver, strict=True)) == [(1e-2, "ours"), (1e-2, "never"),
                                                              (1e-6, "ours"), (1e-6, "never")]


def test_ours_fastest_takes_each_cells_fastest_solver_of_ours(bench):
    frame = pd.concat([rows_of(bench, {"a": [1.0, 1.0], "b": [3.0, 3.0], "rival": [2.0, 2.0]},
                               "a"),
                       rows_of(bench, {"a": [3.0, 3.0], "b": [1.0, 1.0], "rival": [2.0, 2.0]},
                               "b").assign(set="y")], ignore_index=True)
    frame.loc[frame.solver.isin(["a", "b"]), "ours"] = True
    table = bench.report.against_best(bench.report.times(frame, ["set"]), ["set"], "fastest")
    assert list(table.ours) == ["a", "b"] and list(table.ratio) == [0.5, 0.5]
    md = bench.report.markdown(frame, {}, title="t", keys=["set"], ours="fastest")
    assert "| x | 1e-06 | a | 1 |" in md


def test_our_kernel_reports_its_run(bench):
    from pdsparse.data.synthetic import zipf_bow
    from pdsparse.problem import Problem

    A, b = zipf_bow(50, 20, 5, 1.0, 2)
    k = bench.solver.OursKernel("dual_rcd")
    k.set_problem(Problem(A, b, "logistic", l2=0.02))
    k.run(3 * A.nnz)
    d = k.details()
    assert d["epochs"] == pytest.approx(3.0) and d["iterations"] > 0
    assert d["nnz_x"] == np.count_nonzero(k.result) and "nnz_alpha" in d
