"""Figures 1–3 of Csiba & Richtárik, "Coordinate Descent Face-Off: Primal or Dual?".

* Figure 1 (Sec. 7.1, 7.3): suboptimality ``P(w) - P*`` against passes over the data for the
  worst-case general matrices of Theorem 3 (panels a, b) and the real datasets news and
  leukemia (panels c, d).
* Figure 2 (Sec. 7.2): the same curves for the worst-case binary matrices of Theorem 9 with
  ``d = 100``, one row per ``n`` and one column per sparsity level.
* Figure 3 (appendix, "A Figure Showcasing Corollary 6"): ``R(alpha, d, n)`` for ``n = 10^3``,
  ``n <= d <= n^2``, ``max{d, n} <= alpha <= n d``, with the level set ``R = 1`` marked.

Figures 1 and 2 are curve figures: :func:`figure1_spec` and :func:`figure2_spec` describe
them as :class:`pdsparse.repro.figures.CurveFigure` specs, drawn by
:func:`pdsparse.repro.figures.draw_curve_figure`; :func:`faceoff_figure1` and
:func:`faceoff_figure2` are the command-line entry points that build the spec and draw it.
Figure 3 is theory only (no data) and drawn here.

The paper's ``X`` is ``d x n``; our data matrix is ``A = X^T`` (``n x d``). "One pass" is
``||X||_0`` touched nonzeros (Sec. 7), the ``epoch`` column of the traces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pdsparse.errors import DataError
from pdsparse.repro import figures
from pdsparse.repro.figures import (  # noqa: F401  (re-exported: the Face-Off names of the helpers)
    BAND_ALPHA,
    COINCIDE_FRACTION,
    DEFAULT_CURVE_KEYS,
    DUAL_COLORS,
    MARKER_SIZE,
    MARKER_SPACING,
    MARKERS,
    PNG_DPI,
    PRIMAL_COLOR,
    SAMPLING_STYLES,
    SKIPPED_TEXT,
    STYLE,
    SUBOPT_FLOOR,
    Curve,
    CurveFigure,
    Panel,
    PathLike,
    band_note,
    coinciding_groups,
    draw_curve_figure,
    read_aggregate,
    save_figure,
    styled,
    summarize_runs,
)
from pdsparse.repro.output import Builder

MASKED_COLOR = "0.85"
FIGURE1_PANELS = ("a", "b", "c", "d")
FIGURE2_EXPERIMENT = "figure2"


def config_key(row: Mapping[str, object]) -> tuple[str, ...]:
    """``(solver, sampling, dual_step)`` of a run; ``dual_step`` is blank for primal solvers."""
    return figures.curve_key(row, DEFAULT_CURVE_KEYS)


def config_label(key: Sequence[str]) -> str:
    """Legend label, e.g. ``"dual RCD, importance, newton step"``."""
    return figures.curve_label(DEFAULT_CURVE_KEYS, key)


def config_style(key: Sequence[str]) -> dict[str, object]:
    """Colour by primal/dual (and dual step rule), line style by sampling, one marker each
    (:func:`pdsparse.repro.figures.curve_style` of ``(solver, sampling, dual_step)``)."""
    return figures.curve_style(DEFAULT_CURVE_KEYS, key)


# --------------------------------------------------------------------------- Figure 1


def figure1_spec(
    titles: Mapping[str, str] | None = None, experiments: Mapping[str, str] | None = None,
    only: Sequence[str] | None = None, note: str = "",
) -> CurveFigure:
    """Face-Off Figure 1 as a spec: panels a–d (2 x 2), ``P(w) - P*`` against passes.

    ``titles``: panel letter → title (default ``"(a)"``); ``experiments``: panel letter →
    aggregate name (default ``"figure1<letter>"``). Each panel has its own y-range. ``only``:
    the letters to draw (default all four), two to a row, the figure as high as its rows:
    the plan passes the panels whose data the run has and says in ``note`` (a line of the
    legend) which it left out, instead of half a figure of empty panels.
    """
    titles, experiments = dict(titles or {}), dict(experiments or {})
    letters = list(FIGURE1_PANELS if only is None else only)
    unknown = sorted((set(titles) | set(experiments) | set(letters)) - set(FIGURE1_PANELS))
    if unknown:
        raise DataError(f"figure 1 panel keys must be among {FIGURE1_PANELS}, got {unknown}")
    if not letters:
        raise DataError("figure 1 needs at least one panel")
    panels = tuple(
        Panel(titles.get(k, f"({k})"), experiments.get(k, f"figure1{k}")) for k in letters
    )
    ncols = min(2, len(panels))
    nrows = -(-len(panels) // ncols)
    return CurveFigure(
        "figure1", panels, ncols=ncols, x="epoch", y="subopt", sharey=False,
        figsize=(9.0 if ncols == 2 else 5.5, 3.5 * nrows + (0.5 if nrows == 1 else 0.0)),
        note=note,
    )


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
    Drawn by :func:`pdsparse.repro.figures.draw_curve_figure` from :func:`figure1_spec`: one line
    per ``(solver, sampling, dual_step)`` found in the aggregates, the median over seeds with
    a shaded min–max band when there are several seeds, both on the passes every seed reached
    (the legend title says so). Primal is blue, dual red (fixed step) / orange (Newton step)
    / purple (step as printed); importance sampling solid with filled markers, uniform dashed
    with open markers; each configuration has its own marker, drawn sparsely and offset per
    curve so that curves lying on top of each other show interleaved markers. Curves that
    coincide to within :data:`COINCIDE_FRACTION` of the panel's height are named in a small
    note in the panel. ``subopt`` is clipped at :data:`SUBOPT_FLOOR` for the log axis.
    """
    import pandas as pd

    unknown = sorted(set(aggregate_paths) - set(FIGURE1_PANELS))
    if unknown:
        raise DataError(f"figure 1 panel keys must be among {FIGURE1_PANELS}, got {unknown}")
    frames = {k: read_aggregate(p) for k, p in aggregate_paths.items() if p is not None}
    titles = {}
    for key in FIGURE1_PANELS:
        titles[key] = f"({key})"
        df = frames.get(key)
        if df is not None and "dataset" in df.columns and not df.empty:
            titles[key] += " " + ", ".join(map(str, pd.unique(df["dataset"])))
    titles.update(panel_titles or {})
    spec = figure1_spec(titles)
    status = draw_curve_figure(
        spec, {f"figure1{k}": df for k, df in frames.items()}, out_png, out_pdf
    )
    return {k: status[titles[k]] for k in FIGURE1_PANELS}


