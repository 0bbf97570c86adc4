"""Study: which normalization, loss scaling and l1 radius reproduce PDBFW's sparsity column.

PDBFW (Lei, Zhuo, Caramanis, Dhillon, Dimakis), Sec. 5 and Table 2: smooth hinge loss, l1
ball of radius r = 300, l2 weight mu = 10/n, "Data is normalized", and the solution sparsity
nnz(x*) of each data set (duke 423 = 5.9%, rcv1 2.5%, news20.binary 0.1%, MNIST.RB 0 vs 9
0.9%, ijcnn.RB 1.2%, cod-rna.RB 1.2%). The paper's eq. (5) averages the loss, Theorem 4.1
sums it; neither the normalization nor the random-binning bandwidths are given.

Two parts:

``sigma``
    The random-binning bandwidths (:class:`pdsparse.data.features.RandomBinning`, map seed 0,
    inputs scaled by ``input_scale: max_abs``) that reproduce Table 2's feature counts: MNIST
    digits 0 and 9 (11,872 rows, 100 grids -> 894,499 features); ijcnn1 with 300 grids ->
    58,699 features, which the paper has for 49,990 rows while the mirror holds the
    35,000-row ``ijcnn1.tr``: (a) the sigma that gives 58,699 bins on the 35,000 rows, and (b)
    the sigma whose bin count, extrapolated from 17,500 and 35,000 rows by the power law
    ``count ~ n^s`` to 49,990 rows, is 58,699 (the paper's bandwidth, our estimate); the
    digits 0-vs-9 stand-in (358 rows): the sigma that gives MNIST's share of distinct bins,
    894,499 / (11,872 x 100) = 75.3% of rows x grids. Bisection on log sigma; the bin count
    is a step function of sigma, so the nearest sigma on a 0.001 grid is reported with its
    count. The full sets (``--sigma-sets ijcnn1,cod-rna``): the full 49,990-row ``ijcnn1``
    with 300 grids -> 58,699 features and ``cod-rna`` (59,535 rows) with 100 grids ->
    81,398, both on all the paper's rows (no extrapolation); the nearest sigma on a grid of
    four significant digits. For cod-rna, whose 8 columns have very different ranges
    (feature 1 up to 1,868, features 3-8 below 0.48), the sigma under a per-column scaling
    (every column by its largest |value|; no recipe offers it) is recorded beside it.

``radius``
    For every data set x normalization x loss scaling: the l2-only solution (``||x*||_1``,
    nnz), whether r = 300 is active, nnz(x*) at r = 300, and the radius r* whose solution has
    the paper's sparsity ratio (safeguarded interpolation of log nnz in log r, to within 3%
    of the target count or 16 solves). Loss scaling ``avg``: P = 1/n sum h + (10/n)/2
    ||x||^2 (eq. (5) with mu = 10/n); ``sum``: P = sum h + (10/n)/2 ||x||^2, i.e. the
    average with l2 = 10/n^2 (same x*, same sparsity). Every solve is
    :func:`pdsparse.reference.reference_solution` (certified relative duality gap <= 1e-8,
    accelerated projected gradient + Newton on the support for the ball, dual coordinate
    ascent for the l2-only problem). nnz counts exact nonzeros of
    the certified solution (the projection onto the ball sets entries to exactly 0); the
    count of |x_j| > 1e-6 max|x| is kept beside it and agrees on every ball solution here.

Data sets (prepared into ``--data-dir``, reused when present; the mirror is
``--mirror``/``PDSPARSE_DATA_MIRROR``, default ``/work/shared/datasets``):

* ``duke`` (mirror): the LIBSVM file, whose columns are already standardized; normalizations
  none, unit_rows, avg_example_norm, unit_cols (every column to unit 2-norm) and
  maxabs_cols (every column to [-1, 1]), applied here in memory.
* ``ijcnn1.tr-rb`` (mirror): 300 grids, sigma (b); RB rows have norm exactly 1, so every row
  normalization is the identity.
* ``ijcnn1-rb`` (mirror): the full 49,990-row ``ijcnn1``, 300 grids, the sigma matched on it.
* ``cod-rna-rb`` (mirror): ``cod-rna`` (59,535 rows), 100 grids, the sigma matched on it
  (inputs by their largest |value|, as every RB recipe).
* ``mnist09-rb`` (mirror): all 11,872 rows of digits 0 (-1) and 9 (+1), 100 grids.
* ``digits09-rb`` (offline): scikit-learn's bundled digits 0 and 9 (358 rows), 100 grids.
* ``news20-halves`` (mirror): the multiclass news20 training split, labels 1-10 -> +1,
  11-20 -> -1 (15,935 x 62,061): a stand-in of the shape of rcv1 / news20.binary; unit_rows
  (the LIBSVM text sets are unit rows) and none (raw counts).
* ``zipf-bow`` (offline): :func:`pdsparse.data.synthetic.zipf_bow` (4,000 x 12,000, 75 words
  per row, Zipf exponent 1, seed 0), unit rows: a small stand-in of rcv1's shape.

Outputs (atomic): ``<out-dir>/pdbfw_radius.json`` (every solve, cumulative: a finished
combination is not recomputed unless ``--fresh``), ``pdbfw_radius_sigma.json``, and the
Markdown tables on stdout (copied into ``benchmarks/pdbfw_radius.md``).

Usage::

    python benchmarks/pdbfw_radius.py sigma                       # every set below
    python benchmarks/pdbfw_radius.py sigma --sigma-sets ijcnn1,cod-rna
    python benchmarks/pdbfw_radius.py radius                      # every set, both scalings
    python benchmarks/pdbfw_radius.py radius --sets duke,digits09-rb --scalings avg
    python benchmarks/pdbfw_radius.py radius --sets ijcnn1-rb,cod-rna-rb --scalings avg
    python benchmarks/pdbfw_radius.py table                       # tables from the JSON
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import DATA_DIR, DEFAULT_MIRROR, OUT_DIR, machine, make_log, rel, versions

RADIUS = 300.0
MU_TIMES_N = 10.0  # mu = 10 / n (Sec. 5)
RTOL = 1e-8
NNZ_TOL = 0.03  # r* search: stop within 3% of the target count
MAX_SOLVES = 16
MNIST09_SHARE = 894499 / (11872 * 100)  # distinct bins per (row, grid) of MNIST.RB 0 vs 9

log = make_log("pdbfw_radius")


@dataclass(frozen=True)
class DataDef:
    """A data set of the study: its source, recipe, normalizations and the paper's target."""

    name: str
    source: str  # "registry:<name>" or "generator:<kind>"
    recipe: dict
    normalizations: tuple[str, ...]
    target_ratio: float  # the paper's nnz(x*) / d this set stands for
    paper: str
    params: tuple = ()  # generator parameters


