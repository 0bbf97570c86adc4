"""Tests of Figures 1–3 (pdsparse.repro.papers.faceoff.figures) on tiny synthetic aggregates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.lines import Line2D

from pdsparse.errors import DataError
from pdsparse.repro import figures
from pdsparse.repro.papers.faceoff import figures as plotting
from pdsparse.stats import R

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fake_aggregate(dataset, seeds=(0, 1, 2), epochs=6, rates=None, d=None):
    """Traces of four configurations with geometric decrease; seed s scales subopt by 1+s.

    ``d``: add the aggregate's ``d`` column (number of features) with this value."""
    rates = rates or {
        ("primal_rcd", "importance", "fixed"): 0.1,
        ("primal_rcd", "uniform", "fixed"): 0.3,
        ("dual_rcd", "importance", "fixed"): 0.5,
        ("dual_rcd", "importance", "newton"): 0.4,
    }
    rows = []
    for (solver, sampling, step), rate in rates.items():
        for seed in seeds:
            for k in range(epochs + 1):
                subopt = (1.0 + seed) * rate**k
                rows.append(
                    {
                        "experiment": "e",
                        "dataset": dataset,
                        "solver": solver,
                        "loss": "logistic",
                        "l2": 0.01,
                        "l1": 0.0,
                        "sampling": sampling,
                        "dual_step": step,
                        "seed": seed,
                        "iteration": k * 10,
                        "epoch": float(k),
                        "primal": 0.5 + subopt,
                        "p_star": 0.5,
                        "subopt": subopt,
                        "rel_subopt": subopt / 0.5,
                    }
                )
    df = pd.DataFrame(rows)
    return df if d is None else df.assign(d=d)


