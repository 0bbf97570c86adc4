"""The cost of a workflow plan before it runs: CPU hours and peak memory.

``snakemake -n`` prints it (the Snakefile, at parse time of a dry run), and so does
``pdsparse estimate --config YAML...``. Every job of the plans (:mod:`pdsparse.repro.papers`) gets
a CPU time and a memory from the size of its data (:func:`data_shape`: the registry's n, d
and nnz, a generator's parameters, a recipe's split and feature map) and per-unit costs, the
constants below. Measured (benchmarks/README.md, "Measurements cited by the code"): a kernel pass
(:data:`pdsparse.solvers.predict.PASS_COST`, fitted by ``benchmarks/pass_cost.py``), the start of a
job, Snakemake's work per job, the dense factor and the passes to a tolerance (from the
default run's traces), reading the data, its CSC copy and an evaluation. Set by judgement
and checked only through the total against the default run: the costs of parsing,
generating, feature maps, statistics, aggregates, figures and tables, and the passes of a
reference on a ball.

The model, in CPU seconds per job:

* every job: :data:`JOB_START_S` (a ``pdsparse`` process: the interpreter and the imports
  of NumPy, SciPy, pandas, pyarrow and the kernels) plus :data:`SCHEDULER_S` of Snakemake's
  own work per job;
* a run: reading its data (:data:`LOAD_NS_PER_NNZ`) and, sparse, the CSC copy the
  column kernels and the evaluations of a very wide matrix use (:data:`CSC_NS_PER_NNZ`;
  counted for every sparse run: an upper bound for the row kernels), once; per
  seed ``min(max_seconds, max_epochs * pass, expected * pass) + setup + evaluations``,
  where ``pass`` is one pass over A (:func:`pass_seconds`), ``expected`` the passes to
  the tolerance of a linearly converging coordinate method
  (:data:`PASSES_PER_DECADE` per decade of ``tol``; the other solvers are taken to run to
  their budget, which the default runs do; a dense pass :data:`DENSE_FACTOR` dearer),
  setup :data:`SETUP_PASSES` passes and each evaluation (one per ``eval_every`` epochs, or
  ``eval_per_decade`` per decade) one product with A and one with A^T
  (:data:`EVAL_NS_PER_NNZ`) plus :data:`EVAL_S`;
* a reference: ``min(budget, expected)``, the expected time that of dual RCD (Prox-SDCA
  with an l1 part, three products per pass) to ``rtol`` and the budget the share of
  ``reference.max_seconds`` it gets as kernel time (a half, with an l1 part a quarter),
  and for a ball (accelerated projected gradient) :data:`FIRST_ORDER_PASSES` products;
* preparing data: :data:`PARSE_NS_PER_NNZ` per nonzero of a LIBSVM text,
  :data:`GENERATE_NS_PER_NNZ` per generated nonzero, and a feature map's products
  (:data:`MAP_NS_PER_OP`); statistics :data:`STATS_PASSES` passes;
* the aggregates, figures, tables and the scorecard: their fixed costs
  (:data:`FIXED_S`) and :data:`READ_NS_PER_ROW` per trace row read.

A job's memory is :data:`BASE_MB` (the process) plus its data: ``n d 8`` bytes dense,
``12 nnz`` sparse (values and indices), twice where a sparse problem holds A and its
transpose (runs, references, statistics), and a feature map's input (twice: read, then
converted) and output together while preparing. The peak of a run on ``cores`` cores is
at most the sum of the ``cores`` largest jobs.

What it does not know: how many passes a method that is not a coordinate method takes to
its tolerance (its budget is charged in full), and the load of a shared machine (CPU time
does not grow with it; wall time does).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CLUSTER_HOURS", "Estimate", "JobCost", "Shape", "data_shape", "estimate",
           "format_estimate", "of_config", "pass_seconds", "plan_costs", "shared_references"]

JOB_START_S = 1.2
"""CPU seconds of starting a job's ``pdsparse`` process: importing ``pdsparse.repro.run`` and the
kernels (measured: benchmarks/README.md, "Measurements cited by the code")."""
SCHEDULER_S = 0.5
"""Snakemake's own CPU seconds per job (the shell, the output checks, the bookkeeping, the
scheduling rounds), from the clean default run with the mirror plus the studies, with the
default profile's rate window (measured: benchmarks/README.md, "Measurements cited by the
code")."""
FIXED_S = {"fetch": 0.5, "stats": 0.3, "aggregate": 0.5, "figure": 2.5, "table": 1.0,
           "table_page": -1.0, "scorecard": 4.0, "effective_config": -JOB_START_S}
