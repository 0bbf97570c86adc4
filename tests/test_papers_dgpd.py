"""The DGPD plan: grid of runs, figures by (lambda, mu), Table 2 and the speedup table."""

from __future__ import annotations

import copy

import pytest

from pdsparse.errors import ConfigError
from pdsparse.repro.figures import CurveFigure
from pdsparse.repro.papers.dgpd.plan import FIGURES, plan

GEN = {"generator": {"name": "zipf", "kind": "zipf_bow",
                     "params": {"n": 60, "d": 40, "mean_nnz_per_row": 5}}}


def _config(**dgpd):
    cfg = {
        "data": {"require_all": False, "processed_dir": "data/processed"},
        "dgpd": {
            "loss": "smooth_hinge", "loss_sum": False, "lambdas": [0.1, 0.01],
            "mus": [1.0, 0.1, 0.01],
            "seeds": [0], "max_epochs": 10, "max_seconds": 5, "tol": 1e-7,
            "eval_first": 0.01, "eval_per_decade": 4, "log_time": ["toy"],
            "reference": {"rtol": 1e-10, "max_epochs": 1000, "max_seconds": 60},
            "solvers": [{"method": "primal_rcd", "sampling": "uniform"},
                        {"method": "dual_rcd", "sampling": "uniform", "dual_step": "newton"}],
            "speedup": {"base": "dual_rcd", "targets": [1e-3, 1e-6]},
            "table2": {"lam": 0.1, "mu": 0.01},
            "datasets": {"toy": {"source": GEN, "recipe": {"normalization": "unit_rows"},
                                 "paper": "Sector"},
                         "real": {"source": {"registry": "leu"}, "paper": "Mnist-RB"}},
        },
    }
    cfg["dgpd"].update(dgpd)
    return cfg


REGISTRY = {"leu": object()}


def test_grid_of_runs_and_outputs():
    p = plan(_config(), REGISTRY, available=lambda name: False)
    assert p.skipped == [("DGPD real", "leu")]
    assert len(p.runs) == 6 * 2  # (lambda, mu) x solvers on the one available set
    tags = {r.problem.tag for r in p.runs}
    assert "zipf+unit_rows__smooth_hinge__l2-0.01__l1-0.1" in tags
    assert all(r.eval_per_decade == 4 and r.eval_every == 0.01 for r in p.runs)
    names = [o.name for o in p.outputs]
    assert names == [f"figure{k}" for k in range(1, 7)] + ["speedup", "table2"]
    fig1 = next(o for o in p.outputs if o.name == "figure1")
    spec = CurveFigure.from_json(fig1.command[1].split(" ", 1)[1].strip("'"))
    assert spec.y == "rel_objective" and len(spec.panels) == 2  # time and iterations
    assert [pn.x for pn in spec.panels] == ["time_s", "sweeps"]
    assert spec.panels[0].logx is True and "λ = 0.1, μ = 0.01" in spec.suptitle
    table2 = next(o for o in p.outputs if o.name == "table2")
    assert all("lam0.1_mu0.01" in f for f in table2.inputs if f.startswith("results/runs"))
    assert any(f.endswith(".npz") for f in table2.inputs)
    assert FIGURES[0] == (0.1, 0.01)


def test_summed_loss_names_the_weights_per_example():
    p = plan(_config(loss_sum=True, lambdas=[0.1], mus=[0.01]), REGISTRY,
             available=lambda name: False)
    assert {r.problem.tag for r in p.runs} == {
        "zipf+unit_rows__smooth_hinge__l2-0.01_n__l1-0.1_n"}
    fig = next(o for o in p.outputs if o.name == "figure1")
    assert "l1-0.1_n" in fig.command[1]


def test_available_registry_set_and_figure_subset():
    p = plan(_config(lambdas=[0.1], mus=[0.01]), REGISTRY, available=lambda name: True)
    assert not p.skipped
    assert {r.problem.data.name for r in p.runs} == {"zipf", "leu"}
    assert [o.name for o in p.outputs] == ["figure1", "speedup", "table2"]


