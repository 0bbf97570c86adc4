"""Unit tests of pdsparse.config: schema validation messages and the Face-Off plan."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pdsparse.config import (
    data_availability,
    figure2_cells,
    l2_tag,
    load_config,
    plan_faceoff,
    skipped_message,
    validate_config,
)
from pdsparse.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def spec(name, filename=None):
    filename = filename or f"{name}.bz2"
    return SimpleNamespace(name=name, filename=filename, raw_filename=filename)


REGISTRY = {"news20.binary": spec("news20.binary"), "leu": spec("leu")}


@pytest.fixture
def config():
    return load_config(REPO / "config" / "config.yaml", SCHEMA)


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_shipped_configs_are_valid(name):
    cfg = load_config(REPO / "config" / name, SCHEMA)
    assert cfg["faceoff"]["l2"] == "1/n"
    assert cfg["faceoff"]["normalization"] == "avg_example_norm"
    assert cfg["faceoff"]["figure2"]["d"] == 100
    assert cfg["faceoff"]["figure3"]["n"] == 1000
    assert cfg["faceoff"]["table1"]["datasets"] == ["news20.binary", "leu"]


def test_paper_config_downloads_and_requires_all():
    cfg = load_config(REPO / "config" / "paper.yaml", SCHEMA)
    assert cfg["data"]["download"] is True and cfg["data"]["require_all"] is True
    base = load_config(REPO / "config" / "config.yaml", SCHEMA)
    assert base["data"]["download"] is False and base["data"]["require_all"] is False
    assert base["data"]["mirror"] is None


def test_defaults_are_filled():
    cfg = {
        "faceoff": {
            "solvers": [{"method": "dual_rcd"}],
            "figure1": {"panels": {"a": {"dataset": "x"}}},
            "figure2": {"d": 10, "n": [10], "nnz_fraction": [1.0]},
            "figure3": {"n": 10},
            "table1": {"datasets": ["x"]},
        },
        "data": {},
    }
    validate_config(cfg, SCHEMA)
    assert cfg["data"]["raw_dir"] == "data/raw"
    assert cfg["data"]["download"] is False
    assert cfg["faceoff"]["reference"]["rtol"] > 0
    assert cfg["faceoff"]["solvers"][0]["sampling"] == "importance"
    assert cfg["faceoff"]["seeds"] == [0]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda c: c.update(faceof={}), "unknown key 'faceof' (did you mean 'faceoff'?)"),
        (lambda c: c["data"].update(mirorr="x"), "unknown key 'data.mirorr'"),
        (lambda c: c["faceoff"].update(max_epochs="ten"), "faceoff.max_epochs: 'ten'"),
        (lambda c: c["faceoff"].update(seeds=[-1]), "faceoff.seeds[0]"),
        (lambda c: c["faceoff"].update(l2="1/m"), "faceoff.l2: invalid value '1/m'"),
        (lambda c: c["data"].update(download="yes"), "data.download: 'yes' is not of type"),
        (
            lambda c: c["faceoff"]["solvers"].append({"method": "primal_rcd", "dual_step": "x"}),
            "].dual_step: 'x' is not one of",
        ),
        (
            lambda c: c["faceoff"]["figure1"]["panels"]["a"].update(titel="x"),
            "unknown key 'faceoff.figure1.panels.a.titel'",
        ),
        (
            lambda c: c["faceoff"]["synthetic"]["wc_general_square"].update(kind="nope"),
            "faceoff.synthetic.wc_general_square.kind",
        ),
        (lambda c: c["faceoff"].pop("figure2"), "'figure2' is a required property"),
    ],
)
def test_validation_names_the_key(config, mutate, needle):
    bad = copy.deepcopy(config)
    mutate(bad)
    with pytest.raises(ConfigError) as exc:
        validate_config(bad, SCHEMA, source="test.yaml")
    assert needle in str(exc.value)
    assert "test.yaml" in str(exc.value)


def test_load_config_merges_later_files(tmp_path):
    over = tmp_path / "over.yaml"
    over.write_text(yaml.safe_dump({"faceoff": {"max_epochs": 7}}))
    cfg = load_config([REPO / "config" / "config.yaml", over], SCHEMA)
    assert cfg["faceoff"]["max_epochs"] == 7
    assert cfg["faceoff"]["l2"] == "1/n"


def test_load_config_bad_yaml(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("data: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        load_config(bad, SCHEMA)


def test_l2_tag():
    assert l2_tag("1/n") == "1_n"
    assert l2_tag("0.1/n") == "0.1_n"
    assert l2_tag(0.001) == "0.001"
    with pytest.raises(ConfigError):
        l2_tag("x/n")
    with pytest.raises(ConfigError):
        l2_tag(-1.0)


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
    plan = plan_faceoff(config, REGISTRY, available=lambda name: False)
    assert plan.real == []
    assert sorted(plan.panels) == ["a", "b"]
    assert set(plan.experiments) == {"figure1a", "figure1b", "figure2"}
    assert plan.table1 == []
    assert ("Figure 1c", "news20.binary") in plan.skipped
    assert ("Table 1 row", "leu") in plan.skipped
    # 2 panels + 9 cells, every configured solver, every seed
    n_solvers = len(config["faceoff"]["solvers"])
    assert len(plan.runs) == (2 + 9) * n_solvers * len(config["faceoff"]["seeds"])
    msg = skipped_message(plan, REGISTRY, "data/raw")
    assert "Figure 1d: leu" in msg and "PDSPARSE_DATA_MIRROR" in msg
    assert "leu.bz2" in msg and "data.download: true" in msg


def test_plan_with_leu_available(config):
    plan = plan_faceoff(config, REGISTRY, available=lambda name: name == "leu")
    assert plan.real == ["leu"]
    assert plan.panels["d"] == {
        "dataset": "leu",
        "title": config["faceoff"]["figure1"]["panels"]["d"]["title"],
        "experiment": "figure1d",
    }
    assert plan.table1 == ["leu"]
    assert ("leu", "none", 0.25) in plan.table1_variants
    assert [s for s in plan.skipped if s[1] == "leu"] == []
    assert "leu" in plan.datasets


def test_plan_require_all_keeps_everything(config):
    config["data"]["require_all"] = True
    plan = plan_faceoff(config, REGISTRY, available=lambda name: False)
    assert plan.skipped == []
    assert plan.real == ["news20.binary", "leu"]
    assert skipped_message(plan, REGISTRY, "data/raw") == ""


def test_plan_runs_and_paths(config):
    config["faceoff"]["seeds"] = [0, 3]
    config["faceoff"]["figure1"]["panels"]["a"]["max_epochs"] = 99
    plan = plan_faceoff(config, REGISTRY, available=lambda name: False)
    run = plan.runs_of("figure1a")[0]
    assert run.path == (
        "results/runs/faceoff/figure1a/wc_general_square/primal_rcd/importance-none-seed0.parquet"
    )
    dual = [r for r in plan.runs_of("figure2") if r.method == "dual_rcd"]
    assert {r.dual_step for r in dual} == {
        s.get("dual_step", "fixed") for s in config["faceoff"]["solvers"]
        if s["method"] == "dual_rcd"}
    assert {r.seed for r in dual} == {0, 3}
    assert plan.max_epochs[("figure1a", "wc_general_square")] == 99
    # precedence: panel > synthetic data set > faceoff.max_epochs
    tall = config["faceoff"]["synthetic"]["wc_general_tall"].get("max_epochs")
    assert plan.max_epochs[("figure1b", "wc_general_tall")] == (
        tall or config["faceoff"]["max_epochs"]
    )
    assert plan.max_epochs[("figure2", "bin_d100_n100_p1")] == config["faceoff"]["max_epochs"]
    syn = plan.synthetic["bin_d100_n1000_p0.1"]
    assert syn.kind == "worst_case_binary_dual"
    assert syn.params == {"d": 100, "n": 1000, "alpha": 10000}


def test_plan_errors(config):
    bad = copy.deepcopy(config)
    bad["faceoff"]["figure1"]["panels"]["c"]["dataset"] = "news21"
    with pytest.raises(ConfigError, match="news21"):
        plan_faceoff(bad, REGISTRY, available=lambda name: True)
    bad = copy.deepcopy(config)
    bad["faceoff"]["synthetic"]["leu"] = {"kind": "dense_gaussian", "params": {}}
    with pytest.raises(ConfigError, match="faceoff.synthetic.leu"):
        plan_faceoff(bad, REGISTRY, available=lambda name: True)
    bad = copy.deepcopy(config)
    bad["faceoff"]["solvers"].append(dict(bad["faceoff"]["solvers"][0]))
    with pytest.raises(ConfigError, match="duplicate"):
        plan_faceoff(bad, REGISTRY, available=lambda name: True)


def test_data_availability(tmp_path):
    s = spec("leu")
    raw, mirror = tmp_path / "raw", tmp_path / "mirror"
    raw.mkdir()
    mirror.mkdir()
    assert data_availability(s, raw, None, False) is None
    assert data_availability(s, raw, None, True) == "download"
    (mirror / "leu.bz2").write_bytes(b"x")
    assert data_availability(s, raw, mirror, False) == "mirror"
    (raw / "leu.bz2").write_bytes(b"x")
    assert data_availability(s, raw, None, False) == "raw"


def test_strings_spelling_the_schema_type_are_converted():
    # snakemake --config parses nested values as strings; PyYAML reads 1e-10 as a string
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["faceoff"].update(max_epochs="20", tol="1e-10", seeds=["0", "3"], l2="0.5")
    cfg["data"].update(download="true")
    cfg["faceoff"]["figure3"]["d_max"] = "~"
    validate_config(cfg, SCHEMA)
    fo = cfg["faceoff"]
    assert fo["max_epochs"] == 20 and isinstance(fo["max_epochs"], int)
    assert fo["tol"] == 1e-10 and fo["seeds"] == [0, 3] and fo["l2"] == 0.5
    assert cfg["data"]["download"] is True
    assert fo["figure3"]["d_max"] is None


def test_strings_that_are_valid_strings_are_left_alone():
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["faceoff"]["l2"] = "1/n"
    cfg["faceoff"]["figure1"]["panels"]["a"]["title"] = "123"
    cfg["data"]["mirror"] = "1"  # a directory named 1 is a string setting
    validate_config(cfg, SCHEMA)
    assert cfg["faceoff"]["l2"] == "1/n"
    assert cfg["faceoff"]["figure1"]["panels"]["a"]["title"] == "123"
    assert cfg["data"]["mirror"] == "1"
    cfg["faceoff"]["max_epochs"] = "ten"
    with pytest.raises(ConfigError, match="faceoff.max_epochs: 'ten' is not of type"):
        validate_config(cfg, SCHEMA)
