"""Unit tests of pdsparse.repro.config: schema validation messages and the Face-Off plan."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pdsparse.data.registry import DatasetSpec
from pdsparse.errors import ConfigError
from pdsparse.repro.config import (
    data_availability,
    l2_tag,
    load_config,
    skipped_message,
    validate_config,
)

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
    # solver options are not the schema's: their defaults and checks are the registry's
    assert cfg["faceoff"]["solvers"][0] == {"method": "dual_rcd"}
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
            lambda c: c["faceoff"]["solvers"].append({"method": "primal_rdc"}),
            "].method: 'primal_rdc' is not one of",
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
        (  # --config 'faceoff={max_epochs:-5}': YAML reads one key 'max_epochs:-5', no value
            lambda c: c["faceoff"].update(yaml.safe_load("{max_epochs:-5}")),
            "unknown key 'faceoff.max_epochs:-5': YAML needs a space after the colon, write "
            "'max_epochs: -5'",
        ),
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
    # an uncompressed set (cod-rna) may be in the mirror bzip2-compressed
    c = DatasetSpec("cod-rna", "https://example.org/cod-rna", "cod-rna", "none", "binary")
    assert data_availability(c, raw, mirror, False) is None
    (mirror / "cod-rna.bz2").write_bytes(b"x")
    assert data_availability(c, raw, mirror, False) == "mirror"


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


def test_skipped_message():
    msg = skipped_message([("Figure 1d", "leu")], {"leu": spec("leu")}, "data/raw")
    assert "Figure 1d: leu" in msg and "PDSPARSE_DATA_MIRROR" in msg
    assert "leu.bz2" in msg and "--config 'data={download: true}'" in msg
    assert skipped_message([], {}, "data/raw") == ""


def test_skipped_message_suggests_the_plain_download_and_the_mirrors_file_names():
    """Issue 29: the message suggested --configfile config/paper.yaml (the full grids, 45-55
    CPU hours) to turn on downloads, and named cod-rna, which the mirror holds as
    cod-rna.bz2."""
    from pdsparse.data.registry import load_registry

    registry = load_registry(REPO / "config" / "datasets.yaml")
    msg = skipped_message([("Figure 1c", "cod-rna")], registry, "data/raw")
    assert "paper.yaml" not in msg
    assert "snakemake --cores 2 --config 'data={download: true}'" in msg
    assert "holding cod-rna.bz2 (or cod-rna)" in msg
    assert "data/raw/ as cod-rna.txt" in msg


def test_the_effective_config_job_keeps_its_params_to_a_hash():
    """Issue 29: adding a --configfile printed a 10 KB line, the job's params being the whole
    config (dumped twice). Its one param is now the config's digest; the file holds it."""
    import json

    from pdsparse.repro.config import config_digest

    rule = (REPO / "workflow" / "rules" / "report.smk").read_text()
    block = rule.split("rule effective_config:")[1].split("\nrule ")[0]
    # the params directive up to the next one (snakefmt orders directives its own way)
    params = re.split(r"\n    \w+:", block.split("    params:")[1])[0]
    assert "json.dumps" not in params and "config_digest(config)" in params
    cfg = {"faceoff": {"max_epochs": 5}, "data": {"download": False}}
    digest = config_digest(cfg)
    assert len(digest) == 64 and digest == config_digest(json.loads(json.dumps(cfg)))
    assert digest != config_digest({**cfg, "data": {"download": True}})
