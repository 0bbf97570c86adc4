# Shared helpers: config validation, the papers' plans (which data sets, problems, runs,
# figures and tables), and the lookups the generic rules make by the file they build. No
# rules here, and no decisions: the plans and their lookups are pdsparse.repro.workflow's,
# a job's spec, resources and messages pdsparse.repro.jobs' (both unit-tested); this file
# binds them to Snakemake (its config, errors, wildcards and shell) and to globals.

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
from pdsparse.io import atomic_path
from pdsparse.repro.workflow import WorkflowPlan
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
    """Build every paper's plan (pdsparse.repro.workflow.WorkflowPlan) and bind the lookups
    of the generic rules, by the key in a file name, to globals."""
    global W, DATA, RAW_DIR, PROCESSED_DIR, REGISTRY, PLANS, RAW_NAMES
    global DATASETS, PROBLEMS, STATS, RUNS, OUTPUTS, REFERENCE
    try:
        W = WorkflowPlan.load(config)
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None
    DATA, RAW_DIR, PROCESSED_DIR = config["data"], W.raw_dir, W.processed_dir
    REGISTRY, PLANS, RAW_NAMES = W.registry, W.plans, W.raw_names
    DATASETS, PROBLEMS, STATS, RUNS, OUTPUTS = W.datasets, W.problems, W.stats, W.runs, W.outputs
    REFERENCE = W.references  # a problem shared by papers: the strictest settings
    # what jobs find in the environment: the data source, the commit, the plan file
    for name, value in W.data_environment().items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _export_commit()
    # in a dry run too: `pdsparse job KIND KEY --show` then says what each job will be told
    os.environ[jobs.PLAN_ENV] = str(jobs.write_plan(W.jobs).resolve())
    _warn(W.skipped_warning())


def job_spec(kind, key):
    """A job's spec as its param (`pdsparse job KIND KEY` reads it from the plan file)."""
    return W.job_spec(kind, key)


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
    _warn(W.estimate(cores))
    plan = os.path.relpath(os.environ[jobs.PLAN_ENV])
    _warn(f"Every job's spec: {plan} (`pdsparse job KIND KEY --plan {plan} --show`).")


def keep_raw_files():
    W.keep_raw_files()


def set_aside_stale_outputs():
    _warn(W.set_aside_stale())


def skipped_summary():
    return W.skipped_summary()


# ---------------------------------------------------------------------------------- paths


def raw_file(name):
    return W.raw_file(name)


def processed_file(data):
    return W.processed_file(data)


def reference_file(tag):
    return W.reference_file(tag)


def all_targets():
    return W.targets()


PLANNED = ".snakemake/pdsparse-planned.json"
"""The targets of the last successful run: a report built with other data settings plans
other items, and Snakemake then warns about each one's metadata (issue 20)."""


def record_planned():
    Path(PLANNED).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(PLANNED) as tmp:
        tmp.write_text(json.dumps(sorted(set(all_targets()))))


def report_mismatch_message(argv=None):
    return jobs.report_mismatch_message(sys.argv if argv is None else argv, PLANNED, all_targets())


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
    return W.table_pages()


def report_targets():
    """The scorecard and the table pages: default targets, so that `--report` finds them."""
    return ["results/SCORECARD.md", SCORECARD_CSV, "results/scorecard.html", *table_pages()]


def scorecard_inputs(wildcards):
    return W.scorecard_inputs()


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


def mem_mb(bytes_per_nnz, base=1000):
    """Resource function: base MB plus ``bytes_per_nnz`` per stored nonzero of the data set."""

    def mem(wildcards, attempt=1):
        return W.memory_mb(dict(wildcards.items()), bytes_per_nnz, base, attempt)

    return mem


def minutes(base):
    """Resource function: ``base`` minutes (a number or a function of the wildcards) times the
    attempt, so that a job killed past its runtime is retried with more time (``retries`` in
    profiles/slurm)."""

    def runtime(wildcards, attempt=1):
        return int(attempt * (base(wildcards) if callable(base) else base))

    return runtime


def run_key(wildcards):
    """A run job's key: PAPER/EXPERIMENT/PROBLEM/SOLVER/OPTIONS (pdsparse.repro.jobs.run_key)."""
    return "/".join(
        (
            wildcards.paper,
            wildcards.experiment,
            wildcards.problem,
            wildcards.solver,
            wildcards.options,
        )
    )


def run_of(wildcards):
    return RUNS[tuple(run_key(wildcards).split("/"))]


# Names never contain "/"; every wildcard is restricted to what the plans know, so that a
# rule cannot match a stray path.
wildcard_constraints:
    paper=r"[a-z][a-z0-9_]*",
