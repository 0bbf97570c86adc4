"""The public protocol a paper's scorecard rows are written against.

A paper's ``pdsparse.repro.papers.<paper>.scorecard`` module gives ``rows(ctx: Context) ->
list[Row]`` and its own ``TOLERANCES`` (name -> the legend's sentence); it builds its rows
with what this module exports: :class:`Row` and its columns, the shared tolerances, number
formatting and grading, the results :class:`Context`, the not-run rows, the data-set
statuses, and the races behind the speed claims (:class:`Race`, :func:`run_races`,
:func:`sensitivity_row`). This module imports no paper; :mod:`pdsparse.repro.scorecard`
collects the rows of the papers in the config and renders them."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "CLAIM_FACTOR", "COLUMNS", "INCONCLUSIVE", "NOT_RUN", "SAME_DATA_RTOL", "TOLERANCES",
    "Context", "PathLike", "Race", "Row", "close", "count_text", "data_note", "data_statuses",
    "dataset_row", "display_names", "grade_of", "grade_verdicts", "missing_note",
    "not_run_row", "num", "pct", "run_races", "sensitivity_row", "source_kind",
    "verdict_counts", "with_best",
]

PathLike = str | os.PathLike

# ----------------------------------------------------------------------------- tolerances
# The tolerances every paper's rows share; a paper's own live in its scorecard module, with
# its TOLERANCES legend (``pdsparse.repro.papers.<paper>.scorecard``).
CLAIM_FACTOR = 2.0
"""A speedup claim ("around 10x", "up to 30x") is met when the measured speedup is at least
the claim divided by this factor (5x, 15x)."""
SAME_DATA_RTOL = 0.01
"""A real data set counts as the paper's when its samples and features are within 1 %."""

TOLERANCES = {
    "CLAIM_FACTOR": "a claimed speedup (≈10×, up to 30×) is met at half of it or more, "
                    "on every seed (inconclusive when the seeds straddle it)",
    "SAME_DATA_RTOL": "the paper's data: samples and features within 1 %",
}
"""The legend of the shared tolerances (the scorecard lists these, then each paper's)."""


@dataclass(frozen=True)
class Row:
    """One paper item. ``outputs``: the workflow's figures / tables of ``paper`` it belongs
    to (space-separated names, e.g. ``"figure1 speedup"``)."""

    paper: str
    outputs: str
    item: str
    reproduced: str
    paper_value: str
    our_value: str
    agreement: str
    reason: str = ""
    best_agreement: str = ""
    """The verdict with every method at the setting its sensitivity study found best
    (``<paper>.best``); "" where no such run exists. The row is graded by ``agreement``, the
    printed settings: a claim that holds only here is not counted as reproduced."""
    best_value: str = ""
    best_reason: str = ""


COLUMNS = tuple(f.name for f in fields(Row))


def with_best(rows: Sequence[Row], best_rows: Sequence[Row]) -> list[Row]:
    """``rows`` (at the printed settings) with the verdicts of the same items computed from
    the races at the best settings (:func:`run_races` with ``best``), matched by item."""
    from dataclasses import replace

    by_item = {r.item: r for r in best_rows if r.agreement != NOT_RUN}
    return [replace(r, best_agreement=b.agreement, best_value=b.our_value,
                    best_reason=b.reason) if (b := by_item.get(r.item)) else r for r in rows]


# ------------------------------------------------------------------------------ formatting


