"""A planned job's spec (pdsparse.repro.jobs), as the rules' `pdsparse job KIND KEY` read it
from the plan file: every job receives the plan object it was made from."""

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


def _json(spec: dict) -> dict:
    """A spec as the job reads it back from the plan file."""
    return json.loads(json.dumps(spec, allow_nan=False))


def test_a_prepare_job_gets_its_recipe_and_source(planned):
    datasets = {k: d for p in planned.values() for k, d in p.data.items()}
    kinds = set()
    for data in datasets.values():
        spec = _json(jobs.prepare_spec(data, "reg.yaml", _raw))
        assert _same_recipe(jobs.recipe_of(spec["recipe"]), data.recipe), data.key
        assert jobs.recipe_of(spec["recipe"]).tag() == data.recipe.tag()
        assert spec["dataset"] == data.name
        source = spec["source"]
        if data.real:
            assert (source["registry"], source["raw"]) == ("reg.yaml", _raw(data.name))
            kinds.add("real")
        else:
            gen = data.generator
            assert (source["generator"], source["seed"]) == (gen.kind, gen.seed)
            # the values as the command line's --param read them from their text
            assert source["params"] == cli._params([(k, str(v)) for k, v in gen.params])
            kinds.add("generated")
        if data.recipe.test_file is not None:
            assert source["test_raw"] == _raw(data.recipe.test_file)
        kinds.add(data.recipe.features)
    assert {"real", "generated", "rf", "rb", None} <= kinds and len(datasets) >= 20


def _run_spec(spec: dict) -> RunSpec:
    """The RunSpec ``pdsparse job run`` builds (jobs.run_job)."""
    fields = {f for f in RunSpec.__dataclass_fields__ if f != "seed"}
    return RunSpec(**{k: v for k, v in spec.items() if k in fields}, seed=spec["seeds"][0])


def test_a_run_job_gets_its_solver_options_problem_and_budgets(planned):
    runs = [run for p in planned.values() for run in p.runs]
    for run in runs:
        spec = _json(jobs.run_spec(run))
        params = dict(run.problem.params)
        want = RunSpec(
            experiment=run.experiment, dataset=run.problem.data.name, solver=run.solver,
            options=dict(run.options), seed=run.seeds[0], loss=run.problem.loss,
            l2=run.problem.l2, l1=params.get("l1", 0.0), penalty=run.problem.penalty,
            radius=params.get("radius"), max_epochs=run.max_epochs,
            max_seconds=run.max_seconds, tol=run.tol, eval_every=run.eval_every,
            eval_per_decade=run.eval_per_decade, problem=run.problem.tag)
        assert _run_spec(spec) == want, run.key
        assert spec["seeds"] == list(run.seeds), run.key
        assert jobs.run_key(run) == run.path.removeprefix("results/runs/").removesuffix(
            ".parquet")
    assert len({r.solver for r in runs}) >= 12
    assert {r.problem.penalty for r in runs} >= {"elastic_net", "l1_ball", "trace_ball"}


def test_a_value_none_of_the_solvers_own_reaches_the_job(planned):
    """SFW's uncapped minibatch (batch_cap=none, the default is n) was dropped with the
    other solvers' "none" columns, so the job ran the default (the sensitivity study's
    "theory-none" SFW configuration was its "theory-n" one)."""
    runs = [r for p in planned.values() for r in p.runs]
    sfw = next(r for r in runs if r.solver == "sfw" and dict(r.options)["batch_cap"] == "none")
    spec = _json(jobs.run_spec(sfw))
    assert spec["options"]["batch_cap"] == "none"
    assert _run_spec(spec).options.batch_cap == "none"
    # another solver's columns and a late option at its default stay out of the spec
    dgpd = next(r for r in runs if r.solver == "dgpd")
    assert "batch_cap" not in jobs.run_spec(dgpd)["options"]
    assert all("none" not in jobs.run_spec(r)["options"].values() for r in runs
               if r.solver not in ("sfw", "scgs", "storc"))


