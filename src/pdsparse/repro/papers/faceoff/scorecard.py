"""Scorecard rows of Face-Off (Csiba & Richtárik): Table 1 and Figures 1-3."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pdsparse.repro.scoring import (
    NOT_RUN,
    Context,
    Row,
    count_text,
    grade_of,
    missing_note,
    not_run_row,
    num,
    pct,
)

# Face-Off's tolerances (the scorecard's legend lists TOLERANCES).
FACEOFF_TARGET = 1e-6
"""Face-Off figures: passes over the data to (P - P*)/|P*| <= this are compared."""
TIE = 1.25
"""Face-Off figures: a ratio of passes within [1/TIE, TIE] is a tie (neither method faster)."""
TP_TD_FACTOR = 1.5
"""Face-Off Fig. 1d: the measured ratio of passes (primal / dual) matches Table 1's printed
T_P/T_D when within this factor of it."""
R_TOL = 1e-12
"""Face-Off Fig. 3: R <= 1 up to rounding."""

TOLERANCES = {
    "FACEOFF_TARGET": "Face-Off figures: passes to (P − P*)/|P*| ≤ 1e-6 are compared",
    "TIE": "a ratio of passes within [0.8, 1.25] is a tie",
    "TP_TD_FACTOR": "Fig. 1d: the ratio of passes within a factor 1.5 of Table 1's T_P/T_D",
}

TABLE1_NAMES = {"nnz": "‖X‖₀", "T_P_over_T_D": "T_P/T_D"}


def _passes(df, target: float) -> dict[str, tuple[float, float, float]]:
    """solver -> (passes to target or NaN, a lower bound: the run's length when cut by its
    budget, inf when it never gets there; final rel. subopt.), medians over seeds, for the
    paper's pair: primal RCD and dual RCD (fixed step), importance sampling."""
    from pdsparse.repro.speedup import time_to_target

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


def _short(x: float) -> str:
    """A run that did not reach the target: ``> its length`` (cut by its budget while still
    improving), or ``never`` (diverged, stalled, stopped at its tolerance: inf,
    :func:`pdsparse.repro.speedup.outcome`)."""
    return f"> {x:.3g}" if math.isfinite(x) else "never"


def _faster(p: dict) -> tuple[str, float, str]:
    """(faster method or "tie", ratio passes dual / passes primal, description)."""
    (tp, xp, lp), (td, xd, ld) = p["primal_rcd"], p["dual_rcd"]
    t = f"{FACEOFF_TARGET:g}"
    if not math.isnan(tp) and not math.isnan(td):
        ratio = td / tp
        text = f"passes to {t}: primal {tp:.3g}, dual {td:.3g} (dual/primal {ratio:.3g})"
    elif math.isnan(tp) and math.isnan(td):
        ratio = ld / lp if lp > 0 else math.inf
        text = (f"neither reaches {t} (primal {_short(xp)} passes, dual {_short(xd)}); final "
                f"(P − P*)/|P*|: primal {lp:.2g}, dual {ld:.2g}")
        return ("primal" if ld > lp else "dual" if lp > ld else "tie"), ratio, text
    elif math.isnan(td):
        ratio = xd / tp
        text = f"passes to {t}: primal {tp:.3g}, dual {_short(xd)} (not reached)"
    else:
        ratio = td / xp
        text = f"passes to {t}: primal {_short(xp)} (not reached), dual {td:.3g}"
    faster = "primal" if ratio > TIE else "dual" if ratio < 1 / TIE else "tie"
    return faster, ratio, text


def rows(ctx: Context) -> list[Row]:
    from pdsparse.repro.papers.faceoff import values as fv

    fo = ctx.config["faceoff"]
    rows = _faceoff_table1(ctx, fo, fv)
    rows += _faceoff_figure1(ctx, fo, fv)
    rows += _faceoff_figure2(ctx, fo)
    rows += _faceoff_figure3(fo)
    return rows


