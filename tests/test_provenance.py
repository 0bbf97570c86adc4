"""Provenance: every Parquet file carries where it came from; an aggregate carries its inputs'
commits, so a merge of runs from several commits is visible (issue 28, item 6)."""

import pandas as pd
import pytest

from pdsparse.cli import main
from pdsparse.repro import provenance
from pdsparse.repro.provenance import describe, of_results, read_provenance, summarize
from pdsparse.repro.scorecard import to_markdown
from pdsparse.repro.traces import write_frame, write_trace


@pytest.fixture
def commit(monkeypatch):
    """Set the commit (and a clean tree) the next write records."""

    def use(sha: str, dirty: bool = False) -> None:
        monkeypatch.setenv(provenance.COMMIT_ENV, sha)
        monkeypatch.setenv(provenance.DIRTY_ENV, "1" if dirty else "0")
        provenance.git_commit.cache_clear()
        provenance.git_dirty.cache_clear()
        provenance._static.cache_clear()

    yield use
    provenance.git_commit.cache_clear()
    provenance.git_dirty.cache_clear()
    provenance._static.cache_clear()


def test_a_written_file_carries_its_provenance(tmp_path, commit):
    import numpy
    import scipy

    commit("c0ffee", dirty=True)
    path = tmp_path / "stats.parquet"
    write_frame(pd.DataFrame({"x": [1.0]}), path, {"arguments": {}})
    prov = read_provenance(path)
    assert prov["commit"] == "c0ffee" and prov["dirty"] is True
    assert prov["numpy"] == numpy.__version__ and prov["scipy"] == scipy.__version__
    for key in ("version", "python", "pandas", "cpu_model", "cpu_count", "cpu_usable"):
        assert prov[key] not in (None, ""), key
    assert prov["cpu_clock"] == "time.process_time"  # pdsparse.solvers.CPU_CLOCK
    assert isinstance(prov["blas_threads"], int) and prov["blas_threads"] >= 1
    assert "inputs" not in prov  # a leaf: made from no other file


def test_thread_count_is_the_one_in_force(tmp_path):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        write_frame(pd.DataFrame({"x": [1.0]}), tmp_path / "a.parquet")
    assert read_provenance(tmp_path / "a.parquet")["blas_threads"] == 1


def test_file_without_provenance_reads_as_none(tmp_path):
    path = tmp_path / "old.parquet"
    pd.DataFrame({"x": [1.0]}).to_parquet(path)
    assert read_provenance(path) is None
    assert summarize([None])["commits"] == {"unknown (no provenance)": 1}
    assert "none of the 1 result files records" in describe(of_results(tmp_path))


def _trace(path, problem: str, seed: int) -> None:
    trace = pd.DataFrame({"epoch": [0.0, 1.0], "time_s": [0.0, 0.1], "primal": [1.0, 0.6],
                          "dual": [0.0, 0.5], "gap": [1.0, 0.1], "status": ["", "max_epochs"]})
    keys = {"experiment": "e", "dataset": "tiny", "solver": "primal_rcd", "problem": problem,
            "seed": seed}
    write_trace(trace, path, keys, {})


def test_an_aggregate_of_two_commits_reports_both(tmp_path, commit):
    commit("aaaa1111")
    _trace(tmp_path / "r0.parquet", "p", 0)
    write_frame(pd.DataFrame([{"problem": "p", "p_star": 0.5, "rel_gap": 1e-12, "n": 3,
                               "d": 2, "nnz": 6}]), tmp_path / "ref.parquet")
    commit("bbbb2222", dirty=True)
    _trace(tmp_path / "r1.parquet", "p", 1)
    commit("cccc3333")  # the aggregate's own commit is not where its numbers come from
    out = tmp_path / "results" / "paper" / "e.parquet"
    assert main(["aggregate", "--runs", str(tmp_path / "r0.parquet"),
                 str(tmp_path / "r1.parquet"), "--references", str(tmp_path / "ref.parquet"),
                 "--out", str(out)]) == 0
    prov = read_provenance(out)
    assert prov["commit"] == "cccc3333"
    assert prov["inputs"]["files"] == 3
    assert prov["inputs"]["commits"] == {"aaaa1111": 2, "bbbb2222+dirty": 1}
    # the results directory's summary counts the leaves, through the aggregate
    line = describe(of_results(tmp_path / "results"))
    assert "MIXED" in line and "aaaa1111 (2 files)" in line and "bbbb2222+dirty (1 files)" in line
    # an aggregate of that aggregate still shows the traces' commits, not the aggregate's
    assert summarize([prov, prov])["commits"] == {"aaaa1111": 4, "bbbb2222+dirty": 2}


def test_one_clean_commit_is_said_with_its_environment(tmp_path, commit):
    commit("dddd4444")
    for name in ("a", "b"):
        write_frame(pd.DataFrame({"x": [1.0]}), tmp_path / f"{name}.parquet")
    line = describe(of_results(tmp_path))
    assert line.startswith("Provenance: all 2 result files from commit dddd4444 (a clean")
    assert "time.process_time" in line and "NumPy" in line and "BLAS threads" in line


def test_scorecard_header_states_the_provenance():
    from pdsparse.repro.scoring import Row

    row = Row(paper="faceoff", outputs="table1", item="Table 1", reproduced="yes", paper_value="1",
              our_value="1", agreement="yes", reason="")
    text = to_markdown([row], "Provenance: MIXED: two commits.")
    head, table = text.split("| paper |", 1)
    assert "Provenance: MIXED: two commits." in head
