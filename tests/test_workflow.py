"""Tests of the Snakemake workflow: lint, dry runs, config validation, a tiny real run.

Snakemake runs in a subprocess with the working directory in ``tmp_path`` (``-d``), so the
repository's data/ and results/ are never touched; the environment variable
PDSPARSE_DATA_MIRROR is removed unless a test sets it.
"""

from __future__ import annotations

import json
import os
import re
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


# Snakemake's default scheduling rhythm: profiles/default's slower one (fewer scheduler rounds
# in a long run) keeps a finished run's process alive up to 10 s, about a minute a suite
FAST_EXIT = ("--max-jobs-per-timespan", "100/1s")


def smk(wd: Path, *args: str, env: dict | None = None, timeout: float = 300):
    full_env = {k: v for k, v in os.environ.items() if k != "PDSPARSE_DATA_MIRROR"}
    full_env.update(env or {})
    cmd = [snakemake_exe(), "-s", str(REPO / "Snakefile"), "-d", str(wd), *FAST_EXIT, *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    res.output = res.stdout + res.stderr  # type: ignore[attr-defined]
    return res


def planned_jobs(wd: Path, stderr: str) -> dict:
    """The job specs of the plan file a dry run names ("Every job's spec: FILE ...")."""
    match = re.search(r"Every job's spec: (\S+) ", stderr)
    assert match, stderr[-2000:]
    return json.loads((wd / match.group(1)).read_text())


def write_yaml(path: Path, doc) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


# ------------------------------------------------------------------------------- lint


def test_lint_clean(tmp_path):
    res = smk(workdir(tmp_path), "--lint")
    assert res.returncode == 0, res.output
    assert "Congratulations, your workflow is in a good condition" in res.output


def test_snakefmt_clean():
    """The Snakefile and workflow/rules/*.smk are as snakefmt writes them, at the line length
    of ``[tool.snakefmt]`` in pyproject.toml (ruff's); fix with ``snakefmt Snakefile
    workflow/rules``."""
    pytest.importorskip(
        "snakefmt", reason="snakefmt is not installed (it is in the [test] extra of pyproject)"
    )
    cmd = [sys.executable, "-m", "snakefmt", "--config", str(REPO / "pyproject.toml")]
    cmd += ["--check", "--compact-diff"]  # the diff names the file and the lines
    files = ["Snakefile", "workflow/rules"]
    res = subprocess.run([*cmd, *files], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


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
        "data/processed/wc_general_square__avg_example_norm.npz",
        "data/processed/bin_d100_n1000_p0.1__avg_example_norm.npz",
        "results/stats/bin_d100_n10000_p1__avg_example_norm__l2-1_n__beta-0.25.parquet",
        "results/reference/wc_general_tall+avg_example_norm__logistic__l2-1_n.parquet",
        "results/runs/faceoff/figure1a/wc_general_square+avg_example_norm__logistic__l2-1_n/"
        "primal_rcd/importance.parquet",
        "results/runs/faceoff/figure2/bin_d100_n100_p0.01+avg_example_norm__logistic__l2-1_n/"
        "dual_rcd/importance-fixed.parquet",
    ]:
        assert target in out, target
    # no real data offline: the real-data items are dropped, with one clear message
    assert "data/raw" not in out.replace("data/raw/ as", "")  # the message's one mention
    assert "figure1c" not in out and "table1.csv" not in out
    assert out.count("skipping these paper items") == 1
    for item in ("Figure 1c: news20.binary", "Figure 1d: leu", "Table 1 row: leu"):
        assert item in res.stderr
    assert "PDSPARSE_DATA_MIRROR" in res.stderr
    assert "--config 'data={download: true}'" in res.stderr
    # the plan's cost, before it runs, over every job Snakemake plans (all but `all`)
    import re

    planned = int(re.search(r"^total\s+(\d+)", out, re.M)[1]) - 1
    # issue 29: docs/workflow.md said 242 jobs where a fresh clone planned 283
    said = re.search(r"estimated cost: (\d+) jobs offline",
                     " ".join((REPO / "docs" / "workflow.md").read_text().split()))
    assert said and int(said[1]) == planned + 1, (said and said[1], planned + 1)
    assert f"CPU hours over {planned} jobs" in res.stderr
    assert "peak memory" in res.stderr and "cluster profile" not in res.stderr


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
        "data/processed/leu__avg_example_norm.npz",
        "results/faceoff/figure1d.parquet",
        "results/tables/faceoff/table1.md",
        "results/stats/leu__avg_example_norm__l2-1_n__beta-0.25__as-none.parquet",
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
    res = smk(wd, "-n", "-p", "--configfile", "config/paper.yaml")
    assert res.returncode == 0, res.output
    out = res.output
    for target in [
        "data/raw/news20.binary.bz2",
        "data/raw/leu.bz2",
        "results/faceoff/figure1c.parquet",
        "results/tables/faceoff/table1.csv",
        # DGPD's Sector with LIBSVM's split: both raw files fetched, the test file prepared
        "data/raw/sector.t.scale.bz2",
        "data/processed/sector.scale__unit_rows-tfsector.t.scale.npz",
    ]:
        assert target in out, target
    # what the jobs are told: the plan file the dry run names
    jobs = planned_jobs(wd, res.stderr)
    assert any(spec["seeds"] == [0, 1, 2] for spec in jobs["run"].values())
    sector = jobs["prepare"]["sector.scale__unit_rows-tfsector.t.scale"]
    assert sector["recipe"]["test_file"] == "sector.t.scale"
    assert sector["source"]["test_raw"] == "data/raw/sector.t.scale.bz2"
    assert "skipping these paper items" not in out
    # tens of CPU hours: the estimate says where to run it
    assert "use the cluster profile" in res.stderr


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("override", "needles"),
    [
        ({"faceof": {"max_epochs": 3}}, ["unknown key 'faceof'", "did you mean 'faceoff'"]),
        ({"data": {"mirorr": "x"}}, ["unknown key 'data.mirorr'", "did you mean 'mirror'"]),
        ({"faceoff": {"max_epochs": "ten"}}, ["faceoff.max_epochs", "'ten' is not of type"]),
        (
            {"faceoff": {"solvers": [{"method": "primal_rcd", "samplng": "uniform"}]}},
            ["faceoff.solvers[0]: primal_rcd: unknown option 'samplng'", "did you mean"],
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


# DGPD on a 200-row subsample of digits with 10 random-binning grids: one (lambda, mu), every
# output (Figure 1, Table 2, the speedup table) in seconds.
TINY_DGPD = {
    "lambdas": [0.1], "mus": [0.01], "max_seconds": 2, "eval_first": 0.1, "eval_per_decade": 2,
    "reference": {"rtol": 1e-9, "max_seconds": 60},
    "solvers": [{"method": "dgpd", "inner": "5", "eta": "x10"},
                {"method": "dual_rcd", "sampling": "uniform", "dual_step": "newton"}],
    "datasets": {"tiny-rb": {
        "source": {"generator": {"name": "digits", "kind": "digits"}},
        "recipe": {"normalization": "none", "features": "rb", "n_grids": 10, "sigma": 5.0,
                   "test_rows": 50, "subsample": 200},
        "paper": "Mnist-RB"}},
    # the sensitivity study: DGPD's step multiplier and batch, at 1 s per configuration
    "sensitivity": {"dataset": "tiny-rb", "max_seconds": 1, "targets": [1e-3],
                    "grid": [{"method": "dgpd", "inner": "5", "eta": ["x10", "x100"],
                              "batch": ["1", "4"]},
                             {"method": "dual_rcd", "sampling": "uniform",
                              "dual_step": "newton"}]},
}


# PDBFW on digits 0 vs 9 with 10 random-binning grids (Figures 1 and 3, Table 2, the speedup
# table) and a 40 x 20 low-rank sensing problem of rank 2 (Figure 2), in seconds.
TINY_PDBFW = {
    "max_seconds": 1, "eval_first": 0.1, "eval_per_decade": 2,
    "reference": {"rtol": 1e-9, "max_seconds": 60},
    "solvers": [{"method": "pdbfw", "delta": "x1000"}, {"method": "acc_pg"}],
    "figure3": {"mus": ["1/n", "10/n"], "datasets": ["tiny09-rb"]},
    "datasets": {"tiny09-rb": {
        "source": {"generator": {"name": "digits", "kind": "digits"}},
        "recipe": {"normalization": "none", "classes": [0, 9], "features": "rb",
                   "n_grids": 10, "sigma": 1.72},
        "radius": 3.0, "paper": "MNIST.RB 0 VS 9"}},
    "trace": {"generator": {"name": "sensing", "kind": "lowrank_sensing",
                            "params": {"n": 40, "d": 20, "c": 10, "nuclear_norm": 1.0}},
              "ranks": [2], "radius": 0.5, "mu": "10/n", "max_seconds": 1,
              "solvers": [{"method": "pdbfw", "delta": "x100"}, {"method": "block_fw"}]},
}


def tiny_config(wd: Path) -> Path:
    """config.yaml with the tiny settings merged in (written as one self-contained file)."""
    from pdsparse.repro.config import _merge

    base = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    base["faceoff"]["synthetic"] = {}
    base["faceoff"]["figure1"] = {}
    base["dgpd"] = TINY_DGPD
    base["pdbfw"] = TINY_PDBFW
    doc = _merge(base, TINY)
    return write_yaml(wd / "config" / "config.yaml", doc)


@pytest.mark.slow  # whole-workflow runs: minutes
@pytest.mark.xdist_group("tiny-run")  # the run is shared with tests/test_report.py
def test_tiny_workflow_end_to_end(tiny_run):
    wd = tiny_run
    for rel in [
        "results/figures/faceoff/figure1.png",
        "results/figures/faceoff/figure1.pdf",
        "results/figures/faceoff/figure2.png",
        "results/figures/faceoff/figure3.png",
        "results/tables/faceoff/table1.csv",
        "results/tables/faceoff/table1.md",
        "logs/run/faceoff/figure1a/tiny_wc+avg_example_norm__logistic__l2-1_n/dual_rcd/"
        "importance-fixed.log",
        "results/figures/dgpd/figure1.png",  # lambda = 0.1, mu = 0.01
        "results/tables/dgpd/table2.md",
        "results/tables/dgpd/speedup.md",
        "results/figures/pdbfw/figure1.png",
        "results/figures/pdbfw/figure2.png",
        "results/figures/pdbfw/figure3.png",
        "results/tables/pdbfw/table2.md",
        "results/tables/pdbfw/speedup.md",
        "results/tables/dgpd/sensitivity.md",
        "results/figures/dgpd/sensitivity_figure.png",
    ]:
        assert (wd / rel).is_file(), rel
    sens = pd.read_csv(wd / "results/tables/dgpd/sensitivity.csv")
    assert len(sens) == 5 and sens["printed"].sum() == 2
    assert set(sens.loc[sens["printed"], "tag"]) == {"5-x10", "uniform-newton"}
    table2 = pd.read_csv(wd / "results/tables/dgpd/table2.csv")
    assert table2["dataset"].tolist() == ["tiny-rb"] and table2["classes"].iloc[0] == 10
    assert table2["train"].iloc[0] == 200 and table2["test_accuracy"].iloc[0] > 0.5
    t2 = pd.read_csv(wd / "results/tables/pdbfw/table2.csv")
    assert t2["samples"].tolist() == [358] and t2["active"].tolist() == [True]
    trace = pd.read_parquet(wd / "results" / "pdbfw" / "trace_rank2.parquet")
    assert set(trace["solver"]) == {"pdbfw", "block_fw"} and (trace["radius"] == 0.5).all()
    agg = pd.read_parquet(wd / "results" / "faceoff" / "figure2.parquet")
    assert set(agg["dataset"]) == {"bin_d5_n10_p0.5", "bin_d5_n10_p1"}
    assert set(agg["solver"]) == {"primal_rcd", "dual_rcd"}
    assert {"p_star", "subopt", "rel_subopt"} <= set(agg.columns)
    # provenance: the aggregate counts its traces and references; the scorecard says it
    from pdsparse.repro.provenance import read_provenance

    prov = read_provenance(wd / "results" / "faceoff" / "figure2.parquet")
    assert prov["inputs"]["files"] >= 4 and prov["cpu_clock"] == "time.process_time"
    assert "Provenance: all " in (wd / "results" / "SCORECARD.md").read_text()
    # nothing left to do: a second dry run plans no job
    res = smk(wd, "-n")
    assert res.returncode == 0
    assert "Nothing to be done" in res.output
    # a report with other data settings than the run: said in one line (issue 20)
    assert (wd / ".snakemake" / "pdsparse-planned.json").is_file()
    more = write_yaml(wd / "more.yaml", {"pdbfw": {"sensitivity": {
        "dataset": "tiny09-rb", "max_seconds": 1, "targets": [1e-3],
        "grid": [{"method": "pdbfw", "delta": "x1000"}, {"method": "acc_pg"}]}}})
    res = smk(wd, "-n", "--report", str(wd / "r.html"), "--configfile", str(more))
    line = [ln for ln in res.output.splitlines() if ln.startswith("pdsparse: this report plans")]
    assert len(line) == 1, res.output[-2000:]
    # the PDBFW sensitivity table, figure (2 files each) and aggregate
    assert "plans 5 output(s) the last run did not make and leaves out 0" in line[0]
    res = smk(wd, "-n", "--report", str(wd / "r.html"))
    assert "pdsparse: this report plans" not in res.output


# ------------------------------------------------------------------ real data over reruns


def tiny_real_data(wd: Path, mirror: Path) -> None:
    """A registry of one tiny LIBSVM data set, held by ``mirror``, used by Figure 1d and
    Table 1 of the tiny config."""
    import bz2
    import hashlib

    rng = __import__("numpy").random.default_rng(0)
    lines = []
    for i in range(12):
        feats = " ".join(f"{j + 1}:{rng.uniform(0.1, 1):.4f}" for j in range(6) if (i + j) % 3)
        lines.append(f"{(-1) ** i:+d} {feats}\n")
    text = "".join(lines).encode()
    mirror.mkdir(parents=True, exist_ok=True)
    (mirror / "tinyreal.bz2").write_bytes(bz2.compress(text))
    nnz = sum(len(line.split()) - 1 for line in lines)
    registry = {
        "version": 1,
        "datasets": {
            "tinyreal": {
                "url": "https://example.invalid/tinyreal.bz2",
                "filename": "tinyreal.bz2",
                "compression": "bz2",
                "task": "binary",
                "n": 12,
                "d": 6,
                "nnz": nnz,
                "sha256_text": hashlib.sha256(text).hexdigest(),
                "label_counts": {-1: 6, 1: 6},
            }
        },
    }
    write_yaml(wd / "config" / "tiny_registry.yaml", registry)
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    cfg["data"]["registry"] = "config/tiny_registry.yaml"
    cfg["faceoff"]["figure1"]["panels"]["d"] = {"dataset": "tinyreal", "title": "(d) tiny real"}
    cfg["faceoff"]["table1"]["datasets"] = ["tinyreal"]
    write_yaml(wd / "config" / "config.yaml", cfg)


@pytest.mark.slow  # whole-workflow runs: minutes
def test_reruns_never_lose_verified_data_nor_keep_stale_items(tmp_path):
    wd = workdir(tmp_path)
    tiny_config(wd)
    mirror = tmp_path / "mirror"
    tiny_real_data(wd, mirror)
    raw = wd / "data" / "raw" / "tinyreal.bz2"
    # the items on the mirror's data set (Face-Off Figure 1d and Table 1), not the whole tiny
    # workflow: what is set aside below is exactly theirs
    items = ("results/faceoff/figure1d.parquet", "results/tables/faceoff/table1.md")
    res = smk(wd, "--cores", "2", *items, env={"PDSPARSE_DATA_MIRROR": str(mirror)},
              timeout=600)
    assert res.returncode == 0, res.output[-4000:]
    assert raw.is_file() and (wd / "results/faceoff/figure1d.parquet").is_file()

    # 1. The same run without the mirror: nothing to do. (Before: fetch re-ran because its
    #    '--mirror' param changed, Snakemake deleted the verified raw file, the fetch failed.)
    res = smk(wd, "--cores", "2", *items)
    assert res.returncode == 0, res.output[-4000:]
    assert "Nothing to be done" in res.output
    assert raw.is_file()

    # 2. A re-fetch forced for any other reason, with no source at all, restores the file.
    res = smk(wd, "--cores", "2", *items, "--forcerun", "fetch", str(raw.relative_to(wd)))
    assert res.returncode == 0, res.output[-4000:]
    log = (wd / "logs/fetch/tinyreal.bz2.log").read_text()
    assert raw.is_file() and "restored the verified" in log

    # 3. The data really gone: its items are dropped, and their old outputs are set aside
    #    (never deleted) instead of staying behind looking current; the plan is made (and
    #    the outputs moved, as the run starts) whatever the target, here one job.
    shutil.rmtree(wd / "data" / "raw")
    res = smk(wd, "--cores", "2", "results/config.json", "--forcerun", "effective_config",
              timeout=600)
    assert res.returncode == 0, res.output[-4000:]
    moved = ("faceoff/figure1d.parquet", "tables/faceoff/table1.csv", "tables/faceoff/table1.md")
    for rel in moved:
        assert not (wd / "results" / rel).exists(), rel
        assert (wd / "results" / "stale" / rel).is_file(), rel
    assert "set aside" in res.stderr
    # the message names the data this config lacks (issue 20: it said "their data is not
    # available" also when the data was on disk and only absent from the config)
    assert "this run's config names data not available here (tinyreal)" in res.stderr
    assert "counts only when given again" in res.stderr
    # the skipped items are summarized again at the very end of the run
    tail = res.stderr.strip().splitlines()[-4:]
    assert any("skipped 2 paper item(s)" in ln and "Figure 1d (tinyreal)" in ln for ln in tail)


def test_missing_mirror_directory_fails_naming_it(tmp_path):
    wd = workdir(tmp_path)
    res = smk(wd, "-n", env={"PDSPARSE_DATA_MIRROR": "../shared/datasets-typo"})
    assert res.returncode != 0
    assert "PDSPARSE_DATA_MIRROR = '../shared/datasets-typo'" in res.output
    assert f"{wd}/../shared/datasets-typo does not exist" in res.output
    res = smk(wd, "-n", "--config", "data={mirror: nowhere}")
    assert res.returncode != 0 and "data.mirror = 'nowhere'" in res.output


# ------------------------------------------------------------------ --config overrides


def test_config_overrides_set_numbers_and_booleans(tmp_path):
    # Snakemake reads nested --config values as strings ('20', 'true'); the schema's types
    # decide what they are. Before: "'20' is not of type 'integer'".
    wd = workdir(tmp_path)
    res = smk(
        wd, "-n", "-p", "--config", "faceoff={max_epochs: 20, tol: 1e-8, seeds: [0, 4]}",
        "data={download: true}",
    )
    assert res.returncode == 0, res.output[-3000:]
    faceoff = [s for k, s in planned_jobs(wd, res.stderr)["run"].items()
               if k.startswith("faceoff/")]
    assert faceoff and all(s["seeds"] == [0, 4] for s in faceoff)
    assert {s["max_epochs"] for s in faceoff} >= {20.0}
    # the real data is now planned (download allowed): no skipped items
    assert "skipping these paper items" not in res.output
    # a YAML file with 1e-10 (PyYAML reads it as a string)
    cfg = wd / "config" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("tol: 1.0e-10", "tol: 1e-10"))
    assert "tol: 1e-10" in cfg.read_text()
    res = smk(wd, "-n")
    assert res.returncode == 0, res.output[-3000:]


# ------------------------------------------------------------------ interrupted runs


@pytest.mark.slow  # whole-workflow runs: minutes
def test_plain_rerun_after_ctrl_c_completes(tmp_path):
    import signal
    import time

    wd = workdir(tmp_path)
    tiny_config(wd)
    env = {k: v for k, v in os.environ.items() if k != "PDSPARSE_DATA_MIRROR"}
    # one figure's jobs (fetch, prepare, references, runs, aggregates, the figure), not the
    # whole tiny workflow: a third of the test's time, the same resume
    target = "results/figures/faceoff/figure1.png"
    cmd = [snakemake_exe(), "-s", str(REPO / "Snakefile"), "-d", str(wd), *FAST_EXIT,
           "--cores", "2", target]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    incomplete = wd / ".snakemake" / "incomplete"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if incomplete.is_dir() and any(incomplete.iterdir()):
            break  # a job is running: interrupt it, as Ctrl-C would
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    res = smk(wd, "--cores", "2", target, timeout=600)  # no flags
    assert res.returncode == 0, res.output[-4000:]
    assert "IncompleteFilesException" not in res.output
    assert (wd / target).is_file()


def test_failing_job_shows_its_error_in_the_console(tmp_path):
    # Before: only "log: logs/fetch/leu.bz2.log (check log file(s) for error details)".
    wd = workdir(tmp_path)
    res = smk(wd, "data/raw/leu.bz2", "--cores", "1", "--config", "data={require_all: true}")
    assert res.returncode != 0
    assert "pdsparse fetch: error: data set 'leu'" in res.output
    log = (wd / "logs" / "fetch" / "leu.bz2.log").read_text()
    assert log.endswith("\n")


def test_readme_own_file_example_plans_and_prepares_it(tmp_path):
    """The README's "your own data" example: a registry entry with only ``path`` and ``task``
    and a DGPD data set naming it; planned (not skipped) without a mirror or a download, and
    its fetch and prepare jobs run."""
    wd = workdir(tmp_path)
    rng = __import__("numpy").random.default_rng(0)
    lines = []
    for i in range(300):
        feats = " ".join(f"{j + 1}:{rng.uniform(0.1, 1):.3f}" for j in range(8) if (i + j) % 3)
        lines.append(f"{i % 3 + 1} {feats}\n")
    (tmp_path / "mine.txt").write_text("".join(lines))
    registry = yaml.safe_load((wd / "config" / "datasets.yaml").read_text())
    registry["datasets"]["mine"] = {"path": str(tmp_path / "mine.txt"), "task": "multiclass"}
    write_yaml(wd / "config" / "datasets.yaml", registry)
    write_yaml(wd / "my.yaml", {"dgpd": {"datasets": {"mine": {
        "source": {"registry": "mine"},
        "recipe": {"normalization": "unit_rows", "test_rows": 100}}}}})
    my = str(wd / "my.yaml")
    res = smk(wd, "-n", "--configfile", my)
    assert res.returncode == 0, res.output[-3000:]
    assert "data/raw/mine.txt" in res.output
    assert ": mine\n" not in res.output  # not among the items skipped for lack of data
    target = "data/processed/mine__unit_rows-te100-ss0.npz"
    assert target in res.output, res.output[-3000:]
    res = smk(wd, "--cores", "1", target, "--configfile", my)
    assert res.returncode == 0, res.output[-3000:]
    assert (wd / target).is_file() and (wd / "data/raw/mine.txt").is_file()
