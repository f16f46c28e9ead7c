"""Find scenario files and load them; a broken file becomes one clear line, and the others still load.

A scenario is checked when it is loaded, not midway through a run: its docstring, its one ``Scenario`` subclass,
its actors and the names its expectations use. What can only be known once ``setup`` runs (a hold naming an unknown
actor, two latches with one name) is reported by the runner, again in one line.

A scenario folder is a package of its own (:mod:`lab.scenarios.helper_modules`): the modules beside a scenario
import without ``PYTHONPATH``, under a package private to each loaded scenario. ``discover`` leaves out a file that
another file of the folder imports and that declares no scenario: it is a helper, not a broken scenario.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import inspect
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from lab.errors import ScenarioError
from lab.scenarios.base import Scenario, is_actor
from lab.scenarios.compiled import compiled
from lab.scenarios.executed import note_executed
from lab.scenarios.helper_modules import (
    forget_scenario,
    give_helper_package,
    helper_name,
    helper_stems,
    helpers_unchanged,
)
from lab.scenarios.outcomes import RUN_STATUSES, Outcome

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
    """Every scenario file in ``folder``, sorted by name. Files starting with ``_`` are helpers, not scenarios, and
    so is a file another file of the folder imports that declares no scenario (:func:`helper_stems`)."""
    files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    texts: dict[str, bytes] = {}
    for path in files:
        with contextlib.suppress(OSError):
            texts[path.stem] = path.read_bytes()
    helpers = helper_stems(texts)
    return [p for p in files if p.stem not in helpers]


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
        code = compiled(source, path)
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
        helpers = give_helper_package(module, module_name, path.parent)
        sys.modules[module_name] = module
        note_executed(path)
        try:
            exec(code, module.__dict__)
        except ScenarioError as error:  # the scenario API's own complaint (an @actor misused, a retired attribute)
            forget_scenario(module_name, helpers)
            return BrokenScenario(name, path, str(error).splitlines()[0])
        except Exception as error:
            forget_scenario(module_name, helpers)
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
    if not helpers_unchanged(module):
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
        problem = _unknown_key(cls, row)
        if problem:
            return problem
    return ""


def _unknown_key(cls: type[Scenario], row: Outcome) -> str:
    """A row key that is surely a mistake: a method left without ``@actor``, or a misspelt actor.

    A key of a row is an actor, ``run``, or a key ``observe()`` returns; only a run can say which keys
    ``observe()`` returns, so a misspelt actor (``midle`` for ``middle``) would otherwise be compared as state
    ("got <not observed>") while the real actor goes unchecked. Two mistakes are certain before any run: the key
    names a method of the class that is not an actor, or it is close to an actor's name and ``observe()`` never
    spells it (its source holds no string of that name).
    """
    sources: list[str] = []  # observe()'s source, read only for a suspect key: reading it is most of a load's cost

    def observed(key: str) -> bool:
        if not sources:
            sources.append(_source_of(cls.observe) if cls.observe is not Scenario.observe else "")
        return _spelt_in(key, sources[0])

    for key in row.expect:
        if key == "run" or key in cls.actors:
            continue
        member = inspect.getattr_static(cls, key, None)
        if inspect.isfunction(member) and not observed(key):
            return f"outcomes names {key!r}, a method that is not an actor: decorate {key}() with @actor"
        near = difflib.get_close_matches(key, cls.actors, n=1, cutoff=0.75)
        if near and not observed(key):
            return (
                f"outcomes names {key!r}, which is neither an actor nor a key observe() returns;"
                f" did you mean {near[0]!r}?"
            )
    return ""


def _source_of(function: object) -> str:
    try:
        return inspect.getsource(function)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def _spelt_in(key: str, source: str) -> bool:
    return f'"{key}"' in source or f"'{key}'" in source or f"{key}=" in source


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
