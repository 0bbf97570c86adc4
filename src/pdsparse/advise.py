"""Which solver on my data? The advice for one LIBSVM file, as a tool.

Csiba & Richtárik ("Coordinate Descent Face-Off: Primal or Dual?", Sec. 8): "If a user is
willing to invest one pass over the data, we recommend to compare the quantities T_P and T_D
(or C_P and C_D) to figure out which approach has faster convergence according to the theory."

:func:`advise` does that and more for a raw LIBSVM file (plain, ``.bz2`` or ``.gz``, no
registry entry needed) and one of three penalty families
(:data:`pdsparse.solvers.predict.FAMILIES`):
l2 (Face-Off), elastic net (l1 + l2, DGPD) or an l1 ball (PDBFW). It reads the file,
normalizes it (Sec. 7: by the average example norm), and reports

* the data statistics the solvers' theory reads (:func:`pdsparse.solvers.predict.problem_stats`):
  Face-Off's ``C_P``, ``C_D`` (eq. 16) and total complexities ``T_P``, ``T_D`` (eqs. 12-15,
  uniform and importance sampling, computed by :func:`pdsparse.stats.data_stats`), the
  smoothness and condition numbers of gradient methods, the expected sparsity of x* and y*;
* Face-Off's own verdict (the side with the smaller T: fewer *operations*) for l2 and the
  elastic net;
* the solvers that apply (:func:`pdsparse.solvers.predict.applicable`) and the predicted fastest in
  CPU time with its reason in one line (:func:`pdsparse.solvers.predict.predict`, the rule
  ``solve(problem, "auto")`` uses);
* optionally a race (:func:`pdsparse.race.race`): every applicable solver for a bounded CPU
  time from the same start to the same certified relative gap, ranked by CPU time with
  setup, with the prediction and Face-Off's verdict judged against it.

:func:`format_advice` renders the result as text, :meth:`Advice.to_dict` as a JSON-ready
dict.
"""

from __future__ import annotations

import inspect
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pdsparse.errors import ConfigError, DataError
from pdsparse.names import DEFAULT_TOL, PURE_L1

if TYPE_CHECKING:
    from pdsparse.penalties import Penalty
    from pdsparse.problem import Problem

__all__ = ["Advice", "advise", "format_advice"]

SIDES = (("primal", "primal_rcd", "P"), ("dual", "dual_rcd", "D"))
"""(side, solver method, letter of T_P / T_D)."""
TOSS_UP = 1.1
"""A predicted speedup below this factor is called a toss-up in the verdict."""


@dataclass
class Advice:
    """Result of :func:`advise`: settings, statistics, prediction and (optionally) the race."""

    path: str
    settings: dict
    """normalization, loss, penalty, beta (and where it came from), l2, l1, radius (and
    their specs), seed, ..."""
    stats: dict
    """:func:`pdsparse.solvers.predict.problem_stats` (for a multiclass file without a positive
    class, :func:`pdsparse.stats.data_stats` alone): n, d, nnz, density, C_P, C_D,
    T_{P,D}_{uniform,importance}, L, L_max, mu, kappa, kappa_max, lambda_max, x_nnz, y_nnz
    (with their ``_source``)."""
    labels: dict
    """``n_classes`` and, when few, the label values found."""
    family: str = "l2"
    prediction: dict = field(default_factory=dict)
    """``method``, ``options``, ``reason`` (one line), ``costs`` (:class:`~pdsparse.solvers.predict.
    Prediction`)."""
    applicable: dict = field(default_factory=dict)
    """Solver name -> the options it needs on this problem ({} = its defaults)."""
    faceoff: dict | None = None
    """Face-Off's verdict (Sec. 8), an answer in *operations*, not CPU time; None for the l1
    ball. ``sampling``: the best sampling of each side, ``{"primal": ..., "dual": ...}``
    (smaller T; ties go to uniform, the same distribution at a lower cost per draw); ``T_P``,
    ``T_D`` at those samplings and their ``ratio`` T_P / T_D; ``fewer_ops``: the side with
    the smaller T (``"primal_rcd"`` or ``"dual_rcd"``); ``speedup_ops``: max(T) / min(T), the
    predicted factor fewer operations; ``verdict``: the same in one line. The answer in CPU
    time is ``prediction["method"]``, the measured one ``race["winner"]``."""
    race: dict | None = None
    """``seconds``, ``tol``, ``tune``, ``entries`` (ranked :class:`~pdsparse.race.RaceEntry`
    dicts) and :func:`pdsparse.race.judge`'s ``winner``, ``ratio``, ``bound``, ``held``,
    ``within``, ``reason``; ``faceoff`` (primal vs dual RCD in CPU time: ``winner``,
    ``held``, ``reason``) for l2 and the elastic net; ``no_peer``, with peers asked for:
    why none was raced (:func:`pdsparse.peers.why_none`), else None; None without a race."""
    seconds: dict = field(default_factory=dict)
    """Wall time of the steps (read, stats, race)."""
    warnings: list = field(default_factory=list)
    """What the reader should know before trusting the answer (a one-class file, ...)."""
    estimator: dict | None = None
    """How to fit the problem advised with :mod:`pdsparse.estimators` (:func:`_estimator`):
    ``class``, ``params``, ``scale`` (the file's X divided by it, or None), ``unit_rows``,
    ``y`` and ``code``, one line; None for a multiclass file without a positive class and
    for a Problem given (its owner has it)."""

    def to_dict(self) -> dict:
        """A JSON-ready dict (non-finite numbers become None)."""
        return _json_ready(asdict(self))