def test_config_errors_name_the_setting():
    cfg = _config()
    cfg["dgpd"]["datasets"]["toy"]["recipe"] = {"normalizaton": "none"}
    with pytest.raises(ConfigError, match=r"dgpd.datasets.toy.recipe: unknown key "
                                          r"'normalizaton' \(did you mean 'normalization'"):
        plan(cfg, REGISTRY, available=lambda name: False)
    cfg["dgpd"]["datasets"]["toy"]["recipe"] = {"features": "rb", "n_grids": 0, "sigma": 1.0}
    with pytest.raises(ConfigError, match=r"dgpd.datasets.toy.recipe: .*n_grids"):
        plan(cfg, REGISTRY, available=lambda name: False)
    cfg = _config()
    cfg["dgpd"]["datasets"]["real"]["source"] = {"registry": "nope"}
    with pytest.raises(ConfigError, match=r"dgpd.datasets.real.source.registry: 'nope'"):
        plan(cfg, REGISTRY, available=lambda name: False)
    cfg = copy.deepcopy(_config())
    cfg["dgpd"]["solvers"] = [{"method": "primal_rcd", "samplng": "uniform"}]
    with pytest.raises(ConfigError, match=r"dgpd.solvers\[0\].*samplng"):
        plan(cfg, REGISTRY, available=lambda name: False)


def test_a_test_file_names_the_data_and_is_checked_and_needed():
    reg = {"sector.scale": object(), "sector.t.scale": object(), "leu": object()}
    sector = {"source": {"registry": "sector.scale"}, "paper": "Sector",
              "recipe": {"normalization": "unit_rows", "test_file": "sector.t.scale"}}
    cfg = _config(lambdas=[0.1], mus=[0.01], datasets={"sector": sector})
    p = plan(cfg, reg, available=lambda name: True)
    (spec,) = p.data.values()
    assert spec.key == "sector.scale__unit_rows-tfsector.t.scale"
    assert spec.raw_names == ("sector.scale", "sector.t.scale")
    assert {r.problem.tag for r in p.runs} == {
        "sector.scale+unit_rows-tfsector.t.scale__smooth_hinge__l2-0.01__l1-0.1"}
    # the test file unavailable: the item is skipped, naming that file
    p = plan(cfg, reg, available=lambda name: name != "sector.t.scale")
    assert p.skipped == [("DGPD sector", "sector.t.scale")] and not p.runs
    # a bad test registry name: the error names the setting (and suggests the right name)
    bad = copy.deepcopy(cfg)
    bad["dgpd"]["datasets"]["sector"]["recipe"]["test_file"] = "sector.t.scal"
    with pytest.raises(ConfigError, match=r"dgpd.datasets.sector.recipe.test_file: "
                                          r"'sector.t.scal' is not in the registry \(did you "
                                          r"mean 'sector.t.scale'\?\)"):
        plan(bad, reg, available=lambda name: True)
    # a generator has no test file
    gen = copy.deepcopy(cfg)
    gen["dgpd"]["datasets"]["sector"]["source"] = GEN
    with pytest.raises(ConfigError, match=r"dgpd.datasets.sector.recipe.test_file: .*only "
                                          r"applies to a registry source"):
        plan(gen, reg, available=lambda name: True)
    both = copy.deepcopy(cfg)
    both["dgpd"]["datasets"]["sector"]["recipe"]["test_rows"] = 100
    with pytest.raises(ConfigError, match=r"dgpd.datasets.sector.recipe: .*test_rows and "
                                          r"test_file"):
        plan(both, reg, available=lambda name: True)


