"""Compare two result trees of the workflow, file by file: the proof that a refactoring (a pure
move of code) changed no trace, table or figure, measured times aside.

    python benchmarks/compare_outputs.py OLD_RESULTS_DIR NEW_RESULTS_DIR

Both trees should come from clean default runs (``snakemake`` before and after the change).
Every file of either tree gets one line, ``<path>: <verdict>``, and the run ends with the
counts; the exit status is 1 if any file is different or missing on one side, else 0.

Verdicts
--------
identical
    Equal on every compared value (see below for what is compared per kind of file).
identical on the common prefix (k of m/n rows; time-capped)
    A trace (or aggregate) with runs stopped by their time budget (``status`` ``max_time``
    on a run's last row, in either tree): the same code run twice can stop after a
    different number of evaluations. The two runs agree exactly on their common prefix (the
    rows with the same iteration numbers), and beyond it only the run that went further has
    rows, plus at most the time-capped last row of the other. A run that was not time-capped
    in either tree must be identical in full. ``k`` counts the compared rows, ``m``/``n``
    the rows of the old/new file.
time-dependent
    The file holds values derived from measured time or from the end of a time-capped run
    and only those differ; the differences are shown (not a failure).
DIFFERENT
    A real difference (a failure), with the first differing values.
MISSING in OLD/NEW
    The file is on one side only (a failure).
present (PDF: presence only)
    PDFs embed their creation date: only their presence is checked.

What is compared
----------------
A column that one tree alone has and that no row sets (NaN, ``""`` or ``"none"``: the option
of a solver added between the trees, which every other solver's runs leave unset) is left
out, and the verdict says so; set anywhere, it is a difference.
Timing columns are dropped before anything is compared: ``time_s`` (kernel time of a trace
row), ``seconds`` (wall time of a reference solve), and any column whose name says it is a
time (``TIMING``). Only a Parquet file's data is read, never its metadata (the ``pdsparse``
key holds the commit, the command line, creation times, setup times and the host's data
paths). No ``pdsparse`` import: the script must judge the package before and after a move.

- Traces (``runs/<paper>/<experiment>/<problem>/<solver>/<options>.parquet``, every seed of
  one run group) and aggregates (``<paper>/<experiment>.parquet``): the rows of each run
  (the key columns: every column but the row values of ``ROW_COLUMNS`` and floats) are
  matched between the trees, then compared row by row with the rule above. Values must be
  equal to the bit (floats by their bit pattern, so 0.0 and -0.0 differ; NaN equals NaN),
  dtypes too; the order of the runs in a file does not matter, the order of rows in a run
  does.
- References (``reference/*.parquet``) and statistics (``stats/**/*.parquet``): every
  non-timing value, exactly, row by row.
- Tables (``tables/<paper>/<name>.csv``): read as text and compared cell by cell, so any
  change in a printed digit counts. Time-dependent cells: the columns of a time to a target
  and what follows from it in the speedup tables (``time_*``, ``xmax_*``, ``reached_*``,
  ``speedup_*``, ``bound_*``, ``why_*``, ``kernel_*``, ``passes_*``), and, in a table
  with a ``status`` column (DGPD Table 2: the
  final iterate of each data set's runs), the final-iterate columns ``nz_primal``,
  ``nz_dual``, ``test_accuracy`` and ``status`` of rows whose status is ``max_time`` in
  either tree; rows whose runs stopped on their own must agree there too. A run's measured
  setup time (``setup_s``, any timing column) is time-dependent, and so is a sensitivity
  table's ``final`` (its runs' last relative suboptimality) when the table's aggregate
  (``<paper>/<name>.parquet``) holds a time-capped run, and its ``role`` (the fastest
  configuration, chosen by measured time) always.
- Markdown tables (``tables/<paper>/<name>.md``) and their HTML pages
  (``report/<paper>/<name>.html``): line by line. A differing line is time-dependent only if
  it is a table row whose differing cells all sit under a header that names a
  time-dependent quantity (``TIME_HEADER``: "time to", "speedup at", "setup", "#nz-primal",
  "#nz-dual", "test accuracy") *and* the table's CSV was found time-dependent (so that a
  change the CSV does not excuse is never excused in its rendering); any other differing
  line, caption and notes included, is a difference.
- Figures (``figures/<paper>/<name>.png``): pixel by pixel (RGBA). A differing PNG shows the
  fraction of differing pixels and is time-dependent if the figure has a time axis (every
  DGPD and PDBFW curve figure has ``x = time_s`` panels: ``TIME_AXIS_PAPERS``) or its curves
  come from an aggregate with a time-capped run (``FIGURE_SOURCES``); else it is different.
- The scorecard (``SCORECARD.md``, ``scorecard.csv``, ``scorecard.html``): the rows must be
  the same items in the same order; a cell that differs only in its numbers is listed as a
  numeric difference (time-dependent); a cell that differs otherwise is a difference, unless
  the row belongs to a time-dependent output (a speedup table, a figure with a time axis or
  time-capped curves, a table with time-capped rows), where it is listed as time-dependent.
- ``config.json``: as JSON; anything else (``README.md``): byte for byte. Temporary files of
  a job still writing (``.<name>.*.tmp``) are skipped and counted.

Figures drawn again (``--redraw``)
---------------------------------
A figure with a time axis differs between two runs whatever the code, so the check above can
only excuse it. ``--redraw`` closes that gap: the *installed* ``pdsparse`` (the code after
the change) draws every figure of OLD again from OLD's own aggregates, with the commands its
plan gives for OLD's effective config (``OLD/config.json``), and each must be pixel-identical
to OLD's PNG. Same data in, same pixels out: the plan's figure specs and the drawing code are
unchanged by the move. Run it from the repository root (the config names
``config/datasets.yaml``) with the data settings of the run (``PDSPARSE_DATA_MIRROR``: which
real data sets were available decides the plan's panels); it is the one part of the script
that imports ``pdsparse``.
"""

