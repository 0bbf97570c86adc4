"""Trace files: keys as columns, provenance metadata, atomic writes."""

import pandas as pd
import pyarrow as pa
import pytest
from conftest import make_data

from pdsparse.errors import DataError
from pdsparse.problem import Problem
from pdsparse.repro.traces import read_metadata, read_traces, write_trace
from pdsparse.solvers import solve


def test_round_trip(tmp_path):
    A, b = make_data()
    res = solve(Problem(A, b, l2=0.05), "primal_rcd", "uniform", max_epochs=2)
    path = tmp_path / "runs" / "x.parquet"
    keys = {"experiment": "e", "dataset": "tiny", "solver": "primal_rcd", "seed": 0}
    write_trace(res.trace, path, keys, {"config": {"max_epochs": 2}})
    df = read_traces([path])
    assert list(df.columns[:4]) == list(keys)
    assert (df.dataset == "tiny").all() and len(df) == len(res.trace)
    meta = read_metadata(path)
    assert meta["config"] == {"max_epochs": 2} and "commit" in meta and "version" in meta
    assert [p.name for p in path.parent.iterdir()] == ["x.parquet"]  # no temp files left


def test_failed_write_leaves_nothing(tmp_path):
    path = tmp_path / "y.parquet"
    with pytest.raises((TypeError, ValueError, pa.ArrowException)):
        write_trace(pd.DataFrame({"a": [object()]}), path, {}, {})
    assert list(tmp_path.iterdir()) == []


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(DataError, match="bad.parquet"):
        read_traces([bad])


def test_commit_read_once_from_the_environment(monkeypatch, tmp_path):
    from pdsparse.repro import traces

    traces.git_commit.cache_clear()
    monkeypatch.setenv(traces.COMMIT_ENV, "abc123")
    try:
        assert traces.git_commit() == "abc123"
        path = tmp_path / "t.parquet"
        write_trace(pd.DataFrame({"x": [1.0]}), path, {"seed": 0}, {})
        assert read_metadata(path)["commit"] == "abc123"
    finally:
        traces.git_commit.cache_clear()
