"""The reproduction scorecard: one row per paper item (a table's row, a figure's claim) over
the three papers, read off the workflow's results beside what the papers print.

Every verdict is computed from the result files and the printed values of each paper
(``pdsparse.papers.<paper>.values``), with the tolerances named below; nothing measured is
written by hand. Columns of a :class:`Row`:

* ``reproduced``: ``yes`` (the paper's data, or data generated as the paper describes),
  ``stand-in data: ...`` (another or a smaller data set, said which), or ``not run: ...``
  (why, and how to get the data or the result);
* ``paper_value``, ``our_value``: the numbers compared;
* ``agreement``: ``yes``, ``partly`` or ``no`` with the reason (``—`` when not run or when
  the paper prints no value).

``pdsparse scorecard`` writes it as Markdown (``results/SCORECARD.md``), CSV and an HTML page
for the Snakemake report; :func:`caption_rst` and :func:`labels` give the report's captions
and labels of one figure or table.

Layout: :mod:`~pdsparse.scorecard.core` (tolerances, :class:`Row`, formatting, the results
context, the speed races), each paper's ``pdsparse.papers.<paper>.scorecard`` whose
``rows(ctx)`` gives its items (a new paper brings its own), and
:mod:`~pdsparse.scorecard.render` (Markdown, CSV, HTML, the report's pieces).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pdsparse.papers import PAPERS
from pdsparse.scorecard.core import (  # the tolerances, for callers and tests
    CLAIM_FACTOR,
    FACEOFF_TARGET,
    NOT_RUN,
    NZ_FACTOR,
    PAPER_TITLES,
    R_TOL,
    SAME_DATA_RTOL,
    SLOPE_TOL,
    SPARSITY_RTOL,
    TIE,
    TOLERANCES,
    TP_TD_FACTOR,
    PathLike,
    Row,
    _Context,
)
from pdsparse.scorecard.render import (
    caption_rst,
    item_title,
    labels,
    read_rows,
    summary,
    to_html,
    to_markdown,
    write_scorecard,
)

__all__ = [
    "CLAIM_FACTOR",
    "FACEOFF_TARGET",
    "NOT_RUN",
    "NZ_FACTOR",
    "PAPER_TITLES",
    "R_TOL",
    "SAME_DATA_RTOL",
    "SLOPE_TOL",
    "SPARSITY_RTOL",
    "TIE",
    "TOLERANCES",
    "TP_TD_FACTOR",
    "Row",
    "caption_rst",
    "item_title",
    "labels",
    "read_rows",
    "scorecard",
    "summary",
    "to_html",
    "to_markdown",
    "write_scorecard",
]



def _rows_of(paper: str) -> Callable[[_Context], list[Row]]:
    """``rows(ctx)`` of a paper's scorecard module (``pdsparse.papers.<paper>.scorecard``)."""
    import importlib

    return importlib.import_module(f"pdsparse.papers.{paper}.scorecard").rows


def skipped_items(config: Mapping, registry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(item, data set) pairs the papers' plans drop for lack of data, as the workflow
    decides it (``data.raw_dir``, the mirror, ``data.download``)."""
    from pdsparse.config import data_availability
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.papers import plans

    data = config.get("data", {})
    raw_dir = data.get("raw_dir", "data/raw")
    mirror = resolve_mirror(data.get("mirror"), must_exist=False)
    download = bool(data.get("download", False))

    def available(name: str) -> bool:
        return data_availability(registry[name], raw_dir, mirror, download) is not None

    return [s for plan in plans(config, registry, available).values() for s in plan.skipped]


def scorecard(config: Mapping, results: PathLike = "results",
              registry: Mapping[str, Any] | None = None,
              skipped: Iterable[tuple[str, str]] | None = None,
              benchmarks: PathLike | None = None) -> list[Row]:
    """Every paper item of the papers in ``config`` as a :class:`Row`, from the files in
    ``results`` (whatever exists: an item without its result file reads ``not run``).

    ``registry`` defaults to ``data.registry`` of the config; ``skipped`` (item, data set)
    to what the plans drop for lack of data (:func:`skipped_items`); ``benchmarks`` to
    ``<results>/benchmarks``.
    """
    from pdsparse.data.registry import load_registry

    if registry is None:
        registry = load_registry(config["data"]["registry"])
    if skipped is None:
        skipped = skipped_items(config, registry)
    ctx = _Context(config, Path(results), registry, list(skipped),
                   Path(benchmarks) if benchmarks else None)
    rows: list[Row] = []
    for paper in PAPERS:
        if paper in config:
            rows += _rows_of(paper)(ctx)
    return rows


