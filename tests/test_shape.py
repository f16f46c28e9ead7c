"""The shape of the code, pinned: layers that import downwards only, one public face per package, small modules.

docs/ARCHITECTURE.md draws the picture these tests hold the code to. The import graph is read from the syntax trees
of ``lab/**/*.py``, never by importing. Between packages, every import counts: module-level ones, those inside
functions and those under ``if TYPE_CHECKING:``, because each still couples two packages (a function-level import
only delays when the coupling bites). Between modules, only the imports that run at import time count. A *package*
here is each folder of ``lab/`` with its ``__init__.py`` (``lab.engine``, ``lab.evidence.verify``, ...); each
top-level module (``lab.hooks``, ``lab.render``) is a node of its own, and ``lab`` is ``lab/__init__.py``, the
lessons' API.
"""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "lab"


@dataclass(frozen=True, slots=True)
class _Import:
    """One import of a lab module: ``source`` imports ``name`` from ``target`` (``name`` None: the module itself)."""

    source: str
    target: str
    name: str | None
    where: str
    in_function: bool
    type_only: bool

    @property
    def at_import(self) -> bool:
        """True when importing ``source`` runs this import (not inside a function, not for type checkers only)."""
        return not (self.in_function or self.type_only)

    def __str__(self) -> str:
        what = self.target if self.name is None else f"{self.target}.{self.name}"
        return f"{self.where} imports {what}"


@cache
def _modules() -> dict[str, Path]:
    """Every module under lab/, by dotted name (a package by its own name: ``lab.engine``)."""
    found: dict[str, Path] = {}
    for path in sorted(LAB.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _node(module: str) -> str:
    """The graph node a module belongs to: its package, or itself for a module directly under lab/."""
    path = _modules()[module]
    if path.parent == LAB:
        return module
    return ".".join(path.parent.relative_to(ROOT).parts)


def _imports_in(module: str, path: Path) -> list[_Import]:
    source = path.read_text(encoding="utf-8")
    return _read_imports(module, source, str(path.relative_to(ROOT)), is_package=path.name == "__init__.py")


def _read_imports(module: str, source: str, where: str, *, is_package: bool) -> list[_Import]:
    """The imports of lab modules in ``source``, the text of ``module`` (a package's ``__init__`` when asked)."""
    tree = ast.parse(source, filename=where)
    package = module if is_package else module.rpartition(".")[0]
    found: list[_Import] = []

    def add(target: str, name: str | None, node: ast.stmt, in_function: bool, type_only: bool) -> None:
        if target in _modules():
            found.append(_Import(module, target, name, f"{where}:{node.lineno}", in_function, type_only))

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, None, node, in_function, type_only)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in _modules():
                    add(submodule, None, node, in_function, type_only)
                else:
                    add(base, alias.name, node, in_function, type_only)
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            for child in node.body:
                visit(child, inside, True)
            for child in node.orelse:
                visit(child, inside, type_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, inside, type_only)

    visit(tree, False, False)
    return found


@cache
def _all_imports() -> tuple[_Import, ...]:
    return tuple(found for module, path in _modules().items() for found in _imports_in(module, path))


def _package_graph(imports: Iterable[_Import]) -> dict[str, dict[str, _Import]]:
    """Node -> the nodes it imports, each with one import that makes the edge (the first in file order)."""
    graph: dict[str, dict[str, _Import]] = {}
    for found in imports:
        source, target = _node(found.source), _node(found.target)
        if source != target:
            graph.setdefault(source, {}).setdefault(target, found)
    return graph


def _find_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle ``[a, b, ..., a]`` through each tangle of ``graph`` (each strongly connected part of two or more).

    Deterministic: nodes and successors are visited in sorted order.
    """
    order: list[str] = []
    seen: set[str] = set()

    def finish_order(node: str) -> None:
        seen.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in seen:
                finish_order(successor)
        order.append(node)

    for node in sorted(graph):
        if node not in seen:
            finish_order(node)
    reverse: dict[str, set[str]] = {}
    for node, successors in graph.items():
        for successor in successors:
            reverse.setdefault(successor, set()).add(node)
    assigned: set[str] = set()
    cycles = []
    for root in reversed(order):  # Kosaraju: each tree of the reversed graph, in this order, is one tangle
        if root in assigned:
            continue
        part, stack = set(), [root]
        while stack:
            node = stack.pop()
            if node not in assigned:
                assigned.add(node)
                part.add(node)
                stack.extend(sorted(reverse.get(node, set()) - assigned))
        if len(part) > 1:
            cycles.append(_cycle_within(graph, part))
    return sorted(cycles)


def _cycle_within(graph: Mapping[str, Iterable[str]], part: set[str]) -> list[str]:
    """The shortest way from the part's first node back to itself, staying inside the part."""
    start = min(part)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph.get(node, ())):
                if successor == start:
                    return [*paths[node], start]
                if successor in part and successor not in paths:
                    paths[successor] = [*paths[node], successor]
                    following.append(successor)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a strongly connected part always has one


