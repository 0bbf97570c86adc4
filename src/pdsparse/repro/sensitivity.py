"""Each method over the parameters a paper leaves open: the setting the paper prints, the best
one, and how much the ranking of the methods moves between the two.

A paper's speed claim compares methods at settings it chose (DGPD's step multiplier and one
coordinate per search, PDBFW's k = ceil(n s / d) and its dual step). A verdict that one
method is slower than another is only as good as those settings: the sensitivity study runs
every method over a grid of its free parameters on one data set at the paper's setting
(``<paper>.sensitivity`` in the config; :func:`pdsparse.repro.plan.add_sensitivity` plans
it) and reports, from the aggregate of those runs,

* every configuration's CPU time to each target with its setup (what a user pays), the
  kernel's time alone, and the passes over the data (``epoch``: entries of A read / nnz(A),
  every scan counted);
* per method, the configuration the paper prints and the best one (the least CPU time with
  setup to the tightest target any of its configurations reached, then to the looser ones);
* the methods ranked at their printed settings and at their best, per target.

Times to a target are interpolated between the trace rows that bracket it and a run that did
not get there is judged as the speedup tables judge it (:func:`pdsparse.repro.speedup.outcome`):
cut by its budget while still improving, its time is a lower bound (">= its length
(budget)"); diverged, stalled or stopped at its tolerance, it never gets there ("not
reached"). Either way it ranks after every configuration that reached the target. Each
time keeps its seeds (``<measure>_seeds_<t>``: ``value:kind`` per seed) so that a verdict
pairs seed i of a method with seed i of another and says its spread.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from pdsparse.errors import DataError
from pdsparse.repro.output import Builder, pairs, positive_float, require_file, write_table
from pdsparse.repro.speedup import (
    MEASURES,
    NOT_REACHED,
    config_label,
    read_aggregates,
    seed_times,
    time_to_target,
    with_setup,
)

__all__ = ["sensitivity_table", "best_and_printed", "rankings", "seeds_of",
           "write_sensitivity", "draw_sensitivity", "ABLATIONS", "DEGENERATE",
           "degenerate_name", "not_the_papers", "setting_label"]

PathLike = str | os.PathLike



def _tag(row: Mapping, names: Sequence[str]) -> str:
    from pdsparse.solvers import get_solver

    spec = get_solver(str(row["solver"]))
    return spec.tag(spec.parse_options({k: str(row[k]) for k in names if k in row}))


def _frame(aggregates: Sequence[PathLike]) -> pd.DataFrame:
    from pdsparse.solvers import option_names

    df = with_setup(read_aggregates(aggregates, "sensitivity"))
    if df["problem"].nunique() != 1:
        raise DataError(f"sensitivity: one problem expected, the aggregates hold "
                        f"{sorted(df['problem'].unique())}")
    configs = df[["solver", *[k for k in option_names() if k in df.columns]]]
    configs = configs.drop_duplicates()
    labels = {tuple(r.values()): (config_label(r, option_names()), _tag(r, option_names()))
              for r in configs.to_dict("records")}
    keys = list(configs.columns)
    pairs_ = [labels[k] for k in df[keys].itertuples(index=False, name=None)]
    df["config"] = [c for c, _ in pairs_]
    df["tag"] = [t for _, t in pairs_]
    return df


ABLATIONS = {("pdbfw", "extrapolate", "primal"): "pdbfw_pdfw_m"}
"""(solver, option, value) -> the method a configuration counts as: a variant that is not the
paper's algorithm (PDBFW reading an extrapolated primal point, the PDFW.m ablation) is its
own method, so that it is never reported as the best setting of the printed one."""

PROJECTED_GRADIENT = "projected gradient (PDBFW, k = n, δ → ∞)"
"""PDBFW with every dual row and an unbounded dual step. (10) becomes y = f′(A x) on every
row, so the next step (8) reads z / n + μ x = ∇P(x) and, with L η = μ / 2 and a block that
holds the projection's support, x⁺ = ½ x + ½ Π(x − (2/μ) ∇P(x)): relaxed projected gradient
with step 2/μ (``tests/test_sensitivity_grids.py`` checks the kernel against that recursion:
to rounding at δ = exact; at a multiplier m the proximal term of (10) keeps a weight
q = n / δ = n (1/β + 25 R / (2 μ n)) / m, and the iterates differ from the recursion by about
q / 2, relatively)."""

LARGE_DELTAS = ("x100000", "exact")
"""PDBFW's dual steps at or past which k = n counts as :data:`PROJECTED_GRADIENT`: q = n / δ
is 0.27 at × 10⁵ on the l1 study's mnist09-rb (n = 11,872, unit rows, μ = 10/n: each row's y
moves 79 % of the way to f′(a_iᵀx), about 10 % from the recursion) and 0.01 or less on
problems of n ≤ 500; at × 10⁴ it is 2.7 there, a proximal dual step that still holds y back
(on n = 60, 400 and 2,000 the iterates differ from the recursion by 0.6, 5 and 15 % at × 10⁴,
by 0.06, 0.5 and 2 % at × 10⁵, and by 2e-15 to 1e-14 at exact). Both k = n names are
outside PDBFW's best; the threshold only says which of the two a setting carries."""

