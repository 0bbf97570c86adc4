"""The PDBFW plan: Figure 1 and Table 2 at mu, Figure 3 over mu, Figure 2 on the trace ball."""

from __future__ import annotations

import copy

import pytest

from pdsparse.errors import ConfigError
from pdsparse.repro.figures import CurveFigure
from pdsparse.repro.papers.pdbfw.plan import plan

GEN = {"generator": {"name": "zipf", "kind": "zipf_bow",
                     "params": {"n": 60, "d": 40, "mean_nnz_per_row": 5}}}
SOLVERS = [{"method": "pdbfw"}, {"method": "acc_pg"}, {"method": "fw"}]


def _config(**pdbfw):
    cfg = {
        "data": {"require_all": False, "processed_dir": "data/processed"},
        "pdbfw": {
            "loss": "smooth_hinge", "mu": "10/n", "radius": 300,
            "seeds": [0], "max_epochs": 10, "max_seconds": 5, "tol": 1e-7,
            "eval_first": 0.01, "eval_per_decade": 4, "log_time": ["toy"],
            "reference": {"rtol": 1e-10, "max_epochs": 1000, "max_seconds": 60},
            "solvers": SOLVERS,
            "speedup": {"base": "pdbfw", "targets": [1e-2, 1e-4, 1e-6]},
            "figure3": {"mus": ["1/n", "10/n", "100/n"], "datasets": ["toy"]},
            "datasets": {
                "toy": {"source": GEN, "recipe": {"normalization": "unit_rows"},
                        "radius": 2.5, "paper": "rcv1", "options": {"pdbfw": {"s": 7}}},
                "real": {"source": {"registry": "duke"}, "paper": "duke breast-cancer"},
            },
        },
    }
    cfg["pdbfw"].update(pdbfw)
    return cfg


REGISTRY = {"duke": object()}
TRACE = {"generator": {"name": "sensing", "kind": "lowrank_sensing",
                       "params": {"n": 50, "d": 20, "c": 10}},
         "ranks": [2, 4], "radius": 3.0, "mu": "10/n", "loss": "squared",
         "solvers": [{"method": "pdbfw"}, {"method": "block_fw"}], "max_seconds": 2}


def _spec(output) -> CurveFigure:
    return CurveFigure.from_json(output.command[1].split(" ", 1)[1].strip("'"))


def test_runs_figures_and_tables_of_the_l1_ball():
    p = plan(_config(), REGISTRY, available=lambda name: False)
    assert p.skipped == [("PDBFW real", "duke")]
    assert len(p.runs) == 3 * 3  # three mu (Figure 3 data set) x three solvers
    tags = {r.problem.tag for r in p.runs}
    assert "zipf+unit_rows__smooth_hinge__l1ball-2.5__l2-10_n" in tags
    assert set(p.experiments) == {"mu1_n", "mu10_n", "mu100_n"}
    pdbfw = [r for r in p.runs if r.solver == "pdbfw"]
    assert all(dict(r.options)["s"] == "7" and r.options_tag.startswith("7") for r in pdbfw)
    assert [o.name for o in p.outputs] == ["figure1", "figure3", "table2", "speedup"]
    fig1, fig3 = _spec(p.outputs[0]), _spec(p.outputs[1])
    assert fig1.y == "rel_objective" and [pn.title for pn in fig1.panels] == ["toy"]
    assert fig1.panels[0].logx is True
    assert [pn.experiment for pn in fig3.panels] == ["mu1_n", "mu10_n", "mu100_n"]
    table2 = p.outputs[2]
    assert any(f.startswith("results/reference/zipf+unit_rows__smooth_hinge__l1ball-2.5")
               for f in table2.inputs)
    assert "--paper-rows toy=rcv1" in " ".join(table2.command)


def test_the_real_set_joins_when_available_and_radius_defaults():
    p = plan(_config(figure3={}), REGISTRY, available=lambda name: True)
    tags = {r.problem.tag for r in p.runs}
    assert "duke+avg_example_norm__smooth_hinge__l1ball-300.0__l2-10_n" in tags
    assert set(p.experiments) == {"mu10_n"} and len(p.runs) == 2 * 3


def test_trace_ball_runs_and_figure2():
    p = plan(_config(trace=TRACE), REGISTRY, available=lambda name: False)
    trace = [r for r in p.runs if r.experiment.startswith("trace_rank")]
    assert len(trace) == 2 * 2 and all(r.max_seconds == 2 for r in trace)
    assert {r.problem.tag for r in trace} == {
        f"sensing-r{k}+none__squared__traceball-3.0__l2-10_n" for k in (2, 4)}
    fig2 = next(o for o in p.outputs if o.name == "figure2")
    assert [pn.title for pn in _spec(fig2).panels] == ["rank 2", "rank 4"]


@pytest.mark.parametrize("change, message", [
    ({"figure3": {"mus": ["1/n"], "datasets": ["toyy"]}}, "figure3.datasets: 'toyy'"),
    ({"solvers": [{"method": "pdbfw", "k": "0"}]}, "positive integer"),
    ({"solvers": [{"method": "pdbfww"}]}, "did you mean 'pdbfw'"),
])
def test_config_mistakes_are_named(change, message):
    with pytest.raises(ConfigError, match=message):
        plan(_config(**change), REGISTRY, available=lambda name: False)