def assert_outputs(png, pdf):
    assert png.stat().st_size > 1000 and pdf.stat().st_size > 1000
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert pdf.read_bytes()[:5] == b"%PDF-"
    leftovers = [p.name for p in png.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


# ----------------------------------------------------------------- summaries


def test_summarize_runs_median_and_band():
    df = fake_aggregate("x", seeds=(0, 1, 2), epochs=3)
    curves = plotting.summarize_runs(df)
    assert [c.key for c in curves] == [
        ("primal_rcd", "importance", ""),
        ("primal_rcd", "uniform", ""),
        ("dual_rcd", "importance", "fixed"),
        ("dual_rcd", "importance", "newton"),
    ]
    c = curves[0]
    assert c.n_seeds == 3
    np.testing.assert_allclose(c.epoch, [0, 1, 2, 3])
    np.testing.assert_allclose(c.median, 2.0 * 0.1 ** np.arange(4))  # seeds scale 1, 2, 3
    np.testing.assert_allclose(c.low, 0.1 ** np.arange(4))
    np.testing.assert_allclose(c.high, 3.0 * 0.1 ** np.arange(4))


def test_summarize_runs_clips_and_interpolates():
    df = pd.DataFrame(
        {
            "solver": "primal_rcd",
            "sampling": "uniform",
            "dual_step": "fixed",
            "seed": [0, 0, 0, 1, 1],
            "epoch": [0.0, 1.0, 2.0, 0.0, 2.0],
            "subopt": [1.0, -1e-3, 0.0, 1.0, 1e-4],
        }
    )
    (c,) = plotting.summarize_runs(df, floor=1e-12)
    np.testing.assert_allclose(c.epoch, [0.0, 1.0, 2.0])
    # Seed 1 interpolated in log space at epoch 1: sqrt(1 * 1e-4) = 1e-2.
    np.testing.assert_allclose(c.high, [1.0, 1e-2, 1e-4])
    np.testing.assert_allclose(c.low, [1.0, 1e-12, 1e-12])  # negative and zero clipped


def test_summarize_runs_common_support_of_seeds():
    """Seeds stopping at different epochs: the curve ends where the first seed stopped."""
    df = pd.DataFrame(
        {
            "solver": "dual_rcd",
            "sampling": "importance",
            "dual_step": "fixed",
            "seed": [0] * 4 + [1] * 5 + [2] * 6,
            "epoch": [0.0, 1.0, 2.0, 3.0] + [0.0, 1.0, 2.0, 3.0, 4.0] + [0, 1, 2, 3, 4, 5.0],
            "subopt": [1.0, 1e-1, 1e-2, 1e-3]
            + [1.0, 1e-1, 1e-2, 1e-3, 1e-4]
            + [1.0, 1e-2, 1e-4, 1e-6, 1e-8, 1e-2],  # seed 2 ends with an outlier
        }
    )
    (c,) = plotting.summarize_runs(df)
    np.testing.assert_allclose(c.epoch, [0.0, 1.0, 2.0, 3.0])  # min over seeds of last epoch
    np.testing.assert_allclose(c.median, 10.0 ** -np.arange(4.0))
    np.testing.assert_allclose(c.low, 10.0 ** (-2 * np.arange(4.0)))
    np.testing.assert_allclose(c.high, 10.0 ** -np.arange(4.0))
    # Later starts count too: the common support begins at the largest first epoch.
    late = df.assign(epoch=np.where(df["seed"] == 0, df["epoch"] + 0.5, df["epoch"]))
    (c,) = plotting.summarize_runs(late)
    np.testing.assert_allclose(c.epoch, [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5])


def test_every_configuration_has_its_own_style():
    """The default solvers (and Newton) differ in (colour, line style, marker) and marker."""
    keys = [
        ("primal_rcd", "importance", ""),
        ("primal_rcd", "uniform", ""),
        ("dual_rcd", "importance", "fixed"),
        ("dual_rcd", "uniform", "fixed"),
        ("dual_rcd", "importance", "printed"),
        ("dual_rcd", "uniform", "printed"),
        ("dual_rcd", "importance", "newton"),
        ("dual_rcd", "uniform", "newton"),
    ]
    styles = [plotting.config_style(k) for k in keys]
    markers = [st["marker"] for st in styles]
    assert len(set(markers)) == len(keys), markers
    assert all(st["marker"] not in ("", "none", None) for st in styles)
    # Uniform sampling: open markers; importance: filled.
    assert styles[1]["markerfacecolor"] == "white" and styles[0]["markerfacecolor"] != "white"
    assert plotting.config_style(("primal_rcd", "permutation", ""))["marker"]


def test_coinciding_groups():
    epoch = np.arange(11.0)
    flat = np.full(11, 0.35)

    def curve(key, median, epochs=epoch):
        return plotting.Curve(key, epochs, median, median, median, 1)

    curves = [
        curve(("primal_rcd", "importance", ""), 0.35 * 0.1**epoch),
        curve(("dual_rcd", "importance", "fixed"), flat),
        curve(("dual_rcd", "uniform", "fixed"), flat * 1.001),
        curve(("dual_rcd", "importance", "printed"), flat[:6], epoch[:6]),  # stops early
        curve(("primal_rcd", "uniform", ""), flat * 10.0 ** (-epoch / 50)),  # drifts away
    ]
    groups = plotting.coinciding_groups(curves, tol_decades=0.05)
    assert groups == [
        [
            ("dual_rcd", "importance", "fixed"),
            ("dual_rcd", "uniform", "fixed"),
            ("dual_rcd", "importance", "printed"),
        ]
    ]
    # Exactly equal medians coincide at any tolerance; 0.1% apart no longer at 1e-6 decades.
    assert plotting.coinciding_groups(curves, tol_decades=1e-6) == [
        [("dual_rcd", "importance", "fixed"), ("dual_rcd", "importance", "printed")]
    ]


def capture_figure(monkeypatch):
    """Keep the Figure that figures.save_figure would write (files are still written)."""
    captured = []
    save = figures.save_figure

    def keep(fig, png, pdf):
        captured.append(fig)
        save(fig, png, pdf)

    monkeypatch.setattr(figures, "save_figure", keep)
    return captured


def test_styles_distinguish_primal_dual_and_sampling():
    primal = plotting.config_style(("primal_rcd", "importance", ""))
    dual = plotting.config_style(("dual_rcd", "importance", "fixed"))
    dual_uniform = plotting.config_style(("dual_rcd", "uniform", "fixed"))
    assert primal["color"] != dual["color"]
    assert dual["linestyle"] != dual_uniform["linestyle"]
    assert dual["color"] == dual_uniform["color"]
    assert plotting.config_label(("dual_rcd", "uniform", "newton")) == (
        "dual RCD, uniform, newton step"
    )


# ----------------------------------------------------------------- Figure 1


def test_figure1_files_and_skipped_panels(tmp_path):
    a, c = tmp_path / "a.parquet", tmp_path / "c.parquet"
    fake_aggregate("wc_general").to_parquet(a)
    fake_aggregate("news20.binary", seeds=(0,)).to_parquet(c)
    empty = tmp_path / "empty.parquet"
    fake_aggregate("leu").iloc[:0].to_parquet(empty)
    png, pdf = tmp_path / "fig" / "figure1.png", tmp_path / "fig" / "figure1.pdf"
    status = plotting.faceoff_figure1(
        {"a": a, "c": c, "d": empty}, png, pdf, panel_titles={"a": "(a) d = n"}
    )
    assert status == {"a": "plotted", "b": "skipped", "c": "plotted", "d": "skipped"}
    assert_outputs(png, pdf)


def test_figure1_coinciding_curves_stay_visible(tmp_path, monkeypatch):
    """Dual curves on top of each other: own markers, interleaved, and a note in the panel."""
    rates = {
        ("primal_rcd", "importance", "fixed"): 0.1,
        ("dual_rcd", "importance", "fixed"): 0.999,
        ("dual_rcd", "uniform", "fixed"): 0.999,
        ("dual_rcd", "importance", "printed"): 0.999,
    }
    path = tmp_path / "a.parquet"
    fake_aggregate("wc", epochs=12, rates=rates).to_parquet(path)
    captured = capture_figure(monkeypatch)
    plotting.faceoff_figure1({"a": path}, tmp_path / "f.png", tmp_path / "f.pdf")
    (fig,) = captured
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    dual = [lab for lab in lines if lab.startswith("dual")]
    assert len(dual) == 3
    assert len({lines[lab].get_marker() for lab in lines}) == 4
    # Sparse markers with a different offset per curve: coinciding curves interleave them.
    everies = [lines[lab].get_markevery() for lab in dual]
    assert all(isinstance(e, tuple) for e in everies)
    assert len({e[0] for e in everies}) == 3
    # The panel says which curves coincide: one note entry holding the three dual markers.
    note = ax.get_legend()
    assert note is not None
    assert [t.get_text() for t in note.get_texts()] == ["coincide"]
    note_markers = sorted(line.get_marker() for line in note.findobj(Line2D))
    assert note_markers == sorted(lines[lab].get_marker() for lab in dual)
    # The figure legend says what line and band are.
    (legend,) = fig.legends
    title = legend.get_title().get_text()
    assert "median over 3 seeds" in title and "min–max over seeds" in title
    assert "passes reached by every seed" in title


def test_figure1_rejects_bad_input(tmp_path):
    with pytest.raises(DataError, match="panel keys"):
        plotting.faceoff_figure1({"e": None}, tmp_path / "f.png", tmp_path / "f.pdf")
    with pytest.raises(DataError, match="missing.parquet"):
        plotting.faceoff_figure1(
            {"a": tmp_path / "missing.parquet"}, tmp_path / "f.png", tmp_path / "f.pdf"
        )
    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"solver": ["primal_rcd"], "epoch": [0.0]}).to_parquet(bad)
    with pytest.raises(DataError, match="subopt"):
        plotting.faceoff_figure1({"a": bad}, tmp_path / "f.png", tmp_path / "f.pdf")
    assert not (tmp_path / "f.png").exists()


