"""PDBFW data recipes: class filters (MNIST 0 vs 9), label groups (news20 halves), tags.

Tiny LIBSVM files written in the test; the registry entries of the PDBFW sets are checked
against the paper's Table 2 where the paper fixes them.
"""

from __future__ import annotations

import bz2
import re
from pathlib import Path

import numpy as np
import pytest

from pdsparse.data.prepare import Recipe, binary_labels, prepare, prepare_synthetic
from pdsparse.data.registry import DatasetSpec, load_registry
from pdsparse.data.store import load_dataset
from pdsparse.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[1]


def multiclass_file(tmp_path, n=30, d=6, seed=0):
    """LIBSVM file with labels 0..4 (row i has label i % 5), nonnegative sparse values."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 7, (n, d)) * (rng.random((n, d)) < 0.7)
    X[:, 0] = np.arange(n) + 1  # every row nonempty, and row i recognisable by feature 1
    y = np.arange(n) % 5
    lines = [" ".join([str(c)] + [f"{j + 1}:{v}" for j, v in enumerate(row) if v])
             for c, row in zip(y, X, strict=True)]
    path = tmp_path / "mc.bz2"
    path.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    spec = DatasetSpec(name="mc", url="https://example.invalid/mc.bz2", filename="mc.bz2",
                       compression="bz2", task="multiclass", n=n, d=d,
                       nnz=int((X != 0).sum()),
                       label_counts={float(c): int((y == c).sum()) for c in range(5)})
    return path, spec, X.astype(float), y.astype(float)


# ------------------------------------------------------------------------------- tags


def test_existing_recipe_tags_do_not_change():
    """Face-Off's and DGPD's processed files keep their names."""
    assert Recipe().tag() == "avg_example_norm"
    assert Recipe("unit_rows").tag() == "unit_rows"
    assert Recipe("none", "3").tag() == "none-pos3"
    assert Recipe("none", 3).tag() == "none-pos3"
    assert Recipe("none", features="rb", n_grids=100, sigma=5.0, test_rows=297).tag() == \
        "none-rb100-sig5-ms0-te297-ss0"
    assert Recipe("none", features="rf", n_features=1000, sigma=3.0, test_rows=297).tag() == \
        "none-rf1000-sig3-ms0-te297-ss0"
    assert Recipe("none", features="rb", n_grids=100, sigma=39.5, test_rows=2000,
                  subsample=10000).tag() == "none-rb100-sig39.5-ms0-te2000-sub10000-ss0"
    assert Recipe("unit_rows", test_rows=1000).tag() == "unit_rows-te1000-ss0"
    # the recipes of config/config.yaml, with the tags they had before the PDBFW fields (the
    # full-size sets: as they were introduced, with the test_file field)
    import yaml

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    before = {"digits-rb": "none-rb100-sig5-ms0-te297-ss0",
              "digits-rf": "none-rf1000-sig3-ms0-te297-ss0",
              "mnist-rb-digit0": "none-pos0-rb1000-sig39.5-ms0-te2000-ss0",
              "sector-libsvm": "unit_rows-tfsector.t.scale"}
    assert set(before) == set(config["dgpd"]["datasets"])
    for name, tag in before.items():
        recipe = Recipe(**config["dgpd"]["datasets"][name]["recipe"])
        assert recipe.tag() == tag and recipe.classes is None
    face_off = Recipe(config["faceoff"]["normalization"])
    assert face_off.tag() == "avg_example_norm"


def test_class_and_group_tags_are_safe_canonical_and_distinct():
    assert Recipe("none", classes=[0, 9]).tag() == "none-cl0+9"
    assert Recipe("none", classes=[9.0, "0"]) == Recipe("none", classes=(0, 9))
    assert Recipe("unit_rows", positive_class=[3, 1, 2]).tag() == "unit_rows-pos1+2+3"
    assert Recipe("none", positive_class=[3]).tag() == Recipe("none", "3").tag() == "none-pos3"
    assert Recipe("none", classes=[0, 9]).classes == ("0", "9")
    recipes = [
        Recipe("none"),
        Recipe("none", classes=[0, 9]),
        Recipe("none", classes=[0, 8]),
        Recipe("none", classes=[0, 9, 8]),
        Recipe("none", classes=[0, 9], positive_class=0),
        Recipe("none", classes=[0, 9], positive_class=9),
        Recipe("none", classes=[-1, 1.5]),
        Recipe("none", positive_class=[1, 2]),
        Recipe("none", positive_class=[12]),
        Recipe("none", positive_class=[1, 2, 3]),
        Recipe("none", "1"),
        Recipe("none", classes=[0, 9], features="rb", n_grids=100, sigma=10.729),
        Recipe("none", classes=[0, 9], features="rb", n_grids=100, sigma=10.729, test_rows=5),
        Recipe("unit_rows", classes=[0, 9]),
    ]
    tags = [r.tag() for r in recipes]
    assert len(set(tags)) == len(tags), tags
    assert tags[11] == "none-cl0+9-rb100-sig10.729-ms0"
    assert tags[6] == "none-cl-1+1.5"
    for tag in tags:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", tag) and "__" not in tag
    # distinct settings in distinct objects; one setting, however written, one tag
    assert len(set(recipes)) == len(recipes)
    assert Recipe("none", classes=[1, 2, 3]).to_dict()["classes"] == ("1", "2", "3")


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"classes": [0]}, "at least two labels"),
        ({"classes": []}, "empty list"),
        ({"classes": [0, 0.0]}, "listed twice"),
        ({"classes": ["a", 1]}, "'a' is not a label"),
        ({"classes": [1, float("nan")]}, "not a label"),
        ({"classes": 9}, "must be a list"),
        ({"classes": "09"}, "must be a list"),
        ({"classes": [True, 2]}, "not a label"),
        ({"classes": [0, 9], "positive_class": 3}, "positive_class 3 is not among classes"),
        ({"classes": [0, 9], "positive_class": [0, 9]}, "covers every one of classes"),
        ({"positive_class": []}, "positive_class is an empty list"),
        ({"positive_class": [1, "x"]}, "'x' is not a label"),
        ({"positive_class": "a/b"}, "is not a label"),
    ],
)
def test_bad_class_settings_name_the_setting(kwargs, needle):
    with pytest.raises(ConfigError, match=needle):
        Recipe("none", **kwargs)


# -------------------------------------------------------------------------- labels


def test_binary_labels_of_groups_and_pairs():
    y = np.array([0.0, 9.0, 3.0, 9.0, 1.0])
    np.testing.assert_array_equal(binary_labels(y, Recipe("none", positive_class=[1, 3])),
                                  [-1, -1, 1, -1, 1])
    np.testing.assert_array_equal(binary_labels(y, Recipe("none", positive_class=9)),
                                  [-1, 1, -1, 1, -1])
    pair = np.array([9.0, 0.0, 0.0])
    np.testing.assert_array_equal(binary_labels(pair, Recipe("none", classes=[0, 9])), [1, -1, -1])
    np.testing.assert_array_equal(
        binary_labels(pair, Recipe("none", classes=[0, 9], positive_class=0)), [-1, 1, 1])
    assert binary_labels(y, Recipe("none")) is None
    assert binary_labels(y, Recipe("none", classes=[0, 1, 9])) is None  # stays multiclass
    with pytest.raises(DataError, match="positive_class 5 does not occur"):
        binary_labels(y, Recipe("none", positive_class=[1, 5]))
    with pytest.raises(DataError, match="covers every label"):
        binary_labels(np.array([1.0, 2.0, 1.0]), Recipe("none", positive_class=[1, 2]))


# ------------------------------------------------------------------------ prepare


def test_prepare_keeps_the_listed_classes_in_file_order(tmp_path):
    raw, spec, X, y = multiclass_file(tmp_path)
    recipe = Recipe("none", classes=[4, 1])
    out = tmp_path / f"mc__{recipe.tag()}.npz"
    prepare(raw, spec, recipe, out)
    ds = load_dataset(out)
    rows = np.flatnonzero((y == 1) | (y == 4))
    np.testing.assert_array_equal(ds.A.toarray(), X[rows])  # the rows themselves, in order
    np.testing.assert_array_equal(ds.b, np.where(y[rows] == 4, 1.0, -1.0))  # larger label +1
    meta = ds.meta
    assert meta["task"] == "binary" and meta["original_task"] == "multiclass"
    assert meta["classes"] == {"kept": ["1", "4"], "n_file": 30, "n_kept": 12,
                               "rows": meta["classes"]["rows"]}
    assert meta["raw_label_counts"] == {str(c): 6 for c in range(5)}  # the whole file
    assert meta["label_counts"] == {"-1": 6, "1": 6}
    assert meta["recipe_tag"] == "none-cl1+4" and meta["n"] == 12


def test_prepare_class_filter_comes_before_split_and_feature_map(tmp_path):
    raw, spec, X, y = multiclass_file(tmp_path)
    recipe = Recipe("none", classes=[0, 2, 3], positive_class=2, features="rb", n_grids=7,
                    sigma=2.0, test_rows=4, split_seed=1)
    ds = prepare(raw, spec, recipe, tmp_path / "rb.npz")
    kept = np.flatnonzero(np.isin(y, [0, 2, 3]))  # 18 rows
    assert ds.n + ds.n_test == kept.size == 18 and ds.n_test == 4
    # split positions index the kept rows (the split never sees the other labels)
    test = np.array(ds.meta["split"]["test_rows"])
    assert ds.meta["split"]["n_file"] == 18 and test.max() < 18
    train = np.setdiff1d(np.arange(18), test)
    np.testing.assert_array_equal(ds.b, np.where(y[kept[train]] == 2, 1.0, -1.0))
    np.testing.assert_array_equal(ds.b_test, np.where(y[kept[test]] == 2, 1.0, -1.0))
    # input scaling over the kept training rows only
    assert ds.meta["features"]["input_scale"]["divisor"] == X[kept[train]].max()
    np.testing.assert_array_equal(np.diff(ds.A.indptr), 7)


def test_prepare_label_group_and_errors(tmp_path):
    raw, spec, X, y = multiclass_file(tmp_path)
    ds = prepare(raw, spec, Recipe("unit_rows", positive_class=[0, 3]), tmp_path / "g.npz")
    np.testing.assert_array_equal(ds.b, np.where(np.isin(y, [0, 3]), 1.0, -1.0))
    assert ds.meta["positive_class"] == "0+3" and ds.meta["task"] == "binary"
    np.testing.assert_allclose(np.linalg.norm(ds.A.toarray(), axis=1), 1.0)
    out = tmp_path / "bad.npz"
    with pytest.raises(DataError, match="'mc'.*classes 7 do not occur"):
        prepare(raw, spec, Recipe("none", classes=[0, 7]), out)
    with pytest.raises(DataError, match="'mc'.*positive_class 8 does not occur"):
        prepare(raw, spec, Recipe("none", positive_class=[0, 8]), out)
    assert not out.exists()
    # three classes without positive_class stay class labels
    mc = prepare(raw, spec, Recipe("none", classes=[0, 1, 2]), tmp_path / "m.npz")
    assert mc.meta["task"] == "multiclass" and set(mc.b) == {0.0, 1.0, 2.0}


def test_digits_zero_vs_nine_stand_in(tmp_path):
    recipe = Recipe("none", classes=[0, 9], features="rb", n_grids=5, sigma=1.72)
    ds = prepare_synthetic("digits", "digits", {}, 0, recipe, tmp_path / "d.npz")
    assert ds.n == 358 and ds.meta["task"] == "binary"  # 178 zeros, 180 nines
    assert ds.meta["label_counts"] == {"-1": 178, "1": 180}
    assert ds.meta["classes"]["n_file"] == 1797
    assert ds.meta["features"]["input_scale"]["divisor"] == 16.0
    np.testing.assert_array_equal(np.diff(ds.A.indptr), 5)


# ------------------------------------------------------------------------- registry


def test_registry_pdbfw_sets_match_table_2():
    reg = load_registry(REPO / "config" / "datasets.yaml")
    table2 = {"duke": (44, 7129, 313676), "rcv1.binary": (20242, 47236, 1498952),
              "news20.binary": (19996, 1355191, 9097916)}
    for name, (n, d, nnz) in table2.items():
        spec = reg[name]
        assert (spec.n, spec.d, spec.nnz) == (n, d, nnz)
        assert "pdbfw" in spec.papers
    for name in ("ijcnn1", "ijcnn1.tr", "cod-rna", "mnist", "news20"):
        assert "pdbfw" in reg[name].papers, name
    assert reg["ijcnn1"].n == 49990 and reg["cod-rna"].n == 59535
    # MNIST 0 vs 9: every training row of digits 0 and 9 (11,872 = Table 2's samples)
    assert reg["mnist"].label_counts[0.0] + reg["mnist"].label_counts[9.0] == 11872
