"""Tests of pdsparse.data.prepare, plus an end-to-end fetch + prepare of `leu` from the mirror."""

from __future__ import annotations

import bz2
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse.data.fetch import fetch, resolve_mirror
from pdsparse.data.prepare import (
    FEATURES,
    INPUT_SCALES,
    Recipe,
    check_shape,
    prepare,
    prepare_synthetic,
    split_rows,
)
from pdsparse.data.registry import DatasetSpec, load_registry
from pdsparse.data.store import load_dataset
from pdsparse.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[1]
# 4 examples, d = 5 (feature 5 never occurs), labels {1, 2}
TEXT = b"1 1:3 2:4\n2 3:1\n2 1:1 4:-2\n1 2:2\n"


def make_spec(**over) -> DatasetSpec:
    base = dict(
        name="toy",
        url="https://example.invalid/toy.bz2",
        filename="toy.bz2",
        compression="bz2",
        task="binary",
        n=4,
        d=5,
        nnz=6,
        label_counts={1.0: 2, 2.0: 2},
    )
    base.update(over)
    return DatasetSpec(**base)


@pytest.fixture
def raw(tmp_path) -> Path:
    path = tmp_path / "toy.bz2"
    path.write_bytes(bz2.compress(TEXT))
    return path


def test_prepare_binary(tmp_path, raw):
    out = tmp_path / "proc" / "toy.npz"
    ds = prepare(raw, make_spec(), "avg_example_norm", out)
    assert (ds.n, ds.d, ds.nnz) == (4, 5, 6)  # d from the registry, not the file
    np.testing.assert_array_equal(ds.b, [-1.0, 1.0, 1.0, -1.0])  # {1, 2} -> {-1, +1}
    # row norms 5, 1, sqrt(5), 2
    scale = (5 + 1 + np.sqrt(5) + 2) / 4
    assert ds.meta["normalization"]["scale"] == pytest.approx(scale)
    np.testing.assert_allclose(ds.A.toarray()[0], np.array([3, 4, 0, 0, 0]) / scale)
    loaded = load_dataset(out)
    assert loaded.name == "toy"
    assert (loaded.A != ds.A).nnz == 0
    np.testing.assert_array_equal(loaded.b, ds.b)
    meta = loaded.meta
    assert meta["source_file"] == "toy.bz2"
    assert meta["label_counts"] == {"-1": 2, "1": 2}
    assert meta["raw_label_counts"] == {"1": 2, "2": 2}
    assert (meta["n"], meta["d"], meta["nnz"]) == (4, 5, 6)
    assert meta["task"] == "binary" and meta["positive_class"] is None
    assert len(meta["source_sha256"]) == 64


def test_prepare_multiclass(tmp_path, raw):
    spec = make_spec(task="multiclass")
    ds = prepare(raw, spec, "none", tmp_path / "mc.npz")
    np.testing.assert_array_equal(ds.b, [1, 2, 2, 1])
    assert ds.meta["task"] == "multiclass"
    ovr = prepare(raw, spec, "none", tmp_path / "ovr.npz", positive_class=1)
    np.testing.assert_array_equal(ovr.b, [1, -1, -1, 1])
    assert ovr.meta["task"] == "binary" and ovr.meta["positive_class"] == "1"


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"n": 5}, "expected n=5; found n=4"),
        ({"nnz": 7, "n": 3}, "expected n=3, nnz=7; found n=4, nnz=6"),
        ({"d": 3}, "feature index 4 exceeds n_features=3"),
        ({"label_counts": {-1.0: 2, 1.0: 2}}, "label counts"),
    ],
)
def test_prepare_mismatch_names_dataset(tmp_path, raw, over, needle):
    out = tmp_path / "toy.npz"
    with pytest.raises(DataError, match=needle) as err:
        prepare(raw, make_spec(**over), "none", out)
    assert "'toy'" in str(err.value)
    assert not out.exists()


def test_prepare_unknown_shape_and_bad_normalization(tmp_path, raw):
    spec = make_spec(n=None, d=None, nnz=None, label_counts=None)
    ds = prepare(raw, spec, "unit_rows", tmp_path / "t.npz")
    assert ds.d == 4  # without a registry d the file's largest index decides
    with pytest.raises(ConfigError, match="valid methods"):
        prepare(raw, spec, "bogus", tmp_path / "u.npz")
    assert not (tmp_path / "u.npz").exists()


