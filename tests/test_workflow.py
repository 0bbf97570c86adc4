"""Tests of the Snakemake workflow: lint, dry runs, config validation, a tiny real run.

Snakemake runs in a subprocess with the working directory in ``tmp_path`` (``-d``), so the
repository's data/ and results/ are never touched; the environment variable
PDSPARSE_DATA_MIRROR is removed unless a test sets it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

pytestmark = pytest.mark.skipif(
    not SNAKEMAKE.exists() and shutil.which("snakemake") is None,
    reason="snakemake is not installed",
)


def snakemake_exe() -> str:
    return str(SNAKEMAKE) if SNAKEMAKE.exists() else str(shutil.which("snakemake"))


def workdir(tmp_path: Path) -> Path:
    """A working directory with the repository's config/ (config, paper, registry)."""
    wd = tmp_path / "wd"
    shutil.copytree(REPO / "config", wd / "config")
    return wd


def smk(wd: Path, *args: str, env: dict | None = None, timeout: float = 300):
    full_env = {k: v for k, v in os.environ.items() if k != "PDSPARSE_DATA_MIRROR"}
    full_env.update(env or {})
    cmd = [snakemake_exe(), "-s", str(REPO / "Snakefile"), "-d", str(wd), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    res.output = res.stdout + res.stderr  # type: ignore[attr-defined]
    return res


def write_yaml(path: Path, doc) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


# ------------------------------------------------------------------------------- lint


def test_lint_clean(tmp_path):
    res = smk(workdir(tmp_path), "--lint")
    assert res.returncode == 0, res.output
    assert "Congratulations, your workflow is in a good condition" in res.output


# ------------------------------------------------------------------------------- dry runs


def test_dry_run_default_config_plans_everything_offline(tmp_path):
    res = smk(workdir(tmp_path), "-n")
    assert res.returncode == 0, res.output
    out = res.output
    for target in [
        "results/figures/faceoff/figure1.png",
        "results/figures/faceoff/figure1.pdf",
        "results/figures/faceoff/figure2.png",
        "results/figures/faceoff/figure3.pdf",
        "results/faceoff/figure1a.parquet",
        "results/faceoff/figure1b.parquet",
        "results/faceoff/figure2.parquet",
        "data/processed/wc_general_square.npz",
        "data/processed/bin_d100_n1000_p0.1.npz",
        "results/stats/bin_d100_n10000_p1.parquet",
        "results/reference/wc_general_tall__logistic__l2-1_n.parquet",
        "results/runs/faceoff/figure1a/wc_general_square/primal_rcd/importance-none-seed0.parquet",
        "results/runs/faceoff/figure2/bin_d100_n100_p0.01/dual_rcd/importance-fixed-seed0.parquet",
    ]:
        assert target in out, target
    # no real data offline: the real-data items are dropped, with one clear message
    assert "data/raw" not in out.replace("data/raw/ under", "")
    assert "figure1c" not in out and "table1.csv" not in out
    assert out.count("skipping these paper items") == 1
    for item in ("Figure 1c: news20.binary", "Figure 1d: leu", "Table 1 row: leu"):
        assert item in res.stderr
    assert "PDSPARSE_DATA_MIRROR" in res.stderr and "data.download: true" in res.stderr


def test_dry_run_with_mirror_adds_real_items(tmp_path):
    wd = workdir(tmp_path)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "leu.bz2").write_bytes(b"not checked at planning time")
    res = smk(wd, "-n", "-p", "--config", f"data={{mirror: {mirror}}}")
    assert res.returncode == 0, res.output
    out = res.output
    for target in [
        "data/raw/leu.bz2",
        "data/processed/leu.npz",
        "results/faceoff/figure1d.parquet",
        "results/tables/faceoff/table1.md",
        "results/stats/variants/leu__none__beta-0.25.parquet",
        f"--mirror {mirror}",
    ]:
        assert target in out, target
    assert "Figure 1c: news20.binary" in res.stderr
    assert "Figure 1d" not in res.stderr
    # the same through the environment variable
    res = smk(wd, "-n", env={"PDSPARSE_DATA_MIRROR": str(mirror)})
    assert res.returncode == 0, res.output
    assert "results/faceoff/figure1d.parquet" in res.output