from __future__ import annotations

import argparse
import fnmatch
import html
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

# Measured times, dropped before comparing: a trace's kernel time, a reference's wall time,
# and (by name) any other column that says it is a time.
TIMING = {"time_s", "seconds", "setup_s", "eval_s", "wall_s", "elapsed_s", "created_unix"}
TIMING_NAME = re.compile(r"(^|_)(seconds|wall|walltime|elapsed|timestamp|created)(_|$)")
# The per-row values of a trace (pdsparse.solvers.TRACE_COLUMNS less time_s) and of an
# aggregate (pdsparse.repro.traces.aggregate); every other non-float column identifies the run.
ROW_COLUMNS = {
    "iteration",
    "epoch",
    "sweeps",
    "primal",
    "dual",
    "gap",
    "nnz_primal",
    "nnz_dual",
    "status",
    "subopt",
    "rel_subopt",
}
CAPPED = "max_time"  # the stop reason of a run that hit its time budget (pdsparse.solvers.solve)
# CSV columns derived from measured time (pdsparse.repro.speedup, .sensitivity): time to
# a target, its bound, seeds that reached it, the speedup, its spread and bound flag, why a
# run did not reach it (a budget-cut run may be still improving on one machine and not on
# another), and the same in kernel time and passes (``kernel_*``, ``passes_*``).
TIME_COLUMN = re.compile(r"^(time|xmax|reached|speedup|bound|why|kernel|passes)_")
# CSV columns of a run's final iterate (pdsparse.tables_dgpd): time-dependent in rows whose
# status says the run was time-capped.
FINAL_ITERATE = {"nz_primal", "nz_dual", "test_accuracy", "status"}
# CSV columns of a table's runs' last values (pdsparse.repro.sensitivity: ``final``, the last
# relative suboptimality): time-dependent when the table's aggregate holds a time-capped run.
LAST_VALUE = {"final"}
# CSV columns chosen by measured times (pdsparse.repro.sensitivity: ``role``, "best" on the
# configuration with the shortest time to a target): always time-dependent.
TIME_CHOSEN = {"role"}
# Markdown / HTML headers of the same quantities ("to 0.01: CPU s (kernel s, passes)": the
# sensitivity tables' times to a target).
TIME_HEADER = re.compile(
    r"(^time to |^to \S+: CPU s|speedup at |^setup$|^#nz-primal$|^#nz-dual$|^test accuracy$)"
)
# Papers whose every curve figure has time panels (papers/dgpd.py: a time row and an
# iteration row; papers/pdbfw.py: x = time_s); Face-Off's figures are against epochs.
TIME_AXIS_PAPERS = {"dgpd", "pdbfw"}
# The aggregates (glob under <paper>/) whose runs a figure draws: a time-capped run there makes
# the figure time-dependent. () = drawn from theory only; a figure not listed: every
# aggregate of its paper.
FIGURE_SOURCES = {
    ("faceoff", "figure1"): ("figure1*.parquet",),
    ("faceoff", "figure2"): ("figure2.parquet",),
    ("faceoff", "figure3"): (),
}
NUMBER = re.compile(r"[-+−]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+−]?\d+)?")
SHOW = 4  # differences shown per file

IDENTICAL, PREFIX, TIME, DIFFERENT, MISSING, PRESENT = (
    "identical",
    "identical on the common prefix",
    "time-dependent",
    "different",
    "missing",
    "present only (PDF)",
)
FAILURES = {DIFFERENT, MISSING}


