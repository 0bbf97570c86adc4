"""The workflow's plans bound to its config (pdsparse.repro.workflow): what common.smk looks
up, tested without Snakemake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pdsparse.data.fetch import DOWNLOAD_ENV, MIRROR_ENV
from pdsparse.repro import jobs
from pdsparse.repro.config import load_config
from pdsparse.repro.workflow import WorkflowPlan

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _config(tmp_path, *files, mirror=None):
    config = load_config([REPO / "config" / f for f in ("config.yaml", *files)], SCHEMA)
    config["data"].update(registry=str(REPO / "config" / "datasets.yaml"),
                          raw_dir=str(tmp_path / "raw"), processed_dir=str(tmp_path / "proc"),
                          mirror=mirror)
    return config


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    return WorkflowPlan.load(_config(tmp_path))


def test_the_lookups_of_the_rules(offline, tmp_path):
    w = offline
    assert set(w.plans) == {"faceoff", "dgpd", "pdbfw"}
    assert w.datasets and w.problems and w.stats and w.runs and w.outputs
    run = next(iter(w.runs.values()))
    assert w.runs[run.key] is run and run.problem.tag in w.problems
    assert run.problem.tag in w.references
    assert w.processed_file(run.problem.data) == f"{tmp_path / 'proc'}/{run.problem.data.key}.npz"
    assert w.processed_file("x") == f"{tmp_path / 'proc'}/x.npz"
    assert w.reference_file("p") == "results/reference/p.parquet"
    # every registry set's raw file name maps back to its name (the fetch rule's pattern)
    for name in w.registry:
        assert w.raw_names[Path(w.raw_file(name)).name] == name
        assert w.raw_file(name).startswith(str(tmp_path / "raw"))
    targets = w.targets()
    assert any(t.startswith("results/figures/faceoff/") for t in targets)
    assert all(f.endswith(".html") for f in w.table_pages()) and w.table_pages()
    assert set(w.scorecard_inputs()) >= {o.files[0] for o in w.outputs.values()
                                         if o.kind == "table"}


def test_a_job_spec_per_planned_job(offline):
    w = offline
    assert set(w.jobs["run"]) == {"/".join(key) for key in w.runs}
    assert set(w.jobs["prepare"]) == set(w.datasets)
    assert set(w.jobs["stats"]) == set(w.stats)
    assert set(w.jobs["reference"]) == set(w.problems)
    assert set(w.jobs["output"]) == {f"{p}/{n}" for p, n in w.outputs}
    key = next(iter(w.jobs["run"]))
    text = w.job_spec("run", key)
    assert json.loads(text) == w.jobs["run"][key]
    assert text == json.dumps(json.loads(text), sort_keys=True)  # canonical: stable param


def test_a_jobs_data_and_memory_by_its_wildcards(offline):
    w = offline
    run = next(r for r in w.runs.values() if r.problem.data.real is False)
    data = run.problem.data
    assert w.data_of({"problem": run.problem.tag}) is data
    assert w.data_of({"data": data.key}) is data
    stats = next(iter(w.stats.values()))
    assert w.data_of({"stats": stats.tag}) is stats.data
    assert w.data_of({"paper": "faceoff"}) is None
    assert w.memory_mb({"paper": "faceoff"}, 150) == 1150  # no data set: 10^6 nonzeros
    mem = w.memory_mb({"data": data.key}, 150)
    assert mem == jobs.memory_mb(jobs.dataset_nnz(data, w.registry), 150)
    assert w.memory_mb({"data": data.key}, 150, attempt=2) == 2 * mem


def test_offline_the_real_sets_are_skipped_and_said(offline):
    assert offline.skipped
    assert "skipped" in offline.skipped_summary()
    assert offline.skipped_warning()
    env = offline.data_environment()
    assert env == {MIRROR_ENV: None, DOWNLOAD_ENV: "0"}


def test_with_the_mirror_the_real_sets_are_planned(tmp_path, monkeypatch):
    mirror = REPO.parent / "shared" / "datasets"
    if not mirror.is_dir():
        pytest.skip("no mirror beside the repository")
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    w = WorkflowPlan.load(_config(tmp_path, mirror=str(mirror)))
    assert any(d.real for d in w.datasets.values())
    assert w.data_environment()[MIRROR_ENV] == str(w.mirror)
    offline = WorkflowPlan.load(_config(tmp_path))
    assert len(w.runs) > len(offline.runs)


def test_outputs_no_longer_planned_are_set_aside_not_deleted(offline, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = offline.plans["dgpd"]
    path = tmp_path / "results" / "figures" / "dgpd" / "gone.png"
    path.parent.mkdir(parents=True)
    path.write_text("old")
    monkeypatch.setattr(type(plan), "existing_stale", lambda self: (
        ["results/figures/dgpd/gone.png"] if self.paper == "dgpd" else []))
    message = offline.set_aside_stale()
    assert not path.exists()
    assert (tmp_path / "results" / "stale" / "figures" / "dgpd" / "gone.png").read_text() == "old"
    assert "set aside, not deleted" in message and "gone.png" in message
    monkeypatch.setattr(type(plan), "existing_stale", lambda self: [])
    assert offline.set_aside_stale() == ""


def test_the_estimate_of_the_plan(offline):
    text = offline.estimate(2)
    assert "CPU hours" in text and "peak memory" in text
