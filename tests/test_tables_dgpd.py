"""DGPD Table 2 from prepared data and DGPD traces; the test accuracy a run records."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from pdsparse.data.store import data_meta, save_dataset
from pdsparse.repro.papers.dgpd.tables import build_table2, write_table2
from pdsparse.repro.run import test_accuracy as accuracy_of
from pdsparse.repro.traces import write_trace


def _data(tmp_path, name="toy", n=20, d=8):
    A = sp.random(n, d, density=0.5, random_state=0, format="csr")
    b = np.arange(n) % 3 + 1.0
    meta = {"name": name, "n": n, "d": d, "nnz": int(A.nnz), "task": "multiclass",
            "raw_label_counts": {"1": 7, "2": 7, "3": 6}, "split": {"n_test": 5}}
    path = tmp_path / f"{name}.npz"
    save_dataset(path, A, b, meta)
    return path, meta


def _trace(tmp_path, dataset="toy", seeds=(0, 1), nnz=((10, 4), (12, 6))):
    frames = []
    for seed, (nzp, nzd) in zip(seeds, nnz, strict=True):
        frames.append(pd.DataFrame({"seed": seed, "iteration": [0, 5], "nnz_primal": [0, nzp],
                                    "nnz_dual": [0, nzd], "status": ["", "converged"]}))
    path = tmp_path / f"{dataset}.parquet"
    write_trace(pd.concat(frames), path,
                {"dataset": dataset, "problem": f"{dataset}__smooth_hinge__l2-0.1"},
                {"runs": [{"seed": s, "test_accuracy": a} for s, a in zip(seeds, (0.8, 0.9),
                                                                            strict=True)]})
    return path


def test_table2_ours_beside_the_paper(tmp_path):
    data, meta = _data(tmp_path)
    assert data_meta(data)["nnz"] == meta["nnz"]
    run = _trace(tmp_path)
    table = build_table2([run], {"toy-rb": data}, {"toy-rb": "Mnist-RB"})
    row = table.iloc[0]
    assert (row.features, row.train, row.test, row.classes) == (8, 20, 5, 3)
    assert row.nnz_per_sample == meta["nnz"] / 20
    assert (row.nz_primal, row.nz_dual) == (11.0, 5.0)  # medians over the two seeds
    assert math.isclose(row.test_accuracy, 0.85)
    assert row.paper_features == 1_572_556 and row.paper_nz_dual == 1_208
    out_md = tmp_path / "t.md"
    write_table2([run], {"toy-rb": data}, tmp_path / "t.csv", out_md,
                 {"toy-rb": "Mnist-RB"}, caption="Stand-in.")
    text = out_md.read_text()
    assert "toy-rb (ours)" in text and "Mnist-RB (paper)" in text and "Stand-in." in text
    assert math.isnan(row.opt_nz_primal)  # no reference given


def test_table2_shows_the_optimum_supports_beside_the_iterates(tmp_path):
    data, _ = _data(tmp_path, name="toy")
    run = _trace(tmp_path)
    ref = tmp_path / "ref.parquet"
    pd.DataFrame([{"problem": "toy__smooth_hinge__l2-0.1", "optimum_nnz_primal": 7,
                   "optimum_nnz_dual": 13}]).to_parquet(ref)
    old = tmp_path / "old.parquet"  # a reference file from before the supports were recorded
    pd.DataFrame([{"problem": "other", "p_star": 1.0}]).to_parquet(old)
    out_md = tmp_path / "t.md"
    table = write_table2([run], {"toy": data}, tmp_path / "t.csv", out_md,
                         references=[ref, old])
    row = table.iloc[0]
    assert (row.nz_primal, row.nz_dual, row.opt_nz_primal, row.opt_nz_dual) == (11, 5, 7, 13)
    assert "| 7, 13 |" in out_md.read_text()


def test_table2_without_runs_or_paper_row(tmp_path):
    data, _ = _data(tmp_path, name="other")
    row = build_table2([], {"other": data}).iloc[0]
    assert math.isnan(row.nz_primal) and math.isnan(row.paper_features)


def test_accuracy_binary_and_one_vs_rest():
    A_test = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 1.0]])
    ds = SimpleNamespace(b=np.array([1.0, 2.0, 3.0]), A_test=A_test,
                         b_test=np.array([1.0, 2.0, 2.0]))
    W = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.5]])  # class 1 <- x0, class 2 <- x1
    assert accuracy_of(ds, W) == 1.0
    ds_bin = SimpleNamespace(b=np.array([-1.0, 1.0]), A_test=A_test,
                             b_test=np.array([1.0, -1.0, 1.0]))
    assert accuracy_of(ds_bin, np.array([1.0, -2.0])) == 2 / 3
    assert accuracy_of(SimpleNamespace(b=np.ones(2)), np.ones(2)) is None


def test_table2_one_class_against_the_rest_says_so(tmp_path):
    data, meta = _data(tmp_path)
    row = build_table2([], {"toy": data}).iloc[0]
    assert (row.solved_classes, row.positive_class) == (3, "")  # every class of the set
    A = sp.random(20, 8, density=0.5, random_state=0, format="csr")
    one = {**meta, "task": "binary", "original_task": "multiclass", "positive_class": "0",
           "label_counts": {"-1": 13, "1": 7}}
    save_dataset(tmp_path / "one.npz", A, np.where(np.arange(20) % 3, -1.0, 1.0), one)
    run = _trace(tmp_path, dataset="one")
    table = write_table2([run], {"one-rb": tmp_path / "one.npz"},
                         tmp_path / "t.csv", tmp_path / "t.md", {"one-rb": "Mnist-RB"})
    row = table.iloc[0]
    assert (row.classes, row.solved_classes, row.positive_class) == (3, 1, "0")
    text = (tmp_path / "t.md").read_text()
    assert "one-rb (ours; class 0 vs rest*)" in text and "*One class against the rest" in text
    # the scorecard's fractions divide by the classes solved, the paper's by its classes
    from pdsparse.repro.papers.dgpd.scorecard import _dgpd_nz_text, _nz_fractions

    assert _nz_fractions(row) == (row.nz_primal / 8, row.nz_dual / 20)
    assert "(class 0 vs rest only)" in _dgpd_nz_text(row)
    paper = {"features": 100, "train": 10, "classes": 10, "nz_primal": 50, "nz_dual": 5}
    assert _nz_fractions(paper) == (50 / 1000, 5 / 100)
