"""One run: a run spec, a prepared data set and its certified P* -> one trace file.

This is what ``pdsparse run`` and the workflow's ``run`` rule do, as a library call::

    spec = RunSpec("figure1d", "leu", "dual_rcd", {"sampling": "importance"})
    results = execute(spec, "data/processed/leu__avg_example_norm.npz",
                      "results/reference/leu+avg_example_norm__logistic__l2-1_n.parquet",
                      "trace.parquet", seeds=[0, 1, 2])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pdsparse.errors import ConfigError, DataError
from pdsparse.io import read_parquet

__all__ = ["RunSpec", "execute", "read_reference"]


@dataclass(frozen=True)
class RunSpec:
    """What to run: experiment, data set, a solver of the registry with its options, seed,
    problem, budgets.

    ``options`` is anything :meth:`pdsparse.solvers.SolverSpec.parse_options` takes (a
    mapping, "key=value" strings); it is validated here. ``l2`` is a number or ``"c/n"``,
    resolved on the data set.
    """

    experiment: str = field(metadata={"help": "experiment name, e.g. figure1a"})
    dataset: str = field(metadata={
        "help": "name to record (default: the name stored in the file)"})
    solver: str = field(metadata={"help": "a solver of the registry"})
    options: Mapping[str, Any] | tuple = field(default_factory=dict, metadata={
        "help": "a solver option KEY=VALUE (repeatable)"})
    seed: int = field(default=0, metadata={
        "help": "seed(s) of the coordinate sampling: one run per seed, all in one trace file"})
    loss: str = field(default="logistic", metadata={"help": "loss function"})
    l2: float | str = field(default="1/n", metadata={"help": "L2 strength: number or 'c/n'"})
    l1: float | str = field(default=0.0, metadata={
        "help": "L1 strength (elastic net): number or 'c/n'"})
    penalty: str = field(default="elastic_net", metadata={
        "help": "g: elastic_net (--l2, --l1), or l1_ball / trace_ball (--radius, with --l2 as "
                "its strongly convex part)"})
    """The penalty's name (:data:`pdsparse.penalties.PENALTIES`): the elastic net (``l2``,
    ``l1``) or a ball (``radius``, with ``l2`` its strongly convex part)."""
    radius: float | str | None = field(default=None, metadata={
        "help": "radius of the l1 or trace-norm ball: number or 'c/n'"})
    max_epochs: float | None = field(default=30.0, metadata={"help": "passes over nnz(A)"})
    max_seconds: float = field(default=600.0, metadata={"help": "kernel CPU time cap"})
    tol: float = field(default=1e-10, metadata={"help": "stop at gap <= tol*|P| (0: never)"})
    eval_every: float | None = field(default=1.0, metadata={"help": "epochs per row"})
    eval_per_decade: int = field(default=0, metadata={
        "help": "> 0: rows at the start, after --eval-every epochs, then this many per decade "
                "of epochs (log-spaced, for methods whose speeds differ by orders of "
                "magnitude)"})
    """> 0: geometric evaluation points (:func:`pdsparse.solvers.solve`)."""
    problem: str = field(default="", metadata={
        "help": "the problem's tag to record (default: the tag of dataset, loss, l2 and l1)"})
    """The problem's tag (:meth:`pdsparse.problem.ProblemKey.tag`): the aggregate's join
    key with the reference; default: the key of (dataset, loss, l2, l1)."""

    def __post_init__(self) -> None:
        from pdsparse.solvers import get_solver

        solver = get_solver(self.solver)
        object.__setattr__(self, "options", solver.parse_options(self.options or None))
        if not self.problem:
            object.__setattr__(self, "problem", self.key.tag())

    @property
    def key(self):
        """The problem as a :class:`pdsparse.problem.ProblemKey` (what
        :meth:`pdsparse.problem.Problem.from_spec` builds from)."""
        from pdsparse.problem import ProblemKey

        spec = self.penalty_spec
        params = ({"l2": self.l2, "l1": self.l1} if spec is None
                  else {k: v for k, v in spec.items() if k != "name"})
        return ProblemKey(self.dataset, self.loss, self.penalty, params)

    @property
    def penalty_spec(self) -> dict | None:
        """The penalty as a config mapping (:func:`pdsparse.penalties.resolve_penalty`);
        None for the elastic net, built from ``l2`` and ``l1`` as before balls existed."""
        from pdsparse.penalties import check_params

        if self.penalty == "elastic_net":
            if self.radius is not None:
                raise ConfigError("radius is a parameter of the l1 and trace-norm balls, not "
                                  "of the elastic net")
            return None
        if self.l1 not in (0, 0.0):
            raise ConfigError(f"l1 is the elastic net's; the {self.penalty} takes radius, l2")
        spec = {"radius": self.radius, "l2": self.l2}
        check_params(self.penalty, {k: v for k, v in spec.items() if v is not None})
        return {"name": self.penalty, **spec}

    @property
    def option_columns(self) -> dict[str, str]:
        """The options as trace key columns (every option of the registry; "none" where
        this solver has none)."""
        from pdsparse.solvers import SOLVERS

        return SOLVERS[self.solver].option_columns(self.options)


def read_reference(path: str | Path, dataset: str, loss: str, l2: float,
                   problem: str | None = None) -> dict:
    """The one row of a reference file, checked to be for this problem (tag, or data set,
    loss and l2)."""
    path = Path(path)
    ref = read_parquet(path, "reference file")
    if len(ref) != 1 or "p_star" not in ref.columns:
        raise DataError(f"reference file {path}: expected one row with column p_star")
    row = ref.iloc[0].to_dict()
    if str(row.get("dataset")) != dataset or str(row.get("loss")) != loss:
        raise DataError(
            f"reference file {path} is for dataset {row.get('dataset')!r}, loss "
            f"{row.get('loss')!r}; the run is for {dataset!r}, {loss!r}"
        )
    if not math.isclose(float(row.get("l2", math.nan)), l2, rel_tol=1e-12):
        raise DataError(f"reference file {path} has l2={row.get('l2')}, the run uses l2={l2}")
    if problem and row.get("problem") not in (None, problem):
        raise DataError(f"reference file {path} is for problem {row.get('problem')!r}; the "
                        f"run is for {problem!r} (data set, loss and l2 agree: if the "
                        f"tags differ only in their recipe, pass --problem "
                        f"{row.get('problem')})")
    return row


def execute(spec: RunSpec, data: str | Path, reference: str | Path, out: str | Path,
            provenance: dict | None = None, seeds=None,
            progress: Callable[[int, dict], None] | None = None) -> list:
    """Solve ``spec`` on the prepared data set ``data`` for each of ``seeds`` (default: the
    spec's own seed) and write the traces to ``out``, one file with a ``seed`` column.

    The data set is read and the problem (with its CSR/CSC copies) built once for all
    seeds: one workflow job per solver configuration instead of one per seed. Returns the
    :class:`pdsparse.solvers.Result` of each seed (with ``p_star`` attached); the file's
    metadata holds the spec, P* and its certified gap, each seed's status and setup time,
    and the data set's own metadata. ``progress(seed, row)`` is called after each
    evaluation (:func:`pdsparse.solvers.solve`'s ``progress``).
    """
    from dataclasses import replace

    import pandas as pd

    from pdsparse.data.store import load_dataset
    from pdsparse.problem import Problem
    from pdsparse.repro.traces import write_trace

    seeds = [spec.seed] if seeds is None else [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds must be distinct and at least one, got {seeds}")
    ds = load_dataset(data)
    problem = Problem.from_spec(spec.key, ds)
    ref = read_reference(reference, spec.dataset, spec.loss, problem.l2, spec.problem)
    results, frames = [], []
    for seed in seeds:
        report = None if progress is None else partial(progress, seed)
        result = _solve_one(replace(spec, seed=seed), problem, report)
        result.p_star = float(ref["p_star"])
        results.append(result)
        frames.append(result.trace.assign(seed=seed))
    keys = {
        "experiment": spec.experiment,
        "dataset": spec.dataset,
        "solver": spec.solver,
        "loss": spec.loss,
        "l2": float(problem.l2),
        "l1": float(problem.l1),
        # a ball's columns only where there is one: elastic-net traces keep their columns
        **({} if spec.penalty_spec is None else
           {"penalty": spec.penalty, "radius": float(problem.radius)}),
        **spec.option_columns,
        "problem": spec.problem,
    }
    trace = pd.concat(frames, ignore_index=True)
    trace.insert(0, "seed", trace.pop("seed"))
    metadata = dict(provenance or {})
    metadata.update(
        keys={**keys, "seeds": seeds},
        spec={**{k: v for k, v in asdict(spec).items() if k != "options"},
              "options": asdict(spec.options)},
        l2_spec=str(spec.l2),
        **({} if spec.penalty_spec is None else {"radius_spec": str(spec.radius)}),
        p_star=float(ref["p_star"]),
        reference_gap=float(ref.get("gap", math.nan)),
        runs=[{"seed": s, "status": str(r.status), "setup_s": float(r.setup_s),
               "test_accuracy": test_accuracy(ds, r.w)}
              for s, r in zip(seeds, results, strict=True)],
        data_meta=ds.meta,
    )
    write_trace(trace, out, keys, metadata)
    return results


def test_accuracy(ds, w) -> float | None:
    """Accuracy of ``w`` on the data set's test rows (None without test rows): the sign of
    the margin for a binary problem; for one-vs-rest (``w`` of shape (d, k)) the class whose
    column scores highest, classes in sorted order (:func:`pdsparse.problem.one_vs_rest`)."""
    import numpy as np

    A_test, b_test = getattr(ds, "A_test", None), getattr(ds, "b_test", None)
    if A_test is None or b_test is None or len(b_test) == 0:
        return None
    scores = A_test @ w
    if np.ndim(w) == 1:
        predicted = np.where(scores >= 0, 1.0, -1.0)
    else:
        classes = np.unique(ds.b)
        predicted = classes[np.argmax(scores, axis=1)]
    return float(np.mean(predicted == np.asarray(b_test)))


def _solve_one(spec: RunSpec, problem, progress=None):
    from pdsparse.solvers import solve

    return solve(problem, spec.solver, options=spec.options, seed=spec.seed,
                 max_epochs=spec.max_epochs, max_seconds=spec.max_seconds, tol=spec.tol,
                 eval_every=spec.eval_every, eval_per_decade=spec.eval_per_decade,
                 progress=progress)
