"""The sensitivity studies' grids (config/sensitivity.yaml) and their labels: every method tuned
over a comparable grid, the settings that turn a method into another named for what they are
(pdsparse.repro.sensitivity.DEGENERATE), and the planned cost of the studies."""

import numpy as np
import pandas as pd
import pytest
import yaml
from test_pdbfw import make_problem

from pdsparse import objective
from pdsparse.penalties import project_l1_ball
from pdsparse.repro.sensitivity import (
    ABLATIONS,
    DEGENERATE,
    LARGE_DELTAS,
    PROJECTED_GRADIENT,
    best_and_printed,
    degenerate_name,
    not_the_papers,
    sensitivity_table,
)
from pdsparse.solvers import option_names
from pdsparse.solvers.pdbfw import DELTA_MULTIPLIER, PDBFWL1Kernel, PDBFWOptions

# ---- PDBFW with k = n and delta -> inf is relaxed projected gradient --------------------------


def _projected_gradient_gap(p, delta, iters=60):
    """The largest relative difference, over ``iters`` iterations, between PDBFW's x (every
    dual row, a block that holds the whole projection: s = d) and the recursion
    x+ = x/2 + Pi(x - (2/mu) grad P(x))/2 from x = 0. PDBFW's first iteration reads y = 0
    (its z starts at 0), so its iterate t + 1 is the recursion's t."""
    ker = PDBFWL1Kernel(p, PDBFWOptions(s=str(p.d), k="n", delta=delta))
    ker.run(1)
    x, worst = np.zeros(p.d), 0.0
    for _ in range(iters):
        grad = -(p.csr.T @ objective.alpha_of_w(p, x)) / p.n + p.l2 * x
        x = 0.5 * x + 0.5 * project_l1_ball(x - (2.0 / p.l2) * grad, p.radius)
        ker.run(1)
        worst = max(worst, np.abs(ker.x - x).max() / np.abs(x).max())
    assert np.abs(x).sum() == pytest.approx(p.radius, rel=1e-9)  # the ball binds
    return worst, ker.q_per_k * p.n


@pytest.mark.parametrize("n,d,density", [(60, 40, 0.2), (400, 300, 0.05)])
def test_pdbfw_with_every_row_and_an_unbounded_dual_step_is_projected_gradient(n, d, density):
    """delta = exact: the recursion to rounding. A finite multiplier leaves a proximal weight
    q = n / delta in (10), and the iterates stay within about q of the recursion (q / 2
    measured), closer as the multiplier grows: the threshold LARGE_DELTAS comes from here."""
    p = make_problem(n=n, d=d, density=density, radius=1.0)
    exact, q = _projected_gradient_gap(p, "exact")
    assert q == 0.0 and exact < 1e-13
    gaps = {}
    for delta in ("x1000", "x10000", "x100000"):
        gap, q = _projected_gradient_gap(p, delta)
        assert q / 10 < gap < q, delta  # a real difference, of the size of q
        gaps[delta] = gap
    assert gaps["x1000"] > gaps["x10000"] > gaps["x100000"]


def test_the_pdfw_m_ablation_with_an_unbounded_dual_step_is_projected_reflected_gradient():
    """extrapolate=primal, k = n, delta = exact: y = f'(A (2x - x_prev)), so the iteration is
    x+ = x/2 + Pi(x - (2/mu)(A^T f'(A (2x - x_prev)) / n + mu x))/2, to rounding."""
    p = make_problem(n=60, d=40, radius=1.0)
    ker = PDBFWL1Kernel(p, PDBFWOptions(s=str(p.d), k="n", delta="exact", extrapolate="primal"))
    ker.run(1)
    prev, x, worst = np.zeros(p.d), np.zeros(p.d), 0.0
    for _ in range(40):
        loss = -(p.csr.T @ objective.alpha_of_w(p, 2 * x - prev)) / p.n
        prev, x = x, 0.5 * x + 0.5 * project_l1_ball(x - (2.0 / p.l2) * (loss + p.l2 * x),
                                                      p.radius)
        ker.run(1)
        worst = max(worst, np.abs(ker.x - x).max() / np.abs(x).max())
    assert worst < 1e-13
    plain = PDBFWL1Kernel(p, PDBFWOptions(s=str(p.d), k="n", delta="exact"))
    for _ in range(41):  # one iteration a call
        plain.run(1)
    assert np.abs(x - plain.x).max() > 1e-6 * np.abs(x).max()  # not the plain recursion


