"""Benchmark: sparse logistic regression, ``LinearClassifier(solver="auto").fit`` against the
solvers a practitioner would install instead (issue 31's table; issue 32's target).

Every solver minimizes the same objective on the same rows (scaled by the mean row norm,
Face-Off Sec. 7), without intercept:

    P(w) = (1/n) sum_i log(1 + exp(-b_i a_i^T w)) + l1 ||w||_1 + (l2/2) ||w||^2,

pure l1 (l2 = 0) and the elastic net (l2 = 1/n), at l1 = lambda_max/10 and lambda_max/100
(lambda_max = ||grad f(0)||_inf, the smallest l1 with w* = 0). Every solver's P is evaluated by
``pdsparse.objective.primal``:

* ours: ``LinearClassifier(penalty="l1", alpha=l1)`` or ``penalty="elasticnet",
  alpha=l1 + l2, l1_ratio=l1 / (l1 + l2)``, ``fit_intercept=False``, ``tol`` its certified
  relative duality gap;
* the peers of ``pdsparse.peers`` that are installed and fit the cell (their mappings onto
  the objective are there, tested in tests/test_peers.py): scikit-learn's liblinear (pure
  l1), saga and lbfgs, skglm's ProxNewton and AndersonCD, celer (pure l1).

The protocol (a peer at its cheapest setting that reaches the target): each solver's knob is
its stopping tolerance, tried from 1e-2 down by decades to 1e-14; the first tolerance whose
fit reaches relative suboptimality (P(w) - P*) / |P*| <= ``--target`` (1e-6) is the solver's
setting, and its time the median CPU time (``time.process_time``, one thread: OMP, OpenBLAS
and MKL at 1) of ``--repeats`` fits at it, interleaved with the other solvers'. A solver that
reaches no target within ``--cap`` CPU seconds a fit is "not reached" (never faster). P* is
``pdsparse.reference.reference_solution(problem, rtol=1e-10)`` (certified duality gap).

The table gives each cell's time of ours, of the best peer, and their ratio (< 1: ours
ahead). Outputs (atomic): ``results/benchmarks/sparse_vs_peers.csv`` and ``.md``.

Usage::

    python benchmarks/sparse_vs_peers.py                       # the six binary mirror sets
    python benchmarks/sparse_vs_peers.py --datasets colon-cancer,duke --repeats 1
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import loadavg, machine, versions  # noqa: E402

from pdsparse.io import atomic_path  # noqa: E402

DATASETS = ("colon-cancer", "duke", "leu", "gisette_scale.t", "ijcnn1", "cod-rna")
TOLS = tuple(10.0 ** -k for k in range(2, 15))


OURS = "ours (auto)"


def fit_ours(problem, tol: float) -> np.ndarray:
    """``LinearClassifier(solver="auto")`` on the problem's rows, without intercept."""
    from pdsparse.estimators import LinearClassifier

    pen = problem.penalty
    kw = ({"penalty": "l1", "alpha": pen.l1} if pen.l2 == 0 else
          {"penalty": "elasticnet", "alpha": pen.l1 + pen.l2,
           "l1_ratio": pen.l1 / (pen.l1 + pen.l2)})
    model = LinearClassifier(**kw, tol=tol, max_iter=10**6, fit_intercept=False,
                             solver="auto").fit(problem.mat, problem.b)
    return np.asarray(model.coef_, dtype=np.float64).ravel()


def load(name: str, mirror: Path):
    """The mirror's file as a problem (``Problem.from_libsvm``: two classes to -1/+1, rows
    scaled by the mean row norm); each cell takes its penalty with ``with_penalty``."""
    from pdsparse.problem import Problem

    path = next(p for p in (mirror / f"{name}.bz2", mirror / name) if p.exists())
    return Problem.from_libsvm(path, "logistic", normalization="avg_example_norm")


