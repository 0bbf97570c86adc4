"""Shared fixtures: tiny problems the tests make themselves, and the benchmark scripts."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def bench_script(filename: str):
    """The benchmark script ``benchmarks/<filename>`` as a module, with ``benchmarks/`` on
    ``sys.path`` (its ``_harness`` and ``bench`` imports) while it is in use."""
    name = f"pdsparse_bench_{Path(filename).stem}"
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / filename)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is built
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(name, None)
        sys.path.remove(str(BENCHMARKS))


def make_data(n: int = 40, d: int = 25, density: float = 0.3, seed: int = 0, loss="logistic"):
    """A small sparse matrix with no empty row or column and labels fit for ``loss``."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=density, random_state=rng, format="lil")
    for j in range(n):  # every example and feature touched, so no degenerate coordinate
        A[j, j % d] = rng.uniform(0.5, 1.5)
    A = A.tocsr()
    A.data = A.data * rng.choice([-1.0, 1.0], size=A.nnz) * 2.0
    w = rng.standard_normal(d)
    if loss == "squared":
        b = A @ w + 0.1 * rng.standard_normal(n)
    else:
        b = np.where(A @ w + 0.3 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    return A, b


@pytest.fixture
def data():
    return make_data()


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): one worker more than the usable cores. The SLURM
    group's worker spends most of its 8-9 minutes waiting for the plugin's status checks
    (they back off 10 s at a time while no job finishes), a core's worth of idle time that
    the extra worker fills with the rest of the suite."""
    return len(os.sched_getaffinity(0)) + 1


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """One run of the tiny workflow config (``tests/test_workflow.py``'s ``TINY*``) shared by
    the end-to-end checks and the report tests: its working directory. The tests that use it
    carry ``xdist_group("tiny-run")`` so that, under ``pytest -n``, one worker runs it once."""
    from test_workflow import smk, tiny_config, workdir

    wd = workdir(tmp_path_factory.mktemp("tiny-run"))
    tiny_config(wd)
    res = smk(wd, "--cores", "2", timeout=900)
    assert res.returncode == 0, res.output[-4000:]
    return wd
