"""Tests of the ``pdsparse`` command line (src/pdsparse/cli.py).

Most tests call :func:`pdsparse.cli.main` in-process (fast); one runs the installed console
script to check the entry point. Data are tiny and made here.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from pdsparse import cli
from pdsparse.cli import main
from pdsparse.solvers import MEASURED

SUBCOMMANDS = [
    "fetch",
    "prepare",
    "stats",
    "reference",
    "run",
    "aggregate",
    "output",
    "advise",
    "scorecard",
    "html",
]


def run_main(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# ------------------------------------------------------------------------------ help


def test_top_level_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in text
    assert "Face-Off" in text


@pytest.mark.parametrize(
    "argv",
    [[name, "--help"] for name in SUBCOMMANDS]
    + [
        ["output", "faceoff", "curves", "--help"],
        ["output", "faceoff", "figure3", "--help"],
        ["output", "faceoff", "table1", "--help"],
        ["output", "dgpd", "table2", "--help"],
        ["output", "pdbfw", "speedup", "--help"],
    ],
)
def test_subcommand_help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "usage: pdsparse" in text
    assert "--" in text  # documents options


def test_console_script_help():
    exe = shutil.which("pdsparse", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("pdsparse console script not installed in this environment")
    res = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    assert "usage: pdsparse" in res.stdout


def test_module_entry_point_bad_input(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "pdsparse.cli", "stats", "--data", str(tmp_path / "no.npz"),
         "--out", str(tmp_path / "s.parquet")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("pdsparse stats: error: ")
    assert "Traceback" not in res.stderr


# ------------------------------------------------------------------------------ errors


def test_missing_data_file_is_one_line_exit_2(tmp_path, capsys):
    code, out, err = run_main(
        ["stats", "--data", tmp_path / "missing.npz", "--out", tmp_path / "s.parquet"], capsys
    )
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("pdsparse stats: error: ")
    assert "missing.npz" in lines[0]
    assert not (tmp_path / "s.parquet").exists()


def test_unknown_synthetic_param_exit_2(tmp_path, capsys):
    code, _, err = run_main(
        ["prepare", "--dataset", "x", "--generator", "dense_gaussian", "--param", "n=5",
         "--param", "d=3", "--param", "bogus=1", "--out", tmp_path / "x.npz"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert err.startswith("pdsparse prepare: error: ")
    assert "bogus" in err
    assert len(err.strip().splitlines()) == 1


def test_bad_l2_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["stats", "--data", "x.npz", "--l2", "one/n", "--out", "s.parquet"])
    assert exc.value.code == 2
    assert "--l2" in capsys.readouterr().err


def test_unknown_registry_dataset(tmp_path, capsys):
    registry = write_registry(tmp_path, b"")
    code, _, err = run_main(
        ["fetch", "--registry", registry, "--dataset", "nope", "--out", tmp_path / "raw/x.bz2"],
        capsys,
    )
    assert code == 2
    assert "nope" in err and "toy" in err


def test_fetch_no_download_without_mirror(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PDSPARSE_DATA_MIRROR", raising=False)
    registry = write_registry(tmp_path, TOY_TEXT)
    code, _, err = run_main(
        ["fetch", "--registry", registry, "--dataset", "toy", "--out", tmp_path / "raw/toy.bz2",
         "--no-download"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert err.startswith("pdsparse fetch: error: ")
    assert "PDSPARSE_DATA_MIRROR" in err and "download" in err
    assert not (tmp_path / "raw" / "toy.bz2").exists()


# ------------------------------------------------------------------------------ real-data path

TOY_TEXT = b"+1 1:1.0 3:2.0\n-1 2:1.5\n+1 1:0.5 2:0.5 4:1.0\n-1 4:2.0\n"


def write_registry(tmp_path: Path, text: bytes) -> Path:
    doc = {
        "version": 1,
        "datasets": {
            "toy": {
                "url": "https://example.invalid/toy.bz2",
                "filename": "toy.bz2",
                "compression": "bz2",
                "task": "binary",
                "n": 4,
                "d": 4,
                "nnz": 7,
                "sha256": None,
                "sha256_text": hashlib.sha256(text).hexdigest(),
                "label_counts": {-1: 2, 1: 2},
                "description": "toy",
                "papers": [],
            }
        },
    }
    path = tmp_path / "datasets.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_fetch_from_mirror_then_prepare(tmp_path, capsys):
    registry = write_registry(tmp_path, TOY_TEXT)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "toy.bz2").write_bytes(bz2.compress(TOY_TEXT))
    raw = tmp_path / "data" / "raw" / "toy.bz2"
    code, out, err = run_main(
        ["fetch", "--registry", registry, "--dataset", "toy", "--out", raw, "--mirror", mirror,
         "--no-download", "--quiet"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert raw.is_file()
    npz = tmp_path / "data" / "processed" / "toy.npz"
    code, _, err = run_main(
        ["prepare", "--registry", registry, "--dataset", "toy", "--raw", raw, "--out", npz],
        capsys,
    )
    assert code == 0, err
    from pdsparse.data.store import load_dataset

    ds = load_dataset(npz)
    assert (ds.n, ds.d, ds.nnz) == (4, 4, 7)
    assert ds.meta["normalization"]["method"] == "avg_example_norm"


def test_fetch_out_must_match_registry_name(tmp_path, capsys):
    registry = write_registry(tmp_path, TOY_TEXT)
    code, _, err = run_main(
        ["fetch", "--registry", registry, "--dataset", "toy", "--out", tmp_path / "raw/other.bz2"],
        capsys,
    )
    assert code == 2
    assert "toy.bz2" in err


# ------------------------------------------------------------------------------ pipeline


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """prepare (generator) -> stats -> reference -> run (primal, dual) -> aggregate."""
    tmp = tmp_path_factory.mktemp("cli")
    npz = tmp / "processed" / "tiny.npz"
    ref = tmp / "reference" / "tiny__logistic__l2-1_n.parquet"
    runs = [
        tmp / "runs" / "exp" / "tiny" / "primal_rcd" / "importance-none-seed0.parquet",
        tmp / "runs" / "exp" / "tiny" / "dual_rcd" / "importance-fixed-seed0.parquet",
    ]
    steps = [
        ["prepare", "--dataset", "tiny", "--generator", "worst_case_binary_dual", "--param", "d=8",
         "--param", "n=30", "--param", "alpha=80", "--seed", "1", "--out", npz],
        ["stats", "--data", npz, "--l2", "1/n", "--beta", "0.25",
         "--out", tmp / "stats" / "tiny.parquet"],
        ["stats", "--data", npz, "--l2", "1/n", "--beta", "1", "--normalization", "none",
         "--out", tmp / "stats" / "tiny__none.parquet"],
        ["reference", "--data", npz, "--loss", "logistic", "--l2", "1/n", "--rtol", "1e-10",
         "--out", ref],
        ["run", "--data", npz, "--reference", ref, "--experiment", "exp", "--solver",
         "primal_rcd", "--option", "sampling=importance", "--seed", "0",
         "--max-epochs", "5", "--eval-every", "1", "--out", runs[0]],
        ["run", "--data", npz, "--reference", ref, "--experiment", "exp", "--solver",
         "dual_rcd", "--option", "sampling=importance", "--option", "dual_step=fixed",
         "--seed", "0",
         "--max-epochs", "5", "--eval-every", "1", "--out", runs[1]],
        ["aggregate", "--runs", *runs, "--references", ref, "--out", tmp / "agg.parquet"],
    ]  # fmt: skip
    for argv in steps:
        code = main([str(a) for a in argv])
        assert code == 0, argv
    return {"tmp": tmp, "npz": npz, "ref": ref, "runs": runs, "agg": tmp / "agg.parquet"}


def test_generated_metadata(pipeline):
    from pdsparse.data.store import load_dataset

    ds = load_dataset(pipeline["npz"])
    assert ds.name == "tiny"
    assert (ds.n, ds.d, ds.nnz) == (30, 8, 80)
    assert ds.meta["kind"] == "worst_case_binary_dual"
    assert ds.meta["params"] == {"d": 8, "n": 30, "alpha": 80}


def test_stats_file(pipeline):
    row = pd.read_parquet(pipeline["tmp"] / "stats" / "tiny.parquet").iloc[0]
    assert row["dataset"] == "tiny"
    assert row["normalization"] == "avg_example_norm"
    assert row["l2"] == pytest.approx(1 / 30)
    assert row["beta"] == 0.25
    for key in ("C_P", "C_D", "T_P_over_T_D", "nnz"):
        assert key in row.index
    raw = pd.read_parquet(pipeline["tmp"] / "stats" / "tiny__none.parquet").iloc[0]
    assert raw["normalization"] == "none"
    # binary +-1 entries: C_P = sum of squared feature nnz counts (Face-Off appendix)
    assert raw["C_P"] > row["C_P"]


def test_reference_file(pipeline):
    ref = pd.read_parquet(pipeline["ref"])
    assert len(ref) == 1
    expected = {"dataset", "loss", "l2", "l1", "p_star", "d_star", "gap", "rel_gap", "n",
                "d", "nnz", "method", "seconds"}  # fmt: skip
    assert expected <= set(ref.columns)
    row = ref.iloc[0]
    assert row["dataset"] == "tiny" and row["loss"] == "logistic"
    assert row["rel_gap"] <= 1e-10


def test_run_trace_keys_and_metadata(pipeline):
    df = pd.read_parquet(pipeline["runs"][1])
    from pdsparse.repro.traces import KEY_COLUMNS

    assert list(df.columns[: len(KEY_COLUMNS)]) == list(KEY_COLUMNS)
    assert (df["problem"] == "tiny__logistic__l2-1_n").all()
    for col in ("iteration", "epoch", "time_s", "primal", "dual", "gap", "status"):
        assert col in df.columns
    assert (df["solver"] == "dual_rcd").all() and (df["dual_step"] == "fixed").all()
    assert df["status"].iloc[-1] in ("converged", "max_epochs", "max_time", "diverged")
    meta = json.loads(pq.read_schema(pipeline["runs"][1]).metadata[b"pdsparse"])
    assert meta["version"]
    assert meta["commit"]
    assert meta["arguments"]["solver"] == "dual_rcd"
    assert meta["arguments"]["max_epochs"] == 5.0
    assert "p_star" in meta
    primal = pd.read_parquet(pipeline["runs"][0])
    assert (primal["dual_step"] == "none").all()


def test_aggregate(pipeline):
    agg = pd.read_parquet(pipeline["agg"])
    assert set(agg["solver"]) == {"primal_rcd", "dual_rcd"}
    for col in ("p_star", "subopt", "rel_subopt", "n", "d", "nnz"):
        assert col in agg.columns
    np.testing.assert_allclose(agg["subopt"], agg["primal"] - agg["p_star"])
    # P* is certified: suboptimality is never meaningfully negative
    assert agg["subopt"].min() > -1e-8


def test_run_rejects_reference_of_another_problem(pipeline, tmp_path, capsys):
    code, _, err = run_main(
        ["run", "--data", pipeline["npz"], "--reference", pipeline["ref"], "--experiment",
         "exp", "--method", "primal_rcd", "--l2", "0.5", "--out", tmp_path / "r.parquet"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "l2" in err
    assert not (tmp_path / "r.parquet").exists()


def test_run_rejects_dual_step_for_primal(pipeline, tmp_path, capsys):
    code, _, err = run_main(
        ["run", "--data", pipeline["npz"], "--reference", pipeline["ref"], "--experiment",
         "exp", "--solver", "primal_rcd", "--option", "dual_step=newton", "--out",
         tmp_path / "r.parquet"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "unknown option 'dual_step' (an option of dual_rcd)" in err


def test_aggregate_without_matching_reference(pipeline, tmp_path, capsys):
    other = tmp_path / "other.parquet"
    ref = pd.read_parquet(pipeline["ref"])
    ref["problem"] = "something_else__logistic__l2-1_n"
    ref.to_parquet(other)
    code, _, err = run_main(
        ["aggregate", "--runs", *pipeline["runs"], "--references", other, "--out",
         tmp_path / "a.parquet"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "no reference file for problem(s) ['tiny__logistic__l2-1_n']" in err


def test_figures_and_table(pipeline, tmp_path, capsys):
    from pdsparse.repro.papers.faceoff.figures import figure1_spec

    agg = pipeline["agg"]
    spec = figure1_spec({"a": "tiny", "c": "(c) not there"}, {"a": "exp", "c": "other"})
    code, _, err = run_main(
        ["output", "faceoff", "curves", "--spec", spec.to_json(), "--aggregate", f"exp={agg}",
         "--out", tmp_path / "f1.png", tmp_path / "f1.pdf"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "panels without data" in err and "(c) not there" in err
    assert (tmp_path / "f1.png").stat().st_size > 0 and (tmp_path / "f1.pdf").is_file()
    code, _, err = run_main(
        ["output", "faceoff", "figure3", "--n", "20", "--d-points", "10", "--alpha-points",
         "10", "--out", tmp_path / "f3.png", tmp_path / "f3.pdf"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "f3.png").is_file()
    stats = pipeline["tmp"] / "stats"
    code, _, err = run_main(
        ["output", "faceoff", "table1", "--stats", stats / "tiny.parquet", "--variant",
         stats / "tiny__none.parquet", "--caption", "tiny test", "--out",
         tmp_path / "t.csv", tmp_path / "t.md"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "tiny test" in (tmp_path / "t.md").read_text()
    table = pd.read_csv(tmp_path / "t.csv")  # the configured row, then the --variant row
    assert table["dataset"].tolist() == ["tiny", "tiny"]
    assert table["setting"].tolist() == ["configured", "variant"]


def test_figure_missing_aggregate(tmp_path, capsys):
    from pdsparse.repro.papers.faceoff.figures import figure1_spec

    spec = figure1_spec({"a": "a"}, {"a": "exp"}).to_json()
    code, _, err = run_main(
        ["output", "faceoff", "curves", "--spec", spec, "--aggregate",
         f"exp={tmp_path / 'none.parquet'}", "--out", tmp_path / "f.png", tmp_path / "f.pdf"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "none.parquet" in err
    code, _, err = run_main(
        ["output", "faceoff", "curves", "--spec", spec, "--aggregate",
         f"typo={tmp_path / 'x.parquet'}", "--out", tmp_path / "f.png", tmp_path / "f.pdf"],
        capsys,
    )  # fmt: skip
    assert code == 2 and "no panel of figure1 reads it" in err


def test_scalar_parsing():
    assert cli._scalar("3") == 3
    assert cli._scalar("1e-4") == pytest.approx(1e-4)
    assert cli._scalar("true") is True
    assert cli._scalar("abc") == "abc"


def test_run_choices_come_from_the_library():
    """The CLI offers exactly the samplings, methods and losses the library implements."""
    import subprocess
    import sys

    from pdsparse.losses import LOSSES
    from pdsparse.solvers import DUAL_STEPS, METHODS, SAMPLINGS

    out = subprocess.run([sys.executable, "-m", "pdsparse.cli", "run", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for name in (*SAMPLINGS, *METHODS, *DUAL_STEPS, *LOSSES):
        assert name in out


def test_choices_equal_the_library_constants():
    """The light name lists are exactly what the numerical modules implement."""
    from pdsparse.data.normalize import METHODS as NORMALIZATIONS
    from pdsparse.data.synthetic import GENERATORS
    from pdsparse.losses import LOSSES
    from pdsparse.names import PURE_L1
    from pdsparse.penalties import PENALTIES
    from pdsparse.solvers import DUAL_STEPS, METHODS, SAMPLINGS
    from pdsparse.solvers.dgpd import ETA_CHOICES, INNER_CHOICES
    from pdsparse.solvers.predict import FAMILIES

    choices = cli._choices()
    # advise --penalty: the prediction's families and pure l1 (the elastic net, l2 = 0)
    assert sorted(choices.pop("advise_penalties")) == sorted((*FAMILIES, PURE_L1))
    assert choices == {
        "losses": tuple(LOSSES),
        "normalizations": tuple(NORMALIZATIONS),
        "methods": tuple(METHODS),
        "samplings": tuple(SAMPLINGS),
        "dual_steps": tuple(DUAL_STEPS),
        "dgpd_inner": tuple(INNER_CHOICES),
        "dgpd_etas": tuple(ETA_CHOICES),
        "synthetic_kinds": tuple(GENERATORS),
        "penalties": tuple(PENALTIES),
    }


def test_importing_the_cli_is_light():
    """``pdsparse --version`` / ``--help`` must not wait for pandas, SciPy or matplotlib."""
    code = (
        "import sys, pdsparse.cli\n"
        "pdsparse.cli.build_parser()\n"
        "heavy = {'pandas', 'scipy', 'matplotlib', 'sklearn', 'pyarrow'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.strip() == "[]"


# ------------------------------------------------------------------------------ stats output

STATS_COLUMNS = [
    "dataset", "n", "d", "nnz", "density", "frob2", "C_P", "C_D", "C_P_over_C_D",
    "T_P_uniform", "T_D_uniform", "T_P_importance", "T_D_importance", "T_P_over_T_D",
    "normalization", "l2", "l2_spec", "beta",
]  # fmt: skip


def test_stats_parquet_columns_unchanged(pipeline):
    """The workflow's ``--out results/stats/x.parquet`` keeps exactly these columns."""
    assert list(pd.read_parquet(pipeline["tmp"] / "stats" / "tiny.parquet").columns) == (
        STATS_COLUMNS
    )


