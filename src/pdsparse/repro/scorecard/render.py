"""The scorecard written out (Markdown, CSV, HTML) and read back, and its pieces for the
Snakemake report: item titles, labels and captions."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

from pdsparse.repro.papers import PAPERS, paper
from pdsparse.repro.scoring import (
    COLUMNS,
    INCONCLUSIVE,
    NOT_RUN,
    TOLERANCES,
    PathLike,
    Row,
)

PAPER_TITLES = {name: paper(name).TITLE for name in PAPERS}
PAPER_CITATIONS = {name: paper(name).CITATION for name in PAPERS}


def tolerances() -> dict[str, str]:
    """The scorecard's legend: the shared tolerances, then each paper's own (its scorecard
    module's ``TOLERANCES``), by name."""
    import importlib

    out = dict(TOLERANCES)
    for name in PAPERS:
        out.update(importlib.import_module(f"pdsparse.repro.papers.{name}.scorecard").TOLERANCES)
    return out


# --------------------------------------------------------------------------------- writing


def summary(rows: Sequence[Row]) -> str:
    counts = {k: sum(r.agreement == k for r in rows)
              for k in ("yes", "partly", "no", INCONCLUSIVE, NOT_RUN)}
    undecided = (f"{counts[INCONCLUSIVE]} inconclusive (the repeated runs straddle the "
                 "threshold), " if counts[INCONCLUSIVE] else "")
    return (f"{len(rows)} items: {counts['yes']} agree, {counts['partly']} partly, "
            f"{counts['no']} do not, {undecided}{counts[NOT_RUN]} not run or without a "
            "printed value")


NOTE_MIN_CHARS = 60
"""A "reproduced" text at least this long that several rows share (the how-to-get-it of a
data set that is not available) is printed once, under the table, and the rows point to it."""


def _factor_notes(rows: Sequence[Row]) -> tuple[list[str], list[str]]:
    """(each row's "reproduced" cell, the notes under the table): repeated long texts become
    "[n]" references, said once (one explanation would otherwise repeat on a dozen rows)."""
    from collections import Counter

    counts = Counter(r.reproduced for r in rows)
    notes: list[str] = []
    cells = []
    for r in rows:
        text = r.reproduced
        if counts[text] > 1 and len(text) >= NOTE_MIN_CHARS:
            if text not in notes:
                notes.append(text)
            head = text.split(":", 1)[0] if text.startswith("not run") else "see"
            cells.append(f"{head} [{notes.index(text) + 1}]")
        else:
            cells.append(text)
    return cells, notes


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


CELL_CHARS = 200
"""A Markdown cell longer than this is shortened to its first clause and a link to the row in
full below the table (cells of several hundred characters make the table unreadable)."""


def _short(text: str, link: str) -> str:
    """``text``, or its first clause (up to ``;`` or a sentence's end) within
    :data:`CELL_CHARS` and ``link``."""
    text = str(text)
    if len(text) <= CELL_CHARS:
        return text
    head = re.split(r"; |(?<=\.) ", text, maxsplit=1)[0]
    if len(head) > CELL_CHARS - 20:
        head = head[:CELL_CHARS - 20].rsplit(" ", 1)[0]
    return f"{head} … {link}"


def to_markdown(rows: Sequence[Row], provenance: str = "") -> str:
    """The scorecard as Markdown; ``provenance``: the sentence of
    :func:`pdsparse.repro.provenance.describe` on the results it was computed from (under the
    summary)."""
    papers = {r.paper for r in rows}
    lines = [
        "# Reproduction scorecard",
        "",
        "One row per paper item, computed by `pdsparse scorecard` from the workflow's results "
        "and the papers' printed values (`src/pdsparse/repro/papers/*/values.py`); regenerate it, "
        "never edit it. Papers: "
        + "; ".join(f"{PAPER_TITLES[p]}: {c}" for p, c in PAPER_CITATIONS.items() if p in papers)
        + ". Agreement is judged at the settings the papers print, with the tolerances of "
        "`pdsparse.repro.scorecard`; where a race was rerun with each method at the setting its "
        "sensitivity study found best (`<paper>.best` in the config), that verdict follows "
        "(\"at the study's best\": the study is on one data set, and its best setting may "
        "do worse elsewhere), and a claim that holds only there is not counted as "
        "agreement:",
        "",
        *(f"- {text}" for text in tolerances().values()),
        "",
        f"**{summary(rows)}.**",
        "",
        *([provenance, ""] if provenance else []),
        "| # | paper | item | reproduced | paper value | our value | agreement |",
        "|---|---|---|---|---|---|---|",
    ]
    reproduced, notes = _factor_notes(rows)
    details = []
    for i, (r, rep) in enumerate(zip(rows, reproduced, strict=True), start=1):
        verdict = f"**{r.agreement}**" + (f" · at the study's best: **{r.best_agreement}**"
                                           if r.best_agreement else "")
        whole = f"**{r.agreement}**" + (f": {r.reason}" if r.reason else "") + (
            f" · at the study's best: **{r.best_agreement}**"
            + (f": {r.best_reason}" if r.best_reason else "") if r.best_agreement else "")
        full = {"reproduced": rep, "paper value": r.paper_value, "our value": r.our_value,
                "why": r.reason, "at the study's best": " — ".join(
                    t for t in (r.best_value, r.best_reason) if t)}
        long = len(whole) > CELL_CHARS or any(
            len(full[k]) > CELL_CHARS for k in ("reproduced", "paper value", "our value"))
        link = f"[more](#item-{i})"
        cells = [str(i), PAPER_TITLES.get(r.paper, r.paper), r.item,
                 *(_short(full[k], link) for k in ("reproduced", "paper value", "our value")),
                 f"{verdict} ({link})" if long else whole]
        if long:
            details += ["", f'<a id="item-{i}"></a>', "",
                        f"**{i}. {PAPER_TITLES.get(r.paper, r.paper)}: {r.item}** — "
                        f"{verdict}", ""]
            details += [f"- {k}: {_md_cell(v)}" for k, v in full.items() if v]
        lines.append("| " + " | ".join(map(_md_cell, cells)) + " |")
    if notes:
        lines += ["", "Notes:", ""] + [f"{i}. {_md_cell(t)}" for i, t in
                                       enumerate(notes, start=1)]
    if details:
        lines += ["", "## The rows in full", "",
                  "Each row whose cells were shortened above, every field whole (also in "
                  "`scorecard.csv`)."] + details
    return "\n".join(lines) + "\n"


_COLOURS = {"yes": "#d9f2d9", "partly": "#fff0c2", "no": "#f8d0d0", INCONCLUSIVE: "#dde6f5",
            NOT_RUN: "#e6e6e6"}


def to_html(rows: Sequence[Row], provenance: str = "") -> str:
    esc = html.escape
    head = "".join(f"<th>{h}</th>" for h in ("paper", "item", "reproduced", "paper value",
                                              "our value", "agreement"))
    body = []
    reproduced, notes = _factor_notes(rows)
    for r, rep in zip(rows, reproduced, strict=True):
        colour = _COLOURS.get(r.agreement, "#fff")
        verdict = f"<b>{esc(r.agreement)}</b>" + (f": {esc(r.reason)}" if r.reason else "")
        if r.best_agreement:
            verdict += (f"<br>at the study's best: <b>{esc(r.best_agreement)}</b>"
                        + (f": {esc(r.best_reason)}" if r.best_reason else ""))
        body.append(
            f'<tr data-paper="{esc(r.paper)}"><td>{esc(PAPER_TITLES.get(r.paper, r.paper))}'
            f"</td><td>{esc(r.item)}</td><td>{esc(rep)}</td>"
            f"<td>{esc(r.paper_value)}</td><td>{esc(r.our_value)}</td>"
            f'<td style="background:{colour}">{verdict}</td></tr>')
    legend = "".join(f"<li>{esc(t)}</li>" for t in tolerances().values())
    text = (f"<h1>Reproduction scorecard</h1>\n<p>One row per paper item, computed by "
            f"<code>pdsparse scorecard</code> from the results and the papers' printed values. "
            f"<b>{esc(summary(rows))}.</b></p>\n"
            + (f"<p>{esc(provenance)}</p>\n" if provenance else "")
            + f"<p>Tolerances:</p><ul>{legend}</ul>\n"
            f'<table id="scorecard"><thead><tr>{head}</tr></thead>\n<tbody>\n'
            + "\n".join(body) + "\n</tbody></table>"
            + ("\n<p>Notes:</p><ol>" + "".join(f"<li>{esc(t)}</li>" for t in notes) + "</ol>"
               if notes else ""))
    from pdsparse.repro.report import html_page

    # one screen wide (the report shows it in a frame): long cells wrap, URLs too
    style = ("table { width: 100%; font-size: 0.8em; } th { position: sticky; top: 0; } "
             "td { overflow-wrap: anywhere; } td:nth-child(1) { width: 4.5em; } "
             "td:nth-child(2) { width: 13%; } td:nth-child(6) { width: 17%; }")
    return html_page("Reproduction scorecard", text, style)


def write_scorecard(rows: Sequence[Row], out_md: PathLike | None = None,
                    out_csv: PathLike | None = None, out_html: PathLike | None = None,
                    provenance: str = "") -> None:
    """Write the rows as Markdown, CSV (columns :data:`COLUMNS`) and HTML, atomically;
    ``provenance`` heads the Markdown and HTML (:func:`to_markdown`)."""
    import pandas as pd

    from pdsparse.io import atomic_path

    if out_md:
        with atomic_path(out_md) as tmp:
            tmp.write_text(to_markdown(rows, provenance), encoding="utf-8")
    if out_csv:
        with atomic_path(out_csv) as tmp:
            pd.DataFrame([asdict(r) for r in rows], columns=list(COLUMNS)).to_csv(
                tmp, index=False)
    if out_html:
        with atomic_path(out_html) as tmp:
            tmp.write_text(to_html(rows, provenance), encoding="utf-8")


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
    ``Speedup table``; a paper's scorecard module may add to a title (``item_subtitle``:
    DGPD's figures with their (λ, μ))."""
    import importlib

    match = re.fullmatch(r"(figure|table)(\d+)", name)
    if match:
        title = f"{match[1].capitalize()} {match[2]}"
        rows = importlib.import_module(f"pdsparse.repro.papers.{paper}.scorecard")
        subtitle = getattr(rows, "item_subtitle", None)
        return title + (subtitle(name) if subtitle else "")
    if name == "speedup":
        return "Speedup table"
    if name in ("sensitivity", "sensitivity_figure"):  # one item: the table and its figure
        return "Sensitivity study"
    if name in ("sensitivity_trace", "sensitivity_trace_figure"):
        return "Sensitivity study, trace-norm ball"
    return name.replace("_", " ").capitalize()


def rows_of(rows: Iterable[Row], paper: str, name: str) -> list[Row]:
    return [r for r in rows if r.paper == paper and name in r.outputs.split()]


def labels(rows: Sequence[Row], paper: str, name: str) -> dict[str, str]:
    """Report labels of one figure or table: the item, and its scorecard rows summed up."""
    mine = rows_of(rows, paper, name)
    reproduced = sorted({"yes" if r.reproduced.startswith("yes") else
                         r.reproduced.split(":")[0] for r in mine})
    counts = {k: sum(r.agreement == k for r in mine)
              for k in ("yes", "partly", "no", INCONCLUSIVE)}
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
