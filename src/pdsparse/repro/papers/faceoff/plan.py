"""Csiba & Richtárik, "Coordinate Descent Face-Off: Primal or Dual?" as a workflow plan.

Paper items (the long JMLR version, Section 7): Figure 1
(worst case of Theorem 3 and two real data sets), Figure 2 (worst case for dual RCD on
binary data, Theorem 9, d = 100), Figure 3 (R(alpha, d, n), appendix, theory only) and
Table 1 (data statistics). Settings come from the ``faceoff`` section of the config; the
printed values are in :mod:`pdsparse.repro.papers.faceoff.values`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from pdsparse.data.prepare import Recipe
from pdsparse.errors import ConfigError
from pdsparse.repro.plan import (
    DataSpec,
    Generator,
    Output,
    Plan,
    ProblemSpec,
    RunGroup,
    StatsSpec,
    aggregate_path,
    solver_options,
)

__all__ = ["PAPER", "plan"]

from pdsparse.repro.papers.faceoff import PAPER


def plan(config: Mapping, registry: Mapping[str, Any], available: Callable[[str], bool]) -> Plan:
    """Decide the Face-Off data sets, runs and paper items from a validated config.

    ``available(name)`` says whether the real data set ``name`` can be obtained (already
    fetched, in the mirror, or downloads allowed); with ``data.require_all`` every item is
    kept. Items whose data is unavailable are dropped and listed in ``Plan.skipped``; their
    old outputs in ``Plan.stale``.

    Raises
    ------
    ConfigError
        A panel or Table 1 names a data set that is neither in the registry nor in
        ``faceoff.synthetic``, or a synthetic name shadows a registry name.
    """
    fo = config["faceoff"]
    require_all = bool(config.get("data", {}).get("require_all", False))
    out = Plan(PAPER, reference=dict(fo["reference"]))
    recipe = Recipe(fo["normalization"])
    synthetic = fo.get("synthetic", {}) or {}
    for name in synthetic:
        if name in registry:
            raise ConfigError(
                f"faceoff.synthetic.{name}: the name is also a real data set in the registry; "
                "rename the synthetic data set"
            )
        if "__" in name:
            raise ConfigError(f"faceoff.synthetic.{name}: names may not contain '__'")

    def data(name: str, where: str) -> DataSpec:
        if name in synthetic:
            entry = synthetic[name]
            gen = Generator.of(entry["kind"], entry.get("params", {}), entry.get("seed", 0))
            return DataSpec(name, recipe, gen)
        if name in registry:
            return DataSpec(name, recipe)
        raise ConfigError(
            f"{where}: data set {name!r} is neither in the registry ({len(registry)} sets: "
            f"{', '.join(sorted(registry))}) nor in faceoff.synthetic "
            f"({', '.join(sorted(synthetic)) or 'none'})"
        )

    def keep(spec: DataSpec, item: str) -> bool:
        if not spec.real or require_all or available(spec.name):
            return True
        out.skipped.append((item, spec.name))
        return False

    def add_runs(experiment: str, spec: DataSpec, max_epochs: int) -> None:
        problem = ProblemSpec.of(spec, fo["loss"], l2=fo["l2"])
        for i, solver in enumerate(fo["solvers"]):
            options, tag = solver_options(solver, f"faceoff.solvers[{i}]")
            out.add_run(RunGroup(
                PAPER, experiment, problem, solver["method"], options, tag,
                tuple(int(s) for s in fo["seeds"]), max_epochs, float(fo["max_seconds"]),
                float(fo["tol"]), float(fo["eval_every"]),
            ))

    def add_stats(spec: DataSpec) -> None:
        out.add_stats(StatsSpec(spec, fo["l2"], float(fo["beta"])))

    # Figure 1: one experiment per panel, "figure1<letter>".
    panels: dict[str, tuple[str, str]] = {}
    for letter in sorted(fo["figure1"]["panels"]):
        panel = fo["figure1"]["panels"][letter]
        spec = data(panel["dataset"], f"faceoff.figure1.panels.{letter}")
        experiment = f"figure1{letter}"
        if not keep(spec, f"Figure 1{letter}"):
            out.stale.append(aggregate_path(PAPER, experiment))
            continue
        syn_epochs = (synthetic.get(spec.name) or {}).get("max_epochs")
        add_runs(experiment, spec, int(panel.get("max_epochs") or syn_epochs or fo["max_epochs"]))
        add_stats(spec)
        panels[letter] = (experiment, panel.get("title") or f"({letter}) {spec.name}")

    # Figure 2: the Theorem 9 grid.
    from pdsparse.repro.papers.faceoff.figures import figure2_cells

    fig2 = fo["figure2"]
    cells = figure2_cells(fig2)
    for cell in cells:
        if cell.name in registry:
            raise ConfigError(
                f"faceoff.figure2: generated name {cell.name!r} clashes with the registry"
            )
        gen = Generator.of(
            "worst_case_binary_dual", {"d": cell.d, "n": cell.n, "alpha": cell.alpha},
            fig2.get("seed", 0),
        )
        spec = DataSpec(cell.name, recipe, gen)
        add_runs("figure2", spec, int(fig2.get("max_epochs") or fo["max_epochs"]))
        add_stats(spec)

    # Table 1: statistics only, under the configured setting and its variants.
    table1: list[StatsSpec] = []
    variants: list[StatsSpec] = []
    for name in fo["table1"]["datasets"]:
        spec = data(name, "faceoff.table1.datasets")
        if not keep(spec, "Table 1 row"):
            continue
        table1.append(out.add_stats(StatsSpec(spec, fo["l2"], float(fo["beta"]))))
        for v in fo["table1"].get("variants", []) or []:
            norm = None if v["normalization"] == recipe.normalization else v["normalization"]
            variants.append(out.add_stats(StatsSpec(spec, fo["l2"], float(v["beta"]), norm)))

    _outputs(out, fo, panels, cells, table1, variants)
    return out


def _q(value: Any) -> str:
    return shlex.quote(str(value))


def _outputs(out: Plan, fo: Mapping, panels, cells, table1, variants) -> None:
    from pdsparse.repro.papers.faceoff.figures import figure1_spec, figure2_spec

    figures = "results/figures/faceoff"
    if panels:
        # the panels whose data the run has, larger; a dropped one is named in a legend line
        # (two empty panels took half the figure in the offline default run)
        titles = {k: p.get("title") or f"({k}) {p['dataset']}"
                  for k, p in fo["figure1"]["panels"].items()}
        dropped = [titles[k] for k in sorted(titles) if k not in panels]
        note = ("not drawn, data not available in this run (data.download or a mirror): "
                + "; ".join(dropped)) if dropped else ""
        spec = figure1_spec(titles, {k: f"figure1{k}" for k in titles}, only=sorted(panels),
                            note=note)
        aggregates = [f"--aggregate {_q(f'{e}={aggregate_path(PAPER, e)}')}"
                      for e, _ in panels.values()]
        out.outputs.append(Output(
            PAPER, "figure1", "figure", ("curves", f"--spec {_q(spec.to_json())}", *aggregates),
            tuple(aggregate_path(PAPER, e) for e, _ in panels.values()), "faceoff/figure1.rst",
        ))
    else:
        out.stale += [f"{figures}/figure1.png", f"{figures}/figure1.pdf"]
    if cells:
        fig2 = fo["figure2"]
        agg = aggregate_path(PAPER, "figure2")
        spec = figure2_spec(
            {(c.n, c.nnz_fraction): c.name for c in cells}, [int(n) for n in fig2["n"]],
            [float(f) for f in fig2["nnz_fraction"]], sharey=fig2.get("sharey", True),
            suptitle=f"Worst-case binary data, d = {int(fig2['d'])}",
        )
        command = ("curves", f"--spec {_q(spec.to_json())}", f"--aggregate {_q(f'figure2={agg}')}")
        out.outputs.append(Output(PAPER, "figure2", "figure", command, (agg,),
                                  "faceoff/figure2.rst"))
    fig3 = fo["figure3"]
    command = ["figure3", f"--n {int(fig3['n'])}", f"--d-points {int(fig3['d_points'])}",
               f"--alpha-points {int(fig3['alpha_points'])}"]
    if fig3.get("d_max"):
        command.append(f"--d-max {int(fig3['d_max'])}")
    out.outputs.append(Output(PAPER, "figure3", "figure", tuple(command), (),
                              "faceoff/figure3.rst"))
    if table1:
        stats = [f"results/stats/{s.tag}.parquet" for s in table1]
        extra = [f"results/stats/{s.tag}.parquet" for s in variants]
        caption = (
            f"Our values: {fo['normalization']} normalization, l2 = {fo['l2']}, "
            f"beta = {fo['beta']} (T_P/T_D with importance sampling, eq. (15)). "
            "The paper's X is d x n; our A = X^T. The paper does not say under which scaling "
            "and beta it computed Table 1: for leu its printed C_P and C_D match the unscaled "
            "data and its T_P/T_D the scaled data with beta = 1 (see Variants)."
        )
        command = ["table1", "--stats " + " ".join(map(_q, stats))]
        if extra:
            command.append("--variant " + " ".join(map(_q, extra)))
        command.append(f"--caption {_q(caption)}")
        out.outputs.append(Output(PAPER, "table1", "table", tuple(command),
                                  tuple(stats + extra), "faceoff/table1.rst"))
    else:
        out.stale += ["results/tables/faceoff/table1.csv", "results/tables/faceoff/table1.md"]
