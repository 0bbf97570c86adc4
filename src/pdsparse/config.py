"""Workflow configuration: schema validation with readable errors, and the Face-Off plan.

The Snakefile stays thin: it loads ``config/config.yaml`` (or ``config/paper.yaml``), calls
:func:`validate_config` against ``workflow/schemas/config.schema.yaml`` and asks
:func:`plan_faceoff` which data sets, runs and paper items to build. Everything here is plain
Python, so it is unit-tested without Snakemake.

Paper items follow Csiba & Richtárik, "Coordinate Descent Face-Off: Primal or Dual?"
(``/work/shared/papers/faceoff-primal-or-dual.jmlr.txt``): Figure 1 (worst case of Theorem 3
and two real data sets), Figure 2 (worst case for dual RCD on binary data, Theorem 9,
d = 100), Figure 3 (R(alpha, d, n), appendix) and Table 1 (data statistics).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pdsparse.errors import ConfigError

__all__ = [
    "FACEOFF_RUNS_DIR",
    "Figure2Cell",
    "FaceoffPlan",
    "Run",
    "Synthetic",
    "coerce_by_schema",
    "data_availability",
    "figure2_cells",
    "format_l2",
    "l2_tag",
    "load_config",
    "plan_faceoff",
    "validate_config",
]

FACEOFF_RUNS_DIR = "results/runs/faceoff"
_L2_RE = re.compile(r"^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?/n$")


# --------------------------------------------------------------------------------------------
# Schema validation
# --------------------------------------------------------------------------------------------


def _dotted(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<top level>"


def _format_error(error: Any) -> str:
    """One line per schema violation, naming the offending key by its dotted path."""
    where = _dotted(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(schema.get("properties", {}))
        unknown = [k for k in error.instance if k not in allowed]
        if not allowed:  # a free-form map whose values failed: let the value errors speak
            return f"{where}: {error.message}"
        lines = []
        for key in unknown:
            full = f"{where}.{key}" if error.absolute_path else str(key)
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            msg = f"unknown key '{full}'"
            if hint:
                msg += f" (did you mean '{hint[0]}'?)"
            msg += f"; allowed keys here: {', '.join(allowed)}"
            lines.append(msg)
        return "\n".join(lines)
    if error.validator == "required":
        return f"{where}: {error.message}"
    if error.validator in ("oneOf", "anyOf"):
        desc = schema.get("description")
        msg = f"{where}: invalid value {error.instance!r}"
        return msg + (f" ({' '.join(desc.split())})" if desc else "")
    return f"{where}: {error.message}"


def _validator_class(set_defaults: bool):
    from jsonschema import Draft202012Validator, validators

    if not set_defaults:
        return Draft202012Validator
    validate_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_default(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    default = sub["default"]
                    instance.setdefault(prop, _copy(default))
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": set_default})


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_COERCE_ON = ("type", "oneOf", "anyOf")


def _scalar_from_text(text: str) -> Any:
    """Read a string as the YAML 1.2 scalar it spells, or return it unchanged.

    Two sources give strings where the schema wants numbers or booleans: ``snakemake
    --config 'faceoff={max_epochs: 20}'`` parses nested values with YAML's BaseLoader (every
    scalar a string), and PyYAML reads ``1e-10`` (no dot) as a string, unlike YAML 1.2.
    """
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "~"):
        return None
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return text


def _set_at(config: dict, path: Iterable[Any], value: Any) -> None:
    *parents, last = list(path)
    node: Any = config
    for part in parents:
        node = node[part]
    node[last] = value


def coerce_by_schema(config: dict, validator: Any) -> list[str]:
    """Convert strings that fail the schema only for their type into the scalar they spell.

    Only a value the schema rejects as a string (a ``type``, ``oneOf`` or ``anyOf`` error)
    is converted, so a string where a string is expected (``l2: "1/n"``, a data-set named
    ``"123"``) is never touched. Returns the dotted paths that were converted.
    """
    converted: list[str] = []
    for _ in range(10_000):  # one conversion per pass: paths stay valid after each change
        for error in validator.iter_errors(config):
            if error.validator not in _COERCE_ON or not isinstance(error.instance, str):
                continue
            if not error.absolute_path:
                continue
            value = _scalar_from_text(error.instance)
            if isinstance(value, str):
                continue
            _set_at(config, error.absolute_path, value)
            converted.append(_dotted(error.absolute_path))
            break
        else:
            return converted
    return converted


def validate_config(
    config: dict, schema_path: str | os.PathLike, *, set_defaults: bool = True, source: str = ""
) -> dict:
    """Validate ``config`` against the workflow's JSON schema, filling defaults in place.

    Parameters
    ----------
    config : dict
        The loaded configuration (modified in place when ``set_defaults``).
    schema_path : path
        ``workflow/schemas/config.schema.yaml``.
    set_defaults : bool
        Insert the schema's ``default`` values for missing keys.
    source : str
        Name of the config file(s), used in the error message.

    Returns
    -------
    dict
        ``config``.

    Raises
    ------
    ConfigError
        Listing every violation, one per line, each naming the key by its dotted path
        (``unknown key 'data.mirorr' (did you mean 'mirror'?)``,
        ``faceoff.max_epochs: 'ten' is not of type 'integer'``).

    Notes
    -----
    Strings that spell the number, boolean or null the schema expects are converted first
    (:func:`coerce_by_schema`), so ``--config 'faceoff={max_epochs: 20}'`` and
    ``tol: 1e-10`` work as written.
    """
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        raise ConfigError(f"{source or 'config'}: the configuration must be a mapping")
    validator = _validator_class(set_defaults)(schema)
    coerce_by_schema(config, validator)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.path])
    if errors:
        lines = []
        for err in errors:
            for line in _format_error(err).splitlines():
                if line not in lines:
                    lines.append(line)
        head = f"invalid configuration{f' ({source})' if source else ''}:"
        raise ConfigError("\n  ".join([head, *lines]))
    return config


def load_config(
    paths: str | os.PathLike | Iterable[str | os.PathLike], schema_path: str | os.PathLike
) -> dict:
    """Read one or more YAML config files (later ones override, recursively) and validate."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    config: dict = {}
    names = []
    for p in paths:
        names.append(str(p))
        try:
            doc = yaml.safe_load(Path(p).read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read config ({exc.strerror or exc})") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: invalid YAML: {exc}") from exc
        _merge(config, doc)
    return validate_config(config, schema_path, source=", ".join(names))


