"""The solver registry (``pdsparse.solvers.SOLVERS``): options, tags, parsing, names."""

import dataclasses
import itertools
import re

import numpy as np
import pytest
from conftest import make_data

from pdsparse import names
from pdsparse.errors import ConfigError
from pdsparse.penalties import L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers import (
    SOLVERS,
    DualRCDOptions,
    PrimalRCDOptions,
    get_solver,
    make_kernel,
    option_names,
    solve,
)
from pdsparse.solvers.dgpd import DGPDOptions


def all_options(spec):
    """Every combination of the solver's option values."""
    ch = spec.choices()
    return [spec.options(**dict(zip(ch, combo, strict=True)))
            for combo in itertools.product(*ch.values())]


def test_registry_covers_the_names():
    assert names.METHODS == tuple(SOLVERS)
    for spec in SOLVERS.values():
        assert spec.choices().get("sampling", names.SAMPLINGS) == names.SAMPLINGS
    assert SOLVERS["dual_rcd"].choices()["dual_step"] == names.DUAL_STEPS
    # every option value the CLI and the schema offer is some solver's choice, and back
    offered = {v for opts in names.SOLVER_OPTIONS.values() for vals in opts.values()
               for v in vals}
    assert offered == {v for s in SOLVERS.values() for c in s.choices().values() for v in c}


def test_specs_describe_themselves():
    assert {s.family for s in SOLVERS.values()} == {"primal", "dual", "primal_dual"}
    labels = [s.label for s in SOLVERS.values()]
    assert all(labels) and len(set(labels)) == len(labels)
    assert SOLVERS["dual_rcd"].label == "dual RCD" and SOLVERS["primal_rcd"].start == "w0"
    assert all(name == spec.name for name, spec in SOLVERS.items())
    with pytest.raises(TypeError):
        SOLVERS["sgd"] = SOLVERS["dual_rcd"]  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        SOLVERS["dual_rcd"].label = "x"


def test_option_defaults_and_validation():
    assert PrimalRCDOptions() == PrimalRCDOptions(sampling="importance")
    # dual RCD's defaults are LIBLINEAR's order and step, not the paper's Sec. 7 setting
    assert DualRCDOptions() == DualRCDOptions("permutation", "newton")
    with pytest.raises(dataclasses.FrozenInstanceError):
        DualRCDOptions().sampling = "uniform"
    with pytest.raises(ConfigError, match=r"dual_rcd: unknown dual_step 'exact'.*"
                                          r"\['fixed', 'newton', 'printed'\]"):
        DualRCDOptions(dual_step="exact")
    with pytest.raises(ConfigError, match="did you mean 'permutation'"):
        PrimalRCDOptions(sampling="permutaton")
    for bad in (None, True, 1, ["importance"]):  # typed values that are not names
        with pytest.raises(ConfigError, match="unknown sampling"):
            DualRCDOptions(sampling=bad)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_tags_are_path_safe_and_never_collide(name):
    spec = SOLVERS[name]
    opts = all_options(spec)
    tags = [spec.tag(o) for o in opts]
    assert len(set(tags)) == len(opts) == int(np.prod([len(c) for c in spec.choices().values()]))
    assert all(re.fullmatch(r"[a-z0-9_]+(-[a-z0-9_]+)*", t) for t in tags)
    for o in opts:
        cols = spec.option_columns(o)
        assert tuple(cols) == option_names()  # the same key columns for every solver
        assert spec.parse_options(cols) == o  # and they read back to the options


