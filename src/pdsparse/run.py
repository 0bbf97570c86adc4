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

__all__ = ["RunSpec", "execute", "execute_seeds", "read_reference"]


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

    Returns the :class:`pdsparse.solvers.Result` (with ``p_star`` attached); the trace's
    metadata holds the spec, P* and its certified gap, the setup time and the data set's
    own metadata.
    """
    return execute_seeds(spec, [spec.seed], data, reference, [out], provenance)[0]


def execute_seeds(spec: RunSpec, seeds, data: str | Path, reference: str | Path, outs,
                  provenance: dict | None = None) -> list:
    """:func:`execute` for several seeds of one spec: the data set is read and the problem
    (with its CSR/CSC copies) built once, then each seed's trace is written to its file.

    One workflow job per solver configuration instead of one per seed: fewer Python starts,
    and on a cluster fewer queued jobs.
    """
    from dataclasses import replace

    from pdsparse.data.store import load_dataset
    from pdsparse.problem import Problem

    seeds, outs = list(seeds), list(outs)
    if len(seeds) != len(outs) or not seeds:
        raise ConfigError(f"{len(seeds)} seeds for {len(outs)} output files: give one per seed")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds repeat: {seeds}")
    ds = load_dataset(data)
    problem = Problem.from_dataset(ds, spec.loss, spec.l2)
    ref = read_reference(reference, spec.dataset, spec.loss, problem.l2)
    return [_solve_one(replace(spec, seed=int(seed)), problem, ds, ref, out, provenance)
            for seed, out in zip(seeds, outs, strict=True)]


def _solve_one(spec: RunSpec, problem, ds, ref: dict, out: str | Path, provenance):
    from pdsparse.solvers import solve
    from pdsparse.traces import write_trace

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