def _merge(base: dict, over: Mapping) -> dict:
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = _copy(value)
    return base


# --------------------------------------------------------------------------------------------
# Regularization naming
# --------------------------------------------------------------------------------------------


def format_l2(l2: float | str) -> str:
    """The command-line form of an ``l2`` setting: ``"1/n"`` stays, numbers use ``repr``."""
    if isinstance(l2, str):
        if not _L2_RE.match(l2.strip()):
            raise ConfigError(f"l2 = {l2!r}: expected a positive number or a string 'c/n'")
        return l2.strip()
    if isinstance(l2, bool) or not isinstance(l2, (int, float)) or not l2 > 0:
        raise ConfigError(f"l2 = {l2!r}: expected a positive number or a string 'c/n'")
    return repr(float(l2))


def l2_tag(l2: float | str) -> str:
    """File-name tag of an ``l2`` setting: ``"1/n" -> "1_n"``, ``0.001 -> "0.001"``.

    Used in reference file names ``results/reference/<dataset>__<loss>__l2-<tag>.parquet``.
    """
    return format_l2(l2).replace("/", "_")


# --------------------------------------------------------------------------------------------
# The Face-Off plan
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Synthetic:
    """A named synthetic data set: ``pdsparse.data.synthetic.generate(kind, params, seed)``."""

    name: str
    kind: str
    params: dict
    seed: int = 0


@dataclass(frozen=True)
class Figure2Cell:
    """One panel of Face-Off Figure 2: the worst case for dual RCD (Theorem 9) at (d, n, alpha).

    ``alpha = round(nnz_fraction * d * n)``; cells outside ``[max(d, n), d n]`` (Lemma 10) are
    dropped. ``name`` follows the convention of :mod:`pdsparse.plotting`:
    ``bin_d{d}_n{n}_p{nnz_fraction:g}``.
    """

    name: str
    d: int
    n: int
    alpha: int
    nnz_fraction: float


@dataclass(frozen=True)
class Run:
    """One solver run; its trace lives at :attr:`path`."""

    experiment: str
    dataset: str
    method: str
    sampling: str
    dual_step: str
    seed: int

    @property
    def params(self) -> str:
        return f"{self.sampling}-{self.dual_step}-seed{self.seed}"

    @property
    def path(self) -> str:
        return (
            f"{FACEOFF_RUNS_DIR}/{self.experiment}/{self.dataset}/{self.method}/"
            f"{self.params}.parquet"
        )


