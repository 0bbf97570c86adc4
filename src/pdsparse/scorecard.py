"""The reproduction scorecard: one row per paper item (a table's row, a figure's claim) over
the three papers, read off the workflow's results beside what the papers print.

Every verdict is computed here from the result files and the printed values of
:mod:`pdsparse.papers.faceoff_values`, :mod:`~pdsparse.papers.dgpd_values` and
:mod:`~pdsparse.papers.pdbfw_values`, with the tolerances named below; nothing measured is
written by hand. Columns of a :class:`Row`:

* ``reproduced``: ``yes`` (the paper's data, or data generated as the paper describes),
  ``stand-in data: ...`` (another or a smaller data set, said which), or ``not run: ...``
  (why, and how to get the data or the result);
* ``paper_value``, ``our_value``: the numbers compared;
* ``agreement``: ``yes``, ``partly`` or ``no`` with the reason (``—`` when not run or when
  the paper prints no value).

``pdsparse scorecard`` writes it as Markdown (``results/SCORECARD.md``), CSV and an HTML page
for the Snakemake report; :func:`caption_rst` and :func:`labels` give the report's captions
and labels of one figure or table.
"""

from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "PAPER_TITLES",
    "Row",
    "caption_rst",
    "item_title",
    "labels",
    "read_rows",
    "scorecard",
    "to_html",
    "to_markdown",
    "write_scorecard",
]

PathLike = str | os.PathLike

# ----------------------------------------------------------------------------- tolerances
FACEOFF_TARGET = 1e-6
"""Face-Off figures: passes over the data to (P - P*)/|P*| <= this are compared."""
TIE = 1.25
"""Face-Off figures: a ratio of passes within [1/TIE, TIE] is a tie (neither method faster)."""
TP_TD_FACTOR = 1.5
"""Face-Off Fig. 1d: the measured ratio of passes (primal / dual) matches Table 1's printed
T_P/T_D when within this factor of it."""
CLAIM_FACTOR = 2.0
"""A speedup claim ("around 10x", "up to 30x") is met when the measured speedup is at least
the claim divided by this factor (5x, 15x)."""
SPARSITY_RTOL = 0.25
"""PDBFW Table 2: the sparsity ratio nnz(x*)/d agrees within this relative difference."""
NZ_FACTOR = 2.0
"""DGPD Table 2: the fractions of nonzero primal and dual variables agree within this factor
(counts scale with the data size, which differs for every stand-in)."""
SAME_DATA_RTOL = 0.01
"""A real data set counts as the paper's when its samples and features are within 1 %."""
SLOPE_TOL = 0.3
"""PDBFW Table 1: a fitted log-log slope of the time per iteration agrees with the one the
printed cost implies when within this absolute difference."""
R_TOL = 1e-12
"""Face-Off Fig. 3: R <= 1 up to rounding."""

TOLERANCES = {
    "FACEOFF_TARGET": "Face-Off figures: passes to (P − P*)/|P*| ≤ 1e-6 are compared",
    "TIE": "a ratio of passes within [0.8, 1.25] is a tie",
    "TP_TD_FACTOR": "Fig. 1d: the ratio of passes within a factor 1.5 of Table 1's T_P/T_D",
    "CLAIM_FACTOR": "a claimed speedup (≈10×, up to 30×) is met at half of it or more",
    "SPARSITY_RTOL": "PDBFW Table 2: sparsity ratio within 25 % (relative)",
    "NZ_FACTOR": "DGPD Table 2: fractions of nonzero variables within a factor 2",
    "SAME_DATA_RTOL": "the paper's data: samples and features within 1 %",
    "SLOPE_TOL": "PDBFW Table 1: log-log slopes within 0.3 of the cost's",
}

PAPER_TITLES = {
    "faceoff": "Face-Off",
    "dgpd": "DGPD",
    "pdbfw": "PDBFW",
}
PAPER_CITATIONS = {
    "faceoff": "Csiba & Richtárik, Coordinate Descent Face-Off: Primal or Dual?",
    "dgpd": "Lei et al., Doubly Greedy Primal-Dual Coordinate Descent (ICML 2017)",
    "pdbfw": "Lei et al., Primal-Dual Block Frank-Wolfe (NeurIPS 2019)",
}

TABLE1_NAMES = {"nnz": "‖X‖₀", "T_P_over_T_D": "T_P/T_D"}
PDBFW_DUKE = "duke breast-cancer"
# Table 1's cost per iteration implies these log-log slopes in d (at fixed s) and in s (at
# fixed d) for dense data (nnz = nd), as benchmarks/pdbfw_table1.py fits them.
PDBFW_TABLE1_SOLVERS = {"pdbfw": ("Primal Dual FW (ours)", 0.0, 1.0),
                        "acc_pg": ("Accelerated PGD", 1.0, 0.0),
                        "fw": ("Frank Wolfe", 1.0, 0.0), "svrg": ("SVRG", 1.0, 0.0),
                        "scgs": ("SCGS", 1.0, 0.0), "storc": ("STORC", 1.0, 0.0)}


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


COLUMNS = tuple(f.name for f in fields(Row))


# ------------------------------------------------------------------------------ formatting


