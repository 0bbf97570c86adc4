"""Tests of ``pdsparse advise`` and :mod:`pdsparse.advise` (Face-Off's primal-or-dual advice).

Every test writes its own tiny LIBSVM file; no network, no registry.
"""

from __future__ import annotations

import bz2
import gzip
import json

import numpy as np
import pytest

from pdsparse import advise as advise_mod
from pdsparse.advise import Advice, advise, format_advice
from pdsparse.cli import main
from pdsparse.errors import ConfigError
from pdsparse.solvers.predict import pass_cost, probe_passes


def libsvm_text(rows: list[dict[int, float]], labels: list) -> str:
    return "".join(
        f"{y} " + " ".join(f"{i}:{v:g}" for i, v in sorted(r.items())) + "\n"
        for y, r in zip(labels, rows, strict=True)
    )


def dual_favoured(n: int = 60) -> str:
    """One feature in every example (a heavy column: large C_P), plus one own feature each."""
    rows = [{1: 1.0, j + 2: 1.0 + 0.1 * (j % 3)} for j in range(n)]
    return libsvm_text(rows, [1 if j % 2 else -1 for j in range(n)])


def primal_favoured(d: int = 60) -> str:
    """One example holding every feature (a heavy row: large C_D), plus one example per feature."""
    rows = [{i: 1.0 for i in range(1, d + 1)}] + [{i: 1.0 + 0.1 * (i % 3)} for i in range(1, d + 1)]
    return libsvm_text(rows, [1 if j % 2 else -1 for j in range(d + 1)])


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    if name.endswith(".bz2"):
        path.write_bytes(bz2.compress(text.encode()))
    elif name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def run_main(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(argv, capsys) -> dict:
    code, out, err = run_main(["advise", *argv, "--json"], capsys)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1  # one JSON object
    return json.loads(out)


def expected_stats(path, normalization="avg_example_norm", beta=0.25, l2=None):
    """The same numbers straight from the library: read, normalize, data_stats."""
    from pdsparse.data.libsvm import read_libsvm
    from pdsparse.data.normalize import normalize
    from pdsparse.stats import data_stats

    A, _ = read_libsvm(path)
    A, _ = normalize(A, normalization)
    return data_stats(A, l2 if l2 is not None else 1.0 / A.shape[0], beta)


# ------------------------------------------------------------------------------ prediction


def test_dual_verdict_json_matches_the_library(tmp_path, capsys):
    path = write(tmp_path, "dual.txt", dual_favoured())
    out = run_json([path], capsys)
    exp = expected_stats(path)
    for key, value in exp.items():
        assert out["stats"][key] == pytest.approx(value, rel=1e-12), key
    fo = out["faceoff"]
    assert fo["sampling"] == {"primal": "importance", "dual": "importance"}
    assert fo["T_P"] == pytest.approx(exp["T_P_importance"])
    assert fo["T_D"] == pytest.approx(exp["T_D_importance"])
    assert fo["ratio"] == pytest.approx(exp["T_P_importance"] / exp["T_D_importance"])
    assert fo["ratio"] > 2
    assert fo["fewer_ops"] == "dual_rcd"
    assert fo["speedup_ops"] == pytest.approx(fo["ratio"])
    assert fo["verdict"] == (
        f"dual RCD, predicted {fo['ratio']:.3g}x fewer operations "
        f"(T_P/T_D = {fo['ratio']:.3g}, importance sampling)"
    )
    s = out["settings"]
    assert s["normalization"] == "avg_example_norm" and s["loss"] == "logistic"
    assert s["beta"] == 0.25 and "logistic" in s["beta_source"]
    assert s["l2"] == pytest.approx(1 / 60) and s["l2_spec"] == "1/n"
    assert out["race"] is None
    assert out["labels"]["n_classes"] == 2


def test_primal_verdict_text(tmp_path, capsys):
    path = write(tmp_path, "primal.txt", primal_favoured())
    code, out, err = run_main(["advise", path, "--quiet"], capsys)
    assert code == 0, err
    exp = expected_stats(path)
    ratio = exp["T_P_importance"] / exp["T_D_importance"]
    assert ratio < 0.5
    lines = out.strip().splitlines()
    assert lines[-2].startswith("as an estimator") and lines[-1].startswith("  LinearClassifier(")
    lines = lines[:-2]  # the estimator's lines: test_the_estimator_advise_prints_...
    assert lines[-3] == (
        f"Face-Off's verdict (operations, Sec. 8): primal RCD, predicted {1 / ratio:.3g}x fewer "
        f"operations (T_P/T_D = {ratio:.3g}, importance sampling)"
    )
    # the prediction weighs the passes the probe measured (4 of each side at its defaults,
    # extrapolated to 1e-6) by their cost: a primal pass with the logistic loss costs
    # PASS_COST dual passes (one exp per nonzero)
    probe = run_json([path], capsys)["stats"]["probe"]
    passes = {m: probe_passes(probe[m], 1e-6) for m in ("primal_rcd", "dual_rcd")}
    cost = (pass_cost("primal_rcd", "logistic", exp["nnz"], exp["d"])
            / pass_cost("dual_rcd", "logistic", exp["nnz"], exp["n"]))
    speedup = passes["dual_rcd"] / (passes["primal_rcd"] * cost)
    assert speedup > 1
    assert lines[-1] == (
        f"prediction: primal_rcd: primal RCD: {passes['primal_rcd']:.3g} vs "
        f"{passes['dual_rcd']:.3g} passes to 1e-06 at the rates of their first 4, a primal "
        f"pass costs {cost:.3g}x a dual one here (logistic loss): predicted "
        f"{speedup:.3g}x less CPU time")
    assert lines[-2] == ("solvers for this problem: primal_rcd, dual_rcd, spdc, dgpd, dgpd_full, "
                         "prox_newton")
    assert "n = 61 examples, d = 60 features" in out
    for label in ("C_P, C_D (eq. 16)", "T uniform", "T importance (eq. 15)"):
        assert label in out
    assert err == ""


def test_plain_bz2_and_gz_agree(tmp_path, capsys):
    text = dual_favoured(30)
    results = [run_json([write(tmp_path, name, text)], capsys) for name in
               ("x.txt", "x.bz2", "x.gz")]  # fmt: skip
    for other in results[1:]:
        assert other["stats"] == results[0]["stats"]
        assert other["faceoff"] == results[0]["faceoff"]


def test_settings_reach_the_statistics(tmp_path, capsys):
    path = write(tmp_path, "dual.txt", dual_favoured())
    squared = run_json([path, "--loss", "squared"], capsys)
    assert squared["settings"]["beta"] == 1.0  # the squared loss's smoothness
    given = run_json([path, "--beta", "2", "--l2", "0.5", "--normalization", "none"], capsys)
    assert given["settings"]["beta"] == 2.0 and given["settings"]["beta_source"] == "given"
    exp = expected_stats(path, "none", beta=2.0, l2=0.5)
    assert given["stats"]["T_P_importance"] == pytest.approx(exp["T_P_importance"])
    assert given["settings"]["l2"] == 0.5
    unit = run_json([path, "--normalization", "unit_rows"], capsys)
    assert unit["stats"]["C_P"] == pytest.approx(expected_stats(path, "unit_rows")["C_P"])


def test_uniform_is_named_when_it_ties_with_importance(tmp_path, capsys):
    # every example and feature has the same norm: importance sampling *is* uniform
    rows = [{1 + j % 4: 1.0} for j in range(8)]
    path = write(tmp_path, "flat.txt", libsvm_text(rows, [1, -1] * 4))
    out = run_json([path], capsys)
    assert out["faceoff"]["sampling"] == {"primal": "uniform", "dual": "uniform"}
    assert "uniform sampling" in out["faceoff"]["verdict"]


def test_library_function_is_documented():
    assert "advise" in advise_mod.__all__
    doc = advise.__doc__
    for eq in ("eq. 16", "eq. 12", "eq. 13", "eqs. 14-15"):
        assert eq in doc


# ------------------------------------------------------------------------------ race


def test_race_ranks_every_applicable_solver(tmp_path, capsys):
    path = write(tmp_path, "dual.txt", dual_favoured())
    out = run_json([path, "--race", "0.2"], capsys)
    race = out["race"]
    assert race["seconds"] == 0.2 and race["tol"] == 1e-6 and race["tune"] is False
    methods = [e["method"] for e in race["entries"]]
    assert sorted(methods) == sorted(out["applicable"]) == sorted(
        ["primal_rcd", "dual_rcd", "spdc", "dgpd", "dgpd_full", "prox_newton"])
    # ranked: those that reached the gap first, by CPU time with setup; then by final gap
    reached = [e for e in race["entries"] if e["reached"]]
    assert race["entries"][: len(reached)] == reached
    assert [e["cpu_s"] for e in reached] == sorted(e["cpu_s"] for e in reached)
    for e in race["entries"]:
        assert e["cpu_s"] >= e["setup_s"] >= 0 and e["epochs"] > 0
        assert e["status"] in ("converged", "max_time", "diverged", "error")
        assert e["reached"] == (e["status"] == "converged")
        if e["reached"]:
            assert e["rel_gap"] <= 1e-6
    assert race["winner"] == race["entries"][0]["method"]
    assert race["held"] == (race["winner"] == out["prediction"]["method"])
    # a dual-friendly problem this small is solved by both RCD sides within the budget
    assert {"primal_rcd", "dual_rcd"} <= {e["method"] for e in reached}
    assert race["faceoff"]["winner"] in ("primal_rcd", "dual_rcd")
    assert race["faceoff"]["held"] == (race["faceoff"]["winner"] == out["faceoff"]["fewer_ops"])


def test_race_text(tmp_path, capsys):
    path = write(tmp_path, "primal.txt", primal_favoured(20))
    code, out, err = run_main(["advise", path, "--race", "0.05", "--seed", "3"], capsys)
    assert code == 0, err
    assert ("race: at most 0.05 s of kernel CPU time each, to relative gap 1e-06, ranked by "
            "CPU time with setup (seed 3)") in out
    assert "  1   " in out and "dual_rcd" in out and "primal_rcd" in out
    assert "race: prediction held" in out or "race: prediction did NOT hold" in out or \
        "race: prediction within 1.5x" in out
    assert "Face-Off's verdict (operations) in CPU time" in out
    # progress: a line before and after each solver, on stderr
    assert "race 1/6: " in err and "race 6/6: " in err


def test_race_on_multiclass_needs_positive_class(tmp_path, capsys):
    rows = [{1 + j % 5: 1.0, 6: 0.5} for j in range(12)]
    path = write(tmp_path, "multi.txt", libsvm_text(rows, [1, 2, 3] * 4))
    code, out, err = run_main(["advise", path], capsys)  # the prediction needs no labels
    assert code == 0, err
    assert "3 classes" in out and "--positive-class" in out
    assert "prediction: " in out
    for extra in (["--race", "0.02"], ["--penalty", "elastic_net", "--l1", "0.01"]):
        code, out, err = run_main(["advise", path, *extra, "--quiet"], capsys)
        assert code == 2 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pdsparse advise: error: ")
        assert "3 classes (1, 2, 3)" in lines[0] and "--positive-class" in lines[0]
        assert str(path) in lines[0]
    adv = run_json([path, "--race", "0.02", "--positive-class", "2"], capsys)
    assert adv["settings"]["positive_class"] == "2"
    assert adv["race"]["entries"][0]["epochs"] > 0
    code, _, err = run_main(["advise", path, "--positive-class", "7"], capsys)
    assert code == 2 and "7" in err and "does not occur" in err


# ------------------------------------------------------------------------------ errors


def one_line_error(argv, capsys) -> str:
    code, out, err = run_main(["advise", "--quiet", *argv], capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("pdsparse advise: error: ")
    assert "Traceback" not in err
    return lines[0]


def test_missing_file(tmp_path, capsys):
    msg = one_line_error([tmp_path / "nope.bz2"], capsys)
    assert "nope.bz2" in msg and "not found" in msg


def test_unparseable_line_names_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "bad.bz2", "+1 1:1 2:2\n-1 3:1\n+1 2:x\n")
    msg = one_line_error([path], capsys)
    assert "bad.bz2" in msg and "line 3" in msg and "'x'" in msg


def test_empty_file(tmp_path, capsys):
    path = write(tmp_path, "empty.txt", "")
    msg = one_line_error([path], capsys)
    assert "empty.txt" in msg and "no examples" in msg


def test_processed_npz_is_pointed_to_stats(tmp_path, capsys):
    npz = tmp_path / "x.npz"
    assert main(["prepare", "--dataset", "x", "--generator", "dense_gaussian", "--param", "n=4",
                 "--param", "d=3", "--out", str(npz)]) == 0  # fmt: skip
    capsys.readouterr()
    msg = one_line_error([npz], capsys)
    assert "x.npz" in msg and "pdsparse stats" in msg


def test_format_advice_is_the_cli_text(tmp_path, capsys):
    path = write(tmp_path, "dual.txt", dual_favoured())
    adv = advise(path)
    assert isinstance(adv, Advice)
    code, out, _ = run_main(["advise", path], capsys)
    assert out.rstrip("\n") == format_advice(adv)


def test_progress_on_stderr_and_quiet(tmp_path, capsys):
    """Long steps say what they do on stderr; --quiet silences them; an error still ends on
    its one line."""
    path = write(tmp_path, "two.txt", "+1 1:1 2:2\n-1 2:1\n+1 1:3\n-1 1:1 2:1\n")
    code, out, err = run_main(["advise", str(path), "--race", "0.05"], capsys)
    assert code == 0 and "verdict" in out
    lines = err.strip().splitlines()
    assert lines[0] == f"pdsparse advise: reading {path}"
    assert any("statistics" in line for line in lines)
    assert any(line.startswith("pdsparse advise: race: ") for line in lines)
    code, out, err = run_main(["advise", str(path), "--quiet"], capsys)
    assert code == 0 and err == ""
    code, out, err = run_main(["advise", str(tmp_path / "nope.txt")], capsys)
    assert code == 2 and err.strip().splitlines()[-1].startswith("pdsparse advise: error: ")


def test_one_class_file_is_warned_about(tmp_path, capsys):
    path = write(tmp_path, "one.txt", "1 1:1 2:3\n1 2:1\n1 1:2\n")
    code, out, _ = run_main(["advise", str(path), "--quiet"], capsys)
    assert code == 0 and "warning: the file has one class only (label 1)" in out
    code, out, _ = run_main(["advise", str(path), "--quiet", "--json"], capsys)
    assert "one class only" in json.loads(out)["warnings"][0]


# ------------------------------------------------------------------------------ penalty families


@pytest.mark.parametrize("argv, words", [
    (["--penalty", "elastic_net"], ["elastic_net needs --l1 > 0"]),
    (["--penalty", "l1_ball"], ["l1_ball needs --radius > 0"]),
    (["--l1", "0.1"], ["penalty l2 takes no l1 or radius", "--penalty elastic_net"]),
    (["--penalty", "elastic_net", "--l1", "0.1", "--radius", "2"], ["takes no radius"]),
    (["--penalty", "l1_ball", "--radius", "2", "--l1", "0.1"], ["takes no l1"]),
])
def test_penalty_settings_are_checked_before_the_data_is_read(tmp_path, capsys, argv, words):
    missing = tmp_path / "not-there.txt"  # the settings are checked first: no file needed
    line = one_line_error([missing, *argv], capsys)
    for word in words:
        assert word in line


def test_each_family_prediction_and_race(tmp_path, capsys):
    path = write(tmp_path, "dual.txt", dual_favoured())
    en = run_json([path, "--penalty", "elastic_net", "--l1", "0.001", "--race", "0.1"], capsys)
    assert en["family"] == "elastic_net" and en["settings"]["l1"] == 0.001
    assert en["applicable"]["dual_rcd"] == {}  # Prox-SDCA: the exact step, the default
    assert en["prediction"]["method"] in ("primal_rcd", "dual_rcd")
    assert set(en["stats"]["probe"]) == {"primal_rcd", "dual_rcd"}
    assert en["stats"]["x_nnz"] == en["stats"]["probe"]["primal_rcd"]["support"]
    labels = [e["label"] for e in en["race"]["entries"]]
    assert "dual_rcd" in labels
    ball = run_json([path, "--penalty", "l1_ball", "--radius", "1", "--loss", "smooth_hinge",
                     "--race", "0.1"], capsys)
    assert ball["faceoff"] is None and "faceoff" not in ball["race"]
    assert ball["prediction"]["method"] in ("acc_pg", "svrg")
    assert {e["method"] for e in ball["race"]["entries"]} == set(ball["applicable"]) == {
        "acc_pg", "fw", "svrg", "scgs", "storc", "pdbfw"}
    code, out, err = run_main(["advise", path, "--penalty", "l1_ball", "--radius", "1",
                               "--quiet"], capsys)
    assert code == 0 and "penalty l1 ball: radius 1" in out and "C_P" not in out


def test_tune_races_each_grid(tmp_path, capsys):
    from pdsparse.race import TUNE_GRID

    path = write(tmp_path, "dual.txt", dual_favoured(30))
    out = run_json([path, "--race", "0.02", "--tune"], capsys)
    assert out["race"]["tune"] is True
    dual = [e for e in out["race"]["entries"] if e["method"] == "dual_rcd"]
    grid = TUNE_GRID["dual_rcd"]
    assert len(dual) == len(grid["sampling"]) * len(grid["dual_step"])
    assert len({e["label"] for e in dual}) == len(dual)


def test_json_names_each_answer_for_what_it_is(tmp_path, capsys):
    """No top-level ``winner`` that a reader takes for the race's: Face-Off's answer (fewer
    operations) sits under ``faceoff``, the predicted fastest in CPU time under
    ``prediction``, the measured one under ``race`` (issue 29 item 3)."""
    path = write(tmp_path, "dual.txt", dual_favoured())
    out = run_json([path, "--race", "0.1"], capsys)
    for old in ("winner", "verdict", "speedup", "ratio", "sampling", "T_P", "T_D"):
        assert old not in out, old
    assert out["faceoff"]["fewer_ops"] in ("primal_rcd", "dual_rcd")
    assert out["prediction"]["method"] in out["applicable"]
    assert out["race"]["winner"] == out["race"]["entries"][0]["method"]


def _lambda_max(path) -> float:
    """||grad f(0)||_inf of the logistic loss on the advise-normalized data, by hand:
    phi'(0, b) = -b / 2."""
    import numpy as np

    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize

    A, y = read_libsvm(path)
    A, _ = normalize(A, "avg_example_norm")
    b = binarize_labels(y, None)
    return float(np.abs(A.T @ (-b / 2)).max() / A.shape[0])


def test_l1_at_or_above_lambda_max_is_warned_about(tmp_path, capsys):
    """x* = 0 for l1 >= lambda_max: the text shows lambda_max and both outputs warn
    (issue 29 item 2: the README's --l1 0.01 was above it on colon-cancer and duke)."""
    path = write(tmp_path, "dual.txt", dual_favoured())
    lam = _lambda_max(path)
    above = run_json([path, "--penalty", "elastic_net", "--l1", repr(2 * lam)], capsys)
    assert above["stats"]["lambda_max"] == pytest.approx(lam, rel=1e-12)
    assert above["stats"]["x_nnz"] == 0
    assert len(above["warnings"]) == 1 and "lambda_max" in above["warnings"][0]
    below = run_json([path, "--penalty", "elastic_net", "--l1", repr(lam / 2)], capsys)
    assert below["warnings"] == []
    code, text, _ = run_main(["advise", path, "--penalty", "elastic_net", "--l1", repr(2 * lam),
                              "--quiet"], capsys)
    assert code == 0
    assert f"lambda_max = ||grad f(0)||_inf = {lam:.3g}" in text
    assert "warning: l1 = " in text and "x* = 0" in text


def test_l1_relative_to_lambda_max(tmp_path, capsys):
    """``--l1 Fx`` is F times lambda_max, in the CLI and the library; 1x is already trivial."""
    path = write(tmp_path, "dual.txt", dual_favoured())
    lam = _lambda_max(path)
    tenth = run_json([path, "--penalty", "elastic_net", "--l1", "0.1x"], capsys)
    assert tenth["settings"]["l1"] == pytest.approx(lam / 10, rel=1e-12)
    assert tenth["settings"]["l1_spec"] == "0.1x" and tenth["warnings"] == []
    code, text, _ = run_main(["advise", path, "--penalty", "elastic_net", "--l1", "0.1x",
                              "--quiet"], capsys)
    assert f"l1 = 0.1x = 0.1 lambda_max = {lam / 10:.4g}" in text
    one = advise(path, penalty="elastic_net", l1="1x")
    assert one.settings["l1"] == pytest.approx(lam, rel=1e-12) and len(one.warnings) == 1
    for bad in ("abcx", "0x", "infx"):
        with pytest.raises(advise_mod.ConfigError, match="relative l1"):
            advise(tmp_path / "not-read.txt", penalty="elastic_net", l1=bad)


# ------------------------------------------------------------------ a Problem as it is


def test_a_problem_gets_the_advice_of_its_file(tmp_path):
    from pdsparse.problem import Problem

    path = write(tmp_path, "dual.txt", dual_favoured())
    for family, kw, pen in (
            ("l2", {}, {"l2": "1/n"}),
            ("elastic_net", {"l1": 0.001}, {"l2": "1/n", "l1": 0.001}),
            ("l1_ball", {"radius": 1.0}, {"penalty": {"name": "l1_ball", "radius": 1.0,
                                                      "l2": "1/n"}})):
        from_file = advise(path, penalty=family, **kw)
        problem = Problem.from_libsvm(path, normalization="avg_example_norm", **pen)
        from_problem = advise(problem)
        assert from_problem.family == family
        for key in ("n", "d", "nnz", "C_P", "C_D", "lambda_max", "L", "kappa"):
            if key in from_file.stats:
                assert from_problem.stats[key] == pytest.approx(from_file.stats[key],
                                                                rel=1e-12), (family, key)
        assert from_problem.applicable == from_file.applicable
        assert (from_problem.faceoff is None) == (family == "l1_ball")
        assert from_problem.settings["l2"] == pytest.approx(from_file.settings["l2"])
        assert "normalization as given" in format_advice(from_problem)


def test_a_problem_races_and_refuses_file_settings():
    from conftest import make_data

    from pdsparse.penalties import ElasticNet, TraceBall
    from pdsparse.problem import Problem

    A, b = make_data(n=30, d=12)
    problem = Problem(A, b, "logistic", ElasticNet(0.05, 0.01), name="mine")
    adv = advise(problem, race_seconds=0.2)
    assert adv.race["entries"] and adv.race["winner"] in adv.applicable
    assert adv.path == "mine"
    with pytest.raises(ConfigError, match="loss, l1 describe a file"):
        advise(problem, loss="squared", l1=0.1)
    B = np.stack([b, -b], axis=1)
    with pytest.raises(ConfigError, match="label matrix"):
        advise(Problem(A, B, "logistic", ElasticNet(0.05)))
    with pytest.raises(ConfigError, match="penalty families"):
        advise(Problem(A, B, "squared", TraceBall(1.0)).column(0))


def test_pure_l1_file_is_advised_without_face_off(tmp_path, capsys):
    """l2 = 0: Face-Off's T needs lambda > 0 and the dual side cannot take the problem, so the
    statistics skip both (before: 'l2 must be a positive finite number')."""
    path = write(tmp_path, "dual.txt", dual_favoured())
    out = run_json([path, "--penalty", "elastic_net", "--l2", "0", "--l1", "0.1x",
                    "--race", "0.2"], capsys)
    assert out["faceoff"] is None and "C_P" not in out["stats"]
    assert set(out["stats"]["probe"]) == {"primal_rcd"}
    assert out["prediction"]["method"] == "prox_newton"
    assert "dual_rcd" not in out["applicable"]


def test_penalty_l1_is_the_elastic_net_with_l2_zero(tmp_path, capsys):
    """``--penalty l1`` (the estimators' name for pure l1; before: argparse's "invalid
    choice") advises exactly what ``--penalty elastic_net --l2 0`` does, and says so."""
    path = write(tmp_path, "dual.txt", dual_favoured())
    ours = run_json([path, "--penalty", "l1", "--l1", "0.1x"], capsys)
    long = run_json([path, "--penalty", "elastic_net", "--l2", "0", "--l1", "0.1x"], capsys)
    for key in ("stats", "prediction", "applicable", "faceoff"):
        assert ours[key] == long[key], key
    assert ours["settings"]["l2"] == 0 and ours["settings"]["l1"] == long["settings"]["l1"] > 0
    code, out, err = run_main(["advise", path, "--penalty", "l1", "--l1", "0.1x", "--quiet"],
                              capsys)
    assert code == 0, err
    assert "penalty l1 (pure: l2 = 0), l1 = 0.1x = 0.1 lambda_max = " in out
    assert run_main(["advise", path, "--penalty", "l1", "--l2", "0", "--l1", "0.1x",
                     "--quiet"], capsys)[1] == out  # l2 = 0 said again: the same


@pytest.mark.parametrize("argv, message", [
    (["--penalty", "l1", "--l1", "0.1x", "--l2", "1/n"],
     "penalty l1 is pure l1 (l2 = 0), got --l2 1/n; for l1 + l2 give --penalty elastic_net"),
    (["--penalty", "l1"], "penalty l1 needs --l1 > 0"),
    (["--l2", "0"], "pure l1 is --penalty l1 --l1 VALUE"),
])
def test_penalty_l1_refuses_an_l2_and_needs_an_l1(tmp_path, capsys, argv, message):
    path = write(tmp_path, "dual.txt", dual_favoured())
    code, out, err = run_main(["advise", path, *argv, "--quiet"], capsys)
    assert code != 0 and message in err, err
    with pytest.raises(ConfigError, match="penalty l1"):
        advise(path, penalty="l1", l2=0.5, l1=0.1)


def random_file(tmp_path, n=80, d=30, classes=(-1, 1), seed=0):
    """A sparse LIBSVM file with a signal in its labels (uneven row norms: the scaling
    matters)."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(d)
    rows, labels = [], []
    for _ in range(n):
        cols = rng.choice(d, size=int(rng.integers(2, 8)), replace=False)
        vals = rng.standard_normal(cols.size) * rng.uniform(0.5, 3.0)
        rows.append({int(c) + 1: float(v) for c, v in zip(cols, vals, strict=True)})
        score = float(vals @ truth[cols]) + 0.3 * rng.standard_normal()
        labels.append(classes[int(np.digitize(score, [-0.5, 0.5])) % len(classes)]
                      if len(classes) > 2 else classes[int(score > 0)])
    return write(tmp_path, "data.txt", libsvm_text(rows, labels))


@pytest.mark.parametrize("settings", [
    {},
    {"penalty": "l1", "l1": "0.1x"},
    {"penalty": "elastic_net", "l1": "0.05x", "loss": "squared",
     "normalization": "unit_rows"},
    {"penalty": "l1_ball", "radius": 2.0, "loss": "smooth_hinge", "normalization": "none",
     "tol": 1e-8},
    {"penalty": "l1", "l1": "0.2x", "positive_class": 2, "classes": (1, 2, 3)},
    {"loss": "squared", "positive_class": 3, "classes": (1, 2, 3)},
    {"intercept": True},
    {"penalty": "l1", "l1": "0.1x", "intercept": True, "loss": "squared"},
])
def test_the_estimator_advise_prints_solves_the_problem_it_advised(tmp_path, capsys, settings):
    """``advise`` ends with the ``pdsparse.estimators`` call that fits the problem it
    advised: fitted as printed (X read by scikit-learn, scaled as printed, y as printed),
    the estimator's coefficients have a certified gap on that problem, built here from the
    settings (an estimator with another alpha, l1_ratio or scaling would not), and its
    "auto" ran the prediction."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.preprocessing import normalize as unit_rows

    from pdsparse import estimators
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize
    from pdsparse.objective import evaluate
    from pdsparse.penalties import ElasticNet, L1Ball
    from pdsparse.problem import Problem

    settings = dict(settings)
    path = random_file(tmp_path, classes=settings.pop("classes", (-1, 1)))
    adv = advise(path, **settings)
    est, s = adv.estimator, adv.settings
    code, out, err = run_main(["advise", path, "--quiet", *_flags(settings)], capsys)
    assert code == 0, err
    assert out.splitlines()[-1] == f"  {est['code']}"

    X, y = load_svmlight_file(str(path), n_features=adv.stats["d"])
    X = X / est["scale"] if est["scale"] else unit_rows(X) if est["unit_rows"] else X
    positive = settings.get("positive_class")
    if positive is not None:
        y = np.where(y == positive, 1.0, -1.0) if s["loss"] == "squared" else y == positive
    assert est["y"] == ("y" if positive is None
                        else f"np.where(y == {positive}, 1.0, -1.0)" if s["loss"] == "squared"
                        else f"y == {positive}")
    model = getattr(estimators, est["class"])(**est["params"])
    model.set_params(tol=1e-10, max_iter=100_000).fit(X, y)
    assert model.solver_ == adv.prediction["method"]

    A, raw = read_libsvm(path)
    A, _ = normalize(A, s["normalization"])
    b = (raw if s["loss"] == "squared" and positive is None
         else binarize_labels(raw, positive))
    pen = (L1Ball(s["radius"], s["l2"]) if adv.family == "l1_ball"
           else ElasticNet(s["l2"], s["l1"] or 0.0))
    w = np.ravel(model.coef_)
    if s["intercept"]:
        w = np.append(w, model.intercept_)
    problem = Problem(A, b, s["loss"], pen, intercept=s["intercept"])
    primal, _, gap = evaluate(problem, w)
    assert 0 <= gap <= 1e-8 * abs(primal), (gap, primal)


def _flags(settings: dict) -> list[str]:
    flags = []
    for key, value in settings.items():
        flags += [f"--{key.replace('_', '-')}"] + ([] if value is True else [str(value)])
    return flags


def test_an_intercept_is_advised_with_its_solvers_and_no_face_off_verdict(tmp_path, capsys):
    """``--intercept``: the problem with an unpenalized intercept (the solvers that take it,
    the prediction for it, the estimator with ``fit_intercept=True``, the peers that fit
    one unpenalized, not LIBLINEAR); Face-Off's verdict, whose analysis has no intercept and
    names dual RCD, which does not take one, is left out (before, from the library: a crash,
    the peers' w without the intercept handed to the certificate)."""
    path = random_file(tmp_path)
    out = run_json([path, "--intercept", "--race", "0.5", "--peers"], capsys)
    assert out["settings"]["intercept"] is True
    assert out["faceoff"] is None and "C_P" in out["stats"]
    assert "dual_rcd" not in out["applicable"] and "prox_newton" in out["applicable"]
    assert out["prediction"]["method"] == "prox_newton"
    assert out["estimator"]["params"]["fit_intercept"] is True
    peers = {e["label"].split(" (")[0] for e in out["race"]["entries"] if e.get("peer")}
    assert "sklearn lbfgs" in peers and "sklearn liblinear" not in peers
    assert out["race"]["no_peer"] is None
    code, text, err = run_main(["advise", path, "--intercept", "--quiet"], capsys)
    assert code == 0, err
    assert ", an unpenalized intercept" in text.splitlines()[1]
    assert "  lambda_max = ||grad f(0, c*)||_inf = " in text  # at the best intercept
    assert "Face-Off's verdict" not in text


def test_an_intercept_on_a_multiclass_file_needs_a_positive_class(tmp_path, capsys):
    path = random_file(tmp_path, classes=(1, 2, 3))
    code, out, err = run_main(["advise", path, "--intercept", "--quiet"], capsys)
    assert code != 0 and "an intercept needs binary labels" in err, err


def test_peers_asked_for_where_none_fits_say_why(tmp_path, capsys):
    path = random_file(tmp_path)
    code, text, err = run_main(["advise", path, "--penalty", "l1_ball", "--radius", "2",
                                "--race", "0.2", "--peers", "--quiet"], capsys)
    assert code == 0, err
    assert "  no peer raced: no peer here fits a norm ball or a label matrix" in text
    assert "[peer]" not in text
