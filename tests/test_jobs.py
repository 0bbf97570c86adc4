"""A planned job's arguments (pdsparse.repro.jobs), as the rules pass them: parsed back by the
command line's own parser, every job receives the plan object it was made from."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from pdsparse import cli
from pdsparse.data.registry import load_registry
from pdsparse.repro import jobs
from pdsparse.repro.config import load_config
from pdsparse.repro.estimate import shared_references
from pdsparse.repro.papers import plans
from pdsparse.repro.run import RunSpec

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
REGISTRY = load_registry(REPO / "config" / "datasets.yaml")


def _raw(name: str) -> str:
    return f"data/raw/{name}.bz2"


@pytest.fixture(scope="module")
def planned():
    """Every paper's plan at the full grids and the sensitivity studies, all data available:
    the most recipes, problems, solvers and options a config makes."""
    configs = [REPO / "config" / f for f in ("config.yaml", "paper.yaml", "sensitivity.yaml")]
    config = load_config(configs, SCHEMA)
    return plans(config, REGISTRY, available=lambda name: True)


def _same_recipe(a, b) -> bool:
    """Equal, a single positive class given as a number (the config) or as its text (the
    flag) counting as the same label: same labels, same tag, same file."""
    return (a.tag() == b.tag() and a.positive_labels == b.positive_labels
            and replace(a, positive_class=None) == replace(b, positive_class=None))


def _parse(command: str, args: str):
    return cli.build_parser().parse_args([command, *shlex.split(args)])


def test_a_prepare_job_gets_its_recipe_and_source(planned):
    datasets = {k: d for p in planned.values() for k, d in p.data.items()}
    kinds = set()
    for data in datasets.values():
        args = _parse("prepare", "--out x.npz " + jobs.prepare_args(data, "reg.yaml", _raw))
        assert _same_recipe(cli.recipe_of(args), data.recipe), data.key
        assert args.dataset == data.name
        if data.real:
            assert (args.registry, args.raw, args.generator) == ("reg.yaml", _raw(data.name), None)
            kinds.add("real")
        else:
            gen = data.generator
            assert (args.generator, args.seed, args.raw) == (gen.kind, gen.seed, None)
            assert cli._params(args.param) == cli._params(
                [(k, str(v)) for k, v in gen.params]), data.key
            kinds.add("generated")
        if data.recipe.test_file is not None:
            assert args.test_raw == _raw(data.recipe.test_file)
        kinds.add(data.recipe.features)
    assert {"real", "generated", "rf", "rb", None} <= kinds and len(datasets) >= 20


def test_a_run_job_gets_its_solver_options_problem_and_budgets(planned):
    runs = [run for p in planned.values() for run in p.runs]
    for run in runs:
        args = _parse("run", "--data d.npz --reference r.parquet --out o.parquet "
                      + jobs.run_args(run))
        params = dict(run.problem.params)
        want = RunSpec(
            experiment=run.experiment, dataset=run.problem.data.name, solver=run.solver,
            options=dict(run.options), seed=run.seeds[0], loss=run.problem.loss,
            l2=run.problem.l2, l1=params.get("l1", 0.0), penalty=run.problem.penalty,
            radius=params.get("radius"), max_epochs=run.max_epochs,
            max_seconds=run.max_seconds, tol=run.tol, eval_every=run.eval_every,
            eval_per_decade=run.eval_per_decade, problem=run.problem.tag)
        got = cli.run_spec(args)
        assert got == want, run.key
        assert args.seed == list(run.seeds), run.key
    assert len({r.solver for r in runs}) >= 12
    assert {r.problem.penalty for r in runs} >= {"elastic_net", "l1_ball", "trace_ball"}


def test_a_value_none_of_the_solvers_own_reaches_the_job(planned):
    """SFW's uncapped minibatch (batch_cap=none, the default is n) was dropped with the
    other solvers' "none" columns, so the job ran the default (the sensitivity study's
    "theory-none" SFW configuration was its "theory-n" one)."""
    runs = [r for p in planned.values() for r in p.runs]
    sfw = next(r for r in runs if r.solver == "sfw" and dict(r.options)["batch_cap"] == "none")
    args = jobs.run_args(sfw)
    assert "--option batch_cap=none" in args
    assert cli.run_spec(_parse("run", "--data d --reference r --out o " + args)
                        ).options.batch_cap == "none"
    # another solver's columns and a late option at its default stay out of the command
    dgpd = next(r for r in runs if r.solver == "dgpd")
    assert "batch_cap" not in jobs.run_args(dgpd)
    assert all("=none" not in jobs.run_args(r) for r in runs
               if r.solver not in ("sfw", "scgs", "storc"))


def test_a_reference_job_gets_its_problem_and_the_strictest_settings(planned):
    refs = shared_references(planned)
    problems = {t: pr for p in planned.values() for t, pr in p.problems.items()}
    for tag, problem in problems.items():
        args = _parse("reference", "--data d.npz --out o.parquet "
                      + jobs.reference_args(tag, problem, refs[tag]))
        assert (args.problem, args.dataset, args.loss) == (tag, problem.data.name, problem.loss)
        assert (args.rtol, args.max_epochs, args.max_seconds) == (
            refs[tag]["rtol"], refs[tag]["max_epochs"], refs[tag]["max_seconds"])
        spec = cli._penalty_spec(args)
        params = dict(problem.params)
        if problem.penalty == "elastic_net":
            assert spec is None and args.l1 == cli._nonneg_l2(str(params.get("l1", 0.0)))
        else:
            assert spec["name"] == problem.penalty
            assert spec["radius"] == cli._l2_arg(str(params["radius"]))


def test_a_stats_job_gets_its_setting(planned):
    stats = [s for p in planned.values() for s in p.stats.values()]
    assert stats
    for spec in stats:
        args = _parse("stats", "--data d.npz --out o.parquet " + jobs.stats_args(spec))
        assert (args.dataset, args.beta) == (spec.data.name, spec.beta)
        assert args.l2 == cli._l2_arg(str(spec.l2))


def test_memory_grows_with_the_data_and_the_attempt():
    assert jobs.memory_mb(None, 150) == 1150  # no data set: 10^6 nonzeros
    assert jobs.memory_mb(2 * 10**6, 150, base=500) == 800
    assert jobs.memory_mb(2 * 10**6, 150, base=500, attempt=2) == 1600


@pytest.mark.parametrize("argv, dry", [(["-n"], True), (["-np", "--cores", "2"], True),
                                       (["--dry-run"], True), (["--cores", "2"], False),
                                       (["--notemp"], False), (["-p"], False)])
def test_dry_run_flags(argv, dry):
    assert jobs.is_dry_run(argv) is dry


def test_messages_about_the_plan(tmp_path):
    assert jobs.skipped_summary([]) == ""
    line = jobs.skipped_summary([("Table 1", "leu"), ("Figure 2", "mnist")])
    assert "skipped 2 paper item(s)" in line and "Table 1 (leu)" in line
    moved = ["  results/a.png -> results/stale/a.png"]
    assert "(leu)" in jobs.stale_message(moved, [("Table 1", "leu")])
    assert "does not plan them" in jobs.stale_message(moved, [])

    planned = tmp_path / "planned.json"
    assert jobs.report_mismatch_message(["--report"], planned, ["a"]) == ""  # no record yet
    planned.write_text(json.dumps(["a", "b"]))
    assert jobs.report_mismatch_message(["--cores", "2"], planned, ["a"]) == ""
    assert jobs.report_mismatch_message(["--report=r.zip"], planned, ["a", "b"]) == ""
    msg = jobs.report_mismatch_message(["--report"], planned, ["a", "c"])
    assert "plans 1 output(s) the last run did not make and leaves out 1" in msg


def test_run_flags_are_the_run_spec_fields():
    """`pdsparse run`'s flags are generated from RunSpec's fields (issue 30 item 1): each
    field is a flag with the field's default, and a field added to the spec gets one."""
    import argparse
    import dataclasses

    from pdsparse.cli import build_parser
    from pdsparse.repro.run import RunSpec

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    run = {a.dest: a for a in sub.choices["run"]._actions}
    for f in dataclasses.fields(RunSpec):
        assert f.name in run, f.name
        assert f.metadata.get("help"), f"RunSpec.{f.name} has no help"
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            assert run[f.name].required or f.name == "dataset", f.name
        elif f.name not in ("dataset", "seed", "options", "problem"):  # the CLI's own forms
            assert run[f.name].default == f.default, f.name