def _n(x: float) -> str:
    """A count with thousands separators, other numbers to 3 significant digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:.3g}"


def _pct(x: float) -> str:
    return "—" if x is None or math.isnan(x) else f"{100 * x:.3g} %"


def _x(value: float, bound: str = "") -> str:
    return "—" if value is None or math.isnan(value) else f"{'≥ ' if bound else ''}{value:.3g}×"


def _count(verdicts: Sequence[bool]) -> str:
    return f"{sum(verdicts)} of {len(verdicts)}"


def _grade(ok: Sequence[bool], half_is_partly: bool = False) -> str:
    """yes when all, partly when some (or at least half), no otherwise."""
    if ok and all(ok):
        return "yes"
    if any(ok) and (not half_is_partly or 2 * sum(ok) >= len(ok)):
        return "partly"
    return "no"


def _close(a: float, b: float, rtol: float) -> bool:
    return abs(float(a) - float(b)) <= rtol * abs(float(b))


# --------------------------------------------------------------------------------- context


@dataclass
class _Context:
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


def _missing(path: str) -> str:
    return f"not run: {path} is missing (run `snakemake --cores 2` first)"


NOT_RUN = "—"


def _not_run(paper: str, outputs: str, item: str, why: str, paper_value: str = "") -> Row:
    return Row(paper, outputs, item, why, paper_value or "—", "—", NOT_RUN)


def _source_kind(entry: Mapping) -> str:
    source = entry.get("source", {})
    if "generator" in source:
        gen = source["generator"]
        return f"generated ({gen.get('kind', gen.get('name'))})"
    return f"real {source.get('registry')}"


def _data_status(entry: Mapping, ours: tuple[float, float], paper: tuple[float, float],
                 what: tuple[str, str], paper_row: str) -> str:
    """``yes`` when a real data set has the paper's samples and features (within
    :data:`SAME_DATA_RTOL`), else ``stand-in data: ...`` naming the difference."""
    kind = _source_kind(entry)
    same = all(_close(o, p, SAME_DATA_RTOL) for o, p in zip(ours, paper, strict=True))
    if kind.startswith("real") and same:
        return "yes"
    sizes = f"{_n(ours[0])} {what[0]} × {_n(ours[1])} {what[1]}"
    printed = f"{_n(paper[0])} × {_n(paper[1])}"
    return f"stand-in data: {kind}, {sizes} for {paper_row}'s {printed}"


def _statuses(cfg: Mapping, table, sizes: tuple[str, str], values: Mapping[str, tuple],
               columns: Sequence[str]) -> dict[str, str]:
    """Data set -> reproduced column, from a paper's Table 2 as we made it (our sizes beside
    the printed row ``values[paper]`` with ``columns``)."""
    out = {}
    for name, entry in cfg["datasets"].items():
        paper_row = entry.get("paper")
        printed = dict(zip(columns, values.get(paper_row, ()), strict=False))
        mine = None if table is None else table[table["dataset"] == name]
        if mine is None or mine.empty or not printed:
            out[name] = f"stand-in data: {_source_kind(entry)}" + (
                f" for {paper_row}" if paper_row else "")
            continue
        r = mine.iloc[0]
        out[name] = _data_status(entry, tuple(r[c] for c in sizes),
                                 tuple(printed[c] for c in sizes), sizes, paper_row)
    return out


# -------------------------------------------------------------------------------- Face-Off


def _passes(df, target: float) -> dict[str, tuple[float, float, float]]:
    """solver -> (passes to target or NaN, longest run, final rel. subopt.), medians over
    seeds, for the paper's pair: primal RCD and dual RCD (fixed step), importance sampling."""
    from pdsparse.speedup import time_to_target

    out = {}
    for solver, step in (("primal_rcd", "none"), ("dual_rcd", "fixed")):
        run = df[(df["solver"] == solver) & (df["sampling"] == "importance")
                 & (df["dual_step"] == step)]
        if run.empty:
            continue
        tt = time_to_target(run, target, y="rel_subopt", x="epoch", by=("solver",))
        last = run.sort_values("epoch").groupby("seed")["rel_subopt"].last().median()
        out[solver] = (float(tt["time"].iloc[0]), float(tt["x_max"].iloc[0]), float(last))
    return out


def _faster(p: dict) -> tuple[str, float, str]:
    """(faster method or "tie", ratio passes dual / passes primal, description)."""
    (tp, xp, lp), (td, xd, ld) = p["primal_rcd"], p["dual_rcd"]
    t = f"{FACEOFF_TARGET:g}"
    if not math.isnan(tp) and not math.isnan(td):
        ratio = td / tp
        text = f"passes to {t}: primal {tp:.3g}, dual {td:.3g} (dual/primal {ratio:.3g})"
    elif math.isnan(tp) and math.isnan(td):
        ratio = ld / lp if lp > 0 else math.inf
        text = (f"neither reaches {t} (primal {xp:.3g} passes, dual {xd:.3g}); final "
                f"(P − P*)/|P*|: primal {lp:.2g}, dual {ld:.2g}")
        return ("primal" if ld > lp else "dual" if lp > ld else "tie"), ratio, text
    elif math.isnan(td):
        ratio = xd / tp
        text = f"passes to {t}: primal {tp:.3g}, dual > {xd:.3g} (not reached)"
    else:
        ratio = td / xp
        text = f"passes to {t}: primal > {xp:.3g} (not reached), dual {td:.3g}"
    faster = "primal" if ratio > TIE else "dual" if ratio < 1 / TIE else "tie"
    return faster, ratio, text


def _faceoff(ctx: _Context) -> list[Row]:
    from pdsparse.papers import faceoff_values as fv

    fo = ctx.config["faceoff"]
    rows = _faceoff_table1(ctx, fo, fv)
    rows += _faceoff_figure1(ctx, fo, fv)
    rows += _faceoff_figure2(ctx, fo)
    rows += _faceoff_figure3(fo)
    return rows


def _faceoff_table1(ctx: _Context, fo: Mapping, fv) -> list[Row]:
    P, out = "faceoff", "table1"
    skipped = ctx.skipped_data("Table 1")
    table = ctx.read_csv("tables", "faceoff", "table1.csv")
    rows = []
    for name in fo["table1"]["datasets"]:
        paper = fv.TABLE1.get(name)
        label = f"Table 1: {paper.paper_name if paper else name}"
        printed = paper.printed if paper else {}
        if name in skipped:
            rows.append(_not_run(P, out, label, skipped[name], ", ".join(
                f"{TABLE1_NAMES.get(k, k)} {v}" for k, v in printed.items())))
            continue
        mine = None if table is None else table[table["dataset"] == name]
        if mine is None or mine.empty:
            rows.append(_not_run(P, out, label, _missing("results/tables/faceoff/table1.csv")))
            continue
        conf = mine[mine["setting"] == "configured"].iloc[0]
        if paper is None:
            rows.append(Row(P, out, f"{label} (not in the paper)",
                            f"stand-in data: {name} is not a data set of the paper's Table 1",
                            "—", f"C_P {_n(conf['C_P'])}, C_D {_n(conf['C_D'])}, T_P/T_D "
                            f"{conf['T_P_over_T_D']:.3g}", NOT_RUN, "no printed row"))
            continue
        shape = ("d", "n", "nnz", "density")
        same = all(fv.TABLE1_PRECISION[c].matches(conf[c], paper.value(c)) for c in shape)
        rows.append(Row(
            P, out, f"{label}: d, n, ‖X‖₀, density", "yes" if same else
            f"stand-in data: {name} differs from the paper's {paper.paper_name}",
            ", ".join(printed[c] for c in shape),
            f"{_n(conf['d'])}, {_n(conf['n'])}, {_n(conf['nnz'])}, {_pct(conf['density'])}",
            "yes" if same else "no"))
        for col, what in (("C_P", "C_P (eq. 16)"), ("C_D", "C_D (eq. 16)"),
                          ("T_P_over_T_D", "T_P/T_D (eq. 15, importance sampling)")):
            prec = fv.TABLE1_PRECISION[col]
            settings = []
            for _, r in mine.iterrows():
                ok = prec.matches(r[col], paper.value(col))
                settings.append((r["setting"], f"{r['normalization']}, β = {r['beta']:g}",
                                 r[col], ok))
            ours = "; ".join(f"{v:.3g} ({s}{', ✓' if ok else ''})"
                             for _, s, v, ok in settings)
            conf_ok = settings[0][3]
            other = [s for kind, s, _, ok in settings if ok and kind != "configured"]
            if conf_ok:
                grade, reason = "yes", "at the printed precision, configured setting"
            elif other:
                grade = "partly"
                reason = (f"matches only under {' and '.join(other)}, not the configured "
                          f"{settings[0][1]}")
            else:
                grade, reason = "no", "no setting matches at the printed precision"
            rows.append(Row(P, out, f"{label}: {what}", "yes" if same else "stand-in data",
                            printed[col], ours, grade, reason))
    return rows


