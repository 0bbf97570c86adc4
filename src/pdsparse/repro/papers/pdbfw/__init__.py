"""Lei, Zhuo, Caramanis, Dhillon & Dimakis, *Primal-Dual Block Frank-Wolfe* (NeurIPS 2019).

The paper's folder: :mod:`~pdsparse.repro.papers.pdbfw.plan` (config -> workflow plan: Figures
1-3 on the l1 and trace-norm balls, Table 2, the speedup table),
:mod:`~pdsparse.repro.papers.pdbfw.values` (the printed numbers),
:mod:`~pdsparse.repro.papers.pdbfw.tables` (Table 2),
:mod:`~pdsparse.repro.papers.pdbfw.scorecard` (its scorecard rows) and ``captions/``.
The solvers are the registry's ``pdbfw`` and the ball baselines
(:mod:`pdsparse.solvers.pdbfw`, :mod:`~pdsparse.solvers.ball`, :mod:`~pdsparse.solvers.trace`).
"""

PAPER = "pdbfw"
TITLE = "PDBFW"
CITATION = "Lei et al., Primal-Dual Block Frank-Wolfe (NeurIPS 2019)"

BUILDERS = {"table2": "pdsparse.repro.papers.pdbfw.tables:TABLE2_OUTPUT"}
"""This paper's own ``pdsparse output pdbfw NAME`` builders, as ``module:attribute``
(:mod:`pdsparse.repro.output`; the generic ones, ``curves`` and ``speedup``, serve every paper)."""