@pytest.mark.parametrize("out", [None, "-"])
def test_stats_prints_a_summary_and_writes_nothing(pipeline, tmp_path, monkeypatch, capsys, out):
    monkeypatch.chdir(tmp_path)
    argv = ["stats", "--data", pipeline["npz"], "--l2", "1/n", "--beta", "0.25"]
    code, text, err = run_main(argv + (["--out", out] if out else []), capsys)
    assert code == 0, err
    assert list(tmp_path.iterdir()) == []  # in particular no file named "-"
    row = pd.read_parquet(pipeline["tmp"] / "stats" / "tiny.parquet").iloc[0]
    assert text.startswith("tiny: n = 30, d = 8, nnz = 80, density = ")
    assert f"C_P = {row['C_P']:.4g}, C_D = {row['C_D']:.4g}" in text
    assert f"T_P/T_D = {row['T_P_over_T_D']:.4g} (importance sampling" in text
    assert "normalization avg_example_norm" in text


def test_stats_with_out_also_prints(pipeline, tmp_path, capsys):
    out = tmp_path / "s.parquet"
    code, text, _ = run_main(["stats", "--data", pipeline["npz"], "--out", out], capsys)
    assert code == 0
    assert "C_P = " in text and out.is_file()
    assert list(pd.read_parquet(out).columns) == STATS_COLUMNS


