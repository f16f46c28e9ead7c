"""Find scenario files and load them; a broken file becomes one clear line, and the others still load.

A scenario is checked when it is loaded, not midway through a run: its docstring, its one ``Scenario`` subclass,
its actors and the names its expectations use. What can only be known once ``setup`` runs (a hold naming an unknown
actor, two latches with one name) is reported by the runner, again in one line.

A scenario folder is a package of its own: a scenario's ``import helpers`` (or ``from helpers import Counter``)
finds ``helpers.py`` (or the package ``helpers/``) beside it, with no ``PYTHONPATH``, as a script finds the modules
beside it. The helpers are imported as submodules of a private package made for that one loaded scenario,
``_lab_helpers_of_<scenario module>`` (:func:`helper_modules`), never under their bare names, because:

- a helper called ``json.py`` or ``queue.py`` shadows the standard module for the scenario (as beside a script),
  but never for the lab or for another scenario: ``sys.modules["json"]`` stays the standard one;
- two folders' ``helpers.py`` are two modules, and so are one folder's helpers imported by two scenarios: each
  scenario's classes and helpers are the modules the runner instruments, and re-executing one scenario's helpers
  (its file or a helper was edited) never swaps the module another scenario's classes already use;
- the folder is never put on ``sys.path``, so nothing leaks into later imports, and an audit that re-executes the
  archived ``sources/scenarios/`` imports the archived helpers beside the archived scenario, not the live folder.

The mapping lives in the ``__builtins__`` of the scenario and helper modules (their ``__import__`` only), so it
applies to their ``import`` statements, at the top or inside a function, and to nothing else in the process. A
helper that the ordinary import already finds as the very same file (the folder is on ``sys.path``) keeps its usual
name, as before. ``discover`` leaves out a file that another file of the folder imports and that declares no
scenario: it is a helper, not a broken scenario.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from lab.errors import ScenarioError
from lab.scenarios.base import Scenario, is_actor
from lab.scenarios.outcomes import RUN_STATUSES, Outcome

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SOURCE = "__lab_scenario_source__"
"""Where a loaded scenario module keeps the text it was executed from (to recognise the same file loaded again)."""
_HELPERS = "__lab_helpers__"
"""Where a loaded scenario module keeps the name of its private package of helper modules."""
_DIGEST = "__lab_helper_sha256__"
"""Where a helper module keeps the SHA-256 of the bytes it was executed from (an edited helper is executed afresh)."""
_HELPER_PREFIX = "_lab_helpers_of_"


@dataclass(frozen=True)
class LoadedScenario:
    """A scenario file that loaded: its name (the file's stem), lesson and class."""

    name: str
    path: Path
    cls: type[Scenario]
    description: str

    @property
    def lesson(self) -> str:
        """The docstring's first line: what the scenario teaches, in one sentence."""
        return self.description.strip().splitlines()[0].strip()


@dataclass(frozen=True)
class BrokenScenario:
    """A scenario file that did not load, and the one line that says why."""

    name: str
    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path.name}: {self.problem}"


def discover(folder: Path) -> list[Path]:
    """Every scenario file in ``folder``, sorted by name. Files starting with ``_`` are helpers, not scenarios, and
    so is a file another file of the folder imports that declares no scenario (:func:`helper_stems`)."""
    files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    texts: dict[str, bytes] = {}
    for path in files:
        with contextlib.suppress(OSError):
            texts[path.stem] = path.read_bytes()
    helpers = helper_stems(texts)
    return [p for p in files if p.stem not in helpers]


def helper_stems(files: Mapping[str, bytes]) -> set[str]:
    """The names among ``files`` (a folder's ``*.py`` by stem, their bytes) of the helpers: the files another one
    imports (``import helpers``, ``from helpers import x``) that declare no scenario (no class deriving from a
    ``...Scenario`` name, no ``pinned_scenario`` call).

    Read from the syntax, never by executing: listing a folder must not run its code, and an audit derives the
    same selection from the archived files alone. A file that does not parse stays a scenario, so its syntax error
    is reported in its own line.
    """
    trees: dict[str, ast.Module] = {}
    for stem, data in files.items():
        try:
            trees[stem] = ast.parse(data, f"{stem}.py")
        except (SyntaxError, ValueError):
            continue
    imported: set[str] = set()
    for stem, tree in trees.items():
        imported |= _imported_names(tree) - {stem}
    return {stem for stem, tree in trees.items() if stem in imported and not _declares_scenario(tree)}