def test_tags_and_columns_of_the_defaults():
    assert SOLVERS["primal_rcd"].tag() == "importance"
    assert SOLVERS["dual_rcd"].tag() == "permutation-newton"
    assert SOLVERS["dual_rcd"].tag({"sampling": "importance", "dual_step": "fixed"}) == \
        "importance-fixed"
    none = dict.fromkeys(option_names(), "none")  # every solver's options are columns
    assert SOLVERS["primal_rcd"].option_columns() == {**none, "sampling": "importance"}
    assert SOLVERS["dual_rcd"].option_columns() == {**none, "sampling": "permutation",
                                                    "dual_step": "newton"}
    assert SOLVERS["dgpd"].option_columns() == {**none, "inner": "5", "eta": "theorem"}
    assert SOLVERS["dgpd"].option_columns({"passes": "gauss_seidel"}) == {
        **none, "inner": "5", "eta": "theorem", "passes": "gauss_seidel"}
    assert SOLVERS["dgpd"].parse_options({"inner": "5", "batch": "none"}) == DGPDOptions()
    assert SOLVERS["dgpd"].tag() == "5-theorem"  # late options at their defaults: old tags
    assert option_names()[:4] == ("sampling", "dual_step", "inner", "eta")
    assert SOLVERS["spdc"].tag() == "default"


def test_parse_options_accepts_strings_instances_and_cli_pairs():
    dual = SOLVERS["dual_rcd"]
    want = DualRCDOptions("uniform", "newton")
    assert dual.parse_options({"sampling": "uniform", "dual_step": "newton"}) == want
    assert dual.parse_options({"sampling": " uniform ", "dual-step": "newton"}) == want
    assert dual.parse_options(["sampling=uniform", "dual_step=newton"]) == want
    assert dual.parse_options("dual_step=newton") == DualRCDOptions(dual_step="newton")
    assert dual.parse_options(want) is want
    assert dual.parse_options(None) == dual.parse_options({}) == DualRCDOptions()
    # a primal entry may carry the dual step as "none" (what its trace columns say)
    primal = SOLVERS["primal_rcd"]
    assert primal.parse_options({"sampling": "uniform", "dual_step": "none"}) == \
        PrimalRCDOptions("uniform")
    assert primal.parse_options({"dual_step": None}) == PrimalRCDOptions()


def test_parse_options_errors_name_the_key_and_the_allowed_keys():
    dual, primal = SOLVERS["dual_rcd"], SOLVERS["primal_rcd"]
    with pytest.raises(ConfigError, match=r"dual_rcd: unknown option 'dual_stp' \(did you mean "
                                          r"'dual_step'\?\); allowed options: sampling, "
                                          r"dual_step"):
        dual.parse_options({"dual_stp": "newton"})
    with pytest.raises(ConfigError, match=r"unknown option 'seed'; allowed options: sampling"):
        primal.parse_options({"seed": "1"})
    with pytest.raises(ConfigError, match=r"unknown option 'dual_step' \(an option of "
                                          r"dual_rcd\); allowed options: sampling$"):
        primal.parse_options({"dual_step": "newton"})
    with pytest.raises(ConfigError, match="unknown sampling 'impotance'.*did you mean "
                                          "'importance'"):
        dual.parse_options({"sampling": "impotance"})
    with pytest.raises(ConfigError, match="not of the form key=value"):
        dual.parse_options(["newton"])
    with pytest.raises(ConfigError, match="given twice"):
        dual.parse_options(["dual_step=newton", "dual-step=fixed"])
    with pytest.raises(ConfigError, match="options of dual_rcd"):
        primal.parse_options(DualRCDOptions())
    with pytest.raises(ConfigError, match=r"unknown method 'dual_rdc' \(did you mean "
                                          r"'dual_rcd'\?\)"):
        get_solver("dual_rdc")


@pytest.mark.parametrize("name", list(SOLVERS))
def test_registry_kernel_equals_the_keyword_kernel(name):
    """``spec.make_kernel(problem, options, seed)`` is ``make_kernel(problem, method, ...)``
    (the legacy keywords sampling= and dual_step= where the solver's options are those)."""
    A, b = make_data(n=30, d=20, seed=2)
    spec = SOLVERS[name]
    p = (Problem(A, b, "smooth_hinge", penalty=L1Ball(1.0, 0.05)) if spec.matrix
         else Problem(A, b, l2=0.05))  # matrix=True: the norm-ball solvers (PDBFW Sec. 5)
    if name in ("sfw", "block_fw"):  # trace-norm ball only (pdsparse.solvers.trace)
        p = Problem(A, np.column_stack([b, -b, 2 * b]), "squared",
                    penalty=TraceBall(1.0, 0.05))
    legacy = set(spec.choices()) <= {"sampling", "dual_step"}
    for opts in all_options(spec):
        k1 = spec.make_kernel(p, opts, 4)
        k2 = (make_kernel(p, name, **dataclasses.asdict(opts), seed=4) if legacy
              else make_kernel(p, name, options=opts, seed=4))
        k3 = make_kernel(p, name, options=spec.option_columns(opts), seed=4)
        for k in (k1, k2, k3):
            k.run(3 * p.nnz)
        np.testing.assert_array_equal(k1.iterates()[0], k2.iterates()[0])
        np.testing.assert_array_equal(k1.iterates()[0], k3.iterates()[0])


