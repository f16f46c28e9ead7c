"""Installing the rewritten code: rewrite a module once per process, swap its functions' code objects in for a run
and back out after it.

Only the bodies change (``function.__code__``): classes, instances and imports stay the ones the program holds, so
a module may be rewritten after it was imported and its objects made. A module that cannot be rewritten whole is
refused (:class:`InstrumentError`): run half instrumented, its unrecorded accesses would be a silent green.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import os
import symtable
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from lab.engine.record._reachable import functions_of, reachable
from lab.engine.record._rewrite_base import RUNTIME_NAME
from lab.engine.record._rewriter import Rewriter
from lab.engine.record._runtime import ModuleRuntime
from lab.engine.record._syntax import module_level_assigned, rebound_names
from lab.errors import ScenarioError


class InstrumentError(ScenarioError):
    """A module under test could not be rewritten (its source is missing or does not parse)."""


@dataclass
class InstrumentedModule:
    """One module under test: its original and rewritten code objects, swapped in and out of its functions."""

    name: str
    filename: str
    swaps: list[tuple[types.FunctionType, types.CodeType, types.CodeType]]
    codes: set[types.CodeType]
    by_key: dict[tuple[str, int], list[types.CodeType]] = field(default_factory=dict)
    cached_properties: list[tuple[functools.cached_property[Any], _CachedGetter]] = field(default_factory=list)
    """The module's ``functools.cached_property`` objects whose getter is rewritten, each with its getter's
    stand-in, which records the store that ``cached_property.__get__`` makes of what it returns."""

    def rewritten(self, code: types.CodeType) -> types.CodeType | None:
        """The rewritten twin of one of this module's code objects (a nested function or a lambda's too)."""
        twin = _twin(self.by_key, code, self.filename)
        if twin is None or twin.co_freevars != code.co_freevars:
            return None
        twin = _flagged_like(twin, code)
        self.codes.add(twin)
        return twin

    def install(self) -> None:
        """Put the rewritten bodies in place."""
        for function, _original, rewritten in self.swaps:
            function.__code__ = rewritten
        for descriptor, getter in self.cached_properties:
            descriptor.func = getter
            if getter.lock is not None:
                # cached_property.__get__ (Python 3.11) runs the getter, now rewritten and so scheduled, holding one
                # real RLock per descriptor, made at import: any other actor reading the property meanwhile, of any
                # instance, would block outside the scheduler's view (HUNG). It runs without, as Python 3.12 runs
                # it: a scheduler-aware lock would add scheduling points that a run without the rewritten bodies
                # (probe granularity, a replay) does not have.
                descriptor.lock = _NO_LOCK  # type: ignore[attr-defined]

    def uninstall(self) -> None:
        """Put the original bodies back."""
        for function, original, _rewritten in self.swaps:
            function.__code__ = original
        for descriptor, getter in self.cached_properties:
            descriptor.func = getter.function
            if getter.lock is not None:
                descriptor.lock = getter.lock  # type: ignore[attr-defined]


@cache
def instrument_module(name: str) -> InstrumentedModule:
    """Rewrite the functions of the imported module ``name`` (once per process; install per run)."""
    module = sys.modules.get(name)
    filename = getattr(module, "__file__", None)
    if module is None or not filename:
        raise InstrumentError(f"module {name!r} is not imported, or has no source file")
    try:
        source = Path(filename).read_text(encoding="utf-8")
        tree = ast.parse(source, filename)
        table = symtable.symtable(source, filename, "exec")
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as error:
        raise InstrumentError(f"cannot read the source of module {name!r}: {error}") from None
    declared, stored = rebound_names(tree)
    tracked = module_level_assigned(tree) | declared
    rewritten = ast.fix_missing_locations(Rewriter(table, tracked, stored).visit(tree))
    code = compile(rewritten, filename, "exec", dont_inherit=True)
    by_key: dict[tuple[str, int], list[types.CodeType]] = {}
    for rewritten_code in _all_codes(code):
        by_key.setdefault((rewritten_code.co_qualname, rewritten_code.co_firstlineno), []).append(rewritten_code)
    module.__dict__[RUNTIME_NAME] = ModuleRuntime(filename, name)
    swaps = []
    here = os.path.realpath(filename)
    for function in functions_of(module):
        original = function.__code__
        if os.path.realpath(original.co_filename) != here:
            continue  # defined elsewhere (a dataclass's generated method, an imported helper)
        new = _twin(by_key, original, filename)
        if new is None or new.co_freevars != original.co_freevars:
            # Never run a module under test half instrumented: its unrecorded accesses would be a silent green.
            raise InstrumentError(
                f"cannot instrument {original.co_qualname} in {name} ({filename}): the source on "
                "disk no longer matches the code that was imported; re-run"
            )
        swaps.append((function, original, _flagged_like(new, original)))
    rewritten_functions = {id(function) for function, _original, _new in swaps}
    cached = [  # a getter left as it is takes no scheduling point the lab knows of: ModuleRuntime.ga records it
        (obj, _CachedGetter(obj, module.__dict__[RUNTIME_NAME]))
        for obj in reachable(module)
        if isinstance(obj, functools.cached_property) and id(obj.func) in rewritten_functions and obj.attrname
    ]
    codes = {*_all_codes(code), *(new for _function, _original, new in swaps)}
    made = InstrumentedModule(name, filename, swaps, codes, by_key, cached)
    _rewritten_modules[name] = made
    return made


_NO_LOCK = contextlib.nullcontext()
"""What a cached property under test holds while its getter runs in a recorded run: nothing (reusable, reentrant)."""


class _CachedGetter:
    """What a ``functools.cached_property`` under test calls while the rewritten bodies are installed: its getter,
    then a record of the store ``cached_property.__get__`` makes of the result right after (no scheduling point
    between), in the step that makes it. (Recorded when the read began, the store would sit in a step before the
    getter's, and a store by another actor between the two would look independent of it.)"""

    records_its_store = True  # ModuleRuntime.ga: the store is recorded here, not at the read

    def __init__(self, descriptor: functools.cached_property[Any], runtime: ModuleRuntime) -> None:
        self.function: Callable[[Any], Any] = descriptor.func
        self.lock: Any = descriptor.__dict__.get("lock")  # Python 3.11's; 3.12 takes none
        self._name = descriptor.attrname or ""
        self._runtime = runtime
        self._line = getattr(getattr(self.function, "__code__", None), "co_firstlineno", 0)

    def __call__(self, instance: Any) -> Any:
        value = self.function(instance)
        self._runtime.stored(instance, self._name, self._line)
        return value


def instrumented_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its module's rewritten body, when that module is under test and already rewritten;
    otherwise ``function`` itself. For functions made before the rewritten bodies were installed (a lambda built
    inside a test), which keep the original code."""
    if not isinstance(function, types.FunctionType):
        return function
    module = _rewritten_modules.get(function.__module__)
    if module is None or function.__code__ in module.codes:
        return function
    twin = module.rewritten(function.__code__)
    if twin is None:
        return function
    copy = types.FunctionType(
        twin, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


_rewritten_modules: dict[str, InstrumentedModule] = {}


def _twin(
    by_key: dict[tuple[str, int], list[types.CodeType]], code: types.CodeType, filename: str
) -> types.CodeType | None:
    """The rewritten code of ``code``: the one with its qualified name and first line; when several share those (two
    lambdas on one line), the one whose body starts at the same line and column (which the rewriting keeps)."""
    candidates = by_key.get((code.co_qualname, code.co_firstlineno), [])
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    start = _body_start(code)
    same = [candidate for candidate in candidates if _body_start(candidate) == start]
    if len(same) != 1:
        raise InstrumentError(
            f"cannot tell apart the functions {code.co_qualname} that start at "
            f"{filename}:{code.co_firstlineno}; put them on separate lines"
        )
    return same[0]


_FLAGS_SET_AFTER_COMPILING = inspect.CO_ITERABLE_COROUTINE
"""Code flags a decorator sets on a function's code after it was compiled (``types.coroutine`` marks a generator
function's code so that its generators may be awaited): the rewritten twin, compiled from the source, lacks them."""


def _flagged_like(twin: types.CodeType, original: types.CodeType) -> types.CodeType:
    """``twin`` with the flags that were set on ``original`` after it was compiled: without them a generator made
    awaitable by ``types.coroutine`` would no longer be ("object generator can't be used in 'await' expression")."""
    added = original.co_flags & _FLAGS_SET_AFTER_COMPILING & ~twin.co_flags
    return twin.replace(co_flags=twin.co_flags | added) if added else twin


def _body_start(code: types.CodeType) -> tuple[int, int]:
    return next(
        (
            (line, column)
            for line, _end, column, _end_column in list(code.co_positions())[1:]
            if line is not None and column is not None and column > 0
        ),
        (0, 0),
    )


def _all_codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_codes(const)
