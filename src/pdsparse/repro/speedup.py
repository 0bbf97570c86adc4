"""Time to a target accuracy, and the speedup of one solver over the others, from aggregates.

The papers state their speed claims as ratios of times to an accuracy: DGPD's "up to 30x"
(relative objective (P - P*)/P*), PDBFW's "about 10x". This module is the one home of how a
run's time to a target is read off its trace and what a run that never got there counts as:

* :func:`crossing` interpolates the moment a trace crosses the target between the two rows
  that bracket it (the traces are sampled about 6 rows per decade, so the first row at or
  below the target overestimates the time by up to 10^(1/6) = 1.47x);
* :func:`outcome` says how a run ended at a target: ``reached`` (at the interpolated
  crossing), ``budget`` (cut by its CPU or epoch budget while :func:`still_improving`: its
  length is a lower bound), or not reached at all (``diverged``, ``stalled``, stopped at its
  own ``tolerance``): infinitely slow, ranked after every run that reached the target;
* :func:`time_to_target` gives the median over seeds with its spread (min-max),
  :func:`speedup_table` puts every configuration beside a base solver, the ratio per seed
  (seed i of a configuration against seed i of the base) and its median and spread.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from pdsparse.errors import DataError
from pdsparse.io import read_parquet
from pdsparse.repro.output import Builder, pairs, positive_float, require_file, write_table

__all__ = ["IMPROVING_FACTOR", "config_label", "crossing", "outcome", "read_aggregates",
           "seed_times", "speedup_table", "still_improving", "time_to_target", "verdict",
           "with_setup", "write_speedup_table"]

PathLike = str | os.PathLike
NONE = "none"


def config_label(row: Mapping, option_names: Sequence[str]) -> str:
    """``solver`` plus its options that are set (``dual_rcd (uniform, newton)``)."""
    opts = [str(row[k]) for k in option_names
            if k in row and str(row[k]) not in ("", NONE, "nan")]
    return f"{row['solver']} ({', '.join(opts)})" if opts else str(row["solver"])


def read_aggregates(paths: Sequence[PathLike], who: str) -> pd.DataFrame:
    """The aggregates ``paths`` as one frame (``who`` names the caller in the error)."""
    frames = [read_parquet(p, "aggregate") for p in paths]
    if not frames:
        raise DataError(f"{who}: no aggregate given")
    return pd.concat(frames, ignore_index=True)


def with_setup(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with ``cpu_s`` = the kernel's CPU time plus the run's setup (what a user pays;
    an aggregate from before ``setup_s`` was recorded has kernel time only), and ``setup_s``
    per row (0 there).

    Each seed is charged the largest setup of its configuration's seeds: one run job builds the
    problem once for all its seeds (:func:`pdsparse.repro.run.execute`), so the first seed pays
    the CSC copy and the norms a user pays and the later ones find them cached, at a small
    fraction of that
    (measured: benchmarks/README.md, "Measurements cited by the code"); the kernels themselves are
    separate runs, seed by seed."""
    from pdsparse.solvers import option_names

    df = df.copy()
    if "setup_s" not in df.columns:
        df["setup_s"] = 0.0
    keys = [c for c in ("problem", "experiment", "solver", *option_names()) if c in df.columns]
    if keys:
        df["setup_s"] = df.groupby(keys, dropna=False)["setup_s"].transform("max")
    df["cpu_s"] = df["time_s"] + df["setup_s"]
    return df


# ------------------------------------------------------------- one run at one target


