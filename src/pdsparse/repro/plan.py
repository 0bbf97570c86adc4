"""What the workflow builds for a paper: a :class:`Plan` of data, problems, runs, figures, tables.

A paper module (``pdsparse.repro.papers.<paper>``) turns the validated config into one ``Plan``;
the workflow's rules are generic and look every job up in the plans by the file it makes.
Each name below is also a file name, so every object has a ``key`` (or ``tag``) that is safe
in paths, stable, and distinct for distinct contents:

=====================  ==============================================================
``DataSpec.key``       ``data/processed/<name>__<recipe tag>.npz``
``ProblemSpec.tag``    ``results/reference/<name>+<recipe>__<loss>__<penalty params>.parquet``
``StatsSpec.tag``      ``results/stats/<data key>__l2-<l2 tag>__beta-<beta>[__as-<norm>]``
``RunGroup.path``      ``results/runs/<paper>/<experiment>/<problem tag>/<solver>/<options>``
aggregate              ``results/<paper>/<experiment>.parquet``
``Output`` (figure)    ``results/figures/<paper>/<name>.{png,pdf}``
``Output`` (table)     ``results/tables/<paper>/<name>.{csv,md}``
=====================  ==============================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pdsparse.data.prepare import Recipe
from pdsparse.errors import ConfigError
from pdsparse.problem import ProblemKey
from pdsparse.repro.config import l2_tag

__all__ = [
    "BEST",
    "TODAY",
    "NOT_PRINTED",
    "DataSpec",
    "Generator",
    "Output",
    "Plan",
    "ProblemSpec",
    "RunGroup",
    "StatsSpec",
    "aggregate_path",
    "best_solvers",
    "configured_settings",
    "data_entries",
    "reference_path",
    "run_path",
    "solver_options",
]

@dataclass(frozen=True)
class Generator:
    """A seeded synthetic source: ``pdsparse.data.synthetic.generate(kind, params, seed)``."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    seed: int = 0

    @classmethod
    def of(cls, kind: str, params: Mapping[str, Any], seed: int = 0) -> Generator:
        return cls(kind, tuple(sorted(params.items())), int(seed))


@dataclass(frozen=True)
class DataSpec:
    """A data set as prepared: a registry name (``generator=None``) or a generator, plus a
    recipe. :attr:`key` names the processed file."""

    name: str
    recipe: Recipe
    generator: Generator | None = None

    @property
    def key(self) -> str:
        return f"{self.name}__{self.recipe.tag()}"

    @property
    def real(self) -> bool:
        return self.generator is None

    @property
    def raw_names(self) -> tuple[str, ...]:
        """The registry data sets whose raw files the preparation reads: the training file
        and the recipe's ``test_file`` (none for a generator)."""
        if not self.real:
            return ()
        test = self.recipe.test_file
        return (self.name,) if test is None else (self.name, test)


@dataclass(frozen=True)
class ProblemSpec:
    """A problem: prepared data, loss and penalty with its parameters as configured. Its
    :attr:`tag` (:meth:`pdsparse.problem.ProblemKey.tag`) names the reference file and joins
    traces to their P*."""

    data: DataSpec
    loss: str
    penalty: str = "elastic_net"
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, data: DataSpec, loss: str, penalty: str = "elastic_net", **params) -> ProblemSpec:
        return cls(data, loss, penalty, tuple(params.items()))

    @property
    def key(self) -> ProblemKey:
        return ProblemKey(self.data.name, self.loss, self.penalty, dict(self.params),
                          recipe=self.data.recipe.tag())

    @property
    def tag(self) -> str:
        return self.key.tag()

    @property
    def l2(self) -> float | str:
        return dict(self.params).get("l2", 0.0)


@dataclass(frozen=True)
class StatsSpec:
    """Face-Off's data statistics of a prepared data set at (l2, beta), optionally recomputed
    under another normalization (undoing the stored single-scale one)."""

    data: DataSpec
    l2: float | str
    beta: float
    normalization: str | None = None

    @property
    def tag(self) -> str:
        tag = f"{self.data.key}__l2-{l2_tag(self.l2)}__beta-{self.beta:g}"
        return tag + (f"__as-{self.normalization}" if self.normalization else "")


@dataclass(frozen=True)
class RunGroup:
    """One solver configuration on one problem in one experiment, every seed: one job and
    one trace file (a ``seed`` column tells the runs apart)."""

    paper: str
    experiment: str
    problem: ProblemSpec
    solver: str
    options: tuple[tuple[str, str], ...]
    options_tag: str
    seeds: tuple[int, ...]
    max_epochs: float
    max_seconds: float
    tol: float
    eval_every: float
    eval_per_decade: int = 0

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.paper, self.experiment, self.problem.tag, self.solver, self.options_tag)

    @property
    def path(self) -> str:
        return run_path(*self.key)