def _faceoff_figure1(ctx: _Context, fo: Mapping, fv) -> list[Row]:
    P, out = "faceoff", "figure1"
    skipped = ctx.skipped_data("Figure 1")
    synthetic = fo.get("synthetic") or {}
    rows = []
    for letter, panel in sorted((fo.get("figure1") or {}).get("panels", {}).items()):
        name = panel["dataset"]
        claim, sentence = fv.FIGURE1_CLAIMS.get(letter, (None, "no claim for this panel"))
        label = f"Figure 1{letter}: {panel.get('title') or name}"
        if name in skipped:
            rows.append(_not_run(P, out, label, skipped[name], sentence))
            continue
        df = ctx.read_parquet("faceoff", f"figure1{letter}.parquet")
        if df is None:
            rows.append(_not_run(P, out, label, _missing(f"results/faceoff/figure1{letter}"
                                                         ".parquet"), sentence))
            continue
        passes = _passes(df, FACEOFF_TARGET)
        data = "yes" if name not in synthetic else (
            f"yes (generated {synthetic[name]['kind']}; the paper does not give its sizes)")
        if len(passes) < 2:
            rows.append(Row(P, out, label, data, sentence, "the config runs no primal RCD / "
                            "dual RCD (fixed step) pair with importance sampling", NOT_RUN))
            continue
        faster, ratio, text = _faster(passes)
        if claim is None:
            grade, reason = NOT_RUN, "the paper has no such panel"
        elif faster == claim:
            grade, reason = "yes", f"{faster} RCD faster"
        elif faster == "tie":
            grade, reason = "partly", f"a tie (within {TIE}×), the paper: {claim} faster"
        else:
            grade, reason = "no", f"{faster} RCD faster, the paper: {claim}"
        printed = fv.TABLE1.get(name)
        if grade == "yes" and printed is not None and not math.isnan(ratio):
            predicted = printed.T_P_over_T_D  # passes primal / dual the paper's theory gives
            measured = 1.0 / ratio
            if not (predicted / TP_TD_FACTOR <= measured <= predicted * TP_TD_FACTOR):
                grade = "partly"
                reason += (f", but by primal/dual = {measured:.2g} where Table 1's T_P/T_D "
                           f"= {predicted:g} predicts it")
        rows.append(Row(P, out, label, data, sentence, text, grade, reason))
    return rows


def _faceoff_figure2(ctx: _Context, fo: Mapping) -> list[Row]:
    import pandas as pd

    from pdsparse.config import l2_tag
    from pdsparse.data.prepare import Recipe
    from pdsparse.papers.faceoff import figure2_cells
    from pdsparse.papers.faceoff_values import FIGURE2_CLAIM

    P, out = "faceoff", "figure2"
    cells = figure2_cells(fo["figure2"])
    df = ctx.read_parquet("faceoff", "figure2.parquet")
    if not cells:
        return []
    if df is None:
        return [_not_run(P, out, "Figure 2", _missing("results/faceoff/figure2.parquet"),
                         FIGURE2_CLAIM)]
    recipe = Recipe(fo["normalization"]).tag()
    theory, measured, texts = {}, {}, {}
    for c in cells:
        stats = ctx.path("stats", f"{c.name}__{recipe}__l2-{l2_tag(fo['l2'])}__beta-"
                         f"{float(fo['beta']):g}.parquet")
        passes = _passes(df[df["dataset"] == c.name], FACEOFF_TARGET)
        if len(passes) < 2 or not stats.is_file():
            continue
        ratio_t = float(pd.read_parquet(stats)["T_P_over_T_D"].iloc[0])
        theory[c] = "primal" if ratio_t < 1 / TIE else "dual" if ratio_t > TIE else "tie"
        measured[c] = _faster(passes)[0]
        texts[c] = f"n = {c.n}, α = {c.alpha:,}: {measured[c]} (T_P/T_D = {ratio_t:.2g})"
    if not measured:
        return [_not_run(P, out, "Figure 2", "not run: no primal/dual pair or statistics "
                         "in the results", FIGURE2_CLAIM)]
    d = cells[0].d
    rows = []
    checks = [
        ("Figure 2: faster method = the theory's (T_P/T_D)",
         "the method with the smaller total complexity T_P or T_D (eq. 15) is faster",
         lambda c: theory[c]),
        (f"Figure 2: n ≤ d, α < d² ⇒ primal faster (d = {d})", FIGURE2_CLAIM,
         lambda c: "primal" if c.n <= c.d and c.alpha < c.d ** 2 else None),
        (f"Figure 2: α ≥ d² ⇒ dual faster (d = {d})", FIGURE2_CLAIM,
         lambda c: "dual" if c.alpha >= c.d ** 2 else None),
    ]
    for item, sentence, expect in checks:
        chosen = [c for c in measured if expect(c) is not None]
        if not chosen:
            continue
        ok = [measured[c] == expect(c) for c in chosen]
        wrong = [texts[c] for c, good in zip(chosen, ok, strict=True) if not good]
        grade = _grade(ok, half_is_partly=True)
        rows.append(Row(P, out, item, "yes (generated as Theorem 9 describes)", sentence,
                        f"as expected in {_count(ok)} cells" + (
                            "; not in: " + "; ".join(wrong) if wrong else ""),
                        grade, f"{_count(ok)} cells as the paper says"))
    return rows


def _faceoff_figure3(fo: Mapping) -> list[Row]:
    import numpy as np

    from pdsparse.plotting import corollary6_threshold, r_grid
    from pdsparse.stats import R

    f3 = fo["figure3"]
    n = int(f3["n"])
    grid = r_grid(n, d_points=int(f3["d_points"]), alpha_points=int(f3["alpha_points"]),
                  d_max=f3.get("d_max"))
    thr = corollary6_threshold(n)
    beyond = grid.R[grid.alpha >= thr, :].compressed()
    d_big = thr  # Corollary 6: every alpha once d >= n^2 + 3n
    alphas = np.unique(np.geomspace(d_big, n * d_big, 200).astype(np.int64))
    at_d = np.asarray(R(alphas, np.full_like(alphas, d_big), n), dtype=float)
    worst = max(float(beyond.max()) if beyond.size else -math.inf, float(at_d.max()))
    grade = "yes" if worst <= 1 + R_TOL else "no"
    ours = (f"max R = {float(beyond.max()):.4g} over the plotted α ≥ n² + 3n"
            if beyond.size else "no plotted α ≥ n² + 3n") + \
        f"; max R = {float(at_d.max()):.4g} at d = n² + 3n = {d_big:,} (n = {n:,})"
    return [Row("faceoff", "figure3", "Figure 3: R(α, d, n) ≤ 1 for large d, α",
                "yes (from the formulas, no data)",
                "appendix: for large enough d all R(α, d, n) < 1 (Corollary 6; Theorem 5 for "
                "α ≥ n² + 3n)", ours, grade, "R ≤ 1 beyond both thresholds"
                if grade == "yes" else "R > 1 beyond a threshold")]


