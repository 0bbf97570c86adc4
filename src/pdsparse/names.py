"""The names the library's choices go by, in one import-light place.

The command line offers these as choices without importing NumPy, SciPy or pandas (its
start would take ten times longer). Each numerical module takes its names from here —
``pdsparse.solvers`` its methods, samplings and dual steps, ``pdsparse.data.normalize``
its normalizations — and ``tests/test_cli.py`` checks that the loss registry
(``pdsparse.losses.LOSSES``) and the generators (``pdsparse.data.synthetic.GENERATORS``)
define exactly the names listed here. ``METHODS`` is ``tuple(pdsparse.solvers.SOLVERS)``, the
solver registry, and ``SAMPLINGS`` / ``DUAL_STEPS`` are its options' choices
(``tests/test_registry.py``).
"""

PAPERS = ("faceoff", "dgpd", "pdbfw")
"""The papers, by config section (= folder of :mod:`pdsparse.papers`), in the scorecard's order."""
LOSSES = ("logistic", "squared", "smooth_hinge")
PENALTIES = ("elastic_net", "l1_ball", "trace_ball")
PENALTY_FAMILIES = ("l2", "elastic_net", "l1_ball")
"""What ``pdsparse advise --penalty`` predicts and races for (:data:`pdsparse.predict.FAMILIES`)."""
NORMALIZATIONS = ("avg_example_norm", "unit_rows", "none")
METHODS = ("primal_rcd", "dual_rcd", "spdc", "dgpd", "dgpd_full", "acc_pg", "fw", "svrg",
           "scgs", "storc", "sfw", "block_fw", "pdbfw")
DGPD_INNER = ("1", "3", "5", "10")
DGPD_ETAS = ("theorem", "x10", "x100", "x1000")
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
BALL_STEPS = ("theory", "x2", "x5", "x10")
BALL_INNER = ("2n",)
STORC_INNER = ("theory",)
BALL_BATCHES = ("theory",)
BALL_BATCH_CAPS = ("n", "none")
BALL_SNAPSHOTS = ("last", "average")
TRACE_RANKS = ("auto",)
SYNTHETIC_KINDS = ("worst_case_general", "worst_case_binary_dual", "dense_gaussian", "zipf_bow",
                   "lowrank_sensing")

SOLVER_OPTIONS = {
    "primal_rcd": {"sampling": SAMPLINGS},
    "dual_rcd": {"sampling": SAMPLINGS, "dual_step": DUAL_STEPS},
    "spdc": {},
    "dgpd": {"inner": DGPD_INNER, "eta": DGPD_ETAS, "batch": DGPD_BATCHES,
             "passes": DGPD_PASSES, "step": DGPD_STEPS},
    "dgpd_full": {"eta": DGPD_ETAS},
    "acc_pg": {"momentum": BALL_MOMENTA, "lipschitz": ACC_PG_LIPSCHITZ},
    "fw": {"step": FW_STEPS},
    "svrg": {"step": BALL_STEPS, "inner": BALL_INNER, "snapshot": BALL_SNAPSHOTS},
    "scgs": {"batch": BALL_BATCHES, "batch_cap": BALL_BATCH_CAPS},
    "storc": {"inner": STORC_INNER, "batch": BALL_BATCHES, "batch_cap": BALL_BATCH_CAPS},
    "sfw": {"batch": BALL_BATCHES, "batch_cap": BALL_BATCH_CAPS},
    "block_fw": {"s": TRACE_RANKS, "step": BALL_STEPS},
    "pdbfw": {"s": PDBFW_SIZES, "k": PDBFW_KS, "delta": PDBFW_DELTAS,
              "extrapolate": PDBFW_EXTRAPOLATIONS},
}
"""Each solver's options and their named values (``SOLVERS[m].choices()``, tested): the
``run --option`` help."""
INTEGER_OPTIONS = (("svrg", "inner"), ("scgs", "batch"), ("scgs", "batch_cap"),
                   ("storc", "inner"), ("storc", "batch"), ("storc", "batch_cap"),
                   ("sfw", "batch"), ("sfw", "batch_cap"), ("block_fw", "s"), ("pdbfw", "s"),
                   ("pdbfw", "k"), ("dgpd", "batch"))
"""(solver, option) pairs that also take a positive count (``solver_base._int_option``;
tested)."""
