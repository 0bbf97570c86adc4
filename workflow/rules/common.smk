# Shared helpers: config validation, the papers' plans (which data sets, problems, runs,
# figures and tables), and the lookups the generic rules make by the file they build. No
# rules here; the decisions live in pdsparse.repro.papers (unit-tested).

import functools
import importlib
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
from pdsparse.repro.estimate import data_shape, estimate, format_estimate, plan_costs, shared_references
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
    """Whether Snakemake was started with -n / --dry-run (also combined, e.g. -np): the
    Snakefile is parsed before Snakemake tells the workflow (workflow.dryrun is set later)."""
    argv = sys.argv[1:] if argv is None else argv
    return any(
        a in ("--dry-run", "--dryrun") or re.fullmatch(r"-[A-Za-z]*n[A-Za-z]*", a) for a in argv
    )


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


def stale_message(moved):
    """Why outputs were set aside: the data sets *this* run's config names that are not
    available (a set given with --config in an earlier run is not part of this one)."""
    skipped = [s for plan in PLANS.values() for s in plan.skipped]
    names = sorted({name for _, name in skipped})
    why = (
        f"this run's config names data not available here ({', '.join(names)})"
        if names
        else "this run's config does not plan them"
    )
    return (
        f"pdsparse: outputs no longer planned were set aside, not deleted: {why}; data a "
        "previous run was given with --config or --configfile counts only when given "
        "again:\n" + "\n".join(moved)
    )


def skipped_summary():
    """One short line on skipped paper items, repeated at the end of a run."""
    skipped = [s for plan in PLANS.values() for s in plan.skipped]
    if not skipped:
        return ""
    items = ", ".join(f"{item} ({name})" for item, name in skipped)
    return (
        f"pdsparse: skipped {len(skipped)} paper item(s) for lack of data: {items}. "
        "See docs/workflow.md § Data for how to provide it."
    )


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
    """One line when ``snakemake --report`` plans other items than the last run made, else
    "" (also without a record of the run, or when not building a report)."""
    argv = sys.argv if argv is None else argv
    if not any(a == "--report" or a.startswith("--report=") for a in argv):
        return ""
    try:
        made = set(json.loads(Path(PLANNED).read_text()))
    except (OSError, ValueError):
        return ""
    now = set(all_targets())
    if now == made:
        return ""
    return (
        f"pdsparse: this report plans {len(now - made)} output(s) the last run did not make "
        f"and leaves out {len(made - now)} it made: its data settings differ from the run's "
        "(build it with the run's, e.g. the same PDSPARSE_DATA_MIRROR); Snakemake's 'Missing "
        "metadata' warnings that follow come from that"
    )


def _q(value):
    return shlex.quote(str(value))


def prepare_args(data):
    """`pdsparse prepare` arguments of a DataSpec (registry file or generator, recipe)."""
    if data.real:
        args = [f"--registry {_q(DATA['registry'])}", f"--raw {_q(raw_file(data.name))}"]
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
    # the DGPD fields (pdsparse.data.prepare.Recipe), only when they differ from the defaults
    if recipe.test_rows:
        args.append(f"--test-rows {recipe.test_rows}")
    if recipe.subsample is not None:
        args.append(f"--subsample {recipe.subsample}")
    if recipe.test_rows or recipe.subsample is not None:
        args.append(f"--split-seed {recipe.split_seed}")
    if recipe.test_file is not None:  # the test rows from a second registry file
        args.append(
            f"--test-file {_q(recipe.test_file)} --test-raw {_q(raw_file(recipe.test_file))}"
        )
    if recipe.features is not None:
        size = "--n-features" if recipe.features == "rf" else "--n-grids"
        args += [
            f"--features {recipe.features}",
            f"{size} {recipe.map_size}",
            f"--sigma {recipe.sigma!r}",
            f"--map-seed {recipe.map_seed}",
            f"--input-scale {recipe.input_scale}",
        ]
    return " ".join(args)


def stats_args(spec):
    args = [
        f"--dataset {_q(spec.data.name)}",
        f"--l2 {_q(pdcfg.format_l2(spec.l2))}",
        f"--beta {spec.beta!r}",
    ]
    if spec.normalization:
        args.append(f"--normalization {spec.normalization}")
    return " ".join(args)


def penalty_args(problem):
    """`--l2` (and `--l1` when set) of a ProblemSpec's elastic net; `--penalty`, `--radius`
    and `--l2` of a ball."""
    params = dict(problem.params)
    args = f"--l2 {_q(pdcfg.format_l2(problem.l2))}"
    if problem.penalty != "elastic_net":
        radius = pdcfg.format_l2(params["radius"])
        return f"--penalty {problem.penalty} --radius {_q(radius)} {args}"
    l1 = params.get("l1", 0.0)
    if l1 not in (0, 0.0, "0"):
        args += f" --l1 {_q(pdcfg.format_l2(l1))}"
    return args


def reference_args(tag):
    problem, ref = PROBLEMS[tag], REFERENCE[tag]
    return (
        f"--dataset {_q(problem.data.name)} --problem {_q(tag)} --loss {problem.loss}"
        f" {penalty_args(problem)} --rtol {ref['rtol']!r}"
        f" --max-epochs {ref['max_epochs']!r} --max-seconds {ref['max_seconds']!r}"
    )


def run_args(run):
    # the solver's own options only: a solver added to the registry must not change the
    # job strings (hence rerun) every existing run
    options = " ".join(f"--option {_q(f'{k}={v}')}" for k, v in run.options if v != "none")
    return (
        f"--experiment {_q(run.experiment)} --dataset {_q(run.problem.data.name)}"
        f" --problem {_q(run.problem.tag)}"
        f" --solver {run.solver} {options} --seed {' '.join(map(str, run.seeds))}"
        f" --loss {run.problem.loss} {penalty_args(run.problem)}"
        f" --max-epochs {run.max_epochs!r} --max-seconds {run.max_seconds!r}"
        f" --tol {run.tol!r} --eval-every {run.eval_every!r}"
        + (f" --eval-per-decade {run.eval_per_decade}" if run.eval_per_decade else "")
    )


def caption(wildcards):
    """The caption of a figure or table, rendered from its paper's captions/<name>.rst."""
    import jinja2
    from types import SimpleNamespace

    out = OUTPUTS[(wildcards.paper, wildcards.name)]
    if not out.caption:
        return ""
    from pdsparse.repro.papers import caption_path

    text = caption_path(out.caption).read_text()
    # `paper`: what the paper prints (pdsparse.repro.papers.<paper>.values), quoted by the templates
    values = importlib.import_module(f"pdsparse.repro.papers.{wildcards.paper}.values")
    return jinja2.Template(text).render(snakemake=SimpleNamespace(config=config), paper=values)


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


def dataset_nnz(data):
    """nnz(A) of a DataSpec for the memory of a job (pdsparse.repro.estimate.data_shape). A dense
    map (rf) counts n * D / 16: a dense entry takes 8 bytes where the rules budget 100-250
    bytes per sparse nonzero, so this still over-estimates (Mnist-RF, 4.6 GB of data: about
    36 M "nonzeros", i.e. 5.4 GB for a run at 150 bytes each)."""
    nnz = data_shape(data, REGISTRY).nnz
    return nnz // 16 if data.recipe.features == "rf" else nnz


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
        nnz = dataset_nnz(data) if data is not None else 10**6
        return int(attempt * (base + bytes_per_nnz * nnz / 1e6))

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