# ------------------------------------------------------------------------------ speedups


@dataclass
class _Race:
    """One problem of a speed claim: the base solver against every other configuration.

    ``target``: the tightest relative objective (P - P*)/P* of the config's targets the base
    reached (None: none); ``margins``: config -> (the base's speedup over it at ``target``,
    ``">="`` when that config never got there: a lower bound); ``levels``: config -> the
    lowest (P - P*)/P* within ``budget``, the kernel time every configuration ran."""

    data: str
    experiment: str
    base: str
    target: float | None
    margins: dict[str, tuple[float, str]]
    levels: dict[str, float]
    base_config: str
    budget: float

    def closest(self) -> tuple[str, float, str]:
        """The other configuration nearest to the base: (config, speedup, bound)."""
        config = min(self.margins, key=lambda c: self.margins[c][0])
        return config, *self.margins[config]

    def best_other(self) -> tuple[str, float]:
        others = {c: v for c, v in self.levels.items() if c != self.base_config}
        config = min(others, key=others.get)
        return config, others[config]

    @property
    def ahead(self) -> bool:
        """The base is faster than every other configuration to ``target``; without a
        target, lowest at the end of the common budget."""
        if self.target is not None:
            return bool(self.margins) and self.closest()[1] > 1
        return bool(self.levels) and self.levels[self.base_config] < self.best_other()[1]

    def text(self) -> str:
        if self.target is not None:
            parts = [f"{_x(v, b)} over {c}" for c, (v, b) in
                     sorted(self.margins.items(), key=lambda kv: kv[1][0])]
            return f"at (P − P*)/P* ≤ {self.target:g}: {self.base} " + ", ".join(parts)
        parts = [f"{c} {v:.2g}" for c, v in sorted(self.levels.items(), key=lambda kv: kv[1])]
        return (f"{self.base} reaches no target; lowest (P − P*)/P* within "
                f"{self.budget:.3g} s: " + ", ".join(parts))

    def short(self) -> str:
        """One clause for a row over several problems."""
        if self.target is not None:
            config, value, bound = self.closest()
            if value > 1:
                return f"{self.data}: {_x(value, bound)} over {config} (to {self.target:g})"
            return f"{self.data}: {_x(1 / value)} behind {config} (to {self.target:g})"
        config, level = self.best_other()
        return (f"{self.data}: {self.base} reaches no target, {self.base_config} at "
                f"{self.levels[self.base_config]:.2g} against {config} at {level:.2g}")


def _races(ctx: _Context, paper: str, experiments: Iterable[str], names: Mapping[str, str],
           base: str, targets: Sequence[float]) -> list[_Race] | None:
    """A :class:`_Race` per (data set, experiment) of the aggregates
    ``results/<paper>/<experiment>.parquet`` (times to target as in the speedup tables,
    :func:`pdsparse.speedup.speedup_table`); None when no aggregate exists."""
    import pandas as pd

    from pdsparse.solvers import option_names
    from pdsparse.speedup import config_label, speedup_table

    frames = [f for f in (ctx.read_parquet(paper, f"{e}.parquet") for e in experiments)
              if f is not None]
    if not frames:
        return None
    df = pd.concat(frames, ignore_index=True)
    heads = df["problem"].astype(str).str.split("__", n=1).str[0]
    df["data"] = [names.get(h, h) for h in heads]
    df["config"] = [config_label(r, option_names()) for r in df.to_dict("records")]
    table = speedup_table(df, base, targets, option_names(), by=("data", "experiment"))
    races = []
    for (data, experiment), rows in table.groupby(["data", "experiment"], sort=False):
        runs = df[(df["data"] == data) & (df["experiment"] == experiment)]
        bases = rows[rows["solver"] == base]
        if bases.empty or (rows["solver"] != base).sum() == 0:
            continue  # no base, or nothing to race it against
        reached = [t for t in targets if bases[f"time_{t:g}"].notna().any()]
        target = min(reached) if reached else None
        margins = {}
        if target is not None:
            for _, r in rows[rows["solver"] != base].iterrows():
                bound = r[f"bound_{target:g}"]
                margins[str(r["config"])] = (float(r[f"speedup_{target:g}"]),
                                             bound if isinstance(bound, str) else "")
        budget = float(runs.groupby("config")["time_s"].max().min())
        within = runs[runs["time_s"] <= budget]
        levels = within.groupby(["config", "seed"])["rel_subopt"].min().groupby(
            level="config").median()
        races.append(_Race(data, experiment, base, target, margins,
                           {str(c): float(v) for c, v in levels.items()},
                           str(bases["config"].iloc[0]), budget))
    return races


def _display_names(cfg: Mapping) -> dict[str, str]:
    """``<data set>+<recipe tag>`` (a problem tag's head) -> the config's display name."""
    from pdsparse.data.prepare import Recipe

    names = {}
    for name, entry in cfg["datasets"].items():
        source = entry["source"]
        raw = source.get("registry") or source["generator"]["name"]
        names[f"{raw}+{Recipe(**dict(entry.get('recipe') or {})).tag()}"] = name
    return names


def _data_note(cfg: Mapping, names: Iterable[str], status: Mapping[str, str]) -> str:
    """The reproduced column of a row over several data sets: yes when all are the paper's,
    else the stand-ins named."""
    stand_ins = [n for n in dict.fromkeys(names) if not status.get(n, "").startswith("yes")]
    if not stand_ins:
        return "yes"
    return "stand-in data: " + ", ".join(
        f"{n} ({_source_kind(cfg['datasets'].get(n, {}))} for "
        f"{cfg['datasets'].get(n, {}).get('paper', '—')})" for n in stand_ins)


# ------------------------------------------------------------------------------------ DGPD