def test_every_delta_at_or_past_the_threshold_is_listed():
    threshold = min(DELTA_MULTIPLIER[d] for d in LARGE_DELTAS)
    assert set(LARGE_DELTAS) == {d for d, m in DELTA_MULTIPLIER.items() if m >= threshold}
    assert threshold == 1e5


# ---- the mapping: names, and never the paper's method at its best ----------------------------


@pytest.mark.parametrize("options,name", [
    ({"k": "n", "delta": "x100000"}, PROJECTED_GRADIENT),
    ({"k": "n", "delta": "exact", "extrapolate": "none"}, PROJECTED_GRADIENT),
    ({"k": "n", "delta": "exact", "extrapolate": "primal"},
     "projected reflected gradient (PDFW.m, k = n, δ → ∞)"),
    ({"k": "n", "delta": "x10000"}, "PDBFW with every dual row (k = n)"),
    ({"k": "n", "delta": "x100", "extrapolate": "primal"}, None),  # the PDFW.m ablation
    ({"k": "auto", "delta": "exact"}, None),
    ({"k": "balance", "delta": "x100000"}, None),
])
def test_degenerate_names(options, name):
    row = {"solver": "pdbfw", **dict.fromkeys(option_names(), "none"), **options}
    assert degenerate_name(row) == name
    assert degenerate_name({**row, "solver": "acc_pg"}) is None


def _runs(solver, rate, **opts):
    """rel_subopt = 10^(-rate k) at CPU time k, one seed; the option columns as a trace
    writes them."""
    from pdsparse.solvers import get_solver

    cols = get_solver(solver).option_columns(opts)
    return pd.DataFrame([{"problem": "p", "solver": solver, "seed": 0, **cols, "time_s": k,
                          "setup_s": 0.0, "cpu_s": float(k), "epoch": float(k),
                          "rel_subopt": 10.0 ** (-rate * k)} for k in range(11)])


def test_projected_gradient_is_never_pdbfws_best():
    """k = n with delta x 1e5 is the fastest configuration here: it is reported as projected
    gradient, k = n with x 1e4 under its own name, and PDBFW's best is the fastest setting
    with a partial dual update."""
    from pdsparse.repro.speedup import config_label

    df = pd.concat([_runs("pdbfw", 0.5, k="auto", delta="theorem"),
                    _runs("pdbfw", 1.0, k="auto", delta="x10000"),
                    _runs("pdbfw", 1.5, k="n", delta="x10000"),
                    _runs("pdbfw", 3.0, k="n", delta="x100000"),
                    _runs("acc_pg", 2.0, lipschitz="backtracking")], ignore_index=True)
    df["config"] = [config_label(r, option_names()) for r in df.to_dict("records")]
    df["tag"] = ["backtracking" if s == "acc_pg" else f"{k}-{d}"
                 for s, k, d in zip(df["solver"], df["k"], df["delta"], strict=True)]
    table = sensitivity_table(df, [1e-6], {"pdbfw": "auto-theorem",
                                           "acc_pg": "backtracking"})
    methods = dict(zip(table["tag"], table["method"], strict=True))
    assert methods["n-x100000"] == PROJECTED_GRADIENT
    assert methods["n-x10000"] == "PDBFW with every dual row (k = n)"
    assert methods["auto-x10000"] == "pdbfw"
    summary = best_and_printed(table, [1e-6])
    best = summary[summary.setting == "best"].set_index("method")["tag"]
    assert best["pdbfw"] == "auto-x10000"
    assert best[PROJECTED_GRADIENT] == "n-x100000"
    assert not_the_papers(PROJECTED_GRADIENT) and not_the_papers("pdbfw_pdfw_m")
    assert not not_the_papers("pdbfw") and not not_the_papers("acc_pg")
    assert set(ABLATIONS.values()) | {m for _, _, m in DEGENERATE} >= {
        PROJECTED_GRADIENT, "pdbfw_pdfw_m"}


# ---- coarse to fine: the grid at the study's seeds, what decides at the paper's ---------------


