"""What each solver of the registry declares it solves (``SolverSpec.penalties``, ``losses``,
``dense``/``sparse``, ``label_matrix``, ``needs_strong_convexity``, ``limits``) is what
building its kernel accepts: for every solver, every option value (one changed from the
defaults at a time) and small problems of every kind (penalty, l2 = 0 or not, loss, dense or
sparse A, label vector or matrix), the declaration (``SolverSpec.refusal``, what
:func:`pdsparse.solvers.predict.accepts` reads) and the factory (``SolverSpec.make_kernel``, the
oracle here) agree, so that neither can drift from the other."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse import names
from pdsparse.errors import ConfigError
from pdsparse.penalties import ElasticNet, L1Ball, TraceBall
from pdsparse.problem import Problem
from pdsparse.race import TUNE_GRID
from pdsparse.solvers import SOLVERS
from pdsparse.solvers.predict import accepts, applicable
from pdsparse.solvers.registry import PENALTY_KINDS, penalty_kind

A0 = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.5, 0.0, 1.0], [0.0, 0.5, 1.0],
               [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
B0 = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
PENALTIES = (ElasticNet(0.1), ElasticNet(0.1, 0.01), ElasticNet(0.0, 0.01), L1Ball(1.0, 0.1),
             L1Ball(1.0, 0.0), TraceBall(1.0, 0.1), TraceBall(1.0, 0.0))


def problems():
    """Every kind of problem, 7 x 3 (a trace-norm ball needs a label matrix)."""
    for loss, penalty, dense, matrix in itertools.product(
            names.LOSSES, PENALTIES, (True, False), (False, True)):
        if isinstance(penalty, TraceBall) and not matrix:
            continue
        b = np.column_stack([B0, -B0]) if matrix else B0
        yield Problem(A0 if dense else sp.csr_matrix(A0), b, loss, penalty=penalty,
                      name=f"{loss}-{penalty.tag()}-{'dense' if dense else 'csr'}"
                      f"-{'matrix' if matrix else 'vector'}")


PROBLEMS = list(problems())


def variants(spec):
    """The defaults, then each option value other than the default, one at a time."""
    defaults = spec.parse_options()
    return [{}] + [{key: value} for key, values in spec.choices().items() for value in values
                   if value != getattr(defaults, key)]


def builds(spec, problem, options):
    try:
        spec.make_kernel(problem, options)
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("name", list(SOLVERS))
def test_the_declaration_is_what_the_factory_accepts(name):
    spec = SOLVERS[name]
    disagree = [(p.name, o, spec.refusal(p, o)) for p in PROBLEMS for o in variants(spec)
                if spec.supports(p, o) != builds(spec, p, o)]
    assert disagree == []


@pytest.mark.parametrize("name", list(SOLVERS))
def test_every_declared_capability_is_used(name):
    """No declared penalty, loss, layout or label matrix that no problem here exercises (at
    some setting of the options); l2 = 0 refused at every setting exactly when declared."""
    spec = SOLVERS[name]
    taken = [p for p in PROBLEMS if any(spec.supports(p, o) for o in variants(spec))]
    assert {penalty_kind(p) for p in taken} == spec.penalties
    assert {p.loss for p in taken} == spec.losses
    assert {p.dense for p in taken} == {x for x, ok in ((True, spec.dense),
                                                        (False, spec.sparse)) if ok}
    assert {penalty_kind(p) for p in taken if p.matrix} == spec.label_matrix
    mu0 = [p for p in PROBLEMS if p.l2 == 0 and penalty_kind(p) in spec.penalties]
    if mu0:  # l2 = 0: pure l1, a ball without its l2 term
        assert any(p in taken for p in mu0) != spec.needs_strong_convexity


def test_refusals_say_why():
    p = Problem(A0, B0, "logistic", penalty=L1Ball(1.0, 0.0))
    assert SOLVERS["primal_rcd"].refusal(p) == "primal_rcd solves l2, elastic_net, not l1_ball"
    assert "needs l2 > 0" in SOLVERS["acc_pg"].refusal(p)
    assert SOLVERS["acc_pg"].refusal(p, {"momentum": "fista"}) is None
    assert "step=open_loop" in SOLVERS["fw"].refusal(p)
    assert SOLVERS["pdbfw"].refusal(p).startswith("pdbfw takes the losses squared, smooth_hinge")
    assert not accepts(p, "fw", {"step": "bogus"}) and not accepts(p, "no_such_solver")


def test_accepts_and_applicable_read_the_declaration(monkeypatch):
    """Nothing is built: with every factory broken the answers stay."""
    from pdsparse.solvers import SolverSpec

    def broken(*args, **kwargs):
        raise AssertionError("accepts built a kernel")

    monkeypatch.setattr(SolverSpec, "make_kernel", broken)
    p = Problem(A0, B0, "logistic", penalty=L1Ball(1.0, 0.1))
    assert applicable(p) == {"acc_pg": {}, "fw": {"step": "open_loop"}, "svrg": {}, "scgs": {},
                             "storc": {}}
    assert accepts(p, "fw", {"step": "open_loop"}) and not accepts(p, "sfw")


def test_the_tuning_grids_are_the_registry():
    assert TUNE_GRID == {n: dict(s.tune) for n, s in SOLVERS.items() if s.tune}
    assert list(TUNE_GRID) == [n for n in SOLVERS if SOLVERS[n].tune]


def test_penalty_kinds_cover_the_library():
    assert PENALTY_KINDS == (*names.PENALTY_FAMILIES, "trace_ball")
    assert {penalty_kind(p) for p in PROBLEMS} == set(PENALTY_KINDS)


def test_the_light_copies_are_the_registry():
    """names.py (read by the command line without NumPy) holds what each solver solves as
    the registry declares it, and ``run --solver``'s help lists each under exactly those."""
    import argparse

    from pdsparse import cli

    assert names.SOLVER_PENALTIES == {
        name: tuple(k for k in PENALTY_KINDS if k in spec.penalties)
        for name, spec in SOLVERS.items()}
    assert names.METHODS == tuple(names.SOLVER_PENALTIES) == tuple(SOLVERS)
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices["run"]._actions if "--solver" in a.option_strings)
    groups = action.help.split("by what it solves: ")[1].split("; ")
    kinds = [("l2", "elastic_net"), ("l1_ball",), ("trace_ball",)]
    assert len(groups) == len(kinds)
    for group, penalties in zip(groups, kinds, strict=True):
        listed = group.rsplit(": ", 1)[1].split(", ")
        assert listed == [n for n, s in SOLVERS.items() if s.penalties & set(penalties)]
