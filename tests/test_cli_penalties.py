"""Ball penalties through the command line and the run spec: ``--penalty``, ``--radius``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pdsparse import cli
from pdsparse.errors import ConfigError
from pdsparse.problem import ProblemKey
from pdsparse.repro.run import RunSpec


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("balls")
    npz = tmp / "tiny.npz"
    assert cli.main(["prepare", "--dataset", "tiny", "--generator", "dense_gaussian",
                     "--param", "d=12", "--param", "n=40", "--seed", "3",
                     "--out", str(npz)]) == 0
    return tmp, npz


def test_reference_of_an_l1_ball_problem_records_the_ball(tiny):
    tmp, npz = tiny
    out = tmp / "ref.parquet"
    assert cli.main(["reference", "--data", str(npz), "--loss", "smooth_hinge",
                     "--penalty", "l1_ball", "--radius", "0.5", "--l2", "10/n",
                     "--out", str(out)]) == 0
    row = pd.read_parquet(out).iloc[0]
    assert row["penalty"] == "l1_ball" and row["radius"] == 0.5
    assert np.isclose(row["l2"], 10 / 40) and row["rel_gap"] <= 1e-10
    key = ProblemKey("tiny", "smooth_hinge", "l1_ball", {"radius": 0.5, "l2": "10/n"})
    assert row["problem"] == key.tag() == "tiny__smooth_hinge__l1ball-0.5__l2-10_n"


@pytest.mark.parametrize("argv, message", [
    (["--radius", "2"], "--radius needs --penalty"),
    (["--penalty", "l1_ball"], "needs --radius"),
    (["--penalty", "l1_ball", "--radius", "2", "--l1", "0.1"], "--l1 is the elastic net's"),
])
def test_ball_settings_that_do_not_fit_are_errors(tiny, capsys, argv, message):
    tmp, npz = tiny
    code = cli.main(["reference", "--data", str(npz), "--loss", "smooth_hinge", *argv,
                     "--out", str(tmp / "never.parquet")])
    assert code == cli.EXIT_ERROR and message in capsys.readouterr().err
    assert not (tmp / "never.parquet").exists()


def test_run_spec_names_the_ball_problem():
    spec = RunSpec("e", "tiny", "primal_rcd", loss="smooth_hinge", l2="10/n",
                   penalty="l1_ball", radius=300)
    assert spec.problem == "tiny__smooth_hinge__l1ball-300.0__l2-10_n"
    assert spec.penalty_spec == {"name": "l1_ball", "radius": 300, "l2": "10/n"}
    assert RunSpec("e", "tiny", "primal_rcd").penalty_spec is None  # elastic net, as before
    with pytest.raises(ConfigError, match="radius is a parameter of the l1"):
        RunSpec("e", "tiny", "primal_rcd", radius=3)
    with pytest.raises(ConfigError, match="missing parameter"):
        RunSpec("e", "tiny", "primal_rcd", penalty="trace_ball")