def test_the_printed_and_the_best_settings_run_every_seed_the_grid_one():
    """Coarse to fine: the grid at the study's seeds and its grid_max_seconds, each
    method's printed setting and the paper's best at every seed and the full budget."""
    from pdsparse.data.registry import load_registry
    from pdsparse.repro.config import validate_config
    from pdsparse.repro.papers.dgpd.plan import plan

    cfg = yaml.safe_load(open("config/config.yaml"))
    cfg["dgpd"]["seeds"] = [0, 1, 2]
    cfg["dgpd"]["best"] = [{"method": "dgpd", "inner": "5", "eta": "x100", "batch": "8"}]
    cfg["dgpd"]["sensitivity"] = {
        "dataset": "digits-rb", "cell": [0.1, 0.01], "max_seconds": 3, "seeds": [0],
        "targets": [1e-3], "printed": {"dgpd": {"inner": "5", "eta": "x10"}},
        "grid": [{"method": "dgpd", "inner": "5", "eta": ["x10", "x100"], "batch": ["1", "8"]},
                 {"method": "dual_rcd", "sampling": ["uniform", "importance"],
                  "dual_step": "newton"}]}
    cfg = validate_config(cfg, "workflow/schemas/config.schema.yaml")
    out = plan(cfg, load_registry(cfg["data"]["registry"]), lambda name: True)
    seeds = {r.options_tag: r.seeds for r in out.runs_of("sensitivity")}
    assert seeds == {"5-x10": (0, 1, 2), "5-x100-8": (0, 1, 2), "5-x10-8": (0,),
                     "5-x100": (0,), "uniform-newton": (0, 1, 2), "importance-newton": (0,)}
    # and the same split of the budget: the grid's grid_max_seconds, what decides the full
    assert {r.max_seconds for r in out.runs_of("sensitivity")} == {3.0}
    cfg["dgpd"]["sensitivity"]["grid_max_seconds"] = 1
    out = plan(cfg, load_registry(cfg["data"]["registry"]), lambda name: True)
    budgets = {r.options_tag: r.max_seconds for r in out.runs_of("sensitivity")}
    assert budgets == {tag: 3.0 if len(s) == 3 else 1.0 for tag, s in seeds.items()}
    # without the study's seeds, every configuration runs the paper's
    del cfg["dgpd"]["sensitivity"]["seeds"]
    out = plan(cfg, load_registry(cfg["data"]["registry"]), lambda name: True)
    assert {r.seeds for r in out.runs_of("sensitivity")} == {(0, 1, 2)}


def test_a_setting_the_paper_does_not_print_is_labelled_so(tmp_path):
    """The study's `printed` entries are the paper's; every other method's reference setting
    (a baseline's source parameters, our multipliers) reads "configured (not printed: ours)"
    in the table and the plan says which."""
    from pdsparse.repro.plan import NOT_PRINTED
    from pdsparse.repro.sensitivity import setting_label, write_sensitivity

    df = pd.concat([_runs("pdbfw", 0.5, k="auto", delta="theorem"),
                    _runs("pdbfw", 3.0, k="n", delta="exact"),
                    _runs("acc_pg", 2.0, lipschitz="backtracking")], ignore_index=True)
    df = df.drop(columns=["cpu_s"])
    df.to_parquet(tmp_path / "agg.parquet")
    write_sensitivity([tmp_path / "agg.parquet"], [1e-6],
                      {"pdbfw": "auto-auto-theorem", "acc_pg": "nesterov-backtracking"},
                      tmp_path / "t.csv", tmp_path / "t.md", ours=["acc_pg"])
    md = (tmp_path / "t.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| acc_pg")]
    assert rows and all(f"configured ({NOT_PRINTED})" in line for line in rows)
    pdbfw = [line for line in md.splitlines() if line.startswith("| pdbfw |")]
    assert pdbfw and all(NOT_PRINTED not in line for line in pdbfw)
    assert any(line.startswith(f"| {PROJECTED_GRADIENT} |") for line in md.splitlines())
    assert setting_label("printed", PROJECTED_GRADIENT) == f"configured ({NOT_PRINTED})"
    assert setting_label("best", "acc_pg", ["acc_pg"]) == "best"


# ---- the shipped studies: comparable grids, validated and planned ---------------------------

STEPS = {"x0_1", "x0_3", "theory", "x3", "x10", "x100"}
"""The step multipliers every tuned step covers (x {0.1, 0.3, 1, 3, 10, 100})."""


def _studies():
    from pdsparse.repro.config import load_config

    cfg = load_config(["config/config.yaml", "config/sensitivity.yaml"],
                      "workflow/schemas/config.schema.yaml")
    return cfg, {"dgpd": cfg["dgpd"]["sensitivity"], "pdbfw": cfg["pdbfw"]["sensitivity"],
                 "pdbfw.trace": cfg["pdbfw"]["trace"]["sensitivity"]}