DATASETS = {dd.name: dd for dd in (
    DataDef("duke", "registry:duke", {"normalization": "none"},
            ("none", "unit_rows", "avg_example_norm", "unit_cols", "maxabs_cols"),
            423 / 7129, "duke 423 (5.9%)"),
    DataDef("ijcnn1.tr-rb", "registry:ijcnn1.tr",
            {"normalization": "none", "features": "rb", "n_grids": 300, "sigma": 1.67},
            ("none",), 715 / 58699, "ijcnn.RB 715 (1.2%)"),
    DataDef("ijcnn1-rb", "registry:ijcnn1",
            {"normalization": "none", "features": "rb", "n_grids": 300, "sigma": 1.848},
            ("none",), 715 / 58699, "ijcnn.RB 715 (1.2%)"),
    DataDef("cod-rna-rb", "registry:cod-rna",
            {"normalization": "none", "features": "rb", "n_grids": 100, "sigma": 0.003282},
            ("none",), 958 / 81398, "cob-rna.RB 958 (1.2%)"),
    DataDef("cod-rna-rb-cols", "registry:cod-rna",
            {"normalization": "none", "features": "rb", "n_grids": 100, "sigma": 0.1972,
             "input_scale": "max_abs_columns"},
            ("none",), 958 / 81398, "cob-rna.RB 958 (1.2%)"),
    DataDef("mnist09-rb", "registry:mnist",
            {"normalization": "none", "classes": [0, 9], "features": "rb", "n_grids": 100,
             "sigma": 10.729},
            ("none",), 8450 / 894499, "MNIST.RB 0 vs 9: 8,450 (0.9%)"),
    DataDef("digits09-rb", "generator:digits",
            {"normalization": "none", "classes": [0, 9], "features": "rb", "n_grids": 100,
             "sigma": 1.72},
            ("none",), 8450 / 894499, "MNIST.RB 0 vs 9 ratio (0.9%)"),
    DataDef("news20-halves", "registry:news20",
            {"normalization": "none", "positive_class": list(range(1, 11))},
            ("unit_rows", "none"), 1169 / 47236, "rcv1 1,169 (2.5%)"),
    DataDef("zipf-bow", "generator:zipf_bow", {"normalization": "none"}, ("unit_rows",),
            1169 / 47236, "rcv1 ratio (2.5%)",
            (("n", 4000), ("d", 12000), ("mean_nnz_per_row", 75), ("exponent", 1.0))),
)}


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def _mirror(opts) -> Path:
    from pdsparse.data.fetch import resolve_mirror

    return resolve_mirror(opts.mirror, must_exist=False) or DEFAULT_MIRROR


