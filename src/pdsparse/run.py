"""One run: a run spec, a prepared data set and its certified P* -> one trace file.

This is what ``pdsparse run`` and the workflow's ``run`` rule do, as a library call::

    spec = RunSpec("figure1d", "leu", "dual_rcd", sampling="importance", dual_step="fixed")
    result = execute(spec, "data/processed/leu.npz", "results/reference/leu__....parquet",
                     "results/runs/faceoff/figure1d/leu/dual_rcd/importance-fixed-seed0.parquet")
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

from pdsparse.errors import ConfigError, DataError
from pdsparse.io import read_parquet

__all__ = ["RunSpec", "execute", "read_reference"]


@dataclass(frozen=True)
class RunSpec:
    """What to run: experiment, data set, solver with its options, seed, problem, budgets.

    ``dual_step`` is ``"none"`` for primal RCD (it has no dual step); ``l2`` is a number or
    ``"c/n"``, resolved on the data set.
    """

    experiment: str
    dataset: str
    solver: str
    sampling: str = "importance"
    dual_step: str = "none"
    seed: int = 0
    loss: str = "logistic"
    l2: float | str = "1/n"
    max_epochs: float = 30.0
    max_seconds: float = 600.0
    tol: float = 1e-10
    eval_every: float = 1.0

    def __post_init__(self) -> None:
        if self.solver == "primal_rcd" and self.dual_step not in ("none", None):
            raise ConfigError("dual_step applies to dual_rcd only; use 'none' for primal_rcd")
        if self.solver == "dual_rcd" and self.dual_step in ("none", None):
            object.__setattr__(self, "dual_step", "fixed")


def read_reference(path: str | Path, dataset: str, loss: str, l2: float) -> dict:
    """The one row of a reference file, checked to be for this data set, loss and l2."""
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
    return row


def execute(spec: RunSpec, data: str | Path, reference: str | Path, out: str | Path,
            provenance: dict | None = None):
    """Solve ``spec`` on the prepared data set ``data`` and write its trace to ``out``.

    Returns the :class:`pdsparse.solvers.Result`; the trace's metadata holds the spec, P*
    and its certified gap, the setup time and the data set's own metadata.
    """
    from pdsparse.data.store import load_dataset
    from pdsparse.problem import Problem
    from pdsparse.solvers import solve
    from pdsparse.traces import write_trace

    ds = load_dataset(data)
    problem = Problem.from_dataset(ds, spec.loss, spec.l2)
    ref = read_reference(reference, spec.dataset, spec.loss, problem.l2)
    result = solve(
        problem,
        spec.solver,
        sampling=spec.sampling,
        dual_step=spec.dual_step if spec.solver == "dual_rcd" else "fixed",
        seed=spec.seed,
        max_epochs=spec.max_epochs,
        max_seconds=spec.max_seconds,
        tol=spec.tol,
        eval_every=spec.eval_every,
    )
    keys = {
        "experiment": spec.experiment,
        "dataset": spec.dataset,
        "solver": spec.solver,
        "loss": spec.loss,
        "l2": float(problem.l2),
        "l1": float(problem.l1),
        "sampling": spec.sampling,
        "dual_step": spec.dual_step,
        "seed": int(spec.seed),
    }
    metadata = dict(provenance or {})
    metadata.update(
        keys=keys,
        spec={k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(spec).items()},
        l2_spec=str(spec.l2),
        p_star=float(ref["p_star"]),
        reference_gap=float(ref.get("gap", math.nan)),
        setup_s=float(result.setup_s),
        status=str(result.status),
        data_meta=ds.meta,
    )
    write_trace(result.trace, out, keys, metadata)
    result.p_star = float(ref["p_star"])
    return result
