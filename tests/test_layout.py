"""The package's layout: no import circles, every module importable on its own, a paper is a
folder and a solver family a module beside its kernel (ARCHITECTURE.md, "The rooms")."""

from __future__ import annotations

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pdsparse
from pdsparse.repro.papers import PAPERS

PACKAGE = Path(pdsparse.__file__).parent
MODULES = sorted(m.name for m in pkgutil.walk_packages(pdsparse.__path__, "pdsparse."))


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every pdsparse module ``path`` imports, at module level or inside a function (a lazy
    import is still an edge: it only hides a circle until the function runs)."""
    out: set[str] = set()
    here = _module_of(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # `from pkg import mod` imports the submodule pkg.mod; `from mod import name` mod
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        else:
            continue
        out |= {n for n in names if n in known and n != here}
    return out


def import_graph() -> dict[str, set[str]]:
    known = set(MODULES) | {"pdsparse"}
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        graph[_module_of(path)] = _imports(path, known)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_has_no_circle():
    graph = import_graph()
    assert len(graph) >= 50
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_lazy_and_relative_imports_are_edges(tmp_path, monkeypatch):
    pkg = tmp_path / "pdsparse"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "sub" / "__init__.py").write_text("from pdsparse.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "sub" / "c.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    known = {"pdsparse.sub", "pdsparse.sub.b", "pdsparse.sub.c"}
    assert _imports(pkg / "sub" / "__init__.py", known) == {"pdsparse.sub.b"}
    assert _imports(pkg / "sub" / "b.py", known) == {"pdsparse.sub.c"}


def test_each_module_imports_on_its_own():
    """In a fresh interpreter each, so that an import that works only after another module
    was loaded (a hidden circle or a missing import) fails here; run side by side."""
    from concurrent.futures import ThreadPoolExecutor

    def alone(module: str) -> str:
        run = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                             text=True)
        return "" if run.returncode == 0 else f"{module}: {run.stderr.strip()[-500:]}"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(alone, MODULES) if f]
    assert len(MODULES) >= 50 and failures == []


REPRO = "pdsparse.repro"


def _package_of(module: str) -> str:
    """A module's node in the package graph: each top-level module or subpackage of the
    library (``pdsparse.solvers``, ``pdsparse.problem``), and each of the reproduction's
    (``pdsparse.repro.papers``, ``pdsparse.repro.run``); deeper modules fold into theirs."""
    parts = module.split(".")
    depth = 3 if module.startswith(REPRO + ".") else 2
    return ".".join(parts[:depth])


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        node = _package_of(module)
        graph.setdefault(node, set()).update(
            d for d in map(_package_of, deps) if d != node and d != "pdsparse")
    return graph


def test_no_circle_between_packages():
    """Nodes are packages and top-level modules, so that a circle through two modules of
    different packages (the solvers asking ``predict``, which imports the solvers) shows even
    when the modules' own graph has none."""
    graph = package_graph()
    assert {"pdsparse.solvers", "pdsparse.data", "pdsparse.repro.papers",
            "pdsparse.repro.scorecard", "pdsparse.repro.scoring"} <= set(graph)
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_package_cycle_finder_folds_modules_into_packages(monkeypatch):
    fake = {"pdsparse.solvers": {"pdsparse.predict"}, "pdsparse.predict": {"pdsparse.solvers.x"},
            "pdsparse.solvers.x": set()}
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: fake)
    assert _cycle(package_graph()) is not None


def test_the_library_imports_nothing_of_the_reproduction():
    """The library (every module outside ``pdsparse.repro`` but the command line, the shell
    over both) never imports the reproduction, lazily or not; and importing its public
    modules loads none of it."""
    offenders = {m: sorted(d for d in deps if d.startswith(REPRO))
                 for m, deps in import_graph().items()
                 if not m.startswith(REPRO) and m != "pdsparse.cli"}
    assert {m: d for m, d in offenders.items() if d} == {}
    library = ("pdsparse.problem", "pdsparse.solvers", "pdsparse.solvers.predict",
               "pdsparse.advise", "pdsparse.race", "pdsparse.reference", "pdsparse.stats",
               "pdsparse.data.prepare", "pdsparse.data.fetch")
    code = (f"import sys; import {', '.join(library)}; "
            f"print(sorted(m for m in sys.modules if m.startswith('{REPRO}')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout.strip() == "[]"


def test_a_paper_is_a_folder():
    for paper in PAPERS:
        folder = PACKAGE / "repro" / "papers" / paper
        for name in ("__init__.py", "plan.py", "values.py", "tables.py", "scorecard.py"):
            assert (folder / name).is_file(), f"{paper}/{name}"
        assert sorted(p.name for p in (folder / "captions").glob("*.rst")), paper
    # nothing of one paper outside its folder: no module of the package is named for one
    loose = [p.name for p in (*PACKAGE.glob("*.py"), *(PACKAGE / "repro").glob("*.py"))
             if any(x in p.stem for x in PAPERS)]
    assert loose == []


def test_a_solver_family_is_a_module_beside_its_kernel():
    solvers = PACKAGE / "solvers"
    for family in ("rcd", "erm", "dgpd", "pdbfw", "ball"):
        assert (solvers / f"{family}.py").is_file() and (solvers / f"_{family}.pyx").is_file()
    assert not list(PACKAGE.glob("solver*.py")), "solver modules belong in pdsparse/solvers/"
    # the only compiled modules outside solvers/: what pdsparse.objective evaluates with (the
    # losses; the products with A), which sits below the solvers and may not import them
    assert sorted(p.stem for p in PACKAGE.glob("_*.pyx")) == ["_losses", "_products"]


def test_a_paper_scores_through_the_public_protocol():
    """A paper's scorecard imports only what ``pdsparse.repro.scoring`` exports, and keeps
    its own tolerances (``TOLERANCES``) in its folder."""
    import importlib

    from pdsparse.repro import scoring

    for paper in PAPERS:
        path = PACKAGE / "repro" / "papers" / paper / "scorecard.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "pdsparse.repro.scoring":
                private = [a.name for a in node.names if a.name not in scoring.__all__]
                assert private == [], f"{paper}: {private}"
        module = importlib.import_module(f"pdsparse.repro.papers.{paper}.scorecard")
        assert callable(module.rows) and module.TOLERANCES, paper
        assert not set(module.TOLERANCES) & set(scoring.TOLERANCES), paper
