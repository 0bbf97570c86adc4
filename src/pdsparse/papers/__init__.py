"""The papers the workflow reproduces, each a module that turns the config into a Plan.

A new paper is a new module here with a ``plan(config, registry, available) -> Plan``
function, a config section of its name, and its name in :data:`PAPERS`; the workflow's
rules are generic over papers and need no edit.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from pdsparse.papers.plan import Plan

__all__ = ["PAPERS", "Plan", "plans"]

# config section (= paper name) -> module with plan()
PAPERS = {"faceoff": "pdsparse.papers.faceoff", "dgpd": "pdsparse.papers.dgpd",
          "pdbfw": "pdsparse.papers.pdbfw"}


def plans(
    config: Mapping, registry: Mapping[str, Any], available: Callable[[str], bool]
) -> dict[str, Plan]:
    """The plan of every paper that has a section in ``config``, by paper name."""
    return {
        name: importlib.import_module(module).plan(config, registry, available)
        for name, module in PAPERS.items()
        if name in config
    }
