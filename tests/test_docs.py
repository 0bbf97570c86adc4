"""The docs name only commands that exist, and the README's library example runs as written.

Commands: every ``pdsparse WORD`` in the code of the Markdown docs (fenced blocks and inline
code), in the comments of ``config/*.yaml`` and in the string literals of the package (error
messages, help texts, docstrings) must name a subcommand of :func:`pdsparse.cli.build_parser`.
A mention counts as a command where ``pdsparse`` starts a line or a code span, or follows a
quote, a backtick, a shell prompt (``$ ``) or a shell operator; prose such as "a pdsparse
data set" and ``from pdsparse import`` do not. ``pdsparse fetch|prepare`` names both.

Examples: the fenced ``python`` blocks under the README's "The library" heading, and those of
``docs/library.md``, are executed offline (sockets refused) in an empty directory; so are
the ``console`` sessions of the README and of ``docs/library.md``, whose output must match.
"""

from __future__ import annotations

import argparse
import ast
import re
import socket
from pathlib import Path

import pytest

from pdsparse.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

MARKDOWN = ["README.md", "ARCHITECTURE.md", "docs/*.md", "benchmarks/*.md", "*/README.md"]
YAML = ["config/*.yaml"]
PYTHON = ["src/pdsparse/**/*.py"]

_COMMAND = re.compile(
    r"(?:^|[`'\"(]|\$ |&& |; |\| )[ \t]*pdsparse[ \t]+([a-z][a-z0-9_-]*(?:\|[a-z][a-z0-9_-]*)*)",
    re.MULTILINE,
)
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)\1", re.DOTALL)  # within a paragraph


