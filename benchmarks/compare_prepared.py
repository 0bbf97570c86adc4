"""Prepare data sets with two checkouts of pdsparse and compare the files bit for bit: the proof
that a change of ``pdsparse.data.prepare`` (a refactoring) changed no prepared data.

    python benchmarks/compare_prepared.py OLD_CHECKOUT NEW_CHECKOUT --mirror DIR \\
        [--work DIR] [--workflow] [--extra] [--only TEXT ...] [--skip TEXT ...]

Each checkout is a source tree with its compiled extensions (``src/pdsparse/*.so``); its own
code prepares every case (``python -m pdsparse.cli prepare`` with ``PYTHONPATH=<checkout>/src``)
in a work directory holding ``config/datasets.yaml`` (NEW's registry plus the entries of
``EXTRA_REGISTRY``, mirror files the registry lacks) and ``data/raw/`` (fetched from the mirror
once, by NEW's ``pdsparse fetch``). Old files go to ``<work>/old/``, new ones to ``<work>/new/``.

Cases
-----
``--workflow``
    Every ``pdsparse prepare`` job of the default workflow (``config/config.yaml``), as
    ``snakemake -n -p`` prints it in each checkout with that checkout's code. The two lists of
    commands must be equal, output paths included (no workflow file is renamed); the commands
    are then run as printed (``--out`` redirected to the side's directory).
``--extra``
    ``EXTRA`` below: Face-Off-style recipes (a normalization, a positive class) and recipes
    with splits, test files, class filters and feature maps on the mirror's small real sets,
    on generators and on the bundled digits. A case's file is named ``<dataset>__<tag>.npz``
    with the tag each side's CLI printed; the two names must be equal.

Compared per file
-----------------
* the file name (above);
* every member of the ``.npz`` but ``meta`` (A or its CSR parts, b, the test rows, the
  format): dtype, shape and bytes, by the sha256 of the stored ``.npy`` member, read in
  pieces (a 4.6 GB dense A is compared in bounded memory); a differing member small enough
  is loaded to show its first differing value;
* the metadata (the ``meta`` JSON): every value of OLD's must be in NEW's, unchanged
  (recursively; ``pdsparse_version`` aside, it names the commit). Keys NEW adds are listed.

Verdicts: ``identical`` (members and metadata equal), ``identical arrays; meta adds K``
(members equal, every old metadata value kept, NEW records more), ``DIFFERENT`` (a member
or an old metadata value differs), ``FAILED`` (a side could not prepare the case, or the
names differ). The run ends with the counts; exit status 1 if any case is DIFFERENT or
FAILED. No ``pdsparse`` import here: the script judges the package before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import yaml

#: mirror files that ``config/datasets.yaml`` lacks, added to the work registry (shapes and
#: hashes from the mirror's MANIFEST.tsv and README.md): ijcnn1's published test split
EXTRA_REGISTRY = {
    "ijcnn1.t": {
        "url": "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/ijcnn1.t.bz2",
        "filename": "ijcnn1.t.bz2", "compression": "bz2", "task": "binary",
        "n": 91701, "d": 22, "nnz": None, "sha256": None, "sha256_text": None,
        "mirror_sha256_text":
            "e7b0bbd518641980dc322746c6bc59d019d3153934e6258e48f9d8cfae2c4bb8",
        "label_counts": {-1: 82989, 1: 8712},
        "description": "IJCNN 2001 challenge, test split (for compare_prepared.py)",
    },
}

#: more recipes: (dataset, prepare arguments without --dataset and --out); registry sets
#: take ``--registry config/datasets.yaml --raw data/raw/<file>`` (filled in)
EXTRA: list[tuple[str, str]] = [
    # Face-Off style: a normalization, maybe a positive class (one path now, two before)
    ("leu", "--normalization unit_rows"),
    ("leu", "--normalization none"),
    ("leu.t", "--normalization avg_example_norm"),
    ("duke", "--normalization avg_example_norm"),
    ("colon-cancer", "--normalization avg_example_norm"),
    ("colon-cancer", "--normalization unit_rows"),
    ("gisette_scale.t", "--normalization avg_example_norm"),
    ("ijcnn1", "--normalization avg_example_norm"),
    ("news20", "--normalization avg_example_norm --positive-class 1"),
    ("news20", "--normalization none"),
    ("sector.scale", "--normalization unit_rows --positive-class 3"),
    # splits, test files, class filters, label groups, feature maps
    ("leu", "--normalization avg_example_norm --test-file leu.t"),
    ("ijcnn1", "--normalization avg_example_norm --test-file ijcnn1.t"),
    ("ijcnn1", "--normalization none --features rb --n-grids 50 --sigma 1.848 "
               "--test-file ijcnn1.t"),
    ("colon-cancer", "--normalization unit_rows --test-rows 12 --split-seed 3"),
    ("duke", "--normalization avg_example_norm --features rf --n-features 200 --sigma 5 "
             "--test-rows 10 --subsample 30 --split-seed 1"),
    ("news20", "--normalization unit_rows --classes 1 2 3 --test-rows 500"),
    ("news20", "--normalization none --classes 1 2 --features rb --n-grids 20 --sigma 1 "
               "--input-scale max_abs_columns --subsample 1000"),
    ("sector.scale", "--normalization unit_rows --positive-group 1 2 3 "
                     "--test-file sector.t.scale"),
    ("mnist", "--normalization none --features rf --n-features 1000 --sigma 10 "
              "--test-rows 2000 --subsample 10000"),
    # generators (synthetic and bundled)
    ("gauss", "--generator dense_gaussian --param n=300 --param d=40 "
              "--normalization avg_example_norm"),
    ("gauss", "--generator dense_gaussian --param n=300 --param d=40 --normalization unit_rows"),
    ("wc", "--generator worst_case_general --param d=50 --param n=200 --normalization none"),
    ("zipf", "--generator zipf_bow --param d=3000 --param exponent=1.0 "
             "--param mean_nnz_per_row=40 --param n=1000 --normalization avg_example_norm "
             "--test-rows 100"),
    ("sensing", "--generator lowrank_sensing --param nuclear_norm=1.0 --param rank=5 "
                "--normalization avg_example_norm"),
    ("digits", "--generator digits --normalization none --positive-class 3"),
    ("digits", "--generator digits --normalization unit_rows"),
]

_TAG = re.compile(r"\[([^\]\s]+)\] -> ")
#: members at most this large are loaded to show where they differ
_SHOW_BYTES = 256 << 20


def _env(checkout: Path, mirror: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout / "src")
    env["PDSPARSE_DATA_MIRROR"] = str(mirror)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    return env


def workflow_commands(checkout: Path, mirror: Path, snakemake: str) -> list[str]:
    """The ``pdsparse prepare`` commands of the default workflow's dry run in ``checkout``."""
    out = subprocess.run([snakemake, "-n", "-p", "--cores", "1"], cwd=checkout,
                         env=_env(checkout, mirror), capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"snakemake -n failed in {checkout}:\n{out.stderr[-3000:]}")
    lines = (out.stdout + out.stderr).splitlines()
    cmds = sorted({re.sub(r" 2> \S+$", "", line.split("Shell command: ", 1)[1]).strip()
                   for line in lines if line.startswith("Shell command: pdsparse prepare ")})
    return [c.removeprefix("pdsparse prepare ") for c in cmds]


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def _set_option(args: list[str], name: str, value: str) -> list[str]:
    args = list(args)
    if name in args:
        args[args.index(name) + 1] = value
    else:
        args += [name, value]
    return args