def solver_options(solver: Mapping, where: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """(option columns, path tag) of a config solver entry ``{method: ..., <options>}``,
    validated by the solver registry; errors name ``where`` (``dgpd.solvers[0]``)."""
    from pdsparse.solvers import get_solver

    given = {k: str(v) for k, v in solver.items() if k != "method"}
    try:
        spec = get_solver(solver["method"])
        options = spec.parse_options(given)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return tuple(spec.option_columns(options).items()), spec.tag(options)


def data_entries(out: Plan, section: Mapping, config: Mapping, registry: Mapping[str, Any],
                 available) -> dict[str, tuple[DataSpec, Mapping]]:
    """The data sets of a paper's ``datasets`` section: display name -> (spec, entry).

    Each entry has a ``source`` (``{registry: name}`` or ``{generator: {name, kind, params,
    seed}}``) and a ``recipe`` (:class:`~pdsparse.data.prepare.Recipe` fields; a typo is
    named with a suggestion). A recipe's ``test_file`` (the test rows from a second registry
    file, e.g. ``sector.t.scale``) must be a registry name and needs a registry source. A
    registry set whose raw file (or test file) is unavailable is dropped and listed in
    ``out.skipped``, unless ``data.require_all``. Errors name the setting
    (``<paper>.datasets.<name>.recipe``)."""
    import difflib
    from dataclasses import fields

    require_all = bool(config.get("data", {}).get("require_all", False))
    kept: dict[str, tuple[DataSpec, Mapping]] = {}
    allowed = [f.name for f in fields(Recipe)]
    for name, entry in section.items():
        where = f"{out.paper}.datasets.{name}"
        source = entry["source"]
        given = dict(entry.get("recipe") or {})
        for key in given:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ConfigError(f"{where}.recipe: unknown key {key!r}{hint}; allowed keys: "
                                  f"{', '.join(allowed)}")
        try:
            recipe = Recipe(**given)
        except ConfigError as exc:
            raise ConfigError(f"{where}.recipe: {exc}") from None
        test = recipe.test_file
        if test is not None and "registry" not in source:
            raise ConfigError(f"{where}.recipe.test_file: {test!r}: a test file only applies "
                              "to a registry source, not a generator")
        if test is not None and test not in registry:
            close = difflib.get_close_matches(test, list(registry), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where}.recipe.test_file: {test!r} is not in the registry"
                              f"{hint} ({', '.join(sorted(registry))})")
        if "registry" in source:
            raw = source["registry"]
            if raw not in registry:
                raise ConfigError(f"{where}.source.registry: {raw!r} is not in the registry "
                                  f"({', '.join(sorted(registry))})")
            spec = DataSpec(raw, recipe)
            missing = [f for f in (raw, test) if f is not None and not available(f)]
            if missing and not require_all:
                out.skipped += [(f"{out.paper.upper()} {name}", f) for f in missing]
                continue
        else:
            gen = source["generator"]
            spec = DataSpec(gen["name"], recipe,
                            Generator.of(gen["kind"], gen.get("params", {}), gen.get("seed", 0)))
        kept[name] = (out.add_data(spec), entry)
    return kept


def run_path(paper: str, experiment: str, problem: str, solver: str, options: str) -> str:
    return f"results/runs/{paper}/{experiment}/{problem}/{solver}/{options}.parquet"


def reference_path(problem: str) -> str:
    """The reference file (certified optimum) of a problem tag."""
    return f"results/reference/{problem}.parquet"


def aggregate_path(paper: str, experiment: str) -> str:
    return f"results/{paper}/{experiment}.parquet"


@dataclass(frozen=True)
class Output:
    """A figure or table: the ``pdsparse output PAPER`` builder and arguments that make it
    (``command``: the builder's name first, outputs aside), the aggregates / stats files it
    reads, and its caption template (``<paper>/<name>.rst``, in the paper's ``captions/``)."""

    paper: str
    name: str
    kind: str  # "figure" or "table"
    command: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    caption: str = ""

    @property
    def files(self) -> tuple[str, str]:
        if self.kind == "figure":
            stem = f"results/figures/{self.paper}/{self.name}"
            return f"{stem}.png", f"{stem}.pdf"
        stem = f"results/tables/{self.paper}/{self.name}"
        return f"{stem}.csv", f"{stem}.md"


