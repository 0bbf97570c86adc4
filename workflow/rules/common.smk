# Shared helpers: config validation, the papers' plans (which data sets, problems, runs,
# figures and tables), and the lookups the generic rules make by the file they build. No
# rules here, and no decisions: the plans are pdsparse.repro.papers', a job's arguments,
# resources and messages pdsparse.repro.jobs' (both unit-tested); this file binds them to
# the run's config and globals.

import functools
import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

try:
    import pdsparse.repro.config as pdcfg
except ImportError:  # package not installed: use the source tree next to this workflow
    sys.path.insert(0, str(Path(workflow.basedir) / "src"))
    import pdsparse.repro.config as pdcfg

from pdsparse.repro import scorecard as _scorecard
from pdsparse.errors import ConfigError
from pdsparse.repro import jobs
from pdsparse.repro.estimate import estimate, format_estimate, plan_costs, shared_references
from pdsparse.io import atomic_path
from pdsparse.repro.plan import reference_path
from pdsparse.solvers import SOLVERS
from snakemake.exceptions import WorkflowError

SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
# where workflow/envs/pdsparse.post-deploy.sh installs the package from (--sdm conda); set
# here for it, not required from the user (so no envvars directive)
SOURCE_ENV = "PDSPARSE_SOURCE"
os.environ[SOURCE_ENV] = str(Path(workflow.basedir).resolve())

# Rules call the `pdsparse` console script. Use the one of the environment Snakemake runs
# in, even when that environment is not activated (e.g. `.venv/bin/snakemake ...`); without
# an installed script, fall back to `python -m pdsparse.cli` on the source tree.
_BIN = Path(sys.executable).parent
if (_BIN / "pdsparse").exists():
    _PREFIX = f"set -euo pipefail; export PATH={shlex.quote(str(_BIN))}:$PATH; "
    shell.prefix(_PREFIX.replace("{", "{{").replace("}", "}}"))
elif shutil.which("pdsparse") is None:
    _SRC = shlex.quote(str(Path(workflow.basedir) / "src"))
    _FALLBACK = (
        "set -euo pipefail; pdsparse() { "
        f"PYTHONPATH={_SRC}:${{PYTHONPATH:-}} {shlex.quote(sys.executable)} -m pdsparse.cli"
        ' "$@"; }; '
    )
    # shell.prefix() formats its argument like a rule's shell command: double the braces.
    shell.prefix(_FALLBACK.replace("{", "{{").replace("}", "}}"))


def validate_workflow_config(cfg):
    """Validate against the schema with messages naming each bad key (pdsparse.repro.config)."""
    try:
        pdcfg.validate_config(cfg, SCHEMA, source="workflow config")
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None


def _alternatives(names):
    """Regex matching exactly one of ``names`` (never matches when there are none)."""
    names = sorted(set(names), key=len, reverse=True)
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def _warn(text):
    if text and workflow.is_main_process:
        print(text, file=sys.stderr, flush=True)


def setup_plans():
    """Load the registry, decide data availability and build every paper's plan (globals)."""
    global DATA, RAW_DIR, PROCESSED_DIR, REGISTRY, MIRROR, PLANS, RAW_NAMES
    global DATASETS, PROBLEMS, STATS, RUNS, OUTPUTS, REFERENCE
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.data.registry import load_registry
    from pdsparse.repro.papers import plans

    DATA = config["data"]
    RAW_DIR = os.path.normpath(DATA["raw_dir"])
    PROCESSED_DIR = os.path.normpath(DATA["processed_dir"])
    try:
        REGISTRY = load_registry(DATA["registry"])
        MIRROR = resolve_mirror(DATA["mirror"])

        def available(name):
            status = pdcfg.data_availability(REGISTRY[name], RAW_DIR, MIRROR, DATA["download"])
            return status is not None

        PLANS = plans(config, REGISTRY, available)
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None
    # the lookups of the generic rules, by the key in the file name
    DATASETS, PROBLEMS, STATS, RUNS, OUTPUTS = {}, {}, {}, {}, {}
    for plan in PLANS.values():
        DATASETS.update(plan.data)
        PROBLEMS.update(plan.problems)
        STATS.update(plan.stats)
        RUNS.update({run.key: run for run in plan.runs})
        OUTPUTS.update({(o.paper, o.name): o for o in plan.outputs})
    # a problem shared by papers gets the strictest reference settings
    REFERENCE = shared_references(PLANS)
    _export_data_source()
    _export_commit()
    # raw file name in data/raw -> registry name (the fetch rule's output pattern)
    RAW_NAMES = {Path(raw_file(name)).name: name for name in REGISTRY}
    skipped = [s for plan in PLANS.values() for s in plan.skipped]
    if skipped:
        _warn(pdcfg.skipped_message(skipped, REGISTRY, RAW_DIR))