def test_prepare_binary_task_with_multiclass_file(tmp_path):
    path = tmp_path / "mc.bz2"
    path.write_bytes(bz2.compress(b"1 1:1\n2 1:1\n3 1:1\n"))
    spec = make_spec(n=3, d=1, nnz=3, label_counts=None)
    with pytest.raises(DataError, match="'toy'.*positive_class"):
        prepare(path, spec, "none", tmp_path / "mc.npz")


def test_check_shape_ignores_unknown():
    check_shape(make_spec(n=None, d=None, nnz=None), 1, 2, 3)


def _mirror() -> Path:
    env = os.environ.get("PDSPARSE_DATA_MIRROR")
    return Path(env) if env else (REPO.parent / "shared" / "datasets")


@pytest.mark.skipif(
    not (_mirror() / "leu.bz2").is_file(),
    reason=f"offline LIBSVM mirror with leu.bz2 not found at {_mirror()} "
    "(set PDSPARSE_DATA_MIRROR to a directory holding leu.bz2)",
)
def test_fetch_and_prepare_leu_from_mirror(tmp_path):
    spec = load_registry(REPO / "config" / "datasets.yaml")["leu"]
    raw = fetch(spec, tmp_path / "raw", mirror=resolve_mirror(str(_mirror())), progress=False)
    ds = prepare(raw, spec, "avg_example_norm", tmp_path / "processed" / "leu.npz")
    assert (ds.n, ds.d, ds.nnz) == (38, 7129, 270902)
    assert ds.meta["label_counts"] == {"-1": 11, "1": 27}
    loaded = load_dataset(tmp_path / "processed" / "leu.npz")
    assert (loaded.n, loaded.d, loaded.nnz) == (38, 7129, 270902)
    norms = np.sqrt(np.asarray(loaded.A.multiply(loaded.A).sum(axis=1)).ravel())
    assert norms.mean() == pytest.approx(1.0)


# ------------------------------------------------------------------------------ DGPD recipes


def test_face_off_recipes_keep_their_fields_defaults_and_tags():
    assert Recipe().tag() == "avg_example_norm"
    assert Recipe("unit_rows").tag() == "unit_rows"
    assert Recipe("none").tag() == "none"
    assert Recipe("none", "3").tag() == "none-pos3"  # positional, as papers/faceoff.py builds it
    assert Recipe("avg_example_norm", positive_class="1").tag() == "avg_example_norm-pos1"
    assert (Recipe().normalization, Recipe().positive_class) == ("avg_example_norm", None)
    # a recipe that only normalizes (and names a positive class) is two steps
    assert [type(s).__name__ for s in Recipe("none", "3").steps] == ["Binarize", "Normalize"]


