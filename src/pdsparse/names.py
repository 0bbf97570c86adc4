"""The names the library's choices go by, in one import-light place.

The command line offers these as choices without importing NumPy, SciPy or pandas (its
start would take ten times longer). Each numerical module takes its names from here —
``pdsparse.solvers`` its methods, samplings and dual steps, ``pdsparse.data.normalize``
its normalizations — and ``tests/test_cli.py`` checks that the loss registry
(``pdsparse.losses.LOSSES``) and the generators (``pdsparse.data.synthetic.GENERATORS``)
define exactly the names listed here. The solvers' names, options (:data:`SOLVER_OPTIONS`,
whose keys are :data:`METHODS`) and penalties (:data:`SOLVER_PENALTIES`) are the light copy of
the solver registry, ``pdsparse.solvers.SOLVERS``, which imports NumPy and SciPy:
``tests/test_registry_contract.py`` and ``tests/test_registry_capabilities.py`` check that
they are the registry's, and ``SAMPLINGS`` / ``DUAL_STEPS`` its options' choices.
"""

import re

PAPERS = ("faceoff", "dgpd", "pdbfw")
"""The papers, by config section (= folder of :mod:`pdsparse.repro.papers`), in the
scorecard's order."""
LOSSES = ("logistic", "squared", "smooth_hinge")
PENALTIES = ("elastic_net", "l1_ball", "trace_ball")
PENALTY_FAMILIES = ("l2", "elastic_net", "l1_ball")
"""What ``pdsparse advise --penalty`` predicts and races for
(:data:`pdsparse.solvers.predict.FAMILIES`)."""
PURE_L1 = "l1"
"""``advise``'s penalty for pure l1: the elastic net with l2 = 0."""
ADVISE_PENALTIES = ("l2", PURE_L1, "elastic_net", "l1_ball")
"""What ``pdsparse advise --penalty`` takes: the :data:`PENALTY_FAMILIES` and ``l1``, pure l1
(the elastic net with l2 = 0, named as the estimators name it)."""
NORMALIZATIONS = ("avg_example_norm", "unit_rows", "none")
FEATURE_MAPS = ("rf", "rb")
"""A recipe's feature maps (:class:`pdsparse.data.steps.FeatureMap`)."""
INPUT_SCALES = ("max_abs", "max_abs_columns", "none")
"""A recipe's input scalings before a feature map (:class:`pdsparse.data.steps.ScaleInputs`)."""
DGPD_INNER = ("1", "3", "5", "10")
STEP_MULTIPLIERS = ("theory", "x0_1", "x0_3", "x2", "x3", "x5", "x10", "x100")
"""Multipliers of a method's step size: ``theory`` (x1: the step of the method's analysis,
each method's docstring says which) or ``x<factor>`` with ``_`` for the decimal point
(``x0_1`` = x0.1; option values match ``[a-z0-9_]``). One vocabulary for every step option
that scales a published step (SVRG, block FW, SPDC, SCGS, STORC; DGPD's ``eta`` with
``theorem`` for x1), read by one parser, :func:`step_multiplier`."""
DGPD_ETAS = ("theorem", *STEP_MULTIPLIERS[1:], "x1000")
DGPD_BATCHES = ("1",)
DGPD_PASSES = ("jacobi", "gauss_seidel")
DGPD_STEPS = ("theorem", "eq16", "curvature")
PDBFW_DELTAS = ("theorem", "x10", "x100", "x1000", "x10000", "x100000", "exact")
PDBFW_SIZES = ("auto",)
PDBFW_KS = ("auto", "balance", "n")
PDBFW_EXTRAPOLATIONS = ("none", "primal")
SAMPLINGS = ("uniform", "importance", "permutation")
DEFAULT_TOL = 1e-6
"""The certified relative duality gap a run is for unless told otherwise (``solve``, the
race and the prediction of ``pdsparse advise``, its ``--tol``): a number, kept here so that
the command line offers it without importing the solvers."""
DUAL_STEPS = ("fixed", "newton", "printed")
BALL_MOMENTA = ("nesterov", "fista")
ACC_PG_LIPSCHITZ = ("exact", "power", "backtracking")
FW_STEPS = ("line_search", "open_loop")
BALL_INNER = ("2n",)
STORC_INNER = ("theory",)
BALL_BATCHES = ("theory",)
BALL_BATCH_CAPS = ("n", "none")
BALL_SNAPSHOTS = ("last", "average")
TRACE_RANKS = ("auto",)
PROX_NEWTON_WS = ("grow", "all")
PROX_NEWTON_SCREENS = ("off", "gap_safe")
SYNTHETIC_KINDS = ("worst_case_general", "worst_case_binary_dual", "dense_gaussian", "zipf_bow",
                   "lowrank_sensing")