def num(x: float) -> str:
    """A count with thousands separators, other numbers to 3 significant digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:.3g}"


def pct(x: float) -> str:
    return "—" if x is None or math.isnan(x) else f"{100 * x:.3g} %"


def _x(value: float, bound: str = "") -> str:
    return "—" if value is None or math.isnan(value) else f"{'≥ ' if bound else ''}{value:.3g}×"


def count_text(verdicts: Sequence[bool]) -> str:
    return f"{sum(verdicts)} of {len(verdicts)}"


def grade_of(ok: Sequence[bool], half_is_partly: bool = False) -> str:
    """yes when all, partly when some (or at least half), no otherwise."""
    if ok and all(ok):
        return "yes"
    if any(ok) and (not half_is_partly or 2 * sum(ok) >= len(ok)):
        return "partly"
    return "no"


def close(a: float, b: float, rtol: float) -> bool:
    return abs(float(a) - float(b)) <= rtol * abs(float(b))


# --------------------------------------------------------------------------------- context


@dataclass
class Context:
    """What every paper's rows need: the config, where the results are, the registry and the
    items dropped for lack of data (item -> data set)."""

    config: Mapping
    results: Path
    registry: Mapping[str, Any]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    benchmarks: Path | None = None

    def path(self, *parts: str) -> Path:
        return self.results.joinpath(*parts)

    def read_csv(self, *parts: str):
        import pandas as pd

        p = self.path(*parts)
        return pd.read_csv(p) if p.is_file() else None

    def read_parquet(self, *parts: str):
        from pdsparse.io import read_parquet

        p = self.path(*parts)
        return read_parquet(p, "aggregate") if p.is_file() else None

    def unavailable(self, name: str) -> str:
        """``not run: ...`` for a real data set that could not be obtained offline."""
        spec = self.registry.get(name)
        raw = self.config.get("data", {}).get("raw_dir", "data/raw")
        if spec is None:
            return f"not run: data set {name} is not available"
        return (f"not run: {name} is not available offline ({spec.filename} is neither in "
                f"{raw}/ nor in the mirror); to get it: put {spec.filename} in the mirror "
                f"(PDSPARSE_DATA_MIRROR) or {raw}/, or set data.download: true ({spec.url})")

    def skipped_data(self, item_prefix: str) -> dict[str, str]:
        """Data set -> ``not run`` text of the skipped items whose name starts so."""
        return {name: self.unavailable(name) for item, name in self.skipped
                if item.startswith(item_prefix)}


def missing_note(path: str) -> str:
    return f"not run: {path} is missing (run `snakemake --cores 2` first)"


NOT_RUN = "—"
INCONCLUSIVE = "inconclusive"
"""A speed verdict whose repeated runs (seeds) straddle its threshold: neither yes nor no."""


def not_run_row(paper: str, outputs: str, item: str, why: str, paper_value: str = "") -> Row:
    return Row(paper, outputs, item, why, paper_value or "—", "—", NOT_RUN)


def source_kind(entry: Mapping) -> str:
    source = entry.get("source", {})
    if "generator" in source:
        gen = source["generator"]
        return f"generated ({gen.get('kind', gen.get('name'))})"
    return f"real {source.get('registry')}"


def _data_status(entry: Mapping, ours: tuple[float, float], paper: tuple[float, float],
                 what: tuple[str, str], paper_row: str) -> str:
    """``yes`` when a real data set has the paper's samples and features (within
    :data:`SAME_DATA_RTOL`), else ``stand-in data: ...`` naming the difference."""
    kind = source_kind(entry)
    same = all(close(o, p, SAME_DATA_RTOL) for o, p in zip(ours, paper, strict=True))
    if kind.startswith("real") and same:
        return "yes"
    sizes = f"{num(ours[0])} {what[0]} × {num(ours[1])} {what[1]}"
    printed = f"{num(paper[0])} × {num(paper[1])}"
    return f"stand-in data: {kind}, {sizes} for {paper_row}'s {printed}"


def data_statuses(cfg: Mapping, table, sizes: tuple[str, str], values: Mapping[str, tuple],
               columns: Sequence[str]) -> dict[str, str]:
    """Data set -> reproduced column, from a paper's Table 2 as we made it (our sizes beside
    the printed row ``values[paper]`` with ``columns``)."""
    out = {}
    for name, entry in cfg["datasets"].items():
        paper_row = entry.get("paper")
        printed = dict(zip(columns, values.get(paper_row, ()), strict=False))
        mine = None if table is None else table[table["dataset"] == name]
        if mine is None or mine.empty or not printed:
            out[name] = f"stand-in data: {source_kind(entry)}" + (
                f" for {paper_row}" if paper_row else "")
            continue
        r = mine.iloc[0]
        out[name] = _data_status(entry, tuple(r[c] for c in sizes),
                                 tuple(printed[c] for c in sizes), sizes, paper_row)
    return out


# ------------------------------------------------------------------------------ speedups


@dataclass
class Race:
    """One problem of a speed claim: the base solver against every other configuration.

    ``target``: the tightest relative objective (P - P*)/P* of the config's targets the base
    reached on every seed (None: none); ``margins``: config -> (the base's speedup over it
    at ``target`` in CPU time with the runs' setup, which the verdict uses: the median over
    seeds of seed i against seed i of the base; its flag: ``""`` measured, ``">="`` a lower
    bound (cut by its budget while still improving), ``"not reached"`` (inf: it never gets
    there), :func:`pdsparse.repro.speedup.speedup_table`); ``spread``: config -> (min, max) of
    that ratio over seeds; ``kernel``: the same in kernel CPU time alone; ``levels``:
    config -> the lowest (P - P*)/P* within ``budget``, the kernel CPU time every
    configuration ran."""

    data: str
    experiment: str
    base: str
    target: float | None
    margins: dict[str, tuple[float, str]]
    levels: dict[str, float]
    base_config: str
    budget: float
    kernel: dict[str, tuple[float, str]] = field(default_factory=dict)
    passes: dict[str, tuple[float, str]] = field(default_factory=dict)
    """config -> the speedup in passes over the data (as ``kernel``)."""
    spread: dict[str, tuple[float, float]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    """config -> why it did not reach ``target`` (``budget``, ``diverged``, ``stalled``,
    ``tolerance``; :func:`pdsparse.repro.speedup.outcome`), "" when it did."""
    today: frozenset[str] = frozenset()
    """The configurations of today's best methods (``<paper>.today``): raced and said
    beside, never one of the paper's baselines (:meth:`against_today`)."""

    def margin_text(self, config: str) -> str:
        """The base's speedup over ``config`` as the tables say it (median, min-max,
        "(budget)", "not reached: ...": :func:`pdsparse.repro.speedup.format_speedup`)."""
        from pdsparse.repro.speedup import format_speedup

        value, flag = self.margins[config]
        lo, hi = self.spread.get(config, (math.nan, math.nan))
        return format_speedup(value, flag, self.why.get(config, ""), lo, hi)

    def _kernel(self, config: str) -> str:
        if config not in self.kernel or self.margins[config][1] == "not reached":
            return ""
        passes = f"; passes {_x(*self.passes[config])}" if config in self.passes else ""
        return f" (kernel alone {_x(*self.kernel[config])}{passes})"

    def rivals(self, today: bool = False) -> list[str]:
        """The paper's baselines (or, with ``today``, today's best methods) raced."""
        return [c for c in self.margins if (c in self.today) == today]

    def closest(self, today: bool = False) -> tuple[str, float, str]:
        """The baseline nearest to the base (with ``today``: today's best method nearest):
        (config, speedup, flag); a rival that never reaches the target is infinitely far."""
        rivals = self.rivals(today) or list(self.margins)
        config = min(rivals, key=lambda c: self.margins[c][0])
        return config, *self.margins[config]

    def per_rival(self, threshold: float, today: bool = False) -> dict[str, str]:
        """Baseline (or, ``today``, today's best method) -> the verdict of "the base is
        ``threshold`` times faster than it" from the spread of its seed-paired ratios
        (:func:`pdsparse.repro.speedup.verdict`)."""
        from pdsparse.repro.speedup import verdict

        return {c: verdict(*self.spread.get(c, (self.margins[c][0],) * 2), self.margins[c][1],
                           threshold) for c in self.rivals(today)}

    def verdict(self, threshold: float, today: bool = False) -> str:
        """Whether the base is at least ``threshold`` times faster than every baseline (or
        today's best, ``today``): "yes" when every seed's ratio clears it against every
        one, "no" when every seed's falls short against one, else "inconclusive"."""
        found = list(self.per_rival(threshold, today).values())
        if not found:
            return INCONCLUSIVE
        return "no" if "no" in found else "yes" if set(found) == {"yes"} else INCONCLUSIVE

    def judge(self, threshold: float, today: bool = False) -> str:
        """:meth:`verdict`, or without a target (the base reached none): "yes" to be ahead
        (``threshold`` <= 1) when lowest at the end of the common budget, else "no"."""
        if self.target is not None:
            return self.verdict(threshold, today)
        others = [v for c, v in self.levels.items()
                  if c != self.base_config and (c in self.today) == today]
        lowest = bool(others) and self.levels[self.base_config] < min(others)
        return "yes" if threshold <= 1 and lowest else "no"

    def best_other(self) -> tuple[str, float]:
        others = {c: v for c, v in self.levels.items() if c != self.base_config}
        baselines = {c: v for c, v in others.items() if c not in self.today}
        others = baselines or others  # only today's best raced here: it, said as such
        config = min(others, key=others.get)
        return config, others[config]

    @property
    def ahead(self) -> bool:
        """The base is faster than every baseline to ``target`` on every seed (today's best
        methods aside); without a target, lowest at the end of the common budget."""
        if self.target is not None:
            return bool(self.rivals()) and self.verdict(1.0) == "yes" and \
                self.closest()[1] > 1
        return bool(self.levels) and self.levels[self.base_config] < self.best_other()[1]

    def text(self) -> str:
        if self.target is not None:
            parts = [f"{self.margin_text(c)} over {c}{' [today]' if c in self.today else ''}"
                     f"{self._kernel(c)}" for c, _ in
                     sorted(self.margins.items(), key=lambda kv: kv[1][0])]
            return (f"at (P − P*)/P* ≤ {self.target:g}, CPU time with setup: {self.base} "
                    + ", ".join(parts))
        parts = [f"{c}{' [today]' if c in self.today else ''} {v:.2g}"
                 for c, v in sorted(self.levels.items(), key=lambda kv: kv[1])]
        return (f"{self.base} reaches no target; lowest (P − P*)/P* within "
                f"{self.budget:.3g} s: " + ", ".join(parts))

    def short(self, today: bool = False) -> str:
        """One clause for a row over several problems (``today``: against today's best)."""
        if self.target is not None:
            config, value, _ = self.closest(today)
            if value > 1:
                return (f"{self.data}: {self.margin_text(config)} over {config}"
                        f"{self._kernel(config)} (to {self.target:g})")
            return (f"{self.data}: {_x(1 / value)} behind {config}{self._kernel(config)} "
                    f"(to {self.target:g}; {self.margin_text(config)})")
        config, level = self.best_other()
        return (f"{self.data}: {self.base} reaches no target, {self.base_config} at "
                f"{self.levels[self.base_config]:.2g} against {config} at {level:.2g}")

    def against_today(self) -> str:
        """"against today's best: …" (the clause said beside a verdict), "" when no method
        of today's best was raced here."""
        if not self.today:
            return ""
        if self.target is None:
            config = min(self.today, key=lambda c: self.levels.get(c, math.inf))
            return (f"against today's best: {self.base} at "
                    f"{self.levels[self.base_config]:.2g}, {config} at "
                    f"{self.levels.get(config, math.nan):.2g} at the end of the budget")
        return "against today's best: " + self.short(today=True).split(": ", 1)[1]


