"""The reproduction scorecard: one row per paper item (a table's row, a figure's claim) over
the three papers, read off the workflow's results beside what the papers print.

Every verdict is computed from the result files and the printed values of each paper
(``pdsparse.repro.papers.<paper>.values``), with the tolerances named below; nothing measured is
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

Layout: :mod:`~pdsparse.repro.scoring` is the public protocol a paper's rows are written
against (the shared tolerances, :class:`~pdsparse.repro.scoring.Row`, formatting, the results
:class:`~pdsparse.repro.scoring.Context`, the speed races); each paper's
``pdsparse.repro.papers.<paper>.scorecard`` gives ``rows(ctx)`` and its own ``TOLERANCES``
(a new paper brings its own; this package finds it by the paper's name); and
:mod:`~pdsparse.repro.scorecard.render` writes Markdown, CSV, HTML and the report's pieces.
``scoring`` imports no paper; the papers import ``scoring``; this package imports both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pdsparse.repro.papers import PAPERS
from pdsparse.repro.scorecard.render import (
    PAPER_TITLES,
    caption_rst,
    item_title,
    labels,
    read_rows,
    summary,
    to_html,
    to_markdown,
    tolerances,
    write_scorecard,
)
from pdsparse.repro.scoring import (  # the shared tolerances
    CLAIM_FACTOR,
    NOT_RUN,
    SAME_DATA_RTOL,
    Context,
    PathLike,
    Row,
)

__all__ = [
    "CLAIM_FACTOR",
    "NOT_RUN",
    "PAPER_TITLES",
    "SAME_DATA_RTOL",
    "Row",
    "caption_rst",
    "item_title",
    "labels",
    "read_rows",
    "scorecard",
    "summary",
    "to_html",
    "to_markdown",
    "tolerances",
    "write_scorecard",
]



def _rows_of(paper: str) -> Callable[[Context], list[Row]]:
    """``rows(ctx)`` of a paper's scorecard module (``pdsparse.repro.papers.<paper>.scorecard``)."""
    import importlib

    return importlib.import_module(f"pdsparse.repro.papers.{paper}.scorecard").rows


def skipped_items(config: Mapping, registry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(item, data set) pairs the papers' plans drop for lack of data, as the workflow
    decides it (``data.raw_dir``, the mirror, ``data.download``)."""
    from pdsparse.data.fetch import resolve_mirror
    from pdsparse.repro.config import data_availability
    from pdsparse.repro.papers import plans

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
    ctx = Context(config, Path(results), registry, list(skipped),
                   Path(benchmarks) if benchmarks else None)
    rows: list[Row] = []
    for paper in PAPERS:
        if paper in config:
            rows += _rows_of(paper)(ctx)
    return rows


