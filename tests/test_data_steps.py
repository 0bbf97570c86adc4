"""The steps of a data recipe (pdsparse.data.steps): each step's tag and apply on a tiny
matrix, the order a Recipe builds them in, and errors that name the config key."""

from __future__ import annotations

import bz2

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse.data.prepare import Recipe, RegistryFile, prepare
from pdsparse.data.registry import DatasetSpec
from pdsparse.data.steps import (
    TAG_ORDER,
    Binarize,
    FeatureMap,
    Normalize,
    Rows,
    ScaleInputs,
    SelectClasses,
    SplitFile,
    SplitRows,
    compose_tag,
)
from pdsparse.data.store import load_dataset
from pdsparse.errors import ConfigError, DataError

# 6 rows, 3 columns; labels 0, 9, 3, 9, 0, 3 (row i recognisable by its first value i + 1)
X = np.array([[1, 0, 2], [2, 4, 0], [3, 0, 0], [4, 1, 1], [5, 0, 8], [6, 2, 0]], dtype=float)
Y = np.array([0.0, 9.0, 3.0, 9.0, 0.0, 3.0])


def rows(labels: str = "classes", **over) -> Rows:
    return Rows("toy", sp.csr_matrix(X), Y.copy(), labels=labels, **over)


# ------------------------------------------------------------------------ each step


def test_select_classes_keeps_the_listed_rows_in_file_order():
    step = SelectClasses([9, 0.0])
    assert step.classes == ("0", "9") and step.tag() == "cl0+9"
    r = rows()
    step.apply(r)
    np.testing.assert_array_equal(r.A.toarray()[:, 0], [1, 2, 4, 5])
    np.testing.assert_array_equal(r.y, [0, 9, 9, 0])
    assert r.classes == ("0", "9") and r.meta["classes"]["n_kept"] == 4
    with pytest.raises(DataError, match="classes 7 do not occur in the labels"):
        SelectClasses([0, 7]).apply(rows())


def test_binarize_maps_labels_by_the_source_and_the_positive_class():
    assert Binarize().tag() is None
    assert Binarize("3").tag() == "pos3" and Binarize([3]).positive_class == "3"
    assert Binarize([9, 3]).tag() == "pos3+9"
    r = rows()
    Binarize("3").apply(r)  # one-vs-rest
    np.testing.assert_array_equal(r.y, [-1, -1, 1, -1, -1, 1])
    assert (r.task, r.meta["positive_class"]) == ("binary", "3")
    r = rows()
    Binarize([0, 9]).apply(r)  # a group
    np.testing.assert_array_equal(r.y, [1, 1, -1, 1, 1, -1])
    assert r.meta["positive_class"] == "0+9"
    r = rows()
    Binarize().apply(r)  # class labels stay
    assert r.task == "multiclass" and np.array_equal(r.y, Y)
    r = rows(classes=("0", "9"))
    Binarize().apply(r)  # two kept classes: the larger +1
    np.testing.assert_array_equal(r.y, [-1, 1, -1, 1, -1, -1])
    r = rows("as_generated")
    Binarize().apply(r)  # a generator's labels are kept
    assert r.task == "binary" and np.array_equal(r.y, Y)
    with pytest.raises(DataError, match="multiclass"):
        Binarize().apply(rows("binary"))  # a binary file with three labels
    # test rows take the training rows' mapping
    r = Rows("toy", sp.csr_matrix(X[:2]), np.array([1.0, 2.0]), labels="binary",
             A_test=sp.csr_matrix(X[2:4]), y_test=np.array([2.0, 1.0]))
    Binarize().apply(r)
    np.testing.assert_array_equal(r.y, [-1, 1])
    np.testing.assert_array_equal(r.y_test, [1, -1])


def test_split_rows_draws_test_rows_and_a_subsample_from_one_permutation():
    assert SplitRows().tag() is None and not SplitRows().draws
    assert SplitRows(3, split_seed=5).tag() == "te3-ss5"
    assert SplitRows(subsample=4).tag() == "sub4-ss0"
    assert SplitRows(2, 3, 1).tag() == "te2-sub3-ss1"
    r = rows()
    SplitRows(2, split_seed=5).apply(r)
    perm = np.random.default_rng(5).permutation(6)
    np.testing.assert_array_equal(r.A_test.toarray()[:, 0] - 1, np.sort(perm[:2]))
    np.testing.assert_array_equal(r.A.toarray()[:, 0] - 1, np.sort(perm[2:]))
    assert r.meta["split"]["test_rows"] == np.sort(perm[:2]).tolist()
    assert r.meta["split"]["published"] is False
    r = rows()
    SplitRows(2, 3, 5).apply(r)  # the same test rows, the first 3 training rows drawn
    np.testing.assert_array_equal(r.A_test.toarray()[:, 0] - 1, np.sort(perm[:2]))
    np.testing.assert_array_equal(r.A.toarray()[:, 0] - 1, np.sort(perm[2:5]))
    with pytest.raises(DataError, match="test_rows=6 leaves no training rows"):
        SplitRows(6).apply(rows())


