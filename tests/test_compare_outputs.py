"""``benchmarks/compare_outputs.py`` on two tiny result trees written here: identical trees
pass, a changed value or a missing file fails and is named, measured times and the tails of
time-capped runs do not count."""

from __future__ import annotations

import importlib.util
import io
import shutil
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location(
    "compare_outputs", REPO / "benchmarks" / "compare_outputs.py"
)
compare_outputs = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = compare_outputs  # dataclasses look their module up
SPEC.loader.exec_module(compare_outputs)

FACEOFF_RUN = "runs/faceoff/figure1d/leu__logistic/dual_rcd/importance-fixed.parquet"
PDBFW_RUN = "runs/pdbfw/mu10_n/duke__l1ball/pdbfw/x100.parquet"


def trace(rows: int, status: str, seed: int = 0, solver: str = "dual_rcd") -> pd.DataFrame:
    """A run of ``rows`` evaluations, 10 iterations apart, ``status`` on the last row."""
    it = np.arange(rows) * 10
    return pd.DataFrame(
        {
            "experiment": "e",
            "dataset": "leu",
            "solver": solver,
            "l2": 0.1,
            "sampling": "none",
            "problem": "leu__logistic",
            "seed": seed,
            "iteration": it,
            "epoch": it / 5.0,
            "time_s": it * 1e-3,
            "primal": 1.0 + 1.0 / (1 + it),
            "dual": 1.0 - 1.0 / (1 + it),
            "gap": 2.0 / (1 + it),
            "nnz_primal": it % 7,
            "status": [""] * (rows - 1) + [status],
        }
    )


def write_trace(root: Path, rel: str, df: pd.DataFrame) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(path, index=False)


def write_png(path: Path, pixels: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    matplotlib.image.imsave(path, pixels)


def write_page(path: Path, md: Path) -> None:
    """The report's HTML page of a table's Markdown (``pdsparse html``)."""
    from pdsparse.repro.report import html_page, markdown_to_html

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_page(md.stem, markdown_to_html(md.read_text())))


def pixels() -> np.ndarray:
    return np.linspace(0.0, 1.0, 8 * 6 * 3).reshape(8, 6, 3)


def make_tree(root: Path) -> Path:
    """A results/ tree with one of every kind of file."""
    write_trace(root, FACEOFF_RUN, pd.concat([trace(5, "converged", s) for s in (0, 1)]))
    write_trace(root, PDBFW_RUN, trace(6, "max_time", solver="pdbfw"))
    write_trace(
        root, "faceoff/figure1d.parquet", trace(5, "converged").assign(p_star=1.0, subopt=0.5)
    )
    write_trace(
        root,
        "reference/leu__logistic.parquet",
        pd.DataFrame({"problem": ["leu__logistic"], "p_star": [1.0], "seconds": [0.3]}),
    )
    tables = root / "tables"
    (tables / "faceoff").mkdir(parents=True)
    pd.DataFrame({"dataset": ["leu"], "C_P": [1.5], "C_D": [2.25]}).to_csv(
        tables / "faceoff/table1.csv", index=False
    )
    (tables / "faceoff/table1.md").write_text(
        "| data set | C_P | C_D |\n|---|---|---|\n| leu | 1.5 | 2.25 |\n\nA caption.\n"
    )
    (tables / "pdbfw").mkdir()
    pd.DataFrame(
        {
            "dataset": ["duke", "duke"],
            "solver": ["pdbfw", "fw"],
            "time_0.01": [0.5, 2.0],
            "speedup_0.01": [1.0, 4.0],
        }
    ).to_csv(tables / "pdbfw/speedup.csv", index=False)
    (tables / "pdbfw/speedup.md").write_text(
        "| data | method | time to 0.01 | pdbfw speedup at 0.01 |\n|---|---|---|---|\n"
        "| duke | pdbfw | 0.5 s | (base) |\n| duke | fw | 2 s | 4× |\n"
    )
    for paper, name in (("faceoff", "table1"), ("pdbfw", "speedup")):
        write_page(root / f"report/{paper}/{name}.html", tables / f"{paper}/{name}.md")
    for paper in ("faceoff", "pdbfw"):
        write_png(root / f"figures/{paper}/figure1.png", pixels())
        (root / f"figures/{paper}/figure1.pdf").write_bytes(b"%PDF-1.4 dated")
    pd.DataFrame(
        {
            "paper": ["pdbfw"],
            "outputs": ["speedup"],
            "item": ["10x"],
            "reproduced": ["yes"],
            "paper_value": ["10×"],
            "our_value": ["4×"],
            "agreement": ["partly"],
            "reason": [""],
        }
    ).to_csv(root / "scorecard.csv", index=False)
    (root / "SCORECARD.md").write_text(
        "# Scorecard\n\n**1 items.**\n\n| paper | item | our value |\n|---|---|---|\n"
        "| PDBFW | 10x | 4× |\n"
    )
    return root