def test_keywords_map_onto_the_options():
    A, b = make_data(n=30, d=20, seed=2)
    p = Problem(A, b, l2=0.05)
    r = solve(p, "dual_rcd", options={"dual_step": "newton"}, sampling="uniform",
              max_epochs=1, eval_every=1)
    assert r.params["options"] == {"sampling": "uniform", "dual_step": "newton"}
    assert r.params["tag"] == "uniform-newton" and r.params["dual_step"] == "newton"
    r = solve(p, "primal_rcd", "uniform", "fixed", max_epochs=1, eval_every=1)  # legacy call
    assert r.params["options"] == {"sampling": "uniform"} and r.params["dual_step"] == ""
    with pytest.raises(ConfigError, match="primal_rcd has no option 'dual_step'"):
        solve(p, "primal_rcd", dual_step="newton")
    with pytest.raises(ConfigError, match="sampling given twice"):
        solve(p, "dual_rcd", "uniform", options={"sampling": "importance"})
    with pytest.raises(ConfigError, match="dual_rcd starts from alpha0, not w0"):
        solve(p, "dual_rcd", w0=np.zeros(p.d))


@pytest.mark.parametrize("name", [n for n, s in SOLVERS.items() if not s.matrix])
def test_face_off_kernels_refuse_a_ball(name):
    """A ball has l1 = 0 and may have l2 = 0: a kernel written for the elastic net must
    refuse it, not run with a silently wrong penalty (or divide by l2 = 0). (matrix=True:
    the norm-ball solvers, which refuse the elastic net instead.)"""
    from pdsparse.solvers import solve

    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((8, 3)), np.sign(rng.standard_normal(8))
    with pytest.raises(ConfigError, match="elastic net only"):
        solve(Problem(A, b, "logistic", L1Ball(radius=1.0)), name, max_epochs=1)


def test_integer_options_are_counts_or_names():
    """An integer option (PDBFW's sparsity s) takes a positive count or one of its names;
    the value stays text, normalized, so one setting has one tag."""
    from pdsparse.solvers.base import _int_option, _Options

    @dataclasses.dataclass(frozen=True)
    class Opts(_Options):
        s: str = _int_option("auto", ("auto",), "sparsity bound")

    assert Opts().s == "auto" and Opts(s="007").s == "7" and Opts(s=12).s == "12"
    for bad in ("0", "-1", "x", 1.5, True, "\uff11"):
        with pytest.raises(ConfigError, match="positive integer"):
            Opts(s=bad)


def test_option_names_is_computed_once_and_solvers_for_holds_no_problem():
    """option_names() is cached (it was a tenth of a small solve's time; the decorator had
    slid onto solvers_for when that was added above it, commit b18a648), and solvers_for
    keeps no reference to the problems it was asked about (its cache held each problem's
    matrices for the life of the process)."""
    import gc
    import weakref

    import scipy.sparse as sp

    from pdsparse.problem import Problem
    from pdsparse.solvers.registry import solvers_for

    assert hasattr(option_names, "cache_info") and option_names() is option_names()
    p = Problem(sp.random(20, 5, density=0.5, format="csr", random_state=0),
                np.r_[np.ones(10), -np.ones(10)], "logistic", l2=0.1)
    assert "dual_rcd" in solvers_for(p)
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is None