# ----------------------------------------------------------------- Figure 2


def test_figure2_grid(tmp_path):
    agg = pd.concat(
        [
            fake_aggregate("bin_d100_n100_p0.01", seeds=(0, 1), d=100),
            fake_aggregate("bin_d100_n100_p1", seeds=(0, 1), d=100),
            fake_aggregate("bin_d100_n1000_p0.01", seeds=(0,), d=100),
            fake_aggregate("bin_d100_n5_p0.5", seeds=(0,), d=100),  # outside the grid: ignored
        ]
    )
    path = tmp_path / "figure2.parquet"
    agg.to_parquet(path)
    png, pdf = tmp_path / "figure2.png", tmp_path / "figure2.pdf"
    status = plotting.faceoff_figure2(path, png, pdf, n_values=[100, 1000], nnz_fractions=[0.01, 1])
    assert status == {
        (100, 0.01): "plotted",
        (100, 1.0): "plotted",
        (1000, 0.01): "plotted",
        (1000, 1.0): "skipped",
    }
    assert_outputs(png, pdf)


@pytest.mark.parametrize("sharey", [True, False])
def test_figure2_shared_y_range(tmp_path, monkeypatch, sharey):
    agg = pd.concat(
        [
            fake_aggregate("bin_d100_n100_p0.01", seeds=(0, 1), d=100),
            fake_aggregate(
                "bin_d100_n100_p1", seeds=(0,), rates={("primal_rcd", "x", ""): 0.9}, d=100
            ),
        ]
    )
    path = tmp_path / "figure2.parquet"
    agg.to_parquet(path)
    captured = capture_figure(monkeypatch)
    kwargs = {} if sharey else {"sharey": False}  # shared is the default
    status = plotting.faceoff_figure2(
        path, tmp_path / "f.png", tmp_path / "f.pdf", [100], [0.01, 1, 0.5], **kwargs
    )
    assert status[(100, 0.5)] == "skipped"
    (fig,) = captured
    a, b, skipped = fig.axes[:3]
    assert (a.get_ylim() == b.get_ylim()) is sharey
    assert skipped.get_ylim() == a.get_ylim() if sharey else True
    # Inner cells of a shared row keep their ticks but hide the labels.
    assert b.yaxis.get_tick_params()["labelleft"] is not sharey
    assert len(a.get_yticks()) > 0