def test_a_reference_job_gets_its_problem_and_the_strictest_settings(planned):
    from pdsparse.problem import ProblemKey

    refs = shared_references(planned)
    problems = {t: pr for p in planned.values() for t, pr in p.problems.items()}
    for tag, problem in problems.items():
        spec = _json(jobs.reference_spec(tag, problem, refs[tag]))
        assert (spec["problem"], spec["dataset"], spec["loss"]) == (
            tag, problem.data.name, problem.loss)
        assert (spec["rtol"], spec["max_epochs"], spec["max_seconds"]) == (
            refs[tag]["rtol"], refs[tag]["max_epochs"], refs[tag]["max_seconds"])
        # the problem the job builds is the plan's: the same tag
        key = ProblemKey(spec["dataset"], spec["loss"], spec["penalty"], spec["params"],
                         recipe=problem.data.recipe.tag())
        assert key.tag() == tag
        if problem.penalty != "elastic_net":
            assert spec["params"]["radius"] == cli._l2_arg(str(dict(problem.params)["radius"]))


def test_a_stats_job_gets_its_setting(planned):
    stats = [s for p in planned.values() for s in p.stats.values()]
    assert stats
    for spec in stats:
        got = _json(jobs.stats_spec(spec))
        assert (got["dataset"], got["beta"], got["normalization"]) == (
            spec.data.name, spec.beta, spec.normalization)
        assert got["l2"] == cli._l2_arg(str(spec.l2))


def test_a_figure_or_table_job_gets_its_builders_argv(planned):
    """The plan's output command is shell text (a flag with its quoted values per element);
    the job's argv is that text as the shell split it (a spec kept the elements whole, and
    every builder stopped at its first flag)."""
    outputs = [o for p in planned.values() for o in p.outputs]
    for out in outputs:
        spec = _json(jobs.output_spec(out))
        assert spec["builder"] == out.command[0]
        assert spec["args"] == shlex.split(" ".join(out.command[1:])), out.name
        assert all(not a.startswith("--") or " " not in a for a in spec["args"]), out.name
    assert any(a == "--spec" for o in outputs for a in jobs.output_spec(o)["args"])


def test_the_plan_file_is_named_by_its_content(tmp_path, monkeypatch, planned):
    """One file per plan: a second workflow invocation with another config (a dry run beside
    a running one) writes another file and never changes the one running jobs read."""
    from pdsparse.errors import ConfigError

    refs = shared_references(planned)
    doc = jobs.plan_document(planned, "config/datasets.yaml", _raw, refs)
    assert sum(len(v) for v in doc.values()) > 700
    first = jobs.write_plan(doc, tmp_path)
    assert jobs.write_plan(doc, tmp_path) == first
    other = jobs.write_plan({**doc, "stats": {}}, tmp_path)
    assert other != first and first.is_file()
    for i in range(3):  # only the newest `keep` are kept
        jobs.write_plan({"run": {str(i): {}}}, tmp_path / "few", keep=2)
    assert len(list((tmp_path / "few").glob("plan-*.json"))) == 2

    run = next(iter(doc["run"]))
    assert jobs.load_job("run", run, first) == doc["run"][run]
    monkeypatch.setenv(jobs.PLAN_ENV, str(first))
    assert jobs.load_job("run", run) == doc["run"][run]
    with pytest.raises(ConfigError, match=r"no run job .*did you mean"):
        jobs.load_job("run", run + "x", first)
    with pytest.raises(ConfigError, match="job kind 'runs'"):
        jobs.load_job("runs", run, first)
    monkeypatch.delenv(jobs.PLAN_ENV)
    with pytest.raises(ConfigError, match="give --plan FILE or set PDSPARSE_PLAN"):
        jobs.load_job("run", run)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match=r"bad.json: not JSON"):
        jobs.load_job("run", run, bad)
    with pytest.raises(ConfigError, match="missing.json"):
        jobs.load_job("run", run, tmp_path / "missing.json")


