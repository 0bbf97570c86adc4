"""Compare two result trees of the Face-Off workflow: every trace on its non-timing columns
and Table 1's values, exactly (rows of other settings and new columns aside); Table 1's
Markdown is diffed by lines. Used to show that a refactoring changed no result.

    python benchmarks/compare_outputs.py OLD_RESULTS_DIR NEW_RESULTS_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

TIMING = {"time_s"}
ORDER = ["experiment", "dataset", "solver", "sampling", "dual_step", "seed", "iteration"]


def _frame(path: Path) -> pd.DataFrame:
    df = pd.read_parquet(path)
    cols = [c for c in df.columns if c not in TIMING]
    return df[cols].sort_values(ORDER).reset_index(drop=True)


def main(old: str, new: str) -> int:
    old_dir, new_dir = Path(old), Path(new)
    failures = 0
    for path in sorted((old_dir / "faceoff").glob("*.parquet")):
        other = new_dir / "faceoff" / path.name
        a, b = _frame(path), _frame(other)
        common = [c for c in a.columns if c in b.columns]
        extra = sorted(set(a.columns) ^ set(b.columns))
        try:
            pd.testing.assert_frame_equal(a[common], b[common], check_exact=True)
            status = "identical"
        except AssertionError as exc:
            failures += 1
            status = f"DIFFERENT: {str(exc).splitlines()[0:3]}"
        print(f"{path.name}: {len(a)} rows, {len(common)} columns compared: {status}"
              + (f" (columns only on one side: {extra})" if extra else ""))
    tables = (old_dir / "tables" / "faceoff", new_dir / "tables" / "faceoff")
    a, b = (pd.read_csv(d / "table1.csv") for d in tables)
    if "setting" in b.columns and "setting" not in a.columns:  # rows of other settings added
        b = b[b["setting"] == "configured"].reset_index(drop=True)
    common = [c for c in a.columns if c in b.columns]
    try:
        pd.testing.assert_frame_equal(a[common], b[common], check_exact=True)
        status = "identical"
    except AssertionError as exc:
        failures += 1
        status = f"DIFFERENT: {str(exc).splitlines()[0:3]}"
    print(f"table1.csv: {len(a)} rows, {len(common)} columns compared: {status}")
    lines = [d.joinpath("table1.md").read_text().splitlines() for d in tables]
    changed = sum(x != y for x, y in zip(*lines, strict=False)) + abs(len(lines[0]) - len(lines[1]))
    print(f"table1.md: {changed} line(s) differ" if changed else "table1.md: identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
