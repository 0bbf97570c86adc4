"""Do two runs give the same verdicts? The scorecard rows of two result trees side by side.

    python benchmarks/compare_verdicts.py A/results B/results

For the claim that a verdict does not flip with the machine's load: run the same config
twice (once with the machine quiet, once with both cores kept busy by other processes,
e.g. ``for i in 1 2; do (while :; do :; done) & done``) and compare. Each scorecard row
(paper, item) is matched between the trees; a row whose ``reproduced`` or ``agreement``
differs is a flipped verdict, listed with both values (the measured numbers may differ:
they are not verdicts). Exit status 1 if any verdict flipped or a row is on one side only.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

VERDICT = ("reproduced", "agreement")
KEY = ("paper", "outputs", "item")


def read(results: Path) -> dict[tuple[str, ...], dict[str, str]]:
    path = results / "scorecard.csv"
    if not path.is_file():
        raise SystemExit(f"compare_verdicts: {path} does not exist (run the workflow first)")
    with path.open(encoding="utf-8", newline="") as fh:
        return {tuple(r[k] for k in KEY): r for r in csv.DictReader(fh)}


def compare(a: dict, b: dict, out=sys.stdout) -> int:
    flipped = missing = 0
    for key in [*a, *(k for k in b if k not in a)]:
        name = " / ".join(key[::2])
        if key not in a or key not in b:
            missing += 1
            print(f"{name}: only in {'A' if key in a else 'B'}", file=out)
            continue
        diff = [f"{c}: {a[key][c]!r} -> {b[key][c]!r}" for c in VERDICT
                if a[key][c] != b[key][c]]
        if diff:
            flipped += 1
            print(f"{name}: FLIPPED ({'; '.join(diff)})", file=out)
    same = len(set(a) & set(b)) - flipped
    print(f"{same} verdicts the same, {flipped} flipped, {missing} rows on one side only",
          file=out)
    return 1 if flipped or missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="results/ of the first run")
    parser.add_argument("b", type=Path, help="results/ of the second run")
    args = parser.parse_args(argv)
    return compare(read(args.a), read(args.b))


if __name__ == "__main__":
    sys.exit(main())
