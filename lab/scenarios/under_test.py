"""Which code a scenario puts under test: found from the scenario itself, never left to configuration.

The modules under test are the ones whose every access to shared state is recorded (and, at line granularity,
whose every line is a scheduling point). They are:

- the scenario's own file (its actors touch shared state too: ``self.tickets[who] = ticket``);
- the lab's sessions, mutants and messages (``DEFAULT_MODULES``);
- the module of every session class the scenario declares as a variant;
- every module of the learner's that the scenario imports from its own folder (``import helper``,
  ``from helper import bump``) or its subpackages (``from shapes.box import Box``), at any depth: the loader
  imports them into a package private to the scenario (:func:`lab.scenarios.helper_modules.helper_modules`), so
  all of that package is the scenario's own code; a helper imported under its bare name (its folder on
  ``sys.path``) is found as before, from the scenario and, one level further, from what it imports from the same
  folder;
- whatever ``line_modules`` adds (a helper beside the scenario by the name the scenario imports it by). It can only
  add: a name there that cannot be imported is an error, never a quiet no-op, so no setting makes line granularity
  quietly equal to probe granularity.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import types
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

from lab.engine.record import InstrumentedModule, InstrumentError, instrument_module
from lab.errors import ScenarioError
from lab.scenarios.base import Scenario
from lab.scenarios.helper_modules import helper_modules, helper_name

DEFAULT_MODULES = ("lab.sessions.versioned", "lab.sessions.transactional", "lab.mutants", "lab.messages")


def modules_under_test(cls: type[Scenario]) -> list[str]:
    """The names of the imported modules under test for ``cls``, in a stable order (see the module docstring)."""
    known = _found.get(cls)
    if known is None:
        known = _found[cls] = _find(cls)
    return list(known)


_found: weakref.WeakKeyDictionary[type[Scenario], list[str]] = weakref.WeakKeyDictionary()


def _find(cls: type[Scenario]) -> list[str]:
    names: list[str] = []

    def add(name: str) -> None:
        if name not in names:
            names.append(name)

    for name in DEFAULT_MODULES:
        importlib.import_module(name)
        add(name)
    for variant in cls.variants.values():
        module = getattr(variant, "__module__", "")
        if module and module in sys.modules and _has_source(sys.modules[module]):
            add(module)
    home = sys.modules.get(cls.__module__)
    if home is not None and _has_source(home):
        add(cls.__module__)
        for neighbour in _neighbours(home, depth=2):
            add(neighbour)
        for helper in helper_modules(home):
            add(helper)
    for extra in cls.line_modules:
        if home is not None and isinstance(extra, str):
            extra = helper_name(home, extra)
        try:
            importlib.import_module(extra)
        except Exception as error:  # ModuleNotFoundError, or the module itself failed while importing
            raise ScenarioError(
                f"line_modules names {extra!r}, which cannot be imported ({type(error).__name__}: {error})"
            ) from None
        if not _has_source(sys.modules[extra]):
            raise ScenarioError(f"line_modules names {extra!r}, which has no Python source file to instrument")
        add(extra)
    return names


def files_under_test(cls: type[Scenario]) -> list[str]:
    """The source files of :func:`modules_under_test`, symlinks resolved."""
    return [os.path.realpath(str(sys.modules[name].__file__)) for name in modules_under_test(cls)]


def files_to_trace(cls: type[Scenario]) -> list[str]:
    """The files whose lines are scheduling points at line granularity: those under test, except the lab's message
    serializer, whose lines only build fresh values (its accesses are still recorded)."""
    return [
        os.path.realpath(str(sys.modules[name].__file__))
        for name in modules_under_test(cls)
        if name not in _RECORDED_ONLY
    ]


_RECORDED_ONLY = frozenset({"lab.messages"})


_Instrumented = tuple[list[InstrumentedModule], frozenset[CodeType]]
_instrumented_by_class: dict[type[Scenario], _Instrumented] = {}
_traced_by_class: dict[type[Scenario], tuple[list[str], frozenset[CodeType]]] = {}


def instrumented_modules(cls: type[Scenario]) -> _Instrumented:
    """The rewritten modules under test of ``cls`` and all their code objects: worked out once per scenario class
    (a module is rewritten once per process; an exploration runs thousands of schedules)."""
    found = _instrumented_by_class.get(cls)
    if found is None:
        try:
            modules = [instrument_module(name) for name in modules_under_test(cls)]
        except InstrumentError as error:
            raise ScenarioError(str(error)) from None
        codes = frozenset(code for module in modules for code in module.codes)
        found = _instrumented_by_class[cls] = (modules, codes)
    return found


def traced_code(cls: type[Scenario]) -> tuple[list[str], frozenset[CodeType]]:
    """The files whose lines are scheduling points at line granularity, and the rewritten code objects in them."""
    found = _traced_by_class.get(cls)
    if found is None:
        files = files_to_trace(cls)
        wanted = set(files)
        modules, _codes = instrumented_modules(cls)
        traced = frozenset(
            code for module in modules if os.path.realpath(module.filename) in wanted for code in module.codes
        )
        found = _traced_by_class[cls] = (files, traced)
    return found


def _has_source(module: types.ModuleType) -> bool:
    filename = getattr(module, "__file__", None)
    return bool(filename) and str(filename).endswith(".py")


def _folders(filename: str) -> set[Path]:
    return {Path(os.path.abspath(filename)).parent, Path(os.path.realpath(filename)).parent}


def _neighbours(module: types.ModuleType, depth: int) -> Iterator[str]:
    """Modules imported by ``module`` (directly or through a name it imported) whose file sits in its folder."""
    folders = _folders(str(module.__file__))
    seen = {module.__name__}
    frontier = [module]
    for _ in range(depth):
        following: list[types.ModuleType] = []
        for current in frontier:
            for value in list(vars(current).values()):
                found = value if isinstance(value, types.ModuleType) else sys.modules.get(_module_of(value))
                if found is None or found.__name__ in seen or not _has_source(found):
                    continue
                if _folders(str(found.__file__)) & folders:  # as imported, or after resolving symlinks
                    seen.add(found.__name__)
                    following.append(found)
                    yield found.__name__
        frontier = following


def _module_of(value: object) -> str:
    """The module that defines ``value`` (a class's, a function's, an object's class's), found statically: a
    learner's ``__getattr__`` or ``__getattribute__`` at module level is not run (one raising KeyError would stop
    the scenario from loading)."""
    try:
        found = inspect.getattr_static(value, "__module__")
    except AttributeError:
        return ""
    if isinstance(found, types.MemberDescriptorType | types.GetSetDescriptorType):
        try:
            found = found.__get__(value, type(value))
        except AttributeError:
            return ""
    return found if isinstance(found, str) else ""