def test_options_override_of_an_unconfigured_solver_is_an_error():
    cfg = _config()
    cfg = copy.deepcopy(cfg)
    cfg["pdbfw"]["datasets"]["toy"]["options"] = {"svrg": {"inner": "n"}}
    with pytest.raises(ConfigError, match="'svrg' is not one of the configured solvers"):
        plan(cfg, REGISTRY, available=lambda name: False)


def test_a_recipe_that_joins_labels_names_a_problem():
    """Recipes join labels with "+" (``cl0+9``); the tag's head splits at the first "+" only,
    so such a problem key is valid and reads back from its tag."""
    from pdsparse.problem import ProblemKey

    key = ProblemKey("mnist", "smooth_hinge", "l1_ball", {"radius": 435, "l2": "10/n"},
                     recipe="none-cl0+9-rb100-sig10.729-ms0")
    assert ProblemKey.from_tag(key.tag()) == key
    with pytest.raises(ConfigError, match="dataset"):
        ProblemKey("mn+ist", "smooth_hinge")


def test_every_output_command_parses():
    """The figure and table commands of the plan are valid ``pdsparse`` command lines (a
    figure over three aggregates once passed them to one ``--aggregate``)."""
    import shlex

    from pdsparse import cli
    from pdsparse.repro.output import get_builder, parser

    p = plan(_config(trace=TRACE), REGISTRY, available=lambda name: True)
    for out in p.outputs:
        name, *argv = shlex.split(" ".join(out.command))
        top = cli.build_parser().parse_args(["output", "pdbfw", name, *argv, "--out", "a", "b"])
        assert (top.paper, top.name) == ("pdbfw", name)
        builder = get_builder("pdbfw", name)
        assert builder.kind == out.kind
        args = parser("pdbfw", name, builder).parse_args(top.args)
        if out.kind == "figure":
            assert len(args.aggregate) == len(out.inputs)


def test_figure1_says_why_a_solver_shows_two_settings():
    """Issue 20: "PDBFW, x100" and "PDBFW, x10000" in one legend; the figure says why."""
    from pdsparse.repro.papers.pdbfw.plan import _override_note

    cfg = {"datasets": {"a": {}, "b": {"options": {"pdbfw": {"delta": "x10000"}}}}}
    note = _override_note(cfg, ["a", "b"])
    assert "pdbfw delta x10000 on b" in note and "datasets.NAME.options" in note
    assert "'" not in note and '"' not in note  # it travels in a shell-quoted JSON spec
    assert _override_note(cfg, ["a"]) == ""


def test_best_settings_rerun_each_race_where_they_differ():
    """pdbfw.best: the races of Figures 1 and 3 again, in <experiment>_best, with the best
    setting of each method (no data set's options) where it is not already run; not on the
    trace ball; the figures keep reading the printed experiments."""
    best = [{"method": "pdbfw", "k": "n", "delta": "x100000"}, {"method": "fw"},
            {"method": "acc_pg", "lipschitz": "backtracking"}]
    p = plan(_config(best=best, trace=TRACE), REGISTRY, available=lambda name: False)
    assert {e for e in p.experiments if e.endswith("_best")} == {
        "mu1_n_best", "mu10_n_best", "mu100_n_best"}
    rerun = [r for r in p.runs if r.experiment == "mu10_n_best"]
    # fw's best is its printed setting: not run twice
    assert sorted((r.solver, r.options_tag) for r in rerun) == [
        ("acc_pg", "nesterov-backtracking"), ("pdbfw", "auto-n-x100000")]
    fig1 = _spec(p.outputs[0])
    assert all(not pn.experiment.endswith("_best") for pn in fig1.panels)
    with pytest.raises(ConfigError, match=r"pdbfw.best\[1\]: a second best setting of 'pdbfw'"):
        plan(_config(best=[best[0], {"method": "pdbfw"}]), REGISTRY,
             available=lambda name: False)
    with pytest.raises(ConfigError, match=r"pdbfw.best\[0\]"):
        plan(_config(best=[{"method": "pdbfw", "k": "nn"}]), REGISTRY,
             available=lambda name: False)


def test_the_trace_ball_study_has_its_own_experiment_and_outputs():
    study = {"rank": 4, "targets": [1e-1], "printed": {"pdbfw": {"delta": "theorem"}},
             "grid": [{"method": "pdbfw", "k": ["auto", "n"], "delta": ["theorem", "x1000"]},
                      {"method": "pdbfw", "k": "n", "delta": "x1000",
                       "extrapolate": "primal"},
                      {"method": "block_fw"}]}
    p = plan(_config(trace={**TRACE, "sensitivity": study}), REGISTRY,
             available=lambda name: False)
    runs = [r for r in p.runs if r.experiment == "sensitivity_trace"]
    assert len(runs) == 6 and {r.problem.tag for r in runs} == {
        next(r.problem.tag for r in p.runs if r.experiment == "trace_rank4")}
    assert all(r.max_seconds == 2 for r in runs)  # the trace runs' budget
    outs = {o.name: o for o in p.outputs}
    assert outs["sensitivity_trace"].command[0] == "sensitivity"
    assert outs["sensitivity_trace_figure"].command[0] == "sensitivity_figure"
    assert outs["sensitivity_trace"].files[0] == "results/tables/pdbfw/sensitivity_trace.csv"
    with pytest.raises(ConfigError, match=r"pdbfw.trace.sensitivity.rank: give one of the "
                                          r"ranks"):
        plan(_config(trace={**TRACE, "sensitivity": {**study, "rank": 3}}), REGISTRY,
             available=lambda name: False)