def test_dgpd_recipe_tags_are_safe_short_and_distinct():
    import re

    recipes = [
        Recipe("none", features="rb", n_grids=1000, sigma=39.5, test_rows=2000),
        Recipe("none", features="rb", n_grids=1000, sigma=39.5, test_rows=2000, split_seed=1),
        Recipe("none", features="rb", n_grids=1000, sigma=39.5, map_seed=1, test_rows=2000),
        Recipe("none", features="rb", n_grids=1000, sigma=40, test_rows=2000),
        Recipe("none", features="rb", n_grids=200, sigma=39.5, test_rows=2000),
        Recipe("none", features="rf", n_features=1000, sigma=39.5, test_rows=2000),
        Recipe("none", features="rf", n_features=10000, sigma=10, test_rows=2000,
               subsample=10000),
        Recipe("none", features="rf", n_features=10000, sigma=10, input_scale="none"),
        Recipe("none", features="rf", n_features=10000, sigma=0.1),
        Recipe("none", features="rf", n_features=10000, sigma=0.10000000000000002),
        Recipe("none", features="rf", n_features=10000, sigma=1e-5),
        Recipe("none", features="rf", n_features=10000, sigma=1e20),
        Recipe("none", features="rf", n_features=10000, sigma=1.5e20),
        Recipe("unit_rows", test_rows=100),
        Recipe("unit_rows", subsample=100),
        Recipe("unit_rows", "2", test_rows=100),
    ]
    tags = [r.tag() for r in recipes]
    assert tags[0] == "none-rb1000-sig39.5-ms0-te2000-ss0"
    assert tags[6] == "none-rf10000-sig10-ms0-te2000-sub10000-ss0"
    assert tags[7] == "none-rf10000-sig10-ms0-innone"
    assert len(set(tags)) == len(tags), tags
    from pdsparse.problem import ProblemKey

    for tag in tags:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", tag) and "__" not in tag
        assert len(tag) < 60
        # a problem on the prepared file is named by the data set + recipe tag
        key = ProblemKey("mnist", "smooth_hinge", "elastic_net", {"l2": 0.01, "l1": 0.1},
                         recipe=tag)
        assert ProblemKey.from_tag(key.tag()) == key
    assert "sig1e20" in tags[11]
    # numbers given as YAML would give them: 40 and 40.0, 1e4 and 10000 are one recipe
    assert Recipe("none", features="rb", n_grids=1e3, sigma=40).tag() == \
        Recipe("none", features="rb", n_grids=1000, sigma=40.0).tag()


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"features": "rb", "n_grids": 10, "sigma": -1.0}, "sigma .* must be > 0"),
        ({"features": "rb", "n_grids": 0, "sigma": 1.0}, "n_grids must be >= 1"),
        ({"features": "rb", "sigma": 1.0}, "needs n_grids"),
        ({"features": "rb", "n_grids": 5}, "needs sigma"),
        ({"features": "rf", "n_grids": 5, "sigma": 1.0}, "n_grids does not apply"),
        ({"features": "rf", "n_features": 2.5, "sigma": 1.0}, "n_features must be an integer"),
        ({"features": "poly"}, "unknown features"),
        ({"sigma": 1.0}, "sigma only apply to a feature map"),
        ({"input_scale": "none"}, "input_scale only apply"),
        ({"split_seed": 3}, "split_seed only applies"),
        ({"test_rows": -1}, "test_rows must be >= 0"),
        ({"subsample": 0}, "subsample must be >= 1"),
        ({"features": "rb", "n_grids": 5, "sigma": 1.0, "input_scale": "std"},
         "unknown input_scale"),
    ],
)
def test_bad_recipes_name_the_setting(kwargs, needle):
    with pytest.raises(ConfigError, match=needle):
        Recipe("none", **kwargs)


def test_split_rows():
    r = Recipe("none", test_rows=3, split_seed=5)
    train, test = split_rows(10, r)
    assert test.size == 3 and train.size == 7
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(10))
    assert list(train) == sorted(train) and list(test) == sorted(test)
    train_s, test_s = split_rows(10, Recipe("none", test_rows=3, subsample=4, split_seed=5))
    np.testing.assert_array_equal(test_s, test)  # a subsample keeps the test rows
    assert set(train_s) <= set(train) and train_s.size == 4
    with pytest.raises(DataError, match="test_rows=10 leaves no training rows"):
        split_rows(10, Recipe("none", test_rows=10), "toy")
    with pytest.raises(DataError, match="subsample=8 exceeds the 7 training rows"):
        split_rows(10, Recipe("none", test_rows=3, subsample=8))


