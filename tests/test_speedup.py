"""Time to a target accuracy and speedup tables (pdsparse.speedup)."""

import math

import numpy as np
import pandas as pd
import pytest

from pdsparse.errors import DataError
from pdsparse.speedup import speedup_table, time_to_target, write_speedup_table


def _runs(solver, rate, seeds=(0, 1, 2), problem="p1", dataset="toy", steps=10, **opts):
    """rel_subopt = 10^(-rate * k) at time k * (1 + seed / 10)."""
    rows = []
    for seed in seeds:
        for k in range(steps + 1):
            rows.append({"problem": problem, "dataset": dataset, "l1": 0.1, "l2": 0.01,
                         "experiment": "lam0.1_mu0.01",
                         "solver": solver, "seed": seed, "time_s": k * (1 + seed / 10),
                         "rel_subopt": 10.0 ** (-rate * k), **opts})
    return pd.DataFrame(rows)


def test_time_to_target_is_first_hit_median_over_seeds():
    df = _runs("a", 1.0).assign(config="a")
    tt = time_to_target(df, 1e-3)
    # k = 3 for every seed, at times 3, 3.3, 3.6 -> median 3.3
    assert tt["time"].iloc[0] == pytest.approx(3.3)
    assert tt["seeds_reached"].iloc[0] == 3
    assert math.isnan(time_to_target(df, 1e-30)["time"].iloc[0])
    with pytest.raises(DataError, match="lacks"):
        time_to_target(df.drop(columns="seed"), 1e-3)


def test_speedup_ratios_and_lower_bounds():
    df = pd.concat([_runs("fast", 2.0, sampling="none"), _runs("slow", 0.5, sampling="uniform"),
                    _runs("never", 0.1, sampling="uniform")])
    table = speedup_table(df, "fast", [1e-2, 1e-4], ("sampling",),
                          by=("dataset", "l1", "l2"))
    row = table.set_index("solver")
    # fast reaches 1e-4 at k = 2 (median time 2.2); slow at k = 8 (8.8): 4x
    assert row.loc["slow", "speedup_0.0001"] == pytest.approx(8.8 / 2.2)
    assert row.loc["slow", "bound_0.0001"] == ""
    # never reaches 1e-4 within 10 steps: at least the median longest run (11 s) over 2.2 s
    assert row.loc["never", "bound_0.0001"] == ">="
    assert row.loc["never", "speedup_0.0001"] == pytest.approx(11 / 2.2)
    assert row.loc["fast", "speedup_0.01"] == pytest.approx(1.0)
    assert row.loc["slow", "config"] == "slow (uniform)"
    with pytest.raises(DataError, match="base solver"):
        speedup_table(df, "missing", [1e-2], ("sampling",), by=("dataset",))


def test_write_speedup_table(tmp_path):
    df = pd.concat([_runs("fast", 2.0, sampling="none"), _runs("slow", 0.5, sampling="none")])
    path = tmp_path / "agg.parquet"
    df.to_parquet(path)
    table = write_speedup_table([path], "fast", [1e-3], tmp_path / "s.csv", tmp_path / "s.md",
                                caption="Caption.", claim="up to 30x", names={"p1": "toy-rb"})
    md = (tmp_path / "s.md").read_text()
    assert "(base)" in md and "Caption." in md and "up to 30x" in md
    assert "| toy-rb | lam0.1_mu0.01 |" in md
    back = pd.read_csv(tmp_path / "s.csv")
    assert len(back) == len(table) == 2
    assert np.isfinite(back["speedup_0.001"]).all()


def test_the_speedup_counts_the_setup_a_user_pays():
    """A base that converges in a third of the kernel time but pays a setup of 10 s (a
    spectral norm) is behind once the setup is counted: the verdict uses the time with
    setup; the kernel-only speedup stays beside it."""
    fast = _runs("fast", 3.0, sampling="none").assign(setup_s=10.0)
    slow = _runs("slow", 1.0, sampling="none").assign(setup_s=0.5)
    table = speedup_table(pd.concat([fast, slow]), "fast", [1e-3], ("sampling",))
    row = table.set_index("solver")
    # kernel: fast hits 1e-3 at k = 1 (median 1.1 s), slow at k = 3 (3.3 s)
    assert row.loc["slow", "kernel_0.001"] == pytest.approx(3.3)
    assert row.loc["slow", "kernel_speedup_0.001"] == pytest.approx(3.0)
    # with setup: 11.1 s against 3.8 s, so the base is 0.34x as fast
    assert row.loc["fast", "time_0.001"] == pytest.approx(11.1)
    assert row.loc["slow", "time_0.001"] == pytest.approx(3.8)
    assert row.loc["slow", "speedup_0.001"] == pytest.approx(3.8 / 11.1)
    assert row.loc["fast", "setup_s"] == 10.0 and row.loc["slow", "setup_s"] == 0.5


def test_an_aggregate_without_setup_has_kernel_time_only():
    df = pd.concat([_runs("fast", 2.0, sampling="none"), _runs("slow", 0.5, sampling="none")])
    row = speedup_table(df, "fast", [1e-4], ("sampling",)).set_index("solver")
    assert row.loc["slow", "speedup_0.0001"] == row.loc["slow", "kernel_speedup_0.0001"]
    assert (row["setup_s"] == 0).all()


def test_the_markdown_says_cpu_time_with_setup(tmp_path):
    df = pd.concat([_runs("fast", 3.0, sampling="none").assign(setup_s=10.0),
                    _runs("slow", 1.0, sampling="none").assign(setup_s=0.5)])
    path = tmp_path / "agg.parquet"
    df.to_parquet(path)
    write_speedup_table([path], "fast", [1e-3], tmp_path / "s.csv", tmp_path / "s.md")
    md = (tmp_path / "s.md").read_text()
    assert "| p1 | lam0.1_mu0.01 | slow | 0.5 s | 3.8 s (3.3 s kernel) | 0.342× (3× kernel) |" \
        in md
    assert "CPU seconds" in md and "setup" in md


def test_the_speedup_in_passes_beside_cpu_time(tmp_path):
    """Issue 19: passes over the data (``epoch``), which no machine changes, beside CPU
    time: slow does 3 passes per time unit, fast 1, so slow's 4x in time is 12x in passes."""
    fast = _runs("fast", 2.0, sampling="none")
    slow = _runs("slow", 0.5, sampling="none")
    fast["epoch"], slow["epoch"] = fast["time_s"], 3 * slow["time_s"]
    df = pd.concat([fast, slow])
    row = speedup_table(df, "fast", [1e-4], ("sampling",)).set_index("solver").loc["slow"]
    assert row["speedup_0.0001"] == pytest.approx(4.0)
    assert row["passes_speedup_0.0001"] == pytest.approx(12.0)
    path = tmp_path / "agg.parquet"
    df.to_parquet(path)
    write_speedup_table([path], "fast", [1e-4], tmp_path / "s.csv", tmp_path / "s.md")
    assert "4× (4× kernel, 12× passes)" in (tmp_path / "s.md").read_text()