def test_cells_restrict_a_data_set_to_points_of_the_grid():
    datasets = {"toy": {"source": GEN, "recipe": {"normalization": "unit_rows"},
                        "paper": "Sector"},
                "big": {"source": {"registry": "leu"}, "paper": "Mnist-RB",
                        "cells": [[0.1, 0.01], [0.1, 1]]}}
    p = plan(_config(datasets=datasets), REGISTRY, available=lambda name: True)
    big = {r.experiment for r in p.runs if r.problem.data.name == "leu"}
    assert big == {"lam0.1_mu0.01", "lam0.1_mu1"}
    assert len(p.runs) == (6 + 2) * 2  # toy: the whole grid; big: two points; 2 solvers
    figures = {o.name: CurveFigure.from_json(o.command[1].split(" ", 1)[1].strip("'"))
               for o in p.outputs if o.name.startswith("figure")}
    assert len(figures) == 6
    # Figure 1 (0.1, 0.01) and Figure 2 (0.1, 1) have both data sets, the others toy only
    assert figures["figure1"].ncols == 2 and figures["figure2"].ncols == 2
    assert figures["figure3"].ncols == 1 and "leu" not in figures["figure3"].to_json()
    table2 = next(o for o in p.outputs if o.name == "table2")
    assert sum(f.startswith("results/runs") for f in table2.inputs) == 2  # DGPD base: both
    speedup = next(o for o in p.outputs if o.name == "speedup")
    assert len(speedup.inputs) == 6
    # only some points for every set: figures and aggregates of the others are not made
    only = {name: {**e, "cells": [[0.1, 0.01]]} for name, e in datasets.items()}
    p = plan(_config(datasets=only), REGISTRY, available=lambda name: True)
    assert [o.name for o in p.outputs] == ["figure1", "speedup", "table2"]
    assert list(p.experiments) == ["lam0.1_mu0.01"]
    assert "results/figures/dgpd/figure2.png" in p.stale
    # no set at Table 2's point: no Table 2
    off = {name: {**e, "cells": [[0.01, 1]]} for name, e in datasets.items()}
    p = plan(_config(datasets=off), REGISTRY, available=lambda name: True)
    assert [o.name for o in p.outputs] == ["figure4", "speedup"]


@pytest.mark.parametrize(("cells", "needle"), [
    ([[0.5, 0.01]], r"dgpd.datasets.big.cells\[0\]: lambda = 0.5, mu = 0.01 is not a point "
                    r"of the grid"),
    ([[0.1]], r"dgpd.datasets.big.cells\[0\]: \[0.1\] is not a \[lambda, mu\] pair"),
    ([[0.1, 1], [0.1, 1.0]], r"dgpd.datasets.big.cells\[1\]: \[0.1, 1\] is listed twice"),
    ([], r"dgpd.datasets.big.cells: an empty list"),
])
def test_bad_cells_name_the_setting(cells, needle):
    datasets = {"big": {"source": {"registry": "leu"}, "cells": cells}}
    with pytest.raises(ConfigError, match=needle):
        plan(_config(datasets=datasets), REGISTRY, available=lambda name: True)


def test_table2_reading_says_which_counts_the_paper_fits():
    """DGPD's Table 2 counts read as final iterates or as the optimum's supports: the row says
    which ours fit (Mnist-RF's printed nz-dual is exactly 2,000 of 58,000)."""
    from pdsparse.repro.papers.dgpd.scorecard import _reading

    printed = {"nz_primal": 1730, "nz_dual": 2000, "features": 10000, "train": 58000,
               "classes": 10}
    ours = {"nz_primal": 1700, "nz_dual": 2100, "features": 10000, "train": 58000,
            "classes": 10, "solved_classes": 10, "opt_nz_primal": 12000, "opt_nz_dual": 19000}
    text = _reading(ours, printed)
    assert text.startswith("the printed counts are closer to DGPD's final iterates")
    ours.update(nz_primal=40000, nz_dual=90000, opt_nz_primal=1800, opt_nz_dual=2000)
    assert "closer to the certified optimum's supports" in _reading(ours, printed)
    assert _reading({**ours, "opt_nz_dual": float("nan")}, printed) == ""


def test_best_settings_rerun_every_cell_where_they_differ():
    best = [{"method": "dual_rcd", "sampling": "importance", "dual_step": "newton"},
            {"method": "primal_rcd", "sampling": "uniform"}]  # = printed: not rerun
    p = plan(_config(best=best), REGISTRY, available=lambda name: False)
    rerun = [r for r in p.runs if r.experiment.endswith("_best")]
    assert len(rerun) == 6 and {(r.solver, r.options_tag) for r in rerun} == {
        ("dual_rcd", "importance-newton")}
    assert {r.experiment for r in rerun} == {f"{e}_best" for e in p.experiments
                                             if not e.endswith("_best")}
    # the speedup table and Table 2 read the printed runs only
    for name in ("speedup", "table2"):
        out = next(o for o in p.outputs if o.name == name)
        assert not any("_best" in f for f in out.inputs), name
    with pytest.raises(ConfigError, match=r"dgpd.best\[1\]: a second best"):
        plan(_config(best=[best[0], best[0]]), REGISTRY, available=lambda name: False)