@pytest.mark.parametrize("name", ["raw.txt", "raw.bz2"])
def test_stats_on_a_raw_libsvm_file(tmp_path, capsys, name):
    raw = tmp_path / name
    raw.write_bytes(bz2.compress(TOY_TEXT) if name.endswith(".bz2") else TOY_TEXT)
    code, out, err = run_main(["stats", "--data", raw], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pdsparse stats: error: ")
    msg = lines[0]
    assert str(raw) in msg and "pickle" not in msg
    assert "LIBSVM" in msg and "pdsparse prepare" in msg and f"pdsparse advise {raw}" in msg
    if name.endswith(".bz2"):
        assert "bz2" in msg


def test_load_dataset_names_a_raw_file(tmp_path):
    from pdsparse.data.store import load_dataset
    from pdsparse.errors import DataError

    raw = tmp_path / "leu.bz2"
    raw.write_bytes(bz2.compress(TOY_TEXT))
    with pytest.raises(DataError, match=r"leu\.bz2.*bz2-compressed.*pdsparse prepare"):
        load_dataset(raw)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="empty"):
        load_dataset(empty)
    from pdsparse.data.store import file_kind

    assert file_kind(raw) == "bz2" and file_kind(empty) == "empty"


def test_every_command_says_what_it_wrote(tmp_path, capsys):
    # Job logs were empty for figure/table commands; now each ends with one 'wrote' line.
    png, pdf = tmp_path / "f3.png", tmp_path / "f3.pdf"
    argv = ["output", "faceoff", "figure3", "--n", "10", "--d-points", "4", "--alpha-points",
            "4", "--out", str(png), str(pdf)]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert err.endswith(f"pdsparse output faceoff figure3: wrote {png}, {pdf}\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["output", "dgpd", "figure3", "--out", "a", "b"],
     "dgpd has no output builder 'figure3'; choose one of ['curves', 'sensitivity', "
     "'sensitivity_figure', 'speedup', 'table2']"),
    (["output", "faceoff", "figure3", "--n", "10"], "the following arguments are required: --out"),
    (["output", "faceoff", "figure3", "--typo", "1", "--out", "a", "b"], "unrecognized arguments"),
])
def test_output_errors_name_the_builder_and_its_arguments(argv, message, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse of the builder: usage on stderr, status 2
        code = exc.code
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert message in err
    assert "pdsparse output" in err


def test_run_several_seeds_in_one_call_equals_one_call_per_seed(pipeline, tmp_path):
    """The workflow's run job covers every seed in one trace file: each seed's rows must be
    what a run of that seed alone writes (timings aside)."""
    import pandas as pd

    data, ref = pipeline["npz"], pipeline["ref"]
    base = ["run", "--data", str(data), "--reference", str(ref), "--experiment", "e",
            "--solver", "dual_rcd", "--option", "dual_step=fixed", "--max-epochs", "3"]
    both = tmp_path / "both.parquet"
    assert main([*base, "--seed", "0", "1", "--out", str(both)]) == 0
    combined = pd.read_parquet(both)
    assert sorted(set(combined["seed"])) == [0, 1]
    for seed in (0, 1):
        alone = tmp_path / f"alone{seed}.parquet"
        assert main([*base, "--seed", str(seed), "--out", str(alone)]) == 0
        a = combined[combined["seed"] == seed].reset_index(drop=True)
        b = pd.read_parquet(alone)
        assert list(a.columns) == list(b.columns)
        measured = list(MEASURED)
        pd.testing.assert_frame_equal(a.drop(columns=measured), b.drop(columns=measured))
    assert main([*base, "--seed", "0", "0", "--out", str(both)]) == 2


def test_elastic_net_from_the_command_line(pipeline, tmp_path, capsys):
    """--l1 reaches the problem, its key, the certified reference and the runs."""
    npz = pipeline["npz"]
    ref = tmp_path / "ref.parquet"
    code, _, err = run_main(["reference", "--data", npz, "--l1", "0.01", "--out", ref], capsys)
    assert code == 0, err
    row = pd.read_parquet(ref).iloc[0]
    assert row["problem"] == "tiny__logistic__l2-1_n__l1-0.01" and row["l1"] == 0.01
    assert row["rel_gap"] <= 1e-10 and row["method"] == "prox_sdca"
    out = tmp_path / "run.parquet"
    code, _, err = run_main(
        ["run", "--data", npz, "--reference", ref, "--experiment", "e", "--solver",
         "primal_rcd", "--l1", "0.01", "--max-epochs", "50", "--out", out], capsys)
    assert code == 0, err
    agg = tmp_path / "agg.parquet"
    assert run_main(["aggregate", "--runs", out, "--references", ref, "--out", agg],
                    capsys)[0] == 0
    trace = pd.read_parquet(agg)
    assert trace["subopt"].min() > -1e-9 and trace["subopt"].iloc[-1] < 1e-6
    # dual RCD with l1 is Prox-SDCA: the exact step only, said plainly for another one
    code, _, err = run_main(
        ["run", "--data", npz, "--reference", ref, "--experiment", "e", "--solver",
         "dual_rcd", "--option", "dual_step=fixed", "--l1", "0.01", "--out",
         tmp_path / "d.parquet"], capsys)
    assert code == 2 and "dual_step=newton" in err
    code, _, err = run_main(
        ["run", "--data", npz, "--reference", ref, "--experiment", "e", "--solver",
         "dual_rcd", "--l1", "0.01", "--max-epochs", "50",
         "--out", tmp_path / "d.parquet"], capsys)
    assert code == 0, err


def test_prepare_keeps_classes_and_groups_labels(tmp_path, capsys):
    """``--classes`` (MNIST 0 vs 9) and ``--positive-group`` (two groups of classes) reach
    the recipe, its tag names them, and giving a label both ways is an error."""
    from pdsparse.data.store import load_dataset

    out = tmp_path / "d09.npz"
    assert cli.main(["prepare", "--generator", "digits", "--dataset", "digits", "--classes",
                     "9", "0", "--normalization", "none", "--out", str(out)]) == 0
    ds = load_dataset(out)
    assert ds.n == 358 and set(np.unique(ds.b)) == {-1.0, 1.0}
    assert "[none-cl0+9]" in capsys.readouterr().err
    out = tmp_path / "groups.npz"
    assert cli.main(["prepare", "--generator", "digits", "--dataset", "digits",
                     "--positive-group", "0", "1", "2", "--normalization", "none",
                     "--out", str(out)]) == 0
    assert int((load_dataset(out).b > 0).sum()) == 178 + 182 + 177
    with pytest.raises(SystemExit) as usage:  # an argparse usage error
        cli.main(["prepare", "--generator", "digits", "--dataset", "digits",
                  "--positive-group", "0", "--positive-class", "1", "--out",
                  str(tmp_path / "never.npz")])
    assert usage.value.code == 2 and not (tmp_path / "never.npz").exists()
    assert "--positive-class: not allowed with argument --positive-group" in \
        capsys.readouterr().err


def test_reference_of_another_problem_tag_says_how_to_match_it(pipeline, capsys, tmp_path):
    out = tmp_path / "r.parquet"
    code, _, err = run_main(["run", "--data", pipeline["npz"], "--reference", pipeline["ref"],
                             "--experiment", "e", "--solver", "dual_rcd", "--problem",
                             "tiny+unit_rows__logistic__l2-1_n", "--max-epochs", "1",
                             "--out", out], capsys)
    assert code == 2 and not out.exists()
    assert "is for problem 'tiny__logistic__l2-1_n'" in err
    assert "pass --problem tiny__logistic__l2-1_n" in err


@pytest.mark.parametrize("where", ["build_parser", "func"])
def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys, where):
    """Ctrl-C while the arguments are parsed (imports happen there) or while the command
    runs: exit status 130 and one line on stderr, no traceback."""
    from pdsparse import cli

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "build_parser":
        monkeypatch.setattr(cli, "build_parser", interrupt)
    else:  # a command whose work is interrupted
        monkeypatch.setattr(cli, "_main", interrupt)
    assert cli.main(["fetch", "--help"]) == 130
    err = capsys.readouterr().err
    assert err.strip().endswith("interrupted") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_prepare_ones_own_file_without_a_registry_entry(tmp_path, capsys, monkeypatch):
    """Issue 20: ``pdsparse prepare --raw FILE`` for a name the registry lacks (and with no
    registry file at all): prepared as it is, said on stderr."""
    from pdsparse import cli
    from pdsparse.data.store import load_dataset

    monkeypatch.chdir(tmp_path)
    (tmp_path / "own.txt").write_text("1 1:0.5 3:1\n2 2:1\n3 1:1 2:0.3\n1 3:0.2\n")
    assert cli.main(["prepare", "--dataset", "own", "--raw", "own.txt", "--normalization",
                     "unit_rows", "--out", "own.npz"]) == 0
    err = capsys.readouterr().err
    assert "'own' is not in the registry" in err and "3 labels: multiclass" in err
    ds = load_dataset(tmp_path / "own.npz")
    assert ds.A.shape == (4, 3) and ds.meta["task"] == "multiclass"
