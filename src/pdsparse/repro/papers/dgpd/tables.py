"""DGPD Table 2: data statistics and DGPD's nonzero primal and dual variables at lambda = 0.1,
mu = 0.01, beside the paper's printed values, plus the test accuracy of the final iterate.

Ours come from the prepared data sets (their metadata only: n, d, nnz, label counts, test
rows; the matrices are not loaded) and from the DGPD run traces (the last row's
``nnz_primal`` / ``nnz_dual``, summed over the one-vs-rest classes, and the ``test_accuracy``
each run records in its metadata), the median over seeds. A set prepared with
``positive_class`` (one class against the rest, e.g. digit 0 of the full-size MNIST) solves
that one class: ``solved_classes`` is 1, ``positive_class`` names it, its nonzeros are that
class's and its test accuracy is the binary one; the row says so.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from pdsparse.data.store import data_meta
from pdsparse.io import read_parquet
from pdsparse.repro.output import Builder, pairs, printed_columns, require_file, write_table
from pdsparse.repro.papers.dgpd.values import TABLE2, TABLE2_COLUMNS, TABLE2_SETTING
from pdsparse.repro.traces import read_metadata

__all__ = ["TABLE2_CSV_COLUMNS", "build_table2", "write_table2"]

PathLike = str | os.PathLike

TABLE2_CSV_COLUMNS = ["dataset", "paper_row", "problem", *TABLE2_COLUMNS, "test_accuracy",
                      "status", *(f"paper_{c}" for c in TABLE2_COLUMNS), "solved_classes",
                      "positive_class", "opt_nz_primal", "opt_nz_dual"]
"""``nz_primal`` / ``nz_dual``: DGPD's iterates at the end of its run; ``opt_nz_*``: the
certified optimum's supports (x* and alpha(x*), from the reference file; NaN without one)."""

_LABELS = {"features": "#features", "nnz_per_sample": "#nonzero/sample", "train": "#train",
           "test": "#test", "classes": "#classes", "nz_primal": "#nz-primal",
           "nz_dual": "#nz-dual"}


def _classes(meta: Mapping) -> int:
    counts = meta.get("raw_label_counts") or meta.get("label_counts") or {}
    return len(counts)


def _solved(meta: Mapping) -> tuple[int, str]:
    """(one-vs-rest classes solved, the positive class of a one-class set or "")."""
    positive = meta.get("positive_class")
    if meta.get("task") == "binary":
        multi = meta.get("original_task") == "multiclass" and positive is not None
        return 1, str(positive) if multi else ""
    return len(meta.get("label_counts") or {}) or _classes(meta), ""


def _test_rows(meta: Mapping) -> int | float:
    for key in ("n_test", "test_rows"):
        if meta.get(key) is not None:
            return int(meta[key])
    split = meta.get("split") or {}
    if isinstance(split, Mapping) and split.get("n_test") is not None:
        return int(split["n_test"])
    return math.nan


def data_key(problem_tag: str) -> str:
    """The prepared file's key (``<name>__<recipe>``) of a problem tag
    (``<name>+<recipe>__<loss>__...``): how a trace finds its data set."""
    head = problem_tag.split("__", 1)[0]
    name, _, recipe = head.partition("+")
    return f"{name}__{recipe}" if recipe else name


