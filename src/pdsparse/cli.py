"""``pdsparse`` command line: one thin subcommand per step of the workflow.

Each subcommand parses its arguments and calls the library, which writes atomically, so
every step of the Snakemake workflow can also be run (and debugged) by hand; add
``-p`` to ``snakemake -n`` to see the exact commands. For example::

    pdsparse fetch     --dataset leu --out data/raw/leu.bz2
    pdsparse prepare   --dataset leu --raw data/raw/leu.bz2 \\
                       --out data/processed/leu__avg_example_norm.npz
    pdsparse prepare   --dataset bin --generator worst_case_binary_dual --param d=100 \\
                       --param n=1000 --param alpha=10000 --out data/processed/bin.npz
    pdsparse stats     --data data/processed/leu__avg_example_norm.npz
    pdsparse reference --data data/processed/leu__avg_example_norm.npz --out ref.parquet
    pdsparse run       --data data/processed/leu__avg_example_norm.npz --reference ref.parquet \\
                       --experiment e --solver dual_rcd --option sampling=importance \\
                       --seed 0 1 2 --out trace.parquet
    pdsparse aggregate --runs trace.parquet --references ref.parquet --out agg.parquet
    pdsparse output    faceoff figure3 --n 1000 --out figure3.png figure3.pdf

The workflow's rules run the same steps by key, from the plan file it writes
(:mod:`pdsparse.repro.jobs`)::

    pdsparse job run PAPER/EXPERIMENT/PROBLEM/SOLVER/OPTIONS --data X.npz --reference R.parquet \\
                 --out T.parquet

Tables and figures are made by ``pdsparse output PAPER NAME``: the builders are registered
by the papers (:mod:`pdsparse.repro.output`), so this module holds argument parsing only and does
not grow with a paper.

Outside the workflow, ``pdsparse advise FILE [--race SECONDS]`` answers Face-Off's question
(primal or dual RCD?) for any LIBSVM file, and ``pdsparse stats --data X.npz`` prints the
statistics of a processed data set.

Errors of the package (:class:`pdsparse.errors.PdsparseError`: bad data, bad settings) are
printed as ``pdsparse <command>: error: <message>`` and exit with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pdsparse import __version__
from pdsparse.data.recipe import cli_flags
from pdsparse.errors import ConfigError, PdsparseError
from pdsparse.repro.output import key_value as _key_value
from pdsparse.repro.output import positive_float as _positive_float
from pdsparse.repro.output import require_file as _require_file

__all__ = ["build_parser", "main"]

EXIT_ERROR = 2
_PER_N = re.compile(r"^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?/n$")


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _papers() -> tuple[str, ...]:
    from pdsparse.names import PAPERS

    return PAPERS


def _choices() -> dict[str, tuple[str, ...]]:
    """Every choice list of the parser, from :mod:`pdsparse.names` (no numerics imported)."""
    from pdsparse import names

    return {
        "losses": names.LOSSES,
        "normalizations": names.NORMALIZATIONS,
        "methods": names.METHODS,
        "samplings": names.SAMPLINGS,
        "dual_steps": names.DUAL_STEPS,
        "dgpd_inner": names.DGPD_INNER,
        "dgpd_etas": names.DGPD_ETAS,
        "synthetic_kinds": names.SYNTHETIC_KINDS,
        "penalties": names.PENALTIES,
        "advise_penalties": names.ADVISE_PENALTIES,
    }


def _default_tol() -> float:
    from pdsparse.names import DEFAULT_TOL

    return DEFAULT_TOL


def _option_help() -> str:
    """Every solver's options and values, from :data:`pdsparse.names.SOLVER_OPTIONS`."""
    from pdsparse import names

    counts = names.INTEGER_OPTIONS
    parts = []
    for solver, options in names.SOLVER_OPTIONS.items():
        opts = [f"{k}=" + "|".join((*v, "<count>") if (solver, k) in counts else v)
                for k, v in options.items()]
        parts.append(f"{solver}: {', '.join(opts) or '(none)'}")
    return "; ".join(parts) + ". Defaults: the first value (pdsparse.solvers.SOLVERS)"


def _solver_help() -> str:
    """``run --solver``: the registry's solvers by the penalty they solve, from
    :data:`pdsparse.names.SOLVER_PENALTIES` (the registry's declarations, tested)."""
    from pdsparse import names

    groups = (("the elastic net (--penalty elastic_net: --l2, --l1 >= 0)", ("l2", "elastic_net")),
              ("an l1 ball (--penalty l1_ball)", ("l1_ball",)),
              ("a trace-norm ball (--penalty trace_ball, a label matrix)", ("trace_ball",)))
    parts = [f"{what}: " + ", ".join(m for m, kinds in names.SOLVER_PENALTIES.items()
                                      if set(kinds) & set(penalties))
             for what, penalties in groups]
    return ("a solver of the registry (pdsparse.solvers.SOLVERS; its summary there), by what "
            "it solves: " + "; ".join(parts))