def _dgpd(ctx: _Context) -> list[Row]:
    from pdsparse.papers import dgpd_values as dv
    from pdsparse.papers.dgpd import FIGURES

    cfg = ctx.config["dgpd"]
    status = _statuses(cfg, ctx.read_csv("tables", "dgpd", "table2.csv"),
                       ("train", "features"), dv.TABLE2, dv.TABLE2_COLUMNS)
    rows = _dgpd_table2(ctx, cfg, dv, status)
    base, targets = cfg["speedup"]["base"], [float(t) for t in cfg["speedup"]["targets"]]
    grid = [(float(lam), float(mu)) for lam in cfg["lambdas"] for mu in cfg["mus"]]
    number = {point: k for k, point in enumerate(FIGURES, start=1)}
    claim_all = dv.CLAIMS[1]
    all_races: list[_Race] = []
    for lam, mu in sorted(grid, key=lambda p: number.get(p, 99)):
        k = number.get((lam, mu))
        outputs = f"figure{k} speedup" if k else "speedup"
        label = (f"Figure {k} " if k else "") + f"(λ = {lam:g}, μ = {mu:g}): DGPD fastest"
        experiment = f"lam{lam:g}_mu{mu:g}"
        races = _races(ctx, "dgpd", [experiment], _display_names(cfg), base, targets)
        if not races:
            rows.append(_not_run("dgpd", outputs, label,
                                 _missing(f"results/dgpd/{experiment}.parquet"), claim_all))
            continue
        all_races += races
        ok = [r.ahead for r in races]
        rows.append(Row("dgpd", outputs, label,
                        _data_note(cfg, [r.data for r in races], status), claim_all,
                        f"fastest on {_count(ok)} data sets; " + "; ".join(
                            r.short() for r in races), _grade(ok),
                        f"DGPD ahead of every baseline on {_count(ok)} data sets"))
    need = 30 / CLAIM_FACTOR
    timed = [(r.closest()[1], r) for r in all_races if r.target is not None and r.margins]
    if all_races:
        value, race = max(timed, key=lambda vr: vr[0]) if timed else (math.nan, None)
        grade = ("yes" if value >= need else "partly" if value > 1 else "no") if timed \
            else "no"
        ours = (f"largest speedup of DGPD over the fastest baseline: {_x(value)} ({race.data},"
                f" {race.experiment}, to {race.target:g})" if timed else
                f"DGPD reaches none of the targets {targets} on any problem")
        rows.append(Row("dgpd", "speedup", "Abstract: up to 30× speedup",
                        _data_note(cfg, [r.data for r in all_races], status), dv.CLAIMS[0],
                        ours, grade,
                        f"at least {need:g}×" if grade == "yes" else
                        f"DGPD fastest somewhere, by less than {need:g}×" if grade == "partly"
                        else "DGPD is never the fastest"))
    return rows


def _table2_row(ctx: _Context, item: tuple, entry: Mapping, name: str, table, csv: str,
                skipped: set) -> tuple[Any, Row | None]:
    """Data set ``name``'s row of a paper's Table 2 results, or (None, the not-run Row that
    says why: its data unavailable, or the table not made). ``item``: (paper, output, label,
    the paper's value)."""
    paper, out, label, paper_value = item
    if entry["source"].get("registry") in skipped:
        return None, _not_run(paper, out, label, ctx.unavailable(entry["source"]["registry"]),
                              paper_value)
    mine = None if table is None else table[table["dataset"] == name]
    if mine is None or mine.empty:
        return None, _not_run(paper, out, label, _missing(csv), paper_value)
    return mine.iloc[0], None


def _dgpd_table2(ctx: _Context, cfg: Mapping, dv, status: Mapping[str, str]) -> list[Row]:
    P, out = "dgpd", "table2"
    table = ctx.read_csv("tables", "dgpd", "table2.csv")
    lam, mu = cfg["table2"]["lam"], cfg["table2"]["mu"]
    setting = f"at λ = {lam:g}, μ = {mu:g}"
    rows, covered = [], set()
    skipped = {name for _, name in ctx.skipped}
    cols = dv.TABLE2_COLUMNS
    for name, entry in cfg["datasets"].items():
        paper_row = entry.get("paper")
        printed = dict(zip(cols, dv.TABLE2.get(paper_row, ()), strict=False))
        label = f"Table 2: {name}" + (f" for {paper_row}" if paper_row else "")
        paper_value = _dgpd_nz_text(printed) if printed else "—"
        r, not_run = _table2_row(ctx, (P, out, label, paper_value), entry, name, table,
                                 "results/tables/dgpd/table2.csv", skipped)
        if not_run is not None:
            rows.append(not_run)
            continue
        covered.add(paper_row)
        ours = _dgpd_nz_text(r)
        if not printed:
            rows.append(Row(P, out, label, f"stand-in data: {_source_kind(entry)}", "—", ours,
                            NOT_RUN, "no printed row"))
            continue
        ok, notes = [], []
        fractions = zip(("primal", "dual"), _nz_fractions(r), _nz_fractions(printed),
                        strict=True)
        for what, mine_f, paper_f in fractions:
            factor = mine_f / paper_f if paper_f > 0 else math.inf
            ok.append(1 / NZ_FACTOR <= factor <= NZ_FACTOR)
            notes.append(f"{what} {_pct(mine_f)} vs {_pct(paper_f)} ({factor:.2g}×)")
        rows.append(Row(P, out, f"{label}: nonzeros {setting}", status[name], paper_value, ours,
                        _grade(ok), "fractions of nonzero variables: " + "; ".join(notes)))
    for paper_row in dv.TABLE2:
        if paper_row not in covered and not any(r.item.endswith(f"for {paper_row}")
                                                for r in rows):
            rows.append(_not_run(
                P, out, f"Table 2: {paper_row}",
                "not run: no data set of this config stands in for it; `--configfile "
                "config/paper.yaml` runs it (with its raw data: a mirror or data.download: "
                "true)", _dgpd_nz_text(dict(zip(cols, dv.TABLE2[paper_row], strict=True)))))
    return rows


def _nz_fractions(r: Mapping) -> tuple[float, float]:
    """Nonzero primal variables / (features x classes), dual / (train x classes)."""
    k = max(float(r["classes"]), 1.0) if float(r["classes"]) > 2 else 1.0
    return (float(r["nz_primal"]) / (float(r["features"]) * k),
            float(r["nz_dual"]) / (float(r["train"]) * k))


def _dgpd_nz_text(r: Mapping) -> str:
    fp, fd = _nz_fractions(r)
    return (f"#nz-primal {_n(r['nz_primal'])} ({_pct(fp)}), #nz-dual {_n(r['nz_dual'])} "
            f"({_pct(fd)}); {_n(r['features'])} features, {_n(r['train'])} train, "
            f"{_n(r['classes'])} classes")


# ----------------------------------------------------------------------------------- PDBFW