@dataclass
class FaceoffPlan:
    """What the workflow builds for Face-Off, after dropping items whose data is missing.

    Attributes
    ----------
    real : list[str]
        Real (registry) data sets to fetch and prepare.
    synthetic : dict[str, Synthetic]
        Synthetic data sets to generate (Figure 1 panels and Figure 2 cells).
    panels : dict[str, dict]
        Figure 1 panels kept: letter -> {"dataset", "title", "experiment"}.
    figure2 : list[Figure2Cell]
    table1 : list[str]
        Table 1 data sets kept.
    table1_variants : list[tuple[str, str, float]]
        (data set, normalization, beta) of the extra Table 1 statistics.
    experiments : dict[str, list[str]]
        Experiment name (``figure1a`` ... ``figure1d``, ``figure2``) -> data sets it runs on.
    runs : list[Run]
    max_epochs : dict[tuple[str, str], int]
        (experiment, data set) -> epoch budget.
    skipped : list[tuple[str, str]]
        Paper items dropped because their data is unavailable: (item, data set), e.g.
        ``("Figure 1c", "news20.binary")``.
    """

    real: list[str] = field(default_factory=list)
    synthetic: dict[str, Synthetic] = field(default_factory=dict)
    panels: dict[str, dict] = field(default_factory=dict)
    figure2: list[Figure2Cell] = field(default_factory=list)
    table1: list[str] = field(default_factory=list)
    table1_variants: list[tuple[str, str, float]] = field(default_factory=list)
    experiments: dict[str, list[str]] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)
    max_epochs: dict[tuple[str, str], int] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def datasets(self) -> list[str]:
        """Every data set in the plan (real first, then synthetic), without repeats."""
        return list(dict.fromkeys([*self.real, *self.synthetic]))

    def runs_of(self, experiment: str) -> list[Run]:
        return [r for r in self.runs if r.experiment == experiment]


def figure2_cells(fig2: Mapping) -> list[Figure2Cell]:
    """Expand ``faceoff.figure2`` into cells (rows n, columns nnz fraction), valid ones only."""
    d = int(fig2["d"])
    cells = []
    for n in fig2["n"]:
        for frac in fig2["nnz_fraction"]:
            alpha = int(round(float(frac) * d * n))
            lo, hi = max(d, n), d * n
            if alpha < lo or alpha > hi:
                # Theorem 9 needs max(d, n) <= alpha <= d n; such a cell has no matrix.
                continue
            name = f"bin_d{d}_n{int(n)}_p{float(frac):g}"
            cells.append(Figure2Cell(name, d, int(n), alpha, float(frac)))
    return cells


def _raw_filename(spec: Any) -> str:
    return getattr(spec, "raw_filename", None) or spec.filename


def data_availability(
    spec: Any, raw_dir: str | os.PathLike, mirror: Path | None, download: bool
) -> str | None:
    """Where a real data set would come from: "raw", "mirror", "download", or None."""
    if (Path(raw_dir) / _raw_filename(spec)).is_file():
        return "raw"
    if mirror is not None and (Path(mirror) / spec.filename).is_file():
        return "mirror"
    if download:
        return "download"
    return None


def _synthetic_from_config(name: str, entry: Mapping) -> Synthetic:
    return Synthetic(name, entry["kind"], dict(entry.get("params", {})), int(entry.get("seed", 0)))


