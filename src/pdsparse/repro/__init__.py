"""The reproduction of the three papers, built on the library above it.

The library (``pdsparse.problem``, ``losses``, ``penalties``, ``objective``, ``solvers``,
``data``, ``stats``, ``reference``, ``advise``, ``race``) imports nothing of this package;
this package holds what exists to regenerate the papers: the validated workflow config
(:mod:`.config`), the plans (:mod:`.plan` and each paper's ``papers/<paper>/plan.py``),
one run to one trace (:mod:`.run`, :mod:`.traces`, :mod:`.provenance`), the curves, times
to targets and sensitivity studies (:mod:`.figures`, :mod:`.speedup`, :mod:`.sensitivity`),
the tables and figures' builders (:mod:`.output`), the scorecard (:mod:`.scoring`, the
protocol a paper's rows follow, and :mod:`.scorecard`), the HTML pages (:mod:`.report`) and
the plan's cost (:mod:`.estimate`). ``tests/test_layout.py`` checks the floors.
"""
