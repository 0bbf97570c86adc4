"""The papers the workflow reproduces: one folder each (``pdsparse/repro/papers/<paper>/``).

A paper's folder holds its plan (``plan.py``: ``plan(config, registry, available) -> Plan``),
the values it prints (``values.py``), its own tables and theory-only figures, its scorecard
rows (``scorecard.py``: ``rows(ctx)``), its report captions (``captions/*.rst``) and, in its
``__init__``, its name, title, citation and output builders. A new paper is a new folder, a
config section of its name and its name in :data:`pdsparse.names.PAPERS`; the workflow's
rules, the command line and the scorecard are generic over papers and need no edit.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from pdsparse.names import PAPERS
from pdsparse.repro.plan import Plan

__all__ = ["PAPERS", "Plan", "caption_path", "paper", "plans", "render_caption"]


def paper(name: str) -> ModuleType:
    """The package of paper ``name`` (``PAPER``, ``TITLE``, ``CITATION``, ``BUILDERS``)."""
    return importlib.import_module(f"pdsparse.repro.papers.{name}")


def caption_path(caption: str) -> Path:
    """The file of a plan's caption template ``<paper>/<name>.rst``."""
    name, _, file = caption.partition("/")
    return Path(__file__).parent / name / "captions" / file


def render_caption(output, config: Mapping) -> str:
    """The caption of a planned figure or table (an :class:`~pdsparse.repro.plan.Output`):
    its paper's ``captions/<name>.rst``, a Jinja template given ``snakemake.config`` (the
    run's config) and ``paper`` (what the paper prints: its ``values`` module); "" when the
    output has no caption."""
    from types import SimpleNamespace

    import jinja2

    if not output.caption:
        return ""
    text = caption_path(output.caption).read_text()
    values = importlib.import_module(f"pdsparse.repro.papers.{output.paper}.values")
    return jinja2.Template(text).render(snakemake=SimpleNamespace(config=config), paper=values)


def plans(
    config: Mapping, registry: Mapping[str, Any], available: Callable[[str], bool]
) -> dict[str, Plan]:
    """The plan of every paper that has a section in ``config``, by paper name."""
    return {
        name: importlib.import_module(f"pdsparse.repro.papers.{name}.plan").plan(
            config, registry, available)
        for name in PAPERS
        if name in config
    }