def test_a_job_by_key_writes_what_the_flags_write(tmp_path, capsys):
    """`pdsparse job KIND KEY` and the same job given as flags make the same files: the
    prepared arrays and the traces (timing columns aside) are equal."""
    import numpy as np
    import pandas as pd

    from pdsparse.data.store import load_dataset

    main = cli.main
    npz, ref, trace = tmp_path / "a.npz", tmp_path / "r.parquet", tmp_path / "t.parquet"
    assert main(["prepare", "--dataset", "tiny", "--generator", "worst_case_binary_dual",
                 "--param", "d=8", "--param", "n=30", "--param", "alpha=80", "--seed", "1",
                 "--normalization", "unit_rows", "--out", str(npz)]) == 0
    assert main(["reference", "--data", str(npz), "--loss", "logistic", "--l2", "1/n",
                 "--l1", "0.1/n", "--rtol", "1e-10", "--out", str(ref)]) == 0
    assert main(["run", "--data", str(npz), "--reference", str(ref), "--experiment", "e",
                 "--solver", "primal_rcd", "--option", "sampling=uniform", "--seed", "0", "1",
                 "--l2", "1/n", "--l1", "0.1/n", "--max-epochs", "4", "--eval-every", "1",
                 "--quiet", "--out", str(trace)]) == 0

    plan = {
        "prepare": {"tiny": {"dataset": "tiny", "recipe": {"normalization": "unit_rows"},
                             "source": {"generator": "worst_case_binary_dual", "seed": 1,
                                        "params": {"d": 8, "n": 30, "alpha": 80}}}},
        "reference": {"p": {"dataset": "tiny", "problem": "", "loss": "logistic",
                            "penalty": "elastic_net", "params": {"l2": "1/n", "l1": "0.1/n"},
                            "rtol": 1e-10, "max_epochs": 1000000, "max_seconds": 600}},
        "run": {"e/x": {"experiment": "e", "dataset": "tiny", "problem": "", "solver":
                        "primal_rcd", "options": {"sampling": "uniform"}, "seeds": [0, 1],
                        "loss": "logistic", "penalty": "elastic_net", "l2": "1/n",
                        "l1": "0.1/n", "radius": None, "max_epochs": 4.0,
                        "max_seconds": 600.0, "tol": 1e-10, "eval_every": 1.0,
                        "eval_per_decade": 0}},
    }
    path = jobs.write_plan(plan, tmp_path / "plans")
    npz2, ref2, trace2 = tmp_path / "b.npz", tmp_path / "s.parquet", tmp_path / "u.parquet"
    assert main(["job", "prepare", "tiny", "--plan", str(path), "--out", str(npz2)]) == 0
    assert main(["job", "reference", "p", "--plan", str(path), "--data", str(npz2),
                 "--out", str(ref2)]) == 0
    assert main(["job", "run", "e/x", "--plan", str(path), "--data", str(npz2),
                 "--reference", str(ref2), "--out", str(trace2), "--quiet"]) == 0
    a, b = load_dataset(npz), load_dataset(npz2)
    assert (a.A != b.A).nnz == 0 and np.array_equal(a.b, b.b)
    assert pd.read_parquet(ref)["p_star"].equals(pd.read_parquet(ref2)["p_star"])
    timing = ["time_s", "wall_s", "setup_s"]
    t1, t2 = pd.read_parquet(trace).drop(columns=timing), pd.read_parquet(trace2).drop(
        columns=timing)
    pd.testing.assert_frame_equal(t1, t2)

    capsys.readouterr()
    assert main(["job", "run", "e/x", "--plan", str(path), "--show"]) == 0
    assert json.loads(capsys.readouterr().out) == plan["run"]["e/x"]
    assert main(["job", "run", "e/x", "--plan", str(path), "--data", str(npz2)]) == 2
    assert "needs --reference --out" in capsys.readouterr().err


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