def load(dd: DataDef, opts) -> tuple[sp.csr_matrix, np.ndarray, str]:
    """The prepared training rows of ``dd`` (prepared into the data dir when missing)."""
    from pdsparse.data.prepare import Recipe, prepare, prepare_synthetic
    from pdsparse.data.store import load_dataset

    data_dir = Path(opts.data_dir)
    recipe = Recipe(**dd.recipe)
    kind, base = dd.source.split(":", 1)
    path = data_dir / f"{dd.name}__{recipe.tag()}.npz"
    if not path.is_file():
        t = time.perf_counter()
        if kind == "generator":
            prepare_synthetic(dd.name, base, dict(dd.params), 0, recipe, path)
        else:
            from pdsparse.data.fetch import fetch
            from pdsparse.data.registry import load_registry

            spec = load_registry(Path(__file__).resolve().parents[1] / "config"
                                 / "datasets.yaml")[base]
            raw = fetch(spec, data_dir / "raw", mirror=_mirror(opts), progress=False,
                        download=False)
            prepare(raw, spec, recipe, path)
        log(f"prepared {rel(path)} in {time.perf_counter() - t:.1f} s")
    ds = load_dataset(path)
    return sp.csr_matrix(ds.A), np.asarray(ds.b, dtype=np.float64), recipe.tag()


def normalized(A: sp.csr_matrix, how: str) -> sp.csr_matrix:
    """Row normalizations of :mod:`pdsparse.data.normalize`, plus two column scalings:
    ``unit_cols`` (every nonzero column to unit 2-norm), ``maxabs_cols`` (every nonzero
    column divided by its largest |value|, into [-1, 1])."""
    from pdsparse.data.normalize import normalize

    if how in ("none", "unit_rows", "avg_example_norm"):
        return normalize(A, how)[0]
    A = sp.csr_matrix(A, dtype=np.float64, copy=True)
    if how == "unit_cols":
        scale = np.sqrt(np.asarray(A.multiply(A).sum(axis=0)).ravel())
    elif how == "maxabs_cols":
        scale = np.asarray(abs(A).max(axis=0).todense()).ravel()
    else:
        raise ValueError(f"unknown normalization {how!r}")
    inv = np.divide(1.0, scale, out=np.ones_like(scale), where=scale > 0)
    A.data *= inv[A.indices]
    return A


# ---------------------------------------------------------------------------------------------
# Solves
# ---------------------------------------------------------------------------------------------


def l2_of(n: int, scaling: str) -> float:
    """The l2 weight on the averaged loss: mu = 10/n (avg) or mu / n = 10/n^2 (sum)."""
    return MU_TIMES_N / n if scaling == "avg" else MU_TIMES_N / n**2


def solve(A, b, l2: float, radius: float | None, max_s: float) -> dict:
    """Certified x* of the smooth-hinge problem with l2 and (radius given) the l1 ball."""
    from pdsparse.penalties import ElasticNet, L1Ball
    from pdsparse.problem import Problem
    from pdsparse.reference import reference_solution

    pen = ElasticNet(l2) if radius is None else L1Ball(radius, l2)
    t = time.perf_counter()
    ref = reference_solution(Problem(A, b, "smooth_hinge", penalty=pen), rtol=RTOL,
                             max_seconds=max_s)
    x = np.asarray(ref.w).ravel()
    big = np.abs(x).max() if x.size else 0.0
    return {"radius": radius, "l1": float(np.abs(x).sum()), "nnz": int(np.count_nonzero(x)),
            "nnz_rel1e-6": int(np.count_nonzero(np.abs(x) > 1e-6 * big)),
            "p_star": float(ref.p_star), "rel_gap": float(ref.rel_gap), "method": ref.method,
            "seconds": time.perf_counter() - t}