def crossing(x: np.ndarray, y: np.ndarray, target: float) -> float:
    """The ``x`` at which a trace (rows sorted by ``x``) first reaches ``y <= target``,
    interpolated between the two rows that bracket it with log(y) linear in x (a linearly
    converging run is exactly that between two evaluations; a sublinear one is convex in that
    plane, so the estimate errs early by less than the sampling's 1.47x errs late). The first
    row's x when the first row is already there or the row before is not positive and finite
    (no log); NaN when the trace never gets there."""
    hit = np.flatnonzero(y <= target)
    if not len(hit):
        return math.nan
    i = int(hit[0])
    x1, y1 = float(x[i]), float(y[i])
    if i == 0 or y1 >= target or y1 <= 0:
        return x1
    x0, y0 = float(x[i - 1]), float(y[i - 1])
    if not (math.isfinite(y0) and y0 > target):
        return x1
    frac = math.log(y0 / target) / math.log(y0 / y1)
    return x0 + frac * (x1 - x0)


IMPROVING_FACTOR = 1.2
"""A run is still improving at its end when its best relative suboptimality fell by at
least this factor over the second half of its run (kernel CPU time from half its length to
its end). Why 1.2: the slowest rate a method here converges at is Frank-Wolfe's O(1/t),
which halves the suboptimality from t/2 to t (a factor 2), and any O(1/t^p) with p >= 0.27
clears 1.2; a stochastic method at its variance floor, a run oscillating around a level or
a step too large to make progress gains less than 20 % in a doubling of its time, and its
length says nothing about when it would reach the target."""

BUDGET_STOPS = ("max_time", "max_epochs", "")
"""Statuses of a run cut by its budget (CPU seconds or passes); "": a hand-made trace
without a status, read as cut by its budget."""

NOT_REACHED = {"diverged": "diverged", "stalled": "stalled: no longer improving",
               "tolerance": "stopped at its tolerance short of the target"}
"""The reasons a run did not reach a target at all (``outcome``'s kinds other than
``reached`` and ``budget``), as the tables say them."""


def still_improving(t: np.ndarray, y: np.ndarray) -> bool:
    """Whether a run (rows sorted by time ``t``) was still improving when it stopped: its
    best ``y`` at its end is below its best up to half its length by at least
    :data:`IMPROVING_FACTOR` (in log scale: log10 of the best fell by log10(1.2) = 0.08 or
    more over the second half of the run)."""
    if len(t) < 2:
        return False
    best = np.minimum.accumulate(np.where(np.isfinite(y), y, np.inf))
    half = np.flatnonzero(t <= t[-1] / 2)
    before = best[int(half[-1])] if len(half) else best[0]
    end = best[-1]
    if not math.isfinite(before):
        return math.isfinite(end)
    return end <= 0 < before or (end > 0 and before / end >= IMPROVING_FACTOR)


def outcome(run: pd.DataFrame, target: float, x: str, y: str = "rel_subopt"
            ) -> tuple[float, str]:
    """(time, kind) of one run at ``target`` in the measure ``x``: ``reached`` at the
    interpolated :func:`crossing`; ``budget``: never there, cut by its budget
    (:data:`BUDGET_STOPS`) while :func:`still_improving`, the time is at least its length
    (a lower bound); else not reached, ever (time inf): ``diverged`` (its status, or a
    non-finite value at its end), ``stalled`` (cut by its budget, no longer improving) or
    ``tolerance`` (it stopped at its own tolerance, ``converged``, short of the target).
    Whether it was improving is judged in kernel CPU time (``time_s``: what the budget
    counts) when the trace has it, else in ``x``."""
    run = run.sort_values(x, kind="stable")
    xs, ys = run[x].to_numpy(float), run[y].to_numpy(float)
    hit = crossing(xs, ys, target)
    if not math.isnan(hit):
        return hit, "reached"
    status = str(run["status"].iloc[-1]) if "status" in run.columns else ""
    status = "" if status == "nan" else status
    if status == "diverged" or not math.isfinite(ys[-1]):
        return math.inf, "diverged"
    if status not in BUDGET_STOPS:
        return math.inf, "tolerance"
    clock = run["time_s"].to_numpy(float) if "time_s" in run.columns else xs
    if still_improving(clock, ys):
        return float(xs[-1]), "budget"
    return math.inf, "stalled"


