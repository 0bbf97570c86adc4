"""Time to a target accuracy and speedup tables (pdsparse.repro.speedup)."""

import math

import numpy as np
import pandas as pd
import pytest

from pdsparse.errors import DataError
from pdsparse.repro.speedup import (
    IMPROVING_FACTOR,
    crossing,
    format_speedup,
    outcome,
    speedup_table,
    still_improving,
    time_to_target,
    verdict,
    with_setup,
    write_speedup_table,
)


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
    # seed i against seed i of the base: the median ratio and its min-max over the seeds
    assert "| p1 | lam0.1_mu0.01 | slow | 0.5 s | 3.8 s (3.3 s kernel) | 0.342× (0.318–0.366) " \
        "(3× kernel) |" in md
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


# ---- issue 28: not reached is not faster; times interpolated; verdicts from the spread ----


def _diverging_race():
    """The base reaches 1e-6 at 10 s (a decade every 10/6 s); the rival diverges at 2 s and
    never goes below 1e-2."""
    rows = []
    for k in range(7):
        rows.append({"solver": "base", "time_s": 10 * k / 6, "rel_subopt": 10.0 ** -k,
                     "status": "converged" if k == 6 else ""})
    for k, value in enumerate((1.0, 0.1, 0.02, 0.05, 3.0)):
        rows.append({"solver": "rival", "time_s": 0.5 * k, "rel_subopt": value,
                     "status": "diverged" if k == 4 else ""})
    return pd.DataFrame(rows).assign(problem="p1", dataset="toy", l1=0.1, l2=0.01,
                                     experiment="e", seed=0)


def test_a_diverged_rival_is_not_reached_never_a_speedup_bound(tmp_path):
    """Before issue 28 the table said "≥ 0.2×" (2 s of run over the base's 10 s)."""
    df = _diverging_race()
    row = speedup_table(df, "base", [1e-6], ()).set_index("solver").loc["rival"]
    assert row["bound_1e-06"] == "not reached" and row["why_1e-06"] == "diverged"
    assert math.isinf(row["speedup_1e-06"])
    path = tmp_path / "agg.parquet"
    df.to_parquet(path)
    write_speedup_table([path], "base", [1e-6], tmp_path / "s.csv", tmp_path / "s.md")
    md = (tmp_path / "s.md").read_text()
    assert "| rival | 0 s | not reached: diverged | not reached: diverged |" in md
    assert "0.2×" not in md


def _flat(status, values, times=None):
    times = range(len(values)) if times is None else times
    return pd.DataFrame({"time_s": [float(t) for t in times], "rel_subopt": values,
                         "status": [""] * (len(values) - 1) + [status]})


def test_only_a_budget_cut_run_still_improving_is_a_lower_bound():
    improving = _flat("max_time", [1.0, 0.5, 0.3, 0.2, 0.1])
    # the best fell from 0.3 at half its length (2 s) to 0.1 at its end (4 s): improving
    assert outcome(improving, 1e-6, "time_s") == (4.0, "budget")
    # 0.11 -> 0.1 over the second half: 1.1x < IMPROVING_FACTOR, stalled: never
    stalled = _flat("max_time", [1.0, 0.5, 0.11, 0.105, 0.1])
    assert IMPROVING_FACTOR > 1.1 and outcome(stalled, 1e-6, "time_s") == (math.inf,
                                                                            "stalled")
    assert outcome(_flat("converged", [1.0, 0.1, 0.01]), 1e-6, "time_s") == \
        (math.inf, "tolerance")
    assert outcome(_flat("max_epochs", [1.0, 0.1, math.nan]), 1e-6, "time_s")[1] == \
        "diverged"
    assert outcome(_flat("diverged", [1.0, 1e-3, 1e-4]), 1e-6, "time_s")[1] == "diverged"
    # a converged run that got there is reached, whatever its status
    assert outcome(_flat("converged", [1.0, 1e-3, 1e-7]), 1e-6, "time_s")[1] == "reached"
    assert still_improving(np.array([0.0, 1, 2]), np.array([1.0, 0.5, 0.25]))
    assert not still_improving(np.array([0.0, 1, 2]), np.array([1.0, 1.0, 1.0]))