def _json_ready(obj):
    if isinstance(obj, dict):
        return {str(k): _json_ready(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_ready(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _label_summary(y: np.ndarray) -> tuple[np.ndarray, dict]:
    from pdsparse.data.libsvm import label_counts

    classes = np.unique(y)
    info: dict = {"n_classes": int(classes.size)}
    if classes.size <= 25:
        info["counts"] = label_counts(y)
    return classes, info


def _shown_labels(classes: np.ndarray) -> str:
    def fmt(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else repr(float(v))

    shown = ", ".join(fmt(c) for c in classes[:25])
    return shown + (" ..." if classes.size > 25 else "")


def _verdict(ratio: float, winner: str, speedup: float, sampling: dict[str, str]) -> str:
    side = "primal RCD" if winner == "primal_rcd" else "dual RCD"
    if sampling["primal"] == sampling["dual"]:
        how = f"{sampling['primal']} sampling"
    else:
        how = f"primal with {sampling['primal']}, dual with {sampling['dual']} sampling"
    text = f"{side}, predicted {speedup:.3g}x fewer operations (T_P/T_D = {ratio:.3g}, {how})"
    if speedup < TOSS_UP:
        text += f"; under {TOSS_UP:g}x, practically a toss-up"
    return text


def _faceoff(stats: dict) -> dict:
    """Face-Off's verdict (Sec. 8) from the statistics: each side at its better sampling,
    the smaller T wins."""
    from pdsparse.solvers.predict import best_sampling

    sampling = {side: best_sampling(stats[f"T_{k}_uniform"], stats[f"T_{k}_importance"])
                for side, _, k in SIDES}
    T_P = float(stats[f"T_P_{sampling['primal']}"])
    T_D = float(stats[f"T_D_{sampling['dual']}"])
    ratio = T_P / T_D if T_D > 0 else math.nan
    fewer = "primal_rcd" if T_P <= T_D else "dual_rcd"
    speedup = max(T_P, T_D) / min(T_P, T_D) if min(T_P, T_D) > 0 else math.nan
    return dict(sampling=sampling, T_P=T_P, T_D=T_D, ratio=ratio, fewer_ops=fewer,
                speedup_ops=speedup, verdict=_verdict(ratio, fewer, speedup, sampling))


def _faceoff_in_race(result, fewer_ops: str) -> dict:
    """Primal vs dual RCD in the race (CPU time with setup to tol, else the lower gap):
    ``winner`` the faster of the two, ``held`` whether it is Face-Off's ``fewer_ops``."""
    from pdsparse.race import rank_key

    p, d = result.best.get("primal_rcd"), result.best.get("dual_rcd")
    if p is None or d is None:
        return {"winner": None, "held": False, "reason": "primal or dual RCD did not race"}
    win, lose = (p, d) if rank_key(p) <= rank_key(d) else (d, p)
    if win.reached and lose.reached:
        reason = (f"{win.label} reached the gap in {win.cpu_s:.3g} CPU s, "
                  f"{lose.label} in {lose.cpu_s:.3g} s")
    elif win.reached:
        reason = f"only {win.label} reached the gap ({win.cpu_s:.3g} CPU s)"
    else:
        reason = f"neither reached the gap; {win.label} ended lower ({win.rel_gap:.3g})"
    return {"winner": win.method, "held": win.method == fewer_ops, "reason": reason}


def _l1_fraction(l1) -> float | None:
    """F of a relative ``l1 = "Fx"`` (F times lambda_max, e.g. ``"0.1x"`` = lambda_max / 10),
    None for an absolute setting (a number or ``"c/n"``)."""
    if not isinstance(l1, str) or not l1.strip().endswith("x"):
        return None
    try:
        fraction = float(l1.strip()[:-1])
    except ValueError:
        fraction = math.nan
    if not (math.isfinite(fraction) and fraction > 0):
        raise ConfigError(f"a relative l1 is 'Fx' with a number F > 0 (F times lambda_max, "
                          f"e.g. '0.1x'), got {l1!r}")
    return fraction


def _trivial_l1(l1: float, lam_max: float) -> str:
    """The warning for an elastic net whose l1 makes x* = 0."""
    return (f"l1 = {_g(l1)} >= lambda_max = {_g(lam_max)}: x* = 0 (the KKT conditions hold at "
            "0), a trivial problem; the prediction and a race say nothing about a useful l1. "
            "Give a smaller one, e.g. --l1 0.1x (lambda_max / 10)")


def _pure_l1(penalty: str, l2, l1) -> tuple[str, float | str]:
    """(family, l2) of ``advise``'s ``penalty`` and ``l2``: ``"l1"`` is the elastic net with
    l2 = 0 (an l2 given other than 0 is an error); l2 not given is ``1/n`` otherwise."""
    from pdsparse.problem import resolve_l2

    if penalty != PURE_L1:
        return penalty, "1/n" if l2 is None else l2
    if l2 is not None and resolve_l2(l2, 1) != 0:
        raise ConfigError(f"penalty l1 is pure l1 (l2 = 0), got --l2 {l2}; for l1 + l2 give "
                          "--penalty elastic_net --l2 VALUE --l1 VALUE")
    if l1 is None:
        raise ConfigError("penalty l1 needs --l1 > 0 (the weight of ||w||_1; a number, 'c/n' "
                          "or 'Fx' = F lambda_max, e.g. --l1 0.1x)")
    return "elastic_net", 0.0


def _penalty(family: str, l2: float, l1, radius):
    """The penalty of ``family`` (:data:`pdsparse.solvers.predict.FAMILIES`), with clear errors for
    a missing or misplaced l1 / radius."""
    from pdsparse.penalties import ElasticNet, L1Ball
    from pdsparse.solvers.predict import FAMILIES

    if family not in FAMILIES:
        raise ConfigError(f"unknown penalty {family!r}; choose one of {list(FAMILIES)}")
    if family == "l2":
        if l1 is not None or radius is not None:
            raise ConfigError("penalty l2 takes no l1 or radius; for l1 + l2 give "
                              "--penalty elastic_net --l1 VALUE, for a ball --penalty l1_ball "
                              "--radius VALUE")
        if not l2 > 0:
            raise ConfigError("penalty l2 needs --l2 > 0 (l2 = 0 leaves no regularization; "
                              "pure l1 is --penalty l1 --l1 VALUE)")
        return ElasticNet(l2)
    if family == "elastic_net":
        if radius is not None:
            raise ConfigError("penalty elastic_net takes no radius (that is --penalty l1_ball)")
        if l1 is None or not l1 > 0:
            raise ConfigError("penalty elastic_net needs --l1 > 0 (the weight of ||w||_1; a "
                              "number, 'c/n' or 'Fx' = F lambda_max), got " + repr(l1))
        return ElasticNet(l2, l1)
    if l1 is not None:
        raise ConfigError("penalty l1_ball takes no l1 (the ball's radius replaces it)")
    if radius is None or not (radius > 0 and math.isfinite(radius)):
        raise ConfigError("penalty l1_ball needs --radius > 0 (the ball ||w||_1 <= radius), "
                          "got " + repr(radius))
    return L1Ball(radius, l2)


def advise(
    path: str | os.PathLike | Problem,
    normalization: str = "avg_example_norm",
    loss: str = "logistic",
    l2: float | str | None = None,
    beta: float | None = None,
    race_seconds: float | None = None,
    positive_class: float | int | str | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    penalty: str = "l2",
    l1: float | str | None = None,
    radius: float | None = None,
    tol: float = DEFAULT_TOL,
    tune: bool = False,
    peers: bool = False,
    intercept: bool = False,
) -> Advice:
    """Statistics, Face-Off's verdict, the predicted fastest solver and an optional race,
    for one LIBSVM file and one penalty family (module docstring).

    Reads ``path`` (:func:`pdsparse.data.libsvm.read_libsvm`), normalizes it
    (:func:`pdsparse.data.normalize.normalize`) and computes, with
    :func:`pdsparse.stats.data_stats`, Face-Off's ``C_P``, ``C_D`` (eq. 16) and the total
    complexities ``T_P = K_P W_P`` (eq. 12) and ``T_D = K_D W_D`` (eq. 13) for uniform
    sampling (Sec. 5.1) and for importance sampling (eqs. 14-15, optimal by Theorem 2), and
    the rest of :func:`pdsparse.solvers.predict.problem_stats`. Face-Off's verdict compares the best
    sampling of each side (Sec. 8's recommendation: fewer operations); the prediction
    (:func:`pdsparse.solvers.predict.predict`) names the solver expected to need the least CPU time.

    Parameters
    ----------
    path : str, PathLike or Problem
        LIBSVM text file, plain, ``.bz2`` or ``.gz``; or a :class:`pdsparse.problem.Problem`
        with a label vector (e.g. ``Problem.from_libsvm``, ``Problem.from_spec``), advised as
        it is: its data (no normalization), loss and penalty (an elastic net, l2 alone when
        its l1 is 0, or an l1 ball). The settings that describe a file (normalization, loss,
        l2, penalty, l1, radius, positive_class) are then left at their defaults.
    normalization : {"avg_example_norm", "unit_rows", "none"}
        Preprocessing before the statistics (Sec. 7 divides by the average example norm).
    loss : str
        A loss of :data:`pdsparse.losses.LOSSES`; its smoothness is ``beta`` by default.
    l2 : float or "c/n", optional
        The l2 weight (Face-Off's ``lambda``, DGPD's and PDBFW's ``mu``; default ``1/n``, and
        0 with ``penalty="l1"``).
    beta : float, optional
        Smoothness in eqs. (12)-(15); default: the loss's own (logistic 1/4). Only Face-Off's
        statistics and verdict use it; the prediction and a race use the loss as it is.
    race_seconds : float, optional
        If given, also race every applicable solver (:func:`pdsparse.race.race`) for at most
        this much kernel CPU time each, to relative duality gap ``tol``, and judge the
        prediction.
    positive_class : optional
        One-vs-rest label for multiclass files (needed by anything but Face-Off's statistics
        with a +-1 loss).
    seed : int
        Seed of the race's random draws.
    progress : callable, optional
        Called with one line before each long step (reading, statistics, each race run): the
        command line prints them on stderr (``--quiet`` silences them).
    penalty : {"l2", "l1", "elastic_net", "l1_ball"}
        The penalty family: ``l2/2 ||w||^2``; ``+ l1 ||w||_1`` (``elastic_net``, ``l1`` > 0
        needed); or the ball ``||w||_1 <= radius`` with ``l2/2 ||w||^2`` (``radius``
        needed). ``"l1"`` is pure l1, ``l1 ||w||_1`` alone: the elastic net with l2 = 0 (an
        l2 other than 0 is an error), advised as that family.
    l1 : float, "c/n" or "Fx", optional
        The l1 weight of the elastic net: a number, ``c/n``, or ``"Fx"``, a fraction F of
        lambda_max = ||grad f(0)||_inf (:func:`pdsparse.solvers.predict.lambda_max`, on the
        normalized data), the smallest l1 at which x* = 0: ``"0.1x"`` is lambda_max / 10. An l1 >=
        lambda_max is solved but warned about (x* = 0: a trivial problem).
    radius : float, optional
        The radius of the l1 ball.
    tol : float
        The race's certified relative duality gap (default 1e-6).
    tune : bool
        Race each solver at every setting of its grid (:data:`pdsparse.race.TUNE_GRID`),
        represented by its fastest.
    peers : bool
        Also race the installed solvers one could use instead (:mod:`pdsparse.peers`:
        scikit-learn, skglm, celer) to the same certified gap; the race says when one wins.
    intercept : bool
        Advise the problem with an unpenalized intercept c, P(w, c) = 1/n sum phi_i(a_i^T w
        + c) + g(w) (:class:`pdsparse.problem.Problem`'s ``intercept``): the solvers that
        take it, the prediction for it, lambda_max at the best intercept. Face-Off's verdict
        (its analysis has no intercept) is not given then; its statistics are.

    Returns
    -------
    Advice

    Raises
    ------
    DataError
        Missing, empty or unparseable file (the message names the file and line), a
        processed ``.npz`` given instead of LIBSVM text, or non-binary labels without
        ``positive_class`` where the labels are needed (a race, a penalty other than l2, an
        intercept).
    ConfigError
        Unknown normalization, loss or penalty, a missing or misplaced l1 / radius, bad
        ``l2``/``beta``/``race_seconds``/``tol``.
    """
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize
    from pdsparse.data.store import file_kind
    from pdsparse.losses import get_loss
    from pdsparse.penalties import ElasticNet
    from pdsparse.problem import Problem, resolve_l2
    from pdsparse.solvers.predict import applicable, lambda_max, predict, predict_rcd, problem_stats
    from pdsparse.stats import data_stats

    if peers and race_seconds is None:
        raise ConfigError("peers are raced: give race_seconds (--race SECONDS) with peers")
    if race_seconds is not None and not (math.isfinite(race_seconds) and race_seconds > 0):
        raise ConfigError(f"race time must be a positive number of seconds, got {race_seconds!r}")
    if not (math.isfinite(tol) and tol > 0):
        raise ConfigError(f"race tolerance must be a positive number, got {tol!r}")
    if isinstance(path, Problem):
        return _advise_problem(path, beta=beta, race_seconds=race_seconds, seed=seed,
                               progress=progress, tol=tol, tune=tune, peers=peers,
                               given=locals())
    path = Path(path)
    info = get_loss(loss)
    if beta is None:
        beta, beta_source = float(info.smoothness), f"smoothness of the {loss} loss"
    else:
        beta, beta_source = float(beta), "given"
    penalty, l2 = _pure_l1(penalty, l2, l1)
    fraction = _l1_fraction(l1)
    _penalty(penalty, 1.0, None if l1 is None else 1.0, radius)  # settings first, data later
    if path.is_file() and file_kind(path) == "npz":
        raise DataError(
            f"{path}: this is a .npz (a processed pdsparse data set?), not LIBSVM text; "
            f"for a processed data set use 'pdsparse stats --data {path}'"
        )
    say = progress or (lambda line: None)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    say(f"reading {path}")
    A_raw, y = read_libsvm(path)
    seconds["read"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    say(f"read {A_raw.shape[0]} x {A_raw.shape[1]}, {A_raw.nnz} nonzeros in "
        f"{seconds['read']:.1f} s; statistics")
    A, norm_info = normalize(A_raw, normalization)
    del A_raw
    n = int(A.shape[0])
    l2_value = resolve_l2(l2, n)
    l1_value = None if l1 is None or fraction is not None else resolve_l2(l1, n)

    classes, labels = _label_summary(y)
    warnings = []
    if classes.size < 2 and info.binary_labels:
        warnings.append(_one_class_warning(classes[0]))
    b = y
    need_labels = race_seconds is not None or penalty != "l2" or intercept
    if positive_class is None and info.binary_labels and classes.size > 2:
        if need_labels:
            why = ("the race" if race_seconds is not None else f"penalty {penalty}"
                   if penalty != "l2" else "an intercept")
            raise DataError(
                f"{path}: {why} needs binary labels for the {loss} loss, but the file has "
                f"{classes.size} classes ({_shown_labels(classes)}); choose the positive class "
                "with --positive-class LABEL (one-vs-rest)"
            )
        b = None  # Face-Off's statistics and the RCD prediction read A alone
    elif positive_class is not None or info.binary_labels:
        b = binarize_labels(y, positive_class)

    settings = {
        "normalization": normalization,
        "normalization_info": norm_info,
        "loss": loss,
        "penalty": penalty,
        "beta": beta,
        "beta_source": beta_source,
        "l2": l2_value,
        "l2_spec": str(l2),
        "l1": l1_value,
        "l1_spec": None if l1 is None else str(l1),
        "radius": None if radius is None else float(radius),
        "positive_class": None if positive_class is None else str(positive_class),
        "intercept": bool(intercept),
        "seed": int(seed),
        "tol": float(tol),
    }
    problem = None
    if fraction is not None and b is not None:
        # lambda_max reads the loss's gradient at 0 alone: any penalty will do here
        problem = Problem(A, b, loss=loss, penalty=ElasticNet(1.0), name=path.name,
                          intercept=intercept)
        l1_value = fraction * lambda_max(problem)
        settings["l1"] = l1_value
    pen = _penalty(penalty, l2_value, l1_value, radius)
    if b is None:
        st = data_stats(A, l2_value, beta)
        pred = predict_rcd(st, loss, penalty)
        found = {"primal_rcd": {}, "dual_rcd": {}}
    else:
        problem = (Problem(A, b, loss=loss, penalty=pen, name=path.name, intercept=intercept)
                   if problem is None else problem.with_penalty(pen))
        st = problem_stats(problem, beta=beta)
        if penalty == "elastic_net" and l1_value >= st["lambda_max"]:
            warnings.append(_trivial_l1(l1_value, st["lambda_max"]))
        pred = predict(problem, st, tol=tol)
        found = applicable(problem)
    seconds["stats"] = time.perf_counter() - t0
    adv = Advice(path=str(path), settings=settings, stats=st, labels=labels, family=penalty,
                 prediction=asdict(pred), applicable=found, seconds=seconds,
                 warnings=warnings)
    if b is not None:
        adv.estimator = _estimator(adv, pen)
    return _conclude(adv, problem, race_seconds, tol, tune, seed, say, peers)


def _estimator(adv: Advice, penalty: Penalty) -> dict:
    """The :mod:`pdsparse.estimators` call that fits the problem a file was advised on: the
    estimators' objective is the mean loss plus alpha R(w) (docs/library.md), ``penalty``'s
    parameters :func:`pdsparse.estimators.penalty_params`; ``fit_intercept`` as advised
    (the estimators' kernel intercept is unpenalized, as the problem's); ``solver="auto"``,
    the default, runs the prediction on the same data; X scaled as advise scaled it, y as
    read (a one-vs-rest class: ``y == CLASS``; targets +-1 for the squared loss)."""
    from pdsparse.estimators import penalty_params

    s = adv.settings
    params = penalty_params(penalty)
    regressor = s["loss"] == "squared"
    if not regressor and s["loss"] != "logistic":
        params = {"loss": s["loss"], **params}
    params["fit_intercept"] = bool(s["intercept"])
    if s["tol"] != DEFAULT_TOL:
        params["tol"] = float(s["tol"])
    info = s["normalization_info"] or {}
    scale = float(info["scale"]) if s["normalization"] == "avg_example_norm" else None
    unit_rows = s["normalization"] == "unit_rows"
    X = (f"X / {scale:.10g}" if scale is not None
         else "sklearn.preprocessing.normalize(X)" if unit_rows else "X")
    pos = s["positive_class"]
    # one-vs-rest: the class is +1, the rest -1 (a classifier's classes_ [False, True] are)
    y = ("y" if pos is None else f"np.where(y == {pos}, 1.0, -1.0)" if regressor
         else f"y == {pos}")
    cls = "LinearRegressor" if regressor else "LinearClassifier"
    args = ", ".join(f"{k}={v!r}" if isinstance(v, str | bool) else f"{k}={v:.10g}"
                     for k, v in params.items())
    return {"class": cls, "params": params, "scale": scale, "unit_rows": unit_rows, "y": y,
            "code": f"{cls}({args}).fit({X}, {y})"}


FILE_SETTINGS = ("normalization", "loss", "l2", "penalty", "l1", "radius", "positive_class",
                 "intercept")
"""The settings of :func:`advise` that describe a file (a Problem brings its own)."""


def _advise_problem(problem: Problem, beta, race_seconds, seed, progress, tol, tune, peers,
                    given: dict) -> Advice:
    """:func:`advise` for a :class:`~pdsparse.problem.Problem` as it is."""
    from pdsparse.losses import get_loss
    from pdsparse.penalties import ElasticNet, L1Ball
    from pdsparse.solvers.predict import FAMILIES, applicable, predict, problem_stats

    defaults = inspect.signature(advise).parameters
    changed = [k for k in FILE_SETTINGS if given[k] != defaults[k].default]
    if changed:
        raise ConfigError(f"advise: a Problem brings its own data, loss and penalty; "
                          f"{', '.join(changed)} describe a file (leave them out)")
    if problem.matrix:
        raise ConfigError(f"advise: problem {problem.name!r} has a label matrix (k = "
                          f"{problem.k}); advise one column, problem.column(c)")
    pen = problem.penalty
    if isinstance(pen, ElasticNet):
        family = "elastic_net" if pen.l1 > 0 else "l2"
    elif isinstance(pen, L1Ball):
        family = "l1_ball"
    else:
        raise ConfigError(f"advise covers the penalty families {list(FAMILIES)}; problem "
                          f"{problem.name!r} has {pen!r}")
    info = get_loss(problem.loss)
    beta, beta_source = ((float(info.smoothness), f"smoothness of the {problem.loss} loss")
                         if beta is None else (float(beta), "given"))
    say = progress or (lambda line: None)
    t0 = time.perf_counter()
    say(f"statistics of {problem!r}")
    classes, labels = _label_summary(problem.b)
    warnings = []
    if classes.size < 2 and info.binary_labels:
        warnings.append(_one_class_warning(classes[0]))
    settings = {
        "normalization": "as given", "normalization_info": None, "loss": problem.loss,
        "penalty": family, "beta": beta, "beta_source": beta_source,
        "l2": float(pen.l2), "l2_spec": repr(float(pen.l2)),
        "l1": float(pen.l1) if family == "elastic_net" else None,
        "l1_spec": repr(float(pen.l1)) if family == "elastic_net" else None,
        "radius": float(pen.radius) if family == "l1_ball" else None,
        "positive_class": None, "intercept": problem.intercept, "seed": int(seed),
        "tol": float(tol),
    }
    st = problem_stats(problem, beta=beta)
    if family == "elastic_net" and pen.l1 >= st["lambda_max"]:
        warnings.append(_trivial_l1(pen.l1, st["lambda_max"]))
    pred = predict(problem, st, tol=tol)
    adv = Advice(path=problem.name or "(problem)", settings=settings, stats=st, labels=labels,
                 family=family, prediction=asdict(pred), applicable=applicable(problem),
                 seconds={"stats": time.perf_counter() - t0}, warnings=warnings)
    return _conclude(adv, problem, race_seconds, tol, tune, seed, say, peers)


def _one_class_warning(label) -> str:
    from pdsparse.problem import one_class_message

    return (one_class_message(label) + "; neither the prediction nor a race says anything "
            "about data with two classes")


def _conclude(adv: Advice, problem, race_seconds, tol, tune, seed, say,
              peers: bool = False) -> Advice:
    """Face-Off's verdict and the optional race, the same for a file and a Problem."""
    # pure l1: no Face-Off (lambda = 0); an intercept: not in its analysis, nor in dual RCD
    if adv.family != "l1_ball" and "C_P" in adv.stats and not adv.settings["intercept"]:
        adv.faceoff = _faceoff(adv.stats)
    if race_seconds is None:
        return adv

    from pdsparse.race import judge, race

    found = adv.applicable
    say(f"race: {len(found)} solvers{' and their grids' if tune else ''}, at most "
        f"{float(race_seconds):g} CPU s each, to relative gap {tol:g}")
    t0 = time.perf_counter()
    result = race(problem, float(race_seconds), tol=tol, tune=tune, methods=found, seed=seed,
                  progress=say, peers=peers)
    adv.seconds["race"] = time.perf_counter() - t0
    adv.race = {"seconds": result.seconds, "tol": result.tol, "tune": result.tune,
                "entries": [e.to_dict() for e in result.entries],
                **judge(result, adv.prediction["method"])}
    if adv.faceoff is not None:
        adv.race["faceoff"] = _faceoff_in_race(result, adv.faceoff["fewer_ops"])
    if peers:
        from pdsparse.peers import why_none

        adv.race["no_peer"] = why_none(problem)
    return adv


# ---------------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------------


def _g(x: float, digits: int = 4) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def _labels_line(adv: Advice) -> str:
    lab, pos = adv.labels, adv.settings["positive_class"]
    counts = lab.get("counts")
    text = f"labels: {lab['n_classes']} classes"
    if counts and len(counts) <= 4:
        text += " (" + ", ".join(f"{k}: {v}" for k, v in counts.items()) + ")"
    if pos is not None:
        text += f"; positive class {pos} (one-vs-rest)"
    elif lab["n_classes"] > 2:
        text += "; a race needs --positive-class LABEL"
    return text


def _penalty_line(adv: Advice) -> str:
    s = adv.settings
    text = f"l2 = {s['l2_spec']} = {_g(s['l2'])}"
    if adv.family == "elastic_net":
        spec = s["l1_spec"]
        if _l1_fraction(spec) is not None:
            spec += f" = {spec[:-1].strip()} lambda_max"
        text = (f"penalty l1 (pure: l2 = 0), l1 = {spec} = {_g(s['l1'])}" if s["l2"] == 0
                else f"penalty elastic net: {text}, l1 = {spec} = {_g(s['l1'])}")
    elif adv.family == "l1_ball":
        text = f"penalty l1 ball: radius {_g(s['radius'])}, {text}"
    return text + (", an unpenalized intercept" if s.get("intercept") else "")


def _stats_lines(adv: Advice) -> list[str]:
    st = adv.stats
    lines = []
    if adv.faceoff is not None:
        lines += [
            f"  {'':28}{'primal RCD':>12}{'dual RCD':>12}{'P/D':>9}",
            f"  {'C_P, C_D (eq. 16)':28}{_g(st['C_P']):>12}{_g(st['C_D']):>12}"
            f"{_g(st['C_P_over_C_D'], 3):>9}",
        ]
        for sampling, where in (("uniform", "Sec. 5.1"), ("importance", "eq. 15")):
            tp, td = st[f"T_P_{sampling}"], st[f"T_D_{sampling}"]
            label = f"T {sampling} ({where})"
            lines.append(f"  {label:28}{_g(tp):>12}{_g(td):>12}"
                         f"{_g(tp / td if td else math.nan, 3):>9}")
    if "L" in st:
        lines.append(f"  gradient methods: L = {_g(st['L'], 3)}, L_max = {_g(st['L_max'], 3)}, "
                     f"mu = {_g(st['mu'], 3)}, kappa = L/mu = {_g(st['kappa'], 3)}, "
                     f"kappa_max = {_g(st['kappa_max'], 3)}")
    if "lambda_max" in st and adv.family != "l1_ball":
        at = "(0, c*)" if adv.settings.get("intercept") else "(0)"  # c*: the best intercept
        lines.append(f"  lambda_max = ||grad f{at}||_inf = {_g(st['lambda_max'], 3)}: x* = 0 "
                     "for every l1 >= it (--l1 0.1x is a tenth of it)")
    if "x_nnz" in st:
        def nz(key: str, of: int) -> str:
            v = st[key]
            return ("unknown" if v is None else f"{v} of {of}") + f" ({st[key + '_source']})"

        lines.append(f"  expected nonzeros: x* {nz('x_nnz', st['d'])}; "
                     f"y* {nz('y_nnz', st['n'])}")
    return lines


def format_advice(adv: Advice) -> str:
    """The advice as a short human-readable report (statistics, verdict, prediction, race)."""
    st, s = adv.stats, adv.settings
    lines = [
        f"{adv.path}: n = {st['n']} examples, d = {st['d']} features, nnz = {st['nnz']}, "
        f"density = {_g(st['density'], 3)}",
        f"normalization {s['normalization']}, loss {s['loss']}, beta = {_g(s['beta'])}, "
        + _penalty_line(adv),
        _labels_line(adv),
        "",
        *_stats_lines(adv),
        "",
    ]
    if adv.faceoff is not None:
        lines.append(f"Face-Off's verdict (operations, Sec. 8): {adv.faceoff['verdict']}")
    opts = [f"{m} ({', '.join(f'{k}={v}' for k, v in o.items())})" if o else m
            for m, o in adv.applicable.items()]
    lines.append(f"solvers for this problem: {', '.join(opts)}")
    pred = adv.prediction
    lines.append(f"prediction: {pred['method']}: {pred['reason']}")
    if adv.estimator is not None:
        lines += ["as an estimator (pdsparse.estimators; X, y as read, X scaled as here; "
                  "solver 'auto' runs the prediction):", f"  {adv.estimator['code']}"]
    lines += [f"warning: {w}" for w in adv.warnings]
    race = adv.race
    if race is None:
        return "\n".join(lines)
    tuned = ", each at the best of its grid" if race["tune"] else ""
    lines += [
        "",
        f"race: at most {race['seconds']:g} s of kernel CPU time each{tuned}, to relative gap "
        f"{race['tol']:g}, ranked by CPU time with setup (seed {s['seed']})",
    ]
    width = max(36, *(len(e["label"]) + 2 for e in race["entries"]))
    lines.append(f"  {'':4}{'solver':{width}}{'CPU s':>10}{'setup s':>10}{'epochs':>10}"
                 f"{'rel gap':>10}  status")
    for i, e in enumerate(race["entries"], 1):
        lines.append(f"  {i:<4}{e['label']:{width}}{_g(e['cpu_s'], 3):>10}{_g(e['setup_s'], 2):>10}"
                     f"{_g(e['epochs'], 4):>10}{_g(e['rel_gap'], 3):>10}  {e['status']}")
    held = "held" if race["held"] else ("within 1.5x" if race["within"] else "did NOT hold")
    lines.append(f"race: prediction {held}: {race['reason']}")
    if race.get("winner_is_peer"):
        lines.append(f"  a peer won: {race['winner_label']} (installed here; not a pdsparse "
                     "solver; its time is its fit at the loosest tolerance that certified "
                     "the gap)")
    if race.get("no_peer"):
        lines.append(f"  no peer raced: {race['no_peer']}")
    if any(e.get("peer") for e in race["entries"]):
        lines.append("  [peer]: a solver one could install instead (pdsparse.peers), timed "
                     "at its cheapest certified tolerance")
    fo = race.get("faceoff")
    if fo and fo["winner"] is not None:
        held = "held" if fo["held"] else "did NOT hold"
        lines.append(f"  Face-Off's verdict (operations) in CPU time {held}: {fo['reason']}")
    return "\n".join(lines)
