"""Figures 1–3 of Csiba & Richtárik, "Coordinate Descent Face-Off: Primal or Dual?".

* Figure 1 (Sec. 7.1, 7.3): suboptimality ``P(w) - P*`` against passes over the data for the
  worst-case general matrices of Theorem 3 (panels a, b) and the real datasets news and
  leukemia (panels c, d).
* Figure 2 (Sec. 7.2): the same curves for the worst-case binary matrices of Theorem 9 with
  ``d = 100``, one row per ``n`` and one column per sparsity level.
* Figure 3 (appendix, "A Figure Showcasing Corollary 6"): ``R(alpha, d, n)`` for ``n = 10^3``,
  ``n <= d <= n^2``, ``max{d, n} <= alpha <= n d``, with the level set ``R = 1`` marked.

The paper's ``X`` is ``d x n``; our data matrix is ``A = X^T`` (``n x d``). "One pass" is
``||X||_0`` touched nonzeros (Sec. 7), the ``epoch`` column of the traces.

All figures are drawn with :class:`matplotlib.figure.Figure` on the Agg canvas (no pyplot
state, no display needed), in one style (:data:`STYLE`), and written atomically as PNG
(150 dpi) and PDF.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from pdsparse.errors import DataError
from pdsparse.io import atomic_path, read_parquet

PathLike = str | os.PathLike

#: Suboptimality values below this (including zero and negative values caused by ``P*``
#: being slightly above the true optimum) are drawn at the floor on the log axis.
SUBOPT_FLOOR = 1e-16
PNG_DPI = 150
SKIPPED_TEXT = "skipped: data not available"
MASKED_COLOR = "0.85"
FIGURE1_PANELS = ("a", "b", "c", "d")

#: The one plotting style of the package (used via :func:`matplotlib.rc_context`).
STYLE: dict[str, object] = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.constrained_layout.use": True,
    "pdf.fonttype": 42,
}

#: Primal vs dual by colour (dual: one shade per dual step rule), sampling by line style.
PRIMAL_COLOR = "#1f77b4"
DUAL_COLORS = {"fixed": "#d62728", "newton": "#ff7f0e", "printed": "#9467bd"}
_EXTRA_DUAL_COLORS = ("#8c564b", "#e377c2", "#bcbd22")
SAMPLING_STYLES = {"importance": "-", "uniform": "--"}
_EXTRA_STYLES = (":", "-.")
#: One marker per configuration ``(family, sampling, dual_step)`` so that every curve can be
#: told apart even where curves lie on top of each other; uniform sampling has open markers.
MARKERS: dict[tuple[str, str, str], str] = {
    ("primal", "importance", ""): "o",
    ("primal", "uniform", ""): "s",
    ("dual", "importance", "fixed"): "^",
    ("dual", "uniform", "fixed"): "v",
    ("dual", "importance", "printed"): "D",
    ("dual", "uniform", "printed"): "d",
    ("dual", "importance", "newton"): "P",
    ("dual", "uniform", "newton"): "X",
}
_EXTRA_MARKERS = ("<", ">", "h", "p", "*", "H")
MARKER_SIZE = 4.5
#: Markers are spaced this fraction of the axes diagonal apart along each line; curve ``k``
#: of ``K`` in a panel starts ``(k + 1/2) / K`` of a spacing further, so curves lying on top
#: of each other show interleaved markers.
MARKER_SPACING = 0.1
#: Two medians "coincide" in a panel when they differ by at most this fraction of the
#: panel's log10 y-range over their common epochs (indistinguishable by eye); the panel then
#: says so in a small note.
COINCIDE_FRACTION = 0.01
BAND_ALPHA = 0.15

#: Dataset naming convention of the synthetic binary data of Figure 2.
BINARY_NAME_RE = re.compile(r"^bin_d(?P<d>\d+)_n(?P<n>\d+)_p(?P<p>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)$")


# --------------------------------------------------------------------------- helpers


def styled(func):
    """Run ``func`` inside :func:`matplotlib.rc_context` with :data:`STYLE` (the style helper)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return func(*args, **kwargs)

    return wrapper


