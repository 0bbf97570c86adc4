"""Faults a run must survive without losing or faking anything (issue 10), off the cluster:
a solver that diverges is recorded as such and marked in the figure while the rest of the
grid goes on; a truncated or corrupted intermediate (.npz, Parquet) is refused on read with a
message naming the file, never plotted. (The SLURM side: tests/test_slurm.py.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_data

from pdsparse.cli import main
from pdsparse.data.store import save_dataset
from pdsparse.errors import DataError
from pdsparse.io import read_parquet
from pdsparse.repro import figures
from pdsparse.solvers import MEASURED


def run_main(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A squared-loss problem, its reference, and two runs: DGPD with 1000 times its
    theorem step (diverges: P = inf within a few epochs) and dual RCD (converges)."""
    tmp = tmp_path_factory.mktemp("faults")
    A, b = make_data(200, 50, 0.3, 0, "squared")
    npz = tmp / "sq.npz"
    save_dataset(npz, A, b, {"name": "sq"})
    ref = tmp / "ref.parquet"
    common = ["--data", npz, "--loss", "squared", "--l2", "0.001"]
    assert main([str(a) for a in ["reference", *common, "--rtol", "1e-10", "--out", ref]]) == 0
    runs = {"dgpd": tmp / "dgpd.parquet", "dual_rcd": tmp / "dual_rcd.parquet"}
    options = {"dgpd": ["--option", "eta=x1000"], "dual_rcd": []}
    for solver, out in runs.items():
        argv = ["run", *common, "--reference", ref, "--experiment", "e", "--solver", solver,
                *options[solver], "--max-epochs", "50", "--eval-every", "1", "--out", out]
        assert main([str(a) for a in argv]) == 0, solver  # a divergence is a result
    agg = tmp / "agg.parquet"
    argv = ["aggregate", "--runs", *runs.values(), "--references", ref, "--out", agg]
    assert main([str(a) for a in argv]) == 0
    return {"tmp": tmp, "npz": npz, "ref": ref, "runs": runs, "agg": agg}


def test_a_diverging_solver_is_recorded_and_the_grid_goes_on(grid):
    bad = pd.read_parquet(grid["runs"]["dgpd"])
    assert bad["status"].iloc[-1] == "diverged"
    assert not np.isfinite(bad["primal"].iloc[-1])
    good = pd.read_parquet(grid["runs"]["dual_rcd"])
    assert good["status"].iloc[-1] != "diverged" and np.isfinite(good["primal"]).all()


def test_the_figure_marks_the_diverged_run(grid, tmp_path):
    spec = figures.CurveFigure("t", (figures.Panel("p", "agg"),), ncols=1)
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    assert figures.draw_curve_figure(spec, {"agg": grid["agg"]}, png, pdf) == {"p": "plotted"}
    curves = figures.summarize_runs(pd.read_parquet(grid["agg"]))
    assert {c.key[0]: c.diverged for c in curves} == {"dgpd": True, "dual_rcd": False}


def _damaged_copies(src, dst_dir):
    """Copies of ``src`` cut short at 3 lengths and with 64 zero bytes at 15 offsets."""
    data = src.read_bytes()
    for k, frac in enumerate((0.1, 0.5, 0.9)):
        yield _write(dst_dir / f"cut{k}{src.suffix}", data[: int(len(data) * frac)])
    for k in range(1, 16):
        garbled = bytearray(data)
        at = len(data) * k // 16
        garbled[at:at + 64] = bytes(64)
        yield _write(dst_dir / f"zero{k}{src.suffix}", bytes(garbled))


def _write(path, data):
    path.write_bytes(data)
    return path


def test_a_damaged_npz_is_refused_naming_the_file_or_read_intact(grid, tmp_path, capsys):
    """Damage the prepared data anywhere: `pdsparse run` stops with a one-line error naming
    the file, or (damage in bytes the reader does not use) its trace equals the intact run."""
    common = ["--loss", "squared", "--l2", "0.001", "--reference", grid["ref"],
              "--experiment", "e", "--solver", "dual_rcd", "--max-epochs", "3",
              "--eval-every", "1"]
    intact = tmp_path / "intact.parquet"
    assert run_main(["run", "--data", grid["npz"], *common, "--out", intact], capsys)[0] == 0
    expected = pd.read_parquet(intact).drop(columns=list(MEASURED))
    refused = 0
    for bad in _damaged_copies(grid["npz"], tmp_path):
        out = tmp_path / f"{bad.stem}.parquet"
        code, _, err = run_main(["run", "--data", bad, *common, "--out", out], capsys)
        if code:
            assert code == 2 and str(bad) in err and "Traceback" not in err, err
            assert not out.exists()
            refused += 1
        else:
            got = pd.read_parquet(out).drop(columns=list(MEASURED))
            pd.testing.assert_frame_equal(got, expected.assign(dataset=got["dataset"]))
    print(f"npz: {refused} of 18 damaged copies refused")
    assert refused >= 15  # most bytes of an .npz are its arrays, all CRC-checked


def test_a_damaged_trace_is_refused_naming_the_file_or_read_intact(grid, tmp_path, capsys):
    expected = pd.read_parquet(grid["agg"])
    refused = 0
    for bad in _damaged_copies(grid["runs"]["dual_rcd"], tmp_path):
        out = tmp_path / f"agg-{bad.stem}.parquet"
        code, _, err = run_main(["aggregate", "--runs", grid["runs"]["dgpd"], bad,
                                 "--references", grid["ref"], "--out", out], capsys)
        if code:
            assert code == 2 and str(bad) in err and "Traceback" not in err, err
            assert not out.exists()
            refused += 1
        else:
            pd.testing.assert_frame_equal(pd.read_parquet(out), expected)
    print(f"{refused} of 18 damaged copies refused")
    assert refused >= 9


def test_a_damaged_aggregate_is_never_plotted(grid, tmp_path):
    """A damaged aggregate is refused naming it, or (damage only in bytes the reader does
    not use) reads exactly as the intact file: never plotted with wrong numbers."""
    spec = figures.CurveFigure("t", (figures.Panel("p", "agg"),), ncols=1)
    intact = read_parquet(grid["agg"])
    refused = 0
    for bad in _damaged_copies(grid["agg"], tmp_path):
        png, pdf = tmp_path / f"{bad.stem}.png", tmp_path / f"{bad.stem}.pdf"
        try:
            figures.draw_curve_figure(spec, {"agg": bad}, png, pdf)
        except DataError as exc:
            assert str(bad) in str(exc)
            assert not png.exists() and not pdf.exists()
            refused += 1
        else:
            pd.testing.assert_frame_equal(read_parquet(bad), intact)
    print(f"{refused} of 18 damaged copies refused")
    assert refused >= 9