@dataclass
class Verdict:
    kind: str
    text: str


class Context:
    """What earlier comparisons found that later ones need: the aggregates with a
    time-capped run, the CSV verdicts, the outputs whose values depend on time."""

    def __init__(self) -> None:
        self.capped: set[str] = set()  # aggregates (<paper>/<experiment>.parquet)
        self.csv: dict[str, str] = {}  # tables/<paper>/<name>.csv -> verdict kind
        self.timed: set[tuple[str, str]] = set()  # (paper, output name)
        self.scorecard_rows: list[bool] | None = None  # per scorecard row: time-dependent
        self.dropped: set[str] = set()  # timing columns left out of Parquet files


# ---------------------------------------------------------------------------------- values


def is_timing(column: str) -> bool:
    """A measured time (``max_seconds`` and the like are settings, not measurements)."""
    if column.startswith(("max_", "min_")):
        return False
    return column in TIMING or bool(TIMING_NAME.search(column))


def read_data(path: Path, ctx: Context) -> pd.DataFrame:
    """A Parquet file's data (its metadata is never read), timing columns dropped (and
    remembered in ``ctx.dropped``)."""
    df = pd.read_parquet(path)
    ctx.dropped.update(c for c in df.columns if is_timing(c))
    return df[[c for c in df.columns if not is_timing(c)]].reset_index(drop=True)


