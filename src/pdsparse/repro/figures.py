"""Curve figures described by data: a :class:`CurveFigure` spec, drawn by one function.

Every convergence figure of the reproduced papers (Face-Off Figures 1 and 2, DGPD's and
PDBFW's objective-vs-time/iteration figures) is a grid of panels, each panel reading one
aggregate (``results/<paper>/<experiment>.parquet``: traces plus ``p_star``, ``subopt``,
``rel_subopt``) filtered by column values, and drawing one curve per solver configuration:
the median over seeds with the min–max band over seeds. A figure is therefore data::

    spec = CurveFigure(
        name="figure1", ncols=2, x="epoch", y="subopt",
        panels=(Panel("(a) d = n", "figure1a"), Panel("(d) leu", "figure1d"), None, ...),
    )
    draw_curve_figure(spec, {"figure1a": "results/faceoff/figure1a.parquet"}, png, pdf)

and travels as JSON (:meth:`CurveFigure.to_dict` / :meth:`CurveFigure.from_dict`) from a
paper's plan through the workflow to ``pdsparse output PAPER curves``.

Styles come from the solver registry (:data:`pdsparse.solvers.SOLVERS`): the family
(primal / dual) picks the colour palette, the option values the shade (``dual_step``), the
line style and marker fill (``sampling``) and the marker; the legend label is the registry's
label followed by the option values. The same configuration has the same style in every
figure; within a figure every curve has its own marker (:func:`figure_styles`).

Everything is drawn with :class:`matplotlib.figure.Figure` on the Agg canvas (no pyplot
state, no display needed), in one style (:data:`STYLE`), and written atomically as PNG
(:data:`PNG_DPI`) and PDF.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pdsparse.errors import ConfigError, DataError
from pdsparse.io import atomic_path, read_parquet
from pdsparse.repro.output import Builder, key_value, require_file

if TYPE_CHECKING:  # pandas and matplotlib load on first drawing: specs are import-light
    import pandas as pd
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

__all__ = [
    "CurveFigure",
    "Curve",
    "Panel",
    "X_AXES",
    "Y_AXES",
    "coinciding_groups",
    "curve_key",
    "curve_label",
    "curve_style",
    "draw_curve_figure",
    "figure_styles",
    "read_aggregate",
    "save_figure",
    "solver_registry",
    "styled",
    "summarize_runs",
    "y_values",
]

PathLike = str | os.PathLike

# --------------------------------------------------------------------------- style

#: Suboptimality (and gap) values below this, including zero and negative values caused by
#: ``P*`` being slightly above the true optimum, are drawn at the floor on the log axis.
SUBOPT_FLOOR = 1e-16
PNG_DPI = 150
SKIPPED_TEXT = "skipped: data not available"

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

#: x axes: trace column -> axis label.
X_AXES: dict[str, str] = {
    "epoch": "passes over data",
    "iteration": "iterations",
    "time_s": "CPU time (s)",
    "sweeps": "iterations",
}
#: What "the x values every seed reached" are called in the legend title.
_X_SUPPORT = {"epoch": "passes", "iteration": "iterations", "time_s": "times",
              "sweeps": "iterations"}
#: y axes: quantity -> axis label. ``subopt = P - P*``; ``rel_subopt = (P - P*)/|P*|``;
#: ``rel_objective`` is the same quantity under the DGPD paper's name ("relative
#: objective"); ``rel_gap = (P - D)/|P|``, the certified relative duality gap.
Y_AXES: dict[str, str] = {
    "subopt": "P(w) − P*",
    "rel_subopt": "(P(w) − P*) / |P*|",
    "rel_objective": "relative objective (P(w) − P*) / |P*|",
    "rel_gap": "duality gap / |P(w)|",
}

DEFAULT_CURVE_KEYS = ("solver", "sampling", "dual_step")
#: The option drawn as line style and marker fill; every other option picks a shade.
LINESTYLE_OPTION = "sampling"
SAMPLING_STYLES = {"importance": "-", "uniform": "--", "permutation": ":", "": "-"}
_EXTRA_LINESTYLES = ("-.", (0, (5, 1, 1, 1, 1, 1)))
#: Sampling values drawn with open (white-filled) markers.
OPEN_SAMPLINGS = frozenset({"uniform"})

#: Colour palettes by solver family; the first colours go to the known configurations
#: (:data:`KNOWN_COLORS`), the others to further registry configurations in order.
PALETTES: dict[str, tuple[str, ...]] = {
    "primal": ("#1f77b4", "#17becf", "#393b79", "#6b6ecf", "#2ca02c"),
    "dual": ("#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#bcbd22"),
    "primal_dual": ("#2ca02c", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"),
    "other": ("#2ca02c", "#7f7f7f", "#bcbd22", "#17becf", "#8c564b", "#e377c2"),
}
PRIMAL_COLOR = PALETTES["primal"][0]
DUAL_COLORS = {"fixed": "#d62728", "newton": "#ff7f0e", "printed": "#9467bd"}
#: Face-Off's look, kept: (solver, shade options) -> colour.
KNOWN_COLORS: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {
    ("primal_rcd", ()): PRIMAL_COLOR,
    **{("dual_rcd", (("dual_step", s),)): c for s, c in DUAL_COLORS.items()},
}
#: One marker per Face-Off configuration (solver, sampling, dual_step), as in its figures.
MARKERS: dict[tuple[str, str, str], str] = {
    ("primal_rcd", "importance", ""): "o",
    ("primal_rcd", "uniform", ""): "s",
    ("dual_rcd", "importance", "fixed"): "^",
    ("dual_rcd", "uniform", "fixed"): "v",
    ("dual_rcd", "importance", "printed"): "D",
    ("dual_rcd", "uniform", "printed"): "d",
    ("dual_rcd", "importance", "newton"): "P",
    ("dual_rcd", "uniform", "newton"): "X",
}
#: Markers of the other curves of a figure, handed out in curve order: shapes a reader can
#: tell apart and name (no letters, no thin strokes that vanish at the report's size).
MARKER_NAMES = {"o": "circle", "s": "square", "^": "triangle up", "v": "triangle down",
                "D": "diamond", "P": "plus", "X": "cross", "<": "triangle left",
                ">": "triangle right", "p": "pentagon", "h": "hexagon", "*": "star",
                "8": "octagon", "d": "thin diamond"}
MARKER_POOL = tuple(MARKER_NAMES)
"""The 14 marker shapes. A figure's curves get distinct markers from them (the Face-Off
configurations keep theirs, :data:`MARKERS`), so a figure never shows more marker shapes than
it has curves; past 14 curves they repeat, told apart by colour and line style."""
MARKER_SIZE = 4.5
#: Markers are spaced this fraction of the axes diagonal apart along each line; curve ``k``
#: of ``K`` in a panel starts ``(k + 1/2) / K`` of a spacing further, so curves lying on top
#: of each other show interleaved markers.
MARKER_SPACING = 0.1
#: Two medians "coincide" in a panel when they differ by at most this fraction of the
#: panel's log10 y-range over their common x values (indistinguishable by eye); the panel
#: then says so in a small note.
COINCIDE_FRACTION = 0.01
BAND_ALPHA = 0.15
#: Appended to the legend label of a configuration with a diverged run.
DIVERGED_LABEL = " (diverged: × where it leaves the chart)"
#: The legend title's line, once per figure, when a run stopped at its time budget
#: (``status == "max_time"``): its curve ends at a bar, where the budget did, not where it
#: converged (no label suffix: a legend of long labels runs off the figure).
NOTE_WIDTH = 90
"""A plan's legend note is wrapped at this many characters (the legend is as wide as its
widest line, and the figure clips what is wider)."""
BUDGET_NOTE = "| at a curve's end: its run stopped at its time budget, not converged"
#: A diverged curve is drawn until its median rises this many decades above its start, and
#: clipped there (its next values, up to 1e300 before inf, would squash every other curve).
DIVERGED_RISE_DECADES = 3.0


def styled(func):
    """Run ``func`` inside :func:`matplotlib.rc_context` with :data:`STYLE` (the style helper)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(STYLE):
            return func(*args, **kwargs)

    return wrapper


