# Shared helpers: config validation, the plan (which data sets, runs and paper items), path
# and parameter functions. No rules here; the decisions live in pdsparse.config (unit-tested).

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

try:
    import pdsparse.config as pdcfg
except ImportError:  # package not installed: use the source tree next to this workflow
    sys.path.insert(0, str(Path(workflow.basedir) / "src"))
    import pdsparse.config as pdcfg

from pdsparse.errors import ConfigError
from snakemake.exceptions import WorkflowError


SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"

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
    """Validate against the schema with messages naming each bad key (pdsparse.config)."""
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


def setup_plan():
    """Load the registry, decide data availability and build the Face-Off plan (globals)."""
    global DATA, FO, RAW_DIR, PROCESSED_DIR, REGISTRY, MIRROR, PLAN, L2TAG, RAW_NAMES, SEEDS
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.data.registry import load_registry

    DATA = config["data"]
    FO = config["faceoff"]
    SEEDS = [int(s) for s in FO["seeds"]]
    RAW_DIR = os.path.normpath(DATA["raw_dir"])
    PROCESSED_DIR = os.path.normpath(DATA["processed_dir"])
    try:
        REGISTRY = load_registry(DATA["registry"])
        MIRROR = resolve_mirror(DATA["mirror"])

        def available(name):
            status = pdcfg.data_availability(
                REGISTRY[name], RAW_DIR, MIRROR, DATA["download"]
            )
            return status is not None

        PLAN = pdcfg.plan_faceoff(config, REGISTRY, available)
        L2TAG = pdcfg.l2_tag(FO["l2"])
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None
    _export_data_source()
    _export_commit()
    # raw file name in data/raw -> registry name (the fetch rule's output pattern)
    RAW_NAMES = {Path(raw_file(name)).name: name for name in REGISTRY}
    if PLAN.skipped:
        _warn(pdcfg.skipped_message(PLAN, REGISTRY, RAW_DIR))


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
    """Read the code's git commit once per workflow run; jobs find it in the environment
    (pdsparse.traces.git_commit) instead of each starting git."""
    from pdsparse.traces import COMMIT_ENV, git_commit

    os.environ.setdefault(COMMIT_ENV, git_commit(workflow.basedir))


def keep_raw_files():
    """Link raw files fetched by older versions into data/raw/.verified (see fetch.keep)."""
    from pdsparse.data.fetch import keep, kept_path

    for name, spec in REGISTRY.items():
        raw = Path(raw_file(name))
        if raw.is_file() and not kept_path(spec, RAW_DIR).exists():
            keep(raw, spec, RAW_DIR)


def stale_outputs():
    """Existing outputs of paper items the plan dropped because their data is unavailable.

    A figure or table whose data set is gone must not stay behind looking current; the
    items still planned are redrawn by their rules (their inputs changed).
    """
    panels = FO["figure1"]["panels"]
    stale = [aggregate_file(f"figure1{k}") for k in panels if k not in PLAN.panels]
    if not PLAN.panels:
        stale += [f"{FIGURES}/figure1.png", f"{FIGURES}/figure1.pdf"]
    if not PLAN.table1:
        stale += [f"{TABLES}/table1.csv", f"{TABLES}/table1.md"]
    return [path for path in stale if os.path.exists(path)]


def set_aside_stale_outputs():
    """Move :func:`stale_outputs` to results/stale/ (kept, never deleted) and say so."""
    moved = []
    for path in stale_outputs():
        dest = Path("results/stale") / Path(path).relative_to("results")
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dest)
        moved.append(f"  {path} -> {dest}")
    if moved:
        _warn(
            "pdsparse: outputs of skipped paper items were set aside (their data is not "
            "available, so they are no longer current):\n" + "\n".join(moved)
        )


def skipped_summary():
    """One short line on skipped paper items, repeated at the end of a run."""
    if not PLAN.skipped:
        return ""
    items = ", ".join(f"{item} ({name})" for item, name in PLAN.skipped)
    return (
        f"pdsparse: skipped {len(PLAN.skipped)} paper item(s) for lack of data: {items}. "
        "See README.md § Data for how to provide it."
    )


# ---------------------------------------------------------------------------------- paths


def raw_file(name):
    from pdsparse.data.fetch import raw_path

    return str(raw_path(REGISTRY[name], RAW_DIR))


def processed_file(name):
    return f"{PROCESSED_DIR}/{name}.npz"


def stats_file(name):
    return f"results/stats/{name}.parquet"


def stats_variant_file(name, normalization, beta):
    return f"results/stats/variants/{name}__{normalization}__beta-{beta:g}.parquet"


def problem_name(name):
    return f"{name}__{FO['loss']}__l2-{L2TAG}"


def reference_file(name):
    return f"results/reference/{problem_name(name)}.parquet"


def aggregate_file(experiment):
    return f"results/faceoff/{experiment}.parquet"


FIGURES = "results/figures/faceoff"
TABLES = "results/tables/faceoff"


def all_targets():
    """Everything `snakemake` builds by default: figures, tables, aggregates, stats."""
    targets = []
    if PLAN.panels:
        targets += [f"{FIGURES}/figure1.png", f"{FIGURES}/figure1.pdf"]
    if PLAN.figure2:
        targets += [f"{FIGURES}/figure2.png", f"{FIGURES}/figure2.pdf"]
    targets += [f"{FIGURES}/figure3.png", f"{FIGURES}/figure3.pdf"]
    if PLAN.table1:
        targets += [f"{TABLES}/table1.csv", f"{TABLES}/table1.md"]
    targets += [aggregate_file(e) for e in PLAN.experiments]
    targets += [stats_file(name) for name in PLAN.datasets]
    return targets


# ------------------------------------------------------------------------------ resources


def dataset_nnz(name):
    """Approximate nnz(A) of a data set, for memory estimates (registry or generator)."""
    if name in REGISTRY:
        spec = REGISTRY[name]
        if spec.nnz:
            return int(spec.nnz)
        return int((spec.n or 10**5) * min(spec.d or 10**3, 10**3))
    syn = PLAN.synthetic.get(name)
    if syn is None:
        return 10**6
    p = syn.params
    n, d = int(p.get("n", 1000)), int(p.get("d", 1000))
    if syn.kind == "worst_case_binary_dual":
        return int(p.get("alpha", n * d))
    if syn.kind == "worst_case_general":
        return n + d
    if syn.kind == "zipf_bow":
        return int(n * float(p.get("mean_nnz_per_row", 100)))
    return n * d


def mem_mb(bytes_per_nnz, base=1000):
    """Resource function: base MB plus ``bytes_per_nnz`` per stored nonzero of the data set."""

    def mem(wildcards, attempt=1):
        name = wildcards.get("dataset") or RAW_NAMES.get(wildcards.get("rawfile", ""), "")
        return int(attempt * (base + bytes_per_nnz * dataset_nnz(name) / 1e6))

    return mem


def run_max_epochs(wildcards):
    return PLAN.max_epochs.get(
        (wildcards.experiment, wildcards.dataset), int(FO["max_epochs"])
    )


# Data set, solver and experiment names never contain "/"; experiment and dataset wildcards
# are restricted to what the plan knows so that rules cannot match stray paths.
wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    seed=r"\d+",
    method=r"primal_rcd|dual_rcd",
    sampling=r"uniform|importance|permutation",
    dual_step=r"fixed|newton|printed|none",