def test_the_time_to_target_is_interpolated_between_the_bracketing_rows():
    """log10(y) = -t exactly: 1e-3 is crossed at t = 3, whatever the rows around it."""
    x = np.array([0.0, 1.0, 2.5, 4.0, 6.0])
    y = 10.0 ** -x
    assert crossing(x, y, 1e-3) == pytest.approx(3.0)
    assert crossing(x, y, 10 ** -4.5) == pytest.approx(4.5)
    assert crossing(x, y, 1e-4) == pytest.approx(4.0)  # on a row: that row
    assert crossing(x, y, 2.0) == 0.0  # the first row is already there
    assert math.isnan(crossing(x, y, 1e-9))
    # a row at 0 (P = P* in floating point) after a positive one: that row, no log of 0
    assert crossing(np.array([0.0, 1.0]), np.array([1e-2, 0.0]), 1e-6) == 1.0
    # time_to_target and the speedup table read the same crossing (the first row at or
    # below 1e-3 would say 4 s: 1.33x late)
    df = pd.DataFrame({"problem": "p", "config": "c", "seed": 0, "time_s": x,
                       "rel_subopt": y})
    assert time_to_target(df, 1e-3)["time"].iloc[0] == pytest.approx(3.0)


def test_the_speedup_is_the_median_of_paired_seeds_with_its_spread():
    """The base takes 1, 2, 3 s on seeds 0, 1, 2; the rival 2, 2, 9 s: ratios 2, 1, 3."""
    rows = []
    for solver, times in (("base", (1.0, 2.0, 3.0)), ("rival", (2.0, 2.0, 9.0))):
        for seed, t in enumerate(times):
            rows += [{"solver": solver, "seed": seed, "time_s": 0.0, "rel_subopt": 1.0},
                     {"solver": solver, "seed": seed, "time_s": t, "rel_subopt": 1e-7}]
    df = pd.DataFrame(rows).assign(problem="p", dataset="d", l1=0.0, l2=0.0,
                                   status="converged")
    row = speedup_table(df, "base", [1e-6], ()).set_index("solver").loc["rival"]
    # log-linear between (0, 1) and (t, 1e-7): 1e-6 at 6/7 t
    assert row["speedup_1e-06"] == pytest.approx(2.0)
    assert (row["speedup_lo_1e-06"], row["speedup_hi_1e-06"]) == pytest.approx((1.0, 3.0))
    assert format_speedup(2.0, "", "", 1.0, 3.0) == "2× (1–3)"
    assert format_speedup(3.1, ">=") == "≥ 3.1× (budget)"


def test_a_claim_is_yes_or_no_only_when_the_whole_spread_clears_it():
    assert verdict(6.0, 9.0, "", 5.0) == "yes"
    assert verdict(1.0, 4.0, "", 5.0) == "no"
    # seeds straddle the threshold: neither
    assert verdict(4.0, 6.0, "", 5.0) == "inconclusive"
    # a lower bound below the threshold says nothing
    assert verdict(2.0, 3.0, ">=", 5.0) == "inconclusive"
    assert verdict(math.inf, math.inf, "not reached", 5.0) == "yes"


def test_every_seed_pays_the_setup_of_a_fresh_problem():
    """One run job builds the problem once for its seeds: seed 0 pays the copies and norms,
    seeds 1 and 2 find them cached. Each is charged the largest (what a user pays)."""
    df = _runs("fast", 2.0, sampling="none")
    df["setup_s"] = df["seed"].map({0: 1.0, 1: 0.01, 2: 0.02})
    out = with_setup(df)
    assert (out["setup_s"] == 1.0).all()
    assert out["cpu_s"].tolist() == pytest.approx((df["time_s"] + 1.0).tolist())
    slow = _runs("slow", 0.5, sampling="none").assign(setup_s=0.5)
    assert set(with_setup(pd.concat([df, slow])).groupby("solver")["setup_s"].unique()
               .map(tuple)) == {(1.0,), (0.5,)}
