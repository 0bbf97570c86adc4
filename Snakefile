# pdsparse: reproduce Csiba & Richtarik, "Coordinate Descent Face-Off: Primal or Dual?",
# Lei et al.'s DGPD (ICML 2017) and PDBFW (NeurIPS 2019) from raw data.
#
#   snakemake --cores 2                                  default run (config/config.yaml)
#   snakemake --cores 2 --configfile config/paper.yaml   full reproduction
#   snakemake -n                                         show the plan and its estimated
#                                                        CPU hours and peak memory
#
# Data flow (every arrow a rule, every box a file; see workflow/rules/):
#   fetch -> data/raw -> prepare / synth -> data/processed/<dataset>.npz
#     -> stats (results/stats), reference (results/reference), run (results/runs)
#     -> aggregate (results/<paper>/<experiment>.parquet)
#     -> figures (results/figures/<paper>), tables (results/tables/<paper>)
# Each rule calls the `pdsparse` command line, so every step also runs without Snakemake.

import os

from snakemake.utils import min_version, validate

min_version("9.0")

# Every job declares threads: 1 and --cores N runs N of them at once: one BLAS thread per job
# (jobs inherit this environment), else N jobs x N BLAS threads oversubscribe the cores (small
# products measured 10-100x slower). A value set by the user wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


configfile: "config/config.yaml"


# `snakemake --report results/report.html` after a run: figures, tables and the scorecard
report: "workflow/report/workflow.rst"


# Readable errors first (unknown keys named by their dotted path, with a suggestion), then
# Snakemake's own validation, which also fills the schema defaults.
include: "workflow/rules/common.smk"


validate_workflow_config(config)
validate(config, "workflow/schemas/config.schema.yaml")
setup_plans()

# `snakemake -n`: what the plan will cost, before it runs (pdsparse.repro.estimate)
if is_dry_run():
    print_estimate()


include: "workflow/rules/fetch.smk"
include: "workflow/rules/prepare.smk"
include: "workflow/rules/stats.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/benchmarks.smk"
include: "workflow/rules/report.smk"


localrules:
    all,
    fetch,
    effective_config,


# Not in a dry run: keep raw files safe from re-runs, set aside outputs of skipped items.
onstart:
    keep_raw_files()
    set_aside_stale_outputs()


# A report built with other data settings than the run: say so once, before Snakemake's
# warning per file.
if report_mismatch_message():
    _warn(report_mismatch_message())


# The skipped-items warning is printed first and scrolls away: repeat it in one line.
onsuccess:
    record_planned()
    _warn(skipped_summary())


onerror:
    _warn(skipped_summary())


rule all:
    default_target: True
    input:
        all_targets(),
        report_targets(),