def _export_data_source():
    """Hand the data source (mirror, download) to fetch jobs through the environment.

    Not as params: Snakemake re-runs a job whose params changed and deletes its output
    first, so a run without the mirror after one with it would delete verified raw files.
    Where a raw file came from is no part of what it is (the registry's checksums are).
    """
    from pdsparse.data.fetch import DOWNLOAD_ENV, MIRROR_ENV

    if MIRROR is not None:
        os.environ[MIRROR_ENV] = str(MIRROR)
    else:
        os.environ.pop(MIRROR_ENV, None)
    os.environ[DOWNLOAD_ENV] = "1" if DATA["download"] else "0"


def _export_commit():
    """Read the code's git commit and whether the tree is dirty once per workflow run; jobs
    find them in the environment (pdsparse.repro.provenance) instead of each starting git."""
    from pdsparse.repro.provenance import COMMIT_ENV, DIRTY_ENV, git_commit, git_dirty

    if os.environ.get(COMMIT_ENV):  # given by the user: so is its state, or it is unknown
        return
    os.environ[COMMIT_ENV] = git_commit(workflow.basedir)
    dirty = git_dirty(workflow.basedir)
    if dirty is not None:
        os.environ[DIRTY_ENV] = "1" if dirty else "0"


def is_dry_run(argv=None):
    return jobs.is_dry_run(sys.argv[1:] if argv is None else argv)


def print_estimate():
    """The plan's CPU hours and peak memory (pdsparse.repro.estimate), for `snakemake -n`."""
    cores = workflow.cores if isinstance(workflow.cores, int) and workflow.cores > 0 else 2
    jobs = plan_costs(PLANS, REGISTRY, PROCESSED_DIR, RAW_DIR)
    _warn(format_estimate(estimate(jobs, cores)))


def keep_raw_files():
    """Link raw files fetched by older versions into data/raw/.verified (see fetch.keep)."""
    from pdsparse.data.fetch import keep, kept_path

    for name, spec in REGISTRY.items():
        raw = Path(raw_file(name))
        if raw.is_file() and not kept_path(spec, RAW_DIR).exists():
            keep(raw, spec, RAW_DIR)


def set_aside_stale_outputs():
    """Move the outputs of paper items dropped for lack of data to results/stale/.

    A figure or table whose data set is gone must not stay behind looking current; it is
    kept, never deleted. Items still planned are redrawn by their rules (inputs changed).
    """
    moved = []
    for path in [p for plan in PLANS.values() for p in plan.existing_stale()]:
        dest = Path("results/stale") / Path(path).relative_to("results")
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dest)
        moved.append(f"  {path} -> {dest}")
    if moved:
        _warn(stale_message(moved))


def _skipped():
    return [s for plan in PLANS.values() for s in plan.skipped]


def stale_message(moved):
    return jobs.stale_message(moved, _skipped())


def skipped_summary():
    """One short line on skipped paper items, repeated at the end of a run."""
    return jobs.skipped_summary(_skipped())


# ---------------------------------------------------------------------------------- paths


def raw_file(name):
    from pdsparse.data.fetch import raw_path

    return str(raw_path(REGISTRY[name], RAW_DIR))


def processed_file(data):
    """The prepared file of a DataSpec (or of its key)."""
    key = data if isinstance(data, str) else data.key
    return f"{PROCESSED_DIR}/{key}.npz"


def reference_file(tag):
    return reference_path(tag)


def all_targets():
    """Everything `snakemake` builds by default: every paper's figures, tables, aggregates
    and statistics."""
    return [t for plan in PLANS.values() for t in plan.targets()]


PLANNED = ".snakemake/pdsparse-planned.json"
"""The targets of the last successful run: a report built with other data settings plans
other items, and Snakemake then warns about each one's metadata (issue 20)."""


def record_planned():
    Path(PLANNED).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(PLANNED) as tmp:
        tmp.write_text(json.dumps(sorted(set(all_targets()))))


def report_mismatch_message(argv=None):
    return jobs.report_mismatch_message(sys.argv if argv is None else argv, PLANNED, all_targets())


# the jobs' arguments (pdsparse.repro.jobs, tested there against the command line's parser)


def prepare_args(data):
    return jobs.prepare_args(data, DATA["registry"], raw_file)


def stats_args(spec):
    return jobs.stats_args(spec)


def reference_args(tag):
    return jobs.reference_args(tag, PROBLEMS[tag], REFERENCE[tag])


