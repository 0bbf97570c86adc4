"""Lei, Yen, Wu, Dhillon & Ravikumar, "Doubly Greedy Primal-Dual Coordinate Descent for Sparse
Empirical Risk Minimization" (ICML 2017) as a workflow plan.

Paper items (Lei et al., Doubly Greedy Primal-Dual Coordinate Descent, Section 5 and
Appendix B): Figure 1 (lambda = 0.1, mu = 0.01) and Figures 2-6 (the other five points of
lambda in {0.1, 0.01} x mu in {1, 0.1, 0.01}): relative objective (P - P*)/P* against time
and against iterations, one panel per data set; Table 2 (data statistics, DGPD's nonzero
primal and dual variables at lambda = 0.1, mu = 0.01); the speedup of DGPD over each
baseline (the paper claims up to 30x). Problem: P(x) = 1/n sum phi_i(a_i^T x) +
mu/2 ||x||^2 + lambda ||x||_1 with the smooth hinge loss; multiclass data solved one-vs-rest
(:func:`pdsparse.problem.one_vs_rest`), summed objectives and nonzero counts. Settings come
from the ``dgpd`` section of the config; printed values are in
:mod:`pdsparse.repro.papers.dgpd.values`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from pdsparse.errors import ConfigError
from pdsparse.repro.plan import (
    BEST,
    TODAY,
    DataSpec,
    Output,
    Plan,
    ProblemSpec,
    RunGroup,
    add_sensitivity,
    aggregate_path,
    best_solvers,
    configured_settings,
    data_entries,
    reference_path,
    solver_options,
)

__all__ = ["PAPER", "FIGURES", "plan"]

from pdsparse.repro.papers.dgpd import PAPER

# Figure number of each (lambda, mu): Figure 1 is lambda = 0.1, mu = 0.01 (Sec. 5); the
# appendix's Figures 2-6 hold the other five points of the grid. The appendix text does not
# survive extraction with its figure-to-setting map, so the order below (lambda descending,
# then mu descending, skipping Figure 1's point) is ours: the captions name each setting.
FIGURES: tuple[tuple[float, float], ...] = (
    (0.1, 0.01), (0.1, 1.0), (0.1, 0.1), (0.01, 1.0), (0.01, 0.1), (0.01, 0.01),
)


def _q(value: Any) -> str:
    return shlex.quote(str(value))


def _experiment(lam: float, mu: float) -> str:
    return f"lam{lam:g}_mu{mu:g}"


def plan(config: Mapping, registry: Mapping[str, Any], available: Callable[[str], bool]) -> Plan:
    """The DGPD data sets, runs, figures and tables of a validated config.

    ``dgpd.datasets`` maps a display name (``digits-rb``, ``mnist-rb``) to a source (a
    registry data set or a generator such as scikit-learn's bundled ``digits``) and a
    :class:`~pdsparse.data.prepare.Recipe` (feature map, split). A data set whose raw file
    is unavailable is dropped (listed in ``Plan.skipped``), unless ``data.require_all``.
    A data set's ``cells`` (a list of [lambda, mu] pairs of the grid) restricts its runs to
    those points of ``lambdas`` x ``mus`` (default: all): its panels appear only in those
    figures, its Table 2 row has nonzeros only if it has Table 2's point.
    """
    cfg = config[PAPER]
    out = Plan(PAPER, reference=dict(cfg["reference"]))
    grid = [(float(lam), float(mu)) for lam in cfg["lambdas"] for mu in cfg["mus"]]
    kept = data_entries(out, cfg["datasets"], config, registry, available)
    cells = {name: _cells(entry, grid, f"{PAPER}.datasets.{name}.cells")
             for name, (_, entry) in kept.items()}

    seeds = tuple(int(s) for s in cfg["seeds"])
    printed = {}
    for i, solver in enumerate(cfg["solvers"]):
        options, tag = solver_options(solver, f"{PAPER}.solvers[{i}]")
        printed.setdefault(solver["method"], []).append((options, tag))
    # the best settings rerun each race (experiment <...>_best) where they differ; today's
    # best methods run beside it (experiment <...>_today), never as a paper's baseline
    best = [b for b in best_solvers(cfg, PAPER) if b[2] not in
            [tag for _, tag in printed.get(b[0], [])]]
    today = [b for b in best_solvers(cfg, PAPER, "today") if b[2] not in
             [tag for _, tag in printed.get(b[0], [])]]
    for lam, mu in grid:
        experiment = _experiment(lam, mu)
        for name, (spec, entry) in kept.items():
            if (lam, mu) not in cells[name]:
                continue
            problem = _problem(cfg, spec, lam, mu)
            runs = [(experiment, method, options, tag) for method, settings in printed.items()
                    for options, tag in settings]
            runs += [(experiment + BEST, *b) for b in best]
            runs += [(experiment + TODAY, *b) for b in today]
            for exp, method, options, tag in runs:
                out.add_run(RunGroup(
                    PAPER, exp, problem, method, options, tag, seeds,
                    float(entry.get("max_epochs") or cfg["max_epochs"]),
                    float(entry.get("max_seconds") or cfg["max_seconds"]), float(cfg["tol"]),
                    float(cfg["eval_first"]), int(cfg["eval_per_decade"]),
                ))
    if cfg.get("sensitivity"):
        _sensitivity(out, cfg, kept, grid)
    if not kept:
        out.stale += [f"results/figures/{PAPER}/figure{k}.png" for k in range(1, 7)]
        return out
    processed = str(config.get("data", {}).get("processed_dir", "data/processed"))
    _outputs(out, cfg, grid, kept, cells, processed)
    return out


def _sensitivity(out: Plan, cfg: Mapping, kept, grid) -> None:
    """``dgpd.sensitivity`` on its data set at its ``cell`` (default: Table 2's point)."""
    sens = cfg["sensitivity"]
    name = sens.get("dataset")
    where = f"{PAPER}.sensitivity"
    if name not in cfg["datasets"]:
        raise ConfigError(f"{where}.dataset: {name!r} is not a data set of {PAPER}.datasets "
                          f"({', '.join(cfg['datasets'])})")
    cell = sens.get("cell") or [cfg["table2"]["lam"], cfg["table2"]["mu"]]
    lam, mu = float(cell[0]), float(cell[1])
    if name not in kept:
        out.skipped.append(("sensitivity study", name))
        return
    configured = configured_settings(cfg)
    add_sensitivity(out, cfg, _problem(cfg, kept[name][0], lam, mu), configured,
                    f"DGPD over its open choices: {name}, λ = {lam:g}, μ = {mu:g}")


def _cells(entry: Mapping, grid: list[tuple[float, float]], where: str
           ) -> list[tuple[float, float]]:
    """The (lambda, mu) points a data set runs: its ``cells`` (each a point of the grid,
    else a ConfigError naming ``where``), or the whole grid."""
    given = entry.get("cells")
    if given is None:
        return list(grid)
    out: list[tuple[float, float]] = []
    for i, cell in enumerate(given):
        if isinstance(cell, str | bytes) or len(cell) != 2:
            raise ConfigError(f"{where}[{i}]: {cell!r} is not a [lambda, mu] pair")
        point = (float(cell[0]), float(cell[1]))
        if point not in grid:
            raise ConfigError(
                f"{where}[{i}]: lambda = {point[0]:g}, mu = {point[1]:g} is not a point of "
                f"the grid dgpd.lambdas x dgpd.mus ("
                + ", ".join(f"[{lam:g}, {mu:g}]" for lam, mu in grid) + ")")
        if point in out:
            raise ConfigError(f"{where}[{i}]: [{point[0]:g}, {point[1]:g}] is listed twice")
        out.append(point)
    if not out:
        raise ConfigError(f"{where}: an empty list; leave it out to run the whole grid")
    return out


def _outputs(out: Plan, cfg: Mapping, grid, kept, cells, processed: str) -> None:
    from pdsparse.repro.figures import CurveFigure, Panel

    logx = set(cfg.get("log_time", []) or [])
    for number, (lam, mu) in enumerate(FIGURES, start=1):
        names = [name for name in kept if (lam, mu) in cells[name]]
        if (lam, mu) not in grid or not names:
            if (lam, mu) in grid:
                out.stale.append(f"results/figures/{PAPER}/figure{number}.png")
            continue
        experiment = _experiment(lam, mu)
        panels = []
        for row in ("time_s", "sweeps"):
            for name in names:
                spec, _ = kept[name]
                title = f"{name} ({'time' if row == 'time_s' else 'iterations'})"
                panels.append(Panel(title, experiment,
                                    {"problem": _problem(cfg, spec, lam, mu).tag},
                                    x=row, logx=(row == "time_s" and name in logx) or None))
        figure = CurveFigure(
            f"figure{number}", tuple(panels), ncols=len(names), x="time_s",
            y="rel_objective", curve_keys=("solver", *_option_keys(cfg)),
            suptitle=f"λ = {lam:g}, μ = {mu:g} (smooth hinge, one-vs-rest)",
            outer_labels=True, legend_ncols=4,
        )
        agg = aggregate_path(PAPER, experiment)
        out.outputs.append(Output(
            PAPER, f"figure{number}", "figure",
            ("curves", f"--spec {_q(figure.to_json())}",
             f"--aggregate {_q(f'{experiment}={agg}')}"),
            (agg,), "dgpd/figures.rst",
        ))
    aggregates = [aggregate_path(PAPER, _experiment(lam, mu)) for lam, mu in grid
                  if _experiment(lam, mu) in out.experiments]
    speed = cfg["speedup"]
    names = list(kept)
    heads = [f"{kept[name][0].name}+{kept[name][0].recipe.tag()}={name}" for name in names]
    command = ["speedup", "--aggregate " + " ".join(map(_q, aggregates)),
               f"--base {speed['base']}", "--names " + " ".join(map(_q, heads)),
               "--targets " + " ".join(repr(float(t)) for t in speed["targets"]),
               f"--claim {_q('up to 30x speedup over the baselines (abstract)')}"]
    out.outputs.append(Output(PAPER, "speedup", "table", tuple(command), tuple(aggregates),
                              "dgpd/speedup.rst"))
    lam, mu = float(cfg["table2"]["lam"]), float(cfg["table2"]["mu"])
    runs = [r for r in out.runs_of(_experiment(lam, mu)) if r.solver == speed["base"]]
    if (lam, mu) in grid and runs:  # every data set's statistics; nonzeros where it ran
        files = {name: f"{processed}/{kept[name][0].key}.npz" for name in names}
        data = [f"{name}={path}" for name, path in files.items()]
        papers = [f"{name}={entry['paper']}" for name, (_, entry) in kept.items()
                  if entry.get("paper")]
        refs = list(dict.fromkeys(reference_path(r.problem.tag) for r in runs))
        command = ["table2", "--runs " + " ".join(_q(r.path) for r in runs),
                   "--data " + " ".join(map(_q, data)),
                   "--references " + " ".join(map(_q, refs))]
        if papers:
            command.append("--paper-rows " + " ".join(map(_q, papers)))
        out.outputs.append(Output(PAPER, "table2", "table", tuple(command),
                                  (*(r.path for r in runs), *files.values(), *refs),
                                  "dgpd/table2.rst"))


def _problem(cfg: Mapping, spec: DataSpec, lam: float, mu: float) -> ProblemSpec:
    """The problem at (lambda, mu). With ``dgpd.loss_sum`` the loss is summed, not averaged:
    P(x) = sum_i phi_i + mu/2 ||x||^2 + lambda ||x||_1, which is n times the house's averaged
    objective with l2 = mu/n and l1 = lambda/n (so the weights are written "c/n")."""
    if cfg.get("loss_sum", False):
        return ProblemSpec.of(spec, cfg["loss"], l2=f"{mu:g}/n", l1=f"{lam:g}/n")
    return ProblemSpec.of(spec, cfg["loss"], l2=mu, l1=lam)


def _option_keys(cfg: Mapping) -> tuple[str, ...]:
    """Option columns that tell the configured solvers apart."""
    keys: list[str] = []
    for solver in cfg["solvers"]:
        keys += [k for k in solver if k != "method" and k not in keys]
    return tuple(keys)