def fit_time(fit, problem, tol: float) -> tuple[float, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # peers' convergence warnings at loose tolerances
        t0 = time.process_time()
        w = fit(problem, tol)
        return time.process_time() - t0, w


def cell(problem, args) -> list[dict]:
    from pdsparse.objective import primal
    from pdsparse.peers import installed
    from pdsparse.reference import reference_solution

    ref = reference_solution(problem, rtol=1e-10, max_seconds=args.ref_seconds)
    p_star = float(ref.p_star)
    fits = {OURS: fit_ours, **{peer.name: peer.fit for peer in installed(problem)}}
    rows, found = [], {}
    for name, fit in fits.items():
        row = {"solver": name, "tol": None, "seconds": float("inf"), "subopt": None,
               "nnz": None}
        for tol in TOLS:
            secs, w = fit_time(fit, problem, tol)
            sub = (primal(problem, w) - p_star) / abs(p_star)
            if sub <= args.target and secs <= args.cap:
                found[name] = tol
                row.update(tol=tol, subopt=sub, nnz=int(np.count_nonzero(w)))
                break
            if secs > args.cap:
                break
        rows.append(row)
    times = {name: [] for name in found}
    for _ in range(args.repeats):  # interleaved: every solver once per round
        for name, tol in found.items():
            times[name].append(fit_time(fits[name], problem, tol)[0])
    for row in rows:
        if row["solver"] in times:
            row["seconds"] = statistics.median(times[row["solver"]])
            row["spread"] = [min(times[row["solver"]]), max(times[row["solver"]])]
        row.update(p_star=p_star, ref_gap=float(ref.rel_gap))
    return rows


def markdown(frame: pd.DataFrame, meta: dict) -> str:
    lines = ["# Sparse logistic regression: ours (auto) against the peers\n",
             f"Machine: {meta['machine']['nproc']} cores, {meta['machine']['cpu']}, "
             f"{meta['machine']['mem_gib']:.0f} GiB; load average before "
             f"{meta['load_before']}, after {meta['load_after']}; target relative "
             f"suboptimality {meta['target']:g}; median of {meta['repeats']} CPU times.\n",
             "| set (n x d) | penalty | l1 | ours s | best peer | peer s | ours / best |",
             "|---|---|---|---|---|---|---|"]
    for (name, pen, frac), g in frame.groupby(["dataset", "penalty", "l1_frac"], sort=False):
        ours = g[g.solver == OURS].iloc[0]
        others = g[g.solver != OURS]
        best = others.loc[others.seconds.idxmin()] if len(others) else None
        ratio = (ours.seconds / best.seconds if best is not None
                 and np.isfinite(best.seconds) else float("nan"))
        lines.append(f"| {name} ({ours.n} x {ours.d}) | {pen} | lambda_max/{frac:g} | "
                     f"{ours.seconds:.3g} | {best.solver if best is not None else '-'} | "
                     f"{best.seconds:.3g} | {ratio:.2f} |")
    lines += ["", "Every solver's time per cell (inf: not reached within the cap):", "",
              frame.pivot_table(index=["dataset", "penalty", "l1_frac"], columns="solver",
                                values="seconds", sort=False).to_markdown(floatfmt=".3g"),
              "", f"Versions: {meta['versions']}"]
    return "\n".join(lines) + "\n"


def output_paths(out: Path) -> tuple[Path, Path]:
    """The CSV and Markdown files of ``--out`` (its name with .csv and .md appended: a name
    such as ``gisette_scale.t`` keeps its dot; ``with_suffix`` wrote gisette_scale.csv)."""
    return out.parent / (out.name + ".csv"), out.parent / (out.name + ".md")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--mirror", default=os.environ.get("PDSPARSE_DATA_MIRROR",
                                                       "/work/shared/datasets"))
    ap.add_argument("--fractions", default="10,100", help="l1 = lambda_max / each")
    ap.add_argument("--target", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cap", type=float, default=60.0, help="CPU s of one fit, at most")
    ap.add_argument("--ref-seconds", type=float, default=600.0)
    ap.add_argument("--out", default="results/benchmarks/sparse_vs_peers")
    args = ap.parse_args(argv)

    from pdsparse.penalties import ElasticNet
    from pdsparse.solvers.predict import lambda_max

    meta = {"machine": machine(), "versions": versions("sklearn"), "load_before": loadavg(),
            "target": args.target, "repeats": args.repeats}
    rows = []
    for name in args.datasets.split(","):
        base = load(name, Path(args.mirror))
        n, d = base.shape
        lam = lambda_max(base)
        for l2, pen in ((0.0, "l1"), (1.0 / n, "elastic net")):
            for frac in (float(f) for f in args.fractions.split(",")):
                t0 = time.perf_counter()
                problem = base.with_penalty(ElasticNet(l2, lam / frac))
                for row in cell(problem, args):
                    rows.append({"dataset": name, "n": n, "d": d, "penalty": pen,
                                 "l1_frac": frac, "l1": lam / frac, "l2": l2, **row,
                                 "load": loadavg()[0]})
                print(f"{name} {pen} lambda_max/{frac:g}: {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr, flush=True)
    meta["load_after"] = loadavg()
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for path, text in zip(output_paths(out), (frame.to_csv(index=False),
                                               markdown(frame, meta)), strict=True):
        with atomic_path(path) as tmp:
            tmp.write_text(text)
    print(markdown(frame, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