def run(old: Path, new: Path) -> tuple[int, str]:
    out = io.StringIO()
    status = compare_outputs.main([str(old), str(new)], out=out)
    return status, out.getvalue()


def line_of(text: str, rel: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(rel + ":"))


@pytest.fixture
def trees(tmp_path):
    old = make_tree(tmp_path / "old")
    new = tmp_path / "new"
    shutil.copytree(old, new)
    return old, new


def test_identical_trees_pass(trees):
    status, text = run(*trees)
    assert status == 0, text
    assert "0 different, 0 missing" in text
    assert "0 time-dependent" in text and "0 identical on the common prefix" in text
    assert "2 present only (PDF)" in text
    assert text.rstrip().endswith("OK: no difference beyond measured times")


def test_changed_value_fails_and_names_the_file(trees):
    old, new = trees
    df = pd.read_parquet(new / FACEOFF_RUN)
    df.loc[7, "primal"] = np.nextafter(df.loc[7, "primal"], 2.0)  # one bit
    write_trace(new, FACEOFF_RUN, df)
    status, text = run(old, new)
    assert status == 1
    assert "DIFFERENT" in line_of(text, FACEOFF_RUN) and "primal" in line_of(text, FACEOFF_RUN)
    assert "1 different" in text


def test_changed_time_only_passes(trees):
    old, new = trees
    df = pd.read_parquet(new / FACEOFF_RUN)
    df["time_s"] *= 3.0
    write_trace(new, FACEOFF_RUN, df)
    ref = pd.read_parquet(new / "reference/leu__logistic.parquet").assign(seconds=9.0)
    write_trace(new, "reference/leu__logistic.parquet", ref)
    status, text = run(old, new)
    assert status == 0, text
    assert line_of(text, FACEOFF_RUN).endswith("identical")
    assert "timing columns left out of the Parquet files: seconds, time_s" in text


@pytest.mark.parametrize("cut_short", [False, True])
def test_time_capped_run_longer_on_one_side_passes_on_the_prefix(trees, cut_short):
    """The old run stopped on the clock at its 6th evaluation, the new one ran 3 further;
    ``cut_short``: the old run's last chunk was cut by the clock (an iteration number the new
    run has not), so only 5 rows are common."""
    old, new = trees
    if cut_short:
        capped = trace(6, "max_time", solver="pdbfw")
        capped.loc[5, "iteration"] = 47
        write_trace(old, PDBFW_RUN, capped)
    write_trace(new, PDBFW_RUN, trace(9, "max_time", solver="pdbfw"))
    status, text = run(old, new)
    assert status == 0, text
    common = 5 if cut_short else 6
    assert f"identical on the common prefix ({common} of 6/9 rows; time-capped)" in line_of(
        text, PDBFW_RUN
    )
    assert "1 identical on the common prefix" in text


def test_time_capped_run_differing_on_the_prefix_fails(trees):
    old, new = trees
    longer = trace(9, "max_time", solver="pdbfw")
    longer.loc[2, "gap"] = 0.5
    write_trace(new, PDBFW_RUN, longer)
    status, text = run(old, new)
    assert status == 1
    assert "gap" in line_of(text, PDBFW_RUN)


def test_run_not_capped_of_other_length_fails(trees):
    old, new = trees
    write_trace(
        new, FACEOFF_RUN, pd.concat([trace(n, "converged", s) for s, n in ((0, 5), (1, 6))])
    )
    status, text = run(old, new)
    assert status == 1
    assert "neither run was time-capped" in line_of(text, FACEOFF_RUN)