# --------------------------------------------------------------------------- Figure 2


def _percent(frac: float) -> str:
    return f"{100.0 * frac:g}%"


def figure2_title(n: int, nnz_fraction: float) -> str:
    """Title of the Figure 2 cell ``(n, nnz fraction)``, e.g. ``"n = 1,000, nnz ≈ 10%"``."""
    return f"n = {int(n):,}, nnz ≈ {_percent(float(nnz_fraction))}"


def figure2_spec(
    cells: Mapping[tuple[int, float], str],
    n_values: Sequence[int],
    nnz_fractions: Sequence[float],
    sharey: bool = True,
    suptitle: str = "",
    experiment: str = FIGURE2_EXPERIMENT,
) -> CurveFigure:
    """Face-Off Figure 2 as a spec: rows ``n``, columns nnz fraction, one aggregate.

    ``cells`` maps ``(n, nnz fraction)`` to the data set of that cell (the plan's
    ``Figure2Cell.name``); a grid cell without a data set reads "skipped". ``sharey``: one
    y-range for all cells (see :func:`faceoff_figure2`).
    """
    if not n_values or not nnz_fractions:
        raise DataError("figure 2 needs at least one n value and one nnz fraction")
    panels = []
    for n in n_values:
        for frac in nnz_fractions:
            name = cells.get((int(n), float(frac)))
            title = figure2_title(n, frac)
            if name is None:
                panels.append(Panel(title, ""))  # no data set: always skipped
            else:
                panels.append(Panel(title, experiment, {"dataset": name}))
    return CurveFigure(
        "figure2",
        tuple(panels),
        ncols=len(nnz_fractions),
        x="epoch",
        y="subopt",
        sharey=bool(sharey),
        suptitle=suptitle,
        outer_labels=True,
    )


@dataclass(frozen=True)
class Figure2Cell:
    """One panel of Figure 2: the worst case for dual RCD (Theorem 9) at (d, n, alpha).

    ``alpha = round(nnz_fraction * d * n)``; cells outside ``[max(d, n), d n]`` (Lemma 10)
    are dropped. Data-set name: ``bin_d{d}_n{n}_p{nnz_fraction:g}``.
    """

    name: str
    d: int
    n: int
    alpha: int
    nnz_fraction: float


def figure2_cells(fig2: Mapping) -> list[Figure2Cell]:
    """Expand ``faceoff.figure2`` into cells (rows n, columns nnz fraction), valid ones only."""
    d = int(fig2["d"])
    cells = []
    for n in fig2["n"]:
        for frac in fig2["nnz_fraction"]:
            alpha = int(round(float(frac) * d * n))
            if not max(d, n) <= alpha <= d * n:
                continue  # Theorem 9 needs max(d, n) <= alpha <= d n: no such matrix
            name = f"bin_d{d}_n{int(n)}_p{float(frac):g}"
            cells.append(Figure2Cell(name, d, int(n), alpha, float(frac)))
    return cells