def seed_times(df: pd.DataFrame, target: float, y: str = "rel_subopt", x: str = "time_s",
               by: Sequence[str] = ("problem", "config")) -> pd.DataFrame:
    """One row per group of ``by`` and seed: ``value`` and ``kind`` of :func:`outcome`."""
    need = {*by, "seed", x, y}
    missing = sorted(need - set(df.columns))
    if missing:
        raise DataError(f"time_to_target: the aggregate lacks column(s) {missing}")
    rows = []
    for key, run in df.groupby([*by, "seed"], sort=False):
        value, kind = outcome(run, target, x, y)
        rows.append({**dict(zip([*by, "seed"], key, strict=True)), "value": value,
                     "kind": kind})
    return pd.DataFrame(rows, columns=[*by, "seed", "value", "kind"])


def _why(kinds: Iterable[str]) -> str:
    """The most common reason among seeds that did not reach a target (ties: the order of
    :data:`NOT_REACHED`)."""
    kinds = [k for k in kinds if k in NOT_REACHED]
    return max(NOT_REACHED, key=kinds.count) if kinds else ""


def time_to_target(df: pd.DataFrame, target: float, y: str = "rel_subopt",
                   x: str = "time_s", by: Sequence[str] = ("problem", "config")) -> pd.DataFrame:
    """Per group of ``by``: the median over seeds of the interpolated ``x`` at which
    ``y <= target`` (``time``; NaN unless every seed got there), a lower bound on that
    median (``x_max``: the median over seeds of :func:`outcome`'s times, a budget-cut seed
    counting its length and a seed that never gets there inf), the spread of those times
    (``lo``, ``hi``: min and max over seeds), how many seeds got there, and ``outcome``:
    ``reached`` (every seed), ``budget`` (a lower bound) or the reason the median seed
    never gets there (a kind of :data:`NOT_REACHED`)."""
    seeds = seed_times(df, target, y, x, by)
    rows = []
    for key, group in seeds.groupby(list(by), sort=False):
        values, kinds = group["value"].to_numpy(float), list(group["kind"])
        ok = kinds.count("reached")
        median = float(np.median(values))
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key, strict=True)),
                     "time": median if ok == len(kinds) else math.nan,
                     # each seed's time is at least its value: the median of these bounds
                     # the median time from below (the median is monotone)
                     "x_max": median, "lo": float(values.min()), "hi": float(values.max()),
                     "seeds_reached": ok, "seeds": len(kinds),
                     "outcome": "reached" if ok == len(kinds) else
                     _why(kinds) if math.isinf(median) else "budget"})
    return pd.DataFrame(rows)


def ratio(rival: pd.DataFrame, base: pd.DataFrame) -> tuple[float, float, float, str]:
    """The base's speedup over a rival from their :func:`seed_times` rows (the base reached
    the target on every seed): (median, min, max, flag) of t_rival / t_base, seed i of the
    rival against seed i of the base (every pair when they share no seed). ``flag``: ""
    (measured), ``">="`` (a lower bound: a seed of the rival was cut by its budget) or
    ``"not reached"`` (the median is inf: the rival never gets there)."""
    base_t = dict(zip(base["seed"], base["value"], strict=True))
    common = [s for s in rival["seed"] if s in base_t]
    if common:
        r = rival[rival["seed"].isin(common)]
        ratios = r["value"].to_numpy(float) / np.array([base_t[s] for s in r["seed"]])
    else:
        r = rival
        ratios = np.divide.outer(r["value"].to_numpy(float),
                                 base["value"].to_numpy(float)).ravel()
    median = float(np.median(ratios))
    flag = "not reached" if math.isinf(median) else \
        ">=" if (r["kind"] == "budget").any() else ""
    return median, float(ratios.min()), float(ratios.max()), flag