def test_split_file_records_a_published_split_and_split_rows_then_subsamples():
    assert SplitFile("sector.t.scale").tag() == "tfsector.t.scale"
    r = Rows("toy", sp.csr_matrix(X), Y.copy(), A_test=sp.csr_matrix(X[:2]),
             y_test=Y[:2].copy(), meta={"test_file": {"name": "te"}})
    SplitFile("te").apply(r)
    assert r.meta["split"]["published"] is True and r.meta["split"]["n_test"] == 2
    SplitRows(subsample=4).apply(r)
    assert r.A.shape[0] == 4 and r.A_test.shape[0] == 2
    assert r.meta["split"]["n_train"] == 4 and "perm[:subsample]" in r.meta["split"]["method"]
    with pytest.raises(ConfigError, match="test_file 'other'"):
        SplitFile("other").apply(rows())  # the source read no such file


def test_scale_inputs_divides_by_the_training_rows_largest_values():
    assert ScaleInputs().tag() is None and ScaleInputs("none").tag() == "innone"
    r = rows(A_test=sp.csr_matrix(X[:1] * 2))
    ScaleInputs().apply(r)
    assert r.A.data.max() == 1.0 and r.meta["features"]["input_scale"]["divisor"] == 8.0
    np.testing.assert_array_equal(r.A_test.toarray(), X[:1] * 2 / 8)
    r = rows()
    ScaleInputs("max_abs_columns").apply(r)
    np.testing.assert_array_equal(r.A.toarray(), X / X.max(axis=0))
    r = rows()
    ScaleInputs("none").apply(r)
    np.testing.assert_array_equal(r.A.toarray(), X)


def test_feature_map_fits_on_the_training_rows():
    from pdsparse.data.features import RandomBinning

    step = FeatureMap("rb", 5, 2, map_seed=1)
    assert step.tag() == "rb5-sig2-ms1" and step.sigma == 2.0
    assert FeatureMap("rf", 64, 0.5).tag() == "rf64-sig0.5-ms0"
    r = rows(A_test=sp.csr_matrix(X[:2]))
    step.apply(r)
    rb = RandomBinning(5, 2.0, seed=1)
    assert (rb.fit_transform(sp.csr_matrix(X)) != r.A).nnz == 0
    assert (rb.transform(sp.csr_matrix(X[:2])) != r.A_test).nnz == 0
    assert r.meta["features"]["n_input"] == 3 and r.meta["features"]["kind"] == "rb"


def test_normalize_on_the_training_rows_applied_to_the_test_rows():
    assert Normalize().tag() == "avg_example_norm" and Normalize("none").tag() == "none"
    r = rows(A_test=sp.csr_matrix(X[:1]))
    Normalize().apply(r)
    mean = np.linalg.norm(X, axis=1).mean()
    np.testing.assert_allclose(r.A.toarray(), X / mean, rtol=1e-15)
    np.testing.assert_allclose(r.A_test.toarray(), X[:1] / mean, rtol=1e-15)
    assert r.meta["normalization"]["scale"] == pytest.approx(mean)
    for sums in ("pairwise", "sequential"):
        r = rows()
        Normalize("unit_rows", sums).apply(r)
        np.testing.assert_allclose(np.linalg.norm(r.A.toarray(), axis=1), 1.0, rtol=1e-15)


