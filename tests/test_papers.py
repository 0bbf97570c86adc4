"""The papers as plans: pdsparse.repro.plan (the common types) and papers.faceoff."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest

from pdsparse.data.prepare import Recipe
from pdsparse.errors import ConfigError
from pdsparse.repro.config import load_config
from pdsparse.repro.papers import PAPERS, plans
from pdsparse.repro.papers.faceoff.figures import figure2_cells
from pdsparse.repro.papers.faceoff.plan import plan
from pdsparse.repro.plan import DataSpec, Generator, ProblemSpec, StatsSpec

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
REGISTRY = {
    name: SimpleNamespace(name=name, filename=f"{name}.bz2", raw_filename=f"{name}.bz2")
    for name in ("news20.binary", "leu", "mnist", "news20", "duke", "ijcnn1.tr", "ijcnn1",
                 "cod-rna", "sector.scale", "sector.t.scale")
}


@pytest.fixture
def config():
    return load_config(REPO / "config" / "config.yaml", SCHEMA)


def test_names_are_file_names_and_distinct():
    rec = Recipe("avg_example_norm")
    leu = DataSpec("leu", rec)
    assert leu.key == "leu__avg_example_norm" and leu.real
    assert DataSpec("leu", Recipe("none", positive_class="1")).key == "leu__none-pos1"
    problem = ProblemSpec.of(leu, "logistic", l2="1/n")
    assert problem.tag == "leu+avg_example_norm__logistic__l2-1_n"
    assert problem.key.recipe == "avg_example_norm" and problem.l2 == "1/n"
    assert StatsSpec(leu, "1/n", 0.25).tag == "leu__avg_example_norm__l2-1_n__beta-0.25"
    assert StatsSpec(leu, "1/n", 1.0, "none").tag.endswith("__beta-1__as-none")
    gen = Generator.of("dense_gaussian", {"n": 3, "d": 2}, 1)
    assert gen == Generator.of("dense_gaussian", {"d": 2, "n": 3}, 1)  # order-free
    with pytest.raises(ConfigError, match="normalization"):
        Recipe("sideways")


def test_every_paper_module_plans(config):
    got = plans(config, REGISTRY, available=lambda name: True)
    assert set(got) == {name for name in PAPERS if name in config}


def test_figure2_cells_names_and_range():
    cells = figure2_cells({"d": 100, "n": [100, 1000, 10000], "nnz_fraction": [0.01, 0.1, 1.0]})
    assert len(cells) == 9
    names = [c.name for c in cells]
    assert names[0] == "bin_d100_n100_p0.01"
    assert "bin_d100_n10000_p1" in names
    for c in cells:
        assert max(c.d, c.n) <= c.alpha <= c.d * c.n
    # alpha below max(d, n) is dropped: 0.001 * 100 * 100 = 10 < 100
    assert figure2_cells({"d": 100, "n": [100], "nnz_fraction": [0.001]}) == []


def test_plan_offline_drops_real_items(config):
    p = plan(config, REGISTRY, available=lambda name: False)
    assert not any(d.real for d in p.data.values())
    assert set(p.experiments) == {"figure1a", "figure1b", "figure2"}
    assert ("Figure 1c", "news20.binary") in p.skipped
    assert ("Table 1 row", "leu") in p.skipped
    names = {o.name for o in p.outputs}
    assert names == {"figure1", "figure2", "figure3"}  # no table without its data
    assert "results/tables/faceoff/table1.csv" in p.stale
    assert "results/faceoff/figure1d.parquet" in p.stale
    # one run group per (experiment, data set, solver entry), every seed inside
    n_solvers = len(config["faceoff"]["solvers"])
    assert len(p.runs) == (2 + 9) * n_solvers
    assert all(r.seeds == tuple(config["faceoff"]["seeds"]) for r in p.runs)


def test_plan_with_leu_available(config):
    p = plan(config, REGISTRY, available=lambda name: name == "leu")
    assert [d.name for d in p.data.values() if d.real] == ["leu"]
    assert p.experiments["figure1d"] == ["leu+avg_example_norm__logistic__l2-1_n"]
    table1 = next(o for o in p.outputs if o.name == "table1")
    assert "results/stats/leu__avg_example_norm__l2-1_n__beta-0.25.parquet" in table1.inputs
    assert "results/stats/leu__avg_example_norm__l2-1_n__beta-0.25__as-none.parquet" in (
        table1.inputs)
    # the variant with the stored normalization needs no recomputation under another one
    assert "results/stats/leu__avg_example_norm__l2-1_n__beta-1.parquet" in table1.inputs
    assert [s for s in p.skipped if s[1] == "leu"] == []
    fig1 = next(o for o in p.outputs if o.name == "figure1")
    assert "results/faceoff/figure1d.parquet" in fig1.inputs


def test_plan_require_all_keeps_everything(config):
    config["data"]["require_all"] = True
    p = plan(config, REGISTRY, available=lambda name: False)
    assert p.skipped == [] and p.stale == []
    assert sorted(d.name for d in p.data.values() if d.real) == ["leu", "news20.binary"]


def test_plan_runs_and_paths(config):
    config["faceoff"]["seeds"] = [0, 3]
    config["faceoff"]["figure1"]["panels"]["a"]["max_epochs"] = 99
    p = plan(config, REGISTRY, available=lambda name: False)
    run = p.runs_of("figure1a")[0]
    assert run.path == (
        "results/runs/faceoff/figure1a/wc_general_square+avg_example_norm__logistic__l2-1_n/"
        "primal_rcd/importance.parquet"
    )
    assert run.seeds == (0, 3) and run.max_epochs == 99
    dual = [r for r in p.runs_of("figure2") if r.solver == "dual_rcd"]
    assert {dict(r.options)["dual_step"] for r in dual} == {
        s.get("dual_step", "fixed") for s in config["faceoff"]["solvers"]
        if s["method"] == "dual_rcd"}
    # precedence: panel > synthetic data set > faceoff.max_epochs
    tall = config["faceoff"]["synthetic"]["wc_general_tall"].get("max_epochs")
    assert p.runs_of("figure1b")[0].max_epochs == (tall or config["faceoff"]["max_epochs"])
    assert p.runs_of("figure2")[0].max_epochs == config["faceoff"]["max_epochs"]
    cell = p.data["bin_d100_n1000_p0.1__avg_example_norm"]
    assert cell.generator.kind == "worst_case_binary_dual"
    assert dict(cell.generator.params) == {"d": 100, "n": 1000, "alpha": 10000}


def test_plan_errors(config):
    bad = copy.deepcopy(config)
    bad["faceoff"]["figure1"]["panels"]["c"]["dataset"] = "news21"
    with pytest.raises(ConfigError, match="news21"):
        plan(bad, REGISTRY, available=lambda name: True)
    bad = copy.deepcopy(config)
    bad["faceoff"]["synthetic"]["leu"] = {"kind": "dense_gaussian", "params": {}}
    with pytest.raises(ConfigError, match="faceoff.synthetic.leu"):
        plan(bad, REGISTRY, available=lambda name: True)
    bad = copy.deepcopy(config)
    bad["faceoff"]["solvers"].append(dict(bad["faceoff"]["solvers"][0]))
    with pytest.raises(ConfigError, match="same run"):
        plan(bad, REGISTRY, available=lambda name: True)
    # solver options are validated by the solver registry, naming the entry
    bad = copy.deepcopy(config)
    bad["faceoff"]["solvers"][0]["samplng"] = "uniform"
    with pytest.raises(ConfigError, match=r"faceoff.solvers\[0\]: primal_rcd: unknown option "
                       r"'samplng' \(did you mean 'sampling'\?\)"):
        plan(bad, REGISTRY, available=lambda name: True)