def verdict(lo: float, hi: float, flag: str, threshold: float) -> str:
    """"yes" when the whole spread of a speedup (min ``lo``, max ``hi`` over seeds) clears
    ``threshold`` (its least seed is at or above it), "no" when the whole spread is below
    it and measured (a lower bound, ``flag`` ``">="``, below the threshold says nothing;
    an upper bound, ``"<="``, never says yes), else "inconclusive"."""
    if math.isnan(lo) or math.isnan(hi):
        return "inconclusive"
    if lo >= threshold and flag != "<=":
        return "yes"
    if hi < threshold and flag != ">=":
        return "no"
    return "inconclusive"


MEASURES = (("time", "cpu_s"), ("kernel", "time_s"), ("passes", "epoch"))
"""(name, trace column) of what a time to target is measured in, here and in the
sensitivity tables: CPU seconds with setup (``time_<t>``; the speedup ``speedup_<t>``: the
verdicts' measure), the kernel's CPU seconds alone (``kernel_<t>``, ``kernel_speedup_<t>``)
and passes over the data (``passes_<t>``: entries of A read / nnz(A), every scan counted),
which no machine changes."""


def _prefix(name: str) -> str:
    """The prefix of a measure's speedup, bound and longest-run columns ("" for time)."""
    return "" if name == "time" else f"{name}_"


def speedup_table(df: pd.DataFrame, base: str, targets: Iterable[float],
                  option_names: Sequence[str], by: Sequence[str] = ("dataset", "l1", "l2"),
                  y: str = "rel_subopt") -> pd.DataFrame:
    """Rows (problem, configuration): CPU time to each target and the base solver's speedup
    over it, ``t_config / t_base``; the same in kernel time and in passes (:data:`MEASURES`).

    The time a user pays counts the run's setup (``setup_s``: norms, spectral norms,
    copies) beside the kernel's CPU time (``time_s``): ``time_<t>`` and ``speedup_<t>`` are
    with setup, ``kernel_<t>`` and ``kernel_speedup_<t>`` without (an aggregate without a
    ``setup_s`` column, from before it was recorded, has kernel time only). Times are
    interpolated crossings (:func:`crossing`), medians over seeds. The speedup is the median
    over seeds of seed i's ratio (:func:`ratio`), ``speedup_lo_<t>`` and ``speedup_hi_<t>``
    its spread; ``bound_<t>`` says what it is: ``""`` measured, ``">="`` a lower bound (the
    configuration was cut by its budget while still improving, its length in
    ``xmax_<t>``), ``"not reached"`` (speedup inf: it diverged, stalled or stopped at its
    tolerance short of the target, the reason in ``why_<t>``). When the base did not reach a
    target on every seed, no speedup is given there.
    """
    df = with_setup(df)
    df["config"] = [config_label(r, option_names) for r in df.to_dict("records")]
    keys = [*by, "problem"]
    out = df[[*keys, "solver", "config"]].drop_duplicates().reset_index(drop=True)
    setups = df.groupby(["problem", "config", "seed"])["setup_s"].first()
    out = out.merge(setups.groupby(level=["problem", "config"]).median().rename("setup_s")
                    .reset_index(), on=["problem", "config"], how="left")
    # passes only where the aggregate records them (hand-made frames may not)
    measures = [(name, x) for name, x in MEASURES if x in df.columns]
    if not (out["solver"] == base).any():
        raise DataError(f"speedup: no run of the base solver {base!r} in the aggregate")
    columns: dict[str, list] = {}
    for t in targets:
        for name, x in measures:
            prefix = _prefix(name)
            seeds = seed_times(df, t, y=y, x=x, by=("problem", "config"))
            tt = time_to_target(df, t, y=y, x=x, by=("problem", "config"))
            tt = tt.rename(columns={"time": f"{name}_{t:g}", "x_max": f"{prefix}xmax_{t:g}",
                                    "seeds_reached": f"reached_{t:g}", "outcome": f"why_{t:g}"})
            cols = [f"{name}_{t:g}", f"{prefix}xmax_{t:g}"]
            cols += [] if prefix else [f"reached_{t:g}", f"why_{t:g}"]
            out = out.merge(tt[["problem", "config", *cols]], on=["problem", "config"],
                            how="left")
            for key in ("speedup", "speedup_lo", "speedup_hi", "bound"):
                columns[f"{prefix}{key}_{t:g}"] = [None] * len(out)
            for problem, group in out.groupby("problem", sort=False):
                bases = group[(group["solver"] == base) & group[f"{name}_{t:g}"].notna()]
                if bases.empty:
                    for i in group.index:
                        columns[f"{prefix}speedup_{t:g}"][i] = math.nan
                        columns[f"{prefix}speedup_lo_{t:g}"][i] = math.nan
                        columns[f"{prefix}speedup_hi_{t:g}"][i] = math.nan
                        columns[f"{prefix}bound_{t:g}"][i] = ""
                    continue
                fastest = bases.loc[bases[f"{name}_{t:g}"].idxmin(), "config"]
                mine = seeds[seeds["problem"] == problem]
                base_seeds = mine[mine["config"] == fastest]
                for i, config in zip(group.index, group["config"], strict=True):
                    med, lo, hi, flag = ratio(mine[mine["config"] == config], base_seeds)
                    columns[f"{prefix}speedup_{t:g}"][i] = med
                    columns[f"{prefix}speedup_lo_{t:g}"][i] = lo
                    columns[f"{prefix}speedup_hi_{t:g}"][i] = hi
                    columns[f"{prefix}bound_{t:g}"][i] = flag
    for t in targets:  # "" where the configuration reached the target on every seed
        out[f"why_{t:g}"] = out[f"why_{t:g}"].where(out[f"why_{t:g}"] != "reached", "")
    table = out.assign(**columns)
    return table.sort_values([*by, "solver", "config"], kind="stable").reset_index(drop=True)


