"""``benchmarks/peers.py`` on the runner, end to end on a small synthetic set: its worker
subprocesses, our kernel traced and the scikit-learn peer's max_iter searched, the long
Parquet, the report and the plot. No timings are asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def test_peers_quick_run_writes_the_long_frame_the_report_and_the_plot(tmp_path):
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "peers.py"), "--quick", "--datasets", "zipf",
         "--zipf-scale", "256", "--lams", "1/n", "--repeats", "2",
         "--solvers", "dual:permutation:newton,liblinear_dual", "--out-dir", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} == {"peers.parquet", "peers.json", "peers.md",
                                               "peers_zipf_1n.png"}
    frame = pd.read_parquet(out / "peers.parquet")
    assert set(frame.solver) == {"dual:permutation:newton", "liblinear_dual"}
    assert set(frame.sampling) == {"trace", "iteration"}
    search = frame[frame.status == "search"]
    assert set(search.solver) == set(frame.solver)  # the plot's curves
    timed = frame[frame["round"] >= 0]
    assert len(timed) == 2 * 2 * 3  # two solvers, two rounds, three targets
    assert (timed.status == "reached").all(), timed[["solver", "target", "status", "note"]]
    assert (timed.subopt <= timed.target).all()
    details = timed.set_index("solver").details.map(json.loads)
    assert details["dual:permutation:newton"].map(lambda d: d["epochs"] > 0).all()
    assert details["liblinear_dual"].map(lambda d: d["n_iter"] >= 1).all()
    md = (out / "peers.md").read_text()
    assert md.count("| zipf | 1/n |") == 2 * 3  # ours vs the best rival; best of ours
    assert "liblinear_dual" in md and "## Data, references, memory" in md
    meta = json.loads((out / "peers.json").read_text())
    assert meta["targets"] == [1e-2, 1e-4, 1e-6] and meta["repeats"] == 2
    assert meta["datasets"][0]["memory"]["peak_rss_mib"] > 0