def new_figure(figsize: tuple[float, float]) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=figsize)


def save_figure(fig: Figure, out_png: PathLike, out_pdf: PathLike) -> None:
    """Write ``fig`` atomically as PNG (:data:`PNG_DPI`) and PDF (no timestamps)."""
    with atomic_path(out_png) as tmp:
        fig.savefig(tmp, format="png", dpi=PNG_DPI, metadata={"Software": None})
    with atomic_path(out_pdf) as tmp:
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None, "ModDate": None})


_POWER = re.compile(r"(?<![\w.$])(\d+)\^\{?(-?\d+)\}?")


def tex_powers(text: str) -> str:
    """``"n = 10^4"`` as matplotlib's mathtext ``"n = $10^{4}$"``: a title, label or note
    typed with a caret (config files do) prints the power raised, not a literal caret."""
    return _POWER.sub(r"$\1^{\2}$", text)


def skip_panel(ax, title: str) -> None:
    """Draw ``ax`` as a panel without data: its title and "skipped: data not available"."""
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
    ax.set_title(tex_powers(title))


# --------------------------------------------------------------------------- the spec


def _json_scalar(value: Any, what: str) -> str | int | float | bool:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | str) or (isinstance(value, float) and math.isfinite(value)):
        return value
    raise ConfigError(f"{what}: {value!r} is not a string, number or boolean")