def format_speedup(value: float, bound: str, why: str = "", lo: float = math.nan,
                   hi: float = math.nan) -> str:
    """A speedup as the tables and races say it: ``2.1× (1.8–2.4)`` (median over seeds,
    min–max in brackets when the seeds differ), ``≥ 3.1× (budget)`` (a lower bound: the
    rival was cut by its budget while still improving), ``not reached: diverged``; "—"
    without a value."""
    if bound == "not reached":
        return "not reached" + (f": {NOT_REACHED.get(why, why)}" if why else "")
    if value is None or math.isnan(value):
        return "—"
    spread = ""
    if not (math.isnan(lo) or math.isnan(hi)) and f"{lo:.3g}" != f"{hi:.3g}":
        spread = f" ({lo:.3g}–{hi:.3g})" if math.isfinite(hi) else f" ({lo:.3g}–∞)"
    return f"{'≥ ' if bound else ''}{value:.3g}×{spread}{' (budget)' if bound else ''}"


def _fmt_time(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3g} s"


def _cell(row: Mapping, prefix: str, t: float) -> str:
    """The speedup cell of one measure (``prefix``: "", "kernel_", "passes_")."""
    return format_speedup(row[f"{prefix}speedup_{t:g}"], row[f"{prefix}bound_{t:g}"],
                          row.get(f"why_{t:g}", ""), row[f"{prefix}speedup_lo_{t:g}"],
                          row[f"{prefix}speedup_hi_{t:g}"])


def _time_cell(row: Mapping, t: float) -> str:
    """Time to ``t`` with setup (kernel alone in brackets), ``≥`` the run's length when cut
    by its budget, or why it never got there."""
    if not math.isnan(row[f"time_{t:g}"]):
        return f"{_fmt_time(row[f'time_{t:g}'])} ({_fmt_time(row[f'kernel_{t:g}'])} kernel)"
    why = row.get(f"why_{t:g}", "")
    if why == "budget":
        return f"≥ {_fmt_time(row[f'xmax_{t:g}'])} (budget)"
    return f"not reached: {NOT_REACHED[why]}" if why in NOT_REACHED else "—"