def _new_figure(figsize: tuple[float, float]) -> Figure:
    return Figure(figsize=figsize)


def save_figure(fig: Figure, out_png: PathLike, out_pdf: PathLike) -> None:
    """Write ``fig`` atomically as PNG (:data:`PNG_DPI`) and PDF (no timestamps)."""
    with atomic_path(out_png) as tmp:
        fig.savefig(tmp, format="png", dpi=PNG_DPI, metadata={"Software": None})
    with atomic_path(out_pdf) as tmp:
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None, "ModDate": None})


def _read_aggregate(path: PathLike) -> pd.DataFrame:
    path = Path(path)
    df = read_parquet(path, "aggregate file")
    if "subopt" not in df.columns and {"primal", "p_star"} <= set(df.columns):
        df = df.assign(subopt=df["primal"] - df["p_star"])
    missing = [c for c in ("solver", "epoch", "subopt") if c not in df.columns]
    if missing:
        raise DataError(f"aggregate file {path} lacks column(s) {missing}")
    return df


def _family(solver: str) -> str:
    return "primal" if str(solver).startswith("primal") else "dual"


def config_key(row: Mapping[str, object]) -> tuple[str, str, str]:
    """``(solver, sampling, dual_step)`` of a run; ``dual_step`` is blank for primal solvers."""
    solver = str(row.get("solver", ""))
    sampling = str(row.get("sampling", "") or "")
    step = "" if _family(solver) == "primal" else str(row.get("dual_step", "") or "")
    return solver, sampling, step


def config_label(key: tuple[str, str, str]) -> str:
    """Legend label, e.g. ``"dual RCD, importance, newton step"``."""
    solver, sampling, step = key
    parts = [f"{_family(solver)} RCD" if solver in ("primal_rcd", "dual_rcd") else solver]
    if sampling:
        parts.append(sampling)
    if step:
        parts.append(f"{step} step")
    return ", ".join(parts)


def config_style(key: tuple[str, str, str]) -> dict[str, object]:
    """Colour by primal/dual (and dual step rule), line style by sampling, one marker each.

    Returns keyword arguments of :meth:`matplotlib.axes.Axes.plot`: ``color``,
    ``linestyle``, ``marker`` (:data:`MARKERS`), ``markerfacecolor`` (white = open marker
    for uniform sampling), ``markeredgecolor`` and ``markersize``.
    """
    solver, sampling, step = key
    family = _family(solver)
    if family == "primal":
        color = PRIMAL_COLOR
    else:
        color = DUAL_COLORS.get(
            step, _EXTRA_DUAL_COLORS[sum(map(ord, step)) % len(_EXTRA_DUAL_COLORS)]
        )
    linestyle = SAMPLING_STYLES.get(
        sampling, _EXTRA_STYLES[sum(map(ord, sampling)) % len(_EXTRA_STYLES)]
    )
    marker = MARKERS.get(
        (family, sampling, step),
        _EXTRA_MARKERS[sum(map(ord, "".join(key))) % len(_EXTRA_MARKERS)],
    )
    return {
        "color": color,
        "linestyle": linestyle,
        "marker": marker,
        "markerfacecolor": "white" if sampling == "uniform" else color,
        "markeredgecolor": color,
        "markersize": MARKER_SIZE,
    }


def _sort_key(key: tuple[str, str, str]) -> tuple:
    solver, sampling, step = key
    return (_family(solver) != "primal", sampling != "importance", sampling, step, solver)


@dataclass(frozen=True)
class Curve:
    """A summarised configuration: median and min/max of ``log10(subopt)`` over seeds."""

    key: tuple[str, str, str]
    epoch: np.ndarray
    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_seeds: int