# ------------------------------------------------------------------ errors name the key


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: SelectClasses([0]), "classes must keep at least two labels"),
        (lambda: SelectClasses(9), "classes must be a list"),
        (lambda: Binarize("a/b"), "positive_class 'a/b' is not a label"),
        (lambda: Binarize([]), "positive_class is an empty list"),
        (lambda: SplitFile("a/b"), "test_file must be a registry data-set name"),
        (lambda: SplitRows(-1), "test_rows must be >= 0"),
        (lambda: SplitRows(2, 0), "subsample must be >= 1"),
        (lambda: SplitRows(2, split_seed=1.5), "split_seed must be an integer"),
        (lambda: SplitRows(split_seed=3), "split_seed only applies with test_rows"),
        (lambda: ScaleInputs("std"), "unknown input_scale 'std'"),
        (lambda: FeatureMap("poly", 5, 1.0), "unknown features 'poly'"),
        (lambda: FeatureMap("rb", None, 1.0), "features 'rb' needs n_grids"),
        (lambda: FeatureMap("rf", 2.5, 1.0), "n_features must be an integer"),
        (lambda: FeatureMap("rb", 5, None), "needs sigma"),
        (lambda: FeatureMap("rb", 5, -1.0), "sigma .* must be > 0"),
        (lambda: FeatureMap("rb", 5, 1.0, map_seed=-1), "map_seed must be >= 0"),
        (lambda: Normalize("bogus"), "unknown normalization 'bogus'"),
        (lambda: Normalize("none", "random"), "unknown row_sums 'random'"),
    ],
)
def test_a_bad_value_names_its_key(make, needle):
    with pytest.raises(ConfigError, match=needle):
        make()


# -------------------------------------------------------------------- recipes and order


def test_a_recipe_builds_its_steps_in_apply_order_and_composes_todays_tag():
    recipe = Recipe("none", positive_class=[9, 3], classes=[0, 3, 9], features="rb",
                    n_grids=10, sigma=2.0, input_scale="none", test_rows=2, subsample=3,
                    split_seed=4)
    assert [type(s) for s in recipe.steps] == [SelectClasses, Binarize, SplitRows,
                                               ScaleInputs, FeatureMap, Normalize]
    assert recipe.tag() == "none-cl0+3+9-pos3+9-rb10-sig2-ms0-innone-te2-sub3-ss4"
    # the tag's order is TAG_ORDER, whatever order the steps come in
    assert compose_tag(reversed(recipe.steps)) == recipe.tag()
    assert set(TAG_ORDER) == {SelectClasses, Binarize, SplitFile, SplitRows, ScaleInputs,
                              FeatureMap, Normalize}
    with_file = Recipe("unit_rows", test_file="te", subsample=4)
    assert [type(s) for s in with_file.steps] == [Binarize, SplitFile, SplitRows, Normalize]
    assert with_file.tag() == "unit_rows-tfte-sub4-ss0"
    # a recipe that only normalizes keeps its short tag; without a feature map no scaling
    assert [type(s) for s in Recipe().steps] == [Binarize, Normalize]
    assert Recipe("none", "3").tag() == "none-pos3"


def test_face_off_recipes_sum_rows_as_scipy_and_the_others_in_file_order():
    def sums(recipe):
        return recipe.steps[-1].row_sums

    assert sums(Recipe()) == sums(Recipe("unit_rows", "3")) == "pairwise"
    for recipe in (Recipe("unit_rows", positive_class=[1, 2]), Recipe("none", classes=[0, 9]),
                   Recipe("unit_rows", test_rows=2), Recipe("unit_rows", test_file="te"),
                   Recipe("none", features="rb", n_grids=5, sigma=1.0)):
        assert sums(recipe) == "sequential", recipe


def test_prepare_is_the_source_then_the_steps_in_order(tmp_path):
    """prepare() = the source's rows with every step applied in the recipe's order."""
    lines = [" ".join([f"{y:g}"] + [f"{j + 1}:{v:g}" for j, v in enumerate(x) if v])
             for x, y in zip(X, Y, strict=True)]
    raw = tmp_path / "toy.bz2"
    raw.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    spec = DatasetSpec(name="toy", url="https://example.invalid/toy.bz2", filename="toy.bz2",
                       compression="bz2", task="multiclass", n=6, d=3, nnz=int((X != 0).sum()))
    recipe = Recipe("avg_example_norm", classes=[0, 3, 9], positive_class=9, features="rb",
                    n_grids=4, sigma=3.0, test_rows=2, split_seed=1)
    prepare(raw, spec, recipe, tmp_path / "p.npz")
    ds = load_dataset(tmp_path / "p.npz")
    by_hand = RegistryFile(raw, spec).load()
    for step in recipe.steps:
        step.apply(by_hand)
    assert (ds.A != by_hand.A).nnz == 0 and (ds.A_test != by_hand.A_test).nnz == 0
    np.testing.assert_array_equal(ds.b, by_hand.y)
    np.testing.assert_array_equal(ds.b_test, by_hand.y_test)
    assert ds.meta["recipe_tag"] == recipe.tag()
