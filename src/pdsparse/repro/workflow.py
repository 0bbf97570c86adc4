"""The workflow's plans bound to its config: what ``workflow/rules/common.smk`` looks up.

:meth:`WorkflowPlan.load` reads the registry, decides which data sets are available (here,
in the mirror, or to download), builds every paper's plan and indexes what the generic rules
look up by the key in a file name (data sets, problems, statistics, runs, figures and
tables), with every planned job's spec (:mod:`pdsparse.repro.jobs`). ``common.smk`` binds
one of these to Snakemake (its config, its errors, its wildcards) and holds no decisions, so
that all of it is tested without Snakemake (``tests/test_workflow_plan.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pdsparse.repro import jobs
from pdsparse.repro.plan import reference_path

__all__ = ["WorkflowPlan"]


@dataclass
class WorkflowPlan:
    """Every paper's plan for one workflow config, and the lookups of the rules."""

    config: Mapping[str, Any]
    registry: Mapping[str, Any]
    mirror: Path | None
    plans: Mapping[str, Any]

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> WorkflowPlan:
        """The plans of a validated config (:class:`pdsparse.errors.ConfigError` on bad
        data settings)."""
        from pdsparse.data.fetch import resolve_mirror
        from pdsparse.data.registry import load_registry
        from pdsparse.repro.config import data_availability
        from pdsparse.repro.papers import plans

        data = config["data"]
        registry = load_registry(data["registry"])
        mirror = resolve_mirror(data["mirror"])
        raw_dir = os.path.normpath(data["raw_dir"])

        def available(name: str) -> bool:
            return data_availability(registry[name], raw_dir, mirror, data["download"]) is not None

        return cls(config, registry, mirror, plans(config, registry, available))

    # ---------------------------------------------------------------------- directories

    @property
    def raw_dir(self) -> str:
        return os.path.normpath(self.config["data"]["raw_dir"])

    @property
    def processed_dir(self) -> str:
        return os.path.normpath(self.config["data"]["processed_dir"])

    def raw_file(self, name: str) -> str:
        """A registry data set's raw file (the fetch rule's output)."""
        from pdsparse.data.fetch import raw_path

        return str(raw_path(self.registry[name], self.raw_dir))

    def processed_file(self, data) -> str:
        """The prepared file of a DataSpec (or of its key)."""
        key = data if isinstance(data, str) else data.key
        return f"{self.processed_dir}/{key}.npz"

    @staticmethod
    def reference_file(tag: str) -> str:
        return reference_path(tag)

    # -------------------------------------------------- lookups by the key in a file name

    def _merged(self, attribute: str) -> dict:
        out: dict = {}
        for plan in self.plans.values():
            out.update(getattr(plan, attribute))
        return out

    @cached_property
    def datasets(self) -> dict:
        return self._merged("data")

    @cached_property
    def problems(self) -> dict:
        return self._merged("problems")

    @cached_property
    def stats(self) -> dict:
        return self._merged("stats")

    @cached_property
    def runs(self) -> dict:
        return {run.key: run for plan in self.plans.values() for run in plan.runs}

    @cached_property
    def outputs(self) -> dict:
        return {(o.paper, o.name): o for plan in self.plans.values() for o in plan.outputs}

    @cached_property
    def references(self) -> dict:
        """Each problem's reference settings: the strictest of the papers that share it."""
        from pdsparse.repro.estimate import shared_references

        return shared_references(self.plans)

    @cached_property
    def raw_names(self) -> dict[str, str]:
        """Raw file name in the raw directory -> registry name (the fetch rule's pattern)."""
        return {Path(self.raw_file(name)).name: name for name in self.registry}

    @cached_property
    def jobs(self) -> dict:
        """Every planned job's spec (:func:`pdsparse.repro.jobs.plan_document`)."""
        return jobs.plan_document(self.plans, self.config["data"]["registry"], self.raw_file,
                                  self.references)

    def job_spec(self, kind: str, key: str) -> str:
        """A job's spec as a Snakemake param: canonical JSON, what Snakemake compares between
        runs, so exactly the jobs whose spec changed rerun."""
        return json.dumps(self.jobs[kind][key], sort_keys=True)

    def data_of(self, wildcards: Mapping[str, str]):
        """The DataSpec a job works on, whatever its wildcards name (data, stats, problem,
        raw file); None for a job without one."""
        if "data" in wildcards:
            return self.datasets[wildcards["data"]]
        if "stats" in wildcards:
            return self.stats[wildcards["stats"]].data
        if "problem" in wildcards:
            return self.problems[wildcards["problem"]].data
        if "rawfile" in wildcards:
            return self.datasets.get(self.raw_names[wildcards["rawfile"]])
        return None

    def memory_mb(self, wildcards: Mapping[str, str], bytes_per_nnz: float, base: float = 1000,
                  attempt: int = 1) -> int:
        """A job's memory: ``base`` MB plus ``bytes_per_nnz`` per stored nonzero of its data
        set, times the attempt (:func:`pdsparse.repro.jobs.memory_mb`)."""
        data = self.data_of(wildcards)
        nnz = jobs.dataset_nnz(data, self.registry) if data is not None else None
        return jobs.memory_mb(nnz, bytes_per_nnz, base, attempt)

    # ------------------------------------------------------------------------- targets

    def targets(self) -> list[str]:
        """Everything `snakemake` builds by default: every paper's figures, tables,
        aggregates and statistics."""
        return [t for plan in self.plans.values() for t in plan.targets()]

    def table_pages(self) -> list[str]:
        """The HTML page of every planned table (the report shows these)."""
        return [f"results/report/{p}/{n}.html" for (p, n), o in self.outputs.items()
                if o.kind == "table"]

    def scorecard_inputs(self) -> list[str]:
        """What the scorecard reads: every planned table, aggregate and statistics file."""
        files = []
        for plan in self.plans.values():
            files += [o.files[0] for o in plan.outputs if o.kind == "table"]
            files += [f"results/{plan.paper}/{e}.parquet" for e in plan.experiments]
            files += [f"results/stats/{tag}.parquet" for tag in plan.stats]
        return files

    # ------------------------------------------------------- skipped items, stale outputs

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """(paper item, data set) of every item left out for lack of data."""
        return [s for plan in self.plans.values() for s in plan.skipped]

    def skipped_warning(self) -> str:
        """The warning on skipped items, with how to provide their data ("" if none)."""
        from pdsparse.repro.config import skipped_message

        return skipped_message(self.skipped, self.registry, self.raw_dir) if self.skipped else ""

    def skipped_summary(self) -> str:
        """One short line on skipped paper items, repeated at the end of a run."""
        return jobs.skipped_summary(self.skipped)

    def set_aside_stale(self, stale_dir: str | Path = "results/stale") -> str:
        """Move the outputs of paper items dropped for lack of data below ``stale_dir``
        (a figure whose data set is gone must not stay behind looking current: kept, never
        deleted); returns the message to print ("" if nothing moved)."""
        moved = []
        for path in [p for plan in self.plans.values() for p in plan.existing_stale()]:
            dest = Path(stale_dir) / Path(path).relative_to("results")
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
            moved.append(f"  {path} -> {dest}")
        return jobs.stale_message(moved, self.skipped) if moved else ""

    def keep_raw_files(self) -> None:
        """Link raw files fetched by older versions into the raw directory's .verified
        (:func:`pdsparse.data.fetch.keep`)."""
        from pdsparse.data.fetch import keep, kept_path

        for name, spec in self.registry.items():
            raw = Path(self.raw_file(name))
            if raw.is_file() and not kept_path(spec, self.raw_dir).exists():
                keep(raw, spec, self.raw_dir)

    # --------------------------------------------------------------------- environment

    def data_environment(self) -> dict[str, str | None]:
        """The data source (mirror, download) for the fetch jobs, as environment variables
        (None: unset). Not params: Snakemake reruns a job whose params changed and deletes its
        output first, so a run without the mirror after one with it would delete verified
        raw files; where a raw file came from is no part of what it is (the checksums are)."""
        from pdsparse.data.fetch import DOWNLOAD_ENV, MIRROR_ENV

        return {MIRROR_ENV: None if self.mirror is None else str(self.mirror),
                DOWNLOAD_ENV: "1" if self.config["data"]["download"] else "0"}

    def estimate(self, cores: int) -> str:
        """The plan's CPU hours and peak memory (:mod:`pdsparse.repro.estimate`)."""
        from pdsparse.repro.estimate import estimate, format_estimate, plan_costs

        costs = plan_costs(self.plans, self.registry, self.processed_dir, self.raw_dir)
        return format_estimate(estimate(costs, cores))