def grade_verdicts(found: Sequence[str]) -> str:
    """A row's grade over several verdicts (races or rivals; "partly" counts as "no"): yes
    (all yes), partly (some yes, the rest no), no (none yes, none inconclusive), else
    inconclusive (a race whose seeds straddle the threshold decides)."""
    found = ["no" if f == "partly" else f for f in found]
    if found and set(found) == {"yes"}:
        return "yes"
    if INCONCLUSIVE in found:
        return INCONCLUSIVE
    return "partly" if "yes" in found else "no"


def verdict_counts(found: Sequence[str]) -> str:
    """``2 of 3`` (yes of all), with the inconclusive ones named: ``2 of 3 (1 inconclusive)``."""
    undecided = found.count(INCONCLUSIVE)
    return f"{found.count('yes')} of {len(found)}" + (
        f" ({undecided} inconclusive: the seeds straddle it)" if undecided else "")


def _race_frame(ctx: Context, paper: str, experiment: str, best: bool):
    """The runs of one race: the aggregate ``results/<paper>/<experiment>.parquet`` or, with
    ``best``, the same race with each method of ``<paper>.best`` at that setting (the
    experiment ``<experiment>_best`` replaces that method's printed runs problem by problem;
    a method whose best setting is its printed one keeps its runs); either way with the runs
    of today's best methods (``<experiment>_today``, ``<paper>.today``) beside, marked in a
    column ``today``. None when missing."""
    import pandas as pd

    from pdsparse.repro.plan import BEST, TODAY

    printed = ctx.read_parquet(paper, f"{experiment}.parquet")
    if printed is None:
        return None
    frame = printed
    if best:
        rerun = ctx.read_parquet(paper, f"{experiment}{BEST}.parquet")
        if rerun is None:
            return None
        replaced = set(zip(rerun["problem"], rerun["solver"], strict=True))
        keep = [(p, m) not in replaced for p, m in zip(printed["problem"], printed["solver"],
                                                       strict=True)]
        frame = pd.concat([printed[keep], rerun.assign(experiment=printed["experiment"].iloc[0])
                           if "experiment" in printed.columns else rerun], ignore_index=True)
    frame = frame.assign(today=False)
    today = ctx.read_parquet(paper, f"{experiment}{TODAY}.parquet")
    if today is None:
        return frame
    if "experiment" in frame.columns:
        today = today.assign(experiment=frame["experiment"].iloc[0])
    return pd.concat([frame, today.assign(today=True)], ignore_index=True)