def probe(A, b, l2: float, r: float, max_s: float, target: int, lo, hi, solves: list):
    """Solve at radius r, record and log it, and move the bracket (lo, hi) of (r, nnz) pairs
    around ``target``: returns (the solve, lo, hi)."""
    got = solve(A, b, l2, r, max_s)
    solves.append(got)
    log(f"    r={r:.5g}: nnz {got['nnz']} ({got['seconds']:.1f} s)")
    if got["nnz"] < target:
        return got, (r, got["nnz"]), hi
    return got, lo, (r, got["nnz"])


def radius_for(A, b, l2: float, target: int, lo: tuple[float, int], hi: tuple[float, int],
               max_s: float, solves: list) -> dict:
    """r with nnz(x*(r)) = target, from brackets (r, nnz) lo < target <= hi: safeguarded
    interpolation of log nnz against log r (kept inside the middle 80% of the bracket in
    log r, so a jump of nnz still shrinks it). A solve that is not certified ends the search
    with the best radius so far."""
    from pdsparse.reference import CertificationError

    best = min((lo, hi), key=lambda p: abs(p[1] - target))
    note = ""
    for _ in range(MAX_SOLVES):
        if abs(best[1] - target) <= NNZ_TOL * target or hi[0] / lo[0] < 1.0 + 1e-6:
            break
        a, c = math.log(lo[0]), math.log(hi[0])
        na, nc = math.log(max(lo[1], 1)), math.log(max(hi[1], 1))
        t = (math.log(target) - na) / (nc - na) if nc > na else 0.5
        r = math.exp(a + min(max(t, 0.1), 0.9) * (c - a))
        try:
            got, lo, hi = probe(A, b, l2, r, max_s, target, lo, hi, solves)
        except CertificationError as exc:
            note = f"search stopped: r={r:.5g} not certified ({exc})"
            log(f"    {note}")
            break
        if abs(got["nnz"] - target) < abs(best[1] - target):
            best = (r, got["nnz"])
    out = {"r_star": best[0], "nnz_at_r_star": best[1],
           "bracket": {"lo": list(lo), "hi": list(hi)}}
    if note:
        out["note"] = note
    return out


def study(dd: DataDef, how: str, scaling: str, A, b, opts) -> dict:
    n, d = A.shape
    l2 = l2_of(n, scaling)
    target = max(1, round(dd.target_ratio * d))
    log(f"{dd.name} [{how}, {scaling}]: n={n} d={d} l2={l2:.3g} target nnz {target}")
    free = solve(A, b, l2, None, opts.max_seconds)
    log(f"  l2 only: ||x||_1 {free['l1']:.4g}, nnz {free['nnz']} ({free['seconds']:.1f} s)")
    at300 = solve(A, b, l2, RADIUS, opts.max_seconds)
    active = free["l1"] > RADIUS
    log(f"  r=300: nnz {at300['nnz']} ({'active' if active else 'inactive'}, "
        f"{at300['seconds']:.1f} s)")
    solves: list = []
    if free["nnz"] < target:
        found = {"r_star": None, "nnz_at_r_star": None,
                 "note": f"the l2-only solution has {free['nnz']} < {target} nonzeros"}
    else:
        r0, n0 = (RADIUS, at300["nnz"]) if active else (free["l1"], free["nnz"])
        if abs(n0 - target) <= NNZ_TOL * target:
            lo = hi = (r0, n0)
        elif n0 >= target:  # shrink from r0
            lo, hi, r = None, (r0, n0), r0
            while lo is None:
                r /= 4.0
                _, lo, hi = probe(A, b, l2, r, opts.max_seconds, target, lo, hi, solves)
        else:  # between 300 and the l2-only norm
            lo, hi = (r0, n0), (free["l1"], free["nnz"])
        found = radius_for(A, b, l2, target, lo, hi, opts.max_seconds, solves)
    out = {"set": dd.name, "normalization": how, "scaling": scaling, "n": n, "d": d,
           "nnz_A": int(A.nnz), "l2": l2, "target_nnz": target, "paper": dd.paper,
           "l2_only": free, "r300": at300, "active_at_300": bool(active), **found,
           "r_star_over_l1_free": (found["r_star"] / free["l1"]
                                   if found.get("r_star") else None),
           "solves": solves}
    if found.get("r_star"):
        log(f"  r* = {found['r_star']:.4g} (nnz {found['nnz_at_r_star']}, "
            f"r*/||x_free||_1 = {out['r_star_over_l1_free']:.3g})")
    return out