def summarize_runs(df: pd.DataFrame, floor: float = SUBOPT_FLOOR) -> list[Curve]:
    """Median and min–max band of the suboptimality over seeds, per configuration.

    Each seed's trace is clipped at ``floor`` and interpolated linearly in
    ``(epoch, log10 subopt)`` onto the union of all seeds' epochs, restricted to the
    **common support**: the epochs that every seed of the configuration reached, i.e. from
    the largest first epoch to the smallest last epoch over seeds. Every point of a curve is
    therefore a median over all its seeds; a seed that stopped earlier (on convergence, or
    on a slightly different epoch count) truncates the curve instead of leaving a tail
    summarised over fewer seeds. A configuration whose seeds share no epoch is left out.
    Values are returned in linear scale.
    """
    curves = []
    df = df[np.isfinite(df["epoch"].astype(float)) & df["subopt"].notna()]
    if df.empty:
        return curves
    keys = [config_key(r) for r in df.to_dict("records")]
    df = df.assign(_key=keys)
    seed_col = "seed" if "seed" in df.columns else None
    for key, group in df.groupby("_key", sort=False):
        runs = [g for _, g in group.groupby(seed_col)] if seed_col else [group]
        traces = []
        for run in runs:
            run = run.sort_values("epoch")
            x = run["epoch"].to_numpy(float)
            y = np.log10(np.maximum(run["subopt"].to_numpy(float), floor))
            traces.append((x, y))
        start = max(x[0] for x, _ in traces)
        stop = min(x[-1] for x, _ in traces)
        grid = np.unique(np.concatenate([x for x, _ in traces]))
        grid = grid[(grid >= start) & (grid <= stop)]
        if grid.size == 0:
            continue
        values = np.vstack([np.interp(grid, x, y) for x, y in traces])
        curves.append(
            Curve(
                key=key,
                epoch=grid,
                median=10.0 ** np.median(values, axis=0),
                low=10.0 ** np.min(values, axis=0),
                high=10.0 ** np.max(values, axis=0),
                n_seeds=len(traces),
            )
        )
    curves.sort(key=lambda c: _sort_key(c.key))
    return curves


