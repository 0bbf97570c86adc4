"""Lei, Zhuo, Caramanis, Dhillon & Dimakis, "Primal-Dual Block Frank-Wolfe" (NeurIPS 2019) as a
workflow plan.

Paper items (Section 5 and Appendix C): Figure 1 (relative primal objective (P - P*)/P* against
CPU time, six methods, one panel per data set, mu = 10/n), Figure 3 (the same for mu in {1/n,
10/n, 100/n} on rcv1 and news20), Table 2 (data statistics and the sparsity of x*), Figure 2
(the trace-norm ball on synthetic low-rank sensing data, one panel per rank) and the claim of
"around 10 times speedup over all other methods except for the smallest dataset duke" (the
speedup table). Problem: P(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2 subject to ||x||_1 <=
r, the smooth hinge loss h (Appendix B.7). Settings come from the ``pdbfw`` section of the
config; printed values are in :mod:`pdsparse.repro.papers.pdbfw.values`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from pdsparse.data.prepare import Recipe
from pdsparse.errors import ConfigError
from pdsparse.repro.plan import (
    BEST,
    TODAY,
    DataSpec,
    Generator,
    Output,
    Plan,
    ProblemSpec,
    RunGroup,
    add_sensitivity,
    aggregate_path,
    best_solvers,
    configured_settings,
    data_entries,
    solver_options,
)

__all__ = ["PAPER", "plan"]

from pdsparse.repro.papers.pdbfw import PAPER


def _q(value: Any) -> str:
    return shlex.quote(str(value))


def _experiment(mu: str) -> str:
    """``mu10_n`` for mu = "10/n" (the experiments of Figures 1 and 3 are the mu values)."""
    return "mu" + str(mu).replace("/", "_").replace(".", "p")


def plan(config: Mapping, registry: Mapping[str, Any], available: Callable[[str], bool]) -> Plan:
    """The PDBFW data sets, runs, figures and tables of a validated config.

    ``pdbfw.datasets`` maps a display name (``duke``, ``digits09-rb``) to a source and a
    :class:`~pdsparse.data.prepare.Recipe`, as for DGPD, plus the ball's ``radius`` (default
    ``pdbfw.radius``) and per-solver option overrides (``options: {pdbfw: {s: 500}}``).
    Figure 1 and Table 2 use ``pdbfw.mu``; Figure 3 adds ``pdbfw.figure3.mus`` on the data sets
    it lists. ``pdbfw.trace`` adds Figure 2.
    """
    cfg = config[PAPER]
    out = Plan(PAPER, reference=dict(cfg["reference"]))
    kept = data_entries(out, cfg["datasets"], config, registry, available)
    fig3 = cfg.get("figure3") or {}
    for name in fig3.get("datasets", []):
        if name not in cfg["datasets"]:
            raise ConfigError(f"{PAPER}.figure3.datasets: {name!r} is not a data set of "
                              f"{PAPER}.datasets ({', '.join(cfg['datasets'])})")
    mu = str(cfg["mu"])
    mus = {name: [mu] for name in kept}
    for name in fig3.get("datasets", []):
        if name in kept:
            mus[name] = list(dict.fromkeys([*map(str, fig3.get("mus", [])), mu]))

    for name, (spec, entry) in kept.items():
        for m in mus[name]:
            problem = _problem(cfg, spec, entry, m)
            _add_runs(out, cfg, cfg["solvers"], _experiment(m), problem, entry, name,
                      best=True, today=cfg)

    if cfg.get("sensitivity"):
        _sensitivity(out, cfg, kept)
    trace = cfg.get("trace")
    if trace:
        _trace_runs(out, cfg, trace)
    if not kept and not trace:
        out.stale += [f"results/figures/{PAPER}/figure{k}.png" for k in (1, 2, 3)]
        return out
    processed = str(config.get("data", {}).get("processed_dir", "data/processed"))
    if kept:
        _l1_outputs(out, cfg, kept, mus, processed)
    if trace:
        _trace_outputs(out, cfg, trace)
    return out


def _add_runs(out: Plan, cfg: Mapping, solvers, experiment: str, problem: ProblemSpec,
              entry: Mapping, name: str, max_seconds: float | None = None,
              best: bool = False, today: Mapping | None = None) -> None:
    """The race of ``solvers`` on ``problem`` (a data set's ``options`` applied), with
    ``best``, ``pdbfw.best`` where it differs from them (the sensitivity study's settings,
    which no data set's options change), and the ``today`` list of ``today`` (the section
    holding it: ``pdbfw`` or ``pdbfw.trace``; experiment ``<...>_today``) where it differs
    from them: today's best methods for the problem, raced beside, not the paper's."""
    seeds = tuple(int(s) for s in cfg["seeds"])
    overrides = dict(entry.get("options") or {})
    for i, solver in enumerate(solvers):  # the configured solvers first: typos named there
        solver_options(solver, f"{PAPER}.solvers[{i}]")
    methods = [s["method"] for s in solvers]
    for solver in overrides:
        if solver not in methods:
            raise ConfigError(f"{PAPER}.datasets.{name}.options: {solver!r} is not one of the "
                              f"configured solvers ({', '.join(methods)})")
    runs = []
    for i, solver in enumerate(solvers):
        merged = {**solver, **{k: str(v) for k, v in
                               (overrides.get(solver["method"]) or {}).items()}}
        runs.append((experiment, solver["method"],
                     *solver_options(merged, f"{PAPER}.solvers[{i}] on {name}")))
    raced = {(r[1], r[3]) for r in runs}
    if best:  # the best settings rerun the race (experiment <...>_best) where they differ
        runs += [(experiment + BEST, *b) for b in best_solvers(cfg, PAPER)
                 if (b[0], b[2]) not in raced]
    if today is not None:
        where = PAPER if today is cfg else f"{PAPER}.trace"
        runs += [(experiment + TODAY, *b) for b in best_solvers(today, where, "today")
                 if (b[0], b[2]) not in raced]
    for exp, method, options, tag in runs:
        out.add_run(RunGroup(
            PAPER, exp, problem, method, options, tag, seeds,
            float(entry.get("max_epochs") or cfg["max_epochs"]),
            float(max_seconds or entry.get("max_seconds") or cfg["max_seconds"]),
            float(cfg["tol"]), float(cfg["eval_first"]), int(cfg["eval_per_decade"]),
        ))


def _sensitivity(out: Plan, cfg: Mapping, kept) -> None:
    """``pdbfw.sensitivity`` on its data set at ``pdbfw.mu`` and the data set's radius."""
    sens = cfg["sensitivity"]
    name = sens.get("dataset")
    if name not in cfg["datasets"]:
        raise ConfigError(f"{PAPER}.sensitivity.dataset: {name!r} is not a data set of "
                          f"{PAPER}.datasets ({', '.join(cfg['datasets'])})")
    if name not in kept:
        out.skipped.append(("sensitivity study", name))
        return
    spec, entry = kept[name]
    configured = configured_settings(cfg)
    problem = _problem(cfg, spec, entry, str(cfg["mu"]))
    add_sensitivity(out, cfg, problem, configured,
                    f"PDBFW and its baselines over their open choices: {name}, "
                    f"r = {entry.get('radius', cfg['radius'])}, μ = {cfg['mu']}")


def _override_note(cfg: Mapping, names) -> str:
    """The legend line that says why one solver shows two settings: a data set's
    ``options`` override (``options: {pdbfw: {delta: x10000}}``), named per data set."""
    parts = []
    for name in names:
        for solver, opts in (cfg["datasets"][name].get("options") or {}).items():
            given = ", ".join(f"{k} {v}" for k, v in opts.items())
            parts.append(f"{solver} {given} on {name}")
    if not parts:
        return ""
    return ("settings per data set (config: datasets.NAME.options; other data sets run "
            "the solvers as listed): " + "; ".join(parts))


def _problem(cfg: Mapping, spec: DataSpec, entry: Mapping, mu: str) -> ProblemSpec:
    """The l1-ball problem at ``mu``: P(x) = 1/n sum_i h(b_i a_i^T x) + mu/2 ||x||^2 on
    ||x||_1 <= r, r the data set's ``radius`` or ``pdbfw.radius``."""
    radius = entry.get("radius", cfg["radius"])
    return ProblemSpec.of(spec, cfg["loss"], "l1_ball", radius=radius, l2=mu)


def _l1_outputs(out: Plan, cfg: Mapping, kept, mus, processed: str) -> None:
    from pdsparse.repro.figures import CurveFigure, Panel

    names = list(kept)
    mu = str(cfg["mu"])
    logx = set(cfg.get("log_time", []) or [])
    keys = ("solver", *_option_keys(cfg["solvers"]))
    main = _experiment(mu)
    panels = tuple(
        Panel(name, main, {"problem": _problem(cfg, kept[name][0], kept[name][1], mu).tag},
              x="time_s", logx=(name in logx) or None)
        for name in names)
    ncols = min(3, len(names))
    note = _override_note(cfg, names)
    _figure(out, "figure1", CurveFigure(
        "figure1", panels, ncols=ncols, x="time_s", y="rel_objective", curve_keys=keys,
        suptitle=f"l1 ball, μ = {mu} (smooth hinge)", outer_labels=True, legend_ncols=6,
        figsize=_figsize(len(panels), ncols), note=note),
        [main], "pdbfw/figure1.rst")

    fig3 = [n for n in (cfg.get("figure3") or {}).get("datasets", []) if n in kept]
    if fig3:
        columns = list(dict.fromkeys(map(str, cfg["figure3"]["mus"])))
        panels = tuple(
            Panel(f"{name}, μ = {m}", _experiment(m),
                  {"problem": _problem(cfg, kept[name][0], kept[name][1], m).tag},
                  x="time_s", logx=(name in logx) or None)
            for name in fig3 for m in columns)
        _figure(out, "figure3", CurveFigure(
            "figure3", panels, ncols=len(columns), x="time_s", y="rel_objective",
            curve_keys=keys, suptitle="l1 ball, μ varied (smooth hinge)", outer_labels=True,
            legend_ncols=6, figsize=_figsize(len(panels), len(columns)),
            note=_override_note(cfg, fig3)),
            [_experiment(m) for m in columns], "pdbfw/figure3.rst")

    # Table 2: data statistics and the sparsity of x*, beside the paper's rows
    problems = {name: _problem(cfg, kept[name][0], kept[name][1], mu) for name in names}
    refs = {name: f"results/reference/{p.tag}.parquet" for name, p in problems.items()}
    files = {name: f"{processed}/{kept[name][0].key}.npz" for name in names}
    command = ["table2",
               "--data " + " ".join(_q(f"{n}={p}") for n, p in files.items()),
               "--references " + " ".join(_q(f"{n}={p}") for n, p in refs.items())]
    papers = [f"{n}={entry['paper']}" for n, (_, entry) in kept.items() if entry.get("paper")]
    if papers:
        command.append("--paper-rows " + " ".join(map(_q, papers)))
    out.outputs.append(Output(PAPER, "table2", "table", tuple(command),
                              (*files.values(), *refs.values()), "pdbfw/table2.rst"))

    speed = cfg["speedup"]
    agg = aggregate_path(PAPER, main)
    heads = [f"{kept[n][0].name}+{kept[n][0].recipe.tag()}={n}" for n in names]
    command = ["speedup", f"--aggregate {_q(agg)}", f"--base {speed['base']}",
               "--names " + " ".join(map(_q, heads)),
               "--targets " + " ".join(repr(float(t)) for t in speed["targets"]),
               f"--claim {_q('around 10x over all other methods except on duke (Fig. 1)')}"]
    out.outputs.append(Output(PAPER, "speedup", "table", tuple(command), (agg,),
                              "pdbfw/speedup.rst"))


def _figsize(panels: int, ncols: int) -> tuple[float, float]:
    """Tall enough rows that the y labels of stacked rows do not run into each other."""
    rows = -(-panels // ncols)
    return (max(2.8 * ncols + 0.6, 8.0), 3.0 * rows + 1.4)


def _figure(out: Plan, name: str, figure, experiments, caption: str) -> None:
    aggs = {e: aggregate_path(PAPER, e) for e in experiments}
    out.outputs.append(Output(
        PAPER, name, "figure",
        ("curves", f"--spec {_q(figure.to_json())}",
         *(f"--aggregate {_q(f'{e}={a}')}" for e, a in aggs.items())),
        tuple(aggs.values()), caption,
    ))


def _trace_problem(trace: Mapping, rank: int) -> ProblemSpec:
    gen = dict(trace["generator"])
    params = {**dict(gen.get("params") or {}), "rank": int(rank)}
    spec = DataSpec(f"{gen['name']}-r{rank}", Recipe(normalization="none"),
                    Generator.of(gen["kind"], params, int(gen.get("seed", 0))))
    return ProblemSpec.of(spec, trace["loss"], "trace_ball", radius=trace["radius"],
                          l2=str(trace["mu"]))


TRACE_SENSITIVITY = "sensitivity_trace"
"""The experiment and table of the trace-ball sensitivity study (``pdbfw.trace.sensitivity``)."""


def _trace_runs(out: Plan, cfg: Mapping, trace: Mapping) -> None:
    for rank in trace["ranks"]:
        problem = _trace_problem(trace, rank)
        _add_runs(out, cfg, trace["solvers"], f"trace_rank{int(rank)}", problem, {},
                  f"trace rank {rank}", max_seconds=float(trace["max_seconds"]), today=trace)
    sens = trace.get("sensitivity")
    if sens:
        where = f"{PAPER}.trace.sensitivity"
        rank = sens.get("rank")
        if rank is None or int(rank) not in [int(r) for r in trace["ranks"]]:
            raise ConfigError(f"{where}.rank: give one of the ranks of {PAPER}.trace.ranks "
                              f"({', '.join(str(r) for r in trace['ranks'])}), got {rank!r}")
        configured = configured_settings(trace)
        add_sensitivity(out, {**cfg, "max_seconds": trace["max_seconds"]},
                        _trace_problem(trace, int(rank)), configured,
                        f"PDBFW and the trace-norm baselines over their open choices: rank "
                        f"{rank}, θ = {trace['radius']}, μ = {trace['mu']}", study=sens,
                        name=TRACE_SENSITIVITY, where=where)


def _trace_outputs(out: Plan, cfg: Mapping, trace: Mapping) -> None:
    from pdsparse.repro.figures import CurveFigure, Panel

    ranks = [int(r) for r in trace["ranks"]]
    panels = tuple(Panel(f"rank {r}", f"trace_rank{r}",
                         {"problem": _trace_problem(trace, r).tag}, x="time_s")
                   for r in ranks)
    _figure(out, "figure2", CurveFigure(
        "figure2", panels, ncols=len(panels), x="time_s", y="rel_objective",
        curve_keys=("solver", *_option_keys(trace["solvers"])),
        suptitle=f"trace-norm ball, μ = {trace['mu']} (squared loss, synthetic)",
        outer_labels=True, legend_ncols=6), [f"trace_rank{r}" for r in ranks],
        "pdbfw/figure2.rst")


def _option_keys(solvers) -> tuple[str, ...]:
    """Option columns that tell the configured solvers apart."""
    keys: list[str] = []
    for solver in solvers:
        keys += [k for k in solver if k != "method" and k not in keys]
    return tuple(keys)
