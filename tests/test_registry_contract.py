"""Every place that names solvers agrees with the registry: the config schema, the
workflow's wildcards, the command line, the plot styles. (The `permutation` sampling once
reached the library but not `run --sampling`; this would have caught it.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pdsparse import cli, names
from pdsparse.solvers import SOLVERS

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


def _option(parser: argparse.ArgumentParser, *path: str, flag: str) -> argparse.Action:
    for step in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[step]
    return next(a for a in parser._actions if flag in a.option_strings)


def test_schema_methods_are_the_registry():
    assert SCHEMA["$defs"]["solver"]["properties"]["method"]["enum"] == list(SOLVERS)


def test_cli_solver_choices_are_the_registry():
    action = _option(cli.build_parser(), "run", flag="--solver")
    assert tuple(action.choices) == tuple(SOLVERS)


def test_cli_option_help_lists_every_option_value():
    help_text = _option(cli.build_parser(), "run", flag="--option").help
    for spec in SOLVERS.values():
        for key, values in spec.choices().items():
            assert key in help_text
            for value in values:
                assert value in help_text, (spec.name, key, value)


def test_light_option_lists_are_the_registry():
    from dataclasses import fields

    assert names.SOLVER_OPTIONS == {n: s.choices() for n, s in SOLVERS.items()}
    integer = {(n, f.name) for n, s in SOLVERS.items() for f in fields(s.options)
               if f.metadata.get("integer")}
    assert integer == set(names.INTEGER_OPTIONS)


def test_light_names_are_the_registry():
    assert names.METHODS == tuple(SOLVERS)
    registry_values = {k: set(v) for s in SOLVERS.values() for k, v in s.choices().items()}
    assert registry_values["sampling"] == set(names.SAMPLINGS)
    assert registry_values["dual_step"] == set(names.DUAL_STEPS)


def test_workflow_wildcards_accept_exactly_the_registry(tmp_path):
    """The run rule's solver and options wildcards match every registered solver and tag
    that the default plan uses, and nothing that is not registered."""
    from pdsparse.repro.config import load_config
    from pdsparse.repro.papers.faceoff.plan import plan

    cfg = load_config(REPO / "config" / "config.yaml", REPO / "workflow" / "schemas" /
                      "config.schema.yaml")
    # every solver with every value of each option (the others at their first value): every
    # value a tag can hold, without the product of all options (minutes of planning)
    combos = {name: _each_value(spec.choices()) for name, spec in SOLVERS.items()}
    cfg["faceoff"]["solvers"] = [{"method": name, **options}
                                 for name, options_list in combos.items()
                                 for options in options_list]
    from pdsparse.data.registry import load_registry

    p = plan(cfg, load_registry(REPO / "config" / "datasets.yaml"), available=lambda n: False)
    assert {r.solver for r in p.runs} == set(SOLVERS)
    tags = {(r.solver, r.options_tag) for r in p.runs}
    expected = {(name, SOLVERS[name].tag(options))
                for name, options_list in combos.items() for options in options_list}
    assert tags == expected


def _each_value(choices: dict) -> list[dict]:
    """Option settings that give each option each of its values once, the others at their
    first value (one setting when a solver has no options)."""
    first = {key: values[0] for key, values in choices.items()}
    settings = [first]
    for key, values in choices.items():
        settings += [{**first, key: value} for value in values[1:]]
    return settings


@pytest.mark.skipif(not (Path(sys.executable).parent / "snakemake").exists(),
                    reason="snakemake is not installed")
def test_run_rule_wildcard_is_the_registry(tmp_path):
    """`snakemake` refuses a run file of an unregistered solver (no rule makes it)."""
    wd = tmp_path / "wd"
    (wd / "config").mkdir(parents=True)
    for f in (REPO / "config").iterdir():
        (wd / "config" / f.name).write_bytes(f.read_bytes())
    target = ("results/runs/faceoff/figure1a/wc_general_square+avg_example_norm__logistic__"
              "l2-1_n/{}/importance.parquet")
    snakemake = str(Path(sys.executable).parent / "snakemake")
    base = [snakemake, "-s", str(REPO / "Snakefile"), "-d", str(wd), "-n"]
    ok = subprocess.run([*base, target.format("primal_rcd")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = subprocess.run([*base, target.format("tertiary_rcd")], capture_output=True,
                         text=True)
    assert bad.returncode != 0 and "MissingRuleException" in bad.stdout + bad.stderr