def _figure2_cells(d: int, n_values: Sequence[int], nnz_fractions: Sequence[float]):
    """The plan's cells (:func:`figure2_cells`) of the grid."""
    return figure2_cells({"d": d, "n": list(n_values), "nnz_fraction": list(nnz_fractions)})


def faceoff_figure2(
    aggregate_path: PathLike,
    out_png: PathLike,
    out_pdf: PathLike,
    n_values: Sequence[int],
    nnz_fractions: Sequence[float],
    sharey: bool = True,
    *,
    d: int | None = None,
) -> dict[tuple[int, float], str]:
    """Figure 2 of Face-Off: worst-case binary data, rows = ``n``, columns = sparsity.

    Parameters
    ----------
    aggregate_path
        Aggregate Parquet of the Figure 2 experiment.
    out_png, out_pdf
        Output files (written atomically).
    n_values
        One subplot row per value, in this order.
    nnz_fractions
        One subplot column per value (fraction of nonzeros, ``alpha ~ frac * n * d``), in
        this order.
    sharey
        One y-range for all cells (default), tick labels on the left column only. Every cell
        plots the same quantity from a similar start (``P(0) - P*`` of the logistic loss at
        ``w = 0``) down to the same relative stopping tolerance, so on a shared axis the
        depths reached and the slopes (rates per pass) can be compared across ``n`` and
        sparsity by eye; per-cell ranges would stretch a cell that barely moves to the same
        height as one that converged. ``False``: each cell its own range.
    d
        Number of features of the grid; default: the aggregate's ``d`` column (one value).

    The data set of each cell is the plan's (:func:`figure2_cells`,
    given ``d``, ``n_values`` and ``nnz_fractions``), never parsed back from data-set names.
    Curves are drawn as in :func:`faceoff_figure1`.

    Returns
    -------
    dict
        ``(n, frac)`` → ``"plotted"`` or ``"skipped"``. Cells without data read
        "skipped: data not available"; data sets outside the grid are ignored.

    Raises
    ------
    DataError
        If ``d`` is not given and the aggregate holds no or several ``d`` values.
    """
    import pandas as pd

    if not n_values or not nnz_fractions:
        raise DataError("figure 2 needs at least one n value and one nnz fraction")
    df = read_aggregate(aggregate_path)
    if d is None and not df.empty:
        if "d" not in df.columns:
            raise DataError(
                f"aggregate file {aggregate_path} lacks the column 'd'; pass d (features)"
            )
        ds = sorted(int(v) for v in pd.unique(df["d"]))
        if len(ds) > 1:
            raise DataError(f"aggregate file {aggregate_path} holds several d values {ds}")
        d = ds[0]
    cells = (
        {}
        if d is None
        else {(c.n, c.nnz_fraction): c.name for c in _figure2_cells(d, n_values, nnz_fractions)}
    )
    suptitle = f"Worst-case binary data, d = {d}" if d is not None else ""
    spec = figure2_spec(cells, n_values, nnz_fractions, sharey=sharey, suptitle=suptitle)
    status = draw_curve_figure(spec, {FIGURE2_EXPERIMENT: df}, out_png, out_pdf)
    return {
        (int(n), float(f)): status[figure2_title(n, f)] for n in n_values for f in nnz_fractions
    }


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
    from matplotlib.colors import LogNorm
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    grid = r_grid(n, d_points=d_points, alpha_points=alpha_points, d_max=d_max)
    R = grid.R
    finite = R.compressed()
    finite = finite[np.isfinite(finite) & (finite > 0)]
    span = max(float(finite.max()), 1.0 / float(finite.min()), 1.0 + 1e-9) if finite.size else 10.0
    fig = figures.new_figure((6.4, 4.8))
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


# ------------------------------------------------------------ pdsparse output faceoff figure3


def _figure3_arguments(p) -> None:
    p.add_argument("--n", type=int, default=1000, help="number of examples")
    p.add_argument("--d-max", type=int, default=None, help="largest d (default n^2)")
    p.add_argument("--d-points", type=int, default=160, help="log-spaced d values")
    p.add_argument("--alpha-points", type=int, default=160, help="log-spaced alpha values")


def _figure3_build(args, outs) -> None:
    faceoff_figure3(args.n, *outs, d_points=args.d_points, alpha_points=args.alpha_points,
                    d_max=args.d_max)


FIGURE3_OUTPUT = Builder("figure", "Face-Off Figure 3: R(alpha, d, n) of Theorem 9 (no data "
                         "needed)", _figure3_arguments, _figure3_build)
