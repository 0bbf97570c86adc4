"""The one report writer: the long-format rows of :mod:`bench.runner` as the tables of
benchmarks/README.md, and every output of a benchmark written atomically.

A solver's time in a cell at a target is the median CPU time of its timed rounds, and it
counts only when every round reached the target (a failure, a divergence, a stall, a cap or a
re-run that missed is never faster). Ours is set against the best rival that counts; the
ratio's range takes ours' fastest and slowest round against the rival's slowest and fastest,
and the verdict is "ahead" (the whole range below 1), "behind" (above 1) or "inconclusive"
(it straddles 1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from bench.runner import REACHED, SEARCH, UNSUPPORTED

AHEAD, BEHIND, INCONCLUSIVE = "ahead", "behind", "inconclusive"
FASTEST = "fastest"
"""``ours=FASTEST``: each cell's fastest solver of ours against the best rival."""


def times(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per (cell, target, solver that supports the cell): ``seconds`` (median of the
    rounds; inf when it does not count), ``fastest``, ``slowest``, ``rounds``, ``ours``,
    ``budget``, ``subopt`` (the worst round's) and ``why`` (the reason it does not count, ''
    when it does)."""
    out = []
    solvers = list(dict.fromkeys(frame.solver))  # the order they were given in
    # not this solver's problem, or a point of its search: no row
    frame = frame[~frame.status.isin([UNSUPPORTED, SEARCH])]
    # cells as they came, targets loosest first, solvers as given
    frame = frame.assign(_cell=frame.groupby(keys, sort=False, dropna=False).ngroup(),
                         _solver=frame.solver.map({s: i for i, s in enumerate(solvers)}))
    frame = frame.sort_values(["_cell", "target", "_solver"], ascending=[True, False, True],
                              kind="stable")
    for key, g in frame.groupby([*keys, "target", "solver"], sort=False, dropna=False):
        timed = g[g["round"] >= 0]
        ok = len(timed) > 0 and bool((timed.status == REACHED).all())
        if ok:
            why = ""
        elif len(timed):
            bad = timed[timed.status != REACHED].iloc[0]
            why = f"{bad.status} on round {int(bad['round'])} (subopt {bad.subopt:.2g})"
        else:
            why = str(g.note.iloc[0]) or str(g.status.iloc[0])
        secs = timed.cpu_s
        out.append({**dict(zip([*keys, "target", "solver"], key, strict=True)),
                    "ours": bool(g.ours.iloc[0]),
                    "seconds": float(secs.median()) if ok else math.inf,
                    "fastest": float(secs.min()) if ok else math.nan,
                    "slowest": float(secs.max()) if ok else math.nan,
                    "rounds": len(timed), "budget": float(g.budget.iloc[0]),
                    "subopt": float(g.subopt.max()), "why": why})
    return pd.DataFrame(out)


def verdict(lo: float, hi: float) -> str:
    """ahead / behind / inconclusive from the range of ours / rival."""
    if hi < 1.0:
        return AHEAD
    if lo > 1.0:
        return BEHIND
    return INCONCLUSIVE


def against_best(per_solver: pd.DataFrame, keys: list[str], ours: str | None = None
                 ) -> pd.DataFrame:
    """Per (cell, target): ours (the solver named ``ours``; ``"fastest"``: the fastest of ours
    in that cell; None: the first of ours) against the fastest rival that counts: ``ratio``,
    ``range_lo``, ``range_hi``, ``verdict``."""
    out = []
    for key, g in per_solver.groupby([*keys, "target"], sort=False, dropna=False):
        mine = g[g.ours] if ours in (None, FASTEST) else g[g.solver == ours]
        if not len(mine):
            continue
        me = mine.loc[mine.seconds.idxmin()] if ours == FASTEST else mine.iloc[0]
        rivals = g[(g.solver != me.solver) & ~g.ours & (g.seconds < math.inf)]
        row = {**dict(zip([*keys, "target"], key, strict=True)), "ours": me.solver,
               "ours_s": me.seconds, "ours_budget": me.budget, "ours_why": me.why,
               "rival": "", "rival_s": math.inf, "rival_budget": math.nan,
               "ratio": math.nan, "range_lo": math.nan, "range_hi": math.nan}
        if len(rivals):
            best = rivals.loc[rivals.seconds.idxmin()]
            row.update(rival=best.solver, rival_s=best.seconds, rival_budget=best.budget)
        if me.seconds == math.inf:
            row["verdict"] = f"ours did not count: {me.why}"
        elif not len(rivals):
            row["verdict"] = "ahead (no rival reached the target)"
        else:
            row.update(ratio=me.seconds / best.seconds,
                       range_lo=me.fastest / best.slowest, range_hi=me.slowest / best.fastest)
            row["verdict"] = verdict(row["range_lo"], row["range_hi"])
        out.append(row)
    return pd.DataFrame(out)


def summary_line(table: pd.DataFrame) -> str:
    """Median and worst ratio, and the cells above 1.0 by verdict."""
    r = table.ratio.dropna()
    if not len(r):
        return "no cell with both ours and a rival timed"
    above = table[table.ratio > 1.0]
    return (f"ours / best rival: median **{r.median():.2f}×**, max {r.max():.2f}×; "
            f"{len(above)} of {len(r)} cells above 1.0× "
            f"({int((above.verdict == BEHIND).sum())} behind, "
            f"{int((above.verdict == INCONCLUSIVE).sum())} inconclusive)")


def _load(watch: dict) -> str:
    """The 1-minute load average at the start and at the end of the run."""
    ends = watch.get("loadavg") or []
    return " -> ".join(f"{la[0]:.2f}" for la in ends) or "?"


def _fmt(x: float) -> str:
    return "not reached" if x == math.inf else ("-" if x != x else f"{x:.3g}")


def markdown(frame: pd.DataFrame, meta: dict, *, title: str, keys: list[str],
             ours: str | None = None) -> str:
    """The report of one benchmark: the machine line, ours (see :func:`against_best`) against
    the best rival per cell and target, every solver's median, and why a solver did not
    count."""
    per = times(frame, keys)
    table = against_best(per, keys, ours)
    m = meta.get("machine", {})
    watch = meta.get("watch", {})
    lines = [f"# {title}", "",
             f"Machine: {m.get('nproc', '?')} cores, {m.get('cpu', '?')}, "
             f"{m.get('mem_gib', math.nan):.0f} GiB; "
             + ("quiet" if watch.get("quiet") else "NOT quiet")
             + f" (other processes kept {watch.get('other_cores', math.nan):.2f} cores busy; "
             f"load average {_load(watch)}); median of {meta.get('repeats', '?')} "
             "interleaved CPU times; commit "
             f"{meta.get('versions', {}).get('git_commit', '?')}.", "",
             summary_line(table), "",
             "| " + " | ".join([*keys, "target", *(["ours"] if ours == FASTEST else []),
                                "ours s", "best rival", "rival s", "ours / rival", "range",
                                "verdict"]) + " |",
             "|" + "---|" * (len(keys) + 7 + (ours == FASTEST))]
    for _, r in table.iterrows():
        rng = ("-" if r.range_lo != r.range_lo else f"{r.range_lo:.2f}–{r.range_hi:.2f}")
        ratio = "-" if r.ratio != r.ratio else f"**{r.ratio:.2f}**"
        lines.append("| " + " | ".join([*(str(r[k]) for k in keys), f"{r.target:g}",
                                         *([r.ours] if ours == FASTEST else []),
                                         _fmt(r.ours_s), r.rival or "-", _fmt(r.rival_s),
                                         ratio, rng, r.verdict]) + " |")
    label = [" / ".join(str(r[k]) for k in [*keys, "target"]) for _, r in per.iterrows()]
    grid = per.assign(cell=label).set_index(["cell", "solver"]).seconds.unstack("solver")
    grid = grid.reindex(index=list(dict.fromkeys(label)),
                        columns=list(dict.fromkeys(per.solver)))
    lines += ["", "Every solver's median CPU s (inf: did not count, see below; blank: does "
              "not fit the cell):", "", grid.to_markdown(floatfmt=".3g"), ""]
    missing = per[per.why != ""]
    if len(missing):
        lines += ["Did not count:", ""]
        lines += [f"- {' / '.join(str(r[k]) for k in keys)}, target {r.target:g}, "
                  f"{r.solver}: {r.why}" for _, r in missing.iterrows()]
        lines.append("")
    lines.append(f"Versions: {meta.get('versions', {})}")
    return "\n".join(lines) + "\n"


def write(frame: pd.DataFrame, meta: dict, stem: Path | str, render) -> str:
    """``<stem>.parquet`` (the long rows) and ``<stem>.json`` (the metadata), then
    ``<stem>.md`` (``render(frame, meta)``), each atomically, so that the measurements survive
    a report that fails; returns the markdown. ``stem``'s name keeps its dots
    (gisette_scale.t)."""
    from pdsparse.io import atomic_path

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(stem.parent / (stem.name + ".parquet")) as tmp:
        frame.to_parquet(tmp, index=False)
    with atomic_path(stem.parent / (stem.name + ".json")) as tmp:
        tmp.write_text(json.dumps(meta, indent=1, default=str))
    md = render(frame, meta)
    with atomic_path(stem.parent / (stem.name + ".md")) as tmp:
        tmp.write_text(md)
    return md