def coinciding_groups(
    curves: Sequence[Curve], tol_decades: float
) -> list[list[tuple[str, str, str]]]:
    """Groups of configurations whose median curves lie on top of each other.

    Two curves coincide when, over their common epochs (at least two distinct epochs), their
    medians differ by at most ``tol_decades`` in ``log10``; groups are the connected
    components of that relation, of two curves or more, in the order of ``curves``.
    """
    logs = [np.log10(np.maximum(c.median, SUBOPT_FLOOR)) for c in curves]
    parent = list(range(len(curves)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(curves):
        for j in range(i + 1, len(curves)):
            b = curves[j]
            lo, hi = max(a.epoch[0], b.epoch[0]), min(a.epoch[-1], b.epoch[-1])
            if not hi > lo:
                continue
            grid = np.union1d(a.epoch, b.epoch)
            grid = grid[(grid >= lo) & (grid <= hi)]
            diff = np.interp(grid, a.epoch, logs[i]) - np.interp(grid, b.epoch, logs[j])
            if np.max(np.abs(diff)) <= tol_decades:
                parent[root(j)] = root(i)
    groups: dict[int, list[tuple[str, str, str]]] = {}
    for i, c in enumerate(curves):
        groups.setdefault(root(i), []).append(c.key)
    return [g for g in groups.values() if len(g) > 1]


def _draw_curves(ax, curves: Sequence[Curve], handles: dict[str, Line2D]) -> None:
    """Median lines (sparse markers, offset per curve) and min–max bands of ``curves``."""
    count = max(len(curves), 1)
    for k, curve in enumerate(curves):
        style = config_style(curve.key)
        label = config_label(curve.key)
        offset = MARKER_SPACING * (k + 0.5) / count
        (line,) = ax.plot(
            curve.epoch,
            curve.median,
            label=label,
            markevery=(offset, MARKER_SPACING),
            **style,
        )
        if curve.n_seeds > 1:
            ax.fill_between(
                curve.epoch,
                curve.low,
                curve.high,
                color=style["color"],
                alpha=BAND_ALPHA,
                lw=0,
            )
        handles.setdefault(label, line)
    ax.set_yscale("log")


def _note_coinciding(ax, curves: Sequence[Curve]) -> list[list[tuple[str, str, str]]]:
    """Mark curves that coincide in this panel (call once its y-range is final).

    The note is a small in-panel legend, placed where it hides the least data: one entry per
    group, its handle the group's markers side by side, reading "coincide".
    """
    ymin, ymax = ax.get_ylim()
    span = math.log10(ymax / ymin) if ymin > 0 and ymax > ymin else 1.0
    groups = coinciding_groups(curves, COINCIDE_FRACTION * span)
    if not groups:
        return groups
    entries = []
    for group in groups:
        markers = []
        for key in group:
            style = dict(config_style(key), linestyle="none")
            markers.append(Line2D([], [], **style))
        entries.append(tuple(markers))
    ax.legend(
        entries,
        ["coincide"] * len(entries),
        handler_map={tuple: HandlerTuple(ndivide=None, pad=0.6)},
        loc="best",
        fontsize=7,
        handlelength=1.2 * max(len(g) for g in groups),
        framealpha=0.85,
        borderpad=0.3,
    )
    return groups


def _skip_panel(ax, title: str) -> None:
    ax.text(
        0.5,
        0.5,
        SKIPPED_TEXT,
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="0.4",
        fontstyle="italic",
    )
    # tick_params, not set_[xy]ticks([]): the latter would empty shared siblings' ticks too.
    ax.tick_params(left=False, bottom=False, labelleft=False, labelbottom=False)
    ax.grid(False)
    ax.set_title(title)


def band_note(curves: Sequence[Curve]) -> str:
    """What lines, bands and markers mean: the legend title of Figures 1 and 2."""
    seeds = sorted({c.n_seeds for c in curves})
    if not seeds:
        return ""
    counts = "/".join(map(str, seeds))
    if seeds[-1] > 1:
        first = (
            f"line: median over {counts} seeds, shaded band: min–max over seeds "
            "(both on the passes reached by every seed)"
        )
    else:
        first = "line: one seed"
    return first + "\nmarkers only tell the curves apart; a panel note marks curves that coincide"


def _legend(fig: Figure, handles: dict[str, Line2D], ncols: int, title: str = "") -> None:
    if not handles:
        return
    ordered = sorted(handles.items(), key=lambda kv: _label_order(kv[0]))
    fig.legend(
        [h for _, h in ordered],
        [lab for lab, _ in ordered],
        loc="outside lower center",
        ncols=min(ncols, len(ordered)),
        frameon=False,
        title=title or None,
        title_fontsize=STYLE["legend.fontsize"],
    )


def _label_order(label: str) -> tuple:
    return (not label.startswith("primal"), "uniform" in label, label)


# --------------------------------------------------------------------------- Figure 1


@styled
def faceoff_figure1(
    aggregate_paths: Mapping[str, PathLike | None],
    out_png: PathLike,
    out_pdf: PathLike,
    panel_titles: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Figure 1 of Face-Off: ``P(w) - P*`` vs passes over data, panels a–d.

    Parameters
    ----------
    aggregate_paths
        Panel key (``'a'``, ``'b'``, ``'c'``, ``'d'``) → aggregate Parquet
        (``results/faceoff/<experiment>.parquet``: traces plus ``p_star``, ``subopt``).
        A key that is absent or maps to ``None``, or an aggregate without rows, gives a panel
        reading "skipped: data not available": the 2 x 2 layout of the paper is always kept.
        Keys other than a–d raise :class:`~pdsparse.errors.DataError`.
    out_png, out_pdf
        Output files (written atomically).
    panel_titles
        Panel key → title; default ``"(a) <dataset>"``.

    Returns
    -------
    dict
        Panel key → ``"plotted"`` or ``"skipped"``.

    Notes
    -----
    One line per ``(solver, sampling, dual_step)`` found in the aggregates: median over
    seeds, shaded min–max band when there are several seeds, both on the passes every seed
    reached (see :func:`summarize_runs`); the legend title says so. Primal is blue, dual red
    (fixed step) / orange (Newton step) / purple (step as printed); importance sampling
    solid with filled markers, uniform dashed with open markers; each configuration has its
    own marker (:data:`MARKERS`), drawn sparsely and offset per curve so that curves lying on
    top of each other show interleaved markers. Curves that coincide to within
    :data:`COINCIDE_FRACTION` of the panel's height are named in a small note in the panel
    (their markers, "coincide"). ``subopt`` is clipped at :data:`SUBOPT_FLOOR` for the log
    axis.
    """
    unknown = sorted(set(aggregate_paths) - set(FIGURE1_PANELS))
    if unknown:
        raise DataError(f"figure 1 panel keys must be among {FIGURE1_PANELS}, got {unknown}")
    titles = dict(panel_titles or {})
    fig = _new_figure((9.0, 7.0))
    axes = fig.subplots(2, 2)
    handles: dict[str, Line2D] = {}
    status: dict[str, str] = {}
    drawn: list[tuple[object, list[Curve]]] = []
    for key, ax in zip(FIGURE1_PANELS, axes.ravel(), strict=True):
        path = aggregate_paths.get(key)
        df = _read_aggregate(path) if path is not None else None
        curves = summarize_runs(df) if df is not None else []
        default_title = f"({key})"
        if df is not None and "dataset" in df.columns and not df.empty:
            default_title += " " + ", ".join(map(str, pd.unique(df["dataset"])))
        title = titles.get(key, default_title)
        if not curves:
            _skip_panel(ax, title)
            status[key] = "skipped"
            continue
        _draw_curves(ax, curves, handles)
        drawn.append((ax, curves))
        ax.set_title(title)
        ax.set_xlabel("passes over data")
        ax.set_ylabel("P(w) − P*")
        status[key] = "plotted"
    for ax, curves in drawn:
        _note_coinciding(ax, curves)
    _legend(fig, handles, ncols=3, title=band_note([c for _, cs in drawn for c in cs]))
    save_figure(fig, out_png, out_pdf)
    return status


# --------------------------------------------------------------------------- Figure 2


def parse_binary_dataset_name(name: str) -> tuple[int, int, float]:
    """Parse ``bin_d{d}_n{n}_p{frac}`` (e.g. ``bin_d100_n1000_p0.01``) into ``(d, n, frac)``.

    ``frac`` is the proportion of nonzero entries, ``alpha ~ frac * n * d`` (Sec. 7.2).

    Raises
    ------
    DataError
        If ``name`` does not follow the convention.
    """
    match = BINARY_NAME_RE.match(str(name))
    if match is None:
        raise DataError(
            f"dataset name {name!r} does not follow the Figure 2 convention "
            "'bin_d{d}_n{n}_p{frac}' (e.g. 'bin_d100_n1000_p0.01')"
        )
    return int(match["d"]), int(match["n"]), float(match["p"])


def _percent(frac: float) -> str:
    return f"{100.0 * frac:g}%"


@styled
def faceoff_figure2(
    aggregate_path: PathLike,
    out_png: PathLike,
    out_pdf: PathLike,
    n_values: Sequence[int],
    nnz_fractions: Sequence[float],
    sharey: bool = True,
) -> dict[tuple[int, float], str]:
    """Figure 2 of Face-Off: worst-case binary data, rows = ``n``, columns = sparsity.

    Parameters
    ----------
    aggregate_path
        Aggregate Parquet of the Figure 2 experiment. Its ``dataset`` column must follow the
        naming convention ``bin_d{d}_n{n}_p{frac}`` (:func:`parse_binary_dataset_name`), e.g.
        ``bin_d100_n1000_p0.01`` = ``d = 100``, ``n = 1000``, about 1% nonzeros; ``n`` and
        ``frac`` are read from the name, not from other columns.
    out_png, out_pdf
        Output files (written atomically).
    n_values
        One subplot row per value, in this order.
    nnz_fractions
        One subplot column per value (fraction of nonzeros, compared to the name's ``frac``
        with a relative tolerance of 1e-6), in this order.
    sharey
        One y-range for all cells (default), tick labels on the left column only. Every cell
        plots the same quantity from a similar start (``P(0) - P*`` of the logistic loss at
        ``w = 0``) down to the same relative stopping tolerance, so on a shared axis the
        depths reached and the slopes (rates per pass) can be compared across ``n`` and
        sparsity by eye; per-cell ranges would stretch a cell that barely moves to the same
        height as one that converged. ``False``: each cell its own range.

    Curves are drawn as in :func:`faceoff_figure1` (median over seeds on the passes every
    seed reached, min–max band, per-configuration markers, a note where curves coincide).

    Returns
    -------
    dict
        ``(n, frac)`` → ``"plotted"`` or ``"skipped"``. Cells without data read
        "skipped: data not available"; datasets outside the grid are ignored.

    Raises
    ------
    DataError
        If a dataset name breaks the convention or a grid cell holds several ``d`` values.
    """
    if not n_values or not nnz_fractions:
        raise DataError("figure 2 needs at least one n value and one nnz fraction")
    df = _read_aggregate(aggregate_path)
    if "dataset" not in df.columns:
        raise DataError(f"aggregate file {aggregate_path} lacks the 'dataset' column")
    parsed = {name: parse_binary_dataset_name(name) for name in pd.unique(df["dataset"])}
    nrows, ncols = len(n_values), len(nnz_fractions)
    fig = _new_figure((max(2.6 * ncols + 0.6, 8.0), 2.1 * nrows + 1.0))
    axes = np.atleast_2d(fig.subplots(nrows, ncols, squeeze=False, sharey=bool(sharey)))
    handles: dict[str, Line2D] = {}
    status: dict[tuple[int, float], str] = {}
    drawn: list[tuple[object, list[Curve]]] = []
    all_d: set[int] = set()
    for i, n in enumerate(n_values):
        for j, frac in enumerate(nnz_fractions):
            ax = axes[i, j]
            names = [
                name
                for name, (_, nn, pp) in parsed.items()
                if nn == int(n) and math.isclose(pp, float(frac), rel_tol=1e-6)
            ]
            ds = sorted({parsed[name][0] for name in names})
            if len(ds) > 1:
                raise DataError(
                    f"aggregate {aggregate_path}: several d values {ds} for n={n}, "
                    f"nnz fraction {frac}: {names}"
                )
            all_d.update(ds)
            title = f"n = {int(n):,}, nnz ≈ {_percent(float(frac))}"
            curves = summarize_runs(df[df["dataset"].isin(names)]) if names else []
            if not curves:
                _skip_panel(ax, title)
                status[(int(n), float(frac))] = "skipped"
                continue
            _draw_curves(ax, curves, handles)
            drawn.append((ax, curves))
            ax.set_title(title)
            if i == nrows - 1:
                ax.set_xlabel("passes over data")
            if j == 0:
                ax.set_ylabel("P(w) − P*")
            status[(int(n), float(frac))] = "plotted"
    for ax, curves in drawn:  # after all cells: a shared y-range is final only now
        _note_coinciding(ax, curves)
    if all_d:
        fig.suptitle("Worst-case binary data, d = " + ", ".join(map(str, sorted(all_d))))
    _legend(fig, handles, ncols=3, title=band_note([c for _, cs in drawn for c in cs]))
    save_figure(fig, out_png, out_pdf)
    return status


# --------------------------------------------------------------------------- Figure 3


def corollary6_threshold(n: int) -> int:
    """``n^2 + 3n``: Corollary 6 (``d >=``) and Theorem 5 / Lemma 11 (``alpha >=``)."""
    return int(n) * int(n) + 3 * int(n)


def theorem4_d_bound(n: int) -> float:
    """``n^2/4 - 3n/2 - 1``: for ``n <= d <=`` this, some binary X has ``C_D < C_P`` (Thm 4)."""
    return n * n / 4.0 - 1.5 * n - 1.0


@dataclass(frozen=True)
class RGrid:
    """``R(alpha, d, n)`` on a log-spaced grid; ``R[k, l]`` is at ``alpha[k]``, ``d[l]``.

    Entries with ``alpha < max(d, n)`` or ``alpha > n d`` (no binary ``d x n`` matrix without
    zero rows/columns has that many nonzeros) are masked.
    """

    n: int
    d: np.ndarray
    alpha: np.ndarray
    R: np.ma.MaskedArray


def _log_int_grid(lo: int, hi: int, points: int) -> np.ndarray:
    grid = np.unique(np.rint(np.geomspace(lo, hi, max(int(points), 2))).astype(np.int64))
    return grid[(grid >= lo) & (grid <= hi)]


def r_grid(n: int, d_points: int = 160, alpha_points: int = 160, d_max: int | None = None) -> RGrid:
    """Evaluate :func:`pdsparse.stats.R` on ``n <= d <= d_max``, ``n <= alpha <= n d_max``.

    ``d_max`` defaults to ``n^2`` (the range of the paper's Figure 3). Integer grids are
    log-spaced (duplicates after rounding removed). Only valid combinations are passed to
    ``R``; the others are masked.
    """
    from pdsparse.stats import R  # late import: keeps plotting importable on its own

    n = int(n)
    if n < 2:
        raise DataError(f"figure 3 needs n >= 2, got n={n}")
    d_max = n * n if d_max is None else int(d_max)
    if d_max < n:
        raise DataError(f"figure 3 needs d_max >= n, got d_max={d_max}, n={n}")
    d = _log_int_grid(n, d_max, d_points)
    alpha = _log_int_grid(n, n * d_max, alpha_points)
    dd, aa = np.meshgrid(d, alpha)
    valid = (aa >= np.maximum(dd, n)) & (aa <= n * dd)
    values = np.full(aa.shape, np.nan)
    values[valid] = np.asarray(R(aa[valid], dd[valid], n), dtype=np.float64)
    return RGrid(n=n, d=d, alpha=alpha, R=np.ma.masked_array(values, mask=~valid))


@styled
def faceoff_figure3(
    n: int,
    out_png: PathLike,
    out_pdf: PathLike,
    d_points: int = 160,
    alpha_points: int = 160,
    d_max: int | None = None,
) -> RGrid:
    """Figure 3 of Face-Off (appendix): heatmap of ``R(alpha, d, n)`` with ``R = 1`` marked.

    ``R(alpha, d, n) = U(alpha, d, n) / L(alpha, n)`` is the largest ``C_P/C_D`` over binary
    ``d x n`` matrices with ``alpha`` nonzeros (Theorem 9). Where ``R <= 1`` the primal method
    is never worse in theory; Corollary 6 says this holds for every ``alpha`` once
    ``d >= n^2 + 3n``, Theorem 5 / Lemma 11 once ``alpha >= n^2 + 3n`` (``d >= n``).

    Axes: ``d`` (x) and ``alpha`` (y), both log; the colour scale is logarithmic and centred
    on 1 (red: ``R > 1``, blue: ``R < 1``); the solid black line is the contour ``R = 1``, the
    dashed line ``alpha = n^2 + 3n`` (and ``d = n^2 + 3n`` if inside the range), the dotted
    line Theorem 4's ``d = n^2/4 - 3n/2 - 1`` (below it some binary X has ``C_D < C_P``), grey
    lines the validity bounds ``alpha = max(d, n)`` and ``alpha = n d`` (outside: masked, grey).

    Parameters
    ----------
    n
        Number of examples (the paper uses ``10^3``).
    out_png, out_pdf
        Output files (written atomically).
    d_points, alpha_points
        Grid resolution (log-spaced integers).
    d_max
        Largest ``d``; default ``n^2`` as in the paper.

    Returns
    -------
    RGrid
        The evaluated grid.
    """
    grid = r_grid(n, d_points=d_points, alpha_points=alpha_points, d_max=d_max)
    R = grid.R
    finite = R.compressed()
    finite = finite[np.isfinite(finite) & (finite > 0)]
    span = max(float(finite.max()), 1.0 / float(finite.min()), 1.0 + 1e-9) if finite.size else 10.0
    fig = _new_figure((6.4, 4.8))
    ax = fig.subplots()
    ax.grid(False)
    ax.set_facecolor(MASKED_COLOR)
    mesh = ax.pcolormesh(
        grid.d,
        grid.alpha,
        R,
        shading="nearest",
        cmap="RdBu_r",
        norm=LogNorm(vmin=1.0 / span, vmax=span),
        rasterized=True,
    )
    cbar = fig.colorbar(mesh, ax=ax)
    cbar.set_label("R(α, d, n) = max C_P/C_D over binary X")
    handles = []
    if finite.size and finite.min() <= 1.0 <= finite.max():
        ax.contour(grid.d, grid.alpha, R, levels=[1.0], colors="k", linewidths=1.6)
        handles.append(Line2D([], [], color="k", lw=1.6, label="R = 1"))
    threshold = corollary6_threshold(grid.n)
    if grid.alpha[0] <= threshold <= grid.alpha[-1]:
        ax.axhline(threshold, color="k", ls="--", lw=1.0)
        handles.append(Line2D([], [], color="k", ls="--", lw=1.0, label="α = n² + 3n (Theorem 5)"))
    theorem4 = theorem4_d_bound(grid.n)
    if grid.d[0] <= theorem4 <= grid.d[-1]:
        ax.axvline(theorem4, color="k", ls=(0, (1, 3)), lw=1.0)
        handles.append(
            Line2D(
                [], [], color="k", ls=(0, (1, 3)), lw=1.0, label="d = n²/4 − 3n/2 − 1 (Theorem 4)"
            )
        )
    if grid.d[0] <= threshold <= grid.d[-1]:
        ax.axvline(threshold, color="k", ls=":", lw=1.2)
        handles.append(Line2D([], [], color="k", ls=":", lw=1.2, label="d = n² + 3n (Corollary 6)"))
    d_line = grid.d.astype(float)
    ax.plot(d_line, np.maximum(d_line, grid.n), color="0.5", lw=0.8)
    ax.plot(d_line, grid.n * d_line, color="0.5", lw=0.8)
    handles.append(Line2D([], [], color="0.5", lw=0.8, label="α = max(d, n), α = nd"))
    handles.append(Patch(facecolor=MASKED_COLOR, label="no such matrix (masked)"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(grid.d[0], grid.d[-1])
    ax.set_ylim(grid.alpha[0], grid.alpha[-1])
    ax.set_xlabel("d (features)")
    ax.set_ylabel("α = ‖X‖₀ (nonzeros)")
    ax.set_title(f"R(α, d, n) for n = {grid.n:,}: R ≤ 1 ⇒ primal never worse (C_P ≤ C_D)")
    ax.legend(handles=handles, loc="upper left", frameon=True, framealpha=0.85)
    save_figure(fig, out_png, out_pdf)
    return grid