"""Extra CPU seconds of a job kind beyond the start (a table page imports almost nothing;
the config is written inside Snakemake)."""
READ_NS_PER_ROW = 2000.0
"""Reading, joining and plotting one trace row (aggregates, figures)."""
PARSE_NS_PER_NNZ = 250.0
"""Decompressing, checking and parsing one nonzero of a LIBSVM text file."""
GENERATE_NS_PER_NNZ = 60.0
"""Generating one nonzero of a synthetic set (and writing the .npz)."""
MAP_NS_PER_OP = 1.0
"""One multiply-add of a feature map (rf: dense products, rb: one grid lookup per input
nonzero and grid)."""
STATS_PASSES = 20
"""Face-Off's statistics: norms, C_P, C_D and spectral estimates, in passes over A."""
GENERIC_PASS = (4.0, 100.0)
"""ns per nonzero and per coordinate (n + d) of one pass of a solver that
:data:`pdsparse.solvers.predict.PASS_COST` does not fit (only used where ``max_epochs`` binds)."""
PASSES_PER_DECADE = {"l2": 2.0, "elastic_net": 50.0}
"""Passes of primal or dual RCD per decade of the tolerance: with an l2 penalty alone (from
the default run's Face-Off runs), with an l1 part (from its DGPD runs, which an l1 part
slows; measured: benchmarks/README.md, "Measurements cited by the code")."""
DENSE_FACTOR = 10.0
"""A pass over a dense matrix costs this many times :data:`PASS_COST`'s per-nonzero price
(fitted on sparse sets; from dual RCD on the default run's dense random-feature set,
measured: benchmarks/README.md, "Measurements cited by the code")."""
FIRST_ORDER_PASSES = 20000
"""Products with A of the certified reference on a ball (accelerated projected gradient)."""
BALL_PRODUCT_NS_PER_NNZ = 1.25
"""One of those products, per entry."""
SETUP_PASSES = 3
EVAL_NS_PER_NNZ = 8.0
"""An evaluation's products (A w, A^T alpha): 4-8 ns an entry on news20, cod-rna-RB,
Zipf-BOW and Mnist-RB (measured: benchmarks/README.md, "Measurements cited by the code")."""
LOAD_NS_PER_NNZ = 25.0
"""Reading a prepared .npz and checking it, per entry (20-40 ns measured, the same sets)."""
CSC_NS_PER_NNZ = 60.0
"""The CSC copy of a sparse A, per entry (30-93 ns measured, the same sets: the widest the
dearest)."""
EVAL_S = 3e-4
BASE_MB = 150.0
CLUSTER_HOURS = 8.0
"""Above this many hours of wall time on the given cores, say: use the cluster profile."""

_COORDINATE = ("primal_rcd", "dual_rcd")
_DENSE_KINDS = ("lowrank_sensing", "dense_gaussian")
_BUNDLED_ROWS = {"digits": (1797, 64)}  # pdsparse.data.synthetic.BUNDLED: rows, columns


@dataclass(frozen=True)
class Shape:
    """Rows, columns and stored entries of a prepared data set (entries = n d when dense);
    ``raw_nnz``: the nonzeros read to make it; ``map_ops``: its feature map's work."""

    n: int
    d: int
    nnz: int
    dense: bool = False
    raw_nnz: int = 0
    map_ops: float = 0.0

    @property
    def bytes(self) -> float:
        return 8.0 * self.n * self.d if self.dense else 12.0 * self.nnz