@dataclass(frozen=True)
class Panel:
    """One panel: the aggregate it reads and the rows of it that it draws.

    Attributes
    ----------
    title
        Panel title (unique within a figure: it names the panel in the returned status).
    experiment
        Name of the aggregate (a key of the ``aggregates`` mapping of
        :func:`draw_curve_figure`); a name without an aggregate gives a skipped panel.
    where
        ``{column: value}``: keep the rows where every column equals its value (floats
        compared with a relative tolerance of 1e-9), e.g. ``{"dataset": "leu"}``.
    x, logx
        Overrides of the figure's ``x`` and ``logx`` for this panel (None: the figure's).
    """

    title: str
    experiment: str
    where: Mapping[str, Any] = field(default_factory=dict)
    x: str | None = None
    logx: bool | None = None

    def __post_init__(self) -> None:
        where = {
            str(k): _json_scalar(v, f"panel {self.title!r}, where[{k!r}]")
            for k, v in dict(self.where or {}).items()
        }
        object.__setattr__(self, "where", where)
        if self.x is not None and self.x not in X_AXES:
            raise ConfigError(
                f"panel {self.title!r}: x must be one of {list(X_AXES)}, got {self.x!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "experiment": self.experiment}
        if self.where:
            out["where"] = dict(self.where)
        if self.x is not None:
            out["x"] = self.x
        if self.logx is not None:
            out["logx"] = bool(self.logx)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Panel:
        return cls(**_known_keys(cls, data, "panel"))


def _known_keys(cls, data: Mapping[str, Any], what: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{what}: expected an object, got {data!r}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ConfigError(f"{what}: unknown key(s) {unknown}; allowed: {names}")
    return dict(data)


@dataclass(frozen=True)
class CurveFigure:
    """A curve figure as data: a grid of :class:`Panel` s and what every panel plots.

    Attributes
    ----------
    name
        Figure name (e.g. ``"figure1"``), for messages.
    panels
        Row-major panels; ``None`` leaves a blank slot.
    ncols
        Panels per row (rows: as many as needed).
    x
        ``"epoch"`` (passes over the data), ``"iteration"`` or ``"time_s"`` (kernel time).
    y
        ``"subopt"`` (``P - P*``), ``"rel_subopt"`` (``(P - P*)/|P*|``), ``"rel_objective"``
        (the same, DGPD's name) or ``"rel_gap"`` (``gap/|P|``); always on a log axis.
    curve_keys
        Columns whose values identify a curve (an option column of a solver that does not
        have the option, or holding ``"none"``, counts as blank).
    sharey
        One y-range for all panels (tick labels on the left column only).
    logx
        Logarithmic x axis (points at ``x <= 0`` are left out); None: a time axis is
        logarithmic where the panel's curves end over a decade of time or more
        (:func:`auto_log_x`), any other axis linear.
    suptitle
        Figure title (none if empty).
    outer_labels
        Axis labels only on the outer panels (x: the lowest drawn panel of each column;
        y: the leftmost drawn panel of each row); otherwise on every drawn panel.
    figsize
        Inches; default from the grid size.
    legend_ncols
        Columns of the figure legend.
    note
        A line the plan adds to the legend's notes (why two curves of one solver carry
        different settings, say).
    """

    name: str
    panels: tuple[Panel | None, ...]
    ncols: int
    x: str = "epoch"
    y: str = "subopt"
    curve_keys: tuple[str, ...] = DEFAULT_CURVE_KEYS
    sharey: bool = False
    logx: bool | None = None
    suptitle: str = ""
    outer_labels: bool = False
    figsize: tuple[float, float] | None = None
    legend_ncols: int = 3
    note: str = ""

    def __post_init__(self) -> None:
        panels = tuple(
            p if p is None or isinstance(p, Panel) else Panel.from_dict(p) for p in self.panels
        )
        object.__setattr__(self, "panels", panels)
        object.__setattr__(self, "curve_keys", tuple(str(k) for k in self.curve_keys))
        if self.figsize is not None:
            object.__setattr__(self, "figsize", tuple(float(v) for v in self.figsize))
        where = f"figure {self.name!r}"
        if self.x not in X_AXES:
            raise ConfigError(f"{where}: x must be one of {list(X_AXES)}, got {self.x!r}")
        if self.y not in Y_AXES:
            raise ConfigError(f"{where}: y must be one of {list(Y_AXES)}, got {self.y!r}")
        if not isinstance(self.ncols, int) or self.ncols < 1:
            raise ConfigError(f"{where}: ncols must be a positive integer, got {self.ncols!r}")
        if not any(p is not None for p in panels):
            raise ConfigError(f"{where}: no panels")
        if not self.curve_keys:
            raise ConfigError(f"{where}: curve_keys is empty")
        if self.figsize is not None and len(self.figsize) != 2:
            raise ConfigError(f"{where}: figsize must be (width, height), got {self.figsize!r}")
        titles = [p.title for p in panels if p is not None]
        repeated = sorted({t for t in titles if titles.count(t) > 1})
        if repeated:
            raise ConfigError(f"{where}: panel titles must be unique, repeated: {repeated}")

    @property
    def nrows(self) -> int:
        return -(-len(self.panels) // self.ncols)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (:meth:`from_dict` gives the spec back)."""
        return {
            "name": self.name,
            "panels": [None if p is None else p.to_dict() for p in self.panels],
            "ncols": self.ncols,
            "x": self.x,
            "y": self.y,
            "curve_keys": list(self.curve_keys),
            "sharey": self.sharey,
            "logx": self.logx,
            "suptitle": self.suptitle,
            "outer_labels": self.outer_labels,
            "figsize": None if self.figsize is None else list(self.figsize),
            "legend_ncols": self.legend_ncols,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CurveFigure:
        data = _known_keys(cls, data, "curve figure")
        if "panels" not in data or "name" not in data or "ncols" not in data:
            raise ConfigError("curve figure: 'name', 'panels' and 'ncols' are required")
        data["panels"] = tuple(None if p is None else Panel.from_dict(p) for p in data["panels"])
        if "curve_keys" in data:
            data["curve_keys"] = tuple(data["curve_keys"])
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> CurveFigure:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"curve figure spec is not valid JSON: {exc}") from None
        return cls.from_dict(data)


# --------------------------------------------------------------------------- solvers


@dataclass(frozen=True)
class SolverInfo:
    """What plots need of a registry entry: family, label and the options' choices."""

    name: str
    family: str
    label: str
    choices: Mapping[str, tuple[str, ...]]


def solver_registry() -> dict[str, SolverInfo]:
    """The solver registry (:data:`pdsparse.solvers.SOLVERS`) as plots see it."""
    from pdsparse.solvers import SOLVERS

    return {
        name: SolverInfo(name, spec.family, spec.label, dict(spec.choices()))
        for name, spec in SOLVERS.items()
    }


@functools.cache
def _registry() -> dict[str, SolverInfo]:
    return solver_registry()


def _option_names() -> tuple[str, ...]:
    from pdsparse.solvers import option_names

    return option_names()


def solver_family(solver: str) -> str:
    """``"primal"`` / ``"dual"`` from the registry; ``"other"`` for an unregistered name
    (never guessed from the name)."""
    info = _registry().get(str(solver))
    return info.family if info is not None else "other"


# --------------------------------------------------------------------------- curves


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return str(value).strip() in ("", "none", "nan", "None")


def _text(value: Any) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def curve_key(row: Mapping[str, Any], names: Sequence[str] = DEFAULT_CURVE_KEYS) -> tuple[str, ...]:
    """The values of ``names`` in ``row`` that identify its curve, as strings.

    Blank (``""``): a missing column, a missing value, ``"none"``, and an option of the
    registry that the row's solver does not have (``dual_step`` of primal RCD).
    """
    solver = _text(row.get("solver", "")) if "solver" in names else ""
    info = _registry().get(solver)
    options = set(_option_names())
    key = []
    for name in names:
        value = row.get(name)
        if _blank(value) or (info is not None and name in options and name not in info.choices):
            key.append("")
        else:
            key.append(_text(value))
    return tuple(key)


def _as_dict(names: Sequence[str], key: Sequence[str]) -> dict[str, str]:
    return dict(zip(names, key, strict=True))


def _option_text(name: str, value: str) -> str:
    """An option value as a legend reads it: a count or a multiplier with its option's
    name ("inner 5", "eta ×10", "delta ×100000": a bare "5, x10" names nothing)."""
    if name == "dual_step":
        return f"{value} step"
    if name in _option_names() and value.isdigit():
        return f"{name} {value}"
    if name in _option_names() and value[:1] == "x" and value[1:].isdigit():
        return f"{name} ×{value[1:]}"
    if name in _option_names() or name == LINESTYLE_OPTION:
        return value
    return f"{name} = {value}"


def curve_label(names: Sequence[str], key: Sequence[str]) -> str:
    """Legend label: the registry's label, then the option values (e.g. ``"dual RCD,
    uniform, newton step"``); a column that is no option reads ``name = value``."""
    opts = _as_dict(names, key)
    solver = opts.pop("solver", "")
    info = _registry().get(solver)
    parts = [info.label if info is not None else solver] if solver else []
    parts += [_option_text(k, v) for k, v in opts.items() if v]
    return ", ".join(parts) or "(all runs)"


def _shade(opts: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in opts.items() if k not in ("solver", LINESTYLE_OPTION) and v)


def _registry_configs() -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """Every (solver, option values) of the registry, in registry and choice order."""
    out = []
    for name, info in _registry().items():
        options = list(info.choices)
        for values in itertools.product(*(info.choices[k] for k in options)):
            out.append((name, tuple(zip(options, values, strict=True))))
    return out


@functools.cache
def _style_tables() -> tuple[dict, dict]:
    """Colour by (solver, shade options) and marker by (solver, all options), for every
    configuration of the registry: the known Face-Off ones first (their look is kept), the
    others in registry order from :data:`PALETTES` and :data:`MARKER_POOL`."""
    colors: dict = dict(KNOWN_COLORS)
    markers: dict = {}
    for (solver, sampling, step), marker in MARKERS.items():
        opts = {"sampling": sampling, "dual_step": step}
        info = _registry().get(solver)
        if info is not None:
            markers[(solver, tuple((k, opts[k]) for k in info.choices))] = marker
    configs = _registry_configs()
    for solver, options in configs:
        family = solver_family(solver)
        shade = _shade(dict(options))
        if (solver, shade) not in colors:
            used = {c for (s, _), c in colors.items() if solver_family(s) == family}
            palette = PALETTES.get(family, PALETTES["other"])
            free = [c for c in palette if c not in used]
            colors[(solver, shade)] = free[0] if free else palette[len(used) % len(palette)]
        colors.setdefault((solver, ()), colors[(solver, shade)])
    return colors, markers


def _preferred(names: Sequence[str], key: Sequence[str]) -> tuple[str | None, str | None]:
    """Colour and marker of a configuration from the registry tables (None: not there)."""
    colors, markers = _style_tables()
    opts = _as_dict(names, key)
    solver = opts.get("solver", "")
    color = colors.get((solver, _shade(opts)))
    info = _registry().get(solver)
    marker = None
    if info is not None and set(opts) - {"solver"} <= set(info.choices) | set(_option_names()):
        full = tuple((k, opts.get(k, "")) for k in info.choices)
        marker = markers.get((solver, full))
    return color, marker


def _hashed(text: str, pool: Sequence[Any]) -> Any:
    return pool[sum(map(ord, text)) % len(pool)]


def curve_style(names: Sequence[str], key: Sequence[str]) -> dict[str, Any]:
    """Plot style of one configuration: keyword arguments of :meth:`Axes.plot`.

    Colour by family and shade options (Face-Off: primal blue; dual red / orange / purple for
    the fixed / Newton / printed step), line style by sampling (solid importance, dashed
    uniform, dotted permutation), open markers for uniform sampling, and a marker per
    Face-Off configuration (:data:`MARKERS`; others a shape of :data:`MARKER_POOL` that
    :func:`figure_styles` replaces by the figure's next free one). Colours and line styles
    are the same everywhere; :func:`figure_styles` makes the styles of one figure distinct.
    """
    opts = _as_dict(names, key)
    solver = opts.get("solver", "")
    family = solver_family(solver) if solver else "other"
    color, marker = _preferred(names, key)
    palette = PALETTES.get(family, PALETTES["other"])
    color = color or _hashed("|".join(key), palette)
    marker = marker or _hashed("|".join(key), MARKER_POOL)
    sampling = opts.get(LINESTYLE_OPTION, "")
    linestyle = SAMPLING_STYLES.get(sampling) or _hashed(sampling, _EXTRA_LINESTYLES)
    return {
        "color": color,
        "linestyle": linestyle,
        "marker": marker,
        "markerfacecolor": "white" if sampling in OPEN_SAMPLINGS else color,
        "markeredgecolor": color,
        "markersize": MARKER_SIZE,
    }


def figure_styles(
    names: Sequence[str], keys: Iterable[Sequence[str]]
) -> dict[tuple[str, ...], dict[str, Any]]:
    """Styles of the curves of one figure: :func:`curve_style`, made distinct.

    Configurations outside the registry tables take the first colour of their family's
    palette that no other curve of the figure uses; a marker already taken in the figure is
    replaced by the first free one of :data:`MARKER_POOL`. Keys are handled in
    :func:`sort_key` order, so the result does not depend on the order of ``keys``.
    """
    keys = sorted(dict.fromkeys(tuple(k) for k in keys), key=lambda k: sort_key(names, k))
    styles = {k: curve_style(names, k) for k in keys}
    known = {k: _preferred(names, k) for k in keys}
    used_colors = {styles[k]["color"] for k in keys if known[k][0] is not None}
    for k in keys:
        if known[k][0] is None:
            solver = _as_dict(names, k).get("solver", "")
            palette = PALETTES.get(solver_family(solver) if solver else "other")
            free = [c for c in palette if c not in used_colors]
            if free:
                color = free[0]
                styles[k] = dict(styles[k], color=color, markeredgecolor=color)
                if styles[k]["markerfacecolor"] != "white":
                    styles[k]["markerfacecolor"] = color
            used_colors.add(styles[k]["color"])
    # registry colours repeat once a family has more configurations than its palette has
    # colours (DGPD's options, PDBFW's delta x100 and x10000): two configurations that differ
    # in more than their sampling (the line style) never share a colour within one figure
    owner: dict[str, tuple] = {}
    for k in keys:
        opts = _as_dict(names, k)
        solver = opts.get("solver", "")
        shade = (solver, _shade(opts))
        color = styles[k]["color"]
        if owner.setdefault(color, shade) != shade:
            family = PALETTES.get(solver_family(solver) if solver else "other", ())
            pool = [*family, *(c for p in PALETTES.values() for c in p)]
            free = [c for c in pool if c not in owner]
            if free:
                styles[k] = dict(styles[k], color=free[0], markeredgecolor=free[0])
                if styles[k]["markerfacecolor"] != "white":
                    styles[k]["markerfacecolor"] = free[0]
                owner[free[0]] = shade
    # markers: the Face-Off ones where pinned, the others the figure's next free shape in
    # curve order (so a figure shows no more shapes than curves, and no letters)
    pinned = {styles[k]["marker"] for k in keys if known[k][1] is not None}
    free = [m for m in MARKER_POOL if m not in pinned]
    n_free = 0
    for k in keys:
        if known[k][1] is None:
            pool = free or list(MARKER_POOL)
            styles[k] = dict(styles[k], marker=pool[n_free % len(pool)])
            n_free += 1
    return styles


def sort_key(names: Sequence[str], key: Sequence[str]) -> tuple:
    """Curve and legend order: primal before dual, registry order of solvers, importance
    sampling first, then the option values."""
    opts = _as_dict(names, key)
    solver = opts.get("solver", "")
    family = solver_family(solver) if solver else "other"
    solvers = list(_registry())
    sampling = opts.get(LINESTYLE_OPTION, "")
    rest = tuple(v for k, v in opts.items() if k not in ("solver", LINESTYLE_OPTION))
    return (
        {"primal": 0, "dual": 1}.get(family, 2),
        solvers.index(solver) if solver in solvers else len(solvers),
        solver,
        sampling != "importance",
        sampling,
        rest,
    )


@dataclass(frozen=True)
class Curve:
    """A summarised configuration: median and min/max over seeds of ``y`` against ``x``."""

    key: tuple[str, ...]
    x: np.ndarray
    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_seeds: int
    names: tuple[str, ...] = DEFAULT_CURVE_KEYS
    diverged: bool = False
    """A seed of this configuration diverged (``status == "diverged"`` or a non-finite value):
    the curve stops where it rises :data:`DIVERGED_RISE_DECADES` above its start (or at its
    last finite point), where :func:`draw_curves` puts a cross."""
    capped: bool = False
    """A seed of this configuration stopped at its time budget (``status == "max_time"``),
    not at the tolerance: the curve ends where the budget did, marked with a bar."""

    @property
    def epoch(self) -> np.ndarray:
        """``x`` under its Face-Off name (the x values are passes when ``x = "epoch"``)."""
        return self.x


_Y_SOURCES = {
    "subopt": ("subopt", ("primal", "p_star")),
    "rel_subopt": ("rel_subopt", ("primal", "p_star")),
    "rel_objective": ("rel_subopt", ("primal", "p_star")),
    "rel_gap": (None, ("gap", "primal")),
}


def missing_columns(df: pd.DataFrame, x: str, y: str) -> list[str]:
    """Columns an aggregate lacks to plot ``y`` against ``x`` (``[]``: none)."""
    column, derived = _Y_SOURCES[y]
    missing = [c for c in ("solver", x) if c not in df.columns]
    if not (column in df.columns or set(derived) <= set(df.columns)):
        missing.append(column or " and ".join(derived))
    return missing


def y_values(df: pd.DataFrame, y: str) -> np.ndarray:
    """The quantity ``y`` (:data:`Y_AXES`) of every row, from its column or derived:
    ``subopt = primal - p_star``, ``rel_subopt = subopt / |p_star|``, ``rel_gap = gap /
    |primal|`` (denominators kept away from zero)."""
    if y not in _Y_SOURCES:
        raise ConfigError(f"y must be one of {list(Y_AXES)}, got {y!r}")
    column, _ = _Y_SOURCES[y]
    if column is not None and column in df.columns:
        return df[column].to_numpy(float)
    tiny = np.finfo(float).tiny
    if y == "rel_gap":
        return df["gap"].to_numpy(float) / np.maximum(np.abs(df["primal"].to_numpy(float)), tiny)
    subopt = (
        df["subopt"].to_numpy(float)
        if "subopt" in df.columns
        else df["primal"].to_numpy(float) - df["p_star"].to_numpy(float)
    )
    if y == "subopt":
        return subopt
    return subopt / np.maximum(np.abs(df["p_star"].to_numpy(float)), tiny)


def summarize_runs(
    df: pd.DataFrame,
    floor: float = SUBOPT_FLOOR,
    *,
    x: str = "epoch",
    y: str = "subopt",
    curve_keys: Sequence[str] = DEFAULT_CURVE_KEYS,
) -> list[Curve]:
    """Median and min–max band of ``y`` over seeds, per configuration (:func:`curve_key`).

    Each seed's trace is clipped at ``floor`` and interpolated linearly in
    ``(x, log10 y)`` onto the union of all seeds' ``x`` values, restricted to the **common
    support**: the ``x`` values that every seed of the configuration reached, i.e. from the
    largest first to the smallest last ``x`` over seeds. Every point of a curve is therefore
    a median over all its seeds; a seed that stopped earlier (on convergence, on a slightly
    different epoch count, or sooner in time) truncates the curve instead of leaving a tail
    summarised over fewer seeds. A configuration whose seeds share no ``x`` is left out.
    Values are returned in linear scale, curves in :func:`sort_key` order.

    Rows with a non-finite ``y`` (a diverged run's P = inf or NaN) are dropped, and the
    configuration is flagged ``diverged`` (as when a trace's ``status`` says so), so that the
    figure marks it rather than drawing an infinite line or silently cutting it short.
    """
    names = tuple(curve_keys)
    curves: list[Curve] = []
    if df.empty:
        return curves
    values = y_values(df, y)
    xs = df[x].to_numpy(float)
    keys = [curve_key(r, names) for r in df.to_dict("records")]
    bad = ~np.isfinite(values)
    if "status" in df.columns:
        bad |= (df["status"] == "diverged").to_numpy()
    diverged = {k for k, b in zip(keys, bad, strict=True) if b}
    capped = set()
    if "status" in df.columns:
        capped = {k for k, s in zip(keys, df["status"], strict=True) if s == "max_time"}
    keep = np.isfinite(xs) & np.isfinite(values)
    df = df.assign(_x=xs, _y=values, _key=keys)[keep]
    if df.empty:
        return curves
    seed_col = "seed" if "seed" in df.columns else None
    for key, group in df.groupby("_key", sort=False):
        runs = [g for _, g in group.groupby(seed_col)] if seed_col else [group]
        traces = []
        for run in runs:
            run = run.sort_values("_x", kind="stable")
            tx = run["_x"].to_numpy(float)
            ty = np.log10(np.maximum(run["_y"].to_numpy(float), floor))
            traces.append((tx, ty))
        start = max(tx[0] for tx, _ in traces)
        stop = min(tx[-1] for tx, _ in traces)
        grid = np.unique(np.concatenate([tx for tx, _ in traces]))
        grid = grid[(grid >= start) & (grid <= stop)]
        if grid.size == 0:
            continue
        logs = np.vstack([np.interp(grid, tx, ty) for tx, ty in traces])
        median, low, high = (np.median(logs, axis=0), np.min(logs, axis=0),
                             np.max(logs, axis=0))
        if key in diverged:  # up to where it leaves the chart, clipped there
            cap = median[0] + DIVERGED_RISE_DECADES
            over = np.flatnonzero(median > cap)
            end = over[0] + 1 if over.size else grid.size
            grid, median, low, high = (np.minimum(v[:end], cap) if v is not grid else v[:end]
                                       for v in (grid, median, low, high))
        curves.append(
            Curve(
                key=key,
                x=grid,
                median=10.0 ** median,
                low=10.0 ** low,
                high=10.0 ** high,
                n_seeds=len(traces),
                names=names,
                diverged=key in diverged,
                capped=key in capped and key not in diverged,
            )
        )
    curves.sort(key=lambda c: sort_key(names, c.key))
    return curves


def coinciding_groups(curves: Sequence[Curve], tol_decades: float) -> list[list[tuple[str, ...]]]:
    """Groups of configurations whose median curves lie on top of each other.

    Two curves coincide when, over their common ``x`` values (at least two distinct ones),
    their medians differ by at most ``tol_decades`` in ``log10``. A group is a set of curves
    that all coincide pairwise (not a chain: a short curve hidden under the start of two
    others that part later does not make those two coincide): each curve, in the order of
    ``curves``, joins the first group it coincides with entirely, else starts one; a curve
    left alone that coincides with some curve is paired with the first such. Groups of two
    curves or more are returned, in the order of their first curve.
    """
    logs = [np.log10(np.maximum(c.median, SUBOPT_FLOOR)) for c in curves]
    count = len(curves)
    close = np.zeros((count, count), dtype=bool)
    for i, a in enumerate(curves):
        for j in range(i + 1, count):
            b = curves[j]
            lo, hi = max(a.x[0], b.x[0]), min(a.x[-1], b.x[-1])
            if not hi > lo:
                continue
            grid = np.union1d(a.x, b.x)
            grid = grid[(grid >= lo) & (grid <= hi)]
            diff = np.interp(grid, a.x, logs[i]) - np.interp(grid, b.x, logs[j])
            close[i, j] = close[j, i] = bool(np.max(np.abs(diff)) <= tol_decades)
    groups: list[list[int]] = []
    for i in range(count):
        for group in groups:
            if all(close[i, j] for j in group):
                group.append(i)
                break
        else:
            groups.append([i])
    for group in [g for g in groups if len(g) == 1]:
        (i,) = group
        partners = np.flatnonzero(close[i])
        if partners.size:
            group[:] = sorted([int(partners[0]), i])
    groups.sort(key=lambda g: g[0])
    return [[curves[i].key for i in g] for g in groups if len(g) > 1]


# --------------------------------------------------------------------------- drawing


AUTO_LOG_RATIO = 10.0
"""A time axis left to the data (``logx`` None on the panel and the figure) is logarithmic
when the panel's curves end over more than this factor of time: on a linear axis the fast
ones would sit in its first pixels (e.g. PDBFW and Acc PG on digits09-rb)."""
TIME_AXES = ("time_s", "wall_s", "cpu_s")
AUTO_LOG_AXES = (*TIME_AXES, "sweeps")
"""Axes :func:`auto_log_x` may make logarithmic: time, and DGPD's outer iterations (where
DGPD's thousand searches put the baselines' tens of sweeps in the first pixels). Passes
over the data stay linear: Face-Off's linear rates are straight lines there."""


def auto_log_x(curves: Sequence[Curve], x: str) -> bool:
    """Whether a panel's curves span decades: the latest end over the earliest."""
    if x not in AUTO_LOG_AXES:
        return False
    ends = [float(c.x[-1]) for c in curves if c.x.size and c.x[-1] > 0]
    return len(ends) > 1 and max(ends) >= AUTO_LOG_RATIO * min(ends)


def draw_curves(
    ax,
    curves: Sequence[Curve],
    styles: Mapping[tuple[str, ...], Mapping[str, Any]],
    handles: dict[tuple[str, ...], Line2D],
    logx: bool = False,
) -> None:
    """Median lines (sparse markers, offset per curve) and min–max bands of ``curves``; a
    diverged curve ends in a large cross and says so in its label."""
    count = max(len(curves), 1)
    for k, curve in enumerate(curves):
        style = dict(styles[curve.key])
        label = curve_label(curve.names, curve.key)
        if curve.diverged:
            label += DIVERGED_LABEL
        offset = MARKER_SPACING * (k + 0.5) / count
        x, median, low, high = curve.x, curve.median, curve.low, curve.high
        if logx:
            pos = x > 0
            x, median, low, high = x[pos], median[pos], low[pos], high[pos]
        (line,) = ax.plot(x, median, label=label, markevery=(offset, MARKER_SPACING), **style)
        if curve.n_seeds > 1:
            ax.fill_between(x, low, high, color=style["color"], alpha=BAND_ALPHA, lw=0)
        if curve.diverged and x.size:
            ax.plot(x[-1:], median[-1:], ls="none", marker="X", ms=11, mec="black",
                    color=style["color"], zorder=5)
        elif curve.capped and x.size:
            ax.plot(x[-1:], median[-1:], ls="none", marker="|", ms=12, mew=2,
                    color=style["color"], zorder=5)
        handles.setdefault(curve.key, line)
    ax.set_yscale("log")
    if logx:
        ax.set_xscale("log")


def note_coinciding(
    ax, curves: Sequence[Curve], styles: Mapping[tuple[str, ...], Mapping[str, Any]]
) -> list[list[tuple[str, ...]]]:
    """Mark curves that coincide in this panel (call once its y-range is final).

    The note is a small in-panel legend, placed where it hides the least data: one entry per
    group, its handle the group's markers side by side, reading "coincide".
    """
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D

    ymin, ymax = ax.get_ylim()
    span = math.log10(ymax / ymin) if ymin > 0 and ymax > ymin else 1.0
    groups = coinciding_groups(curves, COINCIDE_FRACTION * span)
    if not groups:
        return groups
    entries = []
    for group in groups:
        markers = [Line2D([], [], **dict(styles[key], linestyle="none")) for key in group]
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


def band_note(curves: Sequence[Curve], xs: Iterable[str] = ("epoch",)) -> str:
    """What lines, bands and markers mean: the legend title of a curve figure."""
    seeds = sorted({c.n_seeds for c in curves})
    if not seeds:
        return ""
    counts = "/".join(map(str, seeds))
    if seeds[-1] > 1:
        support = "/".join(dict.fromkeys(_X_SUPPORT[x] for x in xs)) or "passes"
        first = (
            f"line: median over {counts} seeds, shaded band: min–max over seeds "
            f"(both on the {support} reached by every seed)"
        )
    else:
        first = "line: one seed"
    budget = ("\n" + BUDGET_NOTE) if any(c.capped for c in curves) else ""
    return (first + "\nmarkers only tell the curves apart; a panel note marks curves that "
            "coincide" + budget)


def read_aggregate(
    path: PathLike | pd.DataFrame, x: str = "epoch", y: str = "subopt"
) -> pd.DataFrame:
    """An aggregate (a Parquet file, or a frame already read) with the columns that plotting
    ``y`` against ``x`` needs; :class:`DataError` naming the file and the columns if not."""
    import pandas as pd

    if isinstance(path, pd.DataFrame):
        df, what = path, "aggregate"
    else:
        df, what = read_parquet(Path(path), "aggregate file"), f"aggregate file {path}"
    missing = missing_columns(df, x, y)
    if missing:
        raise DataError(f"{what} lacks column(s) {missing}")
    return df


def select(df: pd.DataFrame, where: Mapping[str, Any], what: str = "aggregate") -> pd.DataFrame:
    """The rows of ``df`` where every column of ``where`` equals its value."""
    import pandas as pd

    mask = np.ones(len(df), dtype=bool)
    for column, value in where.items():
        if column not in df.columns:
            raise DataError(f"{what} has no column {column!r} to select {column} == {value!r}")
        col = df[column]
        if isinstance(value, float) and pd.api.types.is_numeric_dtype(col):
            mask &= np.isclose(col.to_numpy(float), value, rtol=1e-9, atol=0.0)
        elif isinstance(value, bool | int | float) and pd.api.types.is_numeric_dtype(col):
            mask &= (col == value).to_numpy()
        else:
            mask &= (col.astype(str) == str(value)).to_numpy()
    return df[mask]


def _row_log_axes(spec: CurveFigure, panel_curves: Sequence[list[Curve] | None],
                  auto: Mapping[str, bool]) -> dict[int, bool]:
    """Panel index -> log x axis: the panel's own ``logx``, else the figure's, else the
    data's (``auto``, per quantity); then a panel left to the data follows a log panel of
    the same quantity in its row (DGPD's ``log_time`` sets one data set's time axis: the
    panel beside it read linear, as if the data differed)."""
    chosen: dict[int, bool] = {}
    free: set[int] = set()
    for index, (panel, curves) in enumerate(zip(spec.panels, panel_curves, strict=False)):
        if panel is None or not curves:
            continue
        x = panel.x or spec.x
        if panel.logx is not None:
            chosen[index] = bool(panel.logx)
        elif spec.logx is not None:
            chosen[index] = bool(spec.logx)
        else:
            chosen[index] = auto[x]
            free.add(index)
    for index in free:
        row, x = index // spec.ncols, spec.panels[index].x or spec.x
        chosen[index] = chosen[index] or any(
            chosen[j] for j in chosen
            if j // spec.ncols == row and (spec.panels[j].x or spec.x) == x)
    return chosen


def _default_figsize(nrows: int, ncols: int) -> tuple[float, float]:
    return (max(2.6 * ncols + 0.6, 8.0), 2.1 * nrows + 1.0)


@styled
def draw_curve_figure(
    spec: CurveFigure,
    aggregates: Mapping[str, PathLike | pd.DataFrame | None],
    out_png: PathLike,
    out_pdf: PathLike,
) -> dict[str, str]:
    """Draw ``spec`` from the aggregates and write it as PNG and PDF.

    Parameters
    ----------
    spec
        The figure (:class:`CurveFigure`).
    aggregates
        Experiment name → aggregate Parquet (or a frame already read). A panel whose
        experiment is absent or maps to ``None``, or whose ``where`` selects no rows, reads
        "skipped: data not available".
    out_png, out_pdf
        Output files (written atomically).

    Returns
    -------
    dict
        Panel title → ``"plotted"`` or ``"skipped"``, in panel order.

    Raises
    ------
    DataError
        An aggregate file is missing or lacks a column the spec needs.

    Notes
    -----
    One line per configuration (``spec.curve_keys``) and panel: the median over seeds and,
    with several seeds, the min–max band over seeds, both on the x values every seed reached
    (:func:`summarize_runs`); the legend title says so. Styles: :func:`figure_styles`.
    Curves that coincide to within :data:`COINCIDE_FRACTION` of the panel's height are named
    in a small note in the panel (their markers, "coincide"). ``y`` is clipped at
    :data:`SUBOPT_FLOOR` for the log axis.
    """
    frames: dict[str, pd.DataFrame | None] = {}

    def frame(experiment: str) -> pd.DataFrame | None:
        if experiment not in frames:
            path = aggregates.get(experiment)
            frames[experiment] = None if path is None else read_aggregate(path, spec.x, spec.y)
        return frames[experiment]

    # Curves first: every panel's x axis is checked, and styles are chosen for the figure.
    panel_curves: list[list[Curve] | None] = []
    for panel in spec.panels:
        if panel is None:
            panel_curves.append(None)
            continue
        x = panel.x or spec.x
        df = frame(panel.experiment)
        if df is not None and x not in df.columns:
            raise DataError(
                f"aggregate {panel.experiment!r} lacks column {x!r} (panel {panel.title!r})"
            )
        rows = (
            select(df, panel.where, f"aggregate {panel.experiment!r}") if df is not None else None
        )
        curves = (
            summarize_runs(rows, x=x, y=spec.y, curve_keys=spec.curve_keys)
            if rows is not None and not rows.empty
            else []
        )
        panel_curves.append(curves)
    styles = figure_styles(spec.curve_keys, [c.key for cs in panel_curves if cs for c in cs])
    # an axis left to the data is chosen once per figure and quantity, so that panels side by
    # side read alike (one log, one linear, in a row, looked like different data)
    auto: dict[str, bool] = {}
    for panel, curves in zip(spec.panels, panel_curves, strict=False):
        if panel is not None and curves and panel.logx is None:
            x = panel.x or spec.x
            auto[x] = auto.get(x, False) or auto_log_x(curves, x)

    nrows, ncols = spec.nrows, spec.ncols
    logx = _row_log_axes(spec, panel_curves, auto)
    fig = new_figure(spec.figsize or _default_figsize(nrows, ncols))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=bool(spec.sharey))
    handles: dict[tuple[str, ...], Line2D] = {}
    status: dict[str, str] = {}
    drawn: dict[tuple[int, int], tuple[Any, list[Curve], str]] = {}
    for index in range(nrows * ncols):
        i, j = divmod(index, ncols)
        ax = axes[i, j]
        panel = spec.panels[index] if index < len(spec.panels) else None
        if panel is None:
            ax.set_axis_off()
            continue
        curves = panel_curves[index]
        if not curves:
            skip_panel(ax, panel.title)
            status[panel.title] = "skipped"
            continue
        x = panel.x or spec.x
        draw_curves(ax, curves, styles, handles, logx=logx[index])
        ax.set_title(tex_powers(panel.title))
        drawn[(i, j)] = (ax, curves, x)
        status[panel.title] = "plotted"
    left = [ax for (i, j), (ax, _, _) in drawn.items()
            if not any((i, k) in drawn for k in range(j))]
    for (i, j), (ax, _, x) in drawn.items():
        below = [drawn[(k, j)][2] for k in range(i + 1, nrows) if (k, j) in drawn]
        if not spec.outer_labels or not below or below[0] != x:
            ax.set_xlabel(X_AXES[x])
        if not spec.outer_labels:
            ax.set_ylabel(Y_AXES[spec.y])
    if spec.outer_labels and len(left) > 1:  # one label for the rows: per row they overlap
        fig.supylabel(Y_AXES[spec.y])
    elif spec.outer_labels and left:
        left[0].set_ylabel(Y_AXES[spec.y])
    for ax, curves, _ in drawn.values():  # after all panels: a shared y-range is final only now
        note_coinciding(ax, curves, styles)
    if spec.suptitle:
        fig.suptitle(tex_powers(spec.suptitle))
    _legend(
        fig,
        handles,
        spec,
        band_note(
            [c for _, cs, _ in drawn.values() for c in cs],
            sorted({x for _, _, x in drawn.values()}, key=list(X_AXES).index),
        ) + ("\n" + "\n".join(textwrap.wrap(spec.note, NOTE_WIDTH)) if spec.note else ""),
    )
    save_figure(fig, out_png, out_pdf)
    return status


def _legend(
    fig: Figure, handles: Mapping[tuple[str, ...], Line2D], spec: CurveFigure, title: str
) -> None:
    if not handles:
        return
    ordered = sorted(handles, key=lambda k: sort_key(spec.curve_keys, k))
    fig.legend(
        [handles[k] for k in ordered],
        [handles[k].get_label() for k in ordered],
        loc="outside lower center",
        ncols=min(spec.legend_ncols, len(ordered)),
        frameon=False,
        title=title or None,
        title_fontsize=STYLE["legend.fontsize"],
    )


# ------------------------------------------------------------------- pdsparse output PAPER curves


def _curves_arguments(p) -> None:
    p.add_argument("--spec", required=True, metavar="JSON",
                   help="the figure spec: a CurveFigure as JSON (CurveFigure.to_json()) or "
                   "@FILE. Each panel reads the aggregate named by its 'experiment', filtered "
                   "by its 'where'; a panel whose aggregate is not given or whose filter "
                   "selects nothing reads 'skipped: data not available'")
    p.add_argument("--aggregate", action="append", type=key_value, metavar="NAME=PARQUET",
                   help="aggregate of experiment NAME, e.g. "
                   "figure1a=results/faceoff/figure1a.parquet")


def _curves_build(args, outs) -> None:
    import sys

    text = args.spec
    if text.startswith("@"):
        text = require_file(text[1:], "spec file").read_text(encoding="utf-8")
    spec = CurveFigure.from_json(text)
    aggregates: dict[str, str] = {}
    for key, value in args.aggregate or []:
        if key in aggregates:
            raise ConfigError(f"--aggregate {key} given twice")
        aggregates[key] = value
    unused = sorted(set(aggregates) - {p.experiment for p in spec.panels if p is not None})
    if unused:
        raise ConfigError(f"--aggregate {', '.join(unused)}: no panel of {spec.name} reads it")
    for path in aggregates.values():
        require_file(path, "aggregate file")
    status = draw_curve_figure(spec, aggregates, *outs)
    skipped = [title for title, s in status.items() if s != "plotted"]
    if skipped:
        print(f"{spec.name}: panels without data: {skipped}", file=sys.stderr)


CURVES_OUTPUT = Builder("figure", "a curve figure from its spec: median over seeds and min-max "
                        "band, per panel", _curves_arguments, _curves_build)
