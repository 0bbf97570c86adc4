"""The benchmarks' one runner: solvers behind one contract, one timing protocol, one long-format
table, one report.

The contract is benchopt's (``BaseSolver.set_objective`` / ``run(stop_val)`` / ``get_result``
and its sampling strategies), kept in-house so that the house's protocol stays (why, in
ARCHITECTURE.md, "Benchmarks"):

* :mod:`bench.solver`: a :class:`~bench.solver.Solver` is set on a problem
  (``set_problem``), runs one complete solve at a budget (``run(budget)``, the only call inside
  the clock) and gives its iterate (``result``). Its ``sampling`` says what the budget is: a
  stopping tolerance (``"tolerance"``), an iteration cap (``"iteration"``), or the work of a
  trace the solver records itself (``"trace"``: our kernels between chunks, copt in its
  callback), whose first point at the target names the budget of the timed re-runs.
* :mod:`bench.runner`: each solver's cheapest budget that reaches each target (relative
  suboptimality against a certified P*), then ``repeats`` rounds of CPU-time runs
  interleaved across every (solver, budget), each re-run's iterate checked again; one row per
  timed run (or per setting that reached nothing), the long format of every benchmark.
* :mod:`bench.report`: one writer of the tables: per cell and target, ours against the best
  rival that reached it, the median ratio, the range of the ratio over the repeats, and the
  verdict (ahead, behind, or inconclusive when the range straddles 1); a solver that failed,
  diverged, stalled or missed the target on a re-run never counts as faster.
"""