def test_figure2_cells_come_from_the_plan_not_from_names(tmp_path):
    """d from the aggregate's d column (or the caller); cells named as the plan names them."""
    agg = pd.concat(
        [
            fake_aggregate("bin_d100_n100_p0.01", seeds=(0,), d=100),
            fake_aggregate("bin_d100_n100_p0.1", seeds=(0,), d=100).assign(dataset="other"),
        ]
    )
    path = tmp_path / "figure2.parquet"
    agg.to_parquet(path)
    out = tmp_path / "f.png", tmp_path / "f.pdf"
    status = plotting.faceoff_figure2(path, *out, [100], [0.01, 0.1])
    # 'other' is not the plan's name of the (100, 10%) cell: nothing is parsed from names.
    assert status == {(100, 0.01): "plotted", (100, 0.1): "skipped"}
    # Another d names other data sets: every cell is skipped.
    status = plotting.faceoff_figure2(path, *out, [100], [0.01, 0.1], d=50)
    assert set(status.values()) == {"skipped"}
    # Without d, the aggregate must say it, once.
    agg.drop(columns="d").to_parquet(path)
    with pytest.raises(DataError, match="'d'"):
        plotting.faceoff_figure2(path, *out, [100], [0.01])
    agg.assign(d=[100] * (len(agg) - 1) + [7]).to_parquet(path)
    with pytest.raises(DataError, match="several d values"):
        plotting.faceoff_figure2(path, *out, [100], [0.01])


