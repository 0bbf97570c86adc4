"""Which registered solver is fastest on a problem? The statistics the papers' theory uses,
and a prediction made from them (and, on the elastic net, from a few seeded passes).

Three families of problems have solvers here (:data:`FAMILIES`, :func:`family_of`): the
l2-regularized ERM of Face-Off, the elastic net (l1 + l2) of DGPD, and the l1 ball of PDBFW.
:func:`applicable` lists the registered solvers that accept a problem (as the registry
declares); :func:`problem_stats` computes what the theory of those solvers reads;
:func:`predict` names one solver with the reason in one line. ``solve(problem, "auto")`` and
``pdsparse advise`` both use :func:`predict`; ``pdsparse advise --race`` and
``benchmarks/advise_accuracy.py`` judge it against a race (:mod:`pdsparse.race`).

The rule (deterministic: the same problem gives the same answer on every machine)
---------------------------------------------------------------------------------
* **l2 and elastic net**: primal RCD (Face-Off Algorithm 1, proximal with l1) or dual RCD
  (Algorithm 2; Prox-SDCA with l1), whichever needs less *time*: the passes each needs to
  the tolerance times the CPU cost of one pass of each kernel, :data:`PASS_COST` (per
  nonzero and per coordinate: with the logistic loss a primal pass evaluates one ``exp`` per
  nonzero where a dual pass solves one 1-D problem per row). The passes come from
  :func:`probe_rates`: each side's first :data:`PROBE_PASSES` passes from 0 at its defaults,
  their measured rate extrapolated to the tolerance (seeded draws: deterministic).
  Face-Off's total complexities T_P and T_D (eqs. 12-15; ``pdsparse advise`` still prints
  their verdict) describe the paper's algorithms, not the defaults: dual RCD takes
  LIBLINEAR's exact step in a random order (3-7 passes to 1e-6 on the benchmark's real
  sets), and with l1 the primal is sparse and far better conditioned on its support than
  the l2 weight says (zipf-50k-x-1k, l1 = lambda_max / 10: 14 passes where T_P predicts
  2,900). The T rule (T x pass cost) predicted primal RCD on Face-Off's two worst cases for
  the dual, where the exact-step dual won by 2.4-2.7x and 45-46x (benchmarks/README.md).
* **pure l1** (the elastic net with l2 = 0): proximal Newton with working sets
  (``prox_newton``) where it applies (logistic and squared losses, sparse A), else primal
  RCD: the dual methods need l2 > 0, and prox_newton took 2-600x less CPU time than primal
  RCD to relative suboptimality 1e-6 on every one of the mirror's six binary sets at
  lambda_max / 10 and / 100 (benchmarks/README.md, ``sparse_vs_peers.py``). With l2 > 0 the
  two were within 1.5x of each other either way at l2 = 1/n, and the rule above stands.
  An unpenalized intercept: prox_newton too (coordinate descent zigzags against it).
* **a sparse elastic net with n >= d** (l1 >= lambda_max / :data:`NEWTON_L1_FRACTION`,
  sparse A, a loss prox_newton takes): prox_newton, without a probe: its working sets and
  Newton steps on the few features of the optimum beat both RCD sides there, and with its
  gap read from the gradient it is evaluated once (0.38-0.77x dual RCD on seven sets).
* DGPD, SPDC and
  DGPD's Algorithm 1 are never predicted: at their defaults they were behind importance
  dual RCD on every data set of the DGPD reproduction (docs/dgpd.md: 2.6-93x), and DGPD led
  only at settings outside its defaults.
* **l1 ball**: accelerated projected gradient (Acc PG) or SVRG, by the leading terms of
  their complexities in operations (:func:`predict_ball`): Acc PG's ``sqrt(kappa)`` full
  gradients against SVRG's ``1 + kappa_max / n`` snapshots, whose 2n stochastic steps each
  pay a dense O(d) step and projection: SVRG wins where d is tiny and kappa large (ijcnn1:
  d = 22), Acc PG elsewhere (the PDBFW reproduction found Acc PG ahead on every one of its
  data sets, docs/pdbfw.md). The Frank-Wolfe family (FW, SCGS, STORC, PDBFW) converges
  sublinearly in general and is not predicted.
* **trace-norm ball** (a label matrix): not predicted (:class:`~pdsparse.errors.ConfigError`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from pdsparse.errors import ConfigError
from pdsparse.names import DEFAULT_TOL, PENALTY_FAMILIES
from pdsparse.problem import Problem

__all__ = ["FAMILIES", "PASS_COST", "Prediction", "accepts", "applicable", "best_sampling",
           "family_of", "lambda_max", "options_for", "predict", "predict_ball", "predict_rcd",
           "probe_passes", "probe_rates", "problem_stats"]

FAMILIES = PENALTY_FAMILIES
"""The penalty families :func:`predict` covers (``pdsparse advise --penalty``)."""

PASS_COST = {
    ("primal_rcd", "logistic"): (2.52, 12.7),
    ("dual_rcd", "logistic"): (1.05, 81.1),
    ("prox_sdca", "logistic"): (1.51, 84.4),
    ("primal_rcd", "squared"): (1.37, 5.0),
    ("dual_rcd", "squared"): (1.0, 27.7),
    ("prox_sdca", "squared"): (1.31, 31.3),
    ("primal_rcd", "smooth_hinge"): (1.57, 5.3),
    ("dual_rcd", "smooth_hinge"): (0.83, 31.9),
    ("prox_sdca", "smooth_hinge"): (1.22, 33.6),
}
"""CPU time of one pass of each RCD kernel at its defaults: (ns per nonzero of A, ns per
coordinate drawn). A pass over nnz(A) costs ``a nnz + b m``, m the coordinates of a pass (d
for primal RCD, n for dual RCD and Prox-SDCA, dual RCD's kernel on the elastic net). A
primal step reads its column twice (the dot product with phi', then the update of the
margins) and, with the logistic loss, evaluates one ``exp`` per nonzero; a dual step reads
its row twice and solves the 1-D problem exactly (with the logistic loss two or three
Newton steps, each an ``exp``, early on; one near the optimum). Fitted by
``benchmarks/pass_cost.py`` (least squares in relative error) to the thread CPU time of the
first 8 passes from the start (what a solve runs; a pass near the optimum costs up to half as
much) on six generated calibration sets, dual RCD at its defaults (permutation, exact step);
only ratios between kernels enter the prediction. The fit, its machine and date:
benchmarks/README.md, "`pass_cost.py`"."""

NEWTON_L1_FRACTION = 10.0
"""The elastic net with n >= d: prox_newton without a probe where l1 >= lambda_max / this.
Against dual RCD named directly (CPU s to a certified 1e-6, median of 3, 2026-11-29,
benchmarks/README.md): 0.38-0.77x at lambda_max / 10 on all seven sets tried with n >= d
(cod-rna, ijcnn1, four Zipf bags of words from 20,000 x 200 to 100,000 x 100, and 5,000 x
5,000); at lambda_max / 12-14 0.64-1.09x, at lambda_max / 20 0.63-1.33x (3 of 5 faster), at
lambda_max / 100 0.52-1.85x (2 of 7); with d > n 1.9-2.3x at lambda_max / 10 (colon-cancer,
duke, a 500 x 20,000 bag of words): there the probe decides. On ``advise_accuracy.py``'s sets
it sent 14 problems to prox_newton, the race's winner on 9 (dual RCD stalled on one) and
1.08-1.33x behind on three, 1.6-3.3x on the three dense Gaussian sets whose x* keeps most
features: 3 misses beyond 1.5x where the probe alone had 5 (up to 40x)."""
PROBE_PASSES = 4
"""Passes of each RCD side from 0 whose measured rates predict the elastic net's times."""
PROBE_EVALUATIONS = (2, 4)
"""The passes after which the probe evaluates the gap: the rate's two points (the first pass
leaves the start's transient). An evaluation costs about two passes of dual RCD, so one
after pass 3 as well cost more than the pass it could save."""


def family_of(problem: Problem) -> str:
    """``"l2"``, ``"elastic_net"``, ``"l1_ball"`` or ``"trace_ball"``: the penalty's family
    (:func:`pdsparse.solvers.registry.penalty_kind`)."""
    from pdsparse.solvers.registry import penalty_kind

    return penalty_kind(problem)


def accepts(problem: Problem, method: str, options: dict | None = None) -> bool:
    """Whether solver ``method`` solves ``problem`` with ``options``: what its registry entry
    declares (:meth:`pdsparse.solvers.registry.SolverSpec.refusal`: penalty, loss, dense or
    sparse, label matrix, l2 > 0, the limits of option values), nothing set up.
    ``tests/test_registry_capabilities.py`` checks the declarations against building every
    kernel on small problems of every kind."""
    from pdsparse.solvers.registry import get_solver

    try:
        return get_solver(method).refusal(problem, options) is None
    except ConfigError:
        return False


def options_for(problem: Problem, method: str) -> dict[str, str] | None:
    """The options solver ``method`` needs to solve ``problem``: ``{}`` when its defaults do,
    else the first single option changed from its default that does (Frank-Wolfe's exact
    line search needs a quadratic loss: with the logistic loss FW takes
    ``step=open_loop``), as :func:`accepts` says; None when none does."""
    from pdsparse.solvers.registry import get_solver

    spec = get_solver(method)
    if accepts(problem, method, {}):
        return {}
    defaults = spec.parse_options()
    tries = ({key: value} for key, values in spec.choices().items() for value in values
             if value != getattr(defaults, key))
    return next((o for o in tries if accepts(problem, method, o)), None)


def applicable(problem: Problem) -> dict[str, dict[str, str]]:
    """The registered solvers that solve ``problem`` (registry order), each with
    :func:`options_for`."""
    from pdsparse.solvers.registry import SOLVERS

    found = {name: options_for(problem, name) for name in SOLVERS}
    return {name: options for name, options in found.items() if options is not None}


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


def _loss_gradient_at_zero(problem: Problem) -> np.ndarray:
    """grad of the averaged loss at zero coefficients: ``Problem.loss_gradient_at_zero``
    (computed once), or with an intercept ``objective.loss_gradient`` at the intercept's best
    value c for them."""
    if not (problem.intercept and problem.b.ndim == 1):
        return problem.loss_gradient_at_zero
    from pdsparse.objective import best_intercept, loss_gradient

    w = np.zeros(problem.var_shape)
    w[-1] = best_intercept(problem, np.zeros(problem.n), problem.b) or 0.0
    return loss_gradient(problem, w)


def lambda_max(problem: Problem) -> float:
    """``||grad f(0)||_inf``, f the averaged loss: the smallest l1 weight of the elastic net
    at which x* = 0 (the KKT conditions at 0: 0 is in grad f(0) + l1 d||.||_1(0) exactly when
    every |grad_j f(0)| <= l1; the l2 term's gradient vanishes at 0)."""
    grad0 = _loss_gradient_at_zero(problem)
    return float(np.abs(grad0).max()) if grad0.size else 0.0


def _faceoff_matrix(problem: Problem) -> sp.csr_matrix:
    """The CSR matrix Face-Off's statistics read: A, or with example weights s,
    diag(sqrt(s)) A with A's nonzero pattern kept (a zero weight leaves its row's entries
    stored: the kernels still pass over them, and the statistics count work in them)."""
    A = problem.mat if sp.issparse(problem.mat) else sp.csr_matrix(problem.mat)
    if problem.weights is None:
        return A
    A = sp.csr_matrix(A, copy=True)
    A.data *= np.repeat(np.sqrt(problem.weights), np.diff(A.indptr))
    return A


def problem_stats(problem: Problem, faceoff: bool = True, beta: float | None = None) -> dict:
    """The data statistics the theory of the applicable solvers uses (plain floats and ints).

    ``n``, ``d``, ``nnz``, ``density``; for the l2 and elastic-net families Face-Off's
    ``C_P``, ``C_D`` (eq. 16) and ``T_{P,D}_{uniform,importance}`` (eqs. 12-15) of
    :func:`pdsparse.stats.data_stats` (``faceoff=False`` skips them; ``beta`` replaces the
    loss's smoothness in them, as ``pdsparse advise --beta`` does); the constants of
    gradient methods: ``L`` = beta ||A||_2^2 / n + mu (a lower estimate: 10 power iterations,
    :func:`pdsparse.solvers.ball.power_norm_sq`), ``L_max`` = beta max_i ||a_i||^2 + mu (the
    smoothness of one example's loss, which SDCA and SVRG read), ``mu`` (the l2 weight),
    ``kappa`` = L / mu and ``kappa_max`` = L_max / mu (inf when mu = 0); and the expected
    sparsity of the solutions, each with where it comes from:

    With example weights s the loss s_i phi_i(a_i^T w) is phi_i's at the row sqrt(s_i) a_i:
    every constant above (Face-Off's column and row norms, ``L``, ``L_max``) is the unweighted
    one of diag(sqrt(s)) A, whose nonzero pattern (the work) is A's.

    * ``x_nnz`` (of d): l2 alone: d (no l1 term: x* is dense in general). Elastic net: 0
      exactly when l1 >= lambda_max = ||grad f(0)||_inf (the KKT conditions at 0); else the
      support of primal RCD's iterate after the probe's passes (:func:`probe_rates`, also
      stored as ``probe``: an estimate; the sequential strong rule from lambda_max,
      Tibshirani et al. 2012, keeps every feature once l1 < lambda_max / 2). l1 ball: no
      cheap bound: None.
    * ``y_nnz`` (of n): logistic loss: n (alpha*_i = -phi'(a_i^T w*) lies strictly inside
      (0, 1), never 0); squared loss: the number of nonzero residuals, n in general; smooth
      hinge: the examples with margin below 1 at w*, which no cheap bound gives: None.
    """
    from pdsparse.solvers.ball import power_norm_sq

    fam = family_of(problem)
    n, d = problem.shape
    mu = float(problem.l2)
    out: dict = {"family": fam, "n": int(n), "d": int(d), "nnz": int(problem.nnz),
                 "density": problem.nnz / (n * d), "loss": problem.loss,
                 "mu": mu, "l1": float(problem.l1), "radius": float(problem.radius)}
    if fam in ("l2", "elastic_net") and faceoff and mu > 0:  # Face-Off's T needs lambda > 0
        from pdsparse.stats import data_stats

        smooth = float(problem.smoothness) if beta is None else float(beta)
        out.update(data_stats(_faceoff_matrix(problem), mu, smooth))
    smooth = float(problem.smoothness)
    row_sq = problem.row_sqnorms if problem.weights is None else (
        problem.weights * problem.row_sqnorms)
    L = smooth * power_norm_sq(problem) / n + mu
    L_max = smooth * float(row_sq.max()) + mu
    out.update(L=L, L_max=L_max, kappa=L / mu if mu > 0 else math.inf,
               kappa_max=L_max / mu if mu > 0 else math.inf)
    lam_max = out["lambda_max"] = lambda_max(problem)
    if fam == "l2":
        out["x_nnz"], out["x_nnz_source"] = int(d), "no l1 term: dense in general"
        if faceoff:
            out["probe"] = probe_rates(problem)
    elif fam == "elastic_net":
        if float(problem.l1) >= lam_max:
            out["x_nnz"], out["x_nnz_source"] = 0, "l1 >= lambda_max: x* = 0 (KKT at 0)"
        else:
            probe = probe_rates(problem)
            out["probe"] = probe
            out["x_nnz"] = probe["primal_rcd"]["support"]
            out["x_nnz_source"] = f"support after {PROBE_PASSES} passes of primal RCD"
    else:
        out["x_nnz"], out["x_nnz_source"] = None, "no cheap bound on a ball"
    if problem.loss == "logistic":
        out["y_nnz"], out["y_nnz_source"] = int(n), "logistic: alpha* inside (0, 1)"
    elif problem.loss == "squared":
        out["y_nnz"], out["y_nnz_source"] = int(n), "squared: nonzero residuals, dense"
    else:
        out["y_nnz"], out["y_nnz_source"] = None, "margins at w* unknown before solving"
    return out


def probe_rates(problem: Problem, starts: dict | None = None, tol: float = 0.0) -> dict:
    """The first :data:`PROBE_PASSES` passes of dual RCD (Prox-SDCA with l1 > 0; where it
    takes the problem: not pure l1, nor weights with an l1 part) and then of primal RCD
    (proximal) from 0, the passes of :data:`PROBE_EVALUATIONS` followed by an evaluation of
    the relative duality gap (with ``tol`` > 0 the second where a solve's schedule puts it
    from the first, when that is sooner): per side ``rate`` (decades of relative gap per
    pass, the slope through those points: the first pass leaves the start's transient),
    ``rel_gap`` after the last pass, ``passes``, and for the primal side the ``support`` of w
    (an estimate of x*'s). A side whose gap reaches ``tol`` (> 0) ends the probe there: it
    is solved, and primal RCD is not probed after a solved dual (dual RCD reached 1e-6
    within 4 passes on the benchmark's elastic nets, l2 = 1/n). The draws are seeded: the
    same problem gives the same numbers on every machine.

    ``starts``: a dict that receives each probed side's iterate and evaluations,
    ``{method: (w, alpha, [(passes, relative gap), ...], certified)}``, from which a solve
    can go on (:func:`pdsparse.solvers.solve` with ``"auto"``: the iterate its warm start, the
    evaluations the start of its schedule's fit); ``certified``: (P, D) of the last
    evaluation when it reached ``tol`` (the solve's answer as it stands), else None."""
    from pdsparse.solvers.registry import make_kernel
    from pdsparse.solvers.schedule import _AdaptiveSchedule

    out = {}
    nnz = max(problem.nnz, 1)
    sides = [(m, o) for m, o in (("dual_rcd", {"dual_step": "newton"}), ("primal_rcd", {}))
             if accepts(problem, m, o)]  # not dual: pure l1, or weights with an l1 part
    cost = rcd_pass_costs(problem.loss, family_of(problem), problem.n, problem.d, nnz)
    for k, (method, options) in enumerate(sides):
        if k and tol > 0:
            # go on with the side probed when that is predicted cheaper than probing this
            # one (its passes plus its evaluations, each about a dual pass: the schedule's
            # comment in pdsparse.solvers)
            last = sides[k - 1][0]
            to_go = probe_passes(out[last], tol) - out[last]["passes"]
            if to_go * cost[last] < PROBE_PASSES * cost[method] + len(
                    PROBE_EVALUATIONS) * cost["dual_rcd"]:
                break
        kernel = make_kernel(problem, method, options=options)
        touched, epochs, rel = 0, [], []
        # with a tol, the second evaluation where a solve's schedule would put it when that
        # is before PROBE_PASSES: the probe may be the whole solve (dual RCD's on small
        # sets), and then it takes the passes of a solve named
        schedule = _AdaptiveSchedule(tol, nnz, from_zero=True) if tol > 0 else None
        done = 0
        while done < PROBE_PASSES:
            if schedule is not None and len(epochs) == 1:
                goal = min(schedule.next(touched, rel[0]), PROBE_PASSES * nnz)
                while touched < goal:
                    touched += kernel.run(goal - touched)[1]
                done = PROBE_PASSES
            else:
                touched += kernel.run(nnz)[1]
                done += 1
                if done not in PROBE_EVALUATIONS:
                    continue
            w, alpha, p_val, d_val, gap = kernel.evaluated()
            solved = bool(gap <= tol * abs(p_val))  # the solve's own test
            gap = gap / abs(p_val) if p_val else np.nan
            epochs.append(touched / nnz)
            rel.append(gap if np.isfinite(gap) and gap > 0 else np.nan)
            if solved:
                break
        x, y = np.array(epochs), np.log10(np.array(rel))
        ok = np.isfinite(y)
        rate = -_slope(x[ok], y[ok]) if ok.sum() >= 2 else 0.0
        out[method] = {"rate": rate, "rel_gap": max(float(gap), 0.0) if solved else
                       float(rel[-1]), "passes": float(epochs[-1]),
                       "support": int(np.count_nonzero(w))}
        if starts is not None:
            starts[method] = (w.copy(), alpha.copy(), list(zip(epochs, rel, strict=True)),
                              (p_val, d_val) if solved else None)
        if solved:
            break
    return out


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of y over x (numpy's polyfit costs more than a small
    probe's pass)."""
    dx = x - x.mean()
    return float(dx @ (y - y.mean()) / (dx @ dx))


def probe_passes(probe: dict, tol: float) -> float:
    """Passes to relative gap ``tol``: the probe's, plus the rest at its measured rate (inf
    when the gap did not fall)."""
    gap, rate, done = probe["rel_gap"], probe["rate"], probe["passes"]
    if not gap > tol:
        return done if math.isfinite(gap) else math.inf
    return done + (math.log10(gap) - math.log10(tol)) / rate if rate > 0 else math.inf


# ---------------------------------------------------------------------------------------------
# Prediction
# ---------------------------------------------------------------------------------------------


@dataclass
class Prediction:
    """The predicted fastest solver (at its default options) and why, in one line."""

    method: str
    reason: str
    family: str
    options: dict = field(default_factory=dict)
    """The options it runs with: ``{}`` (its defaults) unless the problem needs one
    (:func:`applicable`: FW's ``step=open_loop`` with the logistic loss)."""
    costs: dict = field(default_factory=dict)
    """Predicted CPU cost of the modelled candidates, in passes of dual RCD up to the common
    log(1/eps) factor (l2 and elastic net); empty when the rule compares no numbers."""
    sampling: dict = field(default_factory=dict)
    """Each RCD side's better sampling by its T (informative: the defaults are importance
    sampling, which Theorem 2 makes optimal; equal T means it is the uniform distribution)."""


def best_sampling(uniform: float, importance: float) -> str:
    """The sampling with the smaller T (importance sampling is optimal, Theorem 2; equal T
    means it *is* the uniform distribution, drawn at a lower cost: then uniform)."""
    return "uniform" if uniform <= importance * (1 + 1e-12) else "importance"


def pass_cost(kernel: str, loss: str, nnz: int, coords: int) -> float:
    """Predicted CPU nanoseconds of one pass of ``kernel`` (:data:`PASS_COST`)."""
    per_nnz, per_coord = PASS_COST[(kernel, loss)]
    return per_nnz * nnz + per_coord * coords


def rcd_pass_costs(loss: str, family: str, n: int, d: int, nnz: int) -> dict[str, float]:
    """Predicted CPU ns of one pass of each RCD side (:func:`pass_cost`; the elastic net's
    dual side is Prox-SDCA's kernel)."""
    dual_kernel = "prox_sdca" if family == "elastic_net" else "dual_rcd"
    return {"primal_rcd": pass_cost("primal_rcd", loss, nnz, d),
            "dual_rcd": pass_cost(dual_kernel, loss, nnz, n)}


def predict_rcd(stats: dict, loss: str, family: str = "l2",
                tol: float = DEFAULT_TOL) -> Prediction:
    """Primal or dual RCD (module docstring) from the statistics: :func:`problem_stats` (or
    :func:`pdsparse.stats.data_stats` alone, no labels needed); options not resolved.
    Passes: those to ``tol`` of :func:`probe_rates` (``stats["probe"]``) when known, else
    Face-Off's T/nnz of each side at its better sampling (eqs. 12-15: the paper's
    algorithms, not the defaults); times: passes x :func:`pass_cost`."""
    passes, sampling = {}, {}
    nnz = max(stats["nnz"], 1)
    for method, side in (("primal_rcd", "P"), ("dual_rcd", "D")):
        if f"T_{side}_uniform" in stats:
            uni, imp = stats[f"T_{side}_uniform"], stats[f"T_{side}_importance"]
            sampling[method] = best_sampling(uni, imp)
            passes[method] = min(uni, imp) / nnz
    probe = "probe" in stats
    if probe and len(stats["probe"]) == 1:  # the probe ended after one side (probe_rates)
        method, run = next(iter(stats["probe"].items()))
        side = "primal" if method == "primal_rcd" else "dual"
        what = ("reached" if run["rel_gap"] <= tol else "is close to, fewer passes to go "
                "than probing the other side would cost,")
        return Prediction(method, f"{side} RCD: its probe {what} the relative gap {tol:g} "
                          f"in {run['passes']:.3g} passes (certified: {run['rel_gap']:.3g})",
                          family, {}, {}, sampling)
    if probe:  # T describes the paper's steps and ignores l1: the measured rates instead
        passes = {m: probe_passes(stats["probe"][m], tol) for m in ("primal_rcd", "dual_rcd")}
    per_pass = rcd_pass_costs(loss, family, stats["n"], stats["d"], nnz)
    costs = {m: passes[m] * per_pass[m] for m in passes}
    method = min(costs, key=lambda m: (costs[m], m != "dual_rcd"))
    other = "primal_rcd" if method == "dual_rcd" else "dual_rcd"
    ratio = costs[other] / costs[method] if costs[method] > 0 else math.inf
    side = {"primal_rcd": "primal", "dual_rcd": "dual"}[method]
    what = (f"{passes['primal_rcd']:.3g} vs {passes['dual_rcd']:.3g} passes to {tol:g} at the "
            f"rates of their first {PROBE_PASSES}" if probe else
            f"T_P/T_D = {passes['primal_rcd'] / passes['dual_rcd']:.3g} passes")
    reason = (f"{side} RCD: {what}, "
              f"a primal pass costs {per_pass['primal_rcd'] / per_pass['dual_rcd']:.3g}x a "
              f"dual one here ({loss} loss): predicted {ratio:.3g}x less CPU time")
    return Prediction(method, reason, family, {}, costs, sampling)


def predict_ball(stats: dict) -> Prediction:
    """Acc PG or SVRG on an l1 ball, by the leading terms of their complexities in operations
    (nonzeros read and vector entries written, each counted once, as Face-Off's T counts):
    Acc PG sqrt(kappa) log(1/eps) iterations (Nesterov 2004, Sec. 2.2) of two products with
    A and one projection, ``sqrt(kappa) (2 nnz + d)``; SVRG (1 + kappa_max / n) log(1/eps)
    snapshots (Johnson & Zhang 2013, m = 2n inner steps; Xiao & Zhang 2014) of one full
    gradient and 2n steps, each two rows and a dense step and projection,
    ``(1 + kappa_max / n) (6 nnz + 2 n d)``. The Frank-Wolfe family (FW, SCGS, STORC, PDBFW)
    converges sublinearly in general and is not predicted."""
    n, d, nnz = stats["n"], stats["d"], stats["nnz"]
    costs = {"acc_pg": math.sqrt(stats["kappa"]) * (2 * nnz + d),
             "svrg": (1 + stats["kappa_max"] / n) * (6 * nnz + 2 * n * d)}
    method = min(costs, key=lambda m: (costs[m], m != "acc_pg"))
    other = "svrg" if method == "acc_pg" else "acc_pg"
    ratio = costs[other] / costs[method] if costs[method] > 0 else math.inf
    if method == "acc_pg":
        why = (f"sqrt(kappa) = {math.sqrt(stats['kappa']):.3g} iterations of 2 passes beat "
               f"SVRG's dense O(d) steps (d = {d})")
    else:
        why = (f"kappa_max/n = {stats['kappa_max'] / n:.3g}: a few SVRG passes beat "
               f"sqrt(kappa) = {math.sqrt(stats['kappa']):.3g} full gradients (d = {d} is small)")
    return Prediction(method, f"{method}: {why}: predicted {ratio:.3g}x fewer operations",
                      "l1_ball", {}, costs)


def predict(problem: Problem, stats: dict | None = None,
            tol: float = DEFAULT_TOL, starts: dict | None = None) -> Prediction:
    """The solver :func:`pdsparse.solvers.solve` should run on ``problem`` (module docstring).

    ``stats``: the output of :func:`problem_stats` when already computed; otherwise only
    what the rule reads is computed (for l2 and the elastic net Face-Off's T, one pass over
    A, and :func:`probe_rates`, 4 passes of each RCD side; nothing for the l1 ball).
    ``tol``: the relative gap the run is for (the probes extrapolate to it). ``starts``: a
    dict that receives the probed sides' iterates (:func:`probe_rates`), when the probe ran.
    """
    fam = family_of(problem)
    if fam == "trace_ball":
        raise ConfigError("no prediction for a trace-norm ball yet: race the solvers with "
                          "'pdsparse advise --race' or pick one of pdbfw, sfw, block_fw")
    if fam == "l1_ball":
        stats = stats if stats is not None and "kappa_max" in stats else problem_stats(
            problem, faceoff=False)
        pred = predict_ball(stats)
        pred.options = options_for(problem, pred.method)
        return pred
    # only the solvers a branch names are asked (applicable() asks all: ~1 ms a fit)
    newton = options_for(problem, "prox_newton")
    if problem.intercept and newton is not None:
        return Prediction("prox_newton", "prox_newton: an unpenalized intercept with second-"
                          "order steps (coordinate descent zigzags between the intercept and a "
                          "near-constant feature: docs/library.md)", fam, newton, {})
    if problem.l2 == 0.0:  # pure l1: Face-Off's T needs l2 > 0, and so do the dual methods
        if newton is not None:
            return Prediction("prox_newton", "prox_newton: pure l1 (l2 = 0) with second-"
                              "order steps on a working set (2-600x less CPU time than "
                              "primal RCD on the mirror's six binary sets: benchmarks/"
                              "README.md)", fam, newton, {})
        rcd = options_for(problem, "primal_rcd")
        if rcd is None:
            raise ConfigError(f"no registered solver takes {problem!r}")
        return Prediction("primal_rcd", "primal RCD: the registered solver for pure l1 "
                          f"with the {problem.loss} loss{' and dense A' if problem.dense else ''}"
                          " (l2 = 0; the dual and primal-dual methods need l2 > 0)", fam,
                          rcd, {})
    if fam == "elastic_net" and newton is not None and problem.n >= problem.d:
        # lambda_max's rounding: l1 = lambda_max / 10 computed elsewhere is on the threshold
        lam = float(stats["lambda_max"]) if stats and "lambda_max" in stats else \
            lambda_max(problem)
        if float(problem.l1) >= lam / NEWTON_L1_FRACTION * (1 - 1e-9):
            return Prediction("prox_newton", f"prox_newton: the elastic net with n >= d and "
                              f"l1 >= lambda_max / {NEWTON_L1_FRACTION:g} (a sparse optimum: "
                              "0.38-0.77x dual RCD's CPU time on the seven such sets tried; "
                              "1.6-2.7x on dense Gaussian data, whose optimum keeps most "
                              "features: benchmarks/README.md)", fam, newton, {})
    if problem.weights is not None or problem.intercept:
        # sample weights or an intercept: only the kernels that read them (the statistics
        # below read the weights, not the intercept)
        takers = {m: options_for(problem, m) for m in ("primal_rcd", "dual_rcd")}
        rcd = [m for m, options in takers.items() if options is not None]
        if not rcd:
            raise ConfigError(f"no registered solver takes {problem!r}")
        if len(rcd) == 1:
            what = "fits an intercept" if problem.intercept else "reads sample weights"
            return Prediction(rcd[0], f"{rcd[0]}: the registered solver that {what} with "
                              f"{fam}", fam, takers[rcd[0]], {})
    stats = {"n": problem.n, "d": problem.d, "nnz": problem.nnz, **(stats or {})}
    if "probe" not in stats and (fam == "l2" or float(problem.l1) < float(
            stats.get("lambda_max", math.inf))):
        stats["probe"] = probe_rates(problem, starts, tol)
    if "T_P_importance" not in stats and not stats.get("probe"):
        # Face-Off's T: the passes when nothing was probed (a probe decides without it)
        from pdsparse.stats import data_stats

        stats.update(data_stats(_faceoff_matrix(problem), float(problem.l2),
                                float(problem.smoothness)))
    pred = predict_rcd(stats, problem.loss, fam, tol)
    pred.options = options_for(problem, pred.method)
    return pred