def _imported_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def _declares_scenario(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name.endswith("Scenario"):
                    return True
        elif isinstance(node, ast.Call):
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "pinned_scenario":
                return True
    return False


def load_all(folder: Path) -> list[LoadedScenario | BrokenScenario]:
    """Load every scenario file in ``folder``, in name order."""
    return [load(path) for path in discover(folder)]


def load(path: Path) -> LoadedScenario | BrokenScenario:
    """Load one scenario file; never raises for a problem in the file itself."""
    name = path.stem
    if not _NAME.match(name):
        return BrokenScenario(name, path, "a scenario file name is lower_snake_case (it becomes a folder name)")
    try:
        source = path.read_text(encoding="utf-8")
        code = compile(source, str(path), "exec")
    except SyntaxError as error:
        return BrokenScenario(name, path, f"syntax error at line {error.lineno}: {error.msg}")
    except (OSError, UnicodeDecodeError) as error:
        return BrokenScenario(name, path, f"cannot be read: {error}")
    module_name = _module_name(name, path)
    module = _already_loaded(module_name, path, source)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None:
            return BrokenScenario(name, path, "cannot be imported")
        module = importlib.util.module_from_spec(spec)
        helpers = _helper_package(module_name, path.parent)
        module.__dict__["__builtins__"] = _builtins_for(helpers, path.parent)
        module.__dict__[_HELPERS] = helpers
        sys.modules[module_name] = module
        try:
            exec(code, module.__dict__)
        except ScenarioError as error:  # the scenario API's own complaint (an @actor misused, a retired attribute)
            _forget(module_name, helpers)
            return BrokenScenario(name, path, str(error).splitlines()[0])
        except Exception as error:
            _forget(module_name, helpers)
            return BrokenScenario(name, path, f"raised {type(error).__name__} on import: {error}".splitlines()[0])
        module.__dict__[_SOURCE] = source
    problem, cls = _find_class(module.__dict__)
    if cls is None:
        return BrokenScenario(name, path, problem)
    description = inspect.cleandoc(module.__doc__ or "")
    if not description:
        return BrokenScenario(name, path, "has no module docstring: start the file with what the scenario teaches")
    problem = _check_class(cls) or _stray_actor(module.__dict__)
    if problem:
        return BrokenScenario(name, path, problem)
    return LoadedScenario(name, path, cls, description)


def _module_name(name: str, path: Path) -> str:
    """``lab_scenario_NAME``, or with a number when another folder's file of that name is loaded already: two
    modules must never share a name, or the classes of one would be instrumented through the other."""
    here = os.path.realpath(path)
    candidate, number = f"lab_scenario_{name}", 1
    while True:
        module = sys.modules.get(candidate)
        if module is None or os.path.realpath(str(getattr(module, "__file__", "") or "")) == here:
            return candidate
        number += 1
        candidate = f"lab_scenario_{name}__{number}"


def _already_loaded(module_name: str, path: Path, source: str) -> ModuleType | None:
    """The module this very file (same path, same text) was already loaded as, if it still is the registered one.

    Loading it again would replace it in ``sys.modules`` while scenarios already hold classes of the old module:
    the runner instruments the registered module, so the old classes' code would run uninstrumented. That happens
    whenever a pinned scenario loads its race file and the run loads the race itself too. An edited file (other
    text) or another folder's file of the same name (other path) is executed afresh, and so is a pinned scenario:
    its text names a race file that may have changed since.
    """
    module = sys.modules.get(module_name)
    if module is None or module.__dict__.get(_SOURCE) != source:
        return None
    if os.path.realpath(str(getattr(module, "__file__", ""))) != os.path.realpath(path):
        return None
    if any(not _helper_unchanged(sys.modules[name]) for name in helper_modules(module)):
        return None
    _problem, cls = _find_class(module.__dict__)
    if cls is None or cls.pin is not None:
        return None
    return module


def _find_class(namespace: dict[str, object]) -> tuple[str, type[Scenario] | None]:
    found = [
        value
        for value in namespace.values()
        if isinstance(value, type)
        and issubclass(value, Scenario)
        and value is not Scenario
        and value.__module__ == namespace.get("__name__")
    ]
    if not found:
        return "defines no Scenario subclass", None
    if len(found) > 1:
        return f"defines {len(found)} Scenario subclasses ({', '.join(c.__name__ for c in found)}); keep one", None
    return "", found[0]


def _check_class(cls: type[Scenario]) -> str:
    if not cls.actors:
        return f"{cls.__name__} has no actors: decorate each method that runs as a thread with @actor"
    if not cls.source:
        return f"{cls.__name__} has no source: say which article section it comes from"
    problem = _check_table(cls)
    if problem:
        return problem
    home = sys.modules.get(cls.__module__)
    for module in cls.line_modules:
        problem = _unimportable(helper_name(home, module) if home is not None and isinstance(module, str) else module)
        if problem:
            return f"line_modules names {module!r}, {problem}"
    return ""


def _check_table(cls: type[Scenario]) -> str:
    """The outcome table is a sequence of rows, and the one row of ``only(...)`` stands alone."""
    table = cls.outcomes
    if isinstance(table, Outcome) or not all(isinstance(row, Outcome) for row in table):
        return "outcomes is a table: only(...) for one outcome, or a tuple of acceptable/interesting/forbidden rows"
    if not table:
        return f"{cls.__name__}.outcomes is empty: write only(...) for the one outcome, or the race's rows"
    if len(table) > 1 and any(row.exact for row in table):
        return "only(...) is the whole table of a latch-ordered scenario: do not add rows to it"
    for row in table:
        for name in row.blocked_on:
            if name not in cls.actors:
                return f"blocked_on names {name!r}, which is not an actor ({', '.join(cls.actors)})"
        if row.exact and row.expect.get("run") not in RUN_STATUSES:
            return f"only(run=...) is {' or '.join(RUN_STATUSES)}"
    return ""


def _stray_actor(namespace: dict[str, object]) -> str:
    """An ``@actor`` on a function that is not a scenario's method would never run: say so."""
    for name, value in namespace.items():
        if is_actor(value) and getattr(value, "__module__", None) == namespace.get("__name__"):
            return f"@actor decorates {name}(), which is not a method of the Scenario class; indent it into the class"
    return ""


def _unimportable(module: object) -> str:
    """Why ``module`` cannot be put under test, or "" (a misspelt name must not quietly test nothing)."""
    if not isinstance(module, str) or not module:
        return "which is not a module name"
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as error:
        return f"which cannot be imported ({type(error).__name__}: {error})"
    if spec is None:
        return "which no module on the path is called"
    if not (spec.origin or "").endswith(".py"):
        return "which has no Python source file to instrument"
    return ""


# -- helper modules beside a scenario (see the module docstring) ---------------------------------------------------


def helper_modules(module: ModuleType) -> list[str]:
    """The names of the helper modules the scenario ``module`` imported from its folder, sorted; each is a
    submodule of the scenario's private package, so these are this scenario's helpers and no other's."""
    package = module.__dict__.get(_HELPERS)
    if not isinstance(package, str):
        return []
    prefix = package + "."
    return sorted(
        name
        for name, found in list(sys.modules.items())
        if name.startswith(prefix) and str(getattr(found, "__file__", "") or "").endswith(".py")
    )


def helper_name(module: ModuleType, name: str) -> str:
    """The name the scenario ``module``'s own ``import name`` gives the module: its private helper's name when
    ``name`` is a helper beside it (so ``line_modules = ("helpers",)`` means the helper), else ``name``."""
    package = module.__dict__.get(_HELPERS)
    folder = Path(str(getattr(module, "__file__", "") or "")).parent
    if isinstance(package, str) and _is_helper(folder, name.partition(".")[0]):
        return f"{package}.{name}"
    return name


def _helper_package(module_name: str, folder: Path) -> str:
    """A fresh, empty private package for the helpers of the scenario module ``module_name``, searching ``folder``:
    the helpers a previous load of that scenario imported are forgotten, so an edited helper is executed anew."""
    package = _HELPER_PREFIX + module_name
    _forget_package(package)
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    made = importlib.util.module_from_spec(spec)
    made.__path__ = [str(folder)]
    sys.modules[package] = made
    _HelperFinder.install(package, _builtins_for(package, folder))
    return package


def _forget(module_name: str, package: str) -> None:
    """A scenario that did not load leaves nothing in ``sys.modules``: neither itself nor its helpers."""
    sys.modules.pop(module_name, None)
    _forget_package(package)


def _forget_package(package: str) -> None:
    prefix = package + "."
    for name in [name for name in list(sys.modules) if name == package or name.startswith(prefix)]:
        del sys.modules[name]
    _BUILTINS_BY_PACKAGE.pop(package, None)


_builtins_made: dict[tuple[str, str], dict[str, Any]] = {}
_BUILTINS_BY_PACKAGE: dict[str, dict[str, Any]] = {}
"""The private helper packages :class:`_HelperFinder` serves, and the builtins their modules execute with."""


def _builtins_for(package: str, folder: Path) -> dict[str, Any]:
    """The builtins of the scenario's and its helpers' modules: the usual ones, but with an ``__import__`` that
    finds the folder's modules as submodules of ``package``."""
    key = (package, str(folder))
    made = _builtins_made.get(key)
    if made is None:
        made = dict(builtins.__dict__)
        made["__import__"] = _folder_import(package, folder, builtins.__import__)
        _builtins_made[key] = made
    return made


_Import = Callable[..., ModuleType]


def _folder_import(package: str, folder: Path, ordinary: _Import) -> _Import:
    def folder_import(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        top = name.partition(".")[0]
        if level != 0 or not _is_helper(folder, top) or _found_as_itself(folder, top):
            return ordinary(name, globals, locals, fromlist, level)
        module = importlib.import_module(f"{package}.{name}")
        return module if fromlist else sys.modules[f"{package}.{top}"]

    return folder_import


def _is_helper(folder: Path, name: str) -> bool:
    """True when ``folder`` holds the module ``name``: ``name.py``, or a package ``name/__init__.py``."""
    if not name.isidentifier():
        return False
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


def _found_as_itself(folder: Path, name: str) -> bool:
    """True when the ordinary import of ``name`` finds the very file beside the scenario (its folder is on
    ``sys.path``, as with ``PYTHONPATH``): it keeps its usual name then, as before helpers had a package."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin:
        return False
    here = folder / f"{name}.py"
    if not here.is_file():
        here = folder / name / "__init__.py"
    return os.path.realpath(spec.origin) == os.path.realpath(here)


def _helper_unchanged(module: ModuleType) -> bool:
    digest = module.__dict__.get(_DIGEST)
    try:
        return digest == hashlib.sha256(Path(str(module.__file__)).read_bytes()).hexdigest()
    except OSError:
        return False


class _HelperLoader(importlib.machinery.SourceFileLoader):
    """Executes a helper from its source (no bytecode read or written in the scenario folder), with the folder's
    builtins, and keeps the digest of what it executed."""

    def __init__(self, fullname: str, path: str, folder_builtins: dict[str, Any]) -> None:
        super().__init__(fullname, path)
        self._builtins = folder_builtins

    def exec_module(self, module: ModuleType) -> None:
        data = self.get_data(self.path)
        code = compile(data, self.path, "exec", dont_inherit=True)
        module.__dict__["__builtins__"] = self._builtins
        module.__dict__[_DIGEST] = hashlib.sha256(data).hexdigest()
        exec(code, module.__dict__)


class _HelperFinder:
    """On ``sys.meta_path``: finds the submodules of the private helper packages, as the path finder would, but
    loads them with :class:`_HelperLoader`. Every other name is left to the finders after it."""

    @classmethod
    def install(cls, package: str, folder_builtins: dict[str, Any]) -> None:
        _BUILTINS_BY_PACKAGE[package] = folder_builtins
        if cls not in sys.meta_path:
            sys.meta_path.insert(0, cls)

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, dot, _rest = fullname.partition(".")
        folder_builtins = _BUILTINS_BY_PACKAGE.get(package)
        if not dot or folder_builtins is None or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, list(path))
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader) or not spec.origin:
            return spec
        loader = _HelperLoader(fullname, spec.origin, folder_builtins)
        return importlib.util.spec_from_file_location(
            fullname, spec.origin, loader=loader, submodule_search_locations=spec.submodule_search_locations
        )