@dataclass
class Plan:
    """Everything one paper asks the workflow to build, after dropping items whose data is
    unavailable (listed in :attr:`skipped` as (item, data set), e.g. ("Figure 1c", "news20"))."""

    paper: str
    data: dict[str, DataSpec] = field(default_factory=dict)
    problems: dict[str, ProblemSpec] = field(default_factory=dict)
    stats: dict[str, StatsSpec] = field(default_factory=dict)
    runs: list[RunGroup] = field(default_factory=list)
    experiments: dict[str, list[str]] = field(default_factory=dict)
    outputs: list[Output] = field(default_factory=list)
    reference: dict = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def add_data(self, spec: DataSpec) -> DataSpec:
        old = self.data.setdefault(spec.key, spec)
        if old != spec:
            raise ConfigError(f"{self.paper}: two data sets are both named {spec.key!r}")
        return spec

    def add_problem(self, spec: ProblemSpec) -> ProblemSpec:
        self.add_data(spec.data)
        self.problems.setdefault(spec.tag, spec)
        return spec

    def add_stats(self, spec: StatsSpec) -> StatsSpec:
        self.add_data(spec.data)
        self.stats.setdefault(spec.tag, spec)
        return spec

    def add_run(self, group: RunGroup) -> None:
        if any(r.key == group.key for r in self.runs):
            raise ConfigError(
                f"{self.paper}: two solver entries give the same run {group.path}; "
                "remove the duplicate"
            )
        self.add_problem(group.problem)
        self.experiments.setdefault(group.experiment, [])
        if group.problem.tag not in self.experiments[group.experiment]:
            self.experiments[group.experiment].append(group.problem.tag)
        self.runs.append(group)

    def runs_of(self, experiment: str) -> list[RunGroup]:
        return [r for r in self.runs if r.experiment == experiment]

    def targets(self) -> list[str]:
        """Every file ``snakemake`` builds for this paper by default."""
        out: list[str] = []
        for o in self.outputs:
            out += o.files
        out += [aggregate_path(self.paper, e) for e in self.experiments]
        out += [f"results/stats/{tag}.parquet" for tag in self.stats]
        return out

    def existing_stale(self) -> list[str]:
        return [p for p in self.stale if os.path.exists(p)]


BEST = "_best"
"""Suffix of the experiment that reruns a race with the ``best`` settings of its paper."""
TODAY = "_today"
"""Suffix of the experiment that runs today's best methods (``<paper>.today``) on a race's
problems: said beside the race's verdict, never one of the paper's baselines."""


def configured_settings(section: Mapping) -> dict[str, dict]:
    """Each method's reference setting in a sensitivity study: its first entry in the
    section's ``solvers``, then in its ``today`` list (a method raced only as today's best,
    such as Acc PG on the trace ball, is compared at that setting). The study's ``printed``
    replaces it where the paper prints one; the others are labelled :data:`NOT_PRINTED`."""
    configured: dict[str, dict] = {}
    for solver in [*section.get("solvers", ()), *(section.get("today") or ())]:
        configured.setdefault(solver["method"],
                              {k: v for k, v in solver.items() if k != "method"})
    return configured


def best_solvers(cfg: Mapping, paper: str, key: str = "best"
                 ) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    """``<paper>.best`` (or another list ``key`` of solvers, ``today``) as (method,
    options, tag), one per method (checked)."""
    out, seen = [], set()
    for i, solver in enumerate(cfg.get(key) or []):
        where = f"{paper}.{key}[{i}]"
        options, tag = solver_options(solver, where)
        if solver["method"] in seen:
            raise ConfigError(f"{where}: a second {key} setting of {solver['method']!r} "
                              "(one per method)")
        seen.add(solver["method"])
        out.append((solver["method"], options, tag))
    return out


SENSITIVITY = "sensitivity"
"""The experiment (and output) name of a paper's sensitivity study."""

NOT_PRINTED = "not printed: ours"
"""The label of a setting the paper does not print (a step multiplier, a data set's delta,
``s = auto``, a baseline's parameters as configured): config comments, captions, docs and
the scorecard say it in these words, never "printed"."""


def _grid(entry: Mapping, where: str) -> list[dict[str, str]]:
    """``{method: m, opt: [v1, v2], other: v}`` as every combination of the listed values."""
    import itertools

    method = entry.get("method")
    keys = [k for k in entry if k != "method"]
    values = [v if isinstance(v, list) else [v] for v in (entry[k] for k in keys)]
    if any(not v for v in values):
        raise ConfigError(f"{where}: an option with an empty list of values")
    return [{"method": method, **{k: str(v) for k, v in zip(keys, combo, strict=True)}}
            for combo in itertools.product(*values)]