def _values(grid, method, option):
    out = set()
    for entry in grid:
        if entry["method"] == method and option in entry:
            v = entry[option]
            out |= {str(x) for x in (v if isinstance(v, list) else [v])}
    return out


def test_every_method_gets_a_comparable_grid():
    _, studies = _studies()
    for grid in (s["grid"] for s in studies.values()):
        methods = {e["method"] for e in grid}
        for method in methods & {"svrg", "spdc", "scgs", "storc", "block_fw"}:
            assert _values(grid, method, "step") >= STEPS, method
        if "dgpd" in methods:
            assert {x.replace("theorem", "theory") for x in _values(grid, "dgpd", "eta")} \
                >= STEPS
        if "acc_pg" in methods:
            assert _values(grid, "acc_pg", "lipschitz") == {"exact", "power", "backtracking"}
            assert _values(grid, "acc_pg", "momentum") == {"nesterov", "fista"}
    from pdsparse.names import STEP_MULTIPLIERS
    assert _values(studies["pdbfw.trace"]["grid"], "block_fw", "step") == \
        set(STEP_MULTIPLIERS)
    assert "acc_pg" in {e["method"] for e in studies["pdbfw.trace"]["grid"]}


def _plans():
    from pdsparse.data.registry import load_registry
    from pdsparse.repro.papers.dgpd.plan import plan as dgpd_plan
    from pdsparse.repro.papers.pdbfw.plan import plan as pdbfw_plan

    cfg, _ = _studies()
    cfg["dgpd"]["seeds"] = cfg["pdbfw"]["seeds"] = [0, 1, 2]  # the races' (issue 28)
    registry = load_registry(cfg["data"]["registry"])
    return {name: plan(cfg, registry, lambda name: True)
            for name, plan in (("dgpd", dgpd_plan), ("pdbfw", pdbfw_plan))}


def test_the_studies_plan_and_their_cost_fits():
    """Every configuration of each study is a run group of its experiment, the printed
    settings among them, and the studies' planned CPU seconds (configurations x seeds x
    budget) stay within the 2-hour, 2-core allowance beside the default run."""
    plans = _plans()
    cfg, studies = _studies()
    total = 0.0
    for paper, experiment in (("dgpd", "sensitivity"), ("pdbfw", "sensitivity"),
                              ("pdbfw", "sensitivity_trace")):
        runs = plans[paper].runs_of(experiment)
        assert runs, experiment
        total += sum(len(r.seeds) * r.max_seconds for r in runs)
        table = [o for o in plans[paper].outputs if o.name == experiment][0]
        assert "--printed" in " ".join(table.command)
    assert {r.solver for r in plans["pdbfw"].runs_of("sensitivity_trace")} >= {"acc_pg",
                                                                               "pdbfw"}
    # the kernel budgets; with about 5 s of setup a job and the default run (70 CPU min) the
    # whole stays within 3.5 CPU h (2 hours of 2 cores)
    assert total <= 6000, total


def test_figure2_races_acc_pg_with_backtracking_as_todays_best():
    """Acc PG is raced in Figure 2's races as today's best (not one of the paper's five
    baselines there, so never graded), with backtracking, and compared at that setting in
    the trace study."""
    from pdsparse.repro.plan import TODAY

    plans = _plans()
    for experiment in ("trace_rank10", "trace_rank20", "trace_rank100"):
        assert "acc_pg" not in {r.solver for r in plans["pdbfw"].runs_of(experiment)}
        today = plans["pdbfw"].runs_of(experiment + TODAY)
        assert [(r.solver, r.options_tag) for r in today] == [("acc_pg",
                                                                "nesterov-backtracking")]


def test_best_settings_keep_the_defining_feature():
    """pdbfw.best is a PDBFW setting (a partial dual update), not a degenerate one."""
    cfg, _ = _studies()
    for entry in cfg["pdbfw"]["best"]:
        row = {"solver": entry["method"], **{k: str(v) for k, v in entry.items()
                                             if k != "method"}}
        assert degenerate_name(row) is None, entry
    with open("config/paper.yaml") as fh:
        paper = yaml.safe_load(fh)
    for entry in (paper["pdbfw"].get("best") or []):
        row = {"solver": entry["method"], **{k: str(v) for k, v in entry.items()
                                             if k != "method"}}
        assert degenerate_name(row) is None, entry