DEGENERATE = (
    ("pdbfw", {"k": ("n",), "delta": LARGE_DELTAS, "extrapolate": ("none",)},
     PROJECTED_GRADIENT),
    ("pdbfw", {"k": ("n",), "delta": LARGE_DELTAS, "extrapolate": ("primal",)},
     "projected reflected gradient (PDFW.m, k = n, δ → ∞)"),
    ("pdbfw", {"k": ("n",), "extrapolate": ("none",)}, "PDBFW with every dual row (k = n)"),
)
"""(solver, {option: values}, name), first match wins: a setting that turns a method into
another is reported under the other's name, never as the paper's method at its best (which
is taken over the settings that keep its defining feature; PDBFW's is a partial dual update,
k < n, near the printed ⌈ns/d⌉).

* PDBFW, k = n, δ ≥ × 10⁵ or exact: relaxed projected gradient (:data:`PROJECTED_GRADIENT`).
* The same with the PDFW.m extrapolation: y = f′(A (2x − x_prev)), so the step reads the
  loss's gradient at the reflected point 2x − x_prev (Malitsky's projected reflected
  gradient, relaxed by ½); otherwise that ablation is ``pdbfw_pdfw_m`` (:data:`ABLATIONS`).
* PDBFW, k = n at a smaller δ: a full-dual primal-dual method (every dual row each
  iteration, a proximal dual step): not the partial dual update the paper's complexity
  rests on.

Settings of the studies that look degenerate and are not (docs/dgpd.md, docs/pdbfw.md):
DGPD's ``step: curvature`` with Gauss-Seidel passes takes Prox-SDCA's step on each chosen
row (:func:`pdsparse.solvers.dgpd.curvature_q`), but its rows and columns are still chosen
greedily, DGPD's defining feature, so it stays DGPD;
DGPD with a batch of every coordinate (≥ max(n, d), far past the grid's 64) would lose its
greedy selection: its inner passes would sweep every row, with the curvature step and
Gauss-Seidel passes Prox-SDCA in a fixed order (a name to give it if a grid ever goes
there); Acc PG, SVRG, SCGS, STORC, FW, SFW and block FW keep their algorithm at every step
multiplier (a large one diverges, which the tables show as not reached)."""


def _default(solver: str, option: str) -> str:
    from dataclasses import fields

    from pdsparse.solvers import get_solver

    for f in fields(get_solver(solver).options):
        if f.name == option:
            return str(f.default)
    return ""


def degenerate_name(row: Mapping) -> str | None:
    """The name a configuration (a row with ``solver`` and its option columns; ``"none"`` or
    missing: the option's default) is reported under when its setting turns the method into
    another (:data:`DEGENERATE`), else None."""
    solver = str(row["solver"])
    for name, options, method in DEGENERATE:
        if solver != name:
            continue
        given = {k: str(row.get(k, "none")) for k in options}
        given = {k: _default(solver, k) if v in ("none", "nan", "") else v
                 for k, v in given.items()}
        if all(given[k] in values for k, values in options.items()):
            return method
    return None