def _l2_arg(text: str) -> str | float:
    """``--l2``: a positive number or ``c/n`` (resolved per data set by resolve_l2)."""
    text = text.strip()
    if text.endswith("/n"):
        if not _PER_N.match(text):
            raise argparse.ArgumentTypeError(f"expected 'c/n' with a number c, got {text!r}")
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number or 'c/n' such as '1/n', got {text!r}"
        ) from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _l1_arg(text: str) -> str | float:
    """advise's ``--l1``: a positive number, ``c/n`` or ``Fx`` (F times lambda_max; checked
    by pdsparse.advise)."""
    return text.strip() if text.strip().endswith("x") else _l2_arg(text)


def _nonneg_l2(text: str) -> str | float:
    """``--l1``: 0, a positive number or ``c/n``."""
    return 0.0 if text.strip() in ("0", "0.0") else _l2_arg(text)


def _nonneg_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def _scalar(text: str) -> int | float | bool | str:
    """Parse a ``--param`` value (:func:`pdsparse.repro.jobs.scalar`)."""
    from pdsparse.repro.jobs import scalar

    return scalar(text)


def _load_dataset(path: str | Path):
    from pdsparse.data.store import load_dataset

    return load_dataset(_require_file(path, "data file"))


def _write_parquet(df, path: str | Path, metadata: dict | None = None, sources=()) -> None:
    from pdsparse.repro.traces import write_frame

    write_frame(df, path, metadata, sources)


def _arguments(args: argparse.Namespace) -> dict:
    """The command's arguments, for the provenance of what it writes."""
    return {k: v for k, v in vars(args).items() if k not in ("func", "command")}


def _provenance(args: argparse.Namespace) -> dict:
    from pdsparse.repro.traces import provenance

    return provenance(_arguments(args))


# --------------------------------------------------------------------------------------------
# Subcommands
# --------------------------------------------------------------------------------------------


def cmd_fetch(args: argparse.Namespace) -> None:
    from pdsparse.data.fetch import download_allowed, fetch, raw_path, resolve_mirror
    from pdsparse.repro.jobs import registry_spec

    spec = registry_spec(args.registry, args.dataset)
    out = Path(args.out) if args.out else None
    raw_dir = Path(args.raw_dir) if args.raw_dir else (out.parent if out else Path("data/raw"))
    expected = raw_path(spec, raw_dir)
    if out is not None and out.resolve() != expected.resolve():
        raise ConfigError(
            f"--out {out} does not match the registry: data set {spec.name!r} is stored as "
            f"{expected}"
        )
    mirror = resolve_mirror(args.mirror)
    download = not args.no_download and download_allowed()
    path = fetch(
        spec, raw_dir, mirror=mirror, timeout=args.timeout, progress=not args.quiet,
        download=download,
    )
    print(path)


#: bundled data sources of ``--generator`` beside the synthetic kinds (light copy of
#: ``pdsparse.data.synthetic.BUNDLED``; tests/test_data_prepare.py checks they agree)
BUNDLED_KINDS = ("digits",)


def recipe_of(args: argparse.Namespace):
    """The :class:`pdsparse.data.recipe.Recipe` of the prepare flags given."""
    from pdsparse.data.recipe import Recipe

    given = {name: getattr(args, name) for name, _, _ in cli_flags()}
    return Recipe(**{k: v for k, v in given.items() if v is not None})


def cmd_prepare(args: argparse.Namespace) -> None:
    from pdsparse.repro.jobs import prepare_job, recipe_fields

    if (args.raw is None) == (args.generator is None):
        raise ConfigError("give either --raw FILE (a registry data set) or --generator KIND")
    if (args.test_file is None) != (args.test_raw is None):
        raise ConfigError("give --test-file NAME (the test set's registry name) together with "
                          "--test-raw FILE (its raw file), or neither")
    if args.generator is not None:
        source = {"generator": args.generator, "params": _params(args.param), "seed": args.seed}
    else:
        source = {"registry": args.registry, "raw": args.raw, "test_raw": args.test_raw}
    spec = {"dataset": args.dataset, "source": source, "recipe": recipe_fields(recipe_of(args))}
    prepare_job(spec, args.out)


def _params(pairs) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in pairs or []:
        if key in params:
            raise ConfigError(f"--param {key} given twice")
        params[key] = _scalar(value)
    return params


def cmd_generate(args: argparse.Namespace) -> None:
    from pdsparse.data.libsvm import write_libsvm
    from pdsparse.data.synthetic import generate

    A, y = generate(args.kind, _params(args.param), args.seed)
    write_libsvm(args.out, A, y)
    print(f"{args.kind}: n={A.shape[0]} d={A.shape[1]} nnz={A.nnz} -> {args.out}",
          file=sys.stderr)