def run_races(ctx: Context, paper: str, experiments: Iterable[str], names: Mapping[str, str],
           base: str, targets: Sequence[float], best: bool = False) -> list[Race] | None:
    """A :class:`Race` per (data set, experiment) of the aggregates
    ``results/<paper>/<experiment>.parquet`` (times to target as in the speedup tables,
    :func:`pdsparse.repro.speedup.speedup_table`), or with ``best`` of the same races at the
    ``<paper>.best`` settings (:func:`_race_frame`); None when no aggregate exists."""
    import pandas as pd

    from pdsparse.repro.speedup import config_label, speedup_table
    from pdsparse.solvers import option_names

    frames = [f for f in (_race_frame(ctx, paper, e, best) for e in experiments)
              if f is not None]
    if not frames:
        return None
    df = pd.concat(frames, ignore_index=True)
    heads = df["problem"].astype(str).str.split("__", n=1).str[0]
    df["data"] = [names.get(h, h) for h in heads]
    df["config"] = [config_label(r, option_names()) for r in df.to_dict("records")]
    if "today" in df.columns:  # a method of today's best already raced as a baseline (at
        # its best setting) is that baseline: its today run is not raced twice
        raced = set(zip(df.loc[~df["today"], "problem"], df.loc[~df["today"], "config"],
                        strict=True))
        df = df[~(df["today"] & pd.Series([(p, c) in raced for p, c in zip(
            df["problem"], df["config"], strict=True)], index=df.index))]
    table = speedup_table(df, base, targets, option_names(), by=("data", "experiment"))
    races = []
    for (data, experiment), rows in table.groupby(["data", "experiment"], sort=False):
        runs = df[(df["data"] == data) & (df["experiment"] == experiment)]
        bases = rows[rows["solver"] == base]
        if bases.empty or (rows["solver"] != base).sum() == 0:
            continue  # no base, or nothing to race it against
        reached = [t for t in targets if bases[f"time_{t:g}"].notna().any()]
        target = min(reached) if reached else None
        margins, kernel, passes, spread, why = {}, {}, {}, {}, {}
        if target is not None:
            for _, r in rows[rows["solver"] != base].iterrows():
                config = str(r["config"])
                for out, prefix in ((margins, ""), (kernel, "kernel_"), (passes, "passes_")):
                    if f"{prefix}bound_{target:g}" not in r:
                        continue  # no passes in a hand-made aggregate
                    bound = r[f"{prefix}bound_{target:g}"]
                    out[config] = (float(r[f"{prefix}speedup_{target:g}"]),
                                   bound if isinstance(bound, str) else "")
                spread[config] = (float(r[f"speedup_lo_{target:g}"]),
                                  float(r[f"speedup_hi_{target:g}"]))
                why[config] = str(r[f"why_{target:g}"])
        budget = float(runs.groupby("config")["time_s"].max().min())
        within = runs[runs["time_s"] <= budget]
        levels = within.groupby(["config", "seed"])["rel_subopt"].min().groupby(
            level="config").median()
        today_configs = frozenset(str(c) for c in runs.loc[runs["today"], "config"]) \
            if "today" in runs.columns else frozenset()
        races.append(Race(data, experiment, base, target, margins,
                           {str(c): float(v) for c, v in levels.items()},
                           str(bases["config"].iloc[0]), budget, kernel, passes, spread,
                           why, today_configs))
    return races