def data_shape(data, registry: Mapping[str, Any]) -> Shape:
    """The :class:`Shape` of a :class:`pdsparse.repro.plan.DataSpec`: a registry set (its
    n, d, nnz; unknown nnz taken as n min(d, 1000)) or a generator's (its parameters), after
    the recipe (class filter and subsample ignored: an upper bound; a feature map's output:
    rf dense n x D, rb n x P nonzeros over P grids)."""
    recipe = data.recipe
    test_rows = recipe.test_rows
    if data.real:
        spec = registry[data.name]
        n, d = int(spec.n or 10**5), int(spec.d or 10**3)
        nnz = int(spec.nnz or n * min(d, 10**3))
        if recipe.test_file is not None:  # the test file's rows are read and kept beside
            test = registry[recipe.test_file]
            test_rows = int(test.n or 0)
            nnz += int(test.nnz or test_rows * nnz / max(n, 1))
        dense, raw = False, nnz
    else:
        kind, p = data.generator.kind, dict(data.generator.params)
        n, d = (int(p.get("n", 1000)), int(p.get("d", 1000)))
        if kind in _BUNDLED_ROWS:
            n, d = _BUNDLED_ROWS[kind]
            nnz = n * d
        elif kind == "worst_case_binary_dual":
            nnz = int(p.get("alpha", n * d))
        elif kind == "worst_case_general":
            nnz = n + d
        elif kind == "zipf_bow":
            nnz = int(n * float(p.get("mean_nnz_per_row", 100)))
        else:
            nnz = n * d
        dense, raw = kind in _DENSE_KINDS, nnz
    if recipe.features is None:
        return Shape(n, d, n * d if dense else nnz, dense, raw)
    # the map's output: the training rows (a subsample, else all but the test rows) and
    # the test rows, D dense columns (rf) or one nonzero per grid and row (rb)
    rows = (recipe.subsample or max(n - recipe.test_rows, 1)) + test_rows
    size = int(recipe.map_size or 1000)
    ops = rows * nnz / max(n, 1) * size  # input nonzeros of the mapped rows x D (or P)
    if recipe.features == "rf":
        return Shape(rows, size, rows * size, True, raw, ops)
    return Shape(rows, size * 1000, rows * size, False, raw, ops)


def pass_seconds(solver: str, loss: str, shape: Shape, l1: bool = False) -> float:
    """CPU seconds of one pass over A: :data:`pdsparse.solvers.predict.PASS_COST` for primal and
    dual RCD (Prox-SDCA's with an l1 part), else :data:`GENERIC_PASS` over n + d
    coordinates."""
    from pdsparse.solvers.predict import PASS_COST

    kernel = "prox_sdca" if solver == "dual_rcd" and l1 else solver
    if (kernel, loss) in PASS_COST:
        per_nnz, per_coord = PASS_COST[(kernel, loss)]
        coords = shape.d if solver == "primal_rcd" else shape.n
    else:
        (per_nnz, per_coord), coords = GENERIC_PASS, shape.n + shape.d
    if shape.dense:
        per_nnz *= DENSE_FACTOR
    return (per_nnz * shape.nnz + per_coord * coords) * 1e-9


@dataclass(frozen=True)
class JobCost:
    """One job: its kind (the rule), the file it makes, CPU seconds and memory (MB)."""

    kind: str
    target: str
    cpu_s: float
    mem_mb: float


def _decades(tol: float) -> float:
    return max(1.0, -math.log10(max(tol, 1e-300)))


def _evaluations(epochs: float, eval_every: float, per_decade: int) -> float:
    if per_decade:
        return 2 + per_decade * max(0.0, math.log10(max(epochs, eval_every) / eval_every))
    return 1 + epochs / eval_every


def run_seconds(run, shape: Shape) -> float:
    """CPU seconds of a :class:`pdsparse.repro.plan.RunGroup`, every seed (the model above)."""
    l1 = bool(dict(run.problem.params).get("l1"))
    one = pass_seconds(run.solver, run.problem.loss, shape, l1)
    passes = run.max_epochs
    if run.solver in _COORDINATE and run.problem.penalty == "elastic_net":
        rate = PASSES_PER_DECADE["elastic_net" if l1 else "l2"]
        passes = min(passes, rate * _decades(run.tol))
    kernel = min(run.max_seconds, passes * one)
    epochs = kernel / one if one > 0 else passes
    evals = _evaluations(epochs, run.eval_every, run.eval_per_decade)
    per_seed = (kernel + SETUP_PASSES * one
                + evals * (EVAL_NS_PER_NNZ * 1e-9 * shape.nnz + EVAL_S))
    once = LOAD_NS_PER_NNZ * 1e-9 * shape.nnz
    if not shape.dense:
        once += CSC_NS_PER_NNZ * 1e-9 * shape.nnz
    return once + len(run.seeds) * per_seed