def cmd_stats(args: argparse.Namespace) -> None:
    from pdsparse.repro.jobs import stats_job

    spec = {"dataset": args.dataset, "l2": args.l2, "beta": args.beta,
            "normalization": args.normalization}
    stats_job(spec, args.data, args.out, _arguments(args))


def _progress(command: str):
    """A progress printer: ``pdsparse COMMAND: LINE`` on stderr, flushed at once."""

    def say(line: str) -> None:
        print(f"pdsparse {command}: {line}", file=sys.stderr, flush=True)

    return say


def cmd_advise(args: argparse.Namespace) -> None:
    from pdsparse.advise import advise, format_advice

    adv = advise(
        args.file,
        normalization=args.normalization,
        loss=args.loss,
        l2=args.l2,
        beta=args.beta,
        race_seconds=args.race,
        positive_class=None if args.positive_class is None else _scalar(args.positive_class),
        seed=args.seed,
        progress=None if args.quiet else _progress("advise"),
        penalty=args.penalty,
        l1=args.l1,
        radius=args.radius,
        tol=args.tol,
        tune=args.tune,
        peers=args.peers,
        intercept=args.intercept,
    )
    if args.json:
        print(json.dumps(adv.to_dict(), allow_nan=False))
    else:
        print(format_advice(adv))


def cmd_reference(args: argparse.Namespace) -> None:
    from pdsparse.repro.jobs import reference_job

    penalty = _penalty_spec(args) or {"name": "elastic_net", "l2": args.l2, "l1": args.l1}
    spec = {"dataset": args.dataset, "problem": args.problem, "loss": args.loss,
            "penalty": penalty["name"], "params": {k: v for k, v in penalty.items() if k != "name"},
            "rtol": args.rtol, "max_epochs": args.max_epochs, "max_seconds": args.max_seconds}
    reference_job(spec, args.data, args.out, _arguments(args))


def _penalty_spec(args: argparse.Namespace) -> dict | None:
    """The ``--penalty`` as a config mapping; None for the elastic net (``--l2``/``--l1``).
    A setting the chosen penalty does not take is an error, not silently dropped."""
    if args.penalty == "elastic_net":
        if args.radius is not None:
            raise ConfigError("--radius needs --penalty l1_ball or trace_ball")
        return None
    if args.radius is None:
        raise ConfigError(f"--penalty {args.penalty} needs --radius")
    if args.l1 not in (0, 0.0):
        raise ConfigError(f"--l1 is the elastic net's; --penalty {args.penalty} takes "
                          "--radius and --l2")
    return {"name": args.penalty, "radius": args.radius, "l2": args.l2}


def run_spec(args: argparse.Namespace):
    """The :class:`pdsparse.repro.run.RunSpec` of the run flags (the first seed's)."""
    from pdsparse.repro.run import RunSpec

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(RunSpec)}
    given.update(dataset=args.dataset or _load_dataset(args.data).name, seed=args.seed[0],
                 problem=args.problem or "")
    return RunSpec(**given)


def cmd_run(args: argparse.Namespace) -> None:
    from pdsparse.repro.jobs import run_job
    from pdsparse.repro.run import RunSpec

    spec = {f.name: getattr(args, f.name) for f in dataclasses.fields(RunSpec) if f.name != "seed"}
    spec.update(seeds=list(args.seed), problem=args.problem or "")
    run_job(spec, args.data, args.reference, args.out, _arguments(args), quiet=args.quiet)


def cmd_job(args: argparse.Namespace) -> None:
    from pdsparse.repro import jobs

    spec = jobs.load_job(args.kind, args.key, args.plan)
    if args.show:
        print(json.dumps(spec, indent=1, sort_keys=True))
        return
    arguments = {"job": args.kind, "key": args.key, "plan": args.plan or "", **spec}
    need = {"prepare": ("out",), "stats": ("data",), "reference": ("data", "out"),
            "run": ("data", "reference", "out"), "output": ("out",)}[args.kind]
    missing = [f"--{n}" for n in need if not getattr(args, n)]
    if missing:
        raise ConfigError(f"pdsparse job {args.kind} needs {' '.join(missing)}")
    if args.kind == "prepare":
        jobs.prepare_job(spec, args.out[0])
    elif args.kind == "stats":
        jobs.stats_job(spec, args.data, args.out[0] if args.out else None, arguments)
    elif args.kind == "reference":
        jobs.reference_job(spec, args.data, args.out[0], arguments)
    elif args.kind == "run":
        jobs.run_job(spec, args.data, args.reference, args.out[0], arguments, quiet=args.quiet)
    else:
        jobs.output_job(spec, args.out)