def _faceoff_table1(ctx: Context, fo: Mapping, fv) -> list[Row]:
    P, out = "faceoff", "table1"
    skipped = ctx.skipped_data("Table 1")
    table = ctx.read_csv("tables", "faceoff", "table1.csv")
    rows = []
    for name in fo["table1"]["datasets"]:
        paper = fv.TABLE1.get(name)
        label = f"Table 1: {paper.paper_name if paper else name}"
        printed = paper.printed if paper else {}
        if name in skipped:
            rows.append(not_run_row(P, out, label, skipped[name], ", ".join(
                f"{TABLE1_NAMES.get(k, k)} {v}" for k, v in printed.items())))
            continue
        mine = None if table is None else table[table["dataset"] == name]
        if mine is None or mine.empty:
            rows.append(not_run_row(P, out, label,
                                    missing_note("results/tables/faceoff/table1.csv")))
            continue
        conf = mine[mine["setting"] == "configured"].iloc[0]
        if paper is None:
            rows.append(Row(P, out, f"{label} (not in the paper)",
                            f"stand-in data: {name} is not a data set of the paper's Table 1",
                            "—", f"C_P {num(conf['C_P'])}, C_D {num(conf['C_D'])}, T_P/T_D "
                            f"{conf['T_P_over_T_D']:.3g}", NOT_RUN, "no printed row"))
            continue
        shape = ("d", "n", "nnz", "density")
        same = all(fv.TABLE1_PRECISION[c].matches(conf[c], paper.value(c)) for c in shape)
        rows.append(Row(
            P, out, f"{label}: d, n, ‖X‖₀, density", "yes" if same else
            f"stand-in data: {name} differs from the paper's {paper.paper_name}",
            ", ".join(printed[c] for c in shape),
            f"{num(conf['d'])}, {num(conf['n'])}, {num(conf['nnz'])}, {pct(conf['density'])}",
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


def _faceoff_figure1(ctx: Context, fo: Mapping, fv) -> list[Row]:
    P, out = "faceoff", "figure1"
    skipped = ctx.skipped_data("Figure 1")
    synthetic = fo.get("synthetic") or {}
    rows = []
    for letter, panel in sorted((fo.get("figure1") or {}).get("panels", {}).items()):
        name = panel["dataset"]
        claim, sentence = fv.FIGURE1_CLAIMS.get(letter, (None, "no claim for this panel"))
        label = f"Figure 1{letter}: {panel.get('title') or name}"
        if name in skipped:
            rows.append(not_run_row(P, out, label, skipped[name], sentence))
            continue
        df = ctx.read_parquet("faceoff", f"figure1{letter}.parquet")
        if df is None:
            rows.append(not_run_row(P, out, label, missing_note(f"results/faceoff/figure1{letter}"
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


def _faceoff_figure2(ctx: Context, fo: Mapping) -> list[Row]:
    import pandas as pd

    from pdsparse.data.prepare import Recipe
    from pdsparse.repro.config import l2_tag
    from pdsparse.repro.papers.faceoff.figures import figure2_cells
    from pdsparse.repro.papers.faceoff.values import FIGURE2_CLAIM

    P, out = "faceoff", "figure2"
    cells = figure2_cells(fo["figure2"])
    df = ctx.read_parquet("faceoff", "figure2.parquet")
    if not cells:
        return []
    if df is None:
        return [not_run_row(P, out, "Figure 2", missing_note("results/faceoff/figure2.parquet"),
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
        return [not_run_row(P, out, "Figure 2", "not run: no primal/dual pair or statistics "
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
        grade = grade_of(ok, half_is_partly=True)
        rows.append(Row(P, out, item, "yes (generated as Theorem 9 describes)", sentence,
                        f"as expected in {count_text(ok)} cells" + (
                            "; not in: " + "; ".join(wrong) if wrong else ""),
                        grade, f"{count_text(ok)} cells as the paper says"))
    return rows


def _faceoff_figure3(fo: Mapping) -> list[Row]:
    import numpy as np

    from pdsparse.repro.papers.faceoff.figures import corollary6_threshold, r_grid
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