def _pdbfw(ctx: _Context) -> list[Row]:
    from pdsparse.papers import pdbfw_values as pv

    cfg = ctx.config["pdbfw"]
    status = _statuses(cfg, ctx.read_csv("tables", "pdbfw", "table2.csv"),
                       ("samples", "features"), pv.TABLE2, pv.TABLE2_COLUMNS)
    rows = _pdbfw_table2(ctx, cfg, pv, status)
    rows += _pdbfw_figure1(ctx, cfg, pv, status)
    rows += _pdbfw_figure3(ctx, cfg, pv, status)
    rows += _pdbfw_figure2(ctx, cfg, pv)
    rows += _pdbfw_table1(ctx, pv)
    return rows


def _pdbfw_table2(ctx: _Context, cfg: Mapping, pv, status: Mapping[str, str]) -> list[Row]:
    P, out = "pdbfw", "table2"
    table = ctx.read_csv("tables", "pdbfw", "table2.csv")
    radius_paper = float(pv.SETTING["radius"])
    rows, covered = [], set()
    skipped = {name for _, name in ctx.skipped}
    for name, entry in cfg["datasets"].items():
        paper_row = entry.get("paper")
        printed = dict(zip(pv.TABLE2_COLUMNS, pv.TABLE2.get(paper_row, ()), strict=False))
        paper_value = (f"{_n(printed['sparsity'])} nonzeros of {_n(printed['features'])} "
                       f"({printed['sparsity_ratio']:g}) at r = {radius_paper:g}"
                       if printed else "—")
        label = f"Table 2: {name}" + (f" for {paper_row}" if paper_row else "")
        r, not_run = _table2_row(ctx, (P, out, label, paper_value), entry, name, table,
                                 "results/tables/pdbfw/table2.csv", skipped)
        if not_run is not None:
            rows.append(not_run)
            continue
        covered.add(paper_row)
        active = bool(r["active"]) if str(r["active"]) not in ("nan", "") else False
        ours = (f"{_n(r['sparsity'])} nonzeros of {_n(r['features'])} "
                f"({r['sparsity_ratio']:.3g}) at r = {float(r['radius']):g}"
                f"{'' if active else ', ball not active at x*'}")
        if not printed:
            rows.append(Row(P, out, label, f"stand-in data: {_source_kind(entry)}", "—", ours,
                            NOT_RUN, "no printed row"))
            continue
        ratio_ok = _close(r["sparsity_ratio"], printed["sparsity_ratio"], SPARSITY_RTOL)
        same_r = math.isclose(float(r["radius"]), radius_paper)
        if ratio_ok and same_r and active:
            grade, reason = "yes", f"ratio within {SPARSITY_RTOL:.0%} at the paper's radius"
        elif ratio_ok:
            grade = "partly"
            reason = (f"ratio within {SPARSITY_RTOL:.0%}, at r = {float(r['radius']):g} chosen "
                      f"for it; the paper: r = {radius_paper:g}" if not same_r else
                      "ratio within tolerance but the ball is not active at x*")
        else:
            grade = "no"
            reason = (f"ratio {r['sparsity_ratio']:.3g} against {printed['sparsity_ratio']:g}, "
                      f"off by more than {SPARSITY_RTOL:.0%}")
        rows.append(Row(P, out, label, status[name], paper_value, ours, grade, reason))
    for paper_row, values in pv.TABLE2.items():
        if paper_row not in covered and not any(r.item.endswith(f"for {paper_row}")
                                                for r in rows):
            printed = dict(zip(pv.TABLE2_COLUMNS, values, strict=True))
            rows.append(_not_run(
                P, out, f"Table 2: {paper_row}",
                "not run: no data set of this config stands in for it; `--configfile "
                "config/paper.yaml` runs it (with its raw data: a mirror or data.download: "
                "true)", f"{_n(printed['sparsity'])} nonzeros of {_n(printed['features'])} "
                f"({printed['sparsity_ratio']:g}) at r = {radius_paper:g}"))
    return rows


def _pdbfw_figure1(ctx: _Context, cfg: Mapping, pv, status: Mapping[str, str]) -> list[Row]:
    P, outs = "pdbfw", "figure1 speedup"
    base = cfg["speedup"]["base"]
    targets = [float(t) for t in cfg["speedup"]["targets"]]
    need = 10 / CLAIM_FACTOR
    main = _mu_experiment(cfg["mu"])
    races = _races(ctx, "pdbfw", [main], _display_names(cfg), base, targets)
    if races is None:
        return [_not_run(P, outs, "Figure 1: ≈10× over every other method",
                         _missing(f"results/pdbfw/{main}.parquet"), pv.CLAIMS[0])]
    rows, holds = [], []
    for race in races:
        duke = cfg["datasets"].get(race.data, {}).get("paper") == PDBFW_DUKE
        below = [f"{c} ({_x(v, b)})" for c, (v, b) in race.margins.items() if not v >= need]
        if duke:
            paper_value = "no ≈10× speedup on duke, the smallest set"
            grade = "no" if race.target is not None and not below else "yes"
            reason = (f"≥ {need:g}× over every method, where the paper reports none"
                      if grade == "no" else f"below {need:g}× over " + (
                          ", ".join(below) if below else "the methods (no target reached)"))
        else:
            paper_value = "≈10× over every other method"
            if race.target is None:
                grade = "partly" if race.ahead else "no"
                reason = (f"{base} reaches no target; " + (
                    "lowest at the end of the budget" if race.ahead else
                    f"{race.best_other()[0]} lower at the end of the budget"))
            else:
                met = len(race.margins) - len(below)
                grade = "yes" if not below else "partly" if met else "no"
                reason = (f"≥ {need:g}× over every method" if not below else
                          f"below {need:g}× over " + ", ".join(below))
            holds.append(grade == "yes")
        rows.append(Row(P, outs, f"Figure 1: {race.data}", status.get(race.data, "—"),
                        paper_value, race.text(), grade, reason))
    if holds:
        rows.append(Row(P, outs, "Figure 1: ≈10× over all methods, except on duke",
                        _data_note(cfg, [r.data for r in races], status), pv.CLAIMS[0],
                        f"holds on {_count(holds)} data sets (duke aside)", _grade(holds),
                        f"≥ {need:g}× over every baseline on {_count(holds)} sets"))
    return rows


def _mu_experiment(mu: Any) -> str:
    """``mu10_n`` for mu = "10/n", as :mod:`pdsparse.papers.pdbfw` names the experiments."""
    return "mu" + str(mu).replace("/", "_").replace(".", "p")


