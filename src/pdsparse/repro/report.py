"""Self-contained HTML pages for the Snakemake report (``snakemake --report``).

The report shows images, PDFs and HTML inline, but offers CSV only as a download: each
table's Markdown (``results/tables/<paper>/<name>.md``) is rendered here as an HTML page
(inline style, no script, no external resource) so that it reads as a table in the report.
Only the Markdown the table writers produce is understood: headings, pipe tables,
paragraphs, ``**bold**``, ``*italic*`` and ``code``.
"""

from __future__ import annotations

import html
import os
import re

__all__ = ["html_page", "markdown_to_html", "write_markdown_page"]

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1a1a1a; background: #fff; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0 1.2em; }
th, td { border: 1px solid #bbb; padding: 0.35em 0.5em; vertical-align: top; }
th { background: #eee; }
td.r, th.r { text-align: right; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def html_page(title: str, body: str, style: str = "") -> str:
    """A complete HTML page around ``body`` (already HTML), with the inline style."""
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}{style}</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def _inline(text: str) -> str:
    """Escape, then ``code``, **bold** and *italic*."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = html.escape(part, quote=False)
        part = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", part)
        part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", part)
        out.append(part)
    return "".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)]


_RULE = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _table(lines: list[str]) -> str:
    head = _cells(lines[0])
    aligns = ["r" if c.endswith(":") and not c.startswith(":") else ""
              for c in _cells(lines[1])]

    def row(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(
            f"<{tag}{' class=r' if i < len(aligns) and aligns[i] else ''}>{_inline(c)}</{tag}>"
            for i, c in enumerate(cells)) + "</tr>"

    body = "\n".join(row(_cells(ln), "td") for ln in lines[2:])
    return f"<table>\n<thead>{row(head, 'th')}</thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def markdown_to_html(text: str) -> str:
    """The HTML body of the Markdown of a table file (see the module docstring)."""
    blocks, para = [], []
    lines = text.splitlines()

    def flush() -> None:
        if para:
            blocks.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading:
            flush()
            level = len(heading[1])
            blocks.append(f"<h{level}>{_inline(heading[2])}</h{level}>")
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            flush()
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            blocks.append(_table(lines[i:j]))
            i = j
            continue
        elif not line.strip():
            flush()
        elif re.match(r"^\s*[-*]\s+", line):
            flush()
            item = re.sub(r"^\s*[-*]\s+", "", line)
            blocks.append(f"<ul><li>{_inline(item)}</li></ul>")
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(blocks).replace("</ul>\n<ul>", "\n")


def write_markdown_page(md: str | os.PathLike, out: str | os.PathLike, title: str = "") -> None:
    """Render the Markdown file ``md`` as a self-contained HTML page ``out`` (atomically)."""
    from pathlib import Path

    from pdsparse.io import atomic_path

    text = Path(md).read_text(encoding="utf-8")
    body = markdown_to_html(text)
    if title:
        body = f"<h1>{html.escape(title)}</h1>\n{body}"
    with atomic_path(out) as tmp:
        tmp.write_text(html_page(title or Path(md).stem, body), encoding="utf-8")
