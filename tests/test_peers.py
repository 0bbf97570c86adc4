"""The peers of ``advise --peers`` (:mod:`pdsparse.peers`): each minimizes the problem's own
objective (checked against a certified P*), and races beside the registered solvers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import make_data

from pdsparse.errors import ConfigError
from pdsparse.objective import evaluate, primal
from pdsparse.peers import PEERS, family, installed, race_peer, why_none
from pdsparse.penalties import ElasticNet, L1Ball
from pdsparse.problem import Problem
from pdsparse.race import race
from pdsparse.reference import reference_solution

FAMILIES = {"l2": ElasticNet(0.02), "l1": ElasticNet(0.0, 0.01),
            "elastic_net": ElasticNet(0.02, 0.01)}


def cases():
    for peer in PEERS:
        for loss in peer.losses:
            for kind in peer.families:
                for intercept in (False, True) if loss in peer.intercept else (False,):
                    tag = "-intercept" if intercept else ""
                    yield pytest.param(peer, loss, kind, intercept,
                                       id=f"{peer.name}-{loss}-{kind}{tag}")


@pytest.mark.parametrize(("peer", "loss", "kind", "intercept"), list(cases()))
def test_each_peer_minimizes_the_problems_objective(peer, loss, kind, intercept):
    """Each peer's fit reaches the certified optimum of the problem it is raced on, with
    an unpenalized intercept where it fits one (the labels shifted, so that the intercept
    matters)."""
    pytest.importorskip(peer.module)
    A, b = make_data(n=60, d=20, loss=loss)
    if intercept:
        b = b + 1.5 if loss == "squared" else np.where(np.arange(60) % 4 == 0, -1.0, 1.0) * b
    problem = Problem(A, b, loss, FAMILIES[kind], intercept=intercept)
    assert family(problem) == kind and peer.accepts(problem)
    p_star = reference_solution(problem, rtol=1e-12).p_star
    w = peer.fit(problem, 1e-12)
    assert w.shape == problem.var_shape
    assert primal(problem, w) - p_star <= 1e-7 * abs(p_star), peer.name
    if intercept:
        assert abs(w[-1]) > 1e-3  # an intercept the data asks for


def test_the_peers_that_penalize_or_lack_an_intercept_are_not_raced_with_one():
    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["l1"], intercept=True)
    names = {p.name for p in PEERS if p.accepts(problem)}
    assert "sklearn liblinear" not in names and "celer" not in names  # penalized / none
    assert {"sklearn saga", "skglm ProxNewton", "skglm AndersonCD"} <= names


def test_a_peer_is_certified_by_the_house_gap():
    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["l2"])
    peer = next(p for p in PEERS if p.name == "sklearn liblinear")
    got = race_peer(peer, problem, seconds=10.0, tol=1e-8)
    assert got["reached"] and got["rel_gap"] <= 1e-8 and got["status"] == "converged"
    loose = float(got["options"]["tol"])
    w = peer.fit(problem, loose)
    p_val, _, gap = evaluate(problem, w)
    assert gap / abs(p_val) <= 1e-8  # the same fit, certified again
    # a tighter target than any tolerance reaches within a tiny budget: not reached
    got = race_peer(peer, problem, seconds=1e-9, tol=1e-300)
    assert not got["reached"] and got["cpu_s"] > 0 and got["status"] == "max_time"


def test_a_peer_fit_past_the_budget_is_not_reached():
    """A fit that certifies the target only after more than the race's budget is not
    reached, as a registered solver cut by its budget is not (before: reached, and ranked
    by its time)."""
    import time

    from pdsparse.peers import Peer

    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["l2"])
    w_star = reference_solution(problem, rtol=1e-12).w

    def slow_exact(problem, tol):
        t0 = time.process_time()
        while time.process_time() - t0 < 0.05:  # 50 ms of CPU, then the optimum
            pass
        return w_star.copy()

    slow = Peer("slow exact", "numpy", ("logistic",), ("l2",), slow_exact)
    assert race_peer(slow, problem, seconds=1.0, tol=1e-8)["reached"]
    got = race_peer(slow, problem, seconds=0.01, tol=1e-8)
    assert not got["reached"] and got["status"] == "max_time" and got["cpu_s"] >= 0.05


def test_a_peers_first_call_is_not_timed():
    """A peer that compiles at its first call (skglm and celer: numba) is warmed up before
    its timed fits (before: its first fit, compile included, was its time: skglm's
    ProxNewton 1.5 CPU s on colon-cancer against 5 ms)."""
    import time

    from pdsparse.peers import Peer

    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["l2"])
    w_star = reference_solution(problem, rtol=1e-12).w
    calls = []

    def compiles_first(problem, tol):
        calls.append(tol)
        t0 = time.process_time()
        while len(calls) == 1 and time.process_time() - t0 < 0.2:  # the first call: 0.2 s
            pass
        return w_star.copy()

    got = race_peer(Peer("jit", "numpy", ("logistic",), ("l2",), compiles_first), problem,
                    seconds=0.1, tol=1e-8)
    assert got["reached"] and got["cpu_s"] < 0.1 and len(calls) == 2


def test_no_peer_fits_a_ball_or_a_label_matrix():
    A, b = make_data(n=30, d=10, loss="squared")
    assert installed(Problem(A, b, "squared", L1Ball(1.0))) == []
    B = np.stack([np.sign(b) + (b == 0), -np.sign(b) - (b == 0)], axis=1)
    assert installed(Problem(A, B, "logistic", ElasticNet(0.1))) == []


def test_race_ranks_peers_beside_the_registered_solvers():
    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["elastic_net"])
    result = race(problem, 0.5, tol=1e-6, peers=True)
    peers = [e for e in result.entries if e.peer]
    assert {e.method for e in peers} == {p.name for p in installed(problem)}
    assert any(not e.peer for e in result.entries)
    for e in peers:
        assert e.label.endswith("[peer]")
        assert not e.reached or (e.rel_gap <= 1e-6 and math.isfinite(e.cpu_s))
    # the ranking is one: reached first, by CPU time
    reached = [e.cpu_s for e in result.entries if e.reached]
    assert reached == sorted(reached)


def test_advise_races_peers_only_with_a_race():
    from pdsparse.advise import advise, format_advice

    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["l1"], name="mine")
    with pytest.raises(ConfigError, match="race_seconds"):
        advise(problem, peers=True)
    adv = advise(problem, race_seconds=0.3, peers=True)
    assert any(e["peer"] for e in adv.race["entries"])
    assert "[peer]" in format_advice(adv)


def test_no_peer_is_raced_on_a_weighted_problem():
    """The peers are fitted without sample weights: on a weighted problem none is raced,
    and the race says why (before: a peer solved the unweighted problem)."""
    A, b = make_data(n=60, d=20)
    problem = Problem(A, b, "logistic", FAMILIES["l1"], sample_weight=np.linspace(0.5, 2, 60))
    assert family(problem) is None and installed(problem) == []
    assert why_none(problem) == "sample weights (the peers here are fitted without them)"
    said = []
    result = race(problem, 0.5, methods={"prox_newton": {}}, peers=True, progress=said.append)
    assert [e.method for e in result.entries] == ["prox_newton"]
    assert f"race: no peer raced: {why_none(problem)}" in said
    plain = Problem(A, b, "logistic", FAMILIES["l1"])
    assert family(plain) == "l1" and why_none(plain) is None  # scikit-learn's are installed


def test_a_peer_raced_with_an_intercept_is_certified_on_it():
    """With an intercept the peers that fit one unpenalized are raced and certified on the
    problem with it (before: the race crashed, the peer's w one entry short of the
    certificate's)."""
    A, b = make_data(n=60, d=20)
    b = np.where(np.arange(60) % 4 == 0, -1.0, 1.0) * b
    problem = Problem(A, b, "logistic", FAMILIES["l2"], intercept=True)
    result = race(problem, 10.0, tol=1e-8, methods={"prox_newton": {}}, peers=True)
    peers = {e.method: e for e in result.entries if e.peer}
    assert {"sklearn saga", "sklearn lbfgs"} <= set(peers)
    assert "sklearn liblinear" not in peers  # it penalizes its intercept
    for entry in peers.values():
        assert entry.reached and entry.rel_gap <= 1e-8, entry