def run_radius(opts) -> None:
    from pdsparse.reference import CertificationError

    out_path = Path(opts.out_dir) / "pdbfw_radius.json"
    results = {} if opts.fresh or not out_path.is_file() else json.loads(out_path.read_text())
    rows = results.setdefault("rows", {})
    results.update(machine=machine(), versions=versions(), radius=RADIUS, rtol=RTOL,
                   mu="10/n on the averaged loss (avg) or the summed loss (sum)")
    for name in opts.sets:
        dd = DATASETS[name]
        try:
            A0, b, tag = load(dd, opts)
        except Exception as exc:  # a missing mirror file skips the set, loudly
            log(f"{name}: skipped ({exc})")
            continue
        for how in dd.normalizations:
            A = normalized(A0, how)
            for scaling in opts.scalings:
                key = f"{name}|{how}|{scaling}"
                if key in rows and not opts.fresh:
                    continue
                try:
                    rows[key] = {**study(dd, how, scaling, A, b, opts), "recipe_tag": tag}
                except CertificationError as exc:  # recorded, shown under the table
                    log(f"{key}: not certified ({exc})")
                    rows[key] = {"set": name, "normalization": how, "scaling": scaling,
                                 "error": str(exc), "max_seconds": opts.max_seconds}
                save(out_path, results)
    print(tables(results))


def save(path: Path, obj: dict) -> None:
    from pdsparse.io import atomic_path

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, sort_keys=True))


def tables(results: dict) -> str:
    """The Markdown table of every finished combination."""
    head = ("| set | normalization | loss | n x d | l2-only ‖x*‖₁ | r=300 active | "
            "nnz(x*) at r=300 | paper | r* for the paper's ratio | nnz at r* | "
            "r* / ‖x*‖₁ (l2-only) |")
    lines = [head, "|---" * 11 + "|"]

    def count(k: int | None, d: int) -> str:
        return "—" if k is None else f"{k:,} ({100 * k / d:.3g}%)"

    def num(v: float | None) -> str:
        return "—" if v is None else f"{v:.3g}"

    failed = []
    for row in results.get("rows", {}).values():
        if "error" in row:
            failed.append(f"- {row['set']} [{row['normalization']}, {row['scaling']}]: "
                          f"{row['error']}")
            continue
        d = row["d"]
        lines.append(
            f"| {row['set']} | {row['normalization']} | {row['scaling']} | "
            f"{row['n']:,} x {d:,} | {row['l2_only']['l1']:.4g} | "
            f"{'yes' if row['active_at_300'] else 'no'} | {count(row['r300']['nnz'], d)} | "
            f"{row['paper']} | {num(row.get('r_star'))} | "
            f"{count(row.get('nnz_at_r_star'), d)} | {num(row.get('r_star_over_l1_free'))} |")
    if failed:
        lines += ["", "Not certified within the time limit:", *failed]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Bandwidths
# ---------------------------------------------------------------------------------------------


def _bins(X, grids: int, sigma: float) -> int:
    from pdsparse.data.features import RandomBinning

    return int(RandomBinning(grids, sigma, 0).fit(X).n_features)


def _bisect(count, target: float, lo: float, hi: float, steps: int = 40) -> float:
    """sigma in [lo, hi] where the decreasing ``count(sigma)`` crosses ``target``."""
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        if count(mid) > target:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def _nearest_on_grid(count, sigma: float, target: float, step: float = 0.001,
                     half_width: int = 12) -> tuple[float, float]:
    """The sigma of the 0.001 grid near ``sigma`` whose count is closest to ``target``."""
    best = None
    for k in range(-half_width, half_width + 1):
        s = round(round(sigma / step) * step + k * step, 6)
        c = count(s)
        if best is None or abs(c - target) < abs(best[1] - target):
            best = (s, c)
    return best