def cmd_aggregate(args: argparse.Namespace) -> None:
    from pdsparse.repro.traces import aggregate

    for path in [*args.runs, *args.references]:
        _require_file(path, "input file")
    df = aggregate(args.runs, args.references)
    # the inputs' provenance (their commits) travels with the aggregate
    _write_parquet(df, args.out, _provenance(args), sources=[*args.runs, *args.references])
    print(f"{len(args.runs)} runs, {len(df)} rows -> {args.out}", file=sys.stderr)


def cmd_output(args: argparse.Namespace) -> None:
    from pdsparse.repro.output import make_output

    args.out = make_output(args.paper, args.name, args.args)


def cmd_scorecard(args: argparse.Namespace) -> None:
    from pdsparse.repro.config import load_config
    from pdsparse.repro.provenance import describe, of_results
    from pdsparse.repro.scorecard import scorecard, to_markdown, write_scorecard

    config = load_config(args.config or ["config/config.yaml"], args.schema)
    skipped = None
    if args.skipped is not None:
        skipped = [tuple(p.split("=", 1)) for p in args.skipped]
        if any(len(p) != 2 for p in skipped):
            raise ConfigError("--skipped: expected ITEM=DATASET pairs")
    rows = scorecard(config, args.results, skipped=skipped, benchmarks=args.benchmarks)
    provenance = describe(of_results(args.results, args.provenance_from))
    if not (args.out_md or args.out_csv or args.out_html):
        print(to_markdown(rows, provenance), end="")
    write_scorecard(rows, args.out_md, args.out_csv, args.out_html, provenance)


def cmd_estimate(args: argparse.Namespace) -> None:
    from pdsparse.repro.config import load_config
    from pdsparse.repro.estimate import format_estimate, of_config

    config = load_config(args.config or ["config/config.yaml"], args.schema)
    print(format_estimate(of_config(config, args.cores), args.cluster_hours))


def cmd_html(args: argparse.Namespace) -> None:
    from pdsparse.repro.report import write_markdown_page

    write_markdown_page(_require_file(args.md, "Markdown file"), args.out, args.title or "")


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps description line breaks; shows a default only where there is a real one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            default is not None
            and default is not argparse.SUPPRESS
            and default is not False
            and action.option_strings
            and "default" not in text
        ):
            text += (" " if text else "") + "(default: %(default)s)"
        return text


def _sub(subparsers, name: str, help_: str, description: str = "") -> argparse.ArgumentParser:
    return subparsers.add_parser(
        name, help=help_, description=description or help_, formatter_class=_Formatter
    )


def _problem_args(p: argparse.ArgumentParser, losses: Sequence[str] | None) -> None:
    """The arguments that name a problem: data file, recorded name, loss and L2 strength."""
    p.add_argument("--data", required=True, help="processed .npz")
    p.add_argument("--dataset", help="name to record (default: the name stored in the file)")
    if losses is not None:
        p.add_argument("--loss", choices=losses, default="logistic", help="loss function")
        p.add_argument("--l1", type=_nonneg_l2, default=0.0,
                       help="L1 strength (elastic net): number or 'c/n'")
        p.add_argument("--penalty", choices=_choices()["penalties"], default="elastic_net",
                       help="g: elastic_net (--l2, --l1), or l1_ball / trace_ball "
                       "(--radius, with --l2 as its strongly convex part)")
        p.add_argument("--radius", type=_l2_arg, default=None,
                       help="radius of the l1 or trace-norm ball: number or 'c/n'")
        p.add_argument("--problem", help="the problem's tag to record (default: the tag of "
                       "dataset, loss, l2 and l1)")
    p.add_argument("--l2", type=_l2_arg, default="1/n", help="L2 strength: number or 'c/n'")


def _spec_flags(p: argparse.ArgumentParser, spec: type, kinds: dict[str, dict]) -> None:
    """One flag per field of the dataclass ``spec``: ``--<field with dashes>``, ``dest`` the
    field, its default and help from the field (``metadata["help"]``); ``kinds[field]`` adds
    what a field cannot say (type, choices, nargs, a default or flag name of the command
    line's own, aliases, ``help`` to replace or ``help_tail`` to extend the field's). A field
    without a default is a required flag."""
    for f in dataclasses.fields(spec):
        kind = dict(kinds.get(f.name, {}))
        flags = [kind.pop("flag", "--" + f.name.replace("_", "-")), *kind.pop("aliases", ())]
        text = kind.pop("help", f.metadata.get("help", "")) + kind.pop("help_tail", "")
        if "default" not in kind:
            if f.default is not dataclasses.MISSING:
                kind["default"] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                kind["default"] = f.default_factory()
            else:
                kind["required"] = True
        p.add_argument(*flags, dest=f.name, help=text, **kind)


