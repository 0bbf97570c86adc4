"""A planned job as its rule runs it: the ``pdsparse`` arguments of each plan object, the
resources a job asks for, and the messages the workflow prints about its plan.

The workflow's ``common.smk`` binds these to the run's globals (the registry, the raw
directory, the plans) and does nothing else with them, so that what a job is told can be
tested without Snakemake: ``tests/test_jobs.py`` parses every planned job's arguments with
the command line's own parser and checks that the job receives the plan object it was made
from (the recipe, the problem, the solver's options, budgets and seeds).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pdsparse.repro.config import format_l2

__all__ = ["dataset_nnz", "is_dry_run", "memory_mb", "penalty_args", "prepare_args",
           "reference_args", "report_mismatch_message", "run_args", "skipped_summary",
           "stale_message", "stats_args"]


def _q(value: Any) -> str:
    return shlex.quote(str(value))


def prepare_args(data, registry: str | Path, raw_file: Callable[[str], str]) -> str:
    """``pdsparse prepare`` arguments of a :class:`~pdsparse.repro.plan.DataSpec` (registry
    file or generator, and its recipe); ``raw_file(name)``: a registry set's raw file."""
    if data.real:
        args = [f"--registry {_q(registry)}", f"--raw {_q(raw_file(data.name))}"]
    else:
        gen = data.generator
        args = [f"--generator {gen.kind}", f"--seed {gen.seed}"]
        args += [f"--param {_q(f'{k}={v}')}" for k, v in gen.params]
    recipe = data.recipe
    args += [f"--dataset {_q(data.name)}", f"--normalization {recipe.normalization}"]
    if isinstance(recipe.positive_class, tuple):  # a group of labels (PDBFW stand-ins)
        args.append(" ".join(["--positive-group", *map(_q, recipe.positive_class)]))
    elif recipe.positive_class is not None:
        args.append(f"--positive-class {_q(recipe.positive_class)}")
    if recipe.classes is not None:
        args.append(" ".join(["--classes", *map(_q, recipe.classes)]))
    # the DGPD fields (pdsparse.data.prepare.Recipe), only when they differ from the defaults,
    # so that a field added to the recipe changes no existing job's command (hence no rerun)
    if recipe.test_rows:
        args.append(f"--test-rows {recipe.test_rows}")
    if recipe.subsample is not None:
        args.append(f"--subsample {recipe.subsample}")
    if recipe.test_rows or recipe.subsample is not None:
        args.append(f"--split-seed {recipe.split_seed}")
    if recipe.test_file is not None:  # the test rows from a second registry file
        args.append(
            f"--test-file {_q(recipe.test_file)} --test-raw {_q(raw_file(recipe.test_file))}")
    if recipe.features is not None:
        size = "--n-features" if recipe.features == "rf" else "--n-grids"
        args += [f"--features {recipe.features}", f"{size} {recipe.map_size}",
                 f"--sigma {recipe.sigma!r}", f"--map-seed {recipe.map_seed}",
                 f"--input-scale {recipe.input_scale}"]
    return " ".join(args)


def stats_args(spec) -> str:
    """``pdsparse stats`` arguments of a :class:`~pdsparse.repro.plan.StatsSpec`."""
    args = [f"--dataset {_q(spec.data.name)}", f"--l2 {_q(format_l2(spec.l2))}",
            f"--beta {spec.beta!r}"]
    if spec.normalization:
        args.append(f"--normalization {spec.normalization}")
    return " ".join(args)


def penalty_args(problem) -> str:
    """``--l2`` (and ``--l1`` when set) of a ProblemSpec's elastic net; ``--penalty``,
    ``--radius`` and ``--l2`` of a ball."""
    params = dict(problem.params)
    args = f"--l2 {_q(format_l2(problem.l2))}"
    if problem.penalty != "elastic_net":
        radius = format_l2(params["radius"])
        return f"--penalty {problem.penalty} --radius {_q(radius)} {args}"
    l1 = params.get("l1", 0.0)
    if l1 not in (0, 0.0, "0"):
        args += f" --l1 {_q(format_l2(l1))}"
    return args


def reference_args(tag: str, problem, ref: Mapping[str, Any]) -> str:
    """``pdsparse reference`` arguments of problem ``tag`` with its reference settings
    (``rtol``, ``max_epochs``, ``max_seconds``: the strictest of the papers that share it)."""
    return (f"--dataset {_q(problem.data.name)} --problem {_q(tag)} --loss {problem.loss}"
            f" {penalty_args(problem)} --rtol {ref['rtol']!r}"
            f" --max-epochs {ref['max_epochs']!r} --max-seconds {ref['max_seconds']!r}")


def run_args(run) -> str:
    """``pdsparse run`` arguments of a :class:`~pdsparse.repro.plan.RunGroup` (every seed)."""
    # The option columns hold "none" for the options of other solvers and for a late option
    # at its default: those are left out, so that a solver or an option added to the
    # registry changes no existing job's command (hence no rerun). "none" that is a value of
    # this solver's own, unlike its default (SFW's, SCGS's, STORC's uncapped minibatch
    # batch_cap=none), is passed: dropping it ran the default instead.
    from pdsparse.solvers import get_solver

    defaults = get_solver(run.solver).option_columns(None)
    options = " ".join(f"--option {_q(f'{k}={v}')}" for k, v in run.options
                       if v != "none" or defaults.get(k, "none") != "none")
    return (
        f"--experiment {_q(run.experiment)} --dataset {_q(run.problem.data.name)}"
        f" --problem {_q(run.problem.tag)}"
        f" --solver {run.solver} {options} --seed {' '.join(map(str, run.seeds))}"
        f" --loss {run.problem.loss} {penalty_args(run.problem)}"
        f" --max-epochs {run.max_epochs!r} --max-seconds {run.max_seconds!r}"
        f" --tol {run.tol!r} --eval-every {run.eval_every!r}"
        + (f" --eval-per-decade {run.eval_per_decade}" if run.eval_per_decade else "")
    )


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