def _describe_cycles(cycles: Sequence[Sequence[str]], graph: Mapping[str, Mapping[str, _Import]]) -> str:
    text = []
    for cycle in cycles:
        text.append("import cycle " + " -> ".join(cycle) + ":")
        text += [f"  {graph[a][b]}" for a, b in itertools.pairwise(cycle)]
    return "\n".join(text)


class TestCycleFinder:
    """The finder the graph tests rely on finds what it should (a test that cannot fail guards nothing)."""

    def test_finds_a_cycle_and_names_it_in_order(self) -> None:
        """A three-node loop is reported starting where the search entered it."""
        graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
        assert _find_cycles(graph) == [["a", "b", "c", "a"]]

    def test_finds_one_cycle_in_each_tangle(self) -> None:
        """Two separate loops are both reported, each by its shortest way round."""
        graph = {"a": ["b"], "b": ["a", "c"], "c": ["d"], "d": ["c", "e"], "e": ["a"]}
        assert _find_cycles(graph) == [["a", "b", "a"]]
        graph = {"a": ["b"], "b": ["a", "c"], "c": ["d"], "d": ["c"]}
        assert _find_cycles(graph) == [["a", "b", "a"], ["c", "d", "c"]]

    def test_a_layered_graph_has_none(self) -> None:
        """A diamond is not a cycle."""
        assert _find_cycles({"top": ["left", "right"], "left": ["bottom"], "right": ["bottom"]}) == []

    def test_reads_every_kind_of_import(self) -> None:
        """Relative, function-level and type-checking-only imports are all read, each marked as what it is."""
        source = textwrap.dedent("""
            from typing import TYPE_CHECKING
            from . import _trace
            from ._trace import TraceEvent
            import lab.hooks
            if TYPE_CHECKING:
                from lab.engine.core._run import RunResult
            def later():
                from lab.errors import LabError
        """)
        found = _read_imports("lab.engine.core._scheduler", source, "_scheduler.py", is_package=False)
        assert [(f.target, f.name, f.at_import, f.in_function, f.type_only) for f in found] == [
            ("lab.engine.core._trace", None, True, False, False),
            ("lab.engine.core._trace", "TraceEvent", True, False, False),
            ("lab.hooks", None, True, False, False),
            ("lab.engine.core._run", "RunResult", False, False, True),
            ("lab.errors", "LabError", False, True, False),
        ]


