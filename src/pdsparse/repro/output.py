"""``pdsparse output PAPER NAME [ARGS] --out FILE FILE``: one command for every table and figure.

A :class:`Builder` is what makes one kind of output: its own arguments (an argparse parser
of its own, so that ``pdsparse output dgpd table2 --help`` shows them) and the call that
writes the two files (PNG + PDF for a figure, CSV + Markdown for a table). The generic
builders serve every paper (``curves``: a curve figure from its spec, ``speedup``: times to
targets, ``sensitivity`` and ``sensitivity_figure``: each method at its printed and its best
setting); a paper adds its own in its folder (``pdsparse.repro.papers.<paper>.BUILDERS``, by
name, resolved only when used so that a plan stays import-light). A plan's
:class:`~pdsparse.repro.plan.Output` names the builder and its arguments, so the command
line (:mod:`pdsparse.cli`) and the workflow's rules never grow with a paper.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pdsparse.errors import ConfigError, DataError

__all__ = ["Builder", "GENERIC", "builders", "get_builder", "make_output", "printed_columns",
           "write_table", "key_value", "pairs", "positive_float", "require_file"]


@dataclass(frozen=True)
class Builder:
    """One kind of output: ``arguments(parser)`` declares its options, ``build(args, outs)``
    writes ``outs`` (PNG, PDF or CSV, Markdown) from the parsed ``args``."""

    kind: str  # "figure" or "table"
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    build: Callable[[argparse.Namespace, Sequence[str]], None]

    @property
    def files(self) -> tuple[str, str]:
        return ("PNG", "PDF") if self.kind == "figure" else ("CSV", "MD")


GENERIC: Mapping[str, str] = {
    "curves": "pdsparse.repro.figures:CURVES_OUTPUT",
    "speedup": "pdsparse.repro.speedup:SPEEDUP_OUTPUT",
    "sensitivity": "pdsparse.repro.sensitivity:SENSITIVITY_OUTPUT",
    "sensitivity_figure": "pdsparse.repro.sensitivity:SENSITIVITY_FIGURE",
}
"""Builders every paper has, as ``module:attribute`` (loaded when used)."""


def builders(paper: str) -> dict[str, str]:
    """The builders of ``paper`` by name: the generic ones and the paper's own."""
    from pdsparse.names import PAPERS

    if paper not in PAPERS:
        raise ConfigError(f"unknown paper {paper!r}; choose one of {list(PAPERS)}")
    own = importlib.import_module(f"pdsparse.repro.papers.{paper}").BUILDERS
    return {**GENERIC, **own}


def get_builder(paper: str, name: str) -> Builder:
    known = builders(paper)
    if name not in known:
        raise ConfigError(f"{paper} has no output builder {name!r}; choose one of "
                          f"{sorted(known)}")
    module, _, attribute = known[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def parser(paper: str, name: str, builder: Builder) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"pdsparse output {paper} {name}", description=builder.help)
    builder.arguments(p)
    p.add_argument("--out", nargs=2, required=True, metavar=builder.files,
                   help=f"the two files to write ({' and '.join(builder.files)})")
    return p


def make_output(paper: str, name: str, argv: Sequence[str]) -> list[str]:
    """Parse ``argv`` with the builder's arguments and write its files; returns them."""
    builder = get_builder(paper, name)
    args = parser(paper, name, builder).parse_args(list(argv))
    builder.build(args, tuple(args.out))
    return list(args.out)


def printed_columns(table: dict, columns: tuple, row: str | None) -> dict:
    """A paper table's printed values of ``row`` as ``paper_<column>`` cells (NaN for a row
    the paper does not print), to stand beside ours."""
    printed = table.get(row) or (float("nan"),) * len(columns)
    return {f"paper_{c}": v for c, v in zip(columns, printed, strict=True)}


def write_table(table, markdown: str, out_csv: str | Path, out_md: str | Path) -> None:
    """A table's two files, each written atomically: the frame as CSV, its Markdown."""
    from pdsparse.io import atomic_path

    with atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(out_md) as tmp:
        tmp.write_text(markdown, encoding="utf-8")


# ------------------------------------------------------------------- argument types, shared


def require_file(path: str | Path, what: str) -> Path:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} {path} does not exist")
    return path


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


def pairs(items: Sequence[str] | None, what: str) -> dict[str, str]:
    """``["name=value", ...]`` as a dict (order kept); a clear error naming a bad item."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ConfigError(f"{what}: expected NAME=VALUE, got {item!r}")
        out[name] = value
    return out
