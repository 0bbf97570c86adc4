"""One report a reviewer can read (issue 11): ``snakemake --report`` after a tiny workflow run
is one self-contained HTML file with every figure and table, grouped by paper and item, each
captioned with the setting, the paper's claim, what we measured and whether it agrees, and the
scorecard over the three papers; in a real browser (headless Chromium) it renders without
console errors and shows the figures.

One tiny run (``conftest.tiny_run``, tests/test_workflow.py's config) serves every test of the
module and the end-to-end checks of tests/test_workflow.py.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import test_workflow
from report_browser import Browser, chromium_binary, show_result
from test_workflow import smk

# a tiny workflow run, its report and a headless browser: minutes (pytest -m "not slow")
pytestmark = [test_workflow.pytestmark, pytest.mark.slow, pytest.mark.xdist_group("tiny-run")]

# every figure and table of the tiny config, by paper (category) and item (subcategory)
EXPECTED = {
    "Face-Off": {"Figure 1": ["results/figures/faceoff/figure1.png"],
                 "Figure 2": ["results/figures/faceoff/figure2.png"],
                 "Figure 3": ["results/figures/faceoff/figure3.png"],
                 "Table 1": ["results/tables/faceoff/table1.csv",
                             "results/report/faceoff/table1.html"]},
    "DGPD": {"Figure 1 (λ = 0.1, μ = 0.01)": ["results/figures/dgpd/figure1.png"],
             "Table 2": ["results/tables/dgpd/table2.csv", "results/report/dgpd/table2.html"],
             "Speedup table": ["results/tables/dgpd/speedup.csv",
                               "results/report/dgpd/speedup.html"],
             "Sensitivity study": ["results/tables/dgpd/sensitivity.csv",
                                   "results/report/dgpd/sensitivity.html",
                                   "results/figures/dgpd/sensitivity_figure.png"]},
    "PDBFW": {"Figure 1": ["results/figures/pdbfw/figure1.png"],
              "Figure 2": ["results/figures/pdbfw/figure2.png"],
              "Figure 3": ["results/figures/pdbfw/figure3.png"],
              "Table 2": ["results/tables/pdbfw/table2.csv", "results/report/pdbfw/table2.html"],
              "Speedup table": ["results/tables/pdbfw/speedup.csv",
                                "results/report/pdbfw/speedup.html"]},
    "Scorecard": {"All papers": ["results/scorecard.html"]},
}
FIGURES = [p for cat in EXPECTED.values() for paths in cat.values() for p in paths
           if p.endswith(".png")]
VERDICTS = {"yes", "partly", "no", "inconclusive", "—"}  # inconclusive: issue 28


# session scope: under pytest-xdist a worker may interleave these tests with others of their
# group, which tears a module fixture down and builds it again (the report: about 100 s)
@pytest.fixture(scope="session")
def built(tiny_run):
    """The tiny workflow run (shared, ``conftest.tiny_run``), then the report: (working
    directory, report.html)."""
    wd = tiny_run
    res = smk(wd, "--report", "results/report.html", timeout=300)
    assert res.returncode == 0, res.output[-4000:]
    return wd, wd / "results" / "report.html"


def script_var(text: str, name: str):
    """The JSON of ``var <name> = ...;`` in the report's <script id="..."> block."""
    ids = {"workflow_desc": "workflow-desc"}
    match = re.search(rf'<script id="{ids.get(name, name)}">\s*var {name} = (.*?);\s*</script>',
                      text, re.S)
    assert match, f"no 'var {name}' in the report"
    return json.loads(match[1])


def data_text(uri: str) -> str:
    head, data = uri.split(",", 1)
    assert head.endswith(";base64"), head
    return base64.b64decode(data).decode("utf-8")


@pytest.fixture(scope="session")
def report(built):
    text = built[1].read_text(encoding="utf-8")
    return {"text": text, "results": script_var(text, "results"),
            "categories": script_var(text, "categories"),
            "workflow_desc": script_var(text, "workflow_desc")}


# ----------------------------------------------------------------------------- the file


def test_one_self_contained_file(report):
    text = report["text"]
    # nothing fetched from elsewhere: no script or style by URL, every result embedded
    assert not re.search(r"<script[^>]+\bsrc=", text)
    assert not re.search(r"<link[^>]+\bhref=", text)
    assert "@import" not in text
    assert all(r["data_uri"].startswith("data:") for r in report["results"].values())