def not_the_papers(method: str) -> bool:
    """Whether a ``method`` of a sensitivity table is a variant of a method (an ablation or
    a degenerate setting) rather than a method of its own: said beside a verdict, never its
    base's best nor one of the paper's baselines."""
    return method in ABLATIONS.values() or method in {m for _, _, m in DEGENERATE}


def setting_label(setting: str, method: str, ours: Collection[str] = ()) -> str:
    """How a table names a method's reference setting: "printed" when the paper prints it,
    else (a method in ``ours``: a baseline at its source's parameters as configured, a step
    multiplier of ours; or a variant of :func:`not_the_papers`) "configured (not printed:
    ours)"; "best" and the empty label as they are."""
    if method in ours or not_the_papers(method):
        return setting.replace("printed", f"configured ({_not_printed()})")
    return setting


def _method(row: Mapping) -> str:
    name = degenerate_name(row)
    if name is not None:
        return name
    solver = str(row["solver"])
    for (name, option, value), method in ABLATIONS.items():
        if solver == name and str(row.get(option, "")) == value:
            return method
    return solver


def sensitivity_table(df: pd.DataFrame, targets: Sequence[float],
                      printed: Mapping[str, str]) -> pd.DataFrame:
    """One row per configuration: ``method``, ``config`` (its label), ``tag``, ``printed``
    (the paper's setting: ``printed[method]`` is its options tag; an ablation in
    :data:`ABLATIONS` and a degenerate setting in :data:`DEGENERATE` are methods of their
    own, named there), ``setup_s``, and per
    target t ``time_<t>``, ``kernel_<t>``, ``passes_<t>`` (interpolated, medians over seeds;
    NaN when not reached) with the lower bounds ``time_min_<t>`` etc. (the median of the
    seeds' lengths when cut by their budget, inf when never reached), each seed's
    ``time_seeds_<t>`` etc. (:func:`seeds_of` reads them), ``why_<t>`` (``reached``,
    ``budget`` or the reason it never gets there, :func:`pdsparse.repro.speedup.time_to_target`),
    and ``final`` (the last relative suboptimality, median over seeds)."""
    need = {"solver", "config", "tag", "seed", "cpu_s", "time_s", "epoch", "rel_subopt"}
    missing = sorted(need - set(df.columns))
    if missing:
        raise DataError(f"sensitivity: the aggregate lacks column(s) {missing}")
    kept = {o for _, o, _ in ABLATIONS} | {o for _, opts, _ in DEGENERATE for o in opts}
    cols = ["solver", "config", "tag", *sorted(kept & set(df.columns))]
    out = df[cols].drop_duplicates(["solver", "config", "tag"])
    out.insert(0, "method", [_method(r) for r in out.to_dict("records")])
    out = out[["method", "config", "tag"]]
    out["printed"] = [printed.get(m) == t for m, t in zip(out["method"], out["tag"],
                                                          strict=True)]
    setup = df.groupby(["config", "seed"])["setup_s"].first().groupby(level="config").median()
    out = out.merge(setup.rename("setup_s").reset_index(), on="config", how="left")
    last = df.sort_values("cpu_s").groupby(["config", "seed"])["rel_subopt"].last()
    out = out.merge(last.groupby(level="config").median().rename("final").reset_index(),
                    on="config", how="left")
    for t in targets:
        for prefix, x in MEASURES:
            tt = time_to_target(df, t, y="rel_subopt", x=x, by=("config",))
            tt = tt.rename(columns={"time": f"{prefix}_{t:g}", "x_max": f"{prefix}_min_{t:g}",
                                    "outcome": f"why_{t:g}"})
            seeds = seed_times(df, t, y="rel_subopt", x=x, by=("config",))
            tt[f"{prefix}_seeds_{t:g}"] = tt["config"].map(
                {c: ";".join(f"{s}={v!r}:{k}" for s, v, k in
                             zip(g["seed"], g["value"], g["kind"], strict=True))
                 for c, g in seeds.groupby("config", sort=False)})
            cols = [f"{prefix}_{t:g}", f"{prefix}_min_{t:g}", f"{prefix}_seeds_{t:g}"]
            cols += [f"why_{t:g}"] if prefix == "time" else []
            out = out.merge(tt[["config", *cols]], on="config", how="left")
    return out.sort_values(["method", "config"], kind="stable").reset_index(drop=True)


