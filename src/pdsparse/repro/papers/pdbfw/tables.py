"""PDBFW Table 2: data statistics and the sparsity of x*, beside the paper's printed values.

Ours come from the prepared data sets (their metadata: n, d, nnz; the matrices are not
loaded) and from the reference solutions at Table 2's setting, which record nnz(x*), ||x*||_1
and whether the l1 ball is active at x* (:func:`pdsparse.reference.reference_record`). The
paper's "solution sparsity" is read as nnz(x*) and its ratio as nnz(x*)/d (423/7,129 = 5.9%
on duke: the printed ratios agree with that reading).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import pandas as pd

from pdsparse.data.store import data_meta
from pdsparse.errors import DataError
from pdsparse.io import read_parquet
from pdsparse.repro.output import Builder, pairs, printed_columns, require_file, write_table
from pdsparse.repro.papers.pdbfw.values import TABLE2, TABLE2_COLUMNS

__all__ = ["TABLE2_CSV_COLUMNS", "build_table2", "render_table2", "write_table2"]

PathLike = str | os.PathLike

TABLE2_CSV_COLUMNS = ["dataset", "paper_row", "problem", *TABLE2_COLUMNS, "radius",
                      "solution_norm", "active", "l2",
                      *(f"paper_{c}" for c in TABLE2_COLUMNS)]

_LABELS = {"features": "# features", "samples": "# samples", "nonzeros": "# non-zero",
           "sparsity": "solution sparsity", "sparsity_ratio": "(ratio)"}


def build_table2(data: Mapping[str, PathLike], references: Mapping[str, PathLike],
                 paper_rows: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per data set: display name -> prepared file (``data``) and the reference of
    its Table 2 problem (``references``, same names)."""
    paper_rows = dict(paper_rows or {})
    missing = sorted(set(data) ^ set(references))
    if missing:
        raise DataError(f"PDBFW Table 2: data sets without both a data file and a reference: "
                        f"{missing}")
    rows = []
    for name, path in data.items():
        meta = data_meta(path)
        ref = read_parquet(references[name], "reference file")
        need = {"solution_nnz", "solution_norm", "active", "radius", "problem"}
        if len(ref) != 1 or not need <= set(ref.columns):
            raise DataError(f"reference file {references[name]}: expected one row of an l1-ball "
                            f"problem with columns {sorted(need)}")
        r = ref.iloc[0]
        d = int(meta["d"])
        row = {"dataset": name, "paper_row": paper_rows.get(name, ""),
               "problem": str(r["problem"]), "features": d, "samples": int(meta["n"]),
               "nonzeros": int(meta["nnz"]), "sparsity": int(r["solution_nnz"]),
               "sparsity_ratio": int(r["solution_nnz"]) / d, "radius": float(r["radius"]),
               "solution_norm": float(r["solution_norm"]), "active": bool(r["active"]),
               "l2": float(r["l2"])}
        row.update(printed_columns(TABLE2, TABLE2_COLUMNS, row["paper_row"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=TABLE2_CSV_COLUMNS)


def _fmt(value, col: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if col == "sparsity_ratio":
        return f"{100 * value:.1f}%" if value >= 0.001 else f"{100 * value:.2f}%"
    return f"{value:,.0f}"


def render_table2(table: pd.DataFrame, caption: str = "") -> str:
    head = ["data set", *(_LABELS[c] for c in TABLE2_COLUMNS), "radius r", "‖x*‖₁",
            "ball active at x*"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        ours = [_fmt(r[c], c) for c in TABLE2_COLUMNS]
        lines.append("| " + " | ".join([f"{r['dataset']} (ours)", *ours, f"{r['radius']:g}",
                                         f"{r['solution_norm']:.4g}",
                                         "yes" if r["active"] else "**no**"]) + " |")
        if r["paper_row"]:
            printed = [_fmt(r[f"paper_{c}"], c) for c in TABLE2_COLUMNS]
            lines.append("| " + " | ".join([f"{r['paper_row']} (paper)", *printed, "300",
                                             "—", "—"]) + " |")
    text = "\n".join(lines) + "\n"
    note = ("\nSolution sparsity: nonzeros of the certified x* (reference solution) of the "
            "Figure 1 problem; ratio = nonzeros / features. A ball that is not active at x* "
            "makes the constraint, and Frank-Wolfe, beside the point.\n")
    return text + note + ("\n" + caption.strip() + "\n" if caption else "")


def write_table2(data: Mapping[str, PathLike], references: Mapping[str, PathLike],
                 out_csv: PathLike, out_md: PathLike, paper_rows: Mapping[str, str] | None = None,
                 caption: str = "") -> pd.DataFrame:
    table = build_table2(data, references, paper_rows)
    write_table(table, render_table2(table, caption), out_csv, out_md)
    return table


# --------------------------------------------------------------- pdsparse output pdbfw table2


def _table2_arguments(p) -> None:
    p.add_argument("--data", nargs="+", required=True, metavar="NAME=FILE",
                   help="display name = prepared .npz, one per row")
    p.add_argument("--references", nargs="+", required=True, metavar="NAME=FILE",
                   help="display name = reference .parquet of its Table 2 problem")
    p.add_argument("--paper-rows", nargs="*", metavar="NAME=ROW",
                   help="display name = the paper's Table 2 row it is compared with")
    p.add_argument("--caption", help="caption text under the Markdown table")


def _table2_build(args, outs) -> None:
    data = pairs(args.data, "--data")
    refs = pairs(args.references, "--references")
    for path in [*data.values(), *refs.values()]:
        require_file(path, "input")
    write_table2(data, refs, *outs, paper_rows=pairs(args.paper_rows, "--paper-rows"),
                 caption=args.caption or "")


TABLE2_OUTPUT = Builder("table", "PDBFW Table 2: data statistics and the sparsity of x* beside "
                        "the paper", _table2_arguments, _table2_build)