def build_table2(runs: Sequence[PathLike], data: Mapping[str, PathLike],
                 paper_rows: Mapping[str, str] | None = None,
                 references: Sequence[PathLike] = ()) -> pd.DataFrame:
    """One row per data set (display name -> prepared file in ``data``); ``runs`` are the
    DGPD traces at Table 2's setting, matched to the data sets by their problem's data key
    (two recipes of one source, digits-rb and digits-rf, are two data sets); ``references``
    the reference files of their problems (the optimum's supports; files written before
    the supports were recorded give NaN)."""
    paper_rows = dict(paper_rows or {})
    optimum = {}
    for path in references:
        ref = read_parquet(path, "reference file")
        if {"optimum_nnz_primal", "optimum_nnz_dual"} <= set(ref.columns):
            r = ref.iloc[0]
            optimum[str(r["problem"])] = (float(r["optimum_nnz_primal"]),
                                          float(r["optimum_nnz_dual"]))
    traces = {}
    for path in runs:
        df = read_parquet(path, "trace")
        key = data_key(str(df["problem"].iloc[0]))
        traces.setdefault(key, []).append((df, read_metadata(path)))
    rows = []
    for name, path in data.items():
        meta = data_meta(path)
        n, d, nnz = int(meta["n"]), int(meta["d"]), int(meta["nnz"])
        row = {"dataset": name, "paper_row": paper_rows.get(name, ""), "features": d,
               "nnz_per_sample": nnz / n, "train": n, "test": _test_rows(meta),
               "classes": _classes(meta), "problem": "", "nz_primal": math.nan,
               "nz_dual": math.nan, "test_accuracy": math.nan, "status": "",
               "opt_nz_primal": math.nan, "opt_nz_dual": math.nan}
        row["solved_classes"], row["positive_class"] = _solved(meta)
        found = traces.get(Path(path).stem, [])
        if found:
            lasts = pd.concat([df.groupby("seed").tail(1) for df, _ in found])
            row["problem"] = str(lasts["problem"].iloc[0])
            row["nz_primal"] = float(lasts["nnz_primal"].median())
            row["nz_dual"] = float(lasts["nnz_dual"].median())
            row["status"] = ",".join(sorted(set(map(str, lasts["status"]))))
            row["opt_nz_primal"], row["opt_nz_dual"] = optimum.get(row["problem"],
                                                                   (math.nan, math.nan))
            acc = [r.get("test_accuracy") for _, m in found for r in m.get("runs", [])]
            acc = [a for a in acc if a is not None and not math.isnan(a)]
            row["test_accuracy"] = float(np.median(acc)) if acc else math.nan
        row.update(printed_columns(TABLE2, TABLE2_COLUMNS, row["paper_row"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=TABLE2_CSV_COLUMNS)


def _fmt(value, col: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if col == "nnz_per_sample":
        return f"{value:,.2f}"
    if col == "test_accuracy":
        return f"{100 * value:.2f}%"
    return f"{value:,.0f}"


def render_table2(table: pd.DataFrame, caption: str = "") -> str:
    head = ["data set", *(_LABELS[c] for c in TABLE2_COLUMNS), "test accuracy",
            "#nz at x*, y*"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    one_class = False
    for _, r in table.iterrows():
        ours = [_fmt(r[c], c) for c in TABLE2_COLUMNS]
        label = f"{r['dataset']} (ours)"
        positive = r.get("positive_class")
        if isinstance(positive, str | int | float) and str(positive) not in ("", "nan"):
            label = f"{r['dataset']} (ours; class {positive} vs rest*)"
            one_class = True
        opt = (f"{_fmt(r['opt_nz_primal'], 'nz')}, {_fmt(r['opt_nz_dual'], 'nz')}"
               if not math.isnan(r["opt_nz_primal"]) else "—")
        lines.append("| " + " | ".join([label, *ours,
                                         _fmt(r["test_accuracy"], "test_accuracy"), opt]) + " |")
        if r["paper_row"]:
            printed = [_fmt(r[f"paper_{c}"], c) for c in TABLE2_COLUMNS]
            lines.append("| " + " | ".join([f"{r['paper_row']} (paper)", *printed, "—", "—"])
                         + " |")
    text = "\n".join(lines) + "\n"
    setting = (f"\n#nz-primal and #nz-dual: DGPD's final iterate at λ = {TABLE2_SETTING['lam']}, "
               f"μ = {TABLE2_SETTING['mu']}, summed over the one-vs-rest classes (median over "
               "seeds). #nz at x*, y*: the certified optimum's supports (x* and its dual "
               "alpha(x*) = -phi'(A x*), from the reference solution), to tell the two readings "
               "of the paper's counts apart.\n")
    if one_class:
        setting += ("\n*One class against the rest only (the others are not run): #nz-primal "
                    "and #nz-dual are that class's, the test accuracy is the binary one; "
                    "#classes is the data set's.\n")
    return text + setting + ("\n" + caption.strip() + "\n" if caption else "")


def write_table2(runs: Sequence[PathLike], data: Mapping[str, PathLike], out_csv: PathLike,
                 out_md: PathLike, paper_rows: Mapping[str, str] | None = None,
                 caption: str = "", references: Sequence[PathLike] = ()) -> pd.DataFrame:
    table = build_table2(runs, data, paper_rows, references)
    write_table(table, render_table2(table, caption), out_csv, out_md)
    return table


# ---------------------------------------------------------------- pdsparse output dgpd table2


def _table2_arguments(p) -> None:
    p.add_argument("--runs", nargs="+", required=True,
                   help="DGPD trace files at Table 2's lambda, mu")
    p.add_argument("--data", nargs="+", required=True, metavar="NAME=FILE",
                   help="display name = prepared .npz, one per row")
    p.add_argument("--paper-rows", nargs="*", metavar="NAME=ROW",
                   help="display name = the paper's Table 2 row it is compared with")
    p.add_argument("--caption", help="caption text under the Markdown table")
    p.add_argument("--references", nargs="*", default=[],
                   help="reference files of the runs' problems (the optimum's supports)")


def _table2_build(args, outs) -> None:
    data = pairs(args.data, "--data")
    for path in [*args.runs, *data.values(), *args.references]:
        require_file(path, "input")
    write_table2(args.runs, data, *outs, paper_rows=pairs(args.paper_rows, "--paper-rows"),
                 caption=args.caption or "", references=args.references)


TABLE2_OUTPUT = Builder("table", "DGPD Table 2: data statistics and DGPD's nonzeros beside the "
                        "paper", _table2_arguments, _table2_build)