def display_names(cfg: Mapping) -> dict[str, str]:
    """``<data set>+<recipe tag>`` (a problem tag's head) -> the config's display name."""
    from pdsparse.data.prepare import Recipe

    names = {}
    for name, entry in cfg["datasets"].items():
        source = entry["source"]
        raw = source.get("registry") or source["generator"]["name"]
        names[f"{raw}+{Recipe(**dict(entry.get('recipe') or {})).tag()}"] = name
    return names


def data_note(cfg: Mapping, names: Iterable[str], status: Mapping[str, str]) -> str:
    """The reproduced column of a row over several data sets: yes when all are the paper's,
    else the stand-ins named."""
    stand_ins = [n for n in dict.fromkeys(names) if not status.get(n, "").startswith("yes")]
    if not stand_ins:
        return "yes"
    return "stand-in data: " + ", ".join(
        f"{n} ({source_kind(cfg['datasets'].get(n, {}))} for "
        f"{cfg['datasets'].get(n, {}).get('paper', '—')})" for n in stand_ins)



def dataset_row(ctx: Context, item: tuple, entry: Mapping, name: str, table, csv: str,
                skipped: set) -> tuple[Any, Row | None]:
    """Data set ``name``'s row of a paper's Table 2 results, or (None, the not-run Row that
    says why: its data unavailable, or the table not made). ``item``: (paper, output, label,
    the paper's value)."""
    paper, out, label, paper_value = item
    if entry["source"].get("registry") in skipped:
        return None, not_run_row(paper, out, label, ctx.unavailable(entry["source"]["registry"]),
                              paper_value)
    mine = None if table is None else table[table["dataset"] == name]
    if mine is None or mine.empty:
        return None, not_run_row(paper, out, label, missing_note(csv), paper_value)
    return mine.iloc[0], None