def _scaled_rows(name: str, classes, opts) -> sp.csr_matrix:
    """The input rows as a recipe feeds them to the map (class filter, max_abs scaling)."""
    from pdsparse.data.prepare import Recipe, select_classes

    recipe = Recipe("none", classes=classes) if classes else Recipe("none")
    if name == "digits":
        from pdsparse.data.synthetic import generate

        A, y = generate("digits", {}, 0)
    else:
        from pdsparse.data.fetch import fetch
        from pdsparse.data.libsvm import read_libsvm
        from pdsparse.data.registry import load_registry

        spec = load_registry(Path(__file__).resolve().parents[1] / "config"
                             / "datasets.yaml")[name]
        raw = fetch(spec, Path(opts.data_dir) / "raw", mirror=_mirror(opts), progress=False,
                    download=False)
        A, y = read_libsvm(raw, n_features=spec.d)
    A, y, _ = select_classes(sp.csr_matrix(A, dtype=np.float64), y, recipe, name)
    A = A.copy()
    A.data /= np.abs(A.data).max()
    return A


def _sig_step(sigma: float, digits: int = 4) -> float:
    """The grid step that keeps ``digits`` significant digits of ``sigma``."""
    return 10.0 ** (math.floor(math.log10(sigma)) - digits + 1)


def _full_set(name: str, grids: int, target: int, lo: float, hi: float, opts,
              per_column: bool = False) -> dict:
    """The sigma whose bin count on every row of ``name`` is ``target`` (Table 2)."""
    X = _scaled_rows(name, None, opts)
    t = time.perf_counter()
    s = _bisect(lambda v: _bins(X, grids, v), target, lo, hi, steps=30)
    step = _sig_step(s)
    s_grid, c = _nearest_on_grid(lambda v: _bins(X, grids, v), s, target, step=step,
                                 half_width=6)
    out = {"rows": X.shape[0], "grids": grids, "target": target, "sigma": s_grid,
           "features": c, "grid_step": step, "bisection_sigma": s,
           "input_scale": "max_abs (largest |value| of all entries)",
           "search_time_s": time.perf_counter() - t}
    log(f"{name}: sigma {s_grid} -> {c} features on {X.shape[0]} rows (target {target:,})")
    if per_column:  # every column by its largest |value| (input_scale: max_abs_columns)
        scale = np.asarray(abs(X).max(axis=0).todense()).ravel()
        Y = X.multiply(1.0 / np.where(scale > 0, scale, 1.0)[None, :]).tocsr()
        s = _bisect(lambda v: _bins(Y, grids, v), target, 0.01, 10.0, steps=30)
        s_grid, c = _nearest_on_grid(lambda v: _bins(Y, grids, v), s, target,
                                     step=_sig_step(s), half_width=6)
        out["per_column_max_abs"] = {"sigma": s_grid, "features": c, "bisection_sigma": s}
        log(f"{name} (per-column scaling): sigma {s_grid} -> {c} features")
    return out


SIGMA_SETS = ("mnist09", "ijcnn1.tr", "digits09", "ijcnn1", "cod-rna")


def run_sigma(opts) -> None:
    path = Path(opts.out_dir) / "pdbfw_radius_sigma.json"
    out: dict = json.loads(path.read_text()) if path.is_file() and not opts.fresh else {}
    out.update({"machine": machine(), "versions": versions(), "map_seed": 0})
    parts = {"mnist09": _sigma_mnist09, "ijcnn1.tr": _sigma_ijcnn1_tr,
             "digits09": _sigma_digits09}
    for name in SIGMA_SETS:
        if name not in opts.sigma_sets:
            continue
        if name == "ijcnn1":  # 300 grids -> 58,699 features on all 49,990 rows
            out["ijcnn1_full"] = _full_set("ijcnn1", 300, 58699, 0.5, 5.0, opts)
        elif name == "cod-rna":  # 100 grids -> 81,398 features on 59,535 rows
            out["cod-rna"] = _full_set("cod-rna", 100, 81398, 1e-4, 1.0, opts,
                                       per_column=True)
        else:
            parts[name](out, opts)
        save(path, out)
    print(json.dumps(out, indent=1))


def _sigma_mnist09(out: dict, opts) -> None:
    # MNIST 0 vs 9, 100 grids -> 894,499 features (Table 2)
    X = _scaled_rows("mnist", [0, 9], opts)
    t = time.perf_counter()
    peak = _bins(X, 100, 10.0)
    out["bins_time_s"] = time.perf_counter() - t
    s = _bisect(lambda v: _bins(X, 100, v), 894499, 1.0, 30.0)
    s_grid, c = _nearest_on_grid(lambda v: _bins(X, 100, v), s, 894499)
    out["mnist09"] = {"rows": X.shape[0], "grids": 100, "target": 894499, "sigma": s_grid,
                      "features": c, "bisection_sigma": s, "features_at_sigma_10": peak}
    log(f"mnist09: sigma {s_grid} -> {c} features (target 894,499)")


