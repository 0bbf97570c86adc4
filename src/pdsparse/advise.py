"""Primal or dual? The Face-Off recommendation for one LIBSVM file, as a tool.

Csiba & Richtárik ("Coordinate Descent Face-Off: Primal or Dual?", Sec. 8): "If a user is
willing to invest one pass over the data, we recommend to compare the quantities T_P and T_D
(or C_P and C_D) to figure out which approach has faster convergence according to the theory."

:func:`advise` does exactly that for a raw LIBSVM file (plain, ``.bz2`` or ``.gz``, no registry
entry needed): read it, normalize it (Sec. 7: by the average example norm), and evaluate
``C_P``, ``C_D`` (eq. 16) and the total complexities ``T_P``, ``T_D`` (eqs. 12-13) under uniform
sampling (Sec. 5.1) and importance sampling (eqs. 14-15) with :func:`pdsparse.stats.data_stats`
(the one home of that arithmetic). The verdict compares the best sampling of each side.
Optionally it then *races* primal RCD (Algorithm 1) and dual RCD (Algorithm 2, fixed step)
for a fixed kernel-time budget each with :func:`pdsparse.solvers.solve` and says whether the
prediction held. :func:`format_advice` renders the result as text, :meth:`Advice.to_dict` as
a JSON-ready dict.

The total complexities drop the ``log(1/epsilon)`` factor and the constants common to both
sides, so ``T_P/T_D`` predicts the *ratio* of the arithmetic needed for a given accuracy, not
running times; the race measures the latter on this machine.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from pdsparse.errors import ConfigError, DataError

__all__ = ["Advice", "RaceEntry", "advise", "format_advice"]

SIDES = (("primal", "primal_rcd", "P"), ("dual", "dual_rcd", "D"))
"""(side, solver method, letter of T_P / T_D)."""
RACE_TARGETS = (1e-3, 1e-6)
"""Relative duality gaps whose first hitting epoch/time the race reports."""
RACE_TOL = 1e-12
"""A race stops early once the relative gap is below this (it is then over for that side)."""
TOSS_UP = 1.1
"""A predicted speedup below this factor is called a toss-up in the verdict."""
_MAX_EVALS = 2000


@dataclass
class RaceEntry:
    """One side of the race: what :func:`pdsparse.solvers.solve` did within the time budget."""

    method: str
    sampling: str
    dual_step: str
    epochs: float
    """Passes over nnz(A) done."""
    kernel_s: float
    """Kernel time (the solver's ``time_s``; evaluations and setup excluded)."""
    setup_s: float
    rel_gap: float
    """Final relative duality gap ``(P(w) - D(alpha)) / |P(w)|``."""
    status: str
    reached: dict[str, dict | None]
    """For each target gap (``"1e-03"``, ``"1e-06"``): ``{"epoch", "time_s"}`` of the first
    evaluation at or below it, or None."""
    eval_every: float
    """Epochs between two evaluations (the resolution of ``reached``)."""
    trace_time: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    trace_epoch: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    trace_rel_gap: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    def rel_gap_at(self, when: float, axis: str = "time_s") -> float:
        """Relative gap of the last evaluation at or before ``when`` kernel seconds
        (``axis="time_s"``) or epochs (``axis="epoch"``)."""
        grid = self.trace_time if axis == "time_s" else self.trace_epoch
        idx = int(np.searchsorted(grid, when, side="right")) - 1
        return float(self.trace_rel_gap[max(idx, 0)])

    def to_dict(self) -> dict:
        out = asdict(self)
        del out["trace_time"], out["trace_epoch"], out["trace_rel_gap"]
        return out


@dataclass
class Advice:
    """Result of :func:`advise`: settings, statistics, prediction and (optionally) the race."""

    path: str
    settings: dict
    """normalization, loss, beta (and where it came from), l2 (and its spec), seed, ..."""
    stats: dict
    """:func:`pdsparse.stats.data_stats` of the normalized matrix (n, d, nnz, density, frob2,
    C_P, C_D, C_P_over_C_D, T_{P,D}_{uniform,importance}, T_P_over_T_D)."""
    labels: dict
    """``n_classes`` and, when few, the label values found."""
    sampling: dict[str, str]
    """Best sampling of each side: ``{"primal": ..., "dual": ...}`` (smaller T; ties go to
    uniform, which then is the same distribution at a lower cost per draw)."""
    T_P: float
    T_D: float
    ratio: float
    """``T_P / T_D`` with each side's best sampling."""
    winner: str
    """``"primal_rcd"`` or ``"dual_rcd"``: the side with the smaller T."""
    speedup: float
    """``max(T_P, T_D) / min(T_P, T_D)``: predicted factor fewer operations."""
    verdict: str
    race: dict | None = None
    """``seconds``, ``primal``/``dual`` (:class:`RaceEntry` dicts), ``winner``, ``held``,
    ``reason`` (judged in kernel time), ``epochs`` (``winner``, ``held``, ``reason`` judged in
    passes over the data, the unit T_P and T_D count); None without a race."""
    seconds: dict = field(default_factory=dict)
    """Wall time of the steps (read, stats, race)."""
    warnings: list = field(default_factory=list)
    """What the reader should know before trusting the answer (a one-class file, ...)."""

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


def _best_sampling(uniform: float, importance: float) -> str:
    # importance sampling is optimal (Theorem 2); equal T means it *is* the uniform distribution
    return "uniform" if uniform <= importance * (1 + 1e-12) else "importance"


def _verdict(ratio: float, winner: str, speedup: float, sampling: dict[str, str]) -> str:
    side = "primal RCD" if winner == "primal_rcd" else "dual RCD"
    if sampling["primal"] == sampling["dual"]:
        how = f"{sampling['primal']} sampling"
    else:
        how = f"primal with {sampling['primal']}, dual with {sampling['dual']} sampling"
    text = (
        f"verdict: {side}, predicted {speedup:.3g}x fewer operations (T_P/T_D = {ratio:.3g}, {how})"
    )
    if speedup < TOSS_UP:
        text += f"; under {TOSS_UP:g}x, practically a toss-up"
    return text


def _race_side(problem, method: str, sampling: str, seconds: float, seed: int) -> RaceEntry:
    from pdsparse.solvers import solve

    dual_step = "fixed" if method == "dual_rcd" else "none"
    kw = dict(sampling=sampling, seed=seed)
    if method == "dual_rcd":
        kw["dual_step"] = "fixed"
    # one calibration epoch sets the evaluation spacing (every epoch, as the paper's plots, but
    # at most ~2000 evaluations on tiny data; an evaluation costs about one epoch, so never
    # more often) and an epoch cap far beyond what the time budget allows: the budget binds
    calib = solve(problem, method, max_epochs=1.0, eval_every=1.0, **kw)
    per_epoch = max(float(calib.trace["time_s"].iloc[-1]), 1e-9)
    expected = seconds / per_epoch
    eval_every = max(1.0, expected / _MAX_EVALS)
    max_epochs = max(100.0, 50.0 * expected)
    res = solve(
        problem, method, max_epochs=max_epochs, max_seconds=seconds, tol=RACE_TOL,
        eval_every=eval_every, **kw,
    )  # fmt: skip
    tr = res.trace
    primal = tr["primal"].to_numpy(float)
    gap = tr["gap"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(np.isfinite(primal), gap / np.abs(primal), np.inf)
    rel = np.where(np.isnan(rel), np.inf, rel)
    epochs, times = tr["epoch"].to_numpy(float), tr["time_s"].to_numpy(float)
    reached: dict[str, dict | None] = {}
    for target in RACE_TARGETS:
        hit = np.flatnonzero(rel <= target)
        reached[f"{target:.0e}"] = (
            {"epoch": float(epochs[hit[0]]), "time_s": float(times[hit[0]])} if hit.size else None
        )
    return RaceEntry(
        method=method,
        sampling=sampling,
        dual_step=dual_step,
        epochs=float(epochs[-1]),
        kernel_s=float(times[-1]),
        setup_s=float(res.setup_s),
        rel_gap=float(rel[-1]),
        status=str(tr["status"].iloc[-1]),
        reached=reached,
        eval_every=float(eval_every),
        trace_time=times,
        trace_epoch=epochs,
        trace_rel_gap=rel,
    )


def _judge(entries: dict[str, RaceEntry], predicted: str, axis: str = "time_s") -> dict:
    """Who won the race: first to the smallest target gap, else lower gap at equal budget.

    ``axis`` is ``"time_s"`` (kernel seconds: the race proper) or ``"epoch"`` (passes over
    nnz(A), which is what T_P and T_D count).
    """
    names = {"primal_rcd": "primal RCD", "dual_rcd": "dual RCD"}
    unit = " s of kernel CPU time" if axis == "time_s" else " epochs"
    p, d = entries["primal_rcd"], entries["dual_rcd"]
    key = f"{RACE_TARGETS[-1]:.0e}"
    hp, hd = p.reached[key], d.reached[key]
    if hp and hd:
        winner = "primal_rcd" if hp[axis] <= hd[axis] else "dual_rcd"
        reason = (
            f"{names[winner]} reached relative gap {key} first "
            f"(primal {hp[axis]:.3g}, dual {hd[axis]:.3g}{unit})"
        )
    elif hp or hd:
        winner = "primal_rcd" if hp else "dual_rcd"
        other = "dual_rcd" if hp else "primal_rcd"
        reason = (
            f"only {names[winner]} reached relative gap {key} "
            f"({(hp or hd)[axis]:.3g}{unit}; {names[other]} ended at "
            f"{entries[other].rel_gap:.3g})"
        )
    else:
        t = min(p.kernel_s, d.kernel_s) if axis == "time_s" else min(p.epochs, d.epochs)
        gp, gd = p.rel_gap_at(t, axis), d.rel_gap_at(t, axis)
        winner = "primal_rcd" if gp <= gd else "dual_rcd"
        reason = (
            f"neither reached {key}; at {t:.3g}{unit} the relative gap is "
            f"{gp:.3g} (primal) vs {gd:.3g} (dual)"
        )
    return {"winner": winner, "held": winner == predicted, "reason": reason}


def advise(
    path: str | os.PathLike,
    normalization: str = "avg_example_norm",
    loss: str = "logistic",
    l2: float | str = "1/n",
    beta: float | None = None,
    race_seconds: float | None = None,
    positive_class: float | int | str | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Advice:
    """Predict whether primal or dual RCD needs fewer operations on a LIBSVM file.

    Reads ``path`` (:func:`pdsparse.data.libsvm.read_libsvm`), normalizes it
    (:func:`pdsparse.data.normalize.normalize`) and computes, with
    :func:`pdsparse.stats.data_stats`, Face-Off's ``C_P``, ``C_D`` (eq. 16) and the total
    complexities ``T_P = K_P W_P`` (eq. 12) and ``T_D = K_D W_D`` (eq. 13) for uniform
    sampling (Sec. 5.1) and for importance sampling (eqs. 14-15, optimal by Theorem 2). The
    verdict compares the best sampling of each side: the smaller of ``T_P``, ``T_D`` wins
    (Sec. 8's recommendation).

    Parameters
    ----------
    path : str or PathLike
        LIBSVM text file, plain, ``.bz2`` or ``.gz``.
    normalization : {"avg_example_norm", "unit_rows", "none"}
        Preprocessing before the statistics (Sec. 7 divides by the average example norm).
    loss : str
        A loss of :data:`pdsparse.losses.LOSSES`; its smoothness is ``beta`` by default.
    l2 : float or "c/n"
        The paper's ``lambda`` (default ``1/n``, as in its experiments).
    beta : float, optional
        Smoothness in eqs. (12)-(15); default: the loss's own (logistic 1/4). Only the
        prediction uses it; a race runs the loss as it is.
    race_seconds : float, optional
        If given, also run primal RCD and dual RCD (fixed step), each with its better
        sampling, for this much kernel time each (:func:`pdsparse.solvers.solve`, ``tol``
        :data:`RACE_TOL`) and judge the prediction: the winner is the first to relative
        duality gap 1e-6, else the one with the lower gap at equal kernel time.
    positive_class : optional
        One-vs-rest label for multiclass files (needed by a race with a +-1 loss).
    seed : int
        Seed of the race's coordinate sampling.
    progress : callable, optional
        Called with one line before each long step (reading, statistics, the race): the
        command line prints them on stderr (``--quiet`` silences them).

    Returns
    -------
    Advice

    Raises
    ------
    DataError
        Missing, empty or unparseable file (the message names the file and line), a
        processed ``.npz`` given instead of LIBSVM text, or non-binary labels for a race
        without ``positive_class``.
    ConfigError
        Unknown normalization or loss, bad ``l2``/``beta``/``race_seconds``.
    """
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize
    from pdsparse.data.store import file_kind
    from pdsparse.losses import get_loss
    from pdsparse.problem import resolve_l2
    from pdsparse.stats import data_stats

    path = Path(path)
    info = get_loss(loss)
    if beta is None:
        beta, beta_source = float(info.smoothness), f"smoothness of the {loss} loss"
    else:
        beta, beta_source = float(beta), "given"
    if race_seconds is not None and not (math.isfinite(race_seconds) and race_seconds > 0):
        raise ConfigError(f"race time must be a positive number of seconds, got {race_seconds!r}")
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
        f"{seconds['read']:.1f} s; statistics (C_P, C_D, T_P, T_D)")
    A, norm_info = normalize(A_raw, normalization)
    del A_raw
    n = int(A.shape[0])
    l2_value = resolve_l2(l2, n)
    st = data_stats(A, l2_value, beta)
    seconds["stats"] = time.perf_counter() - t0

    sampling = {
        side: _best_sampling(st[f"T_{k}_uniform"], st[f"T_{k}_importance"]) for side, _, k in SIDES
    }
    T_P = float(st[f"T_P_{sampling['primal']}"])
    T_D = float(st[f"T_D_{sampling['dual']}"])
    ratio = T_P / T_D if T_D > 0 else math.nan
    winner = "primal_rcd" if T_P <= T_D else "dual_rcd"
    speedup = max(T_P, T_D) / min(T_P, T_D) if min(T_P, T_D) > 0 else math.nan

    classes, labels = _label_summary(y)
    warnings = []
    if classes.size < 2:
        warnings.append(f"the file has one class only (label {_shown_labels(classes)}): a "
                        "classifier on it is trivial, and neither the prediction nor a race "
                        "says anything about data with two classes")
    b = y
    if race_seconds is not None or positive_class is not None:
        if positive_class is None and info.binary_labels and classes.size > 2:
            raise DataError(
                f"{path}: the race needs binary labels for the {loss} loss, but the file has "
                f"{classes.size} classes ({_shown_labels(classes)}); choose the positive class "
                "with --positive-class LABEL (one-vs-rest)"
            )
        if positive_class is not None or info.binary_labels:
            b = binarize_labels(y, positive_class)

    settings = {
        "normalization": normalization,
        "normalization_info": norm_info,
        "loss": loss,
        "beta": beta,
        "beta_source": beta_source,
        "l2": l2_value,
        "l2_spec": str(l2),
        "positive_class": None if positive_class is None else str(positive_class),
        "seed": int(seed),
    }
    adv = Advice(
        path=str(path),
        settings=settings,
        stats=st,
        labels=labels,
        sampling=sampling,
        T_P=T_P,
        T_D=T_D,
        ratio=ratio,
        winner=winner,
        speedup=speedup,
        verdict=_verdict(ratio, winner, speedup, sampling),
        seconds=seconds,
        warnings=warnings,
    )
    if race_seconds is None:
        return adv
    say(f"race: primal RCD and dual RCD, {float(race_seconds):g} CPU s each")

    from pdsparse.problem import Problem

    t0 = time.perf_counter()
    problem = Problem(A, b, loss=loss, l2=l2_value, name=path.name)
    entries = {
        method: _race_side(problem, method, sampling[side], float(race_seconds), seed)
        for side, method, _ in SIDES
    }
    in_epochs = _judge(entries, winner, "epoch")
    adv.race = {
        "seconds": float(race_seconds),
        "tol": RACE_TOL,
        "primal": entries["primal_rcd"].to_dict(),
        "dual": entries["dual_rcd"].to_dict(),
        **_judge(entries, winner, "time_s"),
        "epochs": in_epochs,
    }
    seconds["race"] = time.perf_counter() - t0
    return adv


# ---------------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------------


def _g(x: float, digits: int = 4) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def _reached(entry: dict, key: str) -> str:
    hit = entry["reached"].get(key)
    if not hit:
        return "-"
    return f"ep {hit['epoch']:.4g}, {hit['time_s']:.3g} s"


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


def format_advice(adv: Advice) -> str:
    """The advice as a short human-readable report (table, verdict, race)."""
    st, s = adv.stats, adv.settings
    lines = [
        f"{adv.path}: n = {st['n']} examples, d = {st['d']} features, nnz = {st['nnz']}, "
        f"density = {_g(st['density'], 3)}",
        f"normalization {s['normalization']}, loss {s['loss']}, beta = {_g(s['beta'])}, "
        f"l2 = {s['l2_spec']} = {_g(s['l2'])}",
        _labels_line(adv),
        "",
        f"  {'':28}{'primal RCD':>12}{'dual RCD':>12}{'P/D':>9}",
        f"  {'C_P, C_D (eq. 16)':28}{_g(st['C_P']):>12}{_g(st['C_D']):>12}"
        f"{_g(st['C_P_over_C_D'], 3):>9}",
    ]
    for sampling, where in (("uniform", "Sec. 5.1"), ("importance", "eq. 15")):
        tp, td = st[f"T_P_{sampling}"], st[f"T_D_{sampling}"]
        label = f"T {sampling} ({where})"
        lines.append(f"  {label:28}{_g(tp):>12}{_g(td):>12}{_g(tp / td if td else math.nan, 3):>9}")
    lines += ["", adv.verdict]
    lines += [f"warning: {w}" for w in adv.warnings]
    race = adv.race
    if race is None:
        return "\n".join(lines)
    keys = [f"{t:.0e}" for t in RACE_TARGETS]
    lines += [
        "",
        f"race: {race['seconds']:g} s of kernel CPU time each (seed {s['seed']}, stop at relative "
        f"gap {race['tol']:g})",
        f"  {'':34}{'epochs':>8}{'CPU s':>10}{'rel gap':>10}"
        + "".join(f"{'gap ' + k + ' at':>22}" for k in keys),
    ]
    for side in ("primal", "dual"):
        e = race[side]
        step = ", fixed step" if e["method"] == "dual_rcd" else ""
        label = f"{side} RCD ({e['sampling']}{step})"
        lines.append(
            f"  {label:34}{e['epochs']:>8.4g}{e['kernel_s']:>10.3g}{_g(e['rel_gap'], 3):>10}"
            + "".join(f"{_reached(e, k):>22}" for k in keys)
        )
    coarse = [
        f"{race[x]['eval_every']:.3g} ({x})"
        for x in ("primal", "dual")
        if race[x]["eval_every"] > 1
    ]
    if coarse:
        lines.append(f"  (gap evaluated every {', '.join(coarse)} epochs)")
    held = "held" if race["held"] else "did NOT hold"
    lines.append(f"race: prediction {held}: {race['reason']}")
    ep = race["epochs"]
    held = "held" if ep["held"] else "did NOT hold"
    lines.append(f"  counted in passes over the data (as T is), it {held}: {ep['reason']}")
    return "\n".join(lines)