def test_every_figure_and_table_grouped_by_paper_and_item(report):
    categories = {c: {s: sorted(p) for s, p in subs.items()}
                  for c, subs in report["categories"].items()}
    expected = {c: {s: sorted(p) for s, p in subs.items()} for c, subs in EXPECTED.items()}
    assert categories == expected
    for path in FIGURES:
        entry = report["results"][path]
        assert entry["mime_type"] == "image/png"
        png = base64.b64decode(entry["data_uri"].split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, path


def test_tables_read_as_tables(report):
    for cat in EXPECTED.values():
        for paths in cat.values():
            for path in paths:
                if path.startswith("results/report/"):
                    page = data_text(report["results"][path]["data_uri"])
                    assert "<table>" in page and "<th>" in page, path
                    assert "<script" not in page and "http" not in page, path


def test_captions_state_setting_claim_measurement_and_verdict(report):
    for cat, subs in EXPECTED.items():
        if cat == "Scorecard":
            continue
        for sub, paths in subs.items():
            for path in paths:
                entry = report["results"][path]
                caption = entry["caption"]
                text = re.sub(r"<[^>]+>", "", caption)
                assert "system-message" not in caption, (path, caption)  # valid RST
                assert "The paper" in text, path  # the paper's claim or printed numbers
                assert "What we measured, and whether it agrees" in text, path
                assert re.search(r"Agreement: (yes|partly|no|inconclusive|—)", text), path
                assert "reproduced: " in text, path  # the data set, stand-in or not
                labels = entry["labels"]
                assert labels["item"] == sub
                assert set(labels) == {"file", "item", "reproduced", "agreement"}
                assert labels["file"] == Path(path).name


def test_workflow_description_introduces_the_papers_and_the_scorecard(report):
    desc = re.sub(r"<[^>]+>", "", report["workflow_desc"])
    for needle in ("Face-Off", "DGPD", "PDBFW", "Scorecard", "SCORECARD.md", "stand-in"):
        assert needle in desc, needle


# ---------------------------------------------------------------------------- scorecard


def test_scorecard_covers_the_three_papers(built, report):
    wd, _ = built
    page = data_text(report["results"]["results/scorecard.html"]["data_uri"])
    rows = re.findall(r'<tr data-paper="(\w+)">(.*?)</tr>', page, re.S)
    assert {paper for paper, _ in rows} == {"faceoff", "dgpd", "pdbfw"}
    md = (wd / "results" / "SCORECARD.md").read_text(encoding="utf-8")
    table = [ln for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert len(table) == len(rows)  # the Markdown and the report hold the same rows
    import pandas as pd

    csv = pd.read_csv(wd / "results" / "scorecard.csv", keep_default_na=False)
    assert len(csv) == len(rows) and set(csv["agreement"]) <= VERDICTS
    assert set(csv["paper"]) == {"faceoff", "dgpd", "pdbfw"}
    # every result file of the run was there: nothing reads "missing"
    assert not csv["reproduced"].str.contains("is missing").any()
    # items that could not run say why and how to get them
    not_run = csv[csv["reproduced"].str.startswith("not run")]
    assert not not_run.empty and not_run["reproduced"].str.contains("config/paper.yaml|"
                                                                     "snakemake").all()
    # stand-ins are named as such (the tiny config has only generated data)
    assert csv["reproduced"].str.startswith("stand-in data").any()


def test_report_and_scorecard_rerun_nothing(built):
    res = smk(built[0], "-n")
    assert res.returncode == 0 and "Nothing to be done" in res.output, res.output[-2000:]


# ------------------------------------------------------------------------------ browser


def _install_chromium() -> str:
    """Install Debian's chromium where root and apt-get are available; else why not."""
    if shutil.which("apt-get") is None:
        return "chromium is not installed and there is no apt-get to install it"
    if os.geteuid() != 0:
        return "chromium is not installed, and installing it (apt-get) needs root"
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in (install, ["apt-get", "update"], install):
        res = subprocess.run(step, capture_output=True, text=True, env=env, timeout=1200)
        if step is install and res.returncode == 0:
            return ""
    return f"apt-get install chromium failed: {res.stderr.strip()[-500:]}"


@pytest.fixture(scope="session")
def chromium():
    if chromium_binary() is None:
        why = _install_chromium()
        if chromium_binary() is None:
            pytest.skip(f"no headless browser: {why}")
    return chromium_binary()


@pytest.fixture(scope="module")
def browser(chromium, built):
    with Browser(width=1400, height=2000) as b:
        b.open(built[1])
        yield b


def test_report_renders_in_a_browser_without_console_errors(browser, report):
    assert browser.evaluate("document.querySelector('#loading-screen').style.display") == "none"
    assert sorted(browser.evaluate("Object.keys(results)")) == sorted(report["results"])
    # the React app rendered its menu with the papers' categories
    text = browser.evaluate("document.body.innerText")
    for cat in EXPECTED:
        assert cat in text, cat
    for path in FIGURES:
        shown = show_result(browser, path)
        assert shown["image"] > 100, (path, shown)  # the figure decoded and is displayed
        assert shown["caption"], path  # its caption with the scorecard rows is shown
    assert browser.console_errors() == []


def test_screenshot_shows_a_figure(browser, tmp_path):
    import matplotlib.image as mpimg
    import numpy as np

    show_result(browser, "results/figures/pdbfw/figure1.png")
    shot = browser.screenshot(tmp_path / "report.png")
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1400)
    # not blank: the content pane (right of the menu) holds a plot: many distinct colours,
    # both light background and dark lines
    pane = pixels[:, 500:]
    colours = np.unique((pane * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50 and pane.std() > 0.05
    assert browser.console_errors() == []