class TestImportGraph:
    @pytest.mark.slow
    def test_no_cycle_between_packages(self) -> None:
        """Packages (and top-level modules) import each other in one direction only, function-level imports included."""
        graph = _package_graph(_all_imports())
        cycles = _find_cycles(graph)
        assert cycles == [], _describe_cycles(cycles, graph)

    def test_no_cycle_between_modules_at_import_time(self) -> None:
        """What runs at import time forms no loop between modules, so no first import can meet a half-made module.

        Only imports outside functions and outside ``if TYPE_CHECKING:`` run then. Importing ``a.b.c`` also runs the
        ``__init__`` of each package on the way (``a.b``) that the importer is not itself inside, so those count too:
        they are where a package's re-exports could close a loop.
        """
        graph: dict[str, dict[str, _Import]] = {}
        for found in _all_imports():
            if not found.at_import:
                continue
            parts = found.target.split(".")
            for depth in range(1, len(parts) + 1):
                target = ".".join(parts[:depth])
                if target in _modules() and not found.source.startswith(target + ".") and target != found.source:
                    graph.setdefault(found.source, {}).setdefault(target, found)
        cycles = _find_cycles(graph)
        assert cycles == [], _describe_cycles(cycles, graph)

    def test_modules_do_not_import_through_their_own_package_face(self) -> None:
        """Inside a package, modules import each other directly: their ``__init__`` re-exports them, so a name taken
        from it could be one it has not bound yet. (``lab`` itself is the lessons' API, a layer of its own.)"""
        wrong = [
            str(found)
            for found in _all_imports()
            if found.name is not None
            and found.target != "lab"
            and found.source.startswith(found.target + ".")
            and _modules()[found.target].name == "__init__.py"
        ]
        assert wrong == [], "\n".join(wrong)

    def test_sessions_and_transports_import_no_lab_machinery(self) -> None:
        """The code under study knows nothing of the engine, the lessons or the evidence: lab.hooks is its leaf."""
        forbidden = ("lab.engine", "lab.scenarios", "lab.evidence")
        wrong = [
            str(found)
            for found in _all_imports()
            if found.source.startswith(("lab.sessions", "lab.transport"))
            and (found.target == "lab" or found.target.startswith(forbidden))
        ]
        assert wrong == [], "\n".join(wrong)

    def test_the_engine_knows_nothing_of_chat_or_lessons(self) -> None:
        """The engine could test any lock-guarded object: it imports only itself, lab.hooks and lab.errors."""
        allowed = ("lab.engine", "lab.hooks", "lab.errors")
        wrong = [
            str(found)
            for found in _all_imports()
            if found.source.startswith("lab.engine")
            and not (found.target in allowed or found.target.startswith("lab.engine."))
        ]
        assert wrong == [], "\n".join(wrong)


def _packages() -> list[str]:
    return sorted(module for module, path in _modules().items() if path.name == "__init__.py" and module != "lab")


def _public_names(package: str) -> list[str] | None:
    """The package's ``__all__`` as written in its ``__init__.py`` (None when it has none)."""
    tree = ast.parse(_modules()[package].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            return list(value)
    return None


def _bound_names(package: str) -> set[str]:
    tree = ast.parse(_modules()[package].read_text(encoding="utf-8"))
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            if node.name == "__getattr__":  # names it serves on first use: ``if name == "PostgresStore":``
                bound.update(_lazily_served(node))
        elif isinstance(node, ast.Assign):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)
    return bound


def _lazily_served(getter: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a module's ``__getattr__`` compares its argument with: what it binds lazily."""
    served: set[str] = set()
    for node in ast.walk(getter):
        if isinstance(node, ast.Compare):
            for value in (node.left, *node.comparators):
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    served.add(value.value)
    return served


class TestPublicFaces:
    @pytest.mark.parametrize("package", _packages())
    def test_each_package_says_its_job_and_names_its_api(self, package: str) -> None:
        """Every package's ``__init__`` has a docstring (its one job) and an ``__all__`` of names it binds."""
        tree = ast.parse(_modules()[package].read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{package} has no docstring saying its job"
        names = _public_names(package)
        assert names is not None, f"{package} names no public API (__all__)"
        unbound = sorted(set(names) - _bound_names(package))
        assert unbound == [], f"{package}.__all__ names what it does not define or import: {unbound}"

    def test_what_crosses_a_package_boundary_is_public(self) -> None:
        """Code outside a package uses only the names (or modules) its ``__init__`` lists in ``__all__``."""
        missing: dict[tuple[str, str], list[str]] = {}
        for found in _all_imports():
            package = _node(found.target)
            if package not in _packages() or _node(found.source) == package:
                continue
            name = found.name if found.name is not None else found.target.rpartition(".")[2]
            if name not in (_public_names(package) or []):
                missing.setdefault((package, name), []).append(found.where)
        wrong = [
            f"{package}.__all__ lacks {name!r}, which {len(sites)} import(s) use: {', '.join(sites[:3])}"
            for (package, name), sites in sorted(missing.items())
        ]
        assert wrong == [], "\n".join(wrong)

    @pytest.mark.slow
    @pytest.mark.timeout(60)
    def test_every_face_imports_and_binds_what_it_lists(self) -> None:
        """In a fresh interpreter, every package imports and each name of its ``__all__`` is there (the graph tests
        above read the code; this runs it once)."""
        program = "import importlib, sys\n" + "".join(
            f"module = importlib.import_module({package!r})\n"
            f"missing = [n for n in module.__all__ if not hasattr(module, n)]\n"
            f"assert not missing, f'{package} lacks {{missing}}'\n"
            for package in _packages()
        )
        done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=50)
        assert done.returncode == 0, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode
