"""Tests of curve figures by spec (pdsparse.repro.figures) on tiny synthetic aggregates."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pdsparse.errors import ConfigError, DataError
from pdsparse.repro import figures
from pdsparse.repro.figures import CurveFigure, Panel
from pdsparse.repro.papers.faceoff import figures as plotting

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

RATES = {
    ("primal_rcd", "importance", "none"): 0.1,
    ("primal_rcd", "uniform", "none"): 0.3,
    ("dual_rcd", "importance", "fixed"): 0.5,
    ("dual_rcd", "uniform", "newton"): 0.4,
}


def aggregate(dataset="ds", seeds=(0, 1, 2), epochs=6, rates=None, p_star=0.5, **extra):
    """Traces with geometric decrease: subopt = (1 + seed) rate^k, gap = 2 subopt; seed s
    runs (1 + s/10) times slower, so the seeds' time grids differ."""
    rows = []
    for (solver, sampling, step), rate in (rates or RATES).items():
        for seed in seeds:
            for k in range(epochs + 1):
                subopt = (1.0 + seed) * rate**k
                primal = p_star + subopt
                rows.append(
                    {
                        "experiment": "e",
                        "dataset": dataset,
                        "solver": solver,
                        "sampling": sampling,
                        "dual_step": step,
                        "seed": seed,
                        "iteration": 100 * k,
                        "sweeps": k,
                        "epoch": float(k),
                        "time_s": 0.01 * k * (1.0 + seed / 10.0),
                        "primal": primal,
                        "dual": primal - 2.0 * subopt,
                        "gap": 2.0 * subopt,
                        "p_star": p_star,
                        "subopt": subopt,
                        "rel_subopt": subopt / abs(p_star),
                        **extra,
                    }
                )
    return pd.DataFrame(rows)


def assert_outputs(png, pdf):
    assert png.stat().st_size > 1000 and pdf.stat().st_size > 1000
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert [p.name for p in png.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.fixture
def captured(monkeypatch):
    """The Figures that figures.save_figure writes (files are still written)."""
    kept = []
    save = figures.save_figure

    def keep(fig, png, pdf):
        kept.append(fig)
        save(fig, png, pdf)

    monkeypatch.setattr(figures, "save_figure", keep)
    return kept


def spec_of(*panels, **kwargs):
    kwargs.setdefault("ncols", 2)
    return CurveFigure("test", tuple(panels), **kwargs)


# ----------------------------------------------------------------- the spec


def test_spec_json_round_trip():
    spec = CurveFigure(
        "figure9",
        (
            Panel("(a) leu", "fig9", {"dataset": "leu", "l2": 0.01, "seed": 3, "ok": True}),
            None,
            Panel("(b) time", "fig9b", x="time_s", logx=True),
        ),
        ncols=2,
        x="iteration",
        y="rel_gap",
        curve_keys=("solver", "block"),
        sharey=True,
        logx=False,
        suptitle="λ = 0.1",
        outer_labels=True,
        figsize=(6, 4.5),
        legend_ncols=2,
    )
    text = spec.to_json()
    assert json.loads(text)["panels"][1] is None
    back = CurveFigure.from_json(text)
    assert back == spec
    assert back.panels[0].where == {"dataset": "leu", "l2": 0.01, "seed": 3, "ok": True}
    assert back.figsize == (6.0, 4.5) and back.nrows == 2
    # Plain dicts, as the CLI gets them, work as panels too; defaults are the Face-Off ones.
    minimal = CurveFigure.from_dict(
        {"name": "f", "ncols": 1, "panels": [{"title": "t", "experiment": "e"}]}
    )
    assert (minimal.x, minimal.y, minimal.curve_keys) == (
        "epoch",
        "subopt",
        figures.DEFAULT_CURVE_KEYS,
    )
    # numpy scalars in filters become JSON numbers
    panel = Panel("t", "e", {"n": np.int64(5), "l2": np.float64(0.5)})
    assert json.loads(json.dumps(panel.to_dict()))["where"] == {"n": 5, "l2": 0.5}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"x": "seconds"}, "x must be one of"),
        ({"y": "objective"}, "y must be one of"),
        ({"ncols": 0}, "ncols"),
        ({"panels": [None]}, "no panels"),
        (
            {"panels": [{"title": "t", "experiment": "a"}, {"title": "t", "experiment": "b"}]},
            "unique",
        ),
        ({"colour": "red"}, "unknown key"),
        ({"panels": [{"title": "t", "experiment": "a", "filter": {}}]}, "unknown key"),
        ({"panels": [{"title": "t", "experiment": "a", "where": {"l2": [1, 2]}}]}, "not a string"),
        ({"panels": [{"title": "t", "experiment": "a", "x": "epochs"}]}, "x must be one of"),
    ],
)
def test_spec_rejects(change, message):
    data = {"name": "f", "ncols": 1, "panels": [{"title": "t", "experiment": "e"}], **change}
    with pytest.raises(ConfigError, match=message):
        CurveFigure.from_dict(data)


def test_specs_are_import_light():
    """A paper's plan builds specs when Snakemake parses the workflow: no pandas, no
    matplotlib (they load on the first drawing)."""
    code = (
        "import sys; from pdsparse.repro import figures; "
        "from pdsparse.repro.papers.faceoff import figures as plotting; "
        "plotting.figure1_spec(); plotting.figure2_spec({(1, 1.0): 'x'}, [1], [1.0]).to_json(); "
        "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_spec_rejects_bad_json():
    with pytest.raises(ConfigError, match="JSON"):
        CurveFigure.from_json("{name: f")


# ----------------------------------------------------------------- summaries


def test_time_axis_median_on_the_common_support():
    """x = time_s: each seed interpolated on its own times; the curve ends at the earliest
    stop in time (seed 0, the fastest, reaches its last epoch first)."""
    df = aggregate(rates={("dual_rcd", "importance", "fixed"): 0.1}, epochs=3)
    (c,) = figures.summarize_runs(df, x="time_s", y="subopt")
    assert c.n_seeds == 3
    assert c.x[0] == 0.0 and c.x[-1] == pytest.approx(0.03)  # min over seeds of last time
    times = {t for s in (0, 1, 2) for t in 0.01 * np.arange(4) * (1 + s / 10) if t <= 0.03 + 1e-12}
    np.testing.assert_allclose(c.x, sorted(times))
    # At t = 0.02 seed 0 is at epoch 2; seed 1 (1.1x slower) at epoch 2/1.1, interpolated in
    # log space: log10 subopt = log10(2) - 2/1.1.
    k = int(np.argmin(np.abs(c.x - 0.02)))
    expected = sorted([-2.0, np.log10(2.0) - 2 / 1.1, np.log10(3.0) - 2 / 1.2])
    np.testing.assert_allclose(np.log10(c.median[k]), expected[1])
    np.testing.assert_allclose(np.log10(c.low[k]), expected[0])
    np.testing.assert_allclose(np.log10(c.high[k]), expected[2])


def test_rel_gap_and_other_quantities():
    df = aggregate(rates={("primal_rcd", "importance", "none"): 0.5}, seeds=(0,), epochs=2)
    primal = df["primal"].to_numpy()
    np.testing.assert_allclose(figures.y_values(df, "rel_gap"), df["gap"] / np.abs(primal))
    np.testing.assert_allclose(figures.y_values(df, "subopt"), df["subopt"])
    np.testing.assert_allclose(figures.y_values(df, "rel_objective"), df["subopt"] / 0.5)
    # Derived when the aggregate lacks the column: from primal and p_star.
    neg = aggregate(
        rates={("primal_rcd", "importance", "none"): 0.5}, seeds=(0,), epochs=2, p_star=-0.5
    )
    bare = neg.drop(columns=["subopt", "rel_subopt"])
    np.testing.assert_allclose(figures.y_values(bare, "rel_subopt"), neg["subopt"] / 0.5)
    np.testing.assert_allclose(figures.y_values(bare, "subopt"), neg["subopt"])
    (c,) = figures.summarize_runs(df, x="iteration", y="rel_gap")
    np.testing.assert_allclose(c.x, [0, 100, 200])
    np.testing.assert_allclose(c.median, (2 * df["subopt"] / primal).to_numpy())


def test_curve_key_blanks_options_the_solver_lacks():
    names = figures.DEFAULT_CURVE_KEYS
    row = {"solver": "primal_rcd", "sampling": "uniform", "dual_step": "fixed"}
    assert figures.curve_key(row, names) == ("primal_rcd", "uniform", "")
    assert figures.curve_key({"solver": "dual_rcd", "dual_step": "none"}, names) == (
        "dual_rcd",
        "",
        "",
    )
    assert figures.curve_key({"solver": "dgpd", "mu": 0.01}, ("solver", "mu")) == ("dgpd", "0.01")
    assert figures.curve_key({"solver": "x", "mu": float("nan")}, ("solver", "mu")) == ("x", "")


def test_coinciding_groups_are_cliques_not_chains():
    """A short curve hidden under the start of two curves that part later: two notes, each
    naming the short curve with one of them, never the two that part."""
    x = np.arange(11.0)

    def curve(name, median, xs=x):
        return figures.Curve((name,), xs, median, median, median, 1, ("solver",))

    curves = [
        curve("a", 0.5 * 10 ** (-0.05 * x**2)),  # parts from c after a few passes
        curve("b", 0.5 * 10 ** (-0.01 * x[:3]), x[:3]),  # short: hidden under a and c
        curve("c", np.full(11, 0.5)),
    ]
    assert figures.coinciding_groups(curves, tol_decades=0.2) == [
        [("a",), ("b",)],
        [("b",), ("c",)],
    ]
    assert figures.coinciding_groups(curves, tol_decades=10.0) == [[("a",), ("b",), ("c",)]]


# ----------------------------------------------------------------- styles


def registry_configs():
    """Every (solver, option values) of the registry, as (curve key names, key)."""
    out = []
    for name, info in figures.solver_registry().items():
        options = list(info.choices)
        for values in itertools.product(*(info.choices[k] for k in options)):
            out.append((("solver", *options), (name, *values)))
    return out


def style_tuple(style):
    return (style["color"], str(style["linestyle"]), style["marker"], style["markerfacecolor"])


def test_every_registry_configuration_has_its_label_and_palette():
    configs = registry_configs()
    assert len(configs) >= 12  # primal RCD: 3 samplings; dual RCD: 3 samplings x 3 steps
    styles = [figures.curve_style(names, key) for names, key in configs]
    labels = [figures.curve_label(names, key) for names, key in configs]
    assert len(set(labels)) == len(configs)
    registry = figures.solver_registry()
    for (_, key), style, label in zip(configs, styles, labels, strict=True):
        info = registry[key[0]]
        assert style["color"] in figures.PALETTES[info.family], (key, style)
        assert style["marker"] in figures.MARKER_POOL
        assert label.startswith(info.label)
        assert all((v.replace("x", "×", 1) if v[:1] == "x" and v[1:].isdigit() else v)
                   in label for v in key[1:])
    # The same configuration keeps its style under the Face-Off key (solver, sampling,
    # dual_step) and the registry's options in any order.
    assert figures.curve_style(
        ("solver", "dual_step", "sampling"), ("dual_rcd", "newton", "uniform")
    ) == (plotting.config_style(("dual_rcd", "uniform", "newton")))


@pytest.mark.parametrize("seed", range(6))
def test_a_figure_has_distinct_nameable_markers_no_more_than_its_curves(seed):
    """Issue 20: markers a reader can tell apart and name (no letters), distinct within a
    figure, and no more shapes than curves: any set of up to 14 registry configurations
    (the registry has far more: DGPD's and PDBFW's open choices) of one key."""
    names = ("solver", "inner", "eta", "batch", "passes", "step")
    keys = [("dgpd", "5", eta, batch, passes, step) for eta in ("x10", "x100")
            for batch in ("1", "8", "64") for passes in ("jacobi", "gauss_seidel")
            for step in ("theorem", "curvature")]
    rng = np.random.default_rng(seed)
    chosen = [keys[i] for i in rng.choice(len(keys), size=int(rng.integers(2, 15)),
                                          replace=False)]
    styles = figures.figure_styles(names, chosen)
    markers = [st["marker"] for st in styles.values()]
    assert len(set(markers)) == len(chosen)
    assert set(markers) <= set(figures.MARKER_NAMES) and not any("$" in m for m in markers)
    assert len({style_tuple(st) for st in styles.values()}) == len(chosen)


def test_face_off_look_is_kept():
    style = plotting.config_style
    assert style(("primal_rcd", "importance", ""))["color"] == "#1f77b4"
    assert [
        style(("dual_rcd", "importance", s))["color"] for s in ("fixed", "newton", "printed")
    ] == [
        "#d62728",
        "#ff7f0e",
        "#9467bd",
    ]
    assert style(("dual_rcd", "uniform", "fixed"))["linestyle"] == "--"
    assert style(("dual_rcd", "uniform", "fixed"))["markerfacecolor"] == "white"
    assert [style(k)["marker"] for k in figures.MARKERS] == list(figures.MARKERS.values())
    assert (
        plotting.config_label(("dual_rcd", "uniform", "newton")) == "dual RCD, uniform, newton step"
    )
    assert plotting.config_label(("primal_rcd", "importance", "")) == "primal RCD, importance"


def test_figure_styles_are_distinct_for_unknown_configurations():
    """Curves outside the registry (a new solver, a non-option column): distinct colours
    from their family's palette and markers not taken by the registry curves."""
    names = ("solver", "mu")
    keys = [("dual_rcd", ""), ("newton_cd", "0.1"), ("newton_cd", "0.01"), ("other", "1"),
            ("dual_x", "")]
    styles = figures.figure_styles(names, keys)
    assert len({s["marker"] for s in styles.values()}) == len(keys)
    assert len({s["color"] for s in styles.values()}) == len(keys)
    assert styles[("dual_rcd", "")]["color"] == "#d62728"
    # an unregistered name is "other", never guessed from a prefix
    assert styles[("dual_x", "")]["color"] in figures.PALETTES["other"]
    assert figures.curve_label(names, ("newton_cd", "0.1")) == "newton_cd, mu = 0.1"
    # counts and multipliers say which option they are (issue 20's review: "DGPD, 5, x10")
    assert figures.curve_label(("solver", "inner", "eta"), ("dgpd", "5", "x10")) == \
        "DGPD, inner 5, eta ×10"
    assert figures.curve_label(("solver", "delta"), ("pdbfw", "x100000")) == \
        "PDBFW, delta ×100000"
    # Order of the keys does not matter.
    assert figures.figure_styles(names, keys[::-1]) == styles


# ----------------------------------------------------------------- drawing


@pytest.mark.parametrize(("x", "y"), list(itertools.product(figures.X_AXES, figures.Y_AXES)))
def test_every_axis_combination_draws(tmp_path, captured, x, y):
    path = tmp_path / "agg.parquet"
    aggregate().to_parquet(path)
    spec = spec_of(Panel("p", "agg"), ncols=1, x=x, y=y, logx=(x != "epoch"))
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    assert figures.draw_curve_figure(spec, {"agg": path}, png, pdf) == {"p": "plotted"}
    assert_outputs(png, pdf)
    (fig,) = captured
    ax = fig.axes[0]
    assert ax.get_xlabel() == figures.X_AXES[x] and ax.get_ylabel() == figures.Y_AXES[y]
    assert ax.get_yscale() == "log" and ax.get_xscale() == ("linear" if x == "epoch" else "log")
    lines = [ln for ln in ax.get_lines() if ln.get_label() and not ln.get_label().startswith("_")]
    assert len(lines) == len(RATES)
    if x != "epoch":  # log x: the points at x = 0 are left out
        assert all(np.min(ln.get_xdata()) > 0 for ln in lines)


def test_skipped_panels_and_blank_slots(tmp_path, captured):
    full, empty = tmp_path / "full.parquet", tmp_path / "empty.parquet"
    pd.concat([aggregate("leu"), aggregate("rcv1", seeds=(0,))]).to_parquet(full)
    aggregate().iloc[:0].to_parquet(empty)
    spec = spec_of(
        Panel("leu", "full", {"dataset": "leu"}),
        Panel("rcv1", "full", {"dataset": "rcv1"}),
        Panel("news", "full", {"dataset": "news20"}),  # filter selects nothing
        None,  # blank slot
        Panel("empty", "empty"),
        Panel("not planned", "missing"),  # no aggregate given
        Panel("none", "none"),  # aggregate None
        ncols=3,
        sharey=True,
    )
    aggs = {"full": full, "empty": empty, "none": None}
    status = figures.draw_curve_figure(spec, aggs, tmp_path / "f.png", tmp_path / "f.pdf")
    assert status == {
        "leu": "plotted",
        "rcv1": "plotted",
        "news": "skipped",
        "empty": "skipped",
        "not planned": "skipped",
        "none": "skipped",
    }
    (fig,) = captured
    axes = fig.axes
    assert len(axes) == 9
    assert not axes[3].axison and not axes[7].axison and not axes[8].axison  # blank slots
    texts = [t.get_text() for t in axes[2].texts]
    assert texts == [figures.SKIPPED_TEXT] and axes[2].get_title() == "news"
    assert axes[0].get_ylim() == axes[1].get_ylim()  # sharey
    # The legend title counts the seeds of the curves drawn: 3 (leu) and 1 (rcv1).
    (legend,) = fig.legends
    assert "median over 1/3 seeds" in legend.get_title().get_text()


def test_outer_labels_and_per_panel_x(tmp_path, captured):
    path = tmp_path / "agg.parquet"
    aggregate().to_parquet(path)
    spec = spec_of(
        Panel("t1", "agg"),
        Panel("t2", "agg"),
        Panel("i1", "agg", x="iteration"),
        Panel("i2", "agg", x="iteration", logx=True),
        x="time_s",
        outer_labels=True,
    )
    figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    (fig,) = captured
    a, b, c, d = fig.axes
    # x differs between the rows: every panel says which; the y label once for the figure
    # (issue 20: one per row, the long labels of stacked rows overlapped)
    assert [ax.get_xlabel() for ax in (a, b, c, d)] == [
        "CPU time (s)",
        "CPU time (s)",
        "iterations",
        "iterations",
    ]
    assert [ax.get_ylabel() for ax in (a, b, c, d)] == ["", "", "", ""]
    assert fig._supylabel is not None and fig._supylabel.get_text() == figures.Y_AXES[spec.y]
    # issue 29: a panel left to the data follows the log panel of its row (it read linear)
    assert d.get_xscale() == "log" and c.get_xscale() == "log"
    assert a.get_xscale() == b.get_xscale() == "linear"
    legend_title = fig.legends[0].get_title().get_text()
    assert "iterations/times reached by every seed" in legend_title


def test_filters_compare_numbers_with_tolerance(tmp_path):
    df = pd.concat([aggregate(l2=0.1 + 1e-14, mu=1), aggregate(l2=0.2, mu=2)])
    assert len(figures.select(df, {"l2": 0.1})) == len(df) // 2
    assert len(figures.select(df, {"mu": 2, "dataset": "ds"})) == len(df) // 2
    with pytest.raises(DataError, match="no column 'lam'"):
        figures.select(df, {"lam": 0.1})


def test_missing_columns_are_named(tmp_path):
    path = tmp_path / "agg.parquet"
    aggregate().drop(columns=["gap"]).to_parquet(path)
    spec = spec_of(Panel("p", "agg"), y="rel_gap")
    with pytest.raises(DataError, match="gap and primal"):
        figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    spec = spec_of(Panel("p", "agg"), x="time_s")
    aggregate().drop(columns=["time_s"]).to_parquet(path)
    with pytest.raises(DataError, match="time_s"):
        figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    with pytest.raises(DataError, match="does not exist"):
        figures.draw_curve_figure(
            spec, {"agg": tmp_path / "nope.parquet"}, tmp_path / "f.png", tmp_path / "f.pdf"
        )
    assert not (tmp_path / "f.png").exists()


# ----------------------------------------------------------------- Face-Off through the spec


def _fig1_all(tmp):
    tmp.mkdir()
    paths = {}
    for k in "abcd":
        paths[k] = tmp / f"{k}.parquet"
        aggregate(k, seeds=(0, 1) if k in "ab" else (0,)).to_parquet(paths[k])
    return paths


def _fig1_partial(tmp):
    tmp.mkdir()
    a, c, d = tmp / "a.parquet", tmp / "c.parquet", tmp / "d.parquet"
    aggregate("wc").to_parquet(a)
    aggregate("news", seeds=(0,)).to_parquet(c)
    aggregate("leu").iloc[:0].to_parquet(d)
    return {"a": a, "c": c, "d": d}


def _fig1_unusable(tmp):
    """b: every subopt missing; c: seeds sharing no epoch; d: None."""
    tmp.mkdir()
    b, c = tmp / "b.parquet", tmp / "c.parquet"
    aggregate("x").assign(subopt=np.nan).to_parquet(b)
    df = aggregate("y", seeds=(0, 1), epochs=2)
    df.assign(epoch=np.where(df["seed"] == 1, df["epoch"] + 10, df["epoch"])).to_parquet(c)
    return {"b": b, "c": c, "d": None}


#: name -> (build aggregates, statuses of the implementation before the spec, commit 8b5a418)
FIGURE1_SCENARIOS = {
    "all": (_fig1_all, {"a": "plotted", "b": "plotted", "c": "plotted", "d": "plotted"}),
    "partial": (_fig1_partial, {"a": "plotted", "b": "skipped", "c": "plotted", "d": "skipped"}),
    "unusable": (_fig1_unusable, {"a": "skipped", "b": "skipped", "c": "skipped", "d": "skipped"}),
}


def _fig2_grid(tmp):
    tmp.mkdir()
    path = tmp / "figure2.parquet"
    pd.concat(
        [
            aggregate("bin_d100_n100_p0.01", seeds=(0, 1), d=100),
            aggregate("bin_d100_n100_p1", seeds=(0,), d=100),
            aggregate("bin_d100_n1000_p0.1", seeds=(0, 1, 2), d=100),
            aggregate("bin_d100_n5_p0.5", d=100),  # outside the grid
        ]
    ).to_parquet(path)
    return path


FIGURE2_SCENARIOS = {
    "grid": (
        _fig2_grid,
        [100, 1000, 10000],
        [0.001, 0.01, 0.1, 1.0],
        {
            (100, 0.001): "skipped",
            (100, 0.01): "plotted",
            (100, 0.1): "skipped",
            (100, 1.0): "plotted",
            (1000, 0.001): "skipped",
            (1000, 0.01): "skipped",
            (1000, 0.1): "plotted",
            (1000, 1.0): "skipped",
            (10000, 0.001): "skipped",
            (10000, 0.01): "skipped",
            (10000, 0.1): "skipped",
            (10000, 1.0): "skipped",
        },
    ),
}


def test_figure2_draws_only_the_plan_cells(tmp_path):
    """A data set named like a cell the plan never makes (alpha = 10 < max(d, n)): the
    name-parsing implementation drew it, the plan's cells leave the cell skipped."""
    path = tmp_path / "figure2.parquet"
    aggregate("bin_d100_n10000_p0.001", d=100).to_parquet(path)
    status = plotting.faceoff_figure2(
        path, tmp_path / "f.png", tmp_path / "f.pdf", [10000], [0.001]
    )
    assert status == {(10000, 0.001): "skipped"}


@pytest.mark.parametrize("name", FIGURE1_SCENARIOS)
def test_figure1_statuses_as_before(tmp_path, name):
    build, expected = FIGURE1_SCENARIOS[name]
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    assert plotting.faceoff_figure1(build(tmp_path / name), png, pdf) == expected
    assert_outputs(png, pdf)


@pytest.mark.parametrize("name", FIGURE2_SCENARIOS)
def test_figure2_statuses_as_before(tmp_path, name, captured):
    build, n_values, fractions, expected = FIGURE2_SCENARIOS[name]
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    assert (
        plotting.faceoff_figure2(build(tmp_path / name), png, pdf, n_values, fractions) == expected
    )
    (fig,) = captured
    assert fig.get_suptitle() == "Worst-case binary data, d = 100"
    # Outer labels as before: x on the bottom row, y on the left column.
    axes = np.array(fig.axes).reshape(len(n_values), len(fractions))
    drawn = [[not ax.texts for ax in row] for row in axes]
    # Labels on the outer drawn panels: x on the lowest of its column (here every drawn
    # panel, the cells below them are skipped), y on the leftmost of its row.
    xlabels = [[bool(ax.get_xlabel()) for ax in row] for row in axes]
    assert xlabels == drawn
    ylabels = [[bool(ax.get_ylabel()) for ax in row] for row in axes]
    # the rows share their y quantity: one label for the figure (issue 20)
    assert ylabels == [[False] * 4] * 3 and fig._supylabel.get_text()


def test_figure1_spec_is_data():
    spec = plotting.figure1_spec({"a": "(a) d = n"}, {"d": "figure1d_paper"})
    assert [p.title for p in spec.panels] == ["(a) d = n", "(b)", "(c)", "(d)"]
    assert [p.experiment for p in spec.panels] == [
        "figure1a",
        "figure1b",
        "figure1c",
        "figure1d_paper",
    ]
    assert (spec.ncols, spec.x, spec.y, spec.sharey) == (2, "epoch", "subopt", False)
    assert CurveFigure.from_json(spec.to_json()) == spec
    with pytest.raises(DataError, match="panel keys"):
        plotting.figure1_spec({"e": "x"})


def test_two_solvers_never_share_a_colour_in_one_figure():
    """The primal-dual palette has fewer colours than DGPD has configurations: a figure
    still draws SPDC and DGPD in different colours (they shared green before)."""
    names = ("solver", "inner", "eta")
    keys = [("spdc", "none", "none"), ("dgpd", "5", "x10"), ("dgpd_full", "none", "x100")]
    styles = figures.figure_styles(names, keys)
    assert len({s["color"] for s in styles.values()}) == 3
    # sampling variants of one solver keep sharing their colour (Face-Off's look)
    same = figures.figure_styles(("solver", "sampling"), [("primal_rcd", "importance"),
                                                          ("primal_rcd", "uniform")])
    assert len({s["color"] for s in same.values()}) == 1


def test_one_solver_at_two_settings_never_shares_a_colour():
    """Issue 29: PDBFW Figure 1 drew "delta x100" and "delta x10000" in one brown (STORC took
    PDBFW's registry colour, and both PDBFW curves moved to the same free one)."""
    keys = [("pdbfw", "x100"), ("pdbfw", "x10000"), ("acc_pg", ""), ("fw", ""), ("svrg", ""),
            ("scgs", ""), ("storc", "")]
    styles = figures.figure_styles(("solver", "delta"), keys)
    assert len({s["color"] for s in styles.values()}) == len(keys)


def test_a_diverged_run_is_marked_not_drawn_to_infinity(tmp_path, captured):
    df = aggregate(status="")
    bad = (df["solver"] == "dual_rcd") & (df["sampling"] == "uniform") & (df["seed"] == 1)
    last = df.index[bad][-1]
    df.loc[last, ["primal", "subopt", "rel_subopt", "gap"]] = np.inf
    df.loc[last, "status"] = "diverged"
    curves = figures.summarize_runs(df)
    flagged = {c.key[0] + "/" + c.key[1] for c in curves if c.diverged}
    assert flagged == {"dual_rcd/uniform"}
    assert all(np.isfinite(c.median).all() for c in curves)
    # the status alone flags it too (a run stopped on NaN iterates may log a finite P first)
    df2 = aggregate(status="")
    df2.loc[df2.index[bad][-1], "status"] = "diverged"
    assert [c.diverged for c in figures.summarize_runs(df2)].count(True) == 1

    path = tmp_path / "agg.parquet"
    df.to_parquet(path)
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    spec = spec_of(Panel("p", "agg"), ncols=1)
    assert figures.draw_curve_figure(spec, {"agg": path}, png, pdf) == {"p": "plotted"}
    (fig,) = captured
    ax = fig.axes[0]
    labels = [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert len(labels) == len(RATES)
    assert [lb for lb in labels if lb.endswith(figures.DIVERGED_LABEL)] != []
    assert sum(lb.endswith(figures.DIVERGED_LABEL) for lb in labels) == 1
    crosses = [ln for ln in ax.get_lines()
               if ln.get_marker() == "X" and ln.get_linestyle() == "None"]
    assert len(crosses) == 1 and np.isfinite(crosses[0].get_ydata()).all()
    legend = fig.legends[0]
    assert sum(t.get_text().endswith(figures.DIVERGED_LABEL) for t in legend.get_texts()) == 1


def test_a_curve_stopped_by_its_budget_says_so(tmp_path, captured):
    """A run that ended at max_seconds, not at the tolerance, ends at a bar and the legend
    says what the bar means; a diverged run keeps its own mark (never confused)."""
    df = aggregate(status="")
    capped = (df["solver"] == "primal_rcd") & (df["sampling"] == "importance")
    df.loc[df.index[capped & (df["seed"] == 0)][-1], "status"] = "max_time"
    curves = figures.summarize_runs(df)
    assert [c.key[:2] for c in curves if c.capped] == [("primal_rcd", "importance")]
    assert not any(c.capped and c.diverged for c in curves)
    path = tmp_path / "agg.parquet"
    df.to_parquet(path)
    spec = spec_of(Panel("p", "agg"), ncols=1)
    figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    ax = captured[-1].axes[0]
    bars = [ln for ln in ax.get_lines() if ln.get_marker() == "|"]
    assert len(bars) == 1
    assert figures.BUDGET_NOTE in captured[-1].legends[0].get_title().get_text()
    assert figures.BUDGET_NOTE not in figures.band_note([c for c in curves if not c.capped])


def test_a_time_axis_left_open_is_logarithmic_where_curves_span_decades():
    """Issue 20: PDBFW and Acc PG sat in the first pixels of a linear time axis."""
    def curve(end):
        x = np.linspace(end / 10, end, 5)
        return figures.Curve(("a",), x, np.ones(5), np.ones(5), np.ones(5), 1, ("solver",))

    assert figures.auto_log_x([curve(0.1), curve(5.0)], "time_s")
    assert not figures.auto_log_x([curve(1.0), curve(5.0)], "time_s")
    assert not figures.auto_log_x([curve(0.1), curve(5.0)], "iteration")
    # DGPD's outer iterations against the baselines' sweeps (its Figure 2: 1,300 against 40);
    # passes over the data stay linear (Face-Off's linear rates)
    assert figures.auto_log_x([curve(40.0), curve(1300.0)], "sweeps")
    assert not figures.auto_log_x([curve(40.0), curve(1300.0)], "epoch")
    spec = figures.CurveFigure("f", (figures.Panel("p", "e"),), ncols=1)
    assert spec.logx is None and figures.CurveFigure.from_json(spec.to_json()).logx is None


def test_an_axis_left_to_the_data_is_chosen_once_per_figure(tmp_path, captured):
    """Issue 20's review of PDBFW Figure 3: one panel of a row on a linear time axis, the
    others logarithmic. One panel whose curves span decades makes every time axis log."""
    wide = aggregate("wide")
    first = wide["solver"] == wide["solver"].iloc[0]
    wide.loc[first, "time_s"] *= 100  # one solver's curve ends 100x later
    path = tmp_path / "agg.parquet"
    pd.concat([aggregate("narrow"), wide]).to_parquet(path)
    spec = spec_of(Panel("narrow", "agg", {"dataset": "narrow"}),
                   Panel("wide", "agg", {"dataset": "wide"}), x="time_s")
    figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    (fig,) = captured
    assert [ax.get_xscale() for ax in fig.axes[:2]] == ["log", "log"]


def test_a_plan_note_is_wrapped_into_the_legend_title(tmp_path, captured):
    """Issue 20: a figure says why one solver shows two settings; the note is wrapped, or the
    legend grows wider than the figure and is clipped."""
    path = tmp_path / "agg.parquet"
    aggregate().to_parquet(path)
    note = "settings per data set: " + "; ".join(f"pdbfw delta x{10 ** k} on set{k}"
                                                  for k in range(2, 9))
    spec = spec_of(Panel("t1", "agg"), x="time_s", note=note)
    figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    (fig,) = captured
    title = fig.legends[0].get_title().get_text()
    assert "pdbfw delta x100000000 on set8" in title.replace("\n", " ")
    lines = title.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("settings per data set"))
    assert len(lines) - start >= 3  # the note took several lines
    assert max(len(line) for line in lines[start:]) <= figures.NOTE_WIDTH


def test_a_panel_left_to_the_data_follows_a_log_panel_of_its_row(tmp_path, captured):
    """Issue 29: DGPD Figure 3 drew one data set's time on a log axis (its ``log_time``) and
    the next panel of the row on a linear one. A panel left to the data follows a log panel
    of the same quantity in its row; a panel set linear, and another row, keep theirs."""
    path = tmp_path / "agg.parquet"
    pd.concat([aggregate("a"), aggregate("b"), aggregate("c")]).to_parquet(path)
    spec = spec_of(Panel("a time", "agg", {"dataset": "a"}, x="time_s", logx=True),
                   Panel("b time", "agg", {"dataset": "b"}, x="time_s"),
                   Panel("c time", "agg", {"dataset": "c"}, x="time_s", logx=False),
                   Panel("a sweeps", "agg", {"dataset": "a"}, x="sweeps"),
                   Panel("b sweeps", "agg", {"dataset": "b"}, x="sweeps"), ncols=3)
    figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    (fig,) = captured
    scales = {ax.get_title(): ax.get_xscale() for ax in fig.axes if ax.get_title()}
    assert scales == {"a time": "log", "b time": "log", "c time": "linear",
                      "a sweeps": "linear", "b sweeps": "linear"}


def test_titles_print_powers_raised(tmp_path, captured):
    """Issue 29: a config title "n = 10^4" printed the caret; it is mathtext now."""
    assert figures.tex_powers("(b) d = 10, n = 10^4") == "(b) d = 10, n = $10^{4}$"
    assert figures.tex_powers("λ = 10^-3 and 2^{10}") == "λ = $10^{-3}$ and $2^{10}$"
    assert figures.tex_powers("already $10^{4}$, x^2, v1.5^2") == "already $10^{4}$, x^2, v1.5^2"
    path = tmp_path / "agg.parquet"
    aggregate().to_parquet(path)
    spec = spec_of(Panel("n = 10^4", "agg"), Panel("gone 10^3", "nothing"),
                   suptitle="d = 10^2")
    figures.draw_curve_figure(spec, {"agg": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    (fig,) = captured
    assert [ax.get_title() for ax in fig.axes[:2]] == ["n = $10^{4}$", "gone $10^{3}$"]
    assert fig._suptitle.get_text() == "d = $10^{2}$"


def test_face_off_figure1_draws_the_panels_it_has_and_names_the_others():
    """Issue 29: offline, panels (c) and (d) were empty and took half of Figure 1; the plan
    draws (a) and (b) in one row and names the others in a legend line."""
    from pathlib import Path

    from pdsparse.data.registry import load_registry
    from pdsparse.repro.config import load_config
    from pdsparse.repro.papers.faceoff.plan import plan

    root = Path(__file__).resolve().parents[1]
    config = load_config([root / "config" / "config.yaml"],
                         root / "workflow" / "schemas" / "config.schema.yaml")
    registry = load_registry(root / "config" / "datasets.yaml")
    offline = plan(config, registry, available=lambda name: False)
    out = next(o for o in offline.outputs if o.name == "figure1")
    spec = CurveFigure.from_json(_spec_arg(out.command[1]))
    assert [p.title[:3] for p in spec.panels] == ["(a)", "(b)"]
    assert spec.ncols == 2 and spec.nrows == 1
    assert "(c) news20.binary" in spec.note and "(d) leu" in spec.note
    online = plan(config, registry, available=lambda name: True)
    full = CurveFigure.from_json(_spec_arg(next(
        o for o in online.outputs if o.name == "figure1").command[1]))
    assert len(full.panels) == 4 and full.nrows == 2 and full.note == ""
    two = plotting.figure1_spec({"a": "x"}, only=["a", "c"], note="n")
    assert [p.experiment for p in two.panels] == ["figure1a", "figure1c"]
    with pytest.raises(DataError, match="panel keys"):
        plotting.figure1_spec(only=["e"])


def _spec_arg(arg: str) -> str:
    """The JSON of a ``--spec '<json>'`` command argument."""
    import shlex

    return shlex.split(arg)[1]
