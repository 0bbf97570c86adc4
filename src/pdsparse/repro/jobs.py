"""A planned job as its rule runs it: the spec of each plan object, the one implementation
of each kind of job, the resources a job asks for, and the messages the workflow prints about
its plan.

The workflow writes every planned job's spec once (:func:`plan_document`, :func:`write_plan`:
JSON named by its content) and each rule runs ``pdsparse job KIND KEY`` with its files, which
reads the spec (:func:`load_job`) and runs it (:func:`prepare_job`, :func:`stats_job`,
:func:`reference_job`, :func:`run_job`, :func:`output_job`); the human-facing commands
(``pdsparse prepare|stats|reference|run`` with flags) build the same specs. No spec makes a
round trip through shell text. ``tests/test_jobs.py`` checks that each job receives the plan
object it was made from (the recipe, the problem, the solver's options, budgets and seeds).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pdsparse.repro.config import format_l2

__all__ = ["KINDS", "PLAN_ENV", "dataset_nnz", "is_dry_run", "load_job", "memory_mb",
           "output_job", "output_spec", "penalty_spec", "plan_document", "prepare_job",
           "prepare_spec", "raw_spec", "recipe_fields", "recipe_of", "reference_job",
           "reference_spec", "registry_spec", "report_mismatch_message", "run_job", "run_key",
           "run_spec", "scalar", "skipped_summary", "stale_message", "stats_job", "stats_spec",
           "write_plan"]


PLAN_ENV = "PDSPARSE_PLAN"
"""The environment variable naming the plan file a workflow run wrote (:func:`write_plan`):
``pdsparse job`` reads its job's spec there."""
PLAN_DIR = Path(".snakemake") / "pdsparse"
KINDS = ("prepare", "stats", "reference", "run", "output")
"""The kinds of planned jobs ``pdsparse job KIND KEY`` runs (the rules of the same names;
``output`` is the figure and table rules)."""


def _strength(value: float | str) -> float | str:
    """An l2, l1 or radius as a job receives it: ``"c/n"`` text, else the float of its
    ``repr`` (:func:`pdsparse.repro.config.format_l2`; 0 stays 0 for l1)."""
    if value in (0, 0.0, "0"):
        return 0.0
    text = format_l2(value)
    return text if text.endswith("/n") else float(text)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def scalar(value: Any) -> int | float | bool | str:
    """A generator parameter as ``--param`` reads it from its text: int, then float, then
    true/false, else the text."""
    text = str(value)
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def recipe_fields(recipe) -> dict[str, Any]:
    """A :class:`pdsparse.data.prepare.Recipe` as JSON: its :meth:`~Recipe.to_dict` (the
    fields that differ from their defaults, so that a field added to the recipe changes no
    planned job, hence reruns none); :func:`recipe_of` is the inverse."""
    # lists for tuples; a single positive class as the label's text (a list is a group)
    return {name: list(value) if isinstance(value, tuple)
            else str(value) if name == "positive_class" else value
            for name, value in recipe.to_dict().items()}