def multiclass_file(tmp_path, n=40, d=5, seed=0):
    """A LIBSVM multiclass file (labels 1..3, sparse nonnegative values) and its spec."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 9, (n, d)) * (rng.random((n, d)) < 0.6)
    y = np.arange(n) % 3 + 1
    lines = [" ".join([str(c)] + [f"{j + 1}:{v}" for j, v in enumerate(row) if v])
             for c, row in zip(y, X, strict=True)]
    path = tmp_path / "mc.bz2"
    path.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    counts = {float(c): int((y == c).sum()) for c in (1, 2, 3)}
    spec = make_spec(name="mc", task="multiclass", n=n, d=d, nnz=int((X != 0).sum()),
                     label_counts=counts)
    return path, spec, X.astype(float), y.astype(float)


def test_prepare_rb_recipe_end_to_end(tmp_path):
    raw, spec, X, y = multiclass_file(tmp_path)
    recipe = Recipe("none", features="rb", n_grids=20, sigma=2.0, map_seed=1, test_rows=8,
                    split_seed=2)
    out = tmp_path / f"mc__{recipe.tag()}.npz"
    ds = prepare(raw, spec, recipe, out)
    loaded = load_dataset(out)
    test_rows = loaded.meta["split"]["test_rows"]
    train_rows = sorted(set(range(40)) - set(test_rows))
    assert len(test_rows) == 8 and loaded.n == 32 and loaded.n_test == 8
    # multiclass labels kept as class labels, in file order
    np.testing.assert_array_equal(loaded.b, y[train_rows])
    np.testing.assert_array_equal(loaded.b_test, y[test_rows])
    assert loaded.meta["task"] == "multiclass" and set(loaded.b) == {1.0, 2.0, 3.0}
    # exactly P entries of 1/sqrt(P) per training row; test rows at most P
    np.testing.assert_array_equal(np.diff(loaded.A.indptr), 20)
    np.testing.assert_allclose(loaded.A.data, 1 / np.sqrt(20))
    assert np.diff(loaded.A_test.indptr).max() <= 20
    assert (loaded.A != ds.A).nnz == 0 and (loaded.A_test != ds.A_test).nnz == 0
    # the map, refitted by hand on the scaled training rows, gives the same file
    from pdsparse.data.features import RandomBinning

    scale = X[train_rows].max()
    rb = RandomBinning(20, 2.0, seed=1)
    Z = rb.fit_transform(sp.csr_matrix(X[train_rows] / scale))
    assert (Z != loaded.A).nnz == 0
    assert (rb.transform(sp.csr_matrix(X[test_rows] / scale)) != loaded.A_test).nnz == 0
    meta = loaded.meta
    assert meta["features"]["input_scale"]["divisor"] == scale
    assert meta["features"]["n_features"] == loaded.d == rb.n_features
    assert meta["recipe_tag"] == recipe.tag() and meta["recipe"]["n_grids"] == 20
    assert meta["split"]["published"] is False and meta["split"]["split_seed"] == 2
    assert meta["nnz"] == 32 * 20 and meta["dense"] is False
    assert sum(int(v) for v in meta["test_label_counts"].values()) == 8
    # the same recipe again: the same bytes of data
    again = prepare(raw, spec, recipe, tmp_path / "again.npz")
    assert (again.A != ds.A).nnz == 0


def test_prepare_rf_recipe_is_dense_and_normalizes_test_rows_by_the_training_scale(tmp_path):
    raw, spec, X, y = multiclass_file(tmp_path)
    recipe = Recipe("avg_example_norm", features="rf", n_features=64, sigma=1.5, test_rows=10,
                    subsample=20)
    ds = load_dataset(prepare(raw, spec, recipe, tmp_path / "rf.npz") and tmp_path / "rf.npz")
    assert ds.dense and ds.A.shape == (20, 64) and ds.A_test.shape == (10, 64)
    assert isinstance(ds.A_test, np.ndarray)
    assert np.linalg.norm(ds.A, axis=1).mean() == pytest.approx(1.0)
    from pdsparse.data.features import RandomFourier

    test_rows = ds.meta["split"]["test_rows"]
    scale_in = ds.meta["features"]["input_scale"]["divisor"]
    rf = RandomFourier(64, 1.5, seed=0).fit(X)
    divisor = ds.meta["normalization"]["scale"]
    np.testing.assert_allclose(ds.A_test, rf.transform(X[test_rows] / scale_in) / divisor,
                               rtol=1e-12, atol=1e-14)
    # the subsample kept the test rows of the unsubsampled split
    full = prepare(raw, spec, Recipe("none", test_rows=10), tmp_path / "split.npz")
    assert full.meta["split"]["test_rows"] == test_rows and full.n == 30


def test_a_normalization_name_and_its_recipe_prepare_alike(tmp_path, raw):
    a = prepare(raw, make_spec(), "avg_example_norm", tmp_path / "a.npz")
    b = prepare(raw, make_spec(), Recipe("avg_example_norm"), tmp_path / "b.npz")
    assert a.meta == b.meta and (a.A != b.A).nnz == 0
    c = prepare(raw, make_spec(task="multiclass"), Recipe("none", "1"), tmp_path / "c.npz")
    np.testing.assert_array_equal(c.b, [1, -1, -1, 1])
    with pytest.raises(ConfigError, match="positive_class in the recipe"):
        prepare(raw, make_spec(), Recipe("none"), tmp_path / "d.npz", positive_class=1)


def test_prepare_split_larger_than_the_file_names_the_setting(tmp_path, raw):
    out = tmp_path / "x.npz"
    with pytest.raises(DataError, match="'toy'.*test_rows=4 leaves no training rows"):
        prepare(raw, make_spec(), Recipe("none", test_rows=4), out)
    assert not out.exists()


def test_digits_is_a_bundled_multiclass_source(tmp_path):
    from pdsparse.data.synthetic import BUNDLED, generate

    A, y = generate("digits", {}, 0)
    assert A.shape == (1797, 64) and sorted(set(y)) == list(range(10))
    assert A.data.min() > 0 and A.data.max() == 16
    recipe = Recipe("none", features="rb", n_grids=10, sigma=3.0, test_rows=297)
    ds = prepare_synthetic("digits", "digits", {}, 0, recipe,
                           tmp_path / f"digits__{recipe.tag()}.npz")
    assert (ds.n, ds.n_test) == (1500, 297) and ds.meta["task"] == "multiclass"
    assert ds.meta["source"] == "bundled" and ds.meta["kind"] == "digits"
    np.testing.assert_array_equal(np.diff(ds.A.indptr), 10)
    ovr = prepare_synthetic("digits", "digits", {}, 0, Recipe("none", "3"), tmp_path / "o.npz")
    assert set(ovr.b) == {-1.0, 1.0} and int((ovr.b == 1).sum()) == 183
    # the command line offers the bundled sources and the recipe choices of the library
    from pdsparse import cli

    assert cli.BUNDLED_KINDS == tuple(BUNDLED)


def test_the_prepare_flags_are_the_recipes_fields():
    """``pdsparse prepare`` has one flag per Recipe field (generated from the field's
    metadata: a field added to the recipe is a flag at once), and the flags given parse back
    to the recipe they spell; the choices are the steps' own."""
    from dataclasses import fields

    from pdsparse import cli

    parser = cli.build_parser()
    base = ["prepare", "--dataset", "x", "--generator", "digits", "--out", "o.npz"]
    args = parser.parse_args(base + [
        "--normalization", "none", "--positive-group", "0", "1", "--classes", "0", "1", "2",
        "--features", "rb", "--n-grids", "10", "--sigma", "3", "--map-seed", "2",
        "--input-scale", "max_abs_columns", "--test-rows", "5", "--subsample", "50",
        "--split-seed", "1"])
    assert {f.name for f in fields(Recipe)} <= set(vars(args))
    assert cli.recipe_of(args) == Recipe(
        "none", ("0", "1"), features="rb", n_grids=10, sigma=3.0, map_seed=2,
        input_scale="max_abs_columns", test_rows=5, subsample=50, split_seed=1,
        classes=("0", "1", "2"))
    args = parser.parse_args(base + ["--positive-class", "3", "--test-file", "t"])
    assert cli.recipe_of(args) == Recipe(positive_class="3", test_file="t")
    assert cli.recipe_of(parser.parse_args(base)) == Recipe()
    choices = {a.dest: a.choices for a in parser._subparsers._group_actions[0]
               .choices["prepare"]._actions if a.choices}
    assert choices["features"] == FEATURES and choices["input_scale"] == INPUT_SCALES


