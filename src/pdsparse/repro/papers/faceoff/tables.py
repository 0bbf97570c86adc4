"""Tables of the reproduction: Table 1 of Csiba & Richtárik, "Coordinate Descent Face-Off".

Table 1 of the paper ("Details on the datasets used in the experiments") lists, per dataset,
``d``, ``n``, density, ``||X||_0``, ``C_P``, ``C_D`` (eq. (16)) and ``T_P/T_D`` (eq. (15),
importance sampling). The paper's ``X`` is ``d x n``; our ``A = X^T`` is ``n x d``. Our values
come from the stats files ``results/stats/<dataset>.parquet`` written by
:func:`pdsparse.stats.data_stats`; the paper's from :mod:`pdsparse.repro.papers.faceoff.values`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from pdsparse.errors import DataError
from pdsparse.io import read_parquet
from pdsparse.repro.output import Builder, write_table
from pdsparse.repro.papers.faceoff.values import (
    TABLE1,
    TABLE1_COLUMNS,
    TABLE1_NOTE,
    TABLE1_PRECISION,
)

PathLike = str | os.PathLike

#: Columns of the paper whose ratio ours/paper is reported.
RATIO_SOURCE_COLUMNS: tuple[str, ...] = ("C_P", "C_D", "T_P_over_T_D")

#: Values of the ``setting`` column: the workflow's configured setting
#: (``faceoff.normalization``, ``faceoff.beta``) or a variant (``faceoff.table1.variants``).
SETTING_CONFIGURED = "configured"
SETTING_VARIANT = "variant"

#: Columns describing under which setting a row's statistics were computed (empty when the
#: stats file does not record them).
SETTING_COLUMNS: tuple[str, ...] = ("normalization", "beta", "l2")

#: Exact column order of the Table 1 CSV: one row per dataset and setting, configured rows
#: first (``setting`` = :data:`SETTING_CONFIGURED`), then the variants (``setting`` =
#: :data:`SETTING_VARIANT`). ``matches_paper_<col>`` is True when our value, rounded to the
#: paper's printed precision, equals the printed value; ``matches_paper`` is the conjunction
#: over all columns. Paper, ratio and match columns are empty for datasets the paper does
#: not list.
TABLE1_CSV_COLUMNS: list[str] = [
    "dataset",
    "setting",
    *SETTING_COLUMNS,
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


def _setting_value(stats: pd.DataFrame, col: str) -> pd.api.extensions.ExtensionArray:
    """Column ``col`` of ``stats`` (normalization: string, beta/l2: float); NA if absent."""
    if col == "normalization":
        values = stats[col] if col in stats.columns else [None] * len(stats)
        return pd.array([None if pd.isna(v) else str(v) for v in values], dtype="string")
    if col not in stats.columns:
        return pd.array([None] * len(stats), dtype="Float64")
    return pd.array(pd.to_numeric(stats[col], errors="coerce"), dtype="Float64")


def _rows(stats: pd.DataFrame, setting: str) -> pd.DataFrame:
    out = pd.DataFrame({"dataset": stats["dataset"].astype(str).to_numpy()})
    out["setting"] = setting
    for col in SETTING_COLUMNS:
        out[col] = _setting_value(stats, col)
    for col in TABLE1_COLUMNS:
        values = stats[col].to_numpy()
        out[col] = pd.array(values, dtype="Int64") if col in _INT_COLUMNS else values.astype(float)
    return out


def _setting_tuple(row: pd.Series) -> tuple:
    return (row["dataset"], *(None if pd.isna(row[c]) else row[c] for c in SETTING_COLUMNS))


def build_table1(stats: pd.DataFrame, variants: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1 from stats frames: ours, paper, ratios, match flags, one row per setting.

    Parameters
    ----------
    stats
        The configured setting, one row per dataset: columns ``dataset`` and
        :data:`pdsparse.repro.papers.faceoff.values.TABLE1_COLUMNS` at least,
        ``normalization``, ``beta`` and ``l2`` if known.
    variants
        Optional rows for the same datasets under other settings (normalization / beta).
        A variant whose ``(dataset, normalization, beta, l2)`` equals an earlier row is
        dropped (it is that row).

    Returns
    -------
    pandas.DataFrame
        Columns exactly :data:`TABLE1_CSV_COLUMNS`; the configured rows in input order
        (``setting`` = ``"configured"``), then the variants (``setting`` = ``"variant"``).

    Raises
    ------
    DataError
        If ``stats`` holds several rows for one dataset.
    """
    duplicated = stats["dataset"][stats["dataset"].duplicated()].tolist()
    if duplicated:
        raise DataError(
            f"Table 1 got several stats rows for dataset(s) {sorted(set(duplicated))}; pass "
            "other normalizations/beta values as variants"
        )
    parts = [_rows(stats, SETTING_CONFIGURED)]
    if variants is not None and not variants.empty:
        parts.append(_rows(variants, SETTING_VARIANT))
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    seen: set[tuple] = set()
    keep = []
    for _, row in out.iterrows():
        key = _setting_tuple(row)
        keep.append(row["setting"] == SETTING_CONFIGURED or key not in seen)
        seen.add(key)
    out = out[keep].reset_index(drop=True)
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
        Stats Parquet files of the configured setting, one dataset each (columns
        ``dataset``, ``normalization``, ``l2``, ``beta``, ``n``, ``d``, ``nnz``, ``density``,
        ``C_P``, ``C_D``, ``T_P_over_T_D``, ...).
    out_csv
        CSV with columns exactly :data:`TABLE1_CSV_COLUMNS`: every row, configured and
        variants, told apart by the ``setting`` column.
    out_md
        Markdown of the same rows: the main table (configured rows; each cell
        ``ours / paper ✓|✗``), the caption, a note on the paper's printed precision and, if
        there are variants, a "Variants" table.
    caption
        Caption text rendered verbatim below the table (the workflow supplies it, e.g. which
        normalization and beta reproduce the printed values).
    variant_paths
        Optional extra stats files for the same datasets under other normalizations / beta;
        rows with ``setting`` = ``"variant"`` and their own match flags.

    Returns
    -------
    pandas.DataFrame
        The table as written to ``out_csv``.
    """
    stats = read_stats(stats_paths)
    variants = read_stats(variant_paths) if variant_paths else None
    table = build_table1(stats, variants)
    markdown = render_table1_markdown(table, caption=caption)
    write_table(table, markdown, out_csv, out_md)
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
            flag = row[f"matches_paper_{col}"]
            cells.append(f"{ours} / {paper.printed.get(col, str(paper.value(col)))}{_flag(flag)}")
    return cells


def _setting(row: pd.Series) -> list[str]:
    def get(key: str) -> str:
        if key not in row.index or pd.isna(row[key]):
            return "–"
        value = row[key]
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    return [get(c) for c in SETTING_COLUMNS]


def _md_rows(table: pd.DataFrame) -> list[str]:
    lines = []
    for _, row in table.iterrows():
        paper = TABLE1.get(str(row["dataset"]))
        name = str(row["dataset"]) + ("" if paper is None else f" ({paper.paper_name})")
        lines.append("| " + " | ".join([name, *_setting(row), *_cells(row)]) + " |")
    return lines


def render_table1_markdown(table: pd.DataFrame, caption: str | None = None) -> str:
    """Markdown text of Table 1 from :func:`build_table1`'s frame; see :func:`faceoff_table1`.

    Rows with ``setting`` = ``"configured"`` form the main table, the others the "Variants"
    table; cells and ✓/✗ flags are those of the CSV.
    """
    header = ["dataset", "normalization", "β", "l2", *(_LABELS[c] for c in TABLE1_COLUMNS)]
    rule = "|" + "|".join(["---"] * 4 + ["---:"] * len(TABLE1_COLUMNS)) + "|"
    configured = table[table["setting"] == SETTING_CONFIGURED]
    variants = table[table["setting"] != SETTING_CONFIGURED]
    lines = [
        "## Table 1 — dataset statistics: ours / paper",
        "",
        "Cells read `ours / paper`; ✓ = ours agrees with the paper to its printed precision, "
        "✗ = it does not. Datasets the paper does not list show our value only. "
        "table1.csv holds the same rows (column `setting`: configured / variant).",
        "",
        "| " + " | ".join(header) + " |",
        rule,
        *_md_rows(configured),
        "",
    ]
    if caption:
        lines += [f"**Table 1.** {caption.strip()}", ""]
    lines += [f"*Precision:* {TABLE1_NOTE}", ""]
    if not variants.empty:
        lines += [
            "### Variants (other normalization / β)",
            "",
            "| " + " | ".join(header) + " |",
            rule,
            *_md_rows(variants),
            "",
        ]
    return "\n".join(lines)


# ------------------------------------------------------------- pdsparse output faceoff table1


def _table1_arguments(p) -> None:
    p.add_argument("--stats", nargs="+", required=True, help="stats .parquet files")
    p.add_argument("--variant", nargs="*", help="extra stats files (other settings)")
    p.add_argument("--caption", help="caption text under the Markdown table")


def _table1_build(args, outs) -> None:
    faceoff_table1(args.stats, *outs, caption=args.caption, variant_paths=args.variant or None)


TABLE1_OUTPUT = Builder("table", "Face-Off Table 1: data statistics beside the paper's values",
                        _table1_arguments, _table1_build)
