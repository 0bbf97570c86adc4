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

LOSSES = ("logistic", "squared", "smooth_hinge")
PENALTIES = ("elastic_net", "l1_ball", "trace_ball")
NORMALIZATIONS = ("avg_example_norm", "unit_rows", "none")
METHODS = ("primal_rcd", "dual_rcd", "spdc", "dgpd", "dgpd_full", "acc_pg", "fw", "svrg",
           "scgs", "storc", "sfw", "block_fw", "pdbfw")
DGPD_INNER = ("1", "3", "5", "10")
DGPD_ETAS = ("theorem", "x10", "x100", "x1000")
PDBFW_DELTAS = ("theorem", "x10", "x100", "x1000")
PDBFW_SIZES = ("auto",)
SAMPLINGS = ("uniform", "importance", "permutation")
DUAL_STEPS = ("fixed", "newton", "printed")
BALL_MOMENTA = ("nesterov", "fista")
FW_STEPS = ("line_search", "open_loop")
BALL_STEPS = ("theory", "x2", "x5", "x10")
BALL_INNER = ("2n", "n", "5n")
STORC_INNER = ("theory",)
BALL_BATCHES = ("theory",)
BALL_BATCH_CAPS = ("n", "none")
BALL_SNAPSHOTS = ("last", "average")
TRACE_RANKS = ("auto",)
SYNTHETIC_KINDS = ("worst_case_general", "worst_case_binary_dual", "dense_gaussian", "zipf_bow",
                   "lowrank_sensing")