def _files(patterns: list[str]) -> list[Path]:
    return sorted({p for pattern in patterns for p in ROOT.glob(pattern) if p.is_file()})


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _markdown_code(text: str) -> list[tuple[int, str]]:
    """(line, code) of every fenced block and every inline code span outside them."""
    out = [(_line(text, m.start(2)), m.group(2)) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out += [(_line(prose, m.start(2)), m.group(2)) for m in _SPAN.finditer(prose)]
    return out


def _yaml_comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of every comment (a ``#`` at a line start or after a blank)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = re.search(r"(?:^|\s)#(.*)$", line)
        if m:
            out.append((number, m.group(1)))
    return out


def _python_strings(text: str) -> list[tuple[int, str]]:
    """(line, value) of every string literal, f-string parts and docstrings included."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def _mentions() -> list[tuple[str, int, str]]:
    """(file, line, word) of every ``pdsparse WORD`` command named in the docs and the code."""
    sources = (
        [(p, _markdown_code) for p in _files(MARKDOWN)]
        + [(p, _yaml_comments) for p in _files(YAML)]
        + [(p, _python_strings) for p in _files(PYTHON)]
    )
    found = []
    for path, pieces in sources:
        name = path.relative_to(ROOT).as_posix()
        for line, piece in pieces(path.read_text(encoding="utf-8")):
            for m in _COMMAND.finditer(piece):
                first = line + piece.count("\n", 0, m.start(1))
                found += [(name, first, word) for word in m.group(1).split("|")]
    return found


def _subcommands() -> set[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1, "pdsparse should have exactly one level of subcommands"
    return set(actions[0].choices)


MENTIONS = _mentions()
BY_WORD: dict[tuple[str, str], list[int]] = {}
for _file, _lineno, _word in MENTIONS:
    BY_WORD.setdefault((_file, _word), []).append(_lineno)


def test_the_collector_finds_commands():
    """A guard: the scan sees the README's commands, the config's and the package's."""
    files = {file for file, _, _ in MENTIONS}
    words = {word for _, _, word in MENTIONS}
    assert "README.md" in files and any(f.startswith("src/") for f in files)
    assert {"advise", "scorecard", "prepare"} <= words
    assert not [m for m in MENTIONS if m[2] in {"import", "data", "trace", "workflow"}]


@pytest.mark.parametrize(
    ("file", "word"), sorted(BY_WORD), ids=[f"{f}:{w}" for f, w in sorted(BY_WORD)]
)
def test_named_command_exists(file, word):
    commands = _subcommands()
    lines = ", ".join(map(str, BY_WORD[file, word]))
    assert word in commands, (
        f"{file} (line {lines}) names `pdsparse {word}`, which is not a pdsparse subcommand; "
        f"the subcommands are: {', '.join(sorted(commands))}"
    )


def _python_blocks(path: str, heading: str | None = None) -> str:
    """The fenced ``python`` blocks of ``path`` (under ``## heading`` only, when given)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    if heading is not None:
        start = re.search(rf"^## {re.escape(heading)}[ \t]*$", text, re.MULTILINE)
        assert start, f"{path} has no '## {heading}' heading"
        end = re.compile(r"^## ", re.MULTILINE).search(text, start.end())
        text = text[start.end() : end.start() if end else len(text)]
    blocks = [m.group(2) for m in _FENCE.finditer(text) if m.group(1).strip() == "python"]
    assert blocks, f"no python block in {path}" + (f" under '## {heading}'" if heading else "")
    return "\n".join(blocks)


@pytest.mark.parametrize(
    ("path", "heading"), [("README.md", "The library"), ("README.md", "Your own data"),
                          ("docs/library.md", None)]
)
def test_library_example_runs(path, heading, tmp_path, monkeypatch, capsys):
    code = _python_blocks(path, heading)

    def refuse(*args, **kwargs):
        raise OSError(f"the example in {path} must run offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{path} (python blocks)", "exec"), {"__name__": "__docs__"})
    printed = capsys.readouterr().out
    assert printed.strip(), f"the example in {path} printed nothing"
    assert "converged" in printed


def _console_sessions(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """(heading, [(command, output)]) of every fenced ``console`` block: ``$ `` lines are the
    commands, the lines up to the next one their output."""
    out = []
    for m in _FENCE.finditer(text):
        if m.group(1).strip() != "console":
            continue
        heading = re.findall(r"^## (.+)$", text[: m.start()], re.MULTILINE)[-1]
        steps: list[tuple[str, str]] = []
        for line in m.group(2).splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], ""))
            elif steps:
                steps[-1] = (steps[-1][0], steps[-1][1] + line + "\n")
        out.append((heading, steps))
    return out


@pytest.mark.parametrize(
    ("path", "heading"),
    [("README.md", "Your own data"), ("docs/library.md", "Which solver on your data")],
)
def test_console_sessions_run_as_written(path, heading, tmp_path, monkeypatch, capsys):
    """The ``console`` blocks of the README (your own data: generate, then advise on the l2
    penalty) and of docs/library.md (advise on the other penalty families) run offline in an
    empty directory and print exactly what the file shows."""
    import shlex

    from pdsparse.cli import main

    sessions = _console_sessions((ROOT / path).read_text())
    assert any(h == heading for h, _ in sessions), f"{path}: no console block under {heading}"

    def refuse(*args, **kwargs):
        raise OSError(f"the console sessions of {path} must run offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.chdir(tmp_path)
    for heading, steps in sessions:
        for command, expected in steps:
            argv = shlex.split(command)
            assert argv[0] == "pdsparse", (heading, command)
            code = main(argv[1:])
            out = capsys.readouterr()
            assert code == 0, (command, out.err)
            assert out.out == expected, f"{heading}: {command}\n{out.out}"


def test_results_readme_names_every_trace_column():
    """results/README.md lists a trace row's columns; issue 29 found wall_s and setup_s
    missing there."""
    from pdsparse.solvers import TRACE_COLUMNS

    text = " ".join((ROOT / "results" / "README.md").read_text().split())
    listed = re.search(r"A trace row is `([^`]*)`", text)
    assert listed, "results/README.md: no 'A trace row is `...`' list"
    names = {c.strip() for c in listed.group(1).split(",")}
    assert set(TRACE_COLUMNS) <= names, sorted(set(TRACE_COLUMNS) - names)


def test_the_docs_name_the_provenance_key_the_files_carry():
    """results/README.md and docs/workflow.md name the Parquet metadata key of a result's
    provenance; issue 30's move of the module renamed the key in both texts, not in the
    files (`pdsparse.provenance`)."""
    from pdsparse.repro.provenance import PROVENANCE_KEY

    for doc in (ROOT / "results" / "README.md", ROOT / "docs" / "workflow.md"):
        text = " ".join(doc.read_text().split())
        keys = re.findall(r"under the metadata key `([^`]*)`", text)
        assert keys and set(keys) == {PROVENANCE_KEY.decode()}, (doc.name, keys)
