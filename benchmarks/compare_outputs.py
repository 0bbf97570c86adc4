"""Compare two result trees of the Face-Off workflow: every trace on its non-timing columns
and Table 1, exactly. Used to show that a refactoring changed no result.

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
    for name in ("table1.csv", "table1.md"):
        a = (old_dir / "tables" / "faceoff" / name).read_text()
        b = (new_dir / "tables" / "faceoff" / name).read_text()
        same = a == b
        failures += not same
        print(f"{name}: {'identical' if same else 'DIFFERENT'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
