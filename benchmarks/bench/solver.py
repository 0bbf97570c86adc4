"""The solver contract of the benchmarks, and the solvers every benchmark shares.

A :class:`Solver` mirrors benchopt's ``BaseSolver``: ``set_problem`` (benchopt's
``set_objective``: outside the clock, nothing costly), ``run(budget)`` (one complete solve
from the problem's rows, its setup included: the only call the runner times) and ``result``
(``get_result``: the iterate, read outside the clock). ``sampling`` says what ``budget`` is:

* ``"tolerance"``: the solver's own stopping tolerance; the runner tries :data:`TOLS`, loosest
  first (a user's tuning: the cheapest setting that reaches the target);
* ``"iteration"``: an iteration cap (the solver's tolerance set so that the cap stops it); the
  runner doubles it from 1, then bisects to within 3 %;
* ``"trace"``: a work count the solver records in one traced run (:meth:`Solver.trace`: our
  kernels evaluated between chunks, copt in its callback); its first point at the target is
  the budget, and a complete ``run`` with it ends at that very iterate;
* ``"target"``: the target itself, once: the solver's own certified stop, as a user calls it
  (``solve(problem, method, tol=1e-6)``), no tuning with hindsight.

A benchmark's own solvers (a kernel with its options, a copt method) subclass :class:`Solver`
in its script; the ones here are shared: ours as users call it (:class:`OursEstimator`,
:class:`OursSolve`) and each peer of :mod:`pdsparse.peers` (:class:`LibraryPeer`), whose
mapping onto the problem's objective lives there, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

TOLS = tuple(10.0 ** -k for k in range(2, 15))
"""The tolerances a ``"tolerance"`` solver is tried at, loosest first."""

SAMPLINGS = ("tolerance", "iteration", "trace", "target")


class Solver:
    """One solver of a benchmark (see the module's docstring).

    Subclasses set ``name`` (the table's column), ``sampling`` and ``ours`` (a solver of this
    package: the one the report sets against the best rival), and implement :meth:`run`
    (which sets ``self.result``); :meth:`supports` refuses a problem it does not fit, with the
    reason the report prints."""

    name: str = ""
    sampling: str = "tolerance"
    ours: bool = False

    def supports(self, problem) -> str:
        """'' when the solver fits ``problem``, else why not."""
        return ""

    def set_problem(self, problem) -> None:
        self.problem = problem
        self.result = None

    def run(self, budget) -> None:  # pragma: no cover - the contract
        raise NotImplementedError

    def details(self) -> dict:
        """What the last ``run`` reports of itself (epochs, evaluations, status...), kept in
        the timed rows' ``details`` column (JSON); read outside the clock."""
        return {}

    def trace(self, subopt: Callable[[np.ndarray], float], target: float,
              cap: float) -> tuple[list[tuple[float, float, float]], str]:
        """``"trace"`` sampling: one run recorded to ``target`` (``subopt(x)``: relative
        suboptimality, outside the solver's clock) or ``cap`` seconds: ([(budget, subopt,
        seconds of the solver's own clock so far) of each evaluated point], why it
        stopped)."""
        raise NotImplementedError(f"{self.name}: no trace (sampling {self.sampling!r})")


def _coef(model, intercept: bool = False) -> np.ndarray:
    """The fitted coefficients, the intercept appended with ``intercept`` (the problem's
    variable (w, c))."""
    coef = np.asarray(model.coef_, dtype=np.float64).ravel()
    return np.append(coef, float(np.ravel(model.intercept_)[0])) if intercept else coef


class OursEstimator(Solver):
    """``LinearClassifier(solver=...)`` (the scikit-learn estimator) fitted on the problem's
    rows, with an intercept where the problem has one, its ``tol`` the certified relative
    duality gap; the penalty given as a user would (``penalty="l1"`` / ``"l2"`` /
    ``"elasticnet"`` with ``alpha`` and ``l1_ratio``: ``estimators.penalty_params``)."""

    ours = True

    def __init__(self, solver: str = "auto"):
        self.solver = solver
        self.name = f"ours ({solver})"

    def supports(self, problem) -> str:
        from pdsparse.penalties import ElasticNet

        ok = isinstance(problem.penalty, ElasticNet) and not problem.matrix
        return "" if ok else "the estimator fits the l1 / l2 / elastic-net penalties"

    def run(self, budget: float) -> None:
        from pdsparse.estimators import LinearClassifier, penalty_params

        kw = penalty_params(self.problem.penalty)
        intercept = self.problem.intercept
        model = LinearClassifier(**kw, tol=budget, max_iter=10**6, fit_intercept=intercept,
                                 solver=self.solver)
        self.result = _coef(model.fit(self.problem.mat, self.problem.b), intercept)


class OursSolve(Solver):
    """``solve(Problem(A, b, loss, penalty), method, tol=budget, **options)``: the library's
    call, the problem built inside the clock from the rows (its CSC copy and norms are part of
    a user's solve). ``tuned=False``: sampling ``"target"`` (the call at the target itself,
    stopped by its own certificate), else its tolerance searched like a peer's."""

    ours = True

    def __init__(self, method: str, name: str | None = None, tuned: bool = True, **options):
        self.method, self.options = method, options
        self.name = name or f"ours ({method})"
        self.sampling = "tolerance" if tuned else "target"
        self._last = None

    def run(self, budget: float) -> None:
        from pdsparse.problem import Problem
        from pdsparse.solvers import solve

        p = self.problem
        fresh = Problem(p.mat, p.b, p.loss, penalty=p.penalty)
        self._last = solve(fresh, self.method, tol=budget, **self.options)
        self.result = np.asarray(self._last.w)

    def details(self) -> dict:
        r = self._last
        if r is None:
            return {}
        return {"status": r.status, "epochs": float(r.epochs), "rel_gap": float(r.rel_gap),
                "evaluations": len(r.rows), "kernel_s": float(r.time_s),
                "setup_s": float(r.setup_s), "eval_s": float(r.eval_s)}


class OursKernel(Solver):
    """A kernel of :mod:`pdsparse.solvers` with its options, its budget the work in nonzeros
    touched (``kernel.run(budget)``), found on a trace evaluated between chunks
    (``_harness.trace_kernel``: chunked calls reproduce one call, so the timed ``run`` ends at
    the traced iterate; ``trace_options`` are its keywords, e.g. ``time_frac=0`` for chunks by
    work alone, ``max_epochs``). ``run`` includes the setup a user pays: ``Problem`` from the rows
    (CSC copy, norms) and ``make_kernel`` (sampling tables)."""

    sampling = "trace"
    ours = True

    def __init__(self, method: str, name: str | None = None, seed: int = 0,
                 trace_options: dict | None = None, **options):
        self.method, self.seed, self.options = method, seed, options
        self.trace_options = trace_options or {}
        self.name = name or ":".join([method, *(f"{k}={v}" for k, v in options.items())])

    def supports(self, problem) -> str:
        from pdsparse.solvers.registry import get_solver

        return get_solver(self.method).refusal(problem, self.options) or ""

    def build(self):
        """(problem, kernel): the setup, from the rows."""
        from pdsparse.problem import Problem
        from pdsparse.solvers import make_kernel

        p = self.problem
        fresh = Problem(p.mat, p.b, p.loss, penalty=p.penalty)
        return fresh, make_kernel(fresh, self.method, seed=self.seed, options=self.options)

    def run(self, budget: float) -> None:
        t0 = time.process_time()
        prob, kernel = self.build()
        setup = time.process_time() - t0
        iters = 0
        if budget > 0:
            iters = kernel.run(int(budget))[0]
        self.result = kernel.solution().copy()
        # counted by details(), outside the clock
        self._last = (int(iters), float(budget) / max(prob.nnz, 1), setup,
                      getattr(kernel, "alpha", None))

    def details(self) -> dict:
        """Iterations, epochs (the budget over nnz(A)), the setup's CPU seconds and the
        nonzeros of x (and of alpha, for a dual kernel) of the last run."""
        if getattr(self, "_last", None) is None:
            return {}
        iters, epochs, setup, alpha = self._last
        out = {"iterations": iters, "epochs": epochs, "setup_s": setup,
               "nnz_x": int(np.count_nonzero(self.result))}
        if isinstance(alpha, np.ndarray):
            out["nnz_alpha"] = int(np.count_nonzero(alpha))
        return out

    def trace(self, subopt, target, cap):
        from _harness import trace_kernel

        def evaluate(x):
            s = subopt(x)
            return s, s  # (a finite value unless diverged, the relative suboptimality)

        tr, setup, stop = trace_kernel(self.build, evaluate, target, cap=cap,
                                       **self.trace_options)
        return list(zip(tr.touched.astype(float), tr.rel_subopt, setup + tr.kernel_s,
                        strict=True)), stop


class LibraryPeer(Solver):
    """A peer of :mod:`pdsparse.peers` (scikit-learn, skglm, celer), its stopping tolerance the
    budget; the peer's mapping onto the problem's objective is the library's."""

    def __init__(self, peer):
        self.peer = peer
        self.name = peer.name

    def supports(self, problem) -> str:
        import importlib.util

        if not importlib.util.find_spec(self.peer.module):
            return f"{self.peer.module} is not installed (pip install -e '.[bench]')"
        return "" if self.peer.accepts(problem) else "not this loss or penalty"

    def run(self, budget: float) -> None:
        self.result = self.peer.fit(self.problem, budget)


def library_peers() -> list[LibraryPeer]:
    """Every peer of :mod:`pdsparse.peers`, installed or not (:meth:`Solver.supports` says)."""
    from pdsparse.peers import PEERS

    return [LibraryPeer(p) for p in PEERS]