def _pdbfw_figure3(ctx: _Context, cfg: Mapping, pv, status: Mapping[str, str]) -> list[Row]:
    P, out = "pdbfw", "figure3"
    fig3 = cfg.get("figure3") or {}
    sets = [n for n in fig3.get("datasets", []) if n in cfg["datasets"]]
    if not sets:
        return []
    mus = list(dict.fromkeys(map(str, fig3.get("mus", []))))
    experiments = [_mu_experiment(m) for m in mus]
    races = _races(ctx, "pdbfw", experiments, _display_names(cfg), cfg["speedup"]["base"],
                   [float(t) for t in cfg["speedup"]["targets"]]) or []
    rows = []
    skipped = {name for _, name in ctx.skipped}
    for name in sets:
        entry = cfg["datasets"][name]
        label = f"Figure 3: {name} for {entry.get('paper')}, μ ∈ {{{', '.join(mus)}}}"
        if entry["source"].get("registry") in skipped:
            rows.append(_not_run(P, out, label, ctx.unavailable(entry["source"]["registry"]),
                                 pv.CLAIMS[3]))
            continue
        mine = sorted((r for r in races if r.data == name and r.experiment in experiments),
                      key=lambda r: experiments.index(r.experiment))
        if not mine:
            rows.append(_not_run(P, out, label, _missing("results/pdbfw/mu*.parquet"),
                                 pv.CLAIMS[3]))
            continue
        ok = [r.ahead for r in mine]
        notes = [f"μ = {mus[experiments.index(r.experiment)]}: " +
                 r.short().split(": ", 1)[1] for r in mine]
        rows.append(Row(P, out, label, status.get(name, "—"), pv.CLAIMS[3],
                        f"PDBFW fastest at {_count(ok)} values of μ; " + "; ".join(notes),
                        _grade(ok), f"ahead of every baseline at {_count(ok)} values of μ"))
    return rows


def _pdbfw_figure2(ctx: _Context, cfg: Mapping, pv) -> list[Row]:
    P, out = "pdbfw", "figure2"
    trace = cfg.get("trace")
    if not trace:
        return []
    base = cfg["speedup"]["base"]
    targets = [float(t) for t in cfg["speedup"]["targets"]]
    gen = trace["generator"]
    status = (f"yes (generated {gen['kind']} as Sec. 5.1 describes, "
              f"{dict(gen.get('params') or {})})")
    rows = []
    for rank in trace["ranks"]:
        label = f"Figure 2: trace-norm ball, rank {rank}"
        experiment = f"trace_rank{int(rank)}"
        races = _races(ctx, "pdbfw", [experiment], {}, base, targets)
        if not races:
            rows.append(_not_run(P, out, label, _missing(f"results/pdbfw/{experiment}"
                                                         ".parquet"), pv.CLAIMS[2]))
            continue
        race = races[0]
        if race.target is not None:
            config = race.closest()[0]
        else:
            config = race.best_other()[0]
        grade = "yes" if race.ahead else "no"
        how = "to its tightest target" if race.target is not None else \
            "at the end of the budget (no target reached)"
        rows.append(Row(P, out, label, status, pv.CLAIMS[2], race.text(), grade,
                        f"ahead of every baseline {how}" if race.ahead else
                        f"behind {config} {how}"))
    return rows


def _pdbfw_table1(ctx: _Context, pv) -> list[Row]:
    import numpy as np
    import pandas as pd

    P, out = "pdbfw", "benchmark"
    path = (ctx.benchmarks or ctx.path("benchmarks")) / "pdbfw_table1.csv"
    if not path.is_file():
        return [_not_run(P, out, "Table 1: per-iteration cost",
                         "not run: a benchmark outside the default run; to get it: "
                         "`snakemake --cores 2 benchmark_pdbfw_table1`",
                         "PDBFW O(ns) per iteration, the others O(nd)")]
    df = pd.read_csv(path)
    rows = []
    for method, (paper_name, exp_d, exp_s) in PDBFW_TABLE1_SOLVERS.items():
        cost = pv.TABLE1.get(paper_name, ("?", "?"))[0]
        fits, ok = [], []
        for (series, vary), g in df[df["method"] == method].groupby(["series", "vary"]):
            g = g[np.isfinite(g["seconds"])]
            if len(g) < 2:
                continue
            slope = float(np.polyfit(np.log(g[vary].to_numpy(float)),
                                     np.log(g["seconds"].to_numpy(float)), 1)[0])
            expected = exp_d if vary == "d" else exp_s
            ok.append(abs(slope - expected) <= SLOPE_TOL)
            fits.append(f"{series} vs {vary}: {slope:.2f} (cost: {expected:g})")
        if not fits:
            continue
        rows.append(Row(P, out, f"Table 1: {paper_name} per iteration {cost}",
                        "yes (benchmark on planted sparse synthetic problems)",
                        f"{cost}: slope {exp_d:g} in d, {exp_s:g} in s",
                        "log-log slopes of the time per iteration: " + "; ".join(fits),
                        _grade(ok), f"{_count(ok)} slopes within {SLOPE_TOL:g}"))
    return rows


# ----------------------------------------------------------------------------------- build

_BUILDERS: dict[str, Callable[[_Context], list[Row]]] = {
    "faceoff": _faceoff, "dgpd": _dgpd, "pdbfw": _pdbfw,
}