def fetch_raw(work: Path, new: Path, mirror: Path, python: str, names: set[str]) -> dict:
    """Raw files of the registry data sets ``names`` in ``<work>/data/raw`` (NEW's fetch)."""
    paths = {}
    for name in sorted(names):
        out = subprocess.run([python, "-m", "pdsparse.cli", "fetch", "--registry",
                              "config/datasets.yaml", "--dataset", name, "--raw-dir", "data/raw",
                              "--mirror", str(mirror), "--no-download", "--quiet"],
                             cwd=work, env=_env(new, mirror), capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"fetch {name} failed: {out.stderr.strip()}")
        paths[name] = os.path.relpath(work / out.stdout.strip().splitlines()[-1], work)
    return paths


def prepare(side: str, checkout: Path, mirror: Path, python: str, work: Path, args: list[str],
            out: Path) -> tuple[str | None, str, float]:
    """Run one side's prepare; (tag printed or None on failure, stderr, CPU seconds of the
    process: user + system, which a loaded machine does not inflate as it does wall time)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    start = _children_cpu()
    run = subprocess.run([python, "-m", "pdsparse.cli", "prepare", *_set_option(
        args, "--out", str(out))], cwd=work, env=_env(checkout, mirror), capture_output=True,
        text=True)
    seconds = _children_cpu() - start
    m = _TAG.search(run.stderr)
    if run.returncode or m is None or not out.is_file():
        return None, f"{side}: exit {run.returncode}: {run.stderr.strip()[-800:]}", seconds
    return m.group(1), run.stderr, seconds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _member_digests(path: Path) -> dict[str, str]:
    out = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            h = hashlib.sha256()
            with zf.open(info) as fh:
                while chunk := fh.read(1 << 24):
                    h.update(chunk)
            out[info.filename] = h.hexdigest()
    return out


def _member(path: Path, name: str):
    with zipfile.ZipFile(path) as zf:
        return np.load(io.BytesIO(zf.read(name)), allow_pickle=False)


def _first_difference(old: Path, new: Path, name: str) -> str:
    with zipfile.ZipFile(old) as zo, zipfile.ZipFile(new) as zn:
        if max(zo.getinfo(name).file_size, zn.getinfo(name).file_size) > _SHOW_BYTES:
            return "(too large to show)"
    a, b = _member(old, name), _member(new, name)
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"dtype/shape {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    fa, fb = a.reshape(-1), b.reshape(-1)
    diff = np.flatnonzero(~((fa == fb) | ((fa != fa) & (fb != fb))))  # NaN equals NaN
    if not diff.size:
        return "equal values, different bits (signed zeros?)"
    i = int(diff[0])
    return f"{diff.size} values differ, first at {i}: {fa[i]!r} vs {fb[i]!r}"


def _meta(path: Path) -> dict:
    return json.loads(str(_member(path, "meta.npy")))


def _meta_changes(old, new, where: str = "") -> tuple[list[str], list[str]]:
    """(differences, added keys) of NEW's metadata against OLD's."""
    if isinstance(old, dict) and isinstance(new, dict):
        diffs, added = [], [f"{where}{k}" for k in new if k not in old]
        for key, value in old.items():
            if key == "pdsparse_version" and not where:
                continue
            if key not in new:
                diffs.append(f"{where}{key} missing")
                continue
            d, a = _meta_changes(value, new[key], f"{where}{key}.")
            diffs += d
            added += a
        return diffs, added
    if old != new or type(old) is not type(new):
        return [f"{where.rstrip('.')}: {old!r} -> {new!r}"], []
    return [], []


def compare(old: Path, new: Path) -> tuple[str, list[str]]:
    """(verdict, details) of two prepared files."""
    do, dn = _member_digests(old), _member_digests(new)
    details = []
    arrays = sorted((set(do) | set(dn)) - {"meta.npy"})
    for name in arrays:
        if name not in do or name not in dn:
            details.append(f"member {name} only in {'OLD' if name in do else 'NEW'}")
        elif do[name] != dn[name]:
            details.append(f"member {name}: {_first_difference(old, new, name)}")
    diffs, added = _meta_changes(_meta(old), _meta(new))
    details += [f"meta {d}" for d in diffs]
    if details:
        return "DIFFERENT", details
    if added:
        return f"identical arrays; meta adds {len(added)}", [f"meta adds {', '.join(added)}"]
    return "identical", []


def _selected(label: str, only: list[str], skip: list[str]) -> bool:
    return (not only or any(s in label for s in only)) and not any(s in label for s in skip)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="checkout before the change")
    parser.add_argument("new", type=Path, help="checkout after the change")
    parser.add_argument("--mirror", type=Path, required=True,
                        help="directory of raw LIBSVM files (e.g. /work/shared/datasets)")
    parser.add_argument("--work", type=Path, default=Path("compare-prepared"),
                        help="work directory (raw files, old/ and new/ outputs)")
    parser.add_argument("--workflow", action="store_true",
                        help="the default workflow's prepare jobs (snakemake -n -p)")
    parser.add_argument("--extra", action="store_true", help="the EXTRA cases")
    parser.add_argument("--only", nargs="*", default=[], help="cases whose label contains one")
    parser.add_argument("--skip", nargs="*", default=[], help="leave out cases matching one")
    parser.add_argument("--keep", action="store_true", help="keep the prepared files")
    parser.add_argument("--python", default=sys.executable, help="interpreter of both sides")
    parser.add_argument("--snakemake", default=shutil.which("snakemake") or str(
        Path(sys.executable).with_name("snakemake")))
    opts = parser.parse_args(argv)
    old, new, mirror = opts.old.resolve(), opts.new.resolve(), opts.mirror.resolve()
    work = opts.work.resolve()
    (work / "config").mkdir(parents=True, exist_ok=True)
    registry = yaml.safe_load((new / "config" / "datasets.yaml").read_text())
    registry["datasets"].update(EXTRA_REGISTRY)
    (work / "config" / "datasets.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))

    cases: list[tuple[str, list[str], str | None]] = []  # label, args, expected file name
    if opts.workflow:
        lists = {side: workflow_commands(root, mirror, opts.snakemake)
                 for side, root in (("old", old), ("new", new))}
        if lists["old"] != lists["new"]:
            only_old = sorted(set(lists["old"]) - set(lists["new"]))
            only_new = sorted(set(lists["new"]) - set(lists["old"]))
            print("the workflow's prepare commands differ:",
                  *[f"  OLD only: {c}" for c in only_old],
                  *[f"  NEW only: {c}" for c in only_new], sep="\n")
            return 1
        print(f"workflow: {len(lists['new'])} prepare commands, the same in both checkouts "
              "(output paths included)")
        for cmd in lists["new"]:
            args = shlex.split(cmd)
            name = Path(_option(args, "--out")).name
            cases.append((f"workflow {name}", args, name))
    if opts.extra:
        for dataset, text in EXTRA:
            args = ["--dataset", dataset, *shlex.split(text)]
            if "--generator" not in args:
                args = ["--registry", "config/datasets.yaml", "--raw", f"@{dataset}", *args]
                if "--test-file" in args:
                    args += ["--test-raw", f"@{_option(args, '--test-file')}"]
            cases.append((f"extra {dataset} {text}", args, None))
    cases = [c for c in cases if _selected(c[0], opts.only, opts.skip)]
    if not cases:
        print("no cases (give --workflow and/or --extra)")
        return 1

    needed = set()
    for _, args, _ in cases:
        if "--raw" in args:
            needed.add(_option(args, "--dataset"))
        if "--test-raw" in args:
            needed.add(_option(args, "--test-file"))
    raw = fetch_raw(work, new, mirror, opts.python, needed)
    counts: dict[str, int] = {}
    for number, (label, args, expected) in enumerate(cases, 1):
        args = list(args)
        for flag, name_flag in (("--raw", "--dataset"), ("--test-raw", "--test-file")):
            if flag in args:
                args = _set_option(args, flag, raw[_option(args, name_flag)])
        dataset = _option(args, "--dataset")
        names, seconds, failed = {}, {}, []
        for side, root in (("old", old), ("new", new)):
            tmp = work / side / f".case{number}.npz"
            tag, err, seconds[side] = prepare(side, root, mirror, opts.python, work, args, tmp)
            if tag is None:
                failed.append(err)
                continue
            names[side] = f"{dataset}__{tag}.npz"
            tmp.replace(work / side / names[side])
        if not failed and names["old"] != names["new"]:
            failed.append(f"names differ: OLD {names['old']}, NEW {names['new']}")
        if not failed and expected is not None and names["new"] != expected:
            failed.append(f"name {names['new']} is not the workflow's {expected}")
        if failed:
            verdict, details = "FAILED", failed
        else:
            verdict, details = compare(work / "old" / names["old"], work / "new" / names["new"])
        counts[verdict.split(";")[0]] = counts.get(verdict.split(";")[0], 0) + 1
        shown = names.get("new") or names.get("old") or label
        print(f"[{number}/{len(cases)}] {label}\n    {shown}: {verdict} "
              f"(CPU: old {seconds['old']:.1f} s, new {seconds['new']:.1f} s)", flush=True)
        for line in details:
            print(f"      {line}", flush=True)
        if not opts.keep:
            for side in names:
                (work / side / names[side]).unlink(missing_ok=True)
    print("counts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          f" (of {len(cases)} cases)")
    return 1 if counts.get("DIFFERENT") or counts.get("FAILED") else 0


if __name__ == "__main__":
    sys.exit(main())
