"""benchmarks/compare_verdicts.py: scorecard verdicts of two runs side by side."""

import csv
import importlib.util
import io
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_verdicts.py"
spec = importlib.util.spec_from_file_location("compare_verdicts", SCRIPT)
cv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cv)

FIELDS = ["paper", "outputs", "item", "reproduced", "paper_value", "our_value", "agreement",
          "reason"]


def _write(root: Path, rows):
    root.mkdir()
    with (root / "scorecard.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(dict(zip(FIELDS, r, strict=True)))


ROW = ("pdbfw", "figure1 speedup", "Figure 1: speed", "yes", "10x", "3.1x", "no", "slower")


def test_numbers_may_move_verdicts_may_not(tmp_path):
    _write(tmp_path / "a", [ROW])
    _write(tmp_path / "b", [(*ROW[:5], "2.7x", *ROW[6:])])
    out = io.StringIO()
    assert cv.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert cv.compare(cv.read(tmp_path / "a"), cv.read(tmp_path / "b"), out) == 0
    assert "1 verdicts the same, 0 flipped" in out.getvalue()
    _write(tmp_path / "c", [(*ROW[:6], "yes", "faster")])
    out = io.StringIO()
    assert cv.compare(cv.read(tmp_path / "a"), cv.read(tmp_path / "c"), out) == 1
    assert "pdbfw / Figure 1: speed: FLIPPED (agreement: 'no' -> 'yes')" in out.getvalue()


def test_a_row_on_one_side_only_fails(tmp_path):
    _write(tmp_path / "a", [ROW])
    _write(tmp_path / "b", [])
    out = io.StringIO()
    assert cv.compare(cv.read(tmp_path / "a"), cv.read(tmp_path / "b"), out) == 1
    assert "only in A" in out.getvalue()
