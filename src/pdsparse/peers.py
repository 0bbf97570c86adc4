"""The solvers a practitioner could install instead, fitted on a :class:`~pdsparse.problem.Problem`
and judged by the house's certificate: ``pdsparse advise FILE --race S --peers``.

Each peer minimizes the problem's own objective, mapped onto its conventions (the rows and
labels as the problem holds them; an unpenalized intercept where the problem has one and the
peer fits one unpenalized: not LIBLINEAR, which penalizes it, nor celer's logistic
regression; no sample weights):

* scikit-learn's ``LogisticRegression``: ``liblinear`` (l2, pure l1), ``saga`` (l2, l1, elastic
  net) and ``lbfgs`` (l2), at ``C = 1 / (n alpha)`` (``alpha`` the penalty's strength, the
  elastic net's mix as ``l1_ratio``; checked in tests/test_peers_mapping.py); its
  ``Lasso`` / ``ElasticNet`` (coordinate descent) for the squared loss with an l1 term;
* skglm's ``GeneralizedLinearEstimator`` with ``Logistic`` or ``Quadratic`` and ``L1`` or
  ``L1_plus_L2``, solved by ``ProxNewton`` (logistic) and ``AndersonCD``;
* celer's ``LogisticRegression`` and ``Lasso`` (pure l1).

A peer is raced as a user would tune it: its stopping tolerance tried from 1e-2 down by
decades until the fit's coefficients are certified to the race's relative gap (the house's
duality gap at w, :func:`pdsparse.objective.evaluate`), for at most the race's CPU budget
in all; its time is the CPU time of the one fit that got there (the cheapest setting, found
with hindsight: a favour to the peer, which the race states). Peers that are not installed
are left out (``pip install -e '.[bench]'`` installs skglm and celer).
"""

from __future__ import annotations

import importlib.util
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pdsparse.penalties import ElasticNet
from pdsparse.problem import Problem

__all__ = ["PEERS", "Peer", "family", "installed", "race_peer", "strength", "why_none"]

TOLS = tuple(10.0 ** -k for k in range(2, 15))
"""The stopping tolerances a peer is tried at, loosest first."""


def family(problem: Problem) -> str | None:
    """``"l2"``, ``"l1"`` (pure l1), ``"elastic_net"``, or None (a ball, a label matrix,
    sample weights: no peer here fits it, each is fitted without them)."""
    pen = problem.penalty
    if problem.matrix or not isinstance(pen, ElasticNet) or problem.weights is not None:
        return None
    if pen.l1 == 0:
        return "l2"
    return "l1" if pen.l2 == 0 else "elastic_net"


@dataclass(frozen=True)
class Peer:
    """One installable solver: which module, losses and penalty families, the losses with
    which it fits an unpenalized intercept, and its fit (problem, tol) -> w (the intercept
    last, as the problem's variable holds it)."""

    name: str
    module: str
    losses: tuple[str, ...]
    families: tuple[str, ...]
    fit: Callable[[Problem, float], np.ndarray]
    intercept: tuple[str, ...] = ("logistic", "squared")

    def accepts(self, problem: Problem) -> bool:
        return (problem.loss in self.losses and family(problem) in self.families
                and (not problem.intercept or problem.loss in self.intercept))


def strength(problem: Problem) -> tuple[float, float]:
    """(alpha, l1_ratio) of the problem's elastic net (``ElasticNet.alpha_ratio``)."""
    return problem.penalty.alpha_ratio


def _coef(model, problem: Problem) -> np.ndarray:
    """The fitted model's coefficients, its intercept appended where the problem has one."""
    coef = np.asarray(model.coef_, dtype=np.float64).ravel()
    if problem.intercept:
        return np.append(coef, float(np.ravel(model.intercept_)[0]))
    return coef.copy()


def _mix(ratio: float) -> dict:
    """LogisticRegression's penalty: ``l1_ratio`` alone from scikit-learn 1.8 (``penalty`` is
    deprecated there), ``penalty`` (and ``l1_ratio`` for the elastic net) before."""
    import sklearn

    if tuple(int(x) for x in sklearn.__version__.split(".")[:2]) >= (1, 8):
        return {"l1_ratio": ratio}
    if ratio in (0.0, 1.0):
        return {"penalty": "l2" if ratio == 0.0 else "l1"}
    return {"penalty": "elasticnet", "l1_ratio": ratio}


def _logreg(solver: str) -> Callable[[Problem, float], np.ndarray]:
    def fit(problem: Problem, tol: float) -> np.ndarray:
        from sklearn.linear_model import LogisticRegression

        alpha, ratio = strength(problem)
        return _coef(LogisticRegression(**_mix(ratio), C=1.0 / (problem.n * alpha), solver=solver,
                                        tol=tol, max_iter=10**5,
                                        fit_intercept=problem.intercept, random_state=0)
                     .fit(problem.mat, problem.b), problem)
    return fit


def _sklearn_cd(problem: Problem, tol: float) -> np.ndarray:
    from sklearn.linear_model import ElasticNet as SkElasticNet

    alpha, ratio = strength(problem)
    return _coef(SkElasticNet(alpha=alpha, l1_ratio=ratio, tol=tol, max_iter=10**5,
                              fit_intercept=problem.intercept).fit(problem.mat, problem.b),
                 problem)


