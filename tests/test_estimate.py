"""The plan's cost before a run (pdsparse.repro.estimate): every job kind counted, monotone in the
budgets, the cluster advice. Its absolute value is checked against a measured run in the
docs (docs/workflow.md), not here."""

import pytest

from pdsparse.data.prepare import Recipe
from pdsparse.data.registry import parse_registry
from pdsparse.repro.estimate import (
    CLUSTER_HOURS,
    data_shape,
    estimate,
    format_estimate,
    plan_costs,
    shared_references,
)
from pdsparse.repro.plan import DataSpec, Generator, Output, Plan, ProblemSpec, RunGroup, StatsSpec

REGISTRY = parse_registry({"datasets": {"toy": {"path": "toy.txt", "task": "binary",
                                                "n": 2000, "d": 500, "nnz": 40000}}}, "test")


def _plan(max_seconds=5.0, max_epochs=50.0, ref_seconds=60.0, seeds=(0, 1), tol=1e-10,
          solver="dgpd", paper="p") -> Plan:
    plan = Plan(paper, reference={"rtol": 1e-11, "max_epochs": 20000,
                                  "max_seconds": ref_seconds})
    synthetic = DataSpec("dense", Recipe("none"), Generator.of("dense_gaussian",
                                                               {"n": 300, "d": 200}))
    real = DataSpec("toy", Recipe("none", features="rb", n_grids=50, sigma=1.0))
    for i, data in enumerate((synthetic, real)):
        problem = ProblemSpec.of(data, "smooth_hinge", l2=0.01, l1=0.001)
        plan.add_stats(StatsSpec(data, 0.01, 0.25))
        plan.add_run(RunGroup(paper, f"e{i}", problem, solver, (), "default", tuple(seeds),
                              max_epochs, max_seconds, tol, 1.0))
    plan.outputs.append(Output(paper, "figure1", "figure", ("curves",)))
    plan.outputs.append(Output(paper, "table1", "table", ("table1",)))
    return plan


def _total(**kw) -> float:
    plan = _plan(**kw)
    return estimate(plan_costs({plan.paper: plan}, REGISTRY)).total_s


def test_every_job_kind_is_counted():
    est = estimate(plan_costs({"p": _plan()}, REGISTRY))
    assert est.jobs == {"fetch": 1, "prepare": 2, "stats": 2, "reference": 2, "run": 2,
                        "aggregate": 2, "figure": 1, "table": 1, "table_page": 1,
                        "effective_config": 1, "scorecard": 1}
    assert all(v > 0 for v in est.cpu_s.values())


@pytest.mark.parametrize(("budget", "small", "large", "others"), [
    ("max_seconds", 5.0, 50.0, {"max_epochs": 1e9}),
    ("max_epochs", 5.0, 500.0, {"max_seconds": 1e6}),
    ("ref_seconds", 0.001, 600.0, {}),
    ("seeds", (0,), (0, 1, 2), {}),
])
def test_the_cost_grows_with_every_budget(budget, small, large, others):
    assert _total(**{budget: large}, **others) > _total(**{budget: small}, **others)
    # and never falls when a budget that does not bind grows
    assert _total(**{budget: large}) >= _total(**{budget: small})


def test_a_coordinate_method_stops_at_its_tolerance_before_its_budget():
    # dual RCD converges linearly: beyond the passes its tolerance needs, a larger epoch
    # budget costs nothing more; a tighter tolerance does
    loose = _total(solver="dual_rcd", max_seconds=1e6, max_epochs=1e4)
    assert _total(solver="dual_rcd", max_seconds=1e6, max_epochs=1e6) == loose
    assert _total(solver="dual_rcd", max_seconds=1e6, max_epochs=1e4, tol=1e-14) > loose


def test_shared_problem_gets_the_strictest_reference():
    a, b = _plan(ref_seconds=10.0, paper="a"), _plan(ref_seconds=99.0, paper="b")
    b.reference["rtol"] = 1e-13
    refs = shared_references({"a": a, "b": b})
    assert {r["max_seconds"] for r in refs.values()} == {99.0}
    assert {r["rtol"] for r in refs.values()} == {1e-13}
    # and it is computed once: one reference job per problem
    assert estimate(plan_costs({"a": a, "b": b}, REGISTRY)).jobs["reference"] == 2


def test_memory_from_the_data_size():
    dense = data_shape(DataSpec("g", Recipe("none"), Generator.of("dense_gaussian",
                                                                  {"n": 1000, "d": 1000})),
                       REGISTRY)
    assert dense.dense and dense.bytes == 8e6  # n d 8
    sparse = data_shape(DataSpec("toy", Recipe("none")), REGISTRY)
    assert not sparse.dense and sparse.bytes == 12 * 40000
    rf = data_shape(DataSpec("toy", Recipe("none", features="rf", n_features=100, sigma=1.0,
                                           test_rows=500)), REGISTRY)
    assert rf.dense and (rf.n, rf.d) == (2000, 100)  # 1500 training + 500 test rows
    sub = data_shape(DataSpec("toy", Recipe("none", features="rf", n_features=100, sigma=1.0,
                                            subsample=100)), REGISTRY)
    assert sub.n == 100
    big = _plan()
    est = estimate(plan_costs({"p": big}, REGISTRY), cores=2)
    assert est.peak_job_mb < est.peak_mb <= 2 * est.peak_job_mb


def test_the_cluster_profile_is_advised_above_the_threshold():
    est = estimate(plan_costs({"p": _plan()}, REGISTRY), cores=2)
    text = format_estimate(est)
    assert "CPU hours" in text and "cluster profile" not in text
    hours = est.remaining_s / 3600 / est.cores
    assert "use the cluster profile" in format_estimate(est, cluster_hours=hours / 2)
    assert hours < CLUSTER_HOURS