# ------------------------------------------------------------------ the sensitivity study


def _sens_seeds(r: Mapping, prefix: str, t: float):
    """A configuration's seeds at ``t`` (seed, value, kind); from an older table without a
    seeds column: one pseudo-seed, the median or the lower bound."""
    import pandas as pd

    from pdsparse.repro.sensitivity import seeds_of

    seeds = seeds_of(r, prefix, t)
    if not seeds.empty:
        return seeds
    v = r.get(f"{prefix}_{t:g}")
    if v is not None and not (isinstance(v, float) and math.isnan(v)):
        return pd.DataFrame({"seed": [0], "value": [float(v)], "kind": ["reached"]})
    return pd.DataFrame({"seed": [0], "value": [float(r.get(f"{prefix}_min_{t:g}", math.nan))],
                         "kind": ["budget"]})


def _sens_rank(r: Mapping, prefix: str, t: float) -> tuple[int, float]:
    """Order of a baseline at ``t``: reached on every seed first, then cut by its budget,
    then never; by the median over seeds within each."""
    seeds = _sens_seeds(r, prefix, t)
    kinds = set(seeds["kind"])
    rank = 0 if kinds == {"reached"} else 2 if not kinds & {"reached", "budget"} else 1
    return rank, float(seeds["value"].median())


