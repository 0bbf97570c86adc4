#!/usr/bin/env bash
# Runs once after Snakemake creates workflow/envs/pdsparse.yaml (`--sdm conda`), inside the
# new environment: install this package (and its `pdsparse` command) from the workflow's
# source tree, which the Snakefile exports as PDSPARSE_SOURCE. Dependencies come from conda.
set -euo pipefail
: "${PDSPARSE_SOURCE:?PDSPARSE_SOURCE is not set: run through the workflow's Snakefile}"
python -m pip install --no-deps --no-build-isolation "$PDSPARSE_SOURCE"
