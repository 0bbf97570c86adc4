"""Lei, Yen, Wu, Dhillon & Ravikumar, *Doubly Greedy Primal-Dual Coordinate Descent for
Sparse Empirical Risk Minimization* (ICML 2017).

The paper's folder: :mod:`~pdsparse.repro.papers.dgpd.plan` (config -> workflow plan: the
(lambda, mu) grid of Figures 1-6, Table 2, the speedup table),
:mod:`~pdsparse.repro.papers.dgpd.values` (the printed numbers),
:mod:`~pdsparse.repro.papers.dgpd.tables` (Table 2),
:mod:`~pdsparse.repro.papers.dgpd.scorecard` (its scorecard rows) and ``captions/``.
The solvers are the registry's ``dgpd``, ``dgpd_full``, ``primal_rcd``, ``dual_rcd`` and
``spdc`` (:mod:`pdsparse.solvers.dgpd`, :mod:`pdsparse.solvers.erm`).
"""

PAPER = "dgpd"
TITLE = "DGPD"
CITATION = "Lei et al., Doubly Greedy Primal-Dual Coordinate Descent (ICML 2017)"

BUILDERS = {"table2": "pdsparse.repro.papers.dgpd.tables:TABLE2_OUTPUT"}
"""This paper's own ``pdsparse output dgpd NAME`` builders, as ``module:attribute``
(:mod:`pdsparse.repro.output`; the generic ones, ``curves`` and ``speedup``, serve every paper)."""