def run_args(run):
    return jobs.run_args(run)


def caption(wildcards):
    """The caption of a figure or table, rendered from its paper's captions/<name>.rst."""
    from pdsparse.repro.papers import render_caption

    return render_caption(OUTPUTS[(wildcards.paper, wildcards.name)], config)


# --------------------------------------------------------------------------------- report
# The report (workflow/rules/report.smk): captions, categories and labels of the figures and
# tables, read when `snakemake --report` is made. A caption is a derived param (a function of
# `input`) and labels are report-only, so a caption edit or a new scorecard reruns no job.

SCORECARD_CSV = "results/scorecard.csv"


def table_pages():
    """The HTML page of every planned table (the report shows these)."""
    return [f"results/report/{p}/{n}.html" for (p, n), o in OUTPUTS.items() if o.kind == "table"]


def report_targets():
    """The scorecard and the table pages: default targets, so that `--report` finds them."""
    return ["results/SCORECARD.md", SCORECARD_CSV, "results/scorecard.html", *table_pages()]


def scorecard_inputs(wildcards):
    """What the scorecard reads: every planned table, aggregate and statistics file."""
    files = []
    for plan in PLANS.values():
        files += [o.files[0] for o in plan.outputs if o.kind == "table"]
        files += [f"results/{plan.paper}/{e}.parquet" for e in plan.experiments]
        files += [f"results/stats/{tag}.parquet" for tag in plan.stats]
    return files


@functools.lru_cache(maxsize=4)
def _scorecard_rows(mtime):
    return _scorecard.read_rows(SCORECARD_CSV)


def scorecard_rows():
    """The rows of results/scorecard.csv as it is now ([] before the first run)."""
    path = Path(SCORECARD_CSV)
    return _scorecard_rows(path.stat().st_mtime_ns if path.is_file() else None)


def report_category(wildcards):
    return _scorecard.PAPER_TITLES.get(wildcards.paper, wildcards.paper)


def report_subcategory(wildcards):
    return _scorecard.item_title(wildcards.paper, wildcards.name)


def report_labels(wildcards, output):
    """The file (figure1.png, table2.html, table2.csv: distinct within an item), the item and
    its scorecard verdicts summed up."""
    labels = _scorecard.labels(scorecard_rows(), wildcards.paper, wildcards.name)
    return {"file": Path(output[0]).name, **labels}


def report_caption(wildcards, input):
    """Caption text (RST) of a figure or table: the template, then the scorecard rows."""
    rows = _scorecard.caption_rst(scorecard_rows(), wildcards.paper, wildcards.name)
    return f"{caption(wildcards)}\n\n{rows}\n"


def scorecard_labels(wildcards):
    rows = scorecard_rows()
    papers = sorted({r.paper for r in rows})
    return {
        "file": "scorecard.html",
        "item": "Scorecard: " + ", ".join(_scorecard.PAPER_TITLES.get(p, p) for p in papers),
        "agreement": _scorecard.summary(rows) if rows else "—",
    }


# ------------------------------------------------------------------------------ resources


def _data_of(wildcards):
    """The DataSpec a job works on, whatever its wildcards name (data, stats, problem, run)."""
    if "data" in wildcards.keys():
        return DATASETS[wildcards.data]
    if "stats" in wildcards.keys():
        return STATS[wildcards.stats].data
    if "problem" in wildcards.keys():
        return PROBLEMS[wildcards.problem].data
    if "rawfile" in wildcards.keys():
        return DATASETS.get(RAW_NAMES[wildcards.rawfile])
    return None


def mem_mb(bytes_per_nnz, base=1000):
    """Resource function: base MB plus ``bytes_per_nnz`` per stored nonzero of the data set."""

    def mem(wildcards, attempt=1):
        data = _data_of(wildcards)
        nnz = jobs.dataset_nnz(data, REGISTRY) if data is not None else None
        return jobs.memory_mb(nnz, bytes_per_nnz, base, attempt)

    return mem


def minutes(base):
    """Resource function: ``base`` minutes (a number or a function of the wildcards) times the
    attempt, so that a job killed past its runtime is retried with more time (``retries`` in
    profiles/slurm)."""

    def runtime(wildcards, attempt=1):
        return int(attempt * (base(wildcards) if callable(base) else base))

    return runtime


def run_of(wildcards):
    return RUNS[
        (
            wildcards.paper,
            wildcards.experiment,
            wildcards.problem,
            wildcards.solver,
            wildcards.options,
        )
    ]


# Names never contain "/"; every wildcard is restricted to what the plans know, so that a
# rule cannot match a stray path.
wildcard_constraints:
    paper=r"[a-z][a-z0-9_]*",