def _skglm(solver: str) -> Callable[[Problem, float], np.ndarray]:
    def fit(problem: Problem, tol: float) -> np.ndarray:
        from skglm import GeneralizedLinearEstimator, datafits, penalties, solvers

        alpha, ratio = strength(problem)
        datafit = datafits.Logistic() if problem.loss == "logistic" else datafits.Quadratic()
        penalty = penalties.L1(alpha) if ratio == 1 else penalties.L1_plus_L2(alpha, ratio)
        inner = getattr(solvers, solver)(tol=tol, max_iter=1000,
                                         fit_intercept=problem.intercept)
        return _coef(GeneralizedLinearEstimator(datafit, penalty, inner)
                     .fit(problem.mat, problem.b), problem)
    return fit


def _celer(problem: Problem, tol: float) -> np.ndarray:
    import celer

    l1 = problem.penalty.l1
    if problem.loss == "logistic":
        model = celer.LogisticRegression(C=1.0 / (problem.n * l1), tol=tol, max_iter=1000,
                                         fit_intercept=False)  # celer 0.7: no intercept here
    else:
        model = celer.Lasso(alpha=l1, tol=tol, max_iter=1000, fit_intercept=problem.intercept)
    return _coef(model.fit(problem.mat, problem.b), problem)


PEERS: tuple[Peer, ...] = (
    # LIBLINEAR penalizes its intercept (a constant feature): not this problem's
    Peer("sklearn liblinear", "sklearn", ("logistic",), ("l2", "l1"), _logreg("liblinear"),
         intercept=()),
    Peer("sklearn saga", "sklearn", ("logistic",), ("l2", "l1", "elastic_net"), _logreg("saga")),
    Peer("sklearn lbfgs", "sklearn", ("logistic",), ("l2",), _logreg("lbfgs")),
    Peer("sklearn cd", "sklearn", ("squared",), ("l1", "elastic_net"), _sklearn_cd),
    Peer("skglm ProxNewton", "skglm", ("logistic",), ("l1", "elastic_net"),
         _skglm("ProxNewton")),
    Peer("skglm AndersonCD", "skglm", ("logistic", "squared"), ("l1", "elastic_net"),
         _skglm("AndersonCD")),
    Peer("celer", "celer", ("logistic", "squared"), ("l1",), _celer, intercept=("squared",)),
)
"""Every peer this module knows, installed or not."""


def installed(problem: Problem) -> list[Peer]:
    """The peers that are installed and fit ``problem``."""
    return [p for p in PEERS if p.accepts(problem) and importlib.util.find_spec(p.module)]


def why_none(problem: Problem) -> str | None:
    """Why no peer is raced on ``problem``; None when an installed one fits it."""
    if installed(problem):
        return None
    if problem.weights is not None:
        return "sample weights (the peers here are fitted without them)"
    if family(problem) is None:
        return "no peer here fits a norm ball or a label matrix"
    intercept = " with an intercept" if problem.intercept else ""
    return (f"none installed for the {problem.loss} loss and this penalty{intercept} "
            "(pip install -e '.[bench]' installs skglm and celer)")


def race_peer(peer: Peer, problem: Problem, seconds: float, tol: float) -> dict:
    """``peer`` on ``problem``: the loosest of :data:`TOLS` whose fit is certified to relative
    gap ``tol`` within ``seconds`` CPU s (the budget a registered solver gets); tighter
    tolerances are tried until the fits have spent ``seconds`` in all (a fit in progress is not
    cut: one that certifies the gap only after more than ``seconds`` counts as not reached,
    as a registered solver cut by its budget does). Returns ``reached``, ``cpu_s`` (that fit's
    CPU time; else the CPU time spent), ``rel_gap`` (at the last fit), ``status`` and
    ``options`` (``{"tol": ...}`` of the fit that reached). A first fit at the loosest
    tolerance, untimed, warms the peer up: skglm and celer compile their kernels (numba)
    at their first call, which cost skglm's ProxNewton 1.5 CPU s on colon-cancer, 300
    times its fit (a registered solver's kernels are compiled before the race too)."""
    from pdsparse.objective import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            peer.fit(problem, TOLS[0])
        except (ValueError, ArithmeticError, RuntimeError):
            pass  # the timed fits below report it
    spent, rel_gap, status = 0.0, math.inf, "max_time"
    for peer_tol in TOLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings at loose tolerances
            t0 = time.process_time()
            try:
                w = peer.fit(problem, peer_tol)
            except (ValueError, ArithmeticError, RuntimeError) as exc:
                return {"reached": False, "cpu_s": spent, "rel_gap": rel_gap,
                        "status": "error", "options": {}, "error": f"{type(exc).__name__}: {exc}"}
            cpu = time.process_time() - t0
        spent += cpu
        p_val, _, gap = evaluate(problem, w)
        rel_gap = gap / abs(p_val) if p_val != 0 and math.isfinite(gap) else math.inf
        if rel_gap <= tol and cpu <= seconds:
            return {"reached": True, "cpu_s": cpu, "rel_gap": rel_gap, "status": "converged",
                    "options": {"tol": f"{peer_tol:.0e}"}}
        if spent >= seconds:
            break
    else:
        status = "stalled"  # its tightest tolerance did not certify the target
    return {"reached": False, "cpu_s": spent, "rel_gap": rel_gap, "status": status,
            "options": {}}
