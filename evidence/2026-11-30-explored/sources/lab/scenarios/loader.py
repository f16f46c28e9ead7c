"""Find scenario files and load them; a broken file becomes one clear line, and the others still load.

A scenario is checked when it is loaded, not midway through a run: its docstring, its one ``Scenario`` subclass,
its actors and the names its expectations use. What can only be known once ``setup`` runs (a hold naming an unknown
actor, two latches with one name) is reported by the runner, again in one line.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from lab.scenarios.base import Scenario

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SOURCE = "__lab_scenario_source__"
"""Where a loaded scenario module keeps the text it was executed from (to recognise the same file loaded again)."""


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
    """Every scenario file in ``folder``, sorted by name; files starting with ``_`` are helpers, not scenarios."""
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


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
        sys.modules[module_name] = module
        try:
            exec(code, module.__dict__)
        except Exception as error:
            del sys.modules[module_name]
            return BrokenScenario(name, path, f"raised {type(error).__name__} on import: {error}".splitlines()[0])
        module.__dict__[_SOURCE] = source
    problem, cls = _find_class(module.__dict__)
    if cls is None:
        return BrokenScenario(name, path, problem)
    description = inspect.cleandoc(module.__doc__ or "")
    if not description:
        return BrokenScenario(name, path, "has no module docstring: start the file with what the scenario teaches")
    problem = _check_class(cls)
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
    _problem, cls = _find_class(module.__dict__)
    if cls is None or cls.schedule:
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
        return f"{cls.__name__} lists no actors"
    if len(set(cls.actors)) != len(cls.actors):
        return f"{cls.__name__} lists an actor twice"
    for actor in cls.actors:
        if not callable(getattr(cls, actor, None)):
            return f"actor {actor!r} has no method {cls.__name__}.{actor}()"
    for actor in [*cls.expect, *cls.expect_blocked]:
        if actor not in cls.actors:
            return f"expectations name {actor!r}, which is not an actor ({', '.join(cls.actors)})"
    if cls.expect_run not in {"FINISHED", "DEADLOCK"}:
        return f"expect_run is {cls.expect_run!r}; use 'FINISHED' or 'DEADLOCK'"
    if not cls.source:
        return f"{cls.__name__} has no source: say which article section it comes from"
    for module in cls.line_modules:
        problem = _unimportable(module)
        if problem:
            return f"line_modules names {module!r}, {problem}"
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
