"""Time to a target accuracy, and the speedup of one solver over the others, from aggregates.

The papers state their speed claims as ratios of times to an accuracy: DGPD's "up to 30x"
(relative objective (P - P*)/P*), PDBFW's "about 10x". :func:`time_to_target` reads them off
the traces (the kernel time of the first evaluation at or below the target; the median over
seeds), :func:`speedup_table` puts every configuration beside a base solver.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from pdsparse.errors import DataError
from pdsparse.io import read_parquet
from pdsparse.output import Builder, pairs, positive_float, require_file, write_table

__all__ = ["config_label", "read_aggregates", "speedup_table", "time_to_target",
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
    per row (0 there)."""
    df = df.copy()
    if "setup_s" not in df.columns:
        df["setup_s"] = 0.0
    df["cpu_s"] = df["time_s"] + df["setup_s"]
    return df


def time_to_target(df: pd.DataFrame, target: float, y: str = "rel_subopt",
                   x: str = "time_s", by: Sequence[str] = ("problem", "config")) -> pd.DataFrame:
    """Per group of ``by``: the median over seeds of the first ``x`` at which ``y <= target``
    (NaN when a seed never gets there), a lower bound on that median (``x_max``: the median
    over seeds of the hit, or of the longest ``x`` of a seed that stopped short), and how
    many seeds got there."""
    need = {*by, "seed", x, y}
    missing = sorted(need - set(df.columns))
    if missing:
        raise DataError(f"time_to_target: the aggregate lacks column(s) {missing}")
    rows = []
    for key, group in df.groupby(list(by), sort=False):
        hits, at_least = [], []
        for _, run in group.groupby("seed", sort=True):
            run = run.sort_values(x)
            reached = run[run[y] <= target]
            hits.append(float(reached[x].iloc[0]) if len(reached) else math.nan)
            at_least.append(hits[-1] if len(reached) else float(run[x].max()))
        ok = [h for h in hits if not math.isnan(h)]
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key, strict=True)),
                     "time": float(np.median(hits)) if len(ok) == len(hits) else math.nan,
                     # each seed's time is at least its hit or its longest x: the median of
                     # these bounds the median time from below (the median is monotone)
                     "x_max": float(np.median(at_least)), "seeds_reached": len(ok),
                     "seeds": len(hits)})
    return pd.DataFrame(rows)


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
    ``setup_s`` column, from before it was recorded, has kernel time only). When the
    configuration never reached a target its time is unknown but at least its longest run
    (``x_max``): the speedup is then a lower bound, flagged in ``bound_<t>`` as ``">="``;
    when the base did not reach it, no speedup is given.
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
    for t in targets:
        for name, x in measures:
            prefix = _prefix(name)
            tt = time_to_target(df, t, y=y, x=x, by=("problem", "config"))
            tt = tt.rename(columns={"time": f"{name}_{t:g}", "x_max": f"{prefix}xmax_{t:g}",
                                    "seeds_reached": f"reached_{t:g}"})
            cols = [f"{name}_{t:g}", f"{prefix}xmax_{t:g}"]
            cols += [] if prefix else [f"reached_{t:g}"]
            out = out.merge(tt[["problem", "config", *cols]], on=["problem", "config"],
                            how="left")
    bases = out[out["solver"] == base]
    if bases.empty:
        raise DataError(f"speedup: no run of the base solver {base!r} in the aggregate")
    result = []
    for _, group in out.groupby("problem", sort=False):
        base_rows = group[group["solver"] == base]
        for _, row in group.iterrows():
            rec = row.to_dict()
            for t in targets:
                for name, _ in measures:
                    prefix = _prefix(name)
                    time, xmax = f"{name}_{t:g}", f"{prefix}xmax_{t:g}"
                    rec[f"{prefix}speedup_{t:g}"], rec[f"{prefix}bound_{t:g}"] = _speedup(
                        row[time], row[xmax], base_rows[time])
            result.append(rec)
    table = pd.DataFrame(result)
    return table.sort_values([*by, "solver", "config"], kind="stable").reset_index(drop=True)


def _speedup(t_row: float, x_max: float, t_bases: pd.Series) -> tuple[float, str]:
    """(speedup of the base over a row, ">=" when it is a lower bound, else "")."""
    if t_bases.empty:
        return math.nan, ""
    t_base = float(t_bases.min())
    if math.isnan(t_base) or t_base <= 0:
        return math.nan, ""
    if math.isnan(t_row):
        return x_max / t_base, ">="
    return t_row / t_base, ""


def _fmt_time(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3g} s"


def _fmt_speedup(value: float, bound: str) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{'≥ ' if bound else ''}{value:.3g}×"


def _passes_cell(row: Mapping, t: float) -> str:
    if f"passes_speedup_{t:g}" not in row:
        return ""
    return f", {_fmt_speedup(row[f'passes_speedup_{t:g}'], row[f'passes_bound_{t:g}'])} passes"


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
        cells += [f"{_fmt_time(r[f'time_{t:g}'])} ({_fmt_time(r[f'kernel_{t:g}'])} kernel)"
                  if not math.isnan(r[f"time_{t:g}"]) else "—" for t in targets]
        cells += ["(base)" if r["solver"] == base else
                  f"{_fmt_speedup(r[f'speedup_{t:g}'], r[f'bound_{t:g}'])} "
                  f"({_fmt_speedup(r[f'kernel_speedup_{t:g}'], r[f'kernel_bound_{t:g}'])} "
                  "kernel" + _passes_cell(r, t) + ")" for t in targets]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    text += ("\nTimes are CPU seconds (the process's CPU time: what another machine repeats, "
             "whatever the load), medians over seeds; the time to a target counts the run's "
             "setup (norms, spectral norms, copies: what a user pays) and the speedup is "
             "judged on it; in brackets the kernel's time and speedup alone, and the "
             "speedup in passes over the data (entries of A read / nnz(A), every scan "
             "counted).\n")
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