def reference_seconds(problem, shape: Shape, settings: Mapping) -> float:
    """CPU seconds of a problem's certified P* (:func:`pdsparse.reference.reference_solution`)."""
    params = dict(problem.params)
    cap = settings["max_seconds"]
    if problem.penalty == "elastic_net":
        l1 = bool(params.get("l1"))
        rate = PASSES_PER_DECADE["elastic_net" if l1 else "l2"] * (3 if l1 else 1)
        passes = rate * _decades(settings["rtol"])
        one = pass_seconds("dual_rcd", problem.loss, shape, l1)
        # dual RCD gets half the budget as kernel time, Prox-SDCA (an l1 part) a quarter
        cap /= 4 if l1 else 2
    else:
        passes, one = FIRST_ORDER_PASSES, BALL_PRODUCT_NS_PER_NNZ * 1e-9 * shape.nnz
    passes = min(passes, settings["max_epochs"])
    return (min(cap, passes * one) + passes / 10 * EVAL_S
            + LOAD_NS_PER_NNZ * 1e-9 * shape.nnz)


def shared_references(plans: Mapping) -> dict[str, dict]:
    """Each problem's reference settings: a problem shared by papers gets the strictest
    (smallest ``rtol``, largest budgets)."""
    out: dict[str, dict] = {}
    for plan in plans.values():
        for tag in plan.problems:
            ref = out.setdefault(tag, dict(plan.reference))
            ref["rtol"] = min(ref["rtol"], plan.reference["rtol"])
            for key in ("max_epochs", "max_seconds"):
                ref[key] = max(ref[key], plan.reference[key])
    return out


def of_config(config: Mapping, cores: int = 2) -> Estimate:
    """The :class:`Estimate` of a validated workflow config: its plans with the data that
    is available as the workflow decides it (raw directory, mirror, ``data.download``)."""
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.data.registry import load_registry
    from pdsparse.repro.config import data_availability
    from pdsparse.repro.papers import plans

    data = config["data"]
    registry = load_registry(data["registry"])
    mirror = resolve_mirror(data.get("mirror"), must_exist=False)

    def available(name: str) -> bool:
        return data_availability(registry[name], data["raw_dir"], mirror,
                                 bool(data.get("download"))) is not None

    jobs = plan_costs(plans(config, registry, available), registry, data["processed_dir"],
                      data["raw_dir"])
    return estimate(jobs, cores)


def _mb(shape: Shape) -> float:
    """A problem's memory: A, and its transpose where sparse (CSR and CSC)."""
    return BASE_MB + (1 if shape.dense else 3) * shape.bytes / 1e6


def _job(kind: str, target: str, seconds: float = 0.0, mem: float = BASE_MB) -> JobCost:
    return JobCost(kind, target, JOB_START_S + SCHEDULER_S + FIXED_S.get(kind, 0.0) + seconds,
                   mem)


def plan_costs(plans: Mapping, registry: Mapping[str, Any], processed_dir: str = "data/processed",
               raw_dir: str = "data/raw") -> list[JobCost]:
    """Every job of ``plans`` (paper name -> :class:`pdsparse.repro.plan.Plan`) with its
    cost, one entry per output file as the workflow's rules make them."""
    from pdsparse.data.fetch import raw_path
    from pdsparse.repro.plan import aggregate_path, reference_path

    data = {k: v for plan in plans.values() for k, v in plan.data.items()}
    shapes = {key: data_shape(spec, registry) for key, spec in data.items()}
    jobs: list[JobCost] = []
    for name in sorted({n for spec in data.values() for n in spec.raw_names}):
        jobs.append(_job("fetch", str(raw_path(registry[name], raw_dir))))
    for key, s in shapes.items():
        work = (PARSE_NS_PER_NNZ if data[key].real else GENERATE_NS_PER_NNZ) * s.raw_nnz * 1e-9
        jobs.append(_job("prepare", os.path.join(processed_dir, f"{key}.npz"),
                         work + MAP_NS_PER_OP * s.map_ops * 1e-9,
                         BASE_MB + (24.0 * s.raw_nnz + s.bytes) / 1e6))
    stats = {tag: spec for plan in plans.values() for tag, spec in plan.stats.items()}
    for tag, spec in stats.items():
        s = shapes[spec.data.key]
        jobs.append(_job("stats", f"results/stats/{tag}.parquet",
                         STATS_PASSES * pass_seconds("dual_rcd", "squared", s), _mb(s)))
    problems = {tag: p for plan in plans.values() for tag, p in plan.problems.items()}
    for tag, settings in shared_references(plans).items():
        s = shapes[problems[tag].data.key]
        jobs.append(_job("reference", reference_path(tag),
                         reference_seconds(problems[tag], s, settings), _mb(s)))
    for plan in plans.values():
        rows: dict[str, float] = {}
        for run in plan.runs:
            s = shapes[run.problem.data.key]
            seconds = run_seconds(run, s)
            jobs.append(_job("run", run.path, seconds, _mb(s)))
            rows[run.experiment] = rows.get(run.experiment, 0.0) + len(run.seeds) * 100
        for experiment in plan.experiments:
            jobs.append(_job("aggregate", aggregate_path(plan.paper, experiment),
                             READ_NS_PER_ROW * 1e-9 * rows.get(experiment, 0.0)))
        for out in plan.outputs:
            jobs.append(_job(out.kind, out.files[0]))
            if out.kind == "table":
                jobs.append(_job("table_page", f"results/report/{plan.paper}/{out.name}.html"))
    jobs.append(_job("effective_config", "results/config.json"))
    jobs.append(_job("scorecard", "results/SCORECARD.md"))
    return jobs


