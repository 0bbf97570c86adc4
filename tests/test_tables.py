"""Tests of Table 1 (pdsparse.repro.papers.faceoff.tables) and the paper's printed values
(pdsparse.repro.papers.faceoff.values)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pdsparse.errors import DataError
from pdsparse.repro.papers.faceoff.tables import TABLE1_CSV_COLUMNS, build_table1, faceoff_table1
from pdsparse.repro.papers.faceoff.values import TABLE1, TABLE1_COLUMNS, TABLE1_PRECISION, Precision

EXPECTED_COLUMNS = [
    "dataset",
    "setting",
    "normalization",
    "beta",
    "l2",
    "d",
    "n",
    "density",
    "nnz",
    "C_P",
    "C_D",
    "T_P_over_T_D",
    "paper_d",
    "paper_n",
    "paper_density",
    "paper_nnz",
    "paper_C_P",
    "paper_C_D",
    "paper_T_P_over_T_D",
    "ratio_C_P",
    "ratio_C_D",
    "ratio_T_P_over_T_D",
    "matches_paper_d",
    "matches_paper_n",
    "matches_paper_density",
    "matches_paper_nnz",
    "matches_paper_C_P",
    "matches_paper_C_D",
    "matches_paper_T_P_over_T_D",
    "matches_paper",
]


def stats_row(dataset, d, n, nnz, C_P, C_D, ratio, normalization="avg_example_norm", beta=0.25):
    return {
        "dataset": dataset,
        "normalization": normalization,
        "l2": 1.0 / n,
        "beta": beta,
        "n": n,
        "d": d,
        "nnz": nnz,
        "density": nnz / (n * d),
        "C_P": C_P,
        "C_D": C_D,
        "T_P_over_T_D": ratio,
        "frob2": float(n),
    }


NEWS_OK = stats_row("news20.binary", 1_355_191, 19_996, 9_097_916, 2.6e7, 9.2e6, 1.96)
LEU_OFF = stats_row("leu", 7_129, 38, 270_902, 1.2e7, 2.6e5, 0.04)  # C_D, ratio off
OTHER = stats_row("rcv1", 47_236, 20_242, 1_498_952, 1.0e6, 2.0e6, 0.7)


def write_stats(tmp_path, rows):
    tmp_path.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, row in enumerate(rows):
        path = tmp_path / f"stats_{i}_{row['dataset']}.parquet"
        pd.DataFrame([row]).to_parquet(path)
        paths.append(path)
    return paths


# ----------------------------------------------------------------- faceoff_values


def test_paper_table1_rows():
    news, leu = TABLE1["news20.binary"], TABLE1["leu"]
    assert (news.d, news.n, news.nnz) == (1_355_191, 19_996, 9_097_916)
    assert (news.C_P, news.C_D, news.T_P_over_T_D) == (3e7, 9e6, 2.0)
    assert (leu.d, leu.n, leu.nnz) == (7_129, 38, 270_902)
    assert (leu.C_P, leu.C_D, leu.T_P_over_T_D) == (1e7, 2e9, 0.5)
    assert leu.density == 1.0 and news.density == 0.0003
    # Printed nnz/(n d) of the paper is consistent with its printed density.
    for row in (news, leu):
        assert TABLE1_PRECISION["density"].matches(row.nnz / (row.n * row.d), row.density)
    assert set(TABLE1_PRECISION) == set(TABLE1_COLUMNS)


@pytest.mark.parametrize(
    ("precision", "ours", "paper", "expected"),
    [
        (Precision("sig", 1), 2.6e7, 3e7, True),
        (Precision("sig", 1), 2.5e7, 3e7, True),  # half rounds away from zero
        (Precision("sig", 1), 2.49e7, 3e7, False),
        (Precision("sig", 1), 3.49e7, 3e7, True),
        (Precision("sig", 1), 3.5e7, 3e7, False),
        (Precision("sig", 1), 9.6e6, 1e7, True),  # rounds up across the decade
        (Precision("sig", 1), 9.4e6, 1e7, False),
        (Precision("sig", 1), 5e6, 1e7, False),
        (Precision("sig", 1), 2.6e5, 2e9, False),
        (Precision("decimals", 1), 1.96, 2.0, True),
        (Precision("decimals", 1), 2.04, 2.0, True),
        (Precision("decimals", 1), 2.06, 2.0, False),
        (Precision("decimals", 1), 0.04, 0.5, False),
        (Precision("decimals", 2, 100.0), 9_097_916 / (1_355_191 * 19_996), 0.0003, True),
        (Precision("decimals", 2, 100.0), 0.00036, 0.0003, False),
        (Precision("decimals", 2, 100.0), 1.0, 1.0, True),
        (Precision("exact"), 19_996, 19_996, True),
        (Precision("exact"), 19_995, 19_996, False),
        (Precision("sig", 1), float("nan"), 3e7, False),
    ],
)
def test_precision_matches(precision, ours, paper, expected):
    assert precision.matches(ours, paper) is expected


# ----------------------------------------------------------------- build_table1


def test_build_table1_ratios_and_flags():
    table = build_table1(pd.DataFrame([NEWS_OK, LEU_OFF, OTHER]))
    assert list(table.columns) == EXPECTED_COLUMNS == TABLE1_CSV_COLUMNS
    news, leu, other = (table.iloc[i] for i in range(3))
    assert list(table["setting"]) == ["configured"] * 3
    assert news["normalization"] == "avg_example_norm" and news["beta"] == 0.25

    assert news["ratio_C_P"] == pytest.approx(2.6e7 / 3e7)
    assert news["ratio_C_D"] == pytest.approx(9.2e6 / 9e6)
    assert news["ratio_T_P_over_T_D"] == pytest.approx(1.96 / 2.0)
    assert leu["ratio_C_D"] == pytest.approx(2.6e5 / 2e9)
    assert leu["ratio_T_P_over_T_D"] == pytest.approx(0.04 / 0.5)

    assert all(bool(news[f"matches_paper_{c}"]) for c in TABLE1_COLUMNS)
    assert bool(news["matches_paper"])
    assert bool(leu["matches_paper_d"]) and bool(leu["matches_paper_C_P"])  # 1.2e7 -> 1e7
    assert not bool(leu["matches_paper_C_D"])
    assert not bool(leu["matches_paper_T_P_over_T_D"])
    assert not bool(leu["matches_paper"])

    # No paper row: paper, ratio and flag columns are empty.
    paper_cols = [c for c in EXPECTED_COLUMNS if c.startswith(("paper_", "ratio_", "matches_"))]
    assert len(paper_cols) == 18
    for col in paper_cols:
        assert pd.isna(other[col]), col
    assert other["C_P"] == 1.0e6


def test_build_table1_variants_are_rows_with_their_setting():
    variant = dict(LEU_OFF, normalization="none", C_D=2.2e9, T_P_over_T_D=0.49)
    same_as_configured = dict(NEWS_OK)  # a variant equal to the configured setting: dropped
    table = build_table1(
        pd.DataFrame([NEWS_OK, LEU_OFF]), pd.DataFrame([variant, same_as_configured])
    )
    assert list(table.columns) == EXPECTED_COLUMNS
    assert list(table["dataset"]) == ["news20.binary", "leu", "leu"]
    assert list(table["setting"]) == ["configured", "configured", "variant"]
    assert list(table["normalization"]) == ["avg_example_norm", "avg_example_norm", "none"]
    var = table.iloc[2]
    assert var["beta"] == 0.25 and var["l2"] == pytest.approx(1 / 38)
    assert var["paper_C_D"] == 2e9 and var["ratio_C_D"] == pytest.approx(2.2e9 / 2e9)
    assert bool(var["matches_paper_C_D"]) and bool(var["matches_paper_T_P_over_T_D"])


def test_build_table1_without_setting_columns():
    minimal = {k: v for k, v in OTHER.items() if k not in ("normalization", "beta", "l2")}
    table = build_table1(pd.DataFrame([minimal]))
    assert table.loc[0, "setting"] == "configured"
    assert pd.isna(table.loc[0, "normalization"]) and pd.isna(table.loc[0, "beta"])


def test_build_table1_rejects_duplicate_dataset():
    with pytest.raises(DataError, match="news20.binary"):
        build_table1(pd.DataFrame([NEWS_OK, NEWS_OK]))


# ----------------------------------------------------------------- faceoff_table1


def test_faceoff_table1_writes_csv_and_markdown(tmp_path):
    paths = write_stats(tmp_path, [NEWS_OK, LEU_OFF, OTHER])
    variant = dict(LEU_OFF, normalization="none", C_D=2.2e9, T_P_over_T_D=0.49)
    variant_paths = write_stats(tmp_path / "variants", [variant])
    out_csv, out_md = tmp_path / "out" / "table1.csv", tmp_path / "out" / "table1.md"
    caption = "Normalization: examples divided by the average example norm; beta = 1/4."

    result = faceoff_table1(paths, out_csv, out_md, caption=caption, variant_paths=variant_paths)

    csv = pd.read_csv(out_csv)
    assert list(csv.columns) == EXPECTED_COLUMNS
    # Every row is in the CSV: the configured setting, then the variants.
    assert list(csv["dataset"]) == ["news20.binary", "leu", "rcv1", "leu"]
    assert list(csv["setting"]) == ["configured"] * 3 + ["variant"]
    assert list(csv["normalization"]) == ["avg_example_norm"] * 3 + ["none"]
    assert list(csv["beta"]) == [0.25] * 4
    assert csv.loc[3, "paper_C_D"] == 2e9 and csv.loc[3, "C_D"] == 2.2e9
    assert bool(csv.loc[3, "matches_paper_C_D"])
    assert csv.loc[0, "paper_d"] == 1_355_191 and csv.loc[1, "paper_C_D"] == 2e9
    assert math.isnan(csv.loc[2, "paper_C_P"]) and math.isnan(csv.loc[2, "ratio_C_P"])
    assert csv.loc[0, "ratio_C_P"] == pytest.approx(2.6e7 / 3e7)
    assert bool(csv.loc[0, "matches_paper"]) and not bool(csv.loc[1, "matches_paper"])
    assert len(result) == 4

    md = out_md.read_text(encoding="utf-8")
    assert caption in md
    assert "2.60×10^7 / 3×10^7 ✓" in md  # ours beside the paper's printed value
    assert "2.60×10^5 / 2×10^9 ✗" in md
    assert "news20.binary (news)" in md and "leu (leukemia)" in md
    assert "Variants" in md and "2.20×10^9 / 2×10^9 ✓" in md
    # Markdown and CSV agree: one Markdown table row per CSV row, variants after the heading.
    main_md, variants_md = md.split("### Variants")
    assert sum(line.startswith("| leu") for line in main_md.splitlines()) == 1
    variant_lines = [line for line in variants_md.splitlines() if line.startswith("| leu")]
    assert len(variant_lines) == 1 and "| none | 0.25 |" in variant_lines[0]
    assert "one significant digit" in md
    # Atomic writes leave no temporary files behind.
    assert sorted(p.name for p in out_csv.parent.iterdir()) == ["table1.csv", "table1.md"]


def test_faceoff_table1_without_caption_or_variants(tmp_path):
    paths = write_stats(tmp_path, [OTHER])
    faceoff_table1(paths, tmp_path / "t.csv", tmp_path / "t.md")
    md = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert "rcv1" in md and "Variants" not in md and "**Table 1.**" not in md


def test_faceoff_table1_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.parquet"
    with pytest.raises(DataError, match="nope.parquet"):
        faceoff_table1([missing], tmp_path / "t.csv", tmp_path / "t.md")
    bad = tmp_path / "bad.parquet"
    pd.DataFrame([{"dataset": "x", "d": 1}]).to_parquet(bad)
    with pytest.raises(DataError, match="bad.parquet.*C_P"):
        faceoff_table1([bad], tmp_path / "t.csv", tmp_path / "t.md")
    assert not (tmp_path / "t.csv").exists()