def seeds_of(row: Mapping, prefix: str, t: float) -> pd.DataFrame:
    """The seeds of a configuration's time to ``t`` in a measure (``time``, ``kernel``,
    ``passes``) as :func:`pdsparse.repro.speedup.seed_times` gives them (seed, value, kind), from
    the table's ``<prefix>_seeds_<t>`` column (also once written to CSV and read back)."""
    text = row.get(f"{prefix}_seeds_{t:g}")
    rows = []
    if isinstance(text, str) and text:
        for item in text.split(";"):
            seed, rest = item.split("=", 1)
            value, kind = rest.rsplit(":", 1)
            rows.append({"seed": int(seed), "value": float(value), "kind": kind})
    return pd.DataFrame(rows, columns=["seed", "value", "kind"])


def _score(row: Mapping, targets: Sequence[float]) -> tuple:
    """Sort key of a configuration: CPU time with setup to the tightest target first (not
    reached: after every one that did, by its final relative suboptimality), then the
    looser targets."""
    key = []
    for t in sorted(targets):
        v = row[f"time_{t:g}"]
        key.append(math.inf if v is None or math.isnan(v) else float(v))
    return (*key, float(row["final"]))


def best_and_printed(table: pd.DataFrame, targets: Sequence[float]) -> pd.DataFrame:
    """Per method: its printed configuration and its best one (rows of ``table``), as
    ``setting`` = "printed" / "best" (the same row twice when the printed one is best)."""
    rows = []
    for _, group in table.groupby("method", sort=True):
        recs = group.to_dict("records")
        best = min(recs, key=lambda r: _score(r, targets))
        printed = [r for r in recs if r["printed"]]
        for setting, rec in (("printed", printed[0] if printed else None), ("best", best)):
            if rec is not None:
                rows.append({"setting": setting, **rec})
    return pd.DataFrame(rows)


def rankings(summary: pd.DataFrame, targets: Sequence[float]) -> pd.DataFrame:
    """Per target and setting (printed / best): the methods that reached the target in order
    of CPU time with setup (median over seeds; ``~`` between two whose seeds' spreads
    overlap: their order is not decided), then those that did not, by name, each with why
    (``budget``: cut while still improving, its length orders nothing; or never: diverged,
    stalled, stopped at its tolerance)."""
    rows = []
    for t in targets:
        for setting in ("printed", "best"):
            part = summary[summary["setting"] == setting].to_dict("records")
            done = sorted((r for r in part if not math.isnan(r[f"time_{t:g}"])),
                          key=lambda r: r[f"time_{t:g}"])
            short = sorted(f"{r['method']}{_why(r, t)}" for r in part
                           if math.isnan(r[f"time_{t:g}"]))
            text = str(done[0]["method"]) if done else "none"
            for slower, faster in zip(done[1:], done, strict=False):
                text += f" {_order(faster, slower, t)} {slower['method']}"
            rows.append({"target": t, "setting": setting,
                         "ranking": text + (f" (not reached: {', '.join(short)})"
                                            if short else "")})
    return pd.DataFrame(rows)


def _why(row: Mapping, t: float) -> str:
    """`` (budget)``, `` (diverged)``...: why a configuration did not reach ``t``; "" for a
    table without the reason (written by an older version)."""
    why = row.get(f"why_{t:g}")
    if not isinstance(why, str) or why in ("", "reached"):
        return ""
    return f" ({why})"


def _order(faster: Mapping, slower: Mapping, t: float) -> str:
    """``<`` when every seed of ``faster`` reached ``t`` before every seed of ``slower``,
    ``~`` when their spreads overlap (the order is not decided by the repeated runs)."""
    a, b = seeds_of(faster, "time", t), seeds_of(slower, "time", t)
    if a.empty or b.empty:
        return "<"
    return "<" if a["value"].max() < b["value"].min() else "~"