def test_dry_run_paper_config_requires_all_data(tmp_path):
    wd = workdir(tmp_path)
    res = smk(wd, "-n", "--configfile", "config/paper.yaml")
    assert res.returncode == 0, res.output
    out = res.output
    for target in [
        "data/raw/news20.binary.bz2",
        "data/raw/leu.bz2",
        "results/faceoff/figure1c.parquet",
        "results/tables/faceoff/table1.csv",
        "seed2.parquet",
    ]:
        assert target in out, target
    assert "skipping these paper items" not in out


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("override", "needles"),
    [
        ({"faceof": {"max_epochs": 3}}, ["unknown key 'faceof'", "did you mean 'faceoff'"]),
        ({"data": {"mirorr": "x"}}, ["unknown key 'data.mirorr'", "did you mean 'mirror'"]),
        ({"faceoff": {"max_epochs": "ten"}}, ["faceoff.max_epochs", "'ten' is not of type"]),
        (
            {"faceoff": {"solvers": [{"method": "primal_rcd", "samplng": "uniform"}]}},
            ["faceoff.solvers[0].samplng"],
        ),
    ],
    ids=["top-level-typo", "nested-typo", "wrong-type", "list-item-typo"],
)
def test_bad_config_fails_naming_the_key(tmp_path, override, needles):
    wd = workdir(tmp_path)
    bad = write_yaml(wd / "bad.yaml", override)
    res = smk(wd, "-n", "--configfile", str(bad))
    assert res.returncode != 0
    for needle in needles:
        assert needle in res.output, res.output
    assert "Job stats" not in res.output  # failed before planning any job


# ------------------------------------------------------------------------------- real run

TINY = {
    "data": {"require_all": False, "download": False},
    "faceoff": {
        "seeds": [0],
        "max_epochs": 3,
        "max_seconds": 30,
        "reference": {"rtol": 1e-9, "max_seconds": 60},
        "synthetic": {"tiny_wc": {"kind": "worst_case_general", "params": {"d": 6, "n": 12}}},
        "figure1": {"panels": {"a": {"dataset": "tiny_wc", "title": "(a) tiny"}}},
        "figure2": {"d": 5, "n": [10], "nnz_fraction": [0.5, 1.0]},
        "figure3": {"n": 10, "d_points": 8, "alpha_points": 8},
        "table1": {"datasets": ["tiny_wc"], "variants": []},
    },
}


def tiny_config(wd: Path) -> Path:
    """config.yaml with the tiny settings merged in (written as one self-contained file)."""
    from pdsparse.config import _merge

    base = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    base["faceoff"]["synthetic"] = {}
    base["faceoff"]["figure1"] = {}
    doc = _merge(base, TINY)
    return write_yaml(wd / "config" / "config.yaml", doc)


def test_tiny_workflow_end_to_end(tmp_path):
    wd = workdir(tmp_path)
    tiny_config(wd)
    res = smk(wd, "--cores", "2", timeout=600)
    assert res.returncode == 0, res.output[-4000:]
    for rel in [
        "results/figures/faceoff/figure1.png",
        "results/figures/faceoff/figure1.pdf",
        "results/figures/faceoff/figure2.png",
        "results/figures/faceoff/figure3.png",
        "results/tables/faceoff/table1.csv",
        "results/tables/faceoff/table1.md",
        "logs/run/faceoff/figure1a/tiny_wc/dual_rcd/importance-fixed-seed0.log",
    ]:
        assert (wd / rel).is_file(), rel
    agg = pd.read_parquet(wd / "results" / "faceoff" / "figure2.parquet")
    assert set(agg["dataset"]) == {"bin_d5_n10_p0.5", "bin_d5_n10_p1"}
    assert set(agg["solver"]) == {"primal_rcd", "dual_rcd"}
    assert {"p_star", "subopt", "rel_subopt"} <= set(agg.columns)
    # nothing left to do: a second dry run plans no job
    res = smk(wd, "-n")
    assert res.returncode == 0
    assert "Nothing to be done" in res.output