def test_cli_prepare_with_a_recipe(tmp_path, capsys):
    from pdsparse.cli import main

    raw, spec, X, y = multiclass_file(tmp_path)
    registry = tmp_path / "reg.yaml"
    import yaml

    registry.write_text(yaml.safe_dump({"datasets": {"mc": {
        "url": "https://example.invalid/mc.bz2", "filename": "mc.bz2", "compression": "bz2",
        "task": "multiclass", "n": spec.n, "d": spec.d, "nnz": spec.nnz,
        "label_counts": {int(k): v for k, v in spec.label_counts.items()}}}}))
    out = tmp_path / "mc.npz"
    code = main(["prepare", "--registry", str(registry), "--dataset", "mc", "--raw", str(raw),
                 "--normalization", "none", "--features", "rb", "--n-grids", "12",
                 "--sigma", "2", "--map-seed", "3", "--test-rows", "5", "--split-seed", "1",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "[none-rb12-sig2-ms3-te5-ss1]" in err and "+ 5 test rows" in err
    ds = load_dataset(out)
    assert ds.meta["recipe_tag"] == "none-rb12-sig2-ms3-te5-ss1" and ds.n_test == 5
    code = main(["prepare", "--registry", str(registry), "--dataset", "mc", "--raw", str(raw),
                 "--features", "rb", "--n-grids", "12", "--sigma", "-2", "--out", str(out)])
    assert code == 2 and "sigma" in capsys.readouterr().err
    code = main(["prepare", "--dataset", "digits", "--generator", "digits", "--normalization",
                 "none", "--features", "rf", "--n-features", "8", "--sigma", "1",
                 "--subsample", "100", "--out", str(tmp_path / "d.npz")])
    assert code == 0, capsys.readouterr().err
    d = load_dataset(tmp_path / "d.npz")
    assert d.dense and d.A.shape == (100, 8) and d.n_test == 0


def test_chunked_row_norms_equal_normalize_row_norms():
    from pdsparse.data.normalize import row_norms
    from pdsparse.data.normalize import row_norms_sequential as _row_norms

    A = sp.random(300, 20, density=0.2, format="csr", random_state=3)
    A = sp.vstack([A, sp.csr_matrix((2, 20)), A[:5]], format="csr")  # empty rows inside
    for chunk in (1, 3, 50, 1 << 22):
        np.testing.assert_allclose(_row_norms(A, chunk), row_norms(A), rtol=1e-15)
    np.testing.assert_allclose(_row_norms(A.toarray()), row_norms(A), rtol=1e-15)


def test_input_scale_per_column_divides_each_column_by_its_training_max(tmp_path):
    """cod-rna's first column reaches 1,868 where the others stay below 1: one divisor for
    all leaves those below a bin's width. ``max_abs_columns`` scales each column apart."""
    raw, spec, X, y = multiclass_file(tmp_path)
    recipe = Recipe("none", features="rb", n_grids=20, sigma=0.5, test_rows=8,
                    input_scale="max_abs_columns")
    assert "-inmax_abs_columns-" in recipe.tag()
    ds = prepare(raw, spec, recipe, tmp_path / "cols.npz")
    test_rows = ds.meta["split"]["test_rows"]
    train_rows = sorted(set(range(len(y))) - set(test_rows))
    from pdsparse.data.features import RandomBinning

    cols = np.abs(X[train_rows]).max(axis=0)
    cols[cols == 0] = 1.0
    rb = RandomBinning(20, 0.5, seed=0)
    Z = rb.fit_transform(sp.csr_matrix(X[train_rows] / cols))
    assert (Z != ds.A).nnz == 0
    assert (rb.transform(sp.csr_matrix(X[test_rows] / cols)) != ds.A_test).nnz == 0
    scale = ds.meta["features"]["input_scale"]
    assert scale["method"] == "max_abs_columns"
    assert scale["divisor"] == {"min": float(cols.min()), "max": float(cols.max())}


# ---- test rows from a second registry file (recipe test_file: LIBSVM's published splits,
# e.g. sector.scale / sector.t.scale)

def libsvm_pair(tmp_path, d_test=None):
    """A training file (6 rows, d = 4, labels 1..3) and a test file (3 rows) in LIBSVM text,
    with their registry specs; ``d_test`` is the test file's registry width."""
    train = b"1 1:3 2:4\n2 3:1\n3 1:1 4:-2\n1 2:2\n2 1:6 2:8\n3 4:5\n"
    test = b"2 1:1 2:1\n1 3:2\n3 4:1 5:7\n" if d_test == 5 else b"2 1:1 2:1\n1 3:2\n3 4:1\n"
    paths = []
    for name, text in (("tr", train), ("te", test)):
        path = tmp_path / f"{name}.bz2"
        path.write_bytes(bz2.compress(text))
        paths.append(path)
    tr = make_spec(name="tr", filename="tr.bz2", task="multiclass", n=6, d=4, nnz=9,
                   label_counts={1.0: 2, 2.0: 2, 3.0: 2})
    te = make_spec(name="te", filename="te.bz2", task="multiclass", n=3, d=d_test or 4,
                   nnz=5 if d_test == 5 else 4, label_counts={1.0: 1, 2.0: 1, 3.0: 1})
    return paths[0], tr, paths[1], te


def test_prepare_with_a_test_file_keeps_its_rows_and_normalizes_them_alike(tmp_path):
    raw, spec, raw_te, spec_te = libsvm_pair(tmp_path)
    recipe = Recipe("avg_example_norm", test_file="te")
    assert recipe.tag() == "avg_example_norm-tfte"
    out = tmp_path / f"tr__{recipe.tag()}.npz"
    prepare(raw, spec, recipe, out, test=(raw_te, spec_te))
    ds = load_dataset(out)
    assert ds.A.shape == (6, 4) and ds.A_test.shape == (3, 4) and ds.n_test == 3
    np.testing.assert_array_equal(ds.b, [1, 2, 3, 1, 2, 3])  # multiclass labels kept
    np.testing.assert_array_equal(ds.b_test, [2, 1, 3])
    # avg_example_norm: both files divided by the TRAINING rows' mean norm (5, 1, sqrt 5,
    # 2, 10, 5 -> mean (23 + sqrt 5) / 6)
    mean = (23 + np.sqrt(5)) / 6
    np.testing.assert_allclose(ds.A.toarray()[0], [3 / mean, 4 / mean, 0, 0])
    np.testing.assert_allclose(ds.A_test.toarray(),
                               np.array([[1, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]]) / mean)
    meta = ds.meta
    assert meta["normalization"]["scale"] == pytest.approx(mean)
    assert meta["split"]["published"] is True and meta["split"]["test_file"] == "te"
    assert meta["test_file"]["name"] == "te" and meta["test_file"]["dropped_nnz"] == 0
    assert meta["test_label_counts"] == meta["test_file"]["raw_label_counts"]
    # unit_rows and one-vs-rest: every test row of norm 1, labels by the same positive class
    recipe = Recipe("unit_rows", positive_class="3", test_file="te")
    ovr = prepare(raw, spec, recipe, tmp_path / "ovr.npz", test=(raw_te, spec_te))
    np.testing.assert_allclose(_dense_norms(ovr.A_test), 1.0)
    np.testing.assert_array_equal(ovr.b_test, [-1, -1, 1])
    np.testing.assert_array_equal(ovr.b, [-1, -1, 1, -1, -1, 1])


def _dense_norms(A):
    return np.linalg.norm(A.toarray() if sp.issparse(A) else A, axis=1)


def test_test_file_wider_than_the_training_file_loses_its_extra_columns(tmp_path):
    raw, spec, raw_te, spec_te = libsvm_pair(tmp_path, d_test=5)
    recipe = Recipe("unit_rows", test_file="te")
    ds = prepare(raw, spec, recipe, tmp_path / "w.npz", test=(raw_te, spec_te))
    assert ds.A_test.shape == (3, 4)
    info = ds.meta["test_file"]
    assert (info["d_file"], info["dropped_nnz"], info["dropped_columns"]) == (5, 1, 1)
    assert "cut to the training width 4" in info["width"]
    # the third test row keeps 4:1 only, then unit norm
    np.testing.assert_allclose(ds.A_test.toarray()[2], [0, 0, 0, 1])
    # a narrower test file is padded with zero columns
    spec_wide = make_spec(name="tr", filename="tr.bz2", task="multiclass", n=6, d=6, nnz=9,
                          label_counts={1.0: 2, 2.0: 2, 3.0: 2})
    raw, _, raw_te, spec_te = libsvm_pair(tmp_path)
    pad = prepare(raw, spec_wide, recipe, tmp_path / "p.npz", test=(raw_te, spec_te))
    assert pad.A.shape == (6, 6) and pad.A_test.shape == (3, 6)
    assert "padded from 4" in pad.meta["test_file"]["width"]


def test_test_file_with_a_feature_map_and_a_subsample(tmp_path):
    raw, spec, raw_te, spec_te = libsvm_pair(tmp_path)
    recipe = Recipe("none", features="rb", n_grids=5, sigma=2.0, subsample=4, test_file="te")
    assert recipe.tag() == "none-rb5-sig2-ms0-tfte-sub4-ss0"
    ds = prepare(raw, spec, recipe, tmp_path / "m.npz", test=(raw_te, spec_te))
    assert ds.A.shape[0] == 4 and ds.A_test.shape == (3, ds.A.shape[1])
    np.testing.assert_allclose(ds.A.data, 1 / np.sqrt(5))
    from pdsparse.data.features import RandomBinning
    from pdsparse.data.libsvm import read_libsvm

    A, _ = read_libsvm(raw, 4)
    A_te, _ = read_libsvm(raw_te, 4)
    train = np.sort(np.random.default_rng(0).permutation(6)[:4])
    scale = np.abs(A[train].data).max()
    rb = RandomBinning(5, 2.0, seed=0)
    assert (rb.fit_transform(A[train] / scale) != ds.A).nnz == 0
    assert (rb.transform(A_te / scale) != ds.A_test).nnz == 0  # the training rows' scale


def test_test_file_errors_name_the_setting(tmp_path):
    raw, spec, raw_te, spec_te = libsvm_pair(tmp_path)
    with pytest.raises(ConfigError, match="test_rows and test_file 'te' both give test rows"):
        Recipe("none", test_rows=2, test_file="te")
    with pytest.raises(ConfigError, match="test_file must be a registry data-set name"):
        Recipe("none", test_file="a/b")
    with pytest.raises(ConfigError, match="test_file 'te' needs its raw file"):
        prepare(raw, spec, Recipe("none", test_file="te"), tmp_path / "x.npz")
    with pytest.raises(ConfigError, match="test_file is 'other'"):
        prepare(raw, spec, Recipe("none", test_file="other"), tmp_path / "x.npz",
                test=(raw_te, spec_te))
    with pytest.raises(DataError, match="'te'.*shape does not match"):
        prepare(raw, spec, Recipe("none", test_file="te"), tmp_path / "x.npz",
                test=(raw_te, make_spec(name="te", task="multiclass", n=7, d=4)))
    with pytest.raises(ConfigError, match="only applies to a registry data set"):
        prepare_synthetic("digits", "digits", {}, 0, Recipe("none", test_file="te"),
                          tmp_path / "d.npz")
    # a binary training file whose test file has a label it lacks
    bin_spec = make_spec(name="tr", task="binary", n=4, d=5, nnz=6)
    train = tmp_path / "b.bz2"
    train.write_bytes(bz2.compress(TEXT))
    with pytest.raises(DataError, match="test file 'te': labels 3 do not occur"):
        prepare(train, bin_spec, Recipe("none", test_file="te"), tmp_path / "y.npz",
                test=(raw_te, make_spec(name="te", task="multiclass", n=3, d=5, nnz=4,
                                        label_counts=None)))
    assert not (tmp_path / "x.npz").exists() and not (tmp_path / "y.npz").exists()


def test_cli_prepare_with_a_test_file(tmp_path, capsys):
    import yaml

    from pdsparse.cli import main

    raw, spec, raw_te, spec_te = libsvm_pair(tmp_path)
    registry = tmp_path / "reg.yaml"
    registry.write_text(yaml.safe_dump({"datasets": {
        s.name: {"url": f"https://example.invalid/{s.filename}", "filename": s.filename,
                 "compression": "bz2", "task": "multiclass", "n": s.n, "d": s.d,
                 "nnz": s.nnz} for s in (spec, spec_te)}}))
    out = tmp_path / "cli.npz"
    base = ["prepare", "--registry", str(registry), "--dataset", "tr", "--raw", str(raw),
            "--normalization", "unit_rows", "--out", str(out)]
    assert main([*base, "--test-file", "te", "--test-raw", str(raw_te)]) == 0
    assert "[unit_rows-tfte]" in capsys.readouterr().err
    assert load_dataset(out).A_test.shape == (3, 4)
    assert main([*base, "--test-file", "te"]) == 2
    assert "--test-raw" in capsys.readouterr().err