SOLVER_OPTIONS = {
    "primal_rcd": {"sampling": SAMPLINGS},
    "dual_rcd": {"sampling": SAMPLINGS, "dual_step": DUAL_STEPS},
    "spdc": {"step": STEP_MULTIPLIERS},
    "dgpd": {"inner": DGPD_INNER, "eta": DGPD_ETAS, "batch": DGPD_BATCHES,
             "passes": DGPD_PASSES, "step": DGPD_STEPS},
    "dgpd_full": {"eta": DGPD_ETAS},
    "acc_pg": {"momentum": BALL_MOMENTA, "lipschitz": ACC_PG_LIPSCHITZ},
    "fw": {"step": FW_STEPS},
    "svrg": {"step": STEP_MULTIPLIERS, "inner": BALL_INNER, "snapshot": BALL_SNAPSHOTS},
    "scgs": {"batch": BALL_BATCHES, "batch_cap": BALL_BATCH_CAPS, "step": STEP_MULTIPLIERS},
    "storc": {"inner": STORC_INNER, "batch": BALL_BATCHES, "batch_cap": BALL_BATCH_CAPS,
              "step": STEP_MULTIPLIERS},
    "sfw": {"batch": BALL_BATCHES, "batch_cap": BALL_BATCH_CAPS},
    "block_fw": {"s": TRACE_RANKS, "step": STEP_MULTIPLIERS},
    "pdbfw": {"s": PDBFW_SIZES, "k": PDBFW_KS, "delta": PDBFW_DELTAS,
              "extrapolate": PDBFW_EXTRAPOLATIONS},
    "prox_newton": {"ws": PROX_NEWTON_WS, "screen": PROX_NEWTON_SCREENS},
}
"""Each solver's options and their named values (``SOLVERS[m].choices()``, tested): the
``run --option`` help."""
METHODS = tuple(SOLVER_OPTIONS)
"""The solvers, in the registry's order (``tuple(pdsparse.solvers.SOLVERS)``, tested)."""
_ENET = ("l2", "elastic_net")
_BALLS = ("l1_ball", "trace_ball")
SOLVER_PENALTIES = {
    "primal_rcd": _ENET, "dual_rcd": _ENET, "spdc": _ENET, "dgpd": _ENET, "dgpd_full": _ENET,
    "acc_pg": _BALLS, "fw": _BALLS, "svrg": _BALLS, "scgs": _BALLS, "storc": _BALLS,
    "sfw": ("trace_ball",), "block_fw": ("trace_ball",), "pdbfw": _BALLS, "prox_newton": _ENET,
}
"""The penalties each solver solves, of ``pdsparse.solvers.registry.PENALTY_KINDS`` ("l2": the
elastic net with l1 = 0): ``SOLVERS[m].penalties`` (tested), the ``run --solver`` help."""
INTEGER_OPTIONS = (("svrg", "inner"), ("scgs", "batch"), ("scgs", "batch_cap"),
                   ("storc", "inner"), ("storc", "batch"), ("storc", "batch_cap"),
                   ("sfw", "batch"), ("sfw", "batch_cap"), ("block_fw", "s"), ("pdbfw", "s"),
                   ("pdbfw", "k"), ("dgpd", "batch"))
"""(solver, option) pairs that also take a positive count (``pdsparse.solvers.base._int_option``;
tested)."""

_UNIT_STEPS = ("theory", "theorem")
_FACTOR = re.compile(r"x([0-9]+)(?:_([0-9]+))?")


def step_multiplier(name: str) -> float:
    """The factor a step-multiplier name stands for (:data:`STEP_MULTIPLIERS`,
    :data:`DGPD_ETAS`, PDBFW's delta): 1.0 for ``theory`` / ``theorem``, else the number after
    ``x`` with ``_`` read as the decimal point (``x0_3`` -> 0.3, ``x10`` -> 10.0). A
    ValueError for anything else (the options dataclasses validate names before, so users
    see their error, with the choices)."""
    if name in _UNIT_STEPS:
        return 1.0
    match = _FACTOR.fullmatch(name) if isinstance(name, str) else None
    value = float(f"{match[1]}.{match[2] or 0}") if match else 0.0
    if not value > 0:
        raise ValueError(f"{name!r} is not a positive step multiplier (theory, theorem or "
                         f"x<digits>[_<digits>])")
    return value