def test_missing_figure_fails(trees):
    old, new = trees
    (new / "figures/faceoff/figure1.pdf").unlink()
    status, text = run(old, new)
    assert status == 1
    assert line_of(text, "figures/faceoff/figure1.pdf").endswith("MISSING in NEW")
    assert "1 missing" in text


def test_changed_pixel_is_reported(trees):
    old, new = trees
    changed = pixels()
    changed[3, 4] = [1.0, 0.0, 0.0]
    write_png(new / "figures/faceoff/figure1.png", changed)  # epochs: a real difference
    write_png(new / "figures/pdbfw/figure1.png", changed)  # time axis: expected to differ
    status, text = run(old, new)
    assert status == 1
    faceoff = line_of(text, "figures/faceoff/figure1.png")
    assert "DIFFERENT" in faceoff and f"1 of 6x8 pixels differ ({1 / 48:.4%})" in faceoff
    assert "time-dependent (time axis)" in line_of(text, "figures/pdbfw/figure1.png")


def test_time_dependent_table_cells_are_shown_not_failed(trees):
    old, new = trees
    csv = pd.read_csv(new / "tables/pdbfw/speedup.csv")
    csv.loc[1, ["time_0.01", "speedup_0.01"]] = [3.0, 6.0]
    csv.to_csv(new / "tables/pdbfw/speedup.csv", index=False)
    md = new / "tables/pdbfw/speedup.md"
    md.write_text(md.read_text().replace("| 2 s | 4× |", "| 3 s | 6× |"))
    write_page(new / "report/pdbfw/speedup.html", md)
    card = new / "scorecard.csv"
    card.write_text(card.read_text().replace("4×", "6×"))
    status, text = run(old, new)
    assert status == 0, text
    assert "time-dependent cells differ: time_0.01 of row 1" in line_of(
        text, "tables/pdbfw/speedup.csv"
    )
    assert "time to 0.01: 2 s -> 3 s" in line_of(text, "tables/pdbfw/speedup.md")
    assert "time to 0.01: 2 s -> 3 s" in line_of(text, "report/pdbfw/speedup.html")
    assert "4 time-dependent" in text


def test_a_tables_setup_time_is_a_measured_time(trees):
    """The speedup and sensitivity tables carry each run's setup CPU time (``setup_s``, the
    Markdown's "setup" column): it differs between two clean runs and is shown, not failed
    (it was reported DIFFERENT between session 11's and 12's clean runs)."""
    old, new = trees
    for root, setup in ((old, ["0.012", "0.020"]), (new, ["0.013", "0.019"])):
        csv = pd.read_csv(root / "tables/pdbfw/speedup.csv")
        csv.insert(2, "setup_s", [float(x) for x in setup])
        csv.to_csv(root / "tables/pdbfw/speedup.csv", index=False)
        md = root / "tables/pdbfw/speedup.md"
        md.write_text(
            "| data | method | setup | time to 0.01 | pdbfw speedup at 0.01 |\n"
            "|---|---|---|---|---|\n"
            f"| duke | pdbfw | {setup[0]} s | 0.5 s | (base) |\n"
            f"| duke | fw | {setup[1]} s | 2 s | 4× |\n"
        )
        write_page(root / "report/pdbfw/speedup.html", md)
    status, text = run(old, new)
    assert status == 0, text
    assert "time-dependent cells differ: setup_s of row 0" in line_of(
        text, "tables/pdbfw/speedup.csv"
    )
    assert "setup: 0.012 s -> 0.013 s" in line_of(text, "tables/pdbfw/speedup.md")
    assert "setup: 0.012 s -> 0.013 s" in line_of(text, "report/pdbfw/speedup.html")


def test_changed_table_cell_fails(trees):
    old, new = trees
    md = new / "tables/faceoff/table1.md"
    md.write_text(md.read_text().replace("2.25", "2.26"))
    write_page(new / "report/faceoff/table1.html", md)
    status, text = run(old, new)
    assert status == 1
    assert "DIFFERENT" in line_of(text, "tables/faceoff/table1.md")
    assert "DIFFERENT" in line_of(text, "report/faceoff/table1.html")