def _sens_ratio(rows: Sequence[Mapping], base: str, t: float, prefix: str,
                of: str = "") -> tuple[float, float, float, str, str]:
    """(median, min, max over paired seeds of the fastest baseline's time / the base's, its
    flag, that baseline) at t (:func:`pdsparse.repro.speedup.ratio`); ``of``: judge that method
    (an ablation of the base) instead of the base itself. The base and its variants (an
    ablation or a degenerate setting, :func:`pdsparse.repro.sensitivity.not_the_papers`: not the
    paper's algorithm) are no baselines. When the base did not reach t on every seed:
    the ratio is at most the baseline's time over the base's run (``"<="``) when the base
    was cut by its budget, 0 (``"base not reached"``) when it never gets there, NaN when
    neither got there."""
    from pdsparse.repro.sensitivity import not_the_papers
    from pdsparse.repro.speedup import ratio

    mine = [r for r in rows if r["method"] == (of or base)]
    others = [r for r in rows if r["method"] != base and not not_the_papers(r["method"])]
    if not mine or not others:
        return math.nan, math.nan, math.nan, "", ""
    best = min(others, key=lambda r: _sens_rank(r, prefix, t))
    rival = str(best["method"])
    b, o = _sens_seeds(mine[0], prefix, t), _sens_seeds(best, prefix, t)
    if (b["kind"] == "reached").all():
        return (*ratio(o, b), rival)
    if not (o["kind"] == "reached").all():
        return math.nan, math.nan, math.nan, "", rival
    if (b["kind"] == "budget").any() and math.isfinite(b["value"].median()):
        bound = float(o["value"].median() / b["value"].median())
        return bound, bound, bound, "<=", rival
    return 0.0, 0.0, 0.0, "base not reached", rival


def _claim_grade(lo: float, hi: float, flag: str, need: float) -> str:
    """A speed claim's grade from the spread of its ratio: "yes" / "no" only when the whole
    spread clears ``need`` (:func:`pdsparse.repro.speedup.verdict`), "partly" when it is short of
    the claim but ahead on every seed, else "inconclusive"."""
    from pdsparse.repro.speedup import verdict

    grade = verdict(lo, hi, flag, need)
    if grade == "no" and verdict(lo, hi, flag, 1.0) == "yes" and lo > 1:
        return "partly"
    return grade


def _ratio_text(ratio: float, lo: float, hi: float, flag: str) -> str:
    from pdsparse.repro.speedup import format_speedup

    if flag == "<=":
        return f"{_x(ratio)} at most (the base cut by its budget)"
    if flag == "base not reached":
        return "0× (the base never reaches it)"
    if flag == "not reached":  # the rival never gets there: infinitely slower
        return "∞× (the rival never reaches it)"
    return format_speedup(ratio, flag, "", lo, hi)