def recipe_of(fields: Mapping[str, Any]):
    """The :class:`pdsparse.data.prepare.Recipe` of :func:`recipe_fields`."""
    from pdsparse.data.prepare import Recipe

    return Recipe(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


def prepare_spec(data, registry: str | Path, raw_file: Callable[[str], str]) -> dict:
    """The spec of a prepare job: a :class:`~pdsparse.repro.plan.DataSpec`'s source (a
    registry file and ``raw_file(name)``, or a generator) and recipe."""
    if data.real:
        source = {"registry": str(registry), "raw": raw_file(data.name)}
        if data.recipe.test_file is not None:  # the test rows from a second registry file
            source["test_raw"] = raw_file(data.recipe.test_file)
    else:
        gen = data.generator
        source = {"generator": gen.kind, "seed": gen.seed,
                  "params": {k: scalar(v) for k, v in gen.params}}
    return {"dataset": data.name, "source": source, "recipe": recipe_fields(data.recipe)}


def stats_spec(spec) -> dict:
    """The spec of a stats job (:class:`~pdsparse.repro.plan.StatsSpec`)."""
    return {"dataset": spec.data.name, "l2": _strength(spec.l2), "beta": float(spec.beta),
            "normalization": spec.normalization}


def penalty_spec(problem) -> dict:
    """The penalty of a :class:`~pdsparse.repro.plan.ProblemSpec`: the elastic net's l2 and
    l1, or a ball's radius and l2 (as :class:`pdsparse.problem.ProblemKey` takes them)."""
    params = dict(problem.params)
    if problem.penalty == "elastic_net":
        return {"l2": _strength(problem.l2), "l1": _strength(params.get("l1", 0.0))}
    return {"radius": _strength(params["radius"]), "l2": _strength(problem.l2)}


def reference_spec(tag: str, problem, ref: Mapping[str, Any]) -> dict:
    """The spec of a reference job: problem ``tag`` with its reference settings (``rtol``,
    ``max_epochs``, ``max_seconds``: the strictest of the papers that share it)."""
    return {"dataset": problem.data.name, "problem": tag, "loss": problem.loss,
            "penalty": problem.penalty, "params": penalty_spec(problem),
            "rtol": float(ref["rtol"]), "max_epochs": float(ref["max_epochs"]),
            "max_seconds": float(ref["max_seconds"])}


def run_spec(run) -> dict:
    """The spec of a run job (:class:`~pdsparse.repro.plan.RunGroup`): the fields of
    :class:`pdsparse.repro.run.RunSpec` and the seeds."""
    # The option columns hold "none" for the options of other solvers and for a late option
    # at its default: those are left out, so that a solver or an option added to the
    # registry changes no planned job (hence no rerun). "none" that is a value of this
    # solver's own, unlike its default (SFW's, SCGS's, STORC's uncapped minibatch
    # batch_cap=none), is kept: dropping it ran the default instead.
    from pdsparse.solvers import get_solver

    defaults = get_solver(run.solver).option_columns(None)
    options = {k: v for k, v in run.options
               if v != "none" or defaults.get(k, "none") != "none"}
    problem = run.problem
    penalty = penalty_spec(problem)
    return {
        "experiment": run.experiment, "dataset": problem.data.name, "problem": problem.tag,
        "solver": run.solver, "options": options, "seeds": list(run.seeds),
        "loss": problem.loss, "penalty": problem.penalty, "l2": penalty["l2"],
        "l1": penalty.get("l1", 0.0), "radius": penalty.get("radius"),
        # budgets as floats, whatever the config wrote (3000 or 3000.0: one job)
        "max_epochs": _float(run.max_epochs), "max_seconds": float(run.max_seconds),
        "tol": float(run.tol), "eval_every": _float(run.eval_every),
        "eval_per_decade": int(run.eval_per_decade or 0),
    }


def output_spec(output) -> dict:
    """The spec of a figure or table job (:class:`~pdsparse.repro.plan.Output`): its
    paper's builder and the builder's arguments."""
    # the plan's command is shell text (a flag and its quoted values per element): the
    # builder's argv is that text split as the shell split it
    return {"paper": output.paper, "builder": output.command[0],
            "args": shlex.split(" ".join(output.command[1:]))}


def run_key(run) -> str:
    """A run job's key: ``paper/experiment/problem/solver/options`` (its trace's path below
    results/runs/)."""
    return "/".join(run.key)


def plan_document(plans: Mapping[str, Any], registry: str | Path,
                  raw_file: Callable[[str], str], references: Mapping[str, Any]) -> dict:
    """Every planned job's spec, ``{kind: {key: spec}}`` (:data:`KINDS`): what the rules'
    ``pdsparse job KIND KEY`` read from the file :func:`write_plan` makes."""
    doc: dict[str, dict[str, dict]] = {kind: {} for kind in KINDS}
    for plan in plans.values():
        for key, data in plan.data.items():
            doc["prepare"][key] = prepare_spec(data, registry, raw_file)
        for tag, spec in plan.stats.items():
            doc["stats"][tag] = stats_spec(spec)
        for tag, problem in plan.problems.items():
            doc["reference"][tag] = reference_spec(tag, problem, references[tag])
        for run in plan.runs:
            doc["run"][run_key(run)] = run_spec(run)
        for out in plan.outputs:
            doc["output"][f"{out.paper}/{out.name}"] = output_spec(out)
    return doc


def write_plan(doc: Mapping[str, Any], directory: str | Path = PLAN_DIR, keep: int = 20) -> Path:
    """Write the plan document once, named by its content (``plan-<sha256[:16]>.json``), so
    that a second Snakemake invocation with another config (a dry run beside a running
    one) never changes the file a running job reads; keeps the ``keep`` newest."""
    from pdsparse.io import atomic_path

    text = json.dumps(doc, sort_keys=True, indent=1, allow_nan=False) + "\n"
    directory = Path(directory)
    path = directory / f"plan-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if path.is_file():
        os.utime(path)
    else:
        directory.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(text)
    old = sorted(directory.glob("plan-*.json"), key=lambda p: p.stat().st_mtime)[:-keep]
    for stale in old:
        stale.unlink(missing_ok=True)
    return path


def load_job(kind: str, key: str, plan: str | Path | None = None) -> dict:
    """The spec of job ``kind`` ``key`` in the plan file ``plan`` (default: ``$PDSPARSE_PLAN``,
    which the workflow sets); errors name the file and the key."""
    from pdsparse.errors import ConfigError

    if kind not in KINDS:
        raise ConfigError(f"job kind {kind!r}: expected one of {', '.join(KINDS)}")
    if plan is None:
        plan = os.environ.get(PLAN_ENV)
        if not plan:
            raise ConfigError(f"no plan file: give --plan FILE or set {PLAN_ENV} (the workflow "
                              "sets it to the plan it wrote, .snakemake/pdsparse/plan-*.json)")
    try:
        doc = json.loads(Path(plan).read_text())
    except OSError as exc:
        raise ConfigError(f"plan file {plan}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"plan file {plan}: not JSON ({exc})") from None
    jobs = doc.get(kind, {})
    if key not in jobs:
        near = difflib.get_close_matches(key, list(jobs), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ConfigError(f"plan file {plan}: no {kind} job {key!r}{hint}")
    return jobs[key]


# --------------------------------------------------------------------------- running a job
# One implementation per kind, for the workflow (``pdsparse job KIND KEY``: the spec from the
# plan file) and for a person (``pdsparse prepare|stats|reference|run`` with flags: the
# command line builds the same spec). ``say`` prints a line on stderr.


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def registry_spec(registry: str | Path, name: str):
    """The entry ``name`` of the registry file ``registry``; an error lists the known ones."""
    from pdsparse.data.registry import load_registry
    from pdsparse.errors import ConfigError

    specs = load_registry(registry)
    if name not in specs:
        raise ConfigError(
            f"{registry}: no data set named {name!r}; known: {', '.join(sorted(specs))}")
    return specs[name]


def raw_spec(registry: str | Path, name: str, raw: Path):
    """The registry entry of ``name``, or, for one's own file that has none, an entry made
    from the file itself (its name, compression, and task from its labels; no checksum,
    shape or label counts to check), said on stderr."""
    from pdsparse.data.libsvm import scan_labels
    from pdsparse.data.registry import load_registry, parse_registry

    specs = load_registry(registry) if Path(registry).is_file() else {}
    if name in specs:
        return specs[name]
    labels = scan_labels(raw)
    task = "binary" if len(labels) <= 2 else "multiclass"
    _say(f"pdsparse prepare: {name!r} is not in the registry {registry}: preparing {raw} as it "
         f"is ({len(labels)} labels: {task}; no checksum, shape or label counts to check)")
    return parse_registry({"datasets": {name: {"path": str(raw), "task": task}}},
                          f"--raw {raw}")[name]


def prepare_job(spec: Mapping[str, Any], out: str | Path) -> None:
    """Prepare a data set (:func:`prepare_spec`) into ``out``."""
    from pdsparse.data.prepare import prepare, prepare_synthetic
    from pdsparse.repro.output import require_file

    recipe = recipe_of(spec["recipe"])
    source = spec["source"]
    if "generator" in source:
        ds = prepare_synthetic(spec["dataset"], source["generator"], dict(source["params"]),
                               source["seed"], recipe, out)
    else:
        raw = require_file(source["raw"], "raw file")
        entry = raw_spec(source["registry"], spec["dataset"], raw)
        test = None
        if recipe.test_file is not None:
            test = (require_file(source["test_raw"], "test raw file"),
                    registry_spec(source["registry"], recipe.test_file))
        ds = prepare(raw, entry, recipe, out, test=test)
    test = f" + {ds.n_test} test rows" if ds.n_test else ""
    kind = " dense" if ds.dense else ""
    _say(f"{ds.name}: n={ds.n} d={ds.d} nnz={ds.nnz}{kind}{test} [{recipe.tag()}] -> {out}")


def _load(path: str | Path):
    from pdsparse.data.store import load_dataset
    from pdsparse.repro.output import require_file

    return load_dataset(require_file(path, "data file"))


def _write(df, path: str | Path, arguments: Mapping[str, Any], sources=()) -> None:
    from pdsparse.repro.traces import provenance, write_frame

    write_frame(df, path, provenance(arguments), sources)


def stats_job(spec: Mapping[str, Any], data: str | Path, out: str | Path | None,
              arguments: Mapping[str, Any]) -> None:
    """Face-Off's statistics of a prepared data set (:func:`stats_spec`), printed, and
    written to ``out`` (none, or "-": printed only)."""
    import pandas as pd

    from pdsparse.stats import dataset_stats, format_summary

    row = dataset_stats(_load(data), spec["l2"], spec["beta"], spec["normalization"],
                        name=spec["dataset"])
    print(format_summary(row))
    if out not in (None, "-"):
        _write(pd.DataFrame([row]), out, arguments)


def reference_job(spec: Mapping[str, Any], data: str | Path, out: str | Path,
                  arguments: Mapping[str, Any]) -> None:
    """P* of a problem (:func:`reference_spec`), certified, into ``out``."""
    import pandas as pd

    from pdsparse.problem import Problem, ProblemKey
    from pdsparse.reference import reference_record, reference_solution

    ds = _load(data)
    dataset = spec["dataset"] or ds.name
    key = ProblemKey(dataset, spec["loss"], spec["penalty"], dict(spec["params"]))
    problem = Problem.from_spec(key, ds)
    ref = reference_solution(problem, rtol=spec["rtol"], max_epochs=spec["max_epochs"],
                             max_seconds=spec["max_seconds"],
                             progress=lambda line: _say(f"pdsparse reference: {line}"))
    tag = spec["problem"] or key.tag()
    _write(pd.DataFrame([reference_record(problem, ref, dataset, tag)]), out, arguments)
    _say(f"{tag}: P* = {ref.p_star:.17g} (gap {ref.gap:.2e}, {ref.method})")


def run_job(spec: Mapping[str, Any], data: str | Path, reference: str | Path,
            out: str | Path, arguments: Mapping[str, Any], quiet: bool = False) -> None:
    """A solver configuration on a problem at every seed (:func:`run_spec`): one trace file."""
    from pdsparse.repro.output import require_file
    from pdsparse.repro.run import RunSpec, execute

    require_file(reference, "reference file")
    seeds = list(spec["seeds"])
    fields = {f.name for f in dataclasses.fields(RunSpec)}
    given = {k: v for k, v in spec.items() if k in fields}
    if not given.get("dataset"):
        given["dataset"] = _load(data).name
    run = RunSpec(**given, seed=seeds[0])

    def show(seed: int, row: dict) -> None:
        status = f"  {row['status']}" if row["status"] else ""
        _say(f"[{run.solver} seed {seed}] epoch {row['epoch']:.2f}  time {row['time_s']:.3f} s"
             f"  gap {row['gap']:.2e}  P {row['primal']:.6g}{status}")

    from pdsparse.repro.traces import provenance

    results = execute(run, require_file(data, "data file"), reference, out,
                      provenance(arguments), seeds=seeds, progress=None if quiet else show)
    options = "/".join(v for v in run.option_columns.values() if v != "none")
    for seed, result in zip(seeds, results, strict=True):
        last = result.trace.iloc[-1]
        _say(f"{run.dataset} {run.solver} {options} seed={seed}: "
             f"{result.status} after {last['epoch']:.3g} epochs, "
             f"P - P* = {float(last['primal']) - result.p_star:.3e}, gap {last['gap']:.3e}")


def output_job(spec: Mapping[str, Any], out: Sequence[str]) -> list[str]:
    """A figure or table (:func:`output_spec`): its builder with its arguments."""
    from pdsparse.repro.output import make_output

    return make_output(spec["paper"], spec["builder"], [*spec["args"], "--out", *out])


# ------------------------------------------------------------------------------ resources


def dataset_nnz(data, registry: Mapping[str, Any]) -> int:
    """nnz(A) of a DataSpec for the memory of a job (:func:`pdsparse.repro.estimate.data_shape`).
    A dense map (rf) counts n * D / 16: a dense entry takes 8 bytes where the rules budget
    100-250 bytes per sparse nonzero, so this still over-estimates (Mnist-RF, 4.6 GB of data:
    about 36 M "nonzeros", i.e. 5.4 GB for a run at 150 bytes each)."""
    from pdsparse.repro.estimate import data_shape

    nnz = data_shape(data, registry).nnz
    return nnz // 16 if data.recipe.features == "rf" else nnz


def memory_mb(nnz: int | None, bytes_per_nnz: float, base: float = 1000,
              attempt: int = 1) -> int:
    """A job's memory: ``base`` MB plus ``bytes_per_nnz`` per stored nonzero of its data
    (10⁶ when the job has no data set), times the attempt (a job killed for memory is
    retried with more)."""
    nnz = 10**6 if nnz is None else nnz
    return int(attempt * (base + bytes_per_nnz * nnz / 1e6))


# ------------------------------------------------------------------------------- messages


def is_dry_run(argv: Sequence[str]) -> bool:
    """Whether Snakemake was started with -n / --dry-run (also combined, e.g. -np): the
    Snakefile is parsed before Snakemake tells the workflow (workflow.dryrun is set later)."""
    return any(a in ("--dry-run", "--dryrun") or re.fullmatch(r"-[A-Za-z]*n[A-Za-z]*", a)
               for a in argv)


def stale_message(moved: Sequence[str], skipped: Iterable[tuple[str, str]]) -> str:
    """Why outputs were set aside: the data sets *this* run's config names that are not
    available (a set given with --config in an earlier run is not part of this one)."""
    names = sorted({name for _, name in skipped})
    why = (f"this run's config names data not available here ({', '.join(names)})"
           if names else "this run's config does not plan them")
    return (f"pdsparse: outputs no longer planned were set aside, not deleted: {why}; data a "
            "previous run was given with --config or --configfile counts only when given "
            "again:\n" + "\n".join(moved))


def skipped_summary(skipped: Sequence[tuple[str, str]]) -> str:
    """One short line on skipped paper items, repeated at the end of a run ("" if none)."""
    if not skipped:
        return ""
    items = ", ".join(f"{item} ({name})" for item, name in skipped)
    return (f"pdsparse: skipped {len(skipped)} paper item(s) for lack of data: {items}. "
            "See docs/workflow.md § Data for how to provide it.")


def report_mismatch_message(argv: Sequence[str], planned: str | Path,
                            targets: Iterable[str]) -> str:
    """One line when ``snakemake --report`` plans other items than the last run made (whose
    targets the file ``planned`` records), else "" (also without a record of the run, or
    when not building a report)."""
    if not any(a == "--report" or a.startswith("--report=") for a in argv):
        return ""
    try:
        made = set(json.loads(Path(planned).read_text()))
    except (OSError, ValueError):
        return ""
    now = set(targets)
    if now == made:
        return ""
    return (f"pdsparse: this report plans {len(now - made)} output(s) the last run did not "
            f"make and leaves out {len(made - now)} it made: its data settings differ from "
            "the run's (build it with the run's, e.g. the same PDSPARSE_DATA_MIRROR); "
            "Snakemake's 'Missing metadata' warnings that follow come from that")
