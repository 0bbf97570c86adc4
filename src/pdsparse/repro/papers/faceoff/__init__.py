"""Csiba & Richtárik, *Coordinate Descent Face-Off: Primal or Dual?* (ALT 2018 / JMLR).

The paper's folder: :mod:`~pdsparse.repro.papers.faceoff.plan` (config -> workflow plan),
:mod:`~pdsparse.repro.papers.faceoff.values` (the printed numbers),
:mod:`~pdsparse.repro.papers.faceoff.tables` (Table 1),
:mod:`~pdsparse.repro.papers.faceoff.figures`
(Figures 1-2 as curve specs, Figure 3 and the theory behind it),
:mod:`~pdsparse.repro.papers.faceoff.scorecard` (its scorecard rows) and ``captions/`` (the
report's captions). The solvers are the registry's ``primal_rcd`` and ``dual_rcd``.
"""

PAPER = "faceoff"
TITLE = "Face-Off"
CITATION = "Csiba & Richtárik, Coordinate Descent Face-Off: Primal or Dual?"

BUILDERS = {"figure3": "pdsparse.repro.papers.faceoff.figures:FIGURE3_OUTPUT",
            "table1": "pdsparse.repro.papers.faceoff.tables:TABLE1_OUTPUT"}
"""This paper's own ``pdsparse output faceoff NAME`` builders, as ``module:attribute``
(:mod:`pdsparse.repro.output`; the generic ones, ``curves`` and ``speedup``, serve every paper)."""