def unequal(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Rows where two columns of the same length differ: floats by their bits (NaN = NaN)."""
    if a.dtype != b.dtype:
        return np.ones(len(a), dtype=bool)
    if isinstance(a.dtype, np.dtype) and a.dtype.kind == "f":
        x, y = a.to_numpy(), b.to_numpy()
        bits = f"i{x.dtype.itemsize}"
        return ~((x.view(bits) == y.view(bits)) | (np.isnan(x) & np.isnan(y)))
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    both_na = (a.isna() & b.isna()).to_numpy(bool)
    equal = a.eq(b).fillna(False).to_numpy(bool)
    return ~(equal | both_na)


ABSENT = {"", "none"}
"""The values of an option column where an option does not apply (the registry's ``"none"``;
``""`` in a CSV)."""


def without_added_options(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                     str]:
    """Both frames without the columns that one tree alone has and that hold no value in
    any of its rows (NaN, ``""`` or ``"none"``): a solver's option added between the trees
    gives every trace an option column that no run of another solver sets. A schema
    addition, not a changed value; returned as a note for the verdict."""

    def absent(col: pd.Series) -> bool:
        return bool((col.isna() | col.astype(str).isin(ABSENT)).all())

    only_a = [c for c in a.columns if c not in b.columns and absent(a[c])]
    only_b = [c for c in b.columns if c not in a.columns and absent(b[c])]
    note = "; ".join(f"{side} adds option column(s) {cols} that no run sets"
                     for side, cols in (("OLD", only_a), ("NEW", only_b)) if cols)
    return a.drop(columns=only_a), b.drop(columns=only_b), (f" ({note})" if note else "")


def _noted(verdict: Verdict, note: str) -> Verdict:
    return Verdict(verdict.kind, verdict.text + note) if note else verdict


def column_problem(a: pd.DataFrame, b: pd.DataFrame) -> str | None:
    if list(a.columns) == list(b.columns):
        dtypes = [
            f"{c}: {a[c].dtype} vs {b[c].dtype}" for c in a.columns if a[c].dtype != b[c].dtype
        ]
        return f"dtypes differ ({'; '.join(dtypes)})" if dtypes else None
    only_a = [c for c in a.columns if c not in b.columns]
    only_b = [c for c in b.columns if c not in a.columns]
    if only_a or only_b:
        return f"columns only in OLD {only_a}, only in NEW {only_b}"
    return "same columns in another order"


def row_differences(
    a: pd.DataFrame, b: pd.DataFrame, where=None, exempt_capped_status: bool = False
) -> list[str]:
    """The differing values of two frames of the same columns and length, first per column:
    ``column at <where(row)>: old != new``."""
    out = []
    for col in a.columns:
        bad = unequal(a[col], b[col])
        if col == "status" and exempt_capped_status:
            # a run stopped by the clock where the other ran on: the stop reason differs
            x, y = a[col].astype(str).to_numpy(), b[col].astype(str).to_numpy()
            bad &= ~(((x == CAPPED) & (y == "")) | ((x == "") & (y == CAPPED)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            at = where(a, i) if where else f"row {i}"
            out.append(
                f"{col} at {at}: {_plain(a[col].iloc[i])!r} != {_plain(b[col].iloc[i])!r}"
                + (f" ({int(bad.sum())} rows)" if bad.sum() > 1 else "")
            )
    return out


def _plain(value):
    """A NumPy scalar as the Python value it holds (its repr is then the shortest exact one)."""
    return value.item() if isinstance(value, np.generic) else value


def _run_name(keys: list[str], key: tuple) -> str:
    """A run by the keys that tell it apart (options that a solver has not left out)."""
    named = [
        f"{k}={v}"
        for k, v in zip(keys, key, strict=True)
        if k not in ("experiment", "loss") and str(v) not in ("none", "", "<NA>")
    ]
    return "run " + ", ".join(named)


def _at(df: pd.DataFrame, i: int) -> str:
    keys = [c for c in ("seed", "iteration") if c in df.columns]
    return f"row {i}" + (
        " (" + ", ".join(f"{c} {df[c].iloc[i]}" for c in keys) + ")" if keys else ""
    )


def _change(x: str, y: str, width: int = 30) -> str:
    """Two texts around where they part: ``'...abc' -> '...abd'``."""
    start = next(
        (i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y))
    )
    lo = max(0, start - width)
    dots = "..." if lo else ""
    return f"{dots + x[lo : start + width]!r} -> {dots + y[lo : start + width]!r}"


def _shown(items: list[str]) -> str:
    more = f"; ... and {len(items) - SHOW} more" if len(items) > SHOW else ""
    return "; ".join(items[:SHOW]) + more


# ---------------------------------------------------------------------- traces, aggregates


def _capped(run: pd.DataFrame) -> bool:
    return len(run) > 0 and "status" in run.columns and str(run["status"].iloc[-1]) == CAPPED


def compare_run(a: pd.DataFrame, b: pd.DataFrame) -> tuple[str, int, str]:
    """One run (its rows in file order) in both trees: (verdict kind, rows compared, text)."""
    m, n = len(a), len(b)
    ia, ib = a["iteration"].to_numpy(), b["iteration"].to_numpy()
    j = min(m, n)
    parted = np.flatnonzero(ia[:j] != ib[:j])
    k = int(parted[0]) if len(parted) else j
    cap_a, cap_b = _capped(a), _capped(b)
    if not (cap_a or cap_b):
        if m != n or k < m:
            return (
                DIFFERENT,
                k,
                (f"{m} vs {n} rows, iterations part at row {k}, and neither run was time-capped"),
            )
        diffs = row_differences(a, b, _at)
        return (DIFFERENT, k, _shown(diffs)) if diffs else (IDENTICAL, k, "")
    # the run that stopped first has at most its time-capped last row beyond the prefix
    stopped_a = m == k or (m == k + 1 and cap_a)
    stopped_b = n == k or (n == k + 1 and cap_b)
    if not (stopped_a or stopped_b):
        return (
            DIFFERENT,
            k,
            (
                f"the runs part at row {k} (iteration {ia[k]} vs {ib[k]}) before "
                "either stopped on its time budget"
            ),
        )
    diffs = row_differences(a.iloc[:k], b.iloc[:k], _at, exempt_capped_status=True)
    if diffs:
        return DIFFERENT, k, _shown(diffs)
    return (IDENTICAL if m == n == k else PREFIX), k, ""


def _runs(df: pd.DataFrame, keys: list[str]) -> dict[tuple, pd.DataFrame]:
    if not keys:
        return {(): df}
    out = {}
    for key, run in df.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        out[tuple("<NA>" if pd.isna(v) else v for v in key)] = run.reset_index(drop=True)
    return out


def compare_traces(old: Path, new: Path, ctx: Context) -> tuple[Verdict, bool]:
    """A trace or an aggregate: (verdict, whether a run was time-capped in either tree)."""
    a, b, note = without_added_options(read_data(old, ctx), read_data(new, ctx))
    capped = any(CAPPED in set(df["status"].astype(str)) for df in (a, b) if "status" in df.columns)
    problem = column_problem(a, b)
    if problem:
        return Verdict(DIFFERENT, f"DIFFERENT: {problem}"), capped
    if "iteration" not in a.columns:
        return _noted(compare_frame(a, b), note), capped
    keys = [c for c in a.columns if c not in ROW_COLUMNS and a[c].dtype.kind != "f"]
    runs_a, runs_b = _runs(a, keys), _runs(b, keys)
    only = [f"{_run_name(keys, k)} only in OLD" for k in runs_a if k not in runs_b]
    only += [f"{_run_name(keys, k)} only in NEW" for k in runs_b if k not in runs_a]
    if only:
        return Verdict(DIFFERENT, f"DIFFERENT: {_shown(only)}"), capped
    kinds, compared, texts = [], 0, []
    for key, run in runs_a.items():
        kind, k, text = compare_run(run, runs_b[key])
        kinds.append(kind)
        compared += k
        if text:
            texts.append(f"{_run_name(keys, key)}: {text}")
    cols = len(a.columns)
    size = f"{len(runs_a)} run(s), {cols} columns compared"
    if DIFFERENT in kinds:
        return Verdict(DIFFERENT, f"{size}: DIFFERENT: {_shown(texts)}{note}"), capped
    if PREFIX in kinds:
        return Verdict(
            PREFIX,
            f"{size}: identical on the common prefix ({compared} of "
            f"{len(a)}/{len(b)} rows; time-capped){note}",
        ), capped
    return Verdict(IDENTICAL, f"{len(a)} rows, {size}: identical{note}"), capped


def compare_frame(a: pd.DataFrame, b: pd.DataFrame) -> Verdict:
    problem = column_problem(a, b)
    if problem:
        return Verdict(DIFFERENT, f"DIFFERENT: {problem}")
    if len(a) != len(b):
        return Verdict(DIFFERENT, f"DIFFERENT: {len(a)} vs {len(b)} rows")
    diffs = row_differences(a, b)
    size = f"{len(a)} rows, {len(a.columns)} columns compared"
    return (
        Verdict(DIFFERENT, f"{size}: DIFFERENT: {_shown(diffs)}")
        if diffs
        else Verdict(IDENTICAL, f"{size}: identical")
    )


# ---------------------------------------------------------------------------------- tables


def read_csv_text(path: Path) -> pd.DataFrame:
    """A CSV as written: every cell as its text."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def time_dependent_cells(df: pd.DataFrame, other: pd.DataFrame,
                         capped_runs: bool = False) -> np.ndarray:
    """(rows, columns) mask of the cells of a table that may depend on time
    (``capped_runs``: the table's aggregate holds a time-capped run)."""
    mask = np.zeros(df.shape, dtype=bool)
    capped = np.zeros(len(df), dtype=bool)
    if "status" in df.columns:
        capped = df["status"].str.contains(CAPPED).to_numpy(bool) | other["status"].str.contains(
            CAPPED
        ).to_numpy(bool)
    for j, col in enumerate(df.columns):
        if TIME_COLUMN.match(col) or is_timing(col) or col in TIME_CHOSEN:
            mask[:, j] = True
        elif col in FINAL_ITERATE and "status" in df.columns:
            mask[:, j] = capped
        elif col in LAST_VALUE:
            mask[:, j] = capped_runs
    return mask