def add_sensitivity(out: Plan, cfg: Mapping, problem: ProblemSpec, printed: Mapping[str, Mapping],
                    title: str, study: Mapping | None = None, name: str = SENSITIVITY,
                    where: str = "") -> None:
    """Plan a sensitivity study (``study``, default ``<paper>.sensitivity``): one run group
    per configuration of its ``grid`` (each method over the listed values of its options) on
    ``problem``, in the experiment ``name``, with the table ``name`` and the figure
    ``<name>_figure`` of :mod:`pdsparse.repro.sensitivity`. ``printed`` maps each method to the
    options it is compared at (the study's ``printed`` entry of a method replaces them: only
    those are the paper's, the others are labelled :data:`NOT_PRINTED`); a method's printed
    setting must be one of its grid's. ``where``: the study's config key.

    Seeds, coarse to fine: the grid runs the study's ``seeds`` (default the paper's), and the
    settings a verdict rests on, each method's printed one and its ``<paper>.best`` (the last
    study's best), run the paper's ``seeds`` (at least as many). A grid of one seed costs a
    third of three; its price is precision: a configuration outside those two is one run on
    a loaded machine (CPU time within about 10 %), so a best found there that is not the
    configured one is a candidate for ``best``, to be confirmed by the next study. Budgets,
    the same: the grid's ``grid_max_seconds`` (default ``max_seconds``), the settings a
    verdict rests on ``max_seconds``; a configuration slower than the grid's budget is a
    lower bound (not reached within it)."""
    import shlex

    sens = study if study is not None else cfg[SENSITIVITY]
    where = where or f"{out.paper}.{SENSITIVITY}"
    seeds = tuple(int(s) for s in cfg["seeds"])
    grid_seeds = tuple(int(s) for s in sens.get("seeds") or cfg["seeds"])
    configs: list[tuple[str, tuple[tuple[str, str], ...], str]] = []
    tags: dict[str, list[str]] = {}
    for i, entry in enumerate(sens["grid"]):
        for solver in _grid(entry, f"{where}.grid[{i}]"):
            options, tag = solver_options(solver, f"{where}.grid[{i}]")
            tags.setdefault(solver["method"], []).append(tag)
            configs.append((solver["method"], options, tag))
    given = {**printed, **dict(sens.get("printed") or {})}
    marks = []
    for method in tags:
        if method not in given:
            raise ConfigError(f"{where}.printed: no printed setting of {method!r} (give its "
                              f"options, e.g. printed: {{{method}: {{...}}}})")
        _, tag = solver_options({"method": method, **{k: str(v) for k, v in
                                                      given[method].items()}},
                                f"{where}.printed.{method}")
        if tag not in tags[method]:
            raise ConfigError(f"{where}: the printed setting of {method} ({tag}) is not in "
                              f"its grid ({', '.join(tags[method])}): add its values")
        marks.append(f"{method}={tag}")
    # a setting the study's `printed` names is the paper's; the others (a baseline's source
    # parameters, our multipliers in the races) are labelled NOT_PRINTED in the tables
    ours = [m for m in tags if m not in (sens.get("printed") or {})]
    fine = {tuple(m.split("=", 1)) for m in marks} | \
        {(method, tag) for method, _, tag in best_solvers(cfg, out.paper)}
    budget = float(sens.get("max_seconds") or cfg["max_seconds"])
    coarse = float(sens.get("grid_max_seconds") or budget)
    for method, options, tag in configs:
        decides = (method, tag) in fine
        out.add_run(RunGroup(
            out.paper, name, problem, method, options, tag,
            tuple(dict.fromkeys((*grid_seeds, *seeds))) if decides else grid_seeds,
            float(sens.get("max_epochs") or cfg["max_epochs"]),
            budget if decides else min(coarse, budget), float(cfg["tol"]),
            float(cfg["eval_first"]), int(cfg["eval_per_decade"]),
        ))
    agg = aggregate_path(out.paper, name)
    args = (f"--aggregate {shlex.quote(agg)}",
            "--targets " + " ".join(repr(float(t)) for t in sens["targets"]),
            "--printed " + " ".join(map(shlex.quote, marks)),
            f"--title {shlex.quote(title)}") + \
        (("--ours " + " ".join(map(shlex.quote, ours)),) if ours else ()) + \
        ((f"--note {shlex.quote(sens['note'])}",) if sens.get("note") else ())
    # outputs are looked up by (paper, name): the figure has a name of its own; the
    # builders are the generic sensitivity ones, whatever the study's name
    for kind, output, builder in (("table", name, SENSITIVITY),
                                  ("figure", f"{name}_figure", f"{SENSITIVITY}_figure")):
        out.outputs.append(Output(out.paper, output, kind, (builder, *args), (agg,),
                                  f"{out.paper}/{SENSITIVITY}.rst"))
