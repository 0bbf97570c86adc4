"""Benchmark: how often does ``pdsparse advise`` predict the fastest solver?

For every data set of the mirror and a dozen generated ones (n << d to n >> d, dense to
sparse), and for each penalty family of :data:`pdsparse.solvers.predict.FAMILIES`, it computes the
prediction (:func:`pdsparse.solvers.predict.predict`, the rule of ``solve(problem, "auto")``) and a
race of every applicable solver (:func:`pdsparse.race.race`: at its defaults, from the same
start, to the same certified relative duality gap, at most ``--seconds`` of kernel CPU time
each, ranked by CPU time with setup), and records the predicted solver, the winner and the
CPU-time ratio of the predicted to the winner. Target (issue 21): the predicted solver wins or
is within 1.5x of the winner on at least 90 % of the problems.

Problems (rows normalized by the average example norm, as ``pdsparse advise`` does):

* ``l2``: logistic loss, l2 = 1/n (Face-Off's setting);
* ``elastic_net``: logistic loss, l2 = 1/n, l1 = ``--l1-frac`` (0.1) x lambda_max, where
  lambda_max = ||A^T phi'(0) / n||_inf is the smallest l1 with x* = 0;
* ``l1_ball``: smoothed hinge loss (PDBFW's; every l1-ball solver takes it), l2 = 1/n,
  radius = ``--radius-frac`` (0.5) x ||w_l2||_1, w_l2 the l2 problem's solution (dual RCD to
  relative gap 1e-4): a ball that binds.

Multiclass sets are made binary one-vs-rest (news20, sector: class 1; mnist: digit 0). Each
finished (data set, family) is appended to ``<out>/advise_accuracy.partial.jsonl`` so that an
interrupted run resumes where it stopped (``--fresh`` starts over). Outputs (atomic):
``results/benchmarks/advise_accuracy.{parquet,md,json}``.

Usage::

    python benchmarks/advise_accuracy.py                       # everything, ~1 h on 2 cores
    python benchmarks/advise_accuracy.py --only generated --seconds 2
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by file path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    DEFAULT_MIRROR,
    OUT_DIR,
    Watch,
    machine_line,
    make_log,
    run_record,
    versions,
)
from bench.report import write  # noqa: E402

log = make_log("advise_accuracy")

MIRROR_SETS = {
    # name: (file, positive class for one-vs-rest or None)
    "leu": ("leu.bz2", None),
    "leu.t": ("leu.t.bz2", None),
    "duke": ("duke.bz2", None),
    "colon-cancer": ("colon-cancer.bz2", None),
    "gisette_scale.t": ("gisette_scale.t.bz2", None),
    "ijcnn1.tr": ("ijcnn1.tr.bz2", None),
    "ijcnn1": ("ijcnn1.bz2", None),
    "ijcnn1.t": ("ijcnn1.t.bz2", None),
    "cod-rna": ("cod-rna.bz2", None),
    "news20": ("news20.bz2", 1),
    "sector.scale": ("sector.scale.bz2", 1),
    "sector.t.scale": ("sector.t.scale.bz2", 1),
    "mnist": ("mnist.bz2", 0),
    "mnist.t": ("mnist.t.bz2", 0),
}
"""Every data set of the mirror (MANIFEST.tsv)."""

GENERATED = {
    # name: (kind, params, seed)
    "zipf-1k-x-20k": ("zipf_bow", dict(n=1000, d=20000, mean_nnz_per_row=50, exponent=1.0), 1),
    "zipf-2k-x-5k": ("zipf_bow", dict(n=2000, d=5000, mean_nnz_per_row=30, exponent=1.0), 2),
    "zipf-10k-x-2k": ("zipf_bow", dict(n=10000, d=2000, mean_nnz_per_row=20, exponent=1.0), 3),
    "zipf-50k-x-1k": ("zipf_bow", dict(n=50000, d=1000, mean_nnz_per_row=10, exponent=1.0), 4),
    "zipf-5k-x-50k": ("zipf_bow", dict(n=5000, d=50000, mean_nnz_per_row=100, exponent=1.2), 5),
    "zipf-20k-x-20k": ("zipf_bow", dict(n=20000, d=20000, mean_nnz_per_row=40, exponent=0.8), 6),
    "gauss-200-x-2k": ("dense_gaussian", dict(n=200, d=2000), 7),
    "gauss-500-x-500": ("dense_gaussian", dict(n=500, d=500), 8),
    "gauss-2k-x-200": ("dense_gaussian", dict(n=2000, d=200), 9),
    "gauss-5k-x-50": ("dense_gaussian", dict(n=5000, d=50), 10),
    "worst-dual-1k-x-100": ("worst_case_binary_dual", dict(d=100, n=1000, alpha=20000), 11),
    "worst-general-2k-x-200": ("worst_case_general", dict(d=200, n=2000), 12),
}
"""Generated sets spanning n << d to n >> d and dense to sparse (pdsparse.data.synthetic)."""

FAMILY_LOSS = {"l2": "logistic", "elastic_net": "logistic", "l1_ball": "smooth_hinge"}


def load(name: str, mirror: Path):
    """(A normalized, labels +-1, source) of a mirror or generated set."""
    from pdsparse.data.libsvm import binarize_labels, read_libsvm
    from pdsparse.data.normalize import normalize
    from pdsparse.data.synthetic import generate

    if name in MIRROR_SETS:
        file, positive = MIRROR_SETS[name]
        A, y = read_libsvm(mirror / file)
        b, source = binarize_labels(y, positive), f"mirror {file}"
        if positive is not None:
            source += f", class {positive} vs rest"
    else:
        kind, params, seed = GENERATED[name]
        A, b = generate(kind, params, seed)
        source = f"{kind}({', '.join(f'{k}={v}' for k, v in params.items())}, seed={seed})"
    A, _ = normalize(A, "avg_example_norm")
    return A, np.asarray(b, dtype=np.float64), source


def make_problem(A, b, family: str, opts, cache: dict):
    """The problem of ``family`` on (A, b) (module docstring), and its parameters."""
    from pdsparse.penalties import ElasticNet, L1Ball
    from pdsparse.problem import Problem

    n = A.shape[0]
    loss, l2 = FAMILY_LOSS[family], 1.0 / n
    if family == "l2":
        return Problem(A, b, loss, penalty=ElasticNet(l2)), {"l2": l2}
    if family == "elastic_net":
        from pdsparse.solvers.predict import problem_stats

        lam_max = problem_stats(Problem(A, b, loss, penalty=ElasticNet(l2)),
                                faceoff=False)["lambda_max"]
        l1 = opts.l1_frac * lam_max
        return Problem(A, b, loss, penalty=ElasticNet(l2, l1)), {"l2": l2, "l1": l1}
    from pdsparse.solvers import solve

    if "w_l2" not in cache:
        res = solve(Problem(A, b, loss, penalty=ElasticNet(l2)), "dual_rcd",
                    options={"dual_step": "newton"}, tol=1e-4, max_seconds=60)
        cache["w_l2"] = res.w
    radius = opts.radius_frac * float(np.abs(cache["w_l2"]).sum())
    return Problem(A, b, loss, penalty=L1Ball(radius, l2)), {"l2": l2, "radius": radius}


def one(name: str, family: str, A, b, source: str, opts, cache: dict) -> dict:
    from pdsparse.race import judge, race
    from pdsparse.solvers.predict import predict, problem_stats

    problem, params = make_problem(A, b, family, opts, cache)
    stats = problem_stats(problem)
    pred = predict(problem, stats)
    result = race(problem, opts.seconds, tol=opts.tol, seed=0,
                  progress=lambda line: log(f"{name} {family}: {line}"))
    verdict = judge(result, pred.method)
    times = {e.method: (e.cpu_s if e.reached else None) for e in result.best.values()}
    return {
        "dataset": name, "source": source, "family": family, "loss": problem.loss,
        "n": problem.n, "d": problem.d, "nnz": problem.nnz,
        "density": problem.nnz / (problem.n * problem.d), **params,
        "kappa": stats["kappa"], "T_P_over_T_D": stats.get("T_P_over_T_D"),
        "x_nnz_estimate": stats["x_nnz"],
        "predicted": pred.method, "winner": verdict["winner"], "ratio": verdict["ratio"],
        "ratio_is_bound": verdict["bound"], "held": verdict["held"],
        "within": verdict["within"], "reason": verdict["reason"],
        "prediction_reason": pred.reason,
        "seconds": {m: t for m, t in times.items()},
        "gaps": {e.method: e.rel_gap for e in result.best.values()},
    }


def markdown(rows: list[dict], meta: dict, opts) -> str:
    ok = [r for r in rows if r["within"]]
    decided = [r for r in rows if math.isfinite(r["ratio"]) or r["ratio_is_bound"]]
    lines = [
        "# Does `pdsparse advise` predict the fastest solver?",
        "",
        f"Recorded {time.strftime('%Y-%m-%d')} at commit {meta['versions']['git_commit'][:7]}; "
        + machine_line(meta, "quiet"),
        f"Race: every applicable solver at its defaults, at most {opts.seconds:g} kernel CPU "
        f"s each, to relative duality gap {opts.tol:g}, ranked by CPU time with setup.",
        "",
        f"**Predicted solver wins or is within 1.5x of the winner on {len(ok)} of {len(rows)} "
        f"problems ({100 * len(ok) / max(len(rows), 1):.0f} %)**; wins outright on "
        f"{sum(r['held'] for r in rows)}; {len(rows) - len(decided)} races where no solver "
        "reached the gap count as good only when the predicted solver ended lowest.",
        "",
    ]
    for fam in ("l2", "elastic_net", "l1_ball"):
        sub = [r for r in rows if r["family"] == fam]
        if sub:
            good = sum(r["within"] for r in sub)
            lines.append(f"- {fam}: {good} of {len(sub)} within 1.5x "
                         f"({sum(r['held'] for r in sub)} wins)")
    lines += ["", "| data set | n × d | density | family | predicted | winner | ratio | ok |",
              "|---|---|--:|---|---|---|--:|:-:|"]
    for r in rows:
        ratio = ("" if not math.isfinite(r["ratio"]) else
                 (f"≥ {r['ratio']:.3g}" if r["ratio_is_bound"] else f"{r['ratio']:.3g}"))
        lines.append(f"| {r['dataset']} | {r['n']:,} × {r['d']:,} | {r['density']:.2g} | "
                     f"{r['family']} | {r['predicted']} | {r['winner']} | {ratio} | "
                     f"{'yes' if r['within'] else '**no**'} |")
    bad = [r for r in rows if not r["within"]]
    if bad:
        lines += ["", "## Where the prediction fails", ""]
        for r in bad:
            lines.append(f"- {r['dataset']}, {r['family']}: {r['reason']} (prediction: "
                         f"{r['prediction_reason']})")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", type=Path,
                    default=Path(os.environ.get("PDSPARSE_DATA_MIRROR", DEFAULT_MIRROR)))
    ap.add_argument("--only", choices=("all", "mirror", "generated"), default="all")
    ap.add_argument("--datasets", help="comma list (default: all of --only)")
    ap.add_argument("--families", default="l2,elastic_net,l1_ball")
    ap.add_argument("--seconds", type=float, default=5.0, help="race budget per solver")
    ap.add_argument("--tol", type=float, default=1e-6, help="race relative gap")
    ap.add_argument("--l1-frac", type=float, default=0.1)
    ap.add_argument("--radius-frac", type=float, default=0.5)
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    ap.add_argument("--fresh", action="store_true", help="ignore the partial results")
    opts = ap.parse_args(argv)
    names = ([*GENERATED] if opts.only != "mirror" else []) + (
        [*MIRROR_SETS] if opts.only != "generated" else [])
    if opts.datasets:
        names = [x for x in opts.datasets.split(",") if x]
        unknown = [x for x in names if x not in GENERATED and x not in MIRROR_SETS]
        if unknown:
            ap.error(f"unknown data sets {unknown}; known: {[*GENERATED, *MIRROR_SETS]}")
    families = opts.families.split(",")
    partial = opts.out / "advise_accuracy.partial.jsonl"
    done: dict = {}
    if partial.exists() and not opts.fresh:
        for line in partial.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[(r["dataset"], r["family"])] = r
    opts.out.mkdir(parents=True, exist_ok=True)
    watch = Watch()
    rows = []
    for name in names:
        if all((name, f) in done for f in families):
            rows += [done[(name, f)] for f in families]
            continue
        if name in MIRROR_SETS and not (opts.mirror / MIRROR_SETS[name][0]).is_file():
            log(f"skipping {name}: {opts.mirror / MIRROR_SETS[name][0]} not found")
            continue
        A, b, source = load(name, opts.mirror)
        log(f"{name}: {A.shape[0]} x {A.shape[1]}, {A.nnz} nonzeros ({source})")
        cache: dict = {}
        for fam in families:
            if (name, fam) in done:
                rows.append(done[(name, fam)])
                continue
            row = one(name, fam, A, b, source, opts, cache)
            log(f"{name} {fam}: predicted {row['predicted']}, winner {row['winner']}, "
                f"ratio {row['ratio']:.3g}")
            with open(partial, "a") as fh:
                fh.write(json.dumps(row, default=float) + "\n")
            rows.append(row)
    import pandas as pd

    watched = watch.stop()
    meta = run_record(watch, {k: str(v) for k, v in vars(opts).items()}, versions())
    meta.update(quiet=watched["quiet"], other_cores=watched["other_cores"])
    df = pd.DataFrame([{**{k: v for k, v in r.items() if k not in ("seconds", "gaps")},
                        **{f"cpu_s_{m}": t for m, t in r["seconds"].items()},
                        **{f"gap_{m}": g for m, g in r["gaps"].items()}} for r in rows])
    print(write(df, meta, Path(opts.out) / "advise_accuracy",
                lambda f, m: markdown(rows, m, opts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