def compare_csv(old: Path, new: Path, ctx: Context, output: tuple[str, str]) -> Verdict:
    a, b, note = without_added_options(read_csv_text(old), read_csv_text(new))
    return _noted(_compare_csv(a, b, ctx, output), note)


def _compare_csv(a: pd.DataFrame, b: pd.DataFrame, ctx: Context,
                 output: tuple[str, str]) -> Verdict:
    problem = column_problem(a, b)
    if problem:
        return Verdict(DIFFERENT, f"DIFFERENT: {problem}")
    if len(a) != len(b):
        return Verdict(DIFFERENT, f"DIFFERENT: {len(a)} vs {len(b)} rows")
    timed = time_dependent_cells(a, b, f"{output[0]}/{output[1]}.parquet" in ctx.capped)
    if timed.any():
        ctx.timed.add(output)
    real, dependent = [], []
    for j, col in enumerate(a.columns):
        for i in np.flatnonzero(a[col].to_numpy() != b[col].to_numpy()):
            label = a[a.columns[0]].iloc[i]
            text = f"{col} of row {i} ({label}): {a[col].iloc[i]!r} -> {b[col].iloc[i]!r}"
            (dependent if timed[i, j] else real).append(text)
    size = f"{len(a)} rows, {len(a.columns)} columns compared"
    if real:
        return Verdict(DIFFERENT, f"{size}: DIFFERENT: {_shown(real)}")
    if dependent:
        return Verdict(TIME, f"{size}: time-dependent cells differ: {_shown(dependent)}")
    return Verdict(IDENTICAL, f"{size}: identical")


def _md_cells(line: str) -> list[str]:
    line = line.strip().removeprefix("|")
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)]


_RULE = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_HTML_CELL = re.compile(r"<t([hd])[^>]*>(.*?)</t[hd]>")