def _cell(row: Mapping, prefix: str, t: float, unit: str) -> str:
    v, lo = row[f"{prefix}_{t:g}"], row[f"{prefix}_min_{t:g}"]
    if v is not None and not math.isnan(v):
        return f"{v:.3g}{unit}"
    why = row.get(f"why_{t:g}")
    if why in NOT_REACHED:
        return f"not reached: {why}"
    return f"≥ {lo:.3g}{unit} (budget)" if lo is not None and math.isfinite(lo) else "—"


def write_sensitivity(aggregates: Sequence[PathLike], targets: Sequence[float],
                      printed: Mapping[str, str], out_csv: PathLike, out_md: PathLike,
                      title: str = "", caption: str = "", ours: Collection[str] = ()
                      ) -> pd.DataFrame:
    """The grid table (CSV: every configuration) and the Markdown: per method its printed
    and best setting, the rankings at each, then every configuration. ``ours``: the methods
    whose reference setting the paper does not print (:func:`setting_label`)."""
    df = _frame(aggregates)
    table = sensitivity_table(df, targets, printed)
    unknown = sorted(set(printed) - set(table["method"]))
    if unknown:
        raise DataError(f"sensitivity: no run of the printed method(s) {unknown}")
    for method, tag in printed.items():
        if not table[(table["method"] == method) & table["printed"]].shape[0]:
            raise DataError(f"sensitivity: {method}: no run of its printed setting {tag} "
                            f"(runs: {', '.join(table[table['method'] == method]['tag'])})")
    summary = best_and_printed(table, targets)
    ranks = rankings(summary, targets)
    head = ["method", "setting", "configuration", "setup"] + \
        [f"to {t:g}: CPU s (kernel s, passes)" for t in targets]

    def line(r: Mapping, setting: str) -> str:
        cells = [str(r["method"]), setting_label(setting, str(r["method"]), ours),
                 str(r["config"]), f"{r['setup_s']:.3g} s"]
        cells += [f"{_cell(r, 'time', t, ' s')} ({_cell(r, 'kernel', t, ' s')}, "
                  f"{_cell(r, 'passes', t, '')})" for t in targets]
        return "| " + " | ".join(cells) + " |"

    lines = [f"# {title}" if title else "# Sensitivity", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, group in summary.groupby("method", sort=False):
        if group["config"].nunique() == 1 and len(group) == 2:
            lines.append(line(group.iloc[0], "printed = best"))
            continue
        for _, r in group.iterrows():
            lines.append(line(r, r["setting"]))
    lines += ["", "| target | methods at their printed settings | at their best settings |",
              "|---|---|---|"]
    for t in targets:
        part = ranks[ranks["target"] == t].set_index("setting")["ranking"]
        lines.append(f"| {t:g} | {part.get('printed', '—')} | {part.get('best', '—')} |")
    moved = [f"{t:g}" for t in targets
             if len(set(ranks[ranks["target"] == t]["ranking"])) > 1]
    lines += ["", ("The ranking moves at target(s) " + ", ".join(moved) + ": a verdict at the "
                   "printed settings does not hold at the best ones.") if moved else
              "The ranking is the same at the printed and at the best settings."]
    lines += ["", "Every configuration:", "", "| " + " | ".join(head) + " |",
              "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        lines.append(line(r, "printed" if r["printed"] else ""))
    lines += ["", "CPU seconds (the process's CPU time, whatever the load) with the run's "
              "setup, medians over seeds, interpolated between the trace rows that bracket "
              "the target; in brackets the kernel's time and the passes over the data "
              "(entries read / nnz(A), every scan counted). \"≥ … (budget)\": cut by its "
              "budget while still improving, the run's length; \"not reached\": diverged, "
              "stalled or stopped at its tolerance short of the target (never). In a "
              "ranking, \"<\": every seed of the first before every seed of the second; "
              "\"~\": their seeds overlap. The best setting of a method: the least CPU time "
              "to the tightest target it reached, then to the looser ones."]
    if ours:
        lines += ["", f"configured ({_not_printed()}): the paper prints no setting of "
                  f"{', '.join(sorted(ours))}; the reference setting is the configured one."]
    if caption:
        lines += ["", caption.strip()]
    table = table.merge(summary.groupby("config")["setting"].agg(",".join).rename("role")
                        .reset_index(), on="config", how="left")
    write_table(table, "\n".join(lines) + "\n", out_csv, out_md)
    return table


def _not_printed() -> str:
    from pdsparse.repro.plan import NOT_PRINTED

    return NOT_PRINTED


def draw_sensitivity(aggregates: Sequence[PathLike], targets: Sequence[float],
                     printed: Mapping[str, str], out_png: PathLike, out_pdf: PathLike,
                     title: str = "", ours: Collection[str] = ()) -> None:
    """Relative suboptimality against CPU time with setup: each method at its printed
    setting (dashed) and at its best (solid), the targets as dotted lines."""
    from matplotlib import rcParams

    from pdsparse.repro.figures import new_figure, save_figure

    df = _frame(aggregates)
    summary = best_and_printed(sensitivity_table(df, targets, printed), targets)
    fig = new_figure((10.4, 4.6))
    ax = fig.add_subplot()
    colors = rcParams["axes.prop_cycle"].by_key()["color"]
    floor = max(min(targets) / 100, 1e-14)
    for i, (_, group) in enumerate(summary.groupby("method", sort=True)):
        for _, r in group.iterrows():
            if r["setting"] == "printed" and len(group) == 2 and \
                    group["config"].nunique() == 1:
                continue  # the printed setting is the best: one solid curve
            run = df[(df["config"] == r["config"]) & (df["seed"] == df["seed"].min())]
            run = run.sort_values("cpu_s")
            variant = not_the_papers(r["method"])
            role = ("not the paper's algorithm" if variant
                    else setting_label("printed = best" if len(group) == 2 and
                                       group["config"].nunique() == 1 else r["setting"],
                                       str(r["method"]), ours))
            ax.plot(run["cpu_s"], np.maximum(run["rel_subopt"], floor),
                    color=colors[i % len(colors)],
                    linestyle="--" if r["setting"] == "printed" else
                    ":" if not_the_papers(r["method"]) else "-",
                    label=f"{r['method'] + ': ' if variant else ''}{r['config']} ({role})")
    for t in targets:
        ax.axhline(t, color="0.6", linestyle=":", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.set_xlabel("CPU time with setup (s)")
    ax.set_ylabel("relative suboptimality (P − P*) / |P*|")
    if title:
        fig.suptitle(title, fontsize=10)  # over the axes and the legend
    # beside the axes: a grid of 40+ configurations names up to 30 curves
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.set_layout_engine("constrained")
    save_figure(fig, out_png, out_pdf)


# --------------------------------------------------- pdsparse output PAPER sensitivity[_figure]

def _arguments(p) -> None:
    p.add_argument("--aggregate", nargs="+", required=True, help="aggregate .parquet files")
    p.add_argument("--targets", type=positive_float, nargs="+", default=[1e-3, 1e-6],
                   help="relative suboptimality targets (P - P*)/|P*|")
    p.add_argument("--printed", nargs="*", metavar="METHOD=TAG",
                   help="the paper's setting of each method, as its options tag")
    p.add_argument("--ours", nargs="*", default=[], metavar="METHOD",
                   help="methods whose reference setting the paper does not print (labelled "
                   "'configured (not printed: ours)')")
    p.add_argument("--title", default="", help="heading / figure title")
    p.add_argument("--note", default="", help="printed under the table (e.g. what an "
                   "ablation in the grid is)")


def _table(args, outs) -> None:
    for path in args.aggregate:
        require_file(path, "aggregate")
    write_sensitivity(args.aggregate, args.targets, pairs(args.printed, "--printed"), *outs,
                      title=args.title, caption=args.note, ours=args.ours)


def _figure(args, outs) -> None:
    for path in args.aggregate:
        require_file(path, "aggregate")
    draw_sensitivity(args.aggregate, args.targets, pairs(args.printed, "--printed"), *outs,
                     title=args.title, ours=args.ours)


SENSITIVITY_OUTPUT = Builder("table", "each method over its free parameters: the printed and "
                             "the best setting, and the rankings at each", _arguments, _table)
SENSITIVITY_FIGURE = Builder("figure", "each method at its printed and at its best setting",
                             _arguments, _figure)