def sensitivity_row(ctx: Context, paper: str, cfg: Mapping, base: str, claim: str,
                    claimed: float, name: str = "sensitivity", where_key: str = "") -> Row:
    """The paper's speed claim (``base`` ``claimed`` x faster than every baseline) judged
    from its sensitivity study, at the printed settings and at each method's best, in CPU
    time with setup and in passes over the data, with a one-line diagnosis and the file with
    the evidence. A claim that holds only at a setting the paper does not print is graded by
    the printed one and said to hold elsewhere, never as agreement. ``name``: the study's
    table (``sensitivity``; PDBFW's trace ball: ``sensitivity_trace``, ``cfg`` then
    ``pdbfw.trace``, ``where_key`` its config key)."""
    where_key = where_key or f"{paper}.sensitivity"
    item = f"Speed claim at the printed and at the best settings ({base} vs its baselines)"
    if name != "sensitivity":
        item += f" [{name}]"
    where = f"results/tables/{paper}/{name}.md"
    outputs = f"{name} {name}_figure"
    if not cfg.get("sensitivity"):
        return not_run_row(paper, outputs, item,
                        f"not run: no {where_key} in this config (`snakemake --cores "
                        "2 --configfile config/sensitivity.yaml`, with the mirror)", claim)
    table = ctx.read_csv("tables", paper, f"{name}.csv")
    if table is None:
        return not_run_row(paper, outputs, item, missing_note(where), claim)
    from pdsparse.repro.sensitivity import best_and_printed

    targets = sorted(float(t) for t in cfg["sensitivity"]["targets"])
    summary = best_and_printed(table, targets)
    parts, verdict, notes = [], {}, []
    for setting in ("printed", "best"):
        rows = summary[summary["setting"] == setting].to_dict("records")
        mine = [r for r in rows if r["method"] == base]
        label = mine[0]["config"] if mine else base
        # every target the base reached at this setting (else the loosest, as a bound); the
        # verdict takes the largest ratio: the claim's most favourable reading
        reached = [t for t in targets if mine and not math.isnan(
            mine[0].get(f"time_{t:g}", math.nan))]
        found = []
        for t in reached or targets[-1:]:
            ratio, lo, hi, flag, rival = _sens_ratio(rows, base, t, "time")
            passes, plo, phi, pflag, _ = _sens_ratio(rows, base, t, "passes")
            found.append((ratio, lo, hi, flag, rival))
            parts.append(f"{setting} ({label}), to {t:g}: {_ratio_text(ratio, lo, hi, flag)} "
                         f"vs {rival} in CPU s with setup, "
                         f"{_ratio_text(passes, plo, phi, pflag)} in passes")
        known = [f for f in found if not math.isnan(f[0])]
        verdict[setting] = max(known, key=lambda f: f[0]) if known else found[0]
    from pdsparse.repro.plan import NOT_PRINTED
    from pdsparse.repro.sensitivity import not_the_papers

    best_rows = summary[summary["setting"] == "best"].to_dict("records")
    variants = sorted({str(r["method"]) for r in best_rows if not_the_papers(str(r["method"]))})
    for method in variants:  # said beside, never graded: not the printed algorithm
        ablation = [r for r in best_rows if r["method"] == method]
        reached = [t for t in targets if ablation and not math.isnan(
            ablation[0].get(f"time_{t:g}", math.nan))]
        if reached:
            t = min(reached)
            ratio, lo, hi, flag, rival = _sens_ratio(best_rows, base, t, "time", of=method)
            parts.append(f"{method} ({ablation[0]['config']}; not the printed algorithm), "
                         f"to {t:g}: {_ratio_text(ratio, lo, hi, flag)} vs {rival}")
    ratio_p, lo_p, hi_p, flag_p, _ = verdict["printed"]
    ratio_b, lo_b, hi_b, flag_b, rival_b = verdict["best"]
    need = claimed / CLAIM_FACTOR
    grade = _claim_grade(lo_p, hi_p, flag_p, need)
    if grade == "inconclusive":
        notes.append(f"the seeds straddle {need:g}× ({_ratio_text(ratio_p, lo_p, hi_p, flag_p)}"
                     "): neither yes nor no")
    if grade != "yes":
        best_grade = _claim_grade(lo_b, hi_b, flag_b, need)
        if best_grade == "yes":
            notes.append(f"holds only at settings the paper does not print ({NOT_PRINTED}; "
                         f"{_x(ratio_b)}): not counted as agreement")
        elif best_grade == "partly" or (ratio_b > 1 and best_grade == "no"):
            notes.append(f"at the best settings {base} is ahead of {rival_b} by {_x(ratio_b)}"
                         f", short of {need:g}×")
        elif best_grade == "inconclusive" and not math.isnan(ratio_b):
            notes.append(f"at the best settings {base} against {rival_b}: "
                         f"{_ratio_text(ratio_b, lo_b, hi_b, flag_b)}, the seeds straddle "
                         f"{need:g}×")
        elif math.isnan(ratio_b):
            notes.append(f"at the best settings neither {base} nor {rival_b or 'a baseline'} "
                         "reached the targets within the budget")
        else:
            notes.append(f"{rival_b} stays ahead at the best settings of both "
                         f"({_x(1 / ratio_b) if ratio_b > 0 else '—'} faster)")
    notes.append(f"evidence: {where}")
    sens = cfg["sensitivity"]
    subject = sens.get("dataset") or f"the rank-{sens.get('rank')} problem"
    return Row(paper, outputs, item, f"the sensitivity study on {subject}", claim,
               "; ".join(parts), grade, "; ".join(notes))