def plan_faceoff(
    config: Mapping, registry: Mapping[str, Any], available: Callable[[str], bool]
) -> FaceoffPlan:
    """Decide the Face-Off data sets, runs and paper items from a validated config.

    Parameters
    ----------
    config : mapping
        Validated configuration (defaults filled).
    registry : mapping
        Data-set registry, name -> spec (``pdsparse.data.registry.load_registry``).
    available : callable
        ``available(name)`` is True when real data set ``name`` can be obtained (already in
        ``data.raw_dir``, in the mirror, or ``data.download`` is true). With
        ``data.require_all`` every item is kept regardless.

    Raises
    ------
    ConfigError
        If a panel or Table 1 names a data set that is neither in the registry nor in
        ``faceoff.synthetic``, or a synthetic name shadows a registry name.
    """
    fo = config["faceoff"]
    require_all = bool(config.get("data", {}).get("require_all", False))
    plan = FaceoffPlan()
    synthetic_cfg = fo.get("synthetic", {}) or {}
    for name in synthetic_cfg:
        if name in registry:
            raise ConfigError(
                f"faceoff.synthetic.{name}: the name is also a real data set in the registry; "
                "rename the synthetic data set"
            )
        if "__" in name:
            raise ConfigError(f"faceoff.synthetic.{name}: names may not contain '__'")

    def kind_of(name: str, where: str) -> str:
        if name in synthetic_cfg:
            return "synthetic"
        if name in registry:
            return "real"
        raise ConfigError(
            f"{where}: data set {name!r} is neither in the registry ({len(registry)} sets: "
            f"{', '.join(sorted(registry))}) nor in faceoff.synthetic "
            f"({', '.join(sorted(synthetic_cfg)) or 'none'})"
        )

    def keep(name: str, item: str) -> bool:
        if kind_of(name, item) == "synthetic" or require_all or available(name):
            return True
        plan.skipped.append((item, name))
        return False

    def use(name: str) -> None:
        if name in synthetic_cfg:
            plan.synthetic.setdefault(name, _synthetic_from_config(name, synthetic_cfg[name]))
        elif name not in plan.real:
            plan.real.append(name)

    epochs_default = int(fo["max_epochs"])

    # Figure 1: one experiment per panel (pdsparse.plotting.faceoff_figure1 takes one
    # aggregate per panel), experiment name "figure1<letter>".
    for letter in sorted(fo["figure1"]["panels"]):
        panel = fo["figure1"]["panels"][letter]
        name = panel["dataset"]
        if not keep(name, f"Figure 1{letter}"):
            continue
        use(name)
        experiment = f"figure1{letter}"
        plan.panels[letter] = {
            "dataset": name,
            "title": panel.get("title") or f"({letter}) {name}",
            "experiment": experiment,
        }
        plan.experiments[experiment] = [name]
        syn_epochs = (synthetic_cfg.get(name) or {}).get("max_epochs")
        plan.max_epochs[(experiment, name)] = int(
            panel.get("max_epochs") or syn_epochs or epochs_default
        )

    # Figure 2: worst case for dual RCD, binary entries, Theorem 9.
    fig2 = fo["figure2"]
    plan.figure2 = figure2_cells(fig2)
    for cell in plan.figure2:
        if cell.name in registry:
            raise ConfigError(
                f"faceoff.figure2: generated name {cell.name!r} clashes with the registry"
            )
        plan.synthetic[cell.name] = Synthetic(
            cell.name,
            "worst_case_binary_dual",
            {"d": cell.d, "n": cell.n, "alpha": cell.alpha},
            int(fig2.get("seed", 0)),
        )
        plan.max_epochs[("figure2", cell.name)] = int(fig2.get("max_epochs") or epochs_default)
    if plan.figure2:
        plan.experiments["figure2"] = [c.name for c in plan.figure2]

    # Table 1: statistics only.
    for name in fo["table1"]["datasets"]:
        if keep(name, "Table 1 row"):
            use(name)
            plan.table1.append(name)
            for variant in fo["table1"].get("variants", []) or []:
                plan.table1_variants.append(
                    (name, variant["normalization"], float(variant["beta"]))
                )

    for experiment, names in plan.experiments.items():
        for name in names:
            for solver in fo["solvers"]:
                method = solver["method"]
                dual_step = solver.get("dual_step") or ("fixed" if method == "dual_rcd" else "none")
                for seed in fo["seeds"]:
                    plan.runs.append(
                        Run(
                            experiment,
                            name,
                            method,
                            solver.get("sampling", "importance"),
                            dual_step,
                            int(seed),
                        )
                    )
    paths = [r.path for r in plan.runs]
    dupes = sorted({p for p in paths if paths.count(p) > 1})
    if dupes:
        raise ConfigError(f"faceoff.solvers: duplicate solver entries give the same run {dupes[0]}")
    return plan


def skipped_message(plan: FaceoffPlan, registry: Mapping[str, Any], raw_dir: str) -> str:
    """The warning printed when paper items are dropped for lack of data."""
    if not plan.skipped:
        return ""
    missing = sorted({name for _, name in plan.skipped})
    files = ", ".join(f"{registry[m].filename}" if m in registry else m for m in missing)
    return (
        "pdsparse: real data not available, skipping these paper items:\n"
        + "".join(f"  - {item}: {name}\n" for item, name in plan.skipped)
        + f"To include them, provide the raw files ({files}) by one of:\n"
        + "  * put them in a mirror directory and set data.mirror in the config "
        + "or the environment variable PDSPARSE_DATA_MIRROR,\n"
        + f"  * copy them into {raw_dir}/ under their registry names,\n"
        + "  * set data.download: true (needs network access), e.g. "
        + "--configfile config/paper.yaml."
    )