def _sigma_ijcnn1_tr(out: dict, opts) -> None:
    # ijcnn1: 300 grids -> 58,699 features for 49,990 rows; the 35,000 of ijcnn1.tr here
    X = _scaled_rows("ijcnn1.tr", None, opts)
    half = X[np.sort(np.random.default_rng(0).permutation(X.shape[0])[:X.shape[0] // 2])]

    def extrapolated(v: float) -> float:
        full, h = _bins(X, 300, v), _bins(half, 300, v)
        return full * (49990 / X.shape[0]) ** (math.log(full / h) / math.log(2))

    s_a = _bisect(lambda v: _bins(X, 300, v), 58699, 0.5, 5.0)
    s_a_grid, c_a = _nearest_on_grid(lambda v: _bins(X, 300, v), s_a, 58699)
    s_b = _bisect(extrapolated, 58699, 0.5, 5.0, steps=25)
    s_b2 = round(s_b, 2)
    out["ijcnn1"] = {
        "rows": X.shape[0], "grids": 300, "target": 58699, "paper_rows": 49990,
        "a_count_on_35000_rows": {"sigma": s_a_grid, "features": c_a},
        "b_extrapolated_to_49990_rows": {
            "sigma": s_b2, "features_on_35000_rows": _bins(X, 300, s_b2),
            "features_on_17500_rows": _bins(half, 300, s_b2),
            "extrapolated_features_49990": extrapolated(s_b2), "bisection_sigma": s_b},
    }
    log(f"ijcnn1: (a) sigma {s_a_grid} -> {c_a} on 35,000 rows; (b) sigma {s_b2} -> "
        f"{out['ijcnn1']['b_extrapolated_to_49990_rows']['features_on_35000_rows']} on 35,000, "
        f"{extrapolated(s_b2):.0f} extrapolated to 49,990")


def _sigma_digits09(out: dict, opts) -> None:
    # digits 0 vs 9: MNIST's share of distinct bins
    X = _scaled_rows("digits", [0, 9], opts)
    target = MNIST09_SHARE * X.shape[0] * 100
    s = _bisect(lambda v: _bins(X, 100, v), target, 0.1, 30.0)
    s2 = round(s, 2)
    out["digits09"] = {"rows": X.shape[0], "grids": 100, "target": target, "sigma": s2,
                       "features": _bins(X, 100, s2), "bisection_sigma": s}
    log(f"digits09: sigma {s2} -> {out['digits09']['features']} (target {target:.0f})")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=("sigma", "radius", "table"))
    p.add_argument("--sets", default=",".join(DATASETS),
                   help=f"comma-separated, from {', '.join(DATASETS)}")
    p.add_argument("--sigma-sets", default=",".join(SIGMA_SETS),
                   help=f"sigma: comma-separated, from {', '.join(SIGMA_SETS)}")
    p.add_argument("--scalings", default="avg,sum")
    p.add_argument("--data-dir", default=str(DATA_DIR))
    p.add_argument("--out-dir", default=str(OUT_DIR))
    p.add_argument("--mirror", default=os.environ.get("PDSPARSE_DATA_MIRROR"))
    p.add_argument("--max-seconds", type=float, default=900.0, help="per certified solve")
    p.add_argument("--fresh", action="store_true", help="recompute finished combinations")
    opts = p.parse_args(argv)
    opts.sets = [s for s in opts.sets.split(",") if s]
    opts.scalings = [s for s in opts.scalings.split(",") if s]
    opts.sigma_sets = [s for s in opts.sigma_sets.split(",") if s]
    unknown = [s for s in opts.sets if s not in DATASETS] + \
        [s for s in opts.scalings if s not in ("avg", "sum")] + \
        [s for s in opts.sigma_sets if s not in SIGMA_SETS]
    if unknown:
        p.error(f"unknown set or scaling: {', '.join(unknown)}")
    if opts.part == "sigma":
        run_sigma(opts)
    elif opts.part == "radius":
        run_radius(opts)
    else:
        print(tables(json.loads((Path(opts.out_dir) / "pdbfw_radius.json").read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
