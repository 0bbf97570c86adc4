"""Tests of the data-set registry (config/datasets.yaml and pdsparse.data.registry)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pdsparse.data.registry import DatasetSpec, load_registry, parse_registry
from pdsparse.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
SHA = "a" * 64


def entry(**over):
    base = {
        "url": "https://example.org/data/toy.bz2",
        "filename": "toy.bz2",
        "compression": "bz2",
        "task": "binary",
        "n": 3,
        "d": 4,
        "nnz": 5,
        "sha256": None,
        "sha256_text": SHA,
        "label_counts": {-1: 1, 1: 2},
        "description": "toy",
        "papers": ["faceoff"],
    }
    base.update(over)
    return base


def write(tmp_path: Path, doc) -> Path:
    path = tmp_path / "datasets.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_valid_entry_parses(tmp_path):
    reg = load_registry(write(tmp_path, {"datasets": {"toy": entry()}}))
    spec = reg["toy"]
    assert isinstance(spec, DatasetSpec)
    assert (spec.n, spec.d, spec.nnz) == (3, 4, 5)
    assert spec.label_counts == {-1.0: 1, 1.0: 2}
    assert spec.raw_filename == "toy.bz2"
    assert spec.text_hashes == (SHA,)


def test_unknown_shape_allowed(tmp_path):
    e = entry(n=None, d=None, nnz=None, sha256_text=None, label_counts=None)
    del e["description"], e["papers"]
    spec = load_registry(write(tmp_path, {"datasets": {"toy": e}}))["toy"]
    assert spec.n is None and spec.d is None and spec.nnz is None
    assert spec.papers == [] and spec.description == ""


def test_uncompressed_raw_name(tmp_path):
    e = entry(filename="cod-rna", compression="none", url="https://example.org/cod-rna")
    spec = load_registry(write(tmp_path, {"datasets": {"cod-rna": e}}))["cod-rna"]
    assert spec.raw_filename == "cod-rna.txt"


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"sizee": 3}, "unknown key(s) sizee"),
        ({"n": "38"}, "'n' must be an integer"),
        ({"n": True}, "'n' must be an integer"),
        ({"d": 0}, "'d' must be >= 1"),
        ({"nnz": 1.5}, "'nnz' must be an integer"),
        ({"compression": "gz"}, "'compression' must be one of"),
        ({"compression": "none"}, "ends in .bz2"),
        ({"task": "regression"}, "'task' must be one of"),
        ({"sha256": "xyz"}, "'sha256' must be 64 lowercase hex"),
        ({"sha256_text": SHA.upper()}, "'sha256_text' must be 64 lowercase hex"),
        ({"url": "ftp://x/toy.bz2"}, "'url' must start with"),
        ({"filename": "a/toy.bz2"}, "bare file name"),
        ({"papers": "faceoff"}, "'papers' must be a list"),
        ({"label_counts": {"pos": 3}}, "label 'pos' is not a number"),
        ({"label_counts": {1: -2}}, "must be >= 0"),
    ],
)
def test_bad_entries_name_file_dataset_and_key(tmp_path, over, needle):
    path = write(tmp_path, {"datasets": {"toy": entry(**over)}})
    with pytest.raises(ConfigError) as err:
        load_registry(path)
    msg = str(err.value)
    assert str(path) in msg
    assert "'toy'" in msg
    assert needle in msg


def test_missing_required_key(tmp_path):
    e = entry()
    del e["url"]
    with pytest.raises(ConfigError, match=r"'toy'.*missing required key\(s\) url"):
        load_registry(write(tmp_path, {"datasets": {"toy": e}}))


def test_compression_bz2_needs_bz2_name(tmp_path):
    path = write(tmp_path, {"datasets": {"toy": entry(filename="toy.txt")}})
    with pytest.raises(ConfigError, match="does not end in .bz2"):
        load_registry(path)


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ([1, 2], "must be a mapping"),
        ({"sets": {}}, "unknown top-level key"),
        ({"datasets": {}}, "non-empty mapping"),
        ({"datasets": {"bad name!": entry()}}, "dataset names must match"),
        ({"datasets": {"toy": [1]}}, "entry must be a mapping"),
    ],
)
def test_bad_structure(tmp_path, doc, needle):
    path = write(tmp_path, doc)
    with pytest.raises(ConfigError, match=needle) as err:
        load_registry(path)
    assert str(path) in str(err.value)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_registry(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets: {toy: [\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_registry(bad)


def test_parse_registry_source_name():
    with pytest.raises(ConfigError, match="^cfg: "):
        parse_registry({"datasets": {"toy": entry(n=-1)}}, source="cfg")


def test_project_registry_is_valid_and_consistent():
    reg = load_registry(REPO / "config" / "datasets.yaml")
    required = {
        "news20.binary": (19996, 1355191, 9097916),
        "leu": (38, 7129, 270902),
        "leu.t": (34, 7129, 242386),
        "duke": (44, 7129, 313676),
        "colon-cancer": (62, 2000, 124000),
        "rcv1.binary": (20242, 47236, 1498952),
        "ijcnn1.tr": (35000, 22, 454999),
        "cod-rna": (59535, 8, 476222),
        "gisette_scale.t": (1000, 5000, 4971000),
        "news20": (15935, 62061, 1272569),
    }
    for name, shape in required.items():
        spec = reg[name]
        assert (spec.n, spec.d, spec.nnz) == shape, name
        assert spec.url.startswith("https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/")
        assert spec.url.endswith("/" + spec.filename)
        kind = "multiclass" if spec.task == "multiclass" else "binary"
        assert f"/datasets/{kind}/" in spec.url
        assert spec.sha256 is None  # canonical download hashes are not known
    assert reg["news20"].task == "multiclass"
    assert reg["leu"].sha256_text == (
        "95d1d089712937c6661d3beb218bcb02be5b0f7c17c13cbdbb19787b1fce87f8"
    )


def test_project_registry_has_the_dgpd_sets():
    reg = load_registry(REPO / "config" / "datasets.yaml")
    shapes = {
        "mnist": (60000, 780, 8994156),
        "mnist.t": (10000, 780, 1511219),
        "aloi": (108000, 128, None),
        "rcv1.multiclass": (15564, 47236, None),
        "sector.scale": (6412, 55197, 1045412),
        "sector.t.scale": (3207, 55197, 524492),
        "news20": (15935, 62061, 1272569),
    }
    for name, shape in shapes.items():
        spec = reg[name]
        assert (spec.n, spec.d, spec.nnz) == shape, name
        assert spec.task == "multiclass" and "/datasets/multiclass/" in spec.url, name
        assert spec.url.endswith("/" + spec.filename) and spec.sha256 is None, name
    assert sum(reg["mnist"].label_counts.values()) == 60000
    assert sum(reg["mnist.t"].label_counts.values()) == 10000
    assert reg["mnist"].mirror_sha256_text == (
        "c42b75fcb54dda11d97af9bd6e3950b41c93b4f44eeb9608aa115f79a5979e88"
    )
    assert "dgpd" in reg["mnist"].papers and "dgpd" in reg["aloi"].papers
    # the paper's own sizes are recorded where they differ from the files
    assert "58,000" in reg["mnist"].description and "90,000" in reg["aloi"].description
    assert "7,793" in reg["sector.scale"].description
    assert sum(reg["sector.scale"].label_counts.values()) == 6412
    assert sum(reg["sector.t.scale"].label_counts.values()) == 3207
    assert "uncertain" in reg["rcv1.multiclass"].description


def test_a_local_file_entry_needs_only_its_path_and_task(tmp_path):
    """Issue 20: one's own file in the registry without a made-up URL."""
    from pdsparse.data.registry import parse_registry

    own = tmp_path / "mine.txt"
    spec = parse_registry({"datasets": {"mine": {"path": str(own), "task": "binary"}}})["mine"]
    assert (spec.filename, spec.compression, spec.path) == ("mine.txt", "none", str(own))
    assert spec.url == own.absolute().as_uri()
    packed = parse_registry({"datasets": {"m": {"path": "d/m.bz2", "task": "multiclass",
                                                "n": 10}}})["m"]
    assert packed.compression == "bz2" and packed.n == 10
    for entry, needle in (({"path": "a.txt"}, "missing required key.*task"),
                          ({"path": "a.txt", "task": "binary", "url": "https://x/a"},
                           "either 'url'.*or 'path'"),
                          ({"path": "a.gz", "task": "binary"}, "a .gz file"),
                          ({"task": "binary"}, r"or 'path' and 'task'")):
        with pytest.raises(ConfigError, match=needle):
            parse_registry({"datasets": {"x": entry}})