def table_lines(text: str, kind: str) -> list[tuple[str, list[str] | None, list[str] | None]]:
    """(line, header of its table, its cells) per line; header and cells None outside a
    table row. ``kind``: "md" (pipe tables) or "html" (one ``<tr>`` per line)."""
    lines = text.splitlines()
    out, header = [], None
    for i, line in enumerate(lines):
        cells = None
        if kind == "md":
            if line.lstrip().startswith("|"):
                if i + 1 < len(lines) and _RULE.match(lines[i + 1]):
                    header = _md_cells(line)
                elif not _RULE.match(line):
                    cells = _md_cells(line)
            else:
                header = None
        else:
            found = _HTML_CELL.findall(line)
            if found and found[0][0] == "h":
                header = [html.unescape(re.sub(r"<[^>]+>", "", c)) for _, c in found]
            elif found:
                cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for _, c in found]
        out.append((line, header if cells is not None else None, cells))
    return out


def compare_text_table(old: Path, new: Path, kind: str, allow_time: bool) -> Verdict:
    """A table's Markdown or HTML page, line by line; with ``allow_time`` a table row may
    differ in the cells under a time-dependent header (see the module docstring)."""
    a = table_lines(old.read_text(encoding="utf-8"), kind)
    b = table_lines(new.read_text(encoding="utf-8"), kind)
    if len(a) != len(b):
        return Verdict(DIFFERENT, f"DIFFERENT: {len(a)} vs {len(b)} lines")
    real, dependent = [], []
    for i, ((la, head, ca), (lb, _, cb)) in enumerate(zip(a, b, strict=True)):
        if la == lb:
            continue
        if allow_time and head and ca and cb and len(ca) == len(cb) == len(head):
            cols = [head[j] for j in range(len(ca)) if ca[j] != cb[j]]
            if all(TIME_HEADER.search(c) for c in cols):
                dependent.append(
                    f"line {i + 1} ({ca[0]}): "
                    + ", ".join(
                        f"{head[j]}: {ca[j]} -> {cb[j]}" for j in range(len(ca)) if ca[j] != cb[j]
                    )
                )
                continue
        real.append(f"line {i + 1}: {_change(la, lb)}")
    if real:
        return Verdict(DIFFERENT, f"{len(a)} lines: DIFFERENT: {_shown(real)}")
    if dependent:
        return Verdict(TIME, f"{len(a)} lines: time-dependent cells differ: {_shown(dependent)}")
    return Verdict(IDENTICAL, f"{len(a)} lines: identical")


# --------------------------------------------------------------------------------- figures


def read_pixels(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGBA"))


def figure_timed(paper: str, name: str, ctx: Context) -> str:
    """Why a figure may depend on time ("" if it may not)."""
    if paper in TIME_AXIS_PAPERS:
        return "time axis"
    patterns = FIGURE_SOURCES.get((paper, name), ("*.parquet",))
    capped = [
        p
        for p in sorted(ctx.capped)
        if p.startswith(f"{paper}/")
        and any(fnmatch.fnmatch(p.split("/", 1)[1], pat) for pat in patterns)
    ]
    return f"curves from time-capped runs ({', '.join(capped)})" if capped else ""


def compare_png(old: Path, new: Path, why_timed: str) -> Verdict:
    a, b = read_pixels(old), read_pixels(new)
    if a.shape != b.shape:
        fraction, what = 1.0, f"size {a.shape[1]}x{a.shape[0]} vs {b.shape[1]}x{b.shape[0]}"
    else:
        changed = int(np.any(a != b, axis=-1).sum())
        fraction = changed / (a.shape[0] * a.shape[1])
        what = f"{changed:,} of {a.shape[1]}x{a.shape[0]} pixels differ ({fraction:.4%})"
    if fraction == 0:
        return Verdict(IDENTICAL, f"{a.shape[1]}x{a.shape[0]} pixels: identical")
    if why_timed:
        return Verdict(TIME, f"time-dependent ({why_timed}): {what}")
    return Verdict(DIFFERENT, f"DIFFERENT: {what} (no time axis, no time-capped curves)")


# ------------------------------------------------------------------------------- scorecard

SCORECARD_KEYS = ("paper", "outputs", "item")


def _mask(text: str) -> str:
    return NUMBER.sub("#", text)


def compare_scorecard_csv(old: Path, new: Path, ctx: Context) -> Verdict:
    a, b = read_csv_text(old), read_csv_text(new)
    problem = column_problem(a, b)
    if problem:
        return Verdict(DIFFERENT, f"DIFFERENT: {problem}")
    keys = [c for c in SCORECARD_KEYS if c in a.columns]
    if len(a) != len(b) or not a[keys].equals(b[keys]):
        return Verdict(
            DIFFERENT, f"DIFFERENT: the items differ ({len(a)} vs {len(b)} rows, or another order)"
        )
    timed = [
        any((str(r.get("paper")), name) in ctx.timed for name in str(r["outputs"]).split())
        if "outputs" in a.columns
        else False
        for r in a.to_dict("records")
    ]
    ctx.scorecard_rows = timed
    real, numeric = [], []
    for i, (ra, rb) in enumerate(zip(a.to_dict("records"), b.to_dict("records"), strict=True)):
        for col in a.columns:
            x, y = ra[col], rb[col]
            if x == y:
                continue
            text = f"row {i} ({ra.get('item', '')}) {col}: {_change(x, y)}"
            (numeric if _mask(x) == _mask(y) or timed[i] else real).append(text)
    return _scorecard_verdict(f"{len(a)} rows", real, numeric)


def _scorecard_verdict(size: str, real: list[str], numeric: list[str]) -> Verdict:
    if real:
        return Verdict(DIFFERENT, f"{size}: DIFFERENT: {_shown(real)}")
    if numeric:
        return Verdict(TIME, f"{size}: numeric or time-dependent differences: {_shown(numeric)}")
    return Verdict(IDENTICAL, f"{size}: identical")


def compare_scorecard_text(old: Path, new: Path, ctx: Context, kind: str) -> Verdict:
    """SCORECARD.md or scorecard.html: its table rows are the CSV's rows, in order."""
    a = old.read_text(encoding="utf-8").splitlines()
    b = new.read_text(encoding="utf-8").splitlines()
    if len(a) != len(b):
        return Verdict(DIFFERENT, f"DIFFERENT: {len(a)} vs {len(b)} lines")
    if kind == "md":
        rows = [
            i
            for i, (line, head, cells) in enumerate(table_lines("\n".join(a), "md"))
            if cells is not None and head is not None
        ]
    else:
        rows = [i for i, line in enumerate(a) if line.startswith("<tr data-paper")]
    timed = dict(zip(rows, ctx.scorecard_rows or [], strict=False))
    real, numeric = [], []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y:
            text = f"line {i + 1}: {_change(x, y)}"
            (numeric if _mask(x) == _mask(y) or timed.get(i) else real).append(text)
    return _scorecard_verdict(f"{len(a)} lines", real, numeric)


# ------------------------------------------------------------------------------------ main


def kind_of(rel: Path) -> str:
    parts, suffix = rel.parts, rel.suffix
    if rel.as_posix() in ("SCORECARD.md", "scorecard.csv", "scorecard.html"):
        return "scorecard"
    if suffix == ".parquet":
        if parts[0] == "runs":
            return "trace"
        if len(parts) == 2 and parts[0] not in ("reference", "stats"):
            return "aggregate"
        return "parquet"
    if parts[0] == "tables" and suffix in (".csv", ".md"):
        return suffix[1:]
    if parts[0] == "report" and suffix == ".html" and len(parts) == 3:
        return "html"
    if suffix == ".png":
        return "png"
    if suffix == ".pdf" or rel.as_posix() == "report.html":  # dated, self-contained
        return "pdf"
    if rel.as_posix() == "config.json":
        return "json"
    return "bytes"


ORDER = [
    "trace",
    "aggregate",
    "parquet",
    "csv",
    "md",
    "html",
    "png",
    "pdf",
    "scorecard",
    "json",
    "bytes",
]


def compare_file(rel: Path, old: Path, new: Path, ctx: Context) -> Verdict:
    kind = kind_of(rel)
    parts = rel.parts
    if kind in ("trace", "aggregate"):
        verdict, capped = compare_traces(old, new, ctx)
        if capped and kind == "aggregate":
            ctx.capped.add(rel.as_posix())
        return verdict
    if kind == "parquet":
        return compare_frame(read_data(old, ctx), read_data(new, ctx))
    if kind == "csv":
        verdict = compare_csv(old, new, ctx, (parts[1], rel.stem))
        ctx.csv[rel.as_posix()] = verdict.kind
        return verdict
    if kind in ("md", "html"):
        paper = parts[1] if len(parts) > 2 else ""
        sibling = f"tables/{paper}/{rel.stem}.csv"
        return compare_text_table(old, new, kind, ctx.csv.get(sibling) == TIME)
    if kind == "png":
        paper = parts[1] if len(parts) > 2 else ""
        why = figure_timed(paper, rel.stem, ctx)
        if why:
            ctx.timed.add((paper, rel.stem))
        return compare_png(old, new, why)
    if kind == "pdf":
        return Verdict(PRESENT, "present on both sides (presence only: it embeds its date)")
    if kind == "scorecard":
        if rel.suffix == ".csv":
            return compare_scorecard_csv(old, new, ctx)
        return compare_scorecard_text(old, new, ctx, rel.suffix[1:])
    if kind == "json":
        same = json.loads(old.read_text()) == json.loads(new.read_text())
        return Verdict(IDENTICAL, "identical") if same else Verdict(DIFFERENT, "DIFFERENT")
    same = old.read_bytes() == new.read_bytes()
    return Verdict(IDENTICAL, "identical") if same else Verdict(DIFFERENT, "DIFFERENT (bytes)")


def _files(root: Path) -> tuple[set[Path], int]:
    files, skipped = set(), 0
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        if path.name.startswith(".") and path.name.endswith(".tmp"):
            skipped += 1
            continue
        files.add(path.relative_to(root))
    return files, skipped


def _sort_key(rel: Path) -> tuple:
    kind = kind_of(rel)
    # the scorecard's CSV first: its Markdown and HTML rows are matched to the CSV's rows
    return ORDER.index(kind), rel.name != "scorecard.csv", rel.as_posix()


def redraw(old: Path, out) -> int:
    """Draw OLD's figures again with the installed package from OLD's aggregates; the number
    of figures that are not pixel-identical to OLD's (see the module docstring)."""
    import shlex
    import tempfile

    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.data.registry import load_registry
    from pdsparse.repro.config import data_availability
    from pdsparse.repro.output import make_output
    from pdsparse.repro.papers import plans

    config = json.loads((old / "config.json").read_text(encoding="utf-8"))
    registry = load_registry(config["data"]["registry"])
    data = config["data"]
    mirror = resolve_mirror(data.get("mirror"), must_exist=False)

    def available(name: str) -> bool:  # as the workflow decides it (and the scorecard)
        return data_availability(registry[name], data.get("raw_dir", "data/raw"), mirror,
                                 bool(data.get("download"))) is not None

    failed = drawn = 0

    def here(token: str) -> str:  # results/... -> OLD/...
        return re.sub(r"(^|=)results/", lambda m: f"{m[1]}{old.as_posix()}/", token)

    with tempfile.TemporaryDirectory() as tmp:
        for paper, plan in plans(config, registry, available).items():
            for output in plan.outputs:
                if output.kind != "figure":
                    continue
                png = old / "figures" / paper / f"{output.name}.png"
                if not png.is_file():
                    print(f"redraw: figures/{paper}/{output.name}.png: MISSING in OLD", file=out)
                    failed += 1
                    continue
                name, *args = [here(tok) for tok in shlex.split(" ".join(output.command))]
                again = Path(tmp) / f"{paper}-{output.name}.png"
                make_output(paper, name, [*args, "--out", str(again), str(again) + ".pdf"])
                verdict = compare_png(png, again, "")
                drawn += 1
                failed += verdict.kind != IDENTICAL
                print(f"redrawn figures/{paper}/{output.name}.png from OLD's aggregates: "
                      f"{verdict.text}", file=out)
    print(f"redraw: {drawn} figures drawn again, {failed} not pixel-identical", file=out)
    return failed


def main(argv: list[str] | None = None, out=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("old", type=Path, help="results/ of the run before the change")
    parser.add_argument("new", type=Path, help="results/ of the run after the change")
    parser.add_argument("--redraw", action="store_true",
                        help="also draw OLD's figures again with the installed pdsparse from "
                        "OLD's aggregates; each must be pixel-identical to OLD's")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    for root in (args.old, args.new):
        if not root.is_dir():
            parser.error(f"{root} is not a directory")
    files_a, skipped_a = _files(args.old)
    files_b, skipped_b = _files(args.new)
    ctx, counts = Context(), Counter()
    for rel in sorted(files_a | files_b, key=_sort_key):
        if rel not in files_b or rel not in files_a:
            verdict = Verdict(MISSING, f"MISSING in {'NEW' if rel not in files_b else 'OLD'}")
        else:
            try:
                verdict = compare_file(rel, args.old / rel, args.new / rel, ctx)
            except Exception as exc:  # unreadable on one side: report it, go on
                verdict = Verdict(DIFFERENT, f"DIFFERENT: cannot compare ({exc!r})")
        counts[verdict.kind] += 1
        print(f"{rel.as_posix()}: {verdict.text}", file=out)
    failed = sum(counts[k] for k in FAILURES)
    total = sum(counts.values())
    summary = ", ".join(
        f"{counts[k]} {k}" for k in (IDENTICAL, PREFIX, TIME, DIFFERENT, MISSING, PRESENT)
    )
    skipped = skipped_a + skipped_b
    print(
        f"summary: {total} files: {summary}"
        + (f" ({skipped} temporary file(s) of running jobs skipped)" if skipped else ""),
        file=out,
    )
    dropped = ", ".join(sorted(ctx.dropped)) or "none"
    print(f"timing columns left out of the Parquet files: {dropped}", file=out)
    if args.redraw:
        failed += redraw(args.old, out)
    print(
        "FAILED: the trees differ" if failed else "OK: no difference beyond measured times",
        file=out,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
