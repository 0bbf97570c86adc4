"""Tables of the reproduction: Table 1 of Csiba & Richtárik, "Coordinate Descent Face-Off".

Table 1 of the paper ("Details on the datasets used in the experiments") lists, per dataset,
``d``, ``n``, density, ``||X||_0``, ``C_P``, ``C_D`` (eq. (16)) and ``T_P/T_D`` (eq. (15),
importance sampling). The paper's ``X`` is ``d x n``; our ``A = X^T`` is ``n x d``. Our values
come from the stats files ``results/stats/<dataset>.parquet`` written by
:func:`pdsparse.stats.data_stats`; the paper's from :mod:`pdsparse.paper_values`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from pdsparse.errors import DataError
from pdsparse.io import atomic_path, read_parquet
from pdsparse.paper_values import TABLE1, TABLE1_COLUMNS, TABLE1_NOTE, TABLE1_PRECISION

PathLike = str | os.PathLike

#: Columns of the paper whose ratio ours/paper is reported.
RATIO_SOURCE_COLUMNS: tuple[str, ...] = ("C_P", "C_D", "T_P_over_T_D")

#: Exact column order of the Table 1 CSV. ``matches_paper_<col>`` is True when our value,
#: rounded to the paper's printed precision, equals the printed value; ``matches_paper`` is
#: the conjunction over all columns. Paper, ratio and match columns are empty for datasets
#: the paper does not list.
TABLE1_CSV_COLUMNS: list[str] = [
    "dataset",
    *TABLE1_COLUMNS,
    *(f"paper_{c}" for c in TABLE1_COLUMNS),
    *(f"ratio_{c}" for c in RATIO_SOURCE_COLUMNS),
    *(f"matches_paper_{c}" for c in TABLE1_COLUMNS),
    "matches_paper",
]

_INT_COLUMNS = ("d", "n", "nnz")
_LABELS = {
    "d": "d",
    "n": "n",
    "density": "density",
    "nnz": "‖X‖₀",
    "C_P": "C_P",
    "C_D": "C_D",
    "T_P_over_T_D": "T_P/T_D",
}


def read_stats(paths: Iterable[PathLike]) -> pd.DataFrame:
    """Concatenate stats Parquet files (one row each) and check the Table 1 columns exist.

    Raises
    ------
    DataError
        If a file is missing, unreadable, empty, or lacks a required column; the message
        names the file.
    """
    frames = []
    required = ("dataset", *TABLE1_COLUMNS)
    for path in paths:
        path = Path(path)
        frame = read_parquet(path, "stats file")
        if frame.empty:
            raise DataError(f"stats file {path} has no rows")
        missing = [c for c in required if c not in frame.columns]
        if missing:
            raise DataError(
                f"stats file {path} lacks column(s) {missing}; has {list(frame.columns)}"
            )
        frame = frame.copy()
        frame["source"] = str(path)
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=[*required, "source"])
    return pd.concat(frames, ignore_index=True)


def build_table1(stats: pd.DataFrame) -> pd.DataFrame:
    """Table 1 from a stats frame (one row per dataset): ours, paper, ratios, match flags.

    Parameters
    ----------
    stats
        Columns ``dataset`` and :data:`pdsparse.paper_values.TABLE1_COLUMNS` at least.

    Returns
    -------
    pandas.DataFrame
        Columns exactly :data:`TABLE1_CSV_COLUMNS`, rows in input order.
    """
    duplicated = stats["dataset"][stats["dataset"].duplicated()].tolist()
    if duplicated:
        raise DataError(
            f"Table 1 got several stats rows for dataset(s) {sorted(set(duplicated))}; pass "
            "other normalizations/beta values as variants"
        )
    out = pd.DataFrame({"dataset": stats["dataset"].astype(str).to_numpy()})
    for col in TABLE1_COLUMNS:
        values = stats[col].to_numpy()
        out[col] = pd.array(values, dtype="Int64") if col in _INT_COLUMNS else values.astype(float)
    rows = [TABLE1.get(name) for name in out["dataset"]]
    for col in TABLE1_COLUMNS:
        paper = [None if r is None else r.value(col) for r in rows]
        dtype = "Int64" if col in _INT_COLUMNS else "Float64"
        out[f"paper_{col}"] = pd.array(paper, dtype=dtype)
    for col in RATIO_SOURCE_COLUMNS:
        ours = out[col].astype(float).to_numpy()
        paper = out[f"paper_{col}"].astype(float).to_numpy()  # NA -> nan
        out[f"ratio_{col}"] = ours / paper
    flags = {}
    for col in TABLE1_COLUMNS:
        precision = TABLE1_PRECISION[col]
        flags[col] = [
            None if r is None else precision.matches(ours, r.value(col))
            for ours, r in zip(out[col].astype(float), rows, strict=True)
        ]
        out[f"matches_paper_{col}"] = pd.array(flags[col], dtype="boolean")
    overall = [
        None if r is None else all(flags[c][i] for c in TABLE1_COLUMNS) for i, r in enumerate(rows)
    ]
    out["matches_paper"] = pd.array(overall, dtype="boolean")
    return out[TABLE1_CSV_COLUMNS]


def faceoff_table1(
    stats_paths: Sequence[PathLike],
    out_csv: PathLike,
    out_md: PathLike,
    caption: str | None = None,
    variant_paths: Sequence[PathLike] | None = None,
) -> pd.DataFrame:
    """Write Table 1 (ours beside the paper's printed values) as CSV and Markdown.

    Parameters
    ----------
    stats_paths
        Stats Parquet files of the configured variant, one dataset each (columns ``dataset``,
        ``normalization``, ``l2``, ``beta``, ``n``, ``d``, ``nnz``, ``density``, ``C_P``,
        ``C_D``, ``T_P_over_T_D``, ...).
    out_csv
        CSV with columns exactly :data:`TABLE1_CSV_COLUMNS` (main rows only).
    out_md
        Markdown: the main table (each cell ``ours / paper ✓|✗``), the caption, a note on
        the paper's printed precision and, if given, a "Variants" table.
    caption
        Caption text rendered verbatim below the table (the workflow supplies it, e.g. which
        normalization and beta reproduce the printed values).
    variant_paths
        Optional extra stats files for the same datasets under other normalizations / beta.
        They appear only in the Markdown "Variants" table, with their own match flags.

    Returns
    -------
    pandas.DataFrame
        The main table as written to ``out_csv``.
    """
    stats = read_stats(stats_paths)
    table = build_table1(stats)
    variants = read_stats(variant_paths) if variant_paths else None
    markdown = render_table1_markdown(stats, table, caption=caption, variants=variants)
    with atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(out_md) as tmp:
        tmp.write_text(markdown, encoding="utf-8")
    return table


# --------------------------------------------------------------------------- markdown


def _sci(value: float, digits: int = 3) -> str:
    """``2.63×10^7`` style with ``digits`` significant digits."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10.0**exponent
    if round(abs(mantissa), digits - 1) >= 10.0:  # 9.996e6 -> 1.00×10^7
        mantissa /= 10.0
        exponent += 1
    return f"{mantissa:.{digits - 1}f}×10^{exponent}"


def _fmt_ours(col: str, value: object) -> str:
    if value is None or pd.isna(value):
        return "–"
    v = float(value)
    if col in _INT_COLUMNS:
        return f"{int(round(v)):,}"
    if col == "density":
        return f"{100.0 * v:.3g}%"
    if col in ("C_P", "C_D"):
        return _sci(v)
    return f"{v:.3g}"


def _flag(value: object) -> str:
    if value is None or pd.isna(value):
        return ""
    return " ✓" if bool(value) else " ✗"


def _cells(row: pd.Series) -> list[str]:
    dataset = str(row["dataset"])
    paper = TABLE1.get(dataset)
    cells = []
    for col in TABLE1_COLUMNS:
        ours = _fmt_ours(col, row[col])
        if paper is None:
            cells.append(ours)
        else:
            flag = TABLE1_PRECISION[col].matches(float(row[col]), paper.value(col))
            cells.append(f"{ours} / {paper.printed.get(col, str(paper.value(col)))}{_flag(flag)}")
    return cells


def _setting(stats_row: pd.Series) -> tuple[str, str, str]:
    def get(key: str) -> str:
        if key not in stats_row.index or pd.isna(stats_row[key]):
            return "–"
        value = stats_row[key]
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    return get("normalization"), get("beta"), get("l2")


def render_table1_markdown(
    stats: pd.DataFrame,
    table: pd.DataFrame,
    caption: str | None = None,
    variants: pd.DataFrame | None = None,
) -> str:
    """Markdown text of Table 1; see :func:`faceoff_table1`."""
    header = ["dataset", "normalization", "β", "l2", *(_LABELS[c] for c in TABLE1_COLUMNS)]
    lines = [
        "## Table 1 — dataset statistics: ours / paper",
        "",
        "Cells read `ours / paper`; ✓ = ours agrees with the paper to its printed precision, "
        "✗ = it does not. Datasets the paper does not list show our value only.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * 4 + ["---:"] * len(TABLE1_COLUMNS)) + "|",
    ]
    for (_, row), (_, srow) in zip(table.iterrows(), stats.iterrows(), strict=True):
        paper = TABLE1.get(str(row["dataset"]))
        name = str(row["dataset"]) + ("" if paper is None else f" ({paper.paper_name})")
        lines.append("| " + " | ".join([name, *_setting(srow), *_cells(row)]) + " |")
    lines.append("")
    if caption:
        lines += [f"**Table 1.** {caption.strip()}", ""]
    lines += [f"*Precision:* {TABLE1_NOTE}", ""]
    if variants is not None and not variants.empty:
        lines += [
            "### Variants (other normalization / β)",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] * 4 + ["---:"] * len(TABLE1_COLUMNS)) + "|",
        ]
        for _, vrow in variants.iterrows():
            paper = TABLE1.get(str(vrow["dataset"]))
            name = str(vrow["dataset"]) + ("" if paper is None else f" ({paper.paper_name})")
            lines.append("| " + " | ".join([name, *_setting(vrow), *_cells(vrow)]) + " |")
        lines.append("")
    return "\n".join(lines)