@dataclass(frozen=True)
class Estimate:
    """The sum of :func:`plan_costs`: CPU seconds by job kind, jobs by kind, the largest
    job's memory (MB) and the sum of the ``cores`` largest (the peak with that many jobs at
    once), and the same CPU total for the jobs whose output does not exist yet."""

    cpu_s: dict[str, float]
    jobs: dict[str, int]
    peak_job_mb: float
    peak_mb: float
    cores: int
    remaining_s: float
    remaining_jobs: int

    @property
    def total_s(self) -> float:
        return sum(self.cpu_s.values())


def estimate(jobs: list[JobCost], cores: int = 2) -> Estimate:
    """Sum ``jobs`` up for a run on ``cores`` cores."""
    cpu: dict[str, float] = {}
    count: dict[str, int] = {}
    for job in jobs:
        cpu[job.kind] = cpu.get(job.kind, 0.0) + job.cpu_s
        count[job.kind] = count.get(job.kind, 0) + 1
    mems = sorted((j.mem_mb for j in jobs), reverse=True)
    todo = [j for j in jobs if not os.path.exists(j.target)]
    return Estimate(cpu, count, mems[0] if mems else 0.0, sum(mems[:max(cores, 1)]),
                    max(cores, 1), sum(j.cpu_s for j in todo), len(todo))


def format_estimate(est: Estimate, cluster_hours: float = CLUSTER_HOURS) -> str:
    """The estimate in a few lines, with the advice to use the cluster profile when the
    remaining work exceeds ``cluster_hours`` of wall time on ``est.cores`` cores."""
    kinds = sorted(est.cpu_s, key=lambda k: -est.cpu_s[k])
    by_kind = ", ".join(f"{k} {_n(est.jobs[k], 'job')} {_duration(est.cpu_s[k])}"
                        for k in kinds)
    wall_h = est.remaining_s / 3600 / est.cores
    lines = [
        f"Estimated cost of the plan (pdsparse.repro.estimate; CPU time, measured per-pass costs): "
        f"{est.total_s / 3600:.2f} CPU hours over {sum(est.jobs.values())} jobs "
        f"({by_kind}); peak memory {est.peak_job_mb / 1e3:.1f} GB for the largest job, "
        f"at most {est.peak_mb / 1e3:.1f} GB with {_n(est.cores, 'job')} at once.",
        f"Still to run (outputs missing): {_n(est.remaining_jobs, 'job')}, "
        f"{est.remaining_s / 3600:.2f} CPU hours, about {_duration(wall_h * 3600)} of wall "
        f"time on {_n(est.cores, 'core')} of an otherwise idle machine.",
    ]
    if wall_h > cluster_hours:
        lines.append(f"That is more than {cluster_hours:g} hours here: use the cluster "
                     "profile (docs/workflow.md, 'On a cluster': snakemake --profile "
                     "profiles/slurm).")
    return "\n".join(lines)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