def build_parser() -> argparse.ArgumentParser:
    """The ``pdsparse`` argument parser (one subparser per workflow step)."""
    parser = argparse.ArgumentParser(
        prog="pdsparse",
        description=(
            "Primal or dual, and which solver, on my data? Coordinate and Frank-Wolfe solvers "
            "for sparse ERM (l2, elastic net, l1 and trace-norm balls) and the workflow that "
            "reproduces three papers: Csiba & Richtarik, 'Coordinate Descent Face-Off: Primal "
            "or Dual?'; Lei et al., 'Doubly Greedy Primal-Dual Coordinate Descent' (DGPD); "
            "Lei et al., 'Primal-Dual Block Frank-Wolfe' (PDBFW).\n"
            "Each subcommand is one step of the Snakemake workflow: "
            "fetch -> prepare -> stats/reference/run -> aggregate -> output (tables, "
            "figures) -> scorecard.\n"
            "'pdsparse advise FILE' predicts (and races) the fastest solver for any LIBSVM file."
        ),
        epilog="Run 'pdsparse <command> --help' for the options of a command. "
        "Errors exit with status 2 and a one-line message.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pdsparse {__version__}")
    choices = _choices()
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    # fetch
    p = _sub(
        sub,
        "fetch",
        "copy or download a registry data set into the raw-data directory",
        "Put the verified raw file of a registry data set into the raw-data directory: "
        "copied from the offline mirror if it holds the file, otherwise downloaded from the "
        "registry URL (unless --no-download). Checksums and shape are verified; on failure "
        "nothing is left behind.",
    )
    p.add_argument("--registry", default="config/datasets.yaml", help="data-set registry YAML")
    p.add_argument("--dataset", required=True, help="registry name, e.g. leu")
    p.add_argument("--out", help="expected output path (must equal <raw-dir>/<registry name>)")
    p.add_argument("--raw-dir", help="raw-data directory (default: parent of --out, else data/raw)")
    p.add_argument(
        "--mirror",
        help="offline mirror directory holding files under their registry file names "
        "(default: $PDSPARSE_DATA_MIRROR)",
    )
    p.add_argument(
        "--no-download",
        action="store_true",
        help="fail instead of downloading if not mirrored (default: $PDSPARSE_DATA_DOWNLOAD=0, "
        "as the workflow sets it from data.download)",
    )
    p.add_argument("--timeout", type=_positive_float, default=60.0, help="download timeout, s")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_fetch)

    # generate
    p = _sub(
        sub,
        "generate",
        "write a synthetic data set as a LIBSVM file (offline): your own data, to try advise",
        "Generate a seeded synthetic data set (pdsparse.data.synthetic: Zipf bag of words, "
        "dense Gaussian, Face-Off's worst cases, ...) or a bundled one and write it as LIBSVM "
        "text (a .bz2 or .gz suffix compresses it), atomically. 'pdsparse advise FILE' and "
        "Problem.from_libsvm read it like any downloaded file.",
    )
    p.add_argument("kind", choices=(*choices["synthetic_kinds"], *BUNDLED_KINDS),
                   help="generator (or bundled data set)")
    p.add_argument("--param", action="append", type=_key_value, metavar="KEY=VALUE",
                   help="generator parameter (repeatable), e.g. n=2000")
    p.add_argument("--seed", type=int, default=0, help="generator seed")
    p.add_argument("--out", required=True, help="the LIBSVM file to write")
    p.set_defaults(func=cmd_generate)

    # prepare
    p = _sub(
        sub,
        "prepare",
        "prepare a data set by its recipe into a .npz: a raw LIBSVM file or a generator",
        "Real data (--raw): parse, check against the registry, binarize. Synthetic data "
        "(--generator KIND --param k=v --seed S): generate (or load a bundled set). Then the "
        "recipe: an optional split and feature map, normalization; saved atomically as "
        "data/processed/<name>__<recipe tag>.npz by the workflow.",
    )
    p.add_argument("--registry", default="config/datasets.yaml", help="data-set registry YAML")
    p.add_argument("--dataset", required=True, help="data-set name, e.g. leu")
    p.add_argument("--raw", help="a LIBSVM file: from 'pdsparse fetch' (a registry data set), "
                   "or one's own (a --dataset name not in the registry: no checks)")
    p.add_argument("--generator", choices=(*choices["synthetic_kinds"], *BUNDLED_KINDS),
                   help="synthetic generator, or a bundled data set (digits: scikit-learn's "
                   "8x8 digits, 1,797 x 64, 10 classes)")
    p.add_argument(
        "--param",
        action="append",
        type=_key_value,
        metavar="KEY=VALUE",
        help="generator parameter (repeatable)",
    )
    p.add_argument("--seed", type=int, default=0, help="generator seed")
    g = p.add_argument_group(
        "recipe: split and feature map (DGPD)",
        "Order: split (test rows, subsample) -> input scaling -> feature map fitted on the "
        "training rows -> normalization. Each setting is part of the recipe tag.")
    for _, section, flags in cli_flags():  # one flag per Recipe field, from its metadata
        where = g if section else p
        if len(flags) > 1:
            where = where.add_mutually_exclusive_group()
        for flag, kw in flags:
            where.add_argument(flag, **kw)
    g.add_argument("--test-raw", metavar="FILE", help="the raw file of --test-file")
    p.add_argument("--out", required=True, help="output .npz")
    p.set_defaults(func=cmd_prepare)

    # stats
    p = _sub(
        sub,
        "stats",
        "data statistics of Face-Off Table 1 (C_P, C_D, T_P, T_D, ...)",
        "Print a summary of pdsparse.stats.data_stats(A, l2, beta) of a processed .npz and, "
        "with --out FILE, write it as a one-row Parquet (plus dataset, normalization, l2 and "
        "beta). For a raw LIBSVM file use 'pdsparse advise FILE'.",
    )
    _problem_args(p, None)
    p.add_argument(
        "--beta", type=_positive_float, default=0.25, help="loss smoothness (logistic: 1/4)"
    )
    p.add_argument(
        "--normalization",
        choices=choices["normalizations"],
        default=None,
        help="compute the statistics under this normalization instead of the stored one "
        "(undoes the stored single-scale normalization first)",
    )
    p.add_argument(
        "--out", help="output .parquet ('-' or none: print the summary only, write no file)"
    )
    p.set_defaults(func=cmd_stats)

    # advise
    p = _sub(
        sub,
        "advise",
        "which solver on a LIBSVM file? statistics, prediction (and an optional race)",
        "Read a LIBSVM text file (plain, .bz2 or .gz; no registry entry needed), normalize it "
        "and, for the penalty family given (l2, elastic_net: l1 + l2, l1_ball), compute the "
        "statistics the solvers' theory reads: n, d, nnz, density, C_P, C_D (Face-Off eq. 16), "
        "the total complexities T_P, T_D (eqs. 12-15), L, L_max, kappa and the expected "
        "sparsity of x* and y*; Face-Off's verdict (fewer operations: Sec. 8), the solvers "
        "that apply, and the one predicted fastest in CPU time with its reason. With --race "
        "SECONDS, also run every applicable solver (with --tune: each at the best of a small "
        "grid) for at most SECONDS of kernel CPU time each to the relative gap --tol, rank "
        "them by CPU time with setup and judge the prediction.",
    )
    p.add_argument("file", metavar="FILE", help="LIBSVM file (plain, .bz2 or .gz)")
    p.add_argument(
        "--normalization",
        choices=choices["normalizations"],
        default="avg_example_norm",
        help="avg_example_norm = divide by the mean example norm (Face-Off Sec. 7)",
    )
    p.add_argument("--loss", choices=choices["losses"], default="logistic", help="loss function")
    p.add_argument("--l2", type=_nonneg_l2, default=None,
                   help="L2 strength: number or 'c/n' (default 1/n; 0 with --penalty l1)")
    p.add_argument(
        "--beta",
        type=_positive_float,
        default=None,
        help="smoothness in eqs. (12)-(15) (default: the loss's, logistic 1/4)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr (reading, statistics, the race)")
    p.add_argument(
        "--race",
        type=_positive_float,
        metavar="SECONDS",
        help="also race every applicable solver for at most this much kernel CPU time each",
    )
    p.add_argument("--penalty", choices=choices["advise_penalties"], default="l2",
                   help="l2 (default): l2/2 ||w||^2; l1: l1 ||w||_1 alone (give --l1); "
                   "elastic_net: both (give --l1); l1_ball: ||w||_1 <= radius, plus "
                   "l2/2 ||w||^2 (give --radius)")
    p.add_argument("--l1", type=_l1_arg, default=None,
                   help="l1 weight of the elastic net: number, 'c/n' or 'Fx' = F times "
                   "lambda_max (the smallest l1 with x* = 0; '0.1x' = lambda_max / 10)")
    p.add_argument("--radius", type=_positive_float, default=None,
                   help="radius of the l1 ball")
    p.add_argument("--tol", type=_positive_float, default=_default_tol(),
                   help="the race's certified relative duality gap")
    p.add_argument("--tune", action="store_true",
                   help="race each solver at every setting of its grid "
                   "(pdsparse.race.TUNE_GRID), represented by its fastest")
    p.add_argument("--peers", action="store_true",
                   help="also race the installed solvers one could use instead "
                   "(scikit-learn, skglm, celer: pdsparse.peers) to the same certified gap")
    p.add_argument(
        "--positive-class",
        metavar="LABEL",
        help="one-vs-rest: this label becomes +1, the others -1 (needed to race multiclass data)",
    )
    p.add_argument("--intercept", action="store_true",
                   help="advise the problem with an unpenalized intercept (the estimators' "
                   "fit_intercept=True)")
    p.add_argument("--seed", type=int, default=0, help="seed of the race's coordinate sampling")
    p.set_defaults(func=cmd_advise)

    # reference
    p = _sub(
        sub,
        "reference",
        "certified optimal value P* of a problem (one-row Parquet)",
        "Solve the problem to a certified relative duality gap <= rtol with "
        "pdsparse.reference.reference_solution and record P*, D*, the gap and the shape.",
    )
    _problem_args(p, choices["losses"])
    p.add_argument("--rtol", type=_positive_float, default=1e-10, help="relative gap to certify")
    p.add_argument(
        "--max-epochs", type=_positive_float, default=20000.0, help="epoch budget of the solver"
    )
    p.add_argument(
        "--max-seconds", type=_positive_float, default=1800.0, help="time budget, seconds"
    )
    p.add_argument("--out", required=True, help="output .parquet")
    p.set_defaults(func=cmd_reference)

    # run
    p = _sub(
        sub,
        "run",
        "one solver run -> one Parquet trace",
        "Run primal RCD (Face-Off Algorithm 1) or dual RCD (Algorithm 2) on a processed data "
        "set and write its trace (iteration, epoch, time_s, primal, dual, gap, ...) with the "
        "run keys as columns and provenance (version, git commit, arguments, P*) as metadata.",
    )
    p.add_argument("--data", required=True, help="processed .npz")
    p.add_argument("--reference", required=True, help="reference .parquet (P* of the problem)")
    from pdsparse.repro.run import RunSpec  # dataclasses and the errors only

    _spec_flags(p, RunSpec, {
        "dataset": {"default": None},
        "solver": {"aliases": ("--method",), "choices": choices["methods"],
                   "help": _solver_help()},
        "options": {"flag": "--option", "action": "append", "default": [],
                    "metavar": "KEY=VALUE", "help_tail": ", per solver: " + _option_help()},
        "seed": {"type": int, "nargs": "+", "default": [0]},
        "loss": {"choices": choices["losses"]},
        "l2": {"type": _l2_arg},
        "l1": {"type": _nonneg_l2},
        "penalty": {"choices": choices["penalties"]},
        "radius": {"type": _l2_arg},
        "max_epochs": {"type": _nonneg_float},
        "max_seconds": {"type": _positive_float},
        "tol": {"type": _nonneg_float},
        "eval_every": {"type": _positive_float},
        "eval_per_decade": {"type": int},
        "problem": {"default": None},
    })
    p.add_argument("--out", required=True, help="output .parquet trace (a row block per seed)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress line per evaluation on stderr (epoch, kernel time, "
                   "duality gap, P); the final summary per seed is still printed")
    p.set_defaults(func=cmd_run)

    # job
    p = _sub(
        sub, "job", "run one planned job of the workflow by its key",
        "Run the job KIND KEY of a plan file: the workflow writes every planned job's spec "
        "once (.snakemake/pdsparse/plan-<hash>.json, named in $PDSPARSE_PLAN for its jobs) "
        "and each rule runs `pdsparse job KIND KEY` with its input and output files. Keys: "
        "prepare: the processed file's name; stats, reference: the file's name; run: "
        "PAPER/EXPERIMENT/PROBLEM/SOLVER/OPTIONS (the trace's path below results/runs); "
        "output: PAPER/NAME. --show prints the spec.",
    )
    p.add_argument("kind", choices=("prepare", "stats", "reference", "run", "output"),
                   help="the job's kind (its rule)")
    p.add_argument("key", help="the job's key in the plan")
    p.add_argument("--plan", help="plan file (default: $PDSPARSE_PLAN)")
    p.add_argument("--show", action="store_true", help="print the job's spec and exit")
    p.add_argument("--data", help="processed .npz (stats, reference, run)")
    p.add_argument("--reference", help="reference .parquet (run)")
    p.add_argument("--out", nargs="+", help="output file(s): two for a figure or table")
    p.add_argument("--quiet", action="store_true", help="run: no progress line per evaluation")
    p.set_defaults(func=cmd_job)

    # aggregate
    p = _sub(
        sub,
        "aggregate",
        "concatenate run traces and attach P*, subopt = primal - P*",
    )
    p.add_argument("--runs", nargs="+", required=True, help="trace .parquet files")
    p.add_argument("--references", nargs="+", required=True, help="reference .parquet files")
    p.add_argument("--out", required=True, help="output .parquet")
    p.set_defaults(func=cmd_aggregate)

    # output
    p = _sub(
        sub, "output", "write a paper's table (CSV + Markdown) or figure (PNG + PDF)",
        "Every table and figure is made by a builder of its paper, as the paper's plan names "
        "it: the generic ones (curves: a curve figure from its spec; speedup: times to "
        "targets) and the paper's own (its tables and theory-only figures; an unknown NAME "
        "lists them). ARGS are the builder's: `pdsparse output PAPER NAME --help` lists "
        "them.",
    )
    p.add_argument("paper", choices=_papers(), help="the paper")
    p.add_argument("name", metavar="NAME", help="the builder (curves, speedup, or the paper's own)")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="the builder's arguments, then --out FILE FILE")
    p.set_defaults(func=cmd_output)

    # scorecard
    p = _sub(
        sub, "scorecard", "the reproduction scorecard: every paper item, reproduced or not",
        "One row per paper item (table row, figure claim) over the papers of the config: "
        "reproduced (yes / stand-in data / not run: why and how to get it), the paper's value, "
        "ours and whether they agree, computed from the results that exist with the "
        "tolerances of pdsparse.repro.scorecard. Without --out-*, the Markdown goes to stdout.",
    )
    p.add_argument("--config", nargs="+", metavar="YAML",
                   help="workflow config file(s), later ones override (default: "
                   "config/config.yaml; the workflow passes results/config.json, its "
                   "effective config with every --config override)")
    p.add_argument("--schema", default="workflow/schemas/config.schema.yaml",
                   help="config schema (fills the defaults)")
    p.add_argument("--results", default="results", help="results directory")
    p.add_argument("--benchmarks", help="benchmark results (default: <results>/benchmarks)")
    p.add_argument("--skipped", nargs="*", metavar="ITEM=DATASET",
                   help="paper items dropped for lack of data (default: decided from the "
                   "config, the raw-data directory and the mirror, as the workflow does)")
    p.add_argument("--out-md", help="Markdown (results/SCORECARD.md)")
    p.add_argument("--out-csv", help="CSV, one row per item")
    p.add_argument("--out-html", help="self-contained HTML page (for the report)")
    p.add_argument("--provenance-from", nargs="*", metavar="PARQUET",
                   help="the result files whose provenance (commits, versions, CPU, threads, "
                   "clock) the scorecard states (default: every .parquet under --results but "
                   "runs/ and benchmarks/; an aggregate carries its traces')")
    p.set_defaults(func=cmd_scorecard)

    # estimate
    p = _sub(
        sub, "estimate", "the CPU hours and peak memory of a workflow plan, before running it",
        "Every job the workflow would run for the config (data that is available as the "
        "workflow decides it: raw directory, mirror, data.download) with its CPU time and "
        "memory from the data's size and measured per-pass costs (the model: pydoc "
        "pdsparse.repro.estimate); `snakemake -n` prints the same. Advises the cluster profile "
        "when the work exceeds --cluster-hours of wall time on --cores cores.",
    )
    p.add_argument("--config", nargs="+", metavar="YAML",
                   help="workflow config file(s), later ones override, as with snakemake "
                   "--configfile (default: config/config.yaml)")
    p.add_argument("--schema", default="workflow/schemas/config.schema.yaml",
                   help="config schema (fills the defaults)")
    p.add_argument("--cores", type=int, default=2, help="cores of the local run")
    p.add_argument("--cluster-hours", type=float, default=8.0,
                   help="advise the cluster profile above this many hours of wall time")
    p.set_defaults(func=cmd_estimate)

    # html
    p = _sub(sub, "html", "a table's Markdown as a self-contained HTML page (for the report)")
    p.add_argument("--md", required=True, help="Markdown file (results/tables/...md)")
    p.add_argument("--title", help="heading of the page")
    p.add_argument("--out", required=True, help="output .html")
    p.set_defaults(func=cmd_html)
    return parser


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pdsparse`` console script; returns the exit status (130 and one
    line on Ctrl-C, wherever it lands: parsing the arguments imports modules too)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("pdsparse: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = args.command
    if command == "output":
        command = f"output {args.paper} {args.name}"
    try:
        args.func(args)
    except PdsparseError as exc:
        message = " ".join(str(exc).split())  # one line, whatever the library wrote
        print(f"pdsparse {command}: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"pdsparse {command}: interrupted", file=sys.stderr)
        return 130
    written = [
        str(path)
        for key in ("out", "out_png", "out_pdf", "out_csv", "out_md", "out_html")
        for path in _as_list(getattr(args, key, None))
        if str(path) != "-" and Path(path).is_file()
    ]
    if written:  # every job log says what it made (and none is left empty)
        print(f"pdsparse {command}: wrote {', '.join(written)}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
