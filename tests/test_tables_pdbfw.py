"""PDBFW Table 2 from prepared data and reference files, beside the paper's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from pdsparse import cli
from pdsparse.data.store import save_dataset
from pdsparse.errors import DataError
from pdsparse.penalties import L1Ball
from pdsparse.problem import Problem
from pdsparse.reference import reference_record, reference_solution
from pdsparse.repro.papers.pdbfw.tables import build_table2, render_table2


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("t2")
    rng = np.random.default_rng(4)
    A = sp.random(60, 30, density=0.3, random_state=rng, format="csr")
    b = np.where(rng.random(60) < 0.5, -1.0, 1.0)
    save_dataset(tmp / "toy.npz", A, b, {"name": "toy", "n": 60, "d": 30, "nnz": A.nnz})
    paths = {}
    for r in (0.5, 1e3):
        problem = Problem(A, b, "smooth_hinge", penalty=L1Ball(r, 10 / 60))
        ref = reference_solution(problem)
        path = tmp / f"ref{r:g}.parquet"
        pd.DataFrame([reference_record(problem, ref, "toy", f"toy__r{r:g}")]).to_parquet(path)
        paths[r] = (path, np.count_nonzero(ref.w))
    return tmp, paths, A


def test_table2_reports_sparsity_and_activity_beside_the_paper(files):
    tmp, paths, A = files
    (tight, nz_tight), (loose, nz_loose) = paths[0.5], paths[1e3]
    table = build_table2({"toy": tmp / "toy.npz", "loose": tmp / "toy.npz"},
                         {"toy": tight, "loose": loose}, {"toy": "duke breast-cancer"})
    toy, other = table.iloc[0], table.iloc[1]
    assert (toy["features"], toy["samples"], toy["nonzeros"]) == (30, 60, A.nnz)
    assert toy["sparsity"] == nz_tight < 30 and toy["active"]
    assert toy["sparsity_ratio"] == pytest.approx(nz_tight / 30)
    assert toy["paper_sparsity"] == 423 and toy["paper_features"] == 7129
    assert not other["active"] and other["sparsity"] == nz_loose
    assert np.isnan(other["paper_sparsity"])
    md = render_table2(table)
    assert "duke breast-cancer (paper)" in md and "**no**" in md and "5.9%" in md


def test_table2_needs_a_reference_for_every_data_set(files):
    tmp, paths, _ = files
    with pytest.raises(DataError, match="without both"):
        build_table2({"toy": tmp / "toy.npz"}, {})


def test_table2_command_writes_csv_and_markdown(files):
    tmp, paths, _ = files
    csv, md = tmp / "t2.csv", tmp / "t2.md"
    assert cli.main(["output", "pdbfw", "table2", "--data", f"toy={tmp / 'toy.npz'}",
                     "--references", f"toy={paths[0.5][0]}", "--paper-rows",
                     "toy=duke breast-cancer", "--out", str(csv), str(md)]) == 0
    assert pd.read_csv(csv)["sparsity"].iloc[0] == paths[0.5][1]
    assert "ball active" in md.read_text()