@pytest.mark.parametrize("status", ["converged", "max_time"])
def test_final_iterate_cells_depend_on_time_only_for_capped_runs(trees, status):
    """DGPD Table 2 holds the nonzeros of each data set's final iterate: a different count is
    expected after a time-capped run, a difference after a run that stopped on its own."""
    old, new = trees
    table = pd.DataFrame(
        {"dataset": ["digits-rb"], "features": [100], "nz_primal": [40.0], "status": [status]}
    )
    (old / "tables/dgpd").mkdir()
    table.to_csv(old / "tables/dgpd/table2.csv", index=False)
    (new / "tables/dgpd").mkdir()
    table.assign(nz_primal=42.0).to_csv(new / "tables/dgpd/table2.csv", index=False)
    status_code, text = run(old, new)
    verdict = line_of(text, "tables/dgpd/table2.csv")
    if status == "max_time":
        assert status_code == 0 and "time-dependent cells differ: nz_primal" in verdict
    else:
        assert status_code == 1 and "DIFFERENT: nz_primal" in verdict


@pytest.mark.parametrize("status", ["converged", "max_time"])
def test_a_sensitivity_tables_final_value_depends_on_time_when_its_runs_were_capped(
    trees, status
):
    """A sensitivity table's ``final`` (the runs' last relative suboptimality) and its
    Markdown's "to 0.01: CPU s (...)" cells: time-dependent where the table's aggregate holds
    a time-capped run (they made both sensitivity tables of DGPD and PDBFW DIFFERENT between
    two clean runs), a difference where its runs all stopped on their own."""
    old, new = trees
    for root, final, secs in ((old, "1.2e-05", "0.156 s"), (new, "6.4e-06", "0.12 s")):
        write_trace(root, "pdbfw/sensitivity.parquet",
                    trace(5, status, solver="pdbfw").assign(p_star=1.0, subopt=0.5))
        role = "best" if root is old else ""  # the fastest configuration: chosen by time
        pd.DataFrame({"method": ["pdbfw"], "setup_s": [0.01], "final": [final],
                      "time_0.01": [secs[:-2]], "role": [role]}).to_csv(
            root / "tables/pdbfw/sensitivity.csv", index=False)
        md = root / "tables/pdbfw/sensitivity.md"
        md.write_text("| method | setup | to 0.01: CPU s (kernel s, passes) |\n|---|---|---|\n"
                      f"| pdbfw | 0.01 s | {secs} (0.1 s, 18.2) |\n")
        write_page(root / "report/pdbfw/sensitivity.html", md)
    status_code, text = run(old, new)
    verdict = line_of(text, "tables/pdbfw/sensitivity.csv")
    if status == "max_time":
        assert status_code == 0, text
        assert "time-dependent cells differ: final of row 0" in verdict
        assert "role of row 0 (pdbfw): 'best' -> ''" in verdict
        assert "time-dependent" in line_of(text, "tables/pdbfw/sensitivity.md")
    else:
        assert status_code == 1 and "DIFFERENT: final of row 0" in verdict


def test_an_option_column_no_run_sets_is_a_schema_addition(trees):
    """A solver added between the trees gives every trace an option column ("ws") that no
    other solver's run sets ("none"): identical, with a note; set in one run (or with the
    aggregate's value changed), it is a difference."""
    old, new = trees
    for rel in (FACEOFF_RUN, "faceoff/figure1d.parquet"):
        df = pd.read_parquet(new / rel)
        df.insert(3, "ws", "none")
        write_trace(new, rel, df)
    pd.read_csv(new / "tables/faceoff/table1.csv").assign(ws="").to_csv(
        new / "tables/faceoff/table1.csv", index=False)
    status, text = run(old, new)
    assert status == 0, text
    for rel in (FACEOFF_RUN, "faceoff/figure1d.parquet", "tables/faceoff/table1.csv"):
        line = line_of(text, rel)
        assert "identical" in line and "NEW adds option column(s) ['ws']" in line, line
    df = pd.read_parquet(new / FACEOFF_RUN)
    df.loc[0, "ws"] = "grow"
    write_trace(new, FACEOFF_RUN, df)
    status, text = run(old, new)
    assert status == 1 and "columns only in OLD [], only in NEW ['ws']" in line_of(
        text, FACEOFF_RUN)