def skipped_items(config: Mapping, registry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(item, data set) pairs the papers' plans drop for lack of data, as the workflow
    decides it (``data.raw_dir``, the mirror, ``data.download``)."""
    from pdsparse.config import data_availability
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.papers import plans

    data = config.get("data", {})
    raw_dir = data.get("raw_dir", "data/raw")
    mirror = resolve_mirror(data.get("mirror"), must_exist=False)
    download = bool(data.get("download", False))

    def available(name: str) -> bool:
        return data_availability(registry[name], raw_dir, mirror, download) is not None

    return [s for plan in plans(config, registry, available).values() for s in plan.skipped]


def scorecard(config: Mapping, results: PathLike = "results",
              registry: Mapping[str, Any] | None = None,
              skipped: Iterable[tuple[str, str]] | None = None,
              benchmarks: PathLike | None = None) -> list[Row]:
    """Every paper item of the papers in ``config`` as a :class:`Row`, from the files in
    ``results`` (whatever exists: an item without its result file reads ``not run``).

    ``registry`` defaults to ``data.registry`` of the config; ``skipped`` (item, data set)
    to what the plans drop for lack of data (:func:`skipped_items`); ``benchmarks`` to
    ``<results>/benchmarks``.
    """
    from pdsparse.data.registry import load_registry

    if registry is None:
        registry = load_registry(config["data"]["registry"])
    if skipped is None:
        skipped = skipped_items(config, registry)
    ctx = _Context(config, Path(results), registry, list(skipped),
                   Path(benchmarks) if benchmarks else None)
    rows: list[Row] = []
    for paper, build in _BUILDERS.items():
        if paper in config:
            rows += build(ctx)
    return rows


# --------------------------------------------------------------------------------- writing


def summary(rows: Sequence[Row]) -> str:
    counts = {k: sum(r.agreement == k for r in rows) for k in ("yes", "partly", "no", NOT_RUN)}
    return (f"{len(rows)} items: {counts['yes']} agree, {counts['partly']} partly, "
            f"{counts['no']} do not, {counts[NOT_RUN]} not run or without a printed value")


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(rows: Sequence[Row]) -> str:
    papers = {r.paper for r in rows}
    lines = [
        "# Reproduction scorecard",
        "",
        "One row per paper item, computed by `pdsparse scorecard` from the workflow's results "
        "and the papers' printed values (`src/pdsparse/papers/*_values.py`); regenerate it, "
        "never edit it. Papers: "
        + "; ".join(f"{PAPER_TITLES[p]}: {c}" for p, c in PAPER_CITATIONS.items() if p in papers)
        + ". Agreement is judged with the tolerances of `pdsparse.scorecard`:",
        "",
        *(f"- {text}" for text in TOLERANCES.values()),
        "",
        f"**{summary(rows)}.**",
        "",
        "| paper | item | reproduced | paper value | our value | agreement |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [PAPER_TITLES.get(r.paper, r.paper), r.item, r.reproduced, r.paper_value,
                 r.our_value, f"**{r.agreement}**" + (f": {r.reason}" if r.reason else "")]
        lines.append("| " + " | ".join(map(_md_cell, cells)) + " |")
    return "\n".join(lines) + "\n"


_COLOURS = {"yes": "#d9f2d9", "partly": "#fff0c2", "no": "#f8d0d0", NOT_RUN: "#e6e6e6"}
def to_html(rows: Sequence[Row]) -> str:
    esc = html.escape
    head = "".join(f"<th>{h}</th>" for h in ("paper", "item", "reproduced", "paper value",
                                              "our value", "agreement"))
    body = []
    for r in rows:
        colour = _COLOURS.get(r.agreement, "#fff")
        verdict = f"<b>{esc(r.agreement)}</b>" + (f": {esc(r.reason)}" if r.reason else "")
        body.append(
            f'<tr data-paper="{esc(r.paper)}"><td>{esc(PAPER_TITLES.get(r.paper, r.paper))}'
            f"</td><td>{esc(r.item)}</td><td>{esc(r.reproduced)}</td>"
            f"<td>{esc(r.paper_value)}</td><td>{esc(r.our_value)}</td>"
            f'<td style="background:{colour}">{verdict}</td></tr>')
    legend = "".join(f"<li>{esc(t)}</li>" for t in TOLERANCES.values())
    text = (f"<h1>Reproduction scorecard</h1>\n<p>One row per paper item, computed by "
            f"<code>pdsparse scorecard</code> from the results and the papers' printed values. "
            f"<b>{esc(summary(rows))}.</b></p>\n<p>Tolerances:</p><ul>{legend}</ul>\n"
            f'<table id="scorecard"><thead><tr>{head}</tr></thead>\n<tbody>\n'
            + "\n".join(body) + "\n</tbody></table>")
    from pdsparse.report import html_page

    # one screen wide (the report shows it in a frame): long cells wrap, URLs too
    style = ("table { width: 100%; font-size: 0.8em; } th { position: sticky; top: 0; } "
             "td { overflow-wrap: anywhere; } td:nth-child(1) { width: 4.5em; } "
             "td:nth-child(2) { width: 13%; } td:nth-child(6) { width: 17%; }")
    return html_page("Reproduction scorecard", text, style)


def write_scorecard(rows: Sequence[Row], out_md: PathLike | None = None,
                    out_csv: PathLike | None = None, out_html: PathLike | None = None) -> None:
    """Write the rows as Markdown, CSV (columns :data:`COLUMNS`) and HTML, atomically."""
    import pandas as pd

    from pdsparse.io import atomic_path

    if out_md:
        with atomic_path(out_md) as tmp:
            tmp.write_text(to_markdown(rows), encoding="utf-8")
    if out_csv:
        with atomic_path(out_csv) as tmp:
            pd.DataFrame([asdict(r) for r in rows], columns=list(COLUMNS)).to_csv(
                tmp, index=False)
    if out_html:
        with atomic_path(out_html) as tmp:
            tmp.write_text(to_html(rows), encoding="utf-8")


def read_rows(path: PathLike) -> list[Row]:
    """The rows of a scorecard CSV (:func:`write_scorecard`); [] if it does not exist."""
    import csv

    path = Path(path)
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return [Row(**{k: (v or "") for k, v in rec.items() if k in COLUMNS})
                for rec in csv.DictReader(fh)]


# ----------------------------------------------------------------------------------- report


def item_title(paper: str, name: str) -> str:
    """The report's subcategory of a figure or table: ``Figure 1``, ``Table 2``,
    ``Speedup table``; DGPD's figures with their (λ, μ)."""
    match = re.fullmatch(r"(figure|table)(\d+)", name)
    if match:
        title = f"{match[1].capitalize()} {match[2]}"
        if paper == "dgpd" and match[1] == "figure":
            from pdsparse.papers.dgpd import FIGURES

            k = int(match[2])
            if 1 <= k <= len(FIGURES):
                lam, mu = FIGURES[k - 1]
                title += f" (λ = {lam:g}, μ = {mu:g})"
        return title
    if name == "speedup":
        return "Speedup table"
    return name.replace("_", " ").capitalize()


def rows_of(rows: Iterable[Row], paper: str, name: str) -> list[Row]:
    return [r for r in rows if r.paper == paper and name in r.outputs.split()]


def labels(rows: Sequence[Row], paper: str, name: str) -> dict[str, str]:
    """Report labels of one figure or table: the item, and its scorecard rows summed up."""
    mine = rows_of(rows, paper, name)
    reproduced = sorted({"yes" if r.reproduced.startswith("yes") else
                         r.reproduced.split(":")[0] for r in mine})
    counts = {k: sum(r.agreement == k for r in mine) for k in ("yes", "partly", "no")}
    agreement = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "—"
    return {"item": item_title(paper, name),
            "reproduced": " / ".join(reproduced) or "—",
            "agreement": agreement}


def _rst(text: str) -> str:
    """Plain text for an RST paragraph: markup characters escaped."""
    return re.sub(r"([\\*`|_\[\]<>])", r"\\\1", str(text))


def caption_rst(rows: Sequence[Row], paper: str, name: str) -> str:
    """The measured part of a report caption: the scorecard rows of one figure or table."""
    mine = rows_of(rows, paper, name)
    if not mine:
        return ("**Measured:** no scorecard row for this item yet (run `snakemake` to make "
                "results/SCORECARD.md).")
    lines = ["**What we measured, and whether it agrees** (scorecard rows; tolerances in "
             "results/SCORECARD.md):", ""]
    for r in mine:
        lines += [f"- **{_rst(r.item)}** — reproduced: {_rst(r.reproduced)}. "
                  f"Paper: {_rst(r.paper_value)}. Ours: {_rst(r.our_value)}. "
                  f"Agreement: **{_rst(r.agreement)}**"
                  + (f" ({_rst(r.reason)})" if r.reason else "") + ".", ""]
    return "\n".join(lines)