def _passes_cell(row: Mapping, t: float) -> str:
    if f"passes_speedup_{t:g}" not in row or row[f"passes_bound_{t:g}"] == "not reached":
        return ""
    return f", {_cell(row, 'passes_', t)} passes"


def write_speedup_table(aggregates: Sequence[PathLike], base: str, targets: Sequence[float],
                        out_csv: PathLike, out_md: PathLike, caption: str = "",
                        by: Sequence[str] = ("data", "experiment"),
                        claim: str = "", names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read aggregates, build :func:`speedup_table` and write it as CSV and Markdown.

    The column ``data`` names each problem's data set: ``names`` maps the head of a problem
    tag (``<dataset>+<recipe>``) to a display name (``digits-rb``), else the head itself.
    """
    from pdsparse.solvers import option_names

    df = read_aggregates(aggregates, "speedup")
    names = dict(names or {})
    heads = df["problem"].astype(str).str.split("__", n=1).str[0]
    df["data"] = [names.get(h, h) for h in heads]
    table = speedup_table(df, base, targets, option_names(), by=by)
    head = [*by, "method", "setup"] + [f"time to {t:g}" for t in targets] + \
        [f"{base} speedup at {t:g}" for t in targets]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        cells = [str(r[k]) for k in by] + [str(r["config"]), _fmt_time(r["setup_s"])]
        cells += [_time_cell(r, t) for t in targets]
        cells += ["(base)" if r["solver"] == base else _cell(r, "", t)
                  if r[f"bound_{t:g}"] == "not reached" else
                  f"{_cell(r, '', t)} ({_cell(r, 'kernel_', t)} kernel"
                  + _passes_cell(r, t) + ")" for t in targets]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    text += ("\nTimes are CPU seconds (the process's CPU time: what another machine repeats, "
             "whatever the load), medians over seeds; the time to a target is interpolated "
             "between the two trace rows that bracket it (log of the objective linear in "
             "time) and counts the run's setup (norms, spectral norms, copies: what a user "
             "pays); the speedup is judged on it: the median over seeds of seed i against "
             "seed i of the base, the min–max over seeds in brackets when they differ; "
             "then the kernel's time and speedup alone, and the speedup in passes over "
             "the data (entries of A read / nnz(A), every scan counted). \"≥ x× "
             "(budget)\": a lower bound, the method was cut by its CPU budget while still "
             "improving; \"not reached\": it diverged, stalled (improved less than "
             f"{IMPROVING_FACTOR:g}× over the second half of its run) or stopped at its "
             "tolerance short of the target: never, however long it ran.\n")
    if caption:
        text += "\n" + caption.strip() + "\n"
    if claim:
        text += "\nThe paper: " + claim.strip() + "\n"
    write_table(table, text, out_csv, out_md)
    return table


# ------------------------------------------------------------------ pdsparse output PAPER speedup


def _speedup_arguments(p) -> None:
    p.add_argument("--aggregate", nargs="+", required=True, help="aggregate .parquet files")
    p.add_argument("--base", required=True, help="the solver whose speedup is reported")
    p.add_argument("--targets", type=positive_float, nargs="+", default=[1e-3, 1e-6],
                   help="relative suboptimality targets (P - P*)/|P*|")
    p.add_argument("--claim", help="the paper's claim, quoted under the table")
    p.add_argument("--names", nargs="*", metavar="DATA=NAME",
                   help="display names of data sets: <dataset>+<recipe> (a problem tag's head)"
                   " = name")
    p.add_argument("--caption", help="caption text under the Markdown table")


def _speedup_build(args, outs) -> None:
    for path in args.aggregate:
        require_file(path, "aggregate")
    write_speedup_table(args.aggregate, args.base, args.targets, *outs,
                        caption=args.caption or "", claim=args.claim or "",
                        names=pairs(args.names, "--names"))


SPEEDUP_OUTPUT = Builder("table", "time to target accuracies and the speedup of a base solver",
                         _speedup_arguments, _speedup_build)
