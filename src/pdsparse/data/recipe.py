"""A data set's recipe: how it is prepared, named in config (:class:`Recipe`).

Kept apart from the steps it builds (:mod:`pdsparse.data.steps`, imported when a recipe is
made) so that the command line reads its fields without numerics: ``pdsparse prepare``'s
recipe flags are generated from them (:func:`cli_flags`: each field's metadata holds its
help, type and choices; a field is ``--field-name``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pdsparse.errors import ConfigError
from pdsparse.names import FEATURE_MAPS, INPUT_SCALES, NORMALIZATIONS

__all__ = ["Recipe", "cli_flags"]


def _flag(default: Any, *, help: str, section: str = "", shown_default: bool = False,
          group_flag: tuple[str, dict] | None = None, **argparse_kw) -> Any:
    """A recipe field with its command-line flag: ``help`` and argparse's ``type``,
    ``choices``, ``metavar``, ``nargs``; ``section`` "split" or "map" puts it in the help's
    split-and-feature-map group; ``group_flag`` is a second flag for the same field (a list
    of labels), exclusive with the first."""
    return field(default=default, metadata={"cli": {
        "help": help, "section": section, "shown_default": shown_default,
        "group_flag": group_flag, "kwargs": argparse_kw}})


def cli_flags() -> list[tuple[str, str, list[tuple[str, dict]]]]:
    """The recipe's flags: (field, section, [(flag, argparse keywords), ...]) in field
    order, one flag per field (two for ``positive_class``: a label or a group), each with
    ``dest`` the field and default None (given flags only: the recipe's defaults apply)."""
    out = []
    for f in fields(Recipe):
        cli = f.metadata["cli"]
        kw = {**cli["kwargs"], "help": cli["help"], "dest": f.name,
              "default": f.default if cli["shown_default"] else None}
        flags = [("--" + f.name.replace("_", "-"), kw)]
        if cli["group_flag"] is not None:
            name, extra = cli["group_flag"]
            flags.append((name, {**extra, "dest": f.name, "default": None}))
        out.append((f.name, cli["section"], flags))
    return out


@dataclass(frozen=True)
class Recipe:
    """How a data set is prepared, named in config: the config mapping, and the ordered
    tuple of steps it builds (:attr:`steps`; each step checks its own settings, the recipe
    only what ties two steps together). :meth:`tag` names the processed file.

    normalization : {"avg_example_norm", "unit_rows", "none"}
        :class:`~pdsparse.data.steps.Normalize` (Face-Off Sec. 7: ``avg_example_norm``); with
        a split, computed on the training rows and applied to the test rows alike.
    positive_class : str or list of labels, optional
        :class:`~pdsparse.data.steps.Binarize`: this raw label becomes +1, every other -1; a
        list of (numeric) labels is a group (a list of one label is that label). Without it
        multiclass labels are kept as class labels.
    classes : list of labels, optional
        :class:`~pdsparse.data.steps.SelectClasses`: keep only the rows whose raw label is
        one of these (at least two numeric labels), in file order, before any other step
        (PDBFW Table 2: MNIST digits 0 and 9). With exactly two classes and no
        ``positive_class`` the labels become ±1, the larger label +1; a ``positive_class``
        must be among the classes and leave a negative one.
    features : {"rf", "rb"}, optional
        :class:`~pdsparse.data.steps.FeatureMap`: random Fourier (``n_features`` = D, dense
        output) or random binning (``n_grids`` = P, sparse output) features with bandwidth
        ``sigma`` and seed ``map_seed``, fitted on the training rows.
    input_scale : {"max_abs", "max_abs_columns", "none"}
        :class:`~pdsparse.data.steps.ScaleInputs` before the feature map: divide by the
        training rows' largest |value| (MNIST pixels / 255), each column by its own largest
        |value|, or not. Only with ``features``.
    test_rows : int
        :class:`~pdsparse.data.steps.SplitRows`: rows of the file held out as test rows (0:
        none), drawn with ``split_seed``.
    subsample : int, optional
        Keep only this many training rows (a stand-in such as ``mnist10k``), drawn with
        ``split_seed`` after the test rows, so the test rows do not change.
    split_seed : int
        Seed of the split and the subsample (only with ``test_rows`` or ``subsample``).
    test_file : str, optional
        :class:`~pdsparse.data.steps.SplitFile`: a second registry data set whose rows are
        the test rows (a published split), in place of ``test_rows``; labelled and
        transformed exactly as the training rows.

    Settings that would have no effect (``sigma`` without ``features``, ``split_seed``
    without a split, ...) are errors, so that one file has one recipe. Tags (``-``
    separated, path-safe, never ``__``): ``avg_example_norm``, ``none-pos3``,
    ``none-rb1000-sig39.5-ms0-te2000-ss0``, ``none-rf10000-sig10-ms0-te2000-sub10000-ss0``;
    labels of a list are joined by ``+``: ``unit_rows-pos1+2+3``,
    ``none-cl0+9-rb100-sig0.1-ms0``; a test file adds ``tf`` and its registry name:
    ``unit_rows-tfsector.t.scale``. Lists are stored as sorted tuples of canonical label
    texts, so ``[9, 0]`` and ``[0.0, 9]`` are one recipe.
    """

    normalization: str = _flag(
        "avg_example_norm", choices=NORMALIZATIONS, shown_default=True,
        help="avg_example_norm = divide by the mean example norm (Face-Off Sec. 7); with a "
        "split computed on the training rows; after a feature map (DGPD: none)")
    positive_class: str | None = _flag(
        None, metavar="LABEL", help="one-vs-rest: this label becomes +1, others -1 "
        "(without it multiclass labels are kept)", group_flag=("--positive-group", {
            "nargs": "+", "metavar": "LABEL", "help": "these labels become +1, every other "
            "-1 (a binary stand-in made of two groups of classes)"}))
    features: str | None = _flag(
        None, section="map", choices=FEATURE_MAPS,
        help="random Fourier (rf, dense, Gaussian kernel) or random binning (rb, sparse, "
        "Laplacian kernel) features, Rahimi & Recht 2007")
    n_features: int | None = _flag(None, section="map", type=int, metavar="D",
                                   help="rf: number of features")
    n_grids: int | None = _flag(None, section="map", type=int, metavar="P",
                                help="rb: number of grids")
    sigma: float | None = _flag(None, section="map", type=float,
                                help="kernel bandwidth (in scaled input units)")
    map_seed: int = _flag(0, section="map", type=int, metavar="S",
                          help="seed of the feature map (default 0)")
    input_scale: str = _flag(
        "max_abs", section="map", choices=INPUT_SCALES,
        help="before the map: max_abs = divide by the training rows' largest |value| "
        "(default; MNIST pixels / 255), none = keep")
    test_rows: int = _flag(0, section="split", type=int, metavar="N",
                           help="hold out N rows of the file as test rows (stored in the same "
                           ".npz)")
    subsample: int | None = _flag(None, section="split", type=int, metavar="N",
                                  help="keep only N training rows (after the test rows are "
                                  "drawn)")
    split_seed: int = _flag(0, section="split", type=int, metavar="S",
                            help="seed of the split and subsample (default 0)")
    classes: tuple[str, ...] | None = _flag(
        None, nargs="+", metavar="LABEL",
        help="keep only the rows of these labels, before anything else (two labels: a "
        "binary problem, the larger one +1; MNIST 0 vs 9)")
    test_file: str | None = _flag(
        None, section="split", metavar="NAME",
        help="take the test rows from this registry data set (a published split, e.g. "
        "sector.t.scale), prepared with the training rows' labels, map and normalization; "
        "needs --test-raw")

    def __post_init__(self) -> None:
        from pdsparse.data.steps import (
            Binarize,
            FeatureMap,
            Normalize,
            ScaleInputs,
            SelectClasses,
            SplitFile,
            SplitRows,
        )

        set_ = object.__setattr__
        normalize = Normalize(self.normalization)
        labels = Binarize(self.positive_class)
        set_(self, "positive_class", labels.positive_class)
        select = None
        if self.classes is not None:
            select = SelectClasses(self.classes)
            kept = select.classes
            set_(self, "classes", kept)
            positives = labels.positive_labels
            if positives is not None:
                outside = [p for p in positives if p not in kept]
                if outside:
                    raise ConfigError(f"recipe: positive_class {', '.join(outside)} is not "
                                      f"among classes {', '.join(kept)}")
                if len(positives) == len(kept):
                    raise ConfigError("recipe: positive_class covers every one of classes "
                                      f"{', '.join(kept)}: no row would be -1")
        scale = ScaleInputs(self.input_scale)
        fmap = None
        if self.features is None:
            given = [k for k in ("n_features", "n_grids", "sigma") if getattr(self, k) is not None]
            if self.map_seed != 0:
                given.append("map_seed")
            if self.input_scale != "max_abs":
                given.append("input_scale")
            if given:
                raise ConfigError(f"recipe: {', '.join(given)} only apply to a feature map; "
                                  "set features: rf or rb")
        else:
            size = {"rf": "n_features", "rb": "n_grids"}
            other = {"rf": "n_grids", "rb": "n_features"}.get(self.features)
            if other is not None and getattr(self, other) is not None:
                raise ConfigError(f"recipe: {other} does not apply to features "
                                  f"{self.features!r} (it takes {size[self.features]})")
            fmap = FeatureMap(self.features, getattr(self, size.get(self.features, "n_grids")),
                              self.sigma, self.map_seed)
            set_(self, fmap.size_key, fmap.size)
            set_(self, "sigma", fmap.sigma)
            set_(self, "map_seed", fmap.map_seed)
        split = SplitRows(self.test_rows, self.subsample, self.split_seed)
        set_(self, "test_rows", split.test_rows)
        set_(self, "subsample", split.subsample)
        set_(self, "split_seed", split.split_seed)
        by_file = None
        if self.test_file is not None:
            by_file = SplitFile(self.test_file)
            if self.test_rows:
                raise ConfigError(f"recipe: test_rows and test_file {self.test_file!r} both "
                                  "give test rows; keep one")
        # Recipes of a normalization and at most one positive class (Face-Off's) sum a row's
        # squares as scipy does, every other recipe in file order: each file keeps its bits
        # (the two differ in the last bits of some norms; steps.Normalize)
        if (select is None and fmap is None and by_file is None and not split.draws
                and not isinstance(labels.positive_class, tuple)):
            normalize = Normalize(self.normalization, row_sums="pairwise")
        steps = (select, labels, by_file, split if split.draws else None,
                 scale if fmap is not None else None, fmap, normalize)
        set_(self, "_steps", tuple(s for s in steps if s is not None))

    @property
    def steps(self) -> tuple:
        """The steps in apply order (:mod:`pdsparse.data.steps`): select classes, binarize,
        split by a test file, split and subsample drawn rows, scale inputs, feature map,
        normalize; the ones the recipe does not use are left out (binarize and normalize are
        always there)."""
        return self._steps

    @property
    def positive_labels(self) -> tuple[str, ...] | None:
        """The raw labels that become +1, as canonical texts (None: no positive_class)."""
        from pdsparse.data.steps import Binarize

        return Binarize(self.positive_class).positive_labels

    @property
    def map_size(self) -> int | None:
        """D (rf) or P (rb)."""
        return self.n_features if self.features == "rf" else self.n_grids

    def tag(self) -> str:
        """``avg_example_norm``, ``none-pos3``, ``none-rb1000-sig39.5-ms0-te2000-ss0``: the
        steps' tags (:func:`~pdsparse.data.steps.compose_tag`); safe in file names, distinct
        per recipe."""
        from pdsparse.data.steps import compose_tag

        return compose_tag(self.steps)

    def to_dict(self) -> dict:
        """The fields that differ from their defaults (for metadata and config)."""
        defaults = Recipe()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(defaults, f.name)
                or f.name == "normalization"}