def test_figure2_spec_from_the_plan_cells():
    spec = plotting.figure2_spec(
        {(100, 0.01): "bin_a", (1000, 1.0): "bin_b"}, [100, 1000], [0.01, 1.0], sharey=False
    )
    assert spec.ncols == 2 and spec.nrows == 2 and not spec.sharey and spec.outer_labels
    wheres = [(p.title, p.experiment, p.where) for p in spec.panels]
    assert wheres == [
        ("n = 100, nnz ≈ 1%", "figure2", {"dataset": "bin_a"}),
        ("n = 100, nnz ≈ 100%", "", {}),
        ("n = 1,000, nnz ≈ 1%", "", {}),
        ("n = 1,000, nnz ≈ 100%", "figure2", {"dataset": "bin_b"}),
    ]
    assert figures.CurveFigure.from_json(spec.to_json()) == spec


# ----------------------------------------------------------------- Figure 3


def test_r_grid_values_and_mask():
    n = 10
    grid = plotting.r_grid(n, d_points=25, alpha_points=40)
    assert grid.d[0] == n and grid.d[-1] == n * n
    assert grid.alpha[0] == n and grid.alpha[-1] == n**3
    dd, aa = np.meshgrid(grid.d, grid.alpha)
    expected_mask = (aa < np.maximum(dd, n)) | (aa > n * dd)
    np.testing.assert_array_equal(np.ma.getmaskarray(grid.R), expected_mask)
    # Spot checks against pdsparse.stats.R.
    rng = np.random.default_rng(0)
    valid = np.argwhere(~expected_mask)
    for k, j in valid[rng.choice(len(valid), size=15, replace=False)]:
        assert grid.R[k, j] == pytest.approx(R(int(grid.alpha[k]), int(grid.d[j]), n))
    # By hand: R(alpha=n, d=n, n) = U/L = n/n = 1 (one nonzero per row and column).
    assert grid.R[0, 0] == pytest.approx(1.0)


def test_r_grid_r_equals_one_boundary():
    """Lemma 11 / Corollary 6: R <= 1 for alpha >= n^2+3n, and for all alpha if d >= n^2+3n."""
    n = 10
    threshold = plotting.corollary6_threshold(n)
    assert threshold == 130
    grid = plotting.r_grid(n, d_points=60, alpha_points=80, d_max=4 * n * n)
    R_ = grid.R.filled(np.nan)
    dd, aa = np.meshgrid(grid.d, grid.alpha)
    valid = np.isfinite(R_)
    assert np.all(R_[valid & (aa >= threshold)] <= 1.0 + 1e-12)
    assert np.all(R_[valid & (dd >= threshold)] <= 1.0 + 1e-12)
    # ...and R = 1 is a real boundary: R > 1 below it. By hand (appendix formulas):
    # R(19, 10, 10) = U / L = (11*9 + 9 + 1^2) / (10*1 + 9*3) = 109/37.
    assert np.any(R_[valid] > 1.0)
    assert R(19, 10, 10) == pytest.approx(109 / 37)
    assert R(20, 20, 10) == pytest.approx(20 / 40)


def test_r_equals_one_exhaustive_columns():
    """All alpha for fixed d: Corollary 6 (d = n^2+3n: R <= 1) vs Theorem 4 (some R > 1)."""
    n = 40
    d_cor6 = plotting.corollary6_threshold(n)
    alpha = np.arange(d_cor6, n * d_cor6 + 1)
    assert np.all(R(alpha, d_cor6, n) <= 1.0)
    d_thm4 = int(plotting.theorem4_d_bound(n))
    assert d_thm4 == 339
    alpha = np.arange(d_thm4, n * d_thm4 + 1)
    assert np.any(R(alpha, d_thm4, n) > 1.0)


def test_figure3_files(tmp_path):
    png, pdf = tmp_path / "figure3.png", tmp_path / "figure3.pdf"
    grid = plotting.faceoff_figure3(10, png, pdf, d_points=30, alpha_points=30, d_max=200)
    assert grid.n == 10 and grid.d[-1] == 200
    assert_outputs(png, pdf)


def test_figure3_rejects_tiny_n(tmp_path):
    with pytest.raises(DataError, match="n >= 2"):
        plotting.faceoff_figure3(1, tmp_path / "f.png", tmp_path / "f.pdf")
