"""Every function of a module the rewriting must reach: through classes, wrappers, decorators' closures.

A function reached only through a wrapper (a decorator's closure, ``functools.wraps``, a ``cached_property``, a
``partial``) still runs when the wrapper is called; left unrewritten, its accesses would go unrecorded.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Iterator


def functions_of(module: types.ModuleType) -> Iterator[types.FunctionType]:
    """Every function of the module reachable from its namespace (see :func:`reachable`), once each."""
    for obj in reachable(module):
        if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
            yield obj


def reachable(module: types.ModuleType) -> Iterator[object]:
    """Every object reached from the module's namespace through what defines or wraps code: functions at module
    level and in the module's classes (methods, properties, static and class methods, nested classes), and what a
    wrapper holds: a decorator's closure cells (with or without ``functools.wraps``), ``__wrapped__``, a
    ``functools.cached_property``, ``partial`` or ``partialmethod``, a bound method, an object of one of the
    module's classes. A function reached only through a wrapper still runs when the wrapper is called; left
    unrewritten, its accesses would go unrecorded. Functions of other modules met on the way are passed over by the
    caller (their file is not the module's); each object is yielded once."""
    seen: set[int] = set()
    stack: list[object] = list(vars(module).values())
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, types.FunctionType):
            stack.extend(_cell_contents(obj.__closure__ or ()))
            wrapped = obj.__dict__.get("__wrapped__")
            if wrapped is not None:
                stack.append(wrapped)
        elif isinstance(obj, staticmethod | classmethod | types.MethodType):
            stack.append(obj.__func__)
        elif isinstance(obj, property):
            stack.extend(f for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        elif isinstance(obj, functools.cached_property | functools.partial | functools.partialmethod):
            stack.append(obj.func)
        elif isinstance(obj, type):
            if obj.__module__ == module.__name__:
                stack.extend(vars(obj).values())
        elif isinstance(obj, types.ModuleType):
            continue  # another module's namespace is its own to instrument
        elif type(obj).__module__ == module.__name__ or "__wrapped__" in _own_attributes(obj):
            stack.extend(_own_attributes(obj).values())  # a callable object made by a decorator, say


def _cell_contents(cells: tuple[types.CellType, ...]) -> Iterator[object]:
    for cell in cells:
        with contextlib.suppress(ValueError):  # an empty cell
            yield cell.cell_contents


def _own_attributes(obj: object) -> dict[str, object]:
    """``obj``'s instance dict, read without running any of its code (empty when it has none)."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return {}
    return attributes if type(attributes) is dict else {}
