"""Workflow configuration: schema validation with readable errors, data availability.

The Snakefile stays thin: it loads ``config/config.yaml`` (or ``config/paper.yaml``), calls
:func:`validate_config` against ``workflow/schemas/config.schema.yaml`` and asks each paper
(:mod:`pdsparse.repro.papers`) for its plan. Everything here is plain Python, unit-tested without
Snakemake.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from pdsparse.errors import ConfigError

__all__ = [
    "coerce_by_schema",
    "config_digest",
    "data_availability",
    "format_l2",
    "l2_tag",
    "load_config",
    "skipped_message",
    "validate_config",
]
_L2_RE = re.compile(r"^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?/n$")


def config_digest(config: Mapping) -> str:
    """SHA-256 of the effective config as ``results/config.json`` holds it (JSON in the
    config's order): the ``effective_config`` job's one param, so that a changed config
    reruns it while Snakemake's "params have changed" line stays one hash long."""
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()


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
            name, colon, value = str(key).partition(":")
            if colon:
                # YAML reads 'max_epochs:-5' as one key: a mapping's colon separates a key
                # from its value only when a space (or the line's end) follows it
                msg += (f": YAML needs a space after the colon, write '{name.strip()}: "
                        f"{value.strip()}'")
            elif hint:
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
# Data availability and skipped items
# --------------------------------------------------------------------------------------------


def _raw_filename(spec: Any) -> str:
    return getattr(spec, "raw_filename", None) or spec.filename


def data_availability(
    spec: Any, raw_dir: str | os.PathLike, mirror: Path | None, download: bool
) -> str | None:
    """Where a real data set would come from: "raw", "path" (one's own file, the entry's
    ``path:``), "mirror", "download", or None."""
    if (Path(raw_dir) / _raw_filename(spec)).is_file():
        return "raw"
    local = getattr(spec, "path", None)
    if local is not None:
        return "path" if Path(local).is_file() else None
    names = getattr(spec, "mirror_filenames", None) or (spec.filename,)
    if mirror is not None and any((Path(mirror) / name).is_file() for name in names):
        return "mirror"
    if download:
        return "download"
    return None


def skipped_message(
    skipped: Iterable[tuple[str, str]], registry: Mapping[str, Any], raw_dir: str
) -> str:
    """The warning printed when paper items are dropped for lack of data.

    ``skipped``: (paper item, data set) pairs, e.g. ("Figure 1c", "news20.binary").
    """
    skipped = list(skipped)
    if not skipped:
        return ""
    missing = sorted({name for _, name in skipped})
    specs = [registry[m] for m in missing if m in registry]
    unknown = [m for m in missing if m not in registry]
    # as a mirror holds them (every file bzip2-compressed: cod-rna as cod-rna.bz2) and as
    # the raw directory does (<name>.bz2 or <name>.txt)
    mirrored = ", ".join([_mirror_names(s) for s in specs] + unknown)
    raw = ", ".join([getattr(s, "raw_filename", s.filename) for s in specs] + unknown)
    return (
        "pdsparse: real data not available, skipping these paper items:\n"
        + "".join(f"  - {item}: {name}\n" for item, name in skipped)
        + "To include them, by one of:\n"
        + f"  * a mirror directory holding {mirrored}: set data.mirror in the config or "
        + "the environment variable PDSPARSE_DATA_MIRROR,\n"
        + f"  * copy them into {raw_dir}/ as {raw},\n"
        + "  * download what is missing (needs network access): "
        + "snakemake --cores 2 --config 'data={download: true}'."
    )


def _mirror_names(spec: Any) -> str:
    """A data set's file as a mirror holds it, the compressed name first (``cod-rna.bz2
    (or cod-rna)``)."""
    names = list(getattr(spec, "mirror_filenames", None) or (spec.filename,))
    first, *others = names[::-1]
    return first + (f" (or {', '.join(others)})" if others else "")
