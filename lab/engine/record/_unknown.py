"""What a call into code the lab does not rewrite is charged: a write of everything it can reach.

Code the lab cannot see (a C function or method no table in :mod:`lab.engine.record._builtin_footprints` names, a
function of a module not under test, the standard library's Python code, ``exec`` and ``eval`` of a string) may
read and change anything it holds a reference to: what it is handed, and what that holds, at any depth (a helper
appending to ``holder.store.items``); what the callable itself holds (a closure's cells, as
``functools.singledispatch``'s registry; a bound method's receiver; a partial's function and arguments; a
``methodcaller``'s arguments; default arguments); and its module's globals. So it is charged, until a table says
otherwise, with a write of every mutable object reachable from those roots, walked as the object walk walks them
(without running any of the program's code), and of the module's namespace. The walk is bounded: past
:data:`_LIMIT` objects or :data:`_DEPTH` levels it charges everything (:data:`EVERYTHING`), never less. A module's
globals are walked once per step (:func:`module_entries`): the same helper called in a loop walks them once.

The caller's own modules (``stateless_modules``: the lab's) are the caller's word: they keep no state of their own
and touch what they are handed, so only that is charged (:func:`lab.engine.record._runtime_calls.opaque_call`).
"""

from __future__ import annotations

import contextlib
import functools
import operator
import sys
import types
import weakref
from collections import deque
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY, EVERYTHING, Entry
from lab.engine.record._values import IMMUTABLE_TYPE, SLOTS, instance_dict, key_text, slots_of

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


_LIMIT, _DEPTH = 5_000, 12
"""At most this many values looked at by one walk, and levels below a root: past them, it charges everything."""


_EVERYTHING_ENTRY: Entry = next(iter(EVERYTHING))


class _Reach:
    """What the walk does with a value, which its type decides."""

    SKIP = 0  # a number, a string, an enum member, code, a descriptor: nothing a call can change
    HOLDER = 1  # a tuple or frozenset: nothing of its own can change, its items are reached
    CONTAINER = 2  # a list, dict, set or deque: written whole, its items (a dict's keys and values) reached
    FUNCTION = 3  # a Python function: its closure's cells, its defaults and its attributes reached
    BOUND = 4  # a bound method, or a built-in method bound to an object: its receiver (and function) reached
    PARTIAL = 5  # a functools.partial: written, its function, arguments and keywords reached
    REDUCED = 6  # an operator.methodcaller: its arguments reached (what its __reduce__ says it holds)
    CLASS = 7  # a class: written whole (its attributes), not gone through
    MODULE = 8  # a module: its namespace written whole, not gone through
    OBJECT = 9  # any other mutable object: written whole, its own attributes and slots reached
    LAB = 10  # the lab's machinery: it schedules and records for itself


_SKIP, _HOLDER, _CONTAINER, _FUNCTION, _BOUND = (
    _Reach.SKIP,
    _Reach.HOLDER,
    _Reach.CONTAINER,
    _Reach.FUNCTION,
    _Reach.BOUND,
)
_PARTIAL, _REDUCED, _CLASS, _MODULE, _OBJECT = (
    _Reach.PARTIAL,
    _Reach.REDUCED,
    _Reach.CLASS,
    _Reach.MODULE,
    _Reach.OBJECT,
)
_LAB = _Reach.LAB


_IMMUTABLE_CLASS = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a class no code can give an attribute (int, dict)


_DESCRIPTORS = (
    property,
    types.MemberDescriptorType,
    types.GetSetDescriptorType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.CodeType,
    types.CellType,
)


def _classify(run: Recording, kind: type) -> int:
    """How the walk treats a value of type ``kind`` (cached with the run's call classifications, which hold for
    the same code under test and the same machinery)."""
    if kind is types.FunctionType:
        return _Reach.FUNCTION
    if kind is types.MethodType or kind is types.BuiltinFunctionType or kind is types.MethodWrapperType:
        return _Reach.BOUND
    if issubclass(kind, functools.partial):
        return _Reach.PARTIAL
    if kind is operator.methodcaller:
        return _Reach.REDUCED
    if issubclass(kind, type):
        return _Reach.CLASS
    if issubclass(kind, types.ModuleType):
        return _Reach.MODULE
    if issubclass(kind, tuple | frozenset):
        return _Reach.HOLDER
    if IMMUTABLE_TYPE[kind] or issubclass(kind, _DESCRIPTORS):
        return _Reach.SKIP
    if kind.__module__.startswith(run._transparent):
        return _Reach.LAB
    if issubclass(kind, list | dict | set | deque):
        return _Reach.CONTAINER
    return _Reach.OBJECT


def reach_entries(run: Recording, roots: list[tuple[Any, str]]) -> list[Entry]:
    """A write of every mutable object reachable from ``roots`` (each a value and the path that names it, or
    ``""``), breadth first, without running any of the program's code; past the limits, everything."""
    found: list[Entry] = []
    seen: set[int] = set()
    things, label, kinds = run._things, run.label, run._kinds
    queue: deque[tuple[Any, str, int]] = deque((value, hint, 0) for value, hint in roots)
    looked = 0
    while queue:
        value, hint, depth = queue.popleft()
        key = id(value)
        if key in seen:
            continue
        seen.add(key)
        looked += 1
        if looked > _LIMIT or depth > _DEPTH:
            return [_EVERYTHING_ENTRY]
        kind = type(value)
        sort = kinds.get((_Reach, kind))
        if sort is None:
            sort = kinds[(_Reach, kind)] = _classify(run, kind)
        if sort in (_SKIP, _LAB):
            continue
        if sort == _CLASS:
            if not value.__flags__ & _IMMUTABLE_CLASS and not value.__module__.startswith(run._transparent):
                found.append((things.get(key) or "obj:" + label(value), ANY_KEY, "w"))
            continue
        if sort == _MODULE:
            found.append((f"obj:module {value.__name__}", ANY_KEY, "w"))
            continue
        path = hint
        if sort in (_CONTAINER, _OBJECT, _PARTIAL):
            thing = things.get(key)
            if thing is None:
                thing = "obj:" + label(value, hint)
            found.append((thing, ANY_KEY, "w"))
            path = thing[4:]
        parts = _parts(value, sort, path)
        depth += 1
        queue.extend([(part, part_path, depth) for part, part_path in parts])
    return found


def _parts(value: Any, sort: int, path: str) -> list[tuple[object, str]]:
    """What the walk goes on to from ``value``, each with its path; numbers and strings left out."""
    items: list[tuple[object, str]]
    if sort == _CONTAINER:
        if isinstance(value, dict):
            pairs = list(dict.items(value))
            items = [(key, f"{path}[*]") for key, _ in pairs]
            items += [(item, f"{path}[{key_text(key)}]") for key, item in pairs]
        else:
            items = [(item, f"{path}[*]") for item in _items(value)]
    elif sort == _HOLDER:
        items = [(item, f"{path}[*]") for item in (tuple.__iter__(value) if isinstance(value, tuple) else value)]
    elif sort == _FUNCTION:
        items = []
        for name, cell in zip(value.__code__.co_freevars, value.__closure__ or (), strict=False):
            with contextlib.suppress(ValueError):  # an empty cell
                items.append((cell.cell_contents, f"{path}.<{name}>"))
        items += [(default, f"{path}.<default {i}>") for i, default in enumerate(value.__defaults__ or ())]
        items += [(default, f"{path}.<default {name}>") for name, default in (value.__kwdefaults__ or {}).items()]
        items += [(item, f"{path}.{name}") for name, item in dict.items(value.__dict__)]
    elif sort == _BOUND:
        owner = getattr(value, "__self__", None)
        items = [] if owner is None or isinstance(owner, types.ModuleType) else [(owner, f"{path}.__self__")]
        function = getattr(value, "__func__", None)
        if function is not None:
            items.append((function, f"{path}.__func__"))
    elif sort == _PARTIAL:
        items = [(value.func, f"{path}.func")]
        items += [(argument, f"{path}.<argument {i}>") for i, argument in enumerate(value.args)]
        items += [(argument, f"{path}.<keyword {name}>") for name, argument in value.keywords.items()]
        items += _fields(value, path)
    elif sort == _REDUCED:
        reduced = value.__reduce__()  # C code of operator's: (class or partial, (name, *arguments))
        items = [(part, f"{path}.<argument>") for part in (reduced[0], *reduced[1])]
    else:
        items = _fields(value, path)
    return [(item, item_path) for item, item_path in items if not _LEAF[type(item)]]


def _items(container: object) -> list[object]:
    """The items of a list, set or deque, read through the built-in type's own iterator (no overridden
    ``__iter__`` runs)."""
    base: Any
    for base in (list, set, deque):
        if isinstance(container, base):
            return list(base.__iter__(container))
    return []


def _fields(obj: object, path: str) -> list[tuple[object, str]]:
    """An object's own attributes and slots, read without running any of its code."""
    attributes = instance_dict(obj)
    found = [(item, f"{path}.{name}") for name, item in dict.items(attributes)] if type(attributes) is dict else []
    slots = SLOTS.get(type(obj))
    if slots is None:
        slots = SLOTS[type(obj)] = slots_of(type(obj))
    for slot, descriptor in slots[1]:
        with contextlib.suppress(AttributeError):
            found.append((descriptor.__get__(obj, type(obj)), f"{path}.{slot}"))
    return found


class _Leaves(dict[type, bool]):
    """Type -> whether a walk passes its values over at once: immutable, and neither a holder nor code."""

    def __missing__(self, kind: type) -> bool:
        leaf = (
            IMMUTABLE_TYPE[kind]
            and not issubclass(kind, tuple | frozenset)
            and kind not in (types.FunctionType, types.MethodType, types.BuiltinFunctionType)
        )
        self[kind] = leaf
        return leaf


_LEAF = _Leaves()


_MODULE_WALKS: dict[int, tuple[weakref.ref[Recording], int, str, list[Entry]]] = {}
"""id of a module's namespace -> (recording, step index, actor, its entries): a module's globals walked once per
step. Within a step only the running actor runs, so what the namespace reaches changes only by what that step
does, and a write of the namespace itself (in the entries) already conflicts with every other step that reads a
global of it."""


def module_entries(run: Recording, module: str, *, walk: bool = True) -> list[Entry]:
    """A write of module ``module``'s namespace and (``walk``) of everything its globals reach (classes written
    whole, other modules not gone into); nothing for the engine's modules and those the caller says keep none."""
    if not module or module.startswith(run._stateless):
        return []
    if not walk:
        return [(f"obj:module {module}", ANY_KEY, "w")]
    found = sys.modules.get(module)
    namespace = getattr(found, "__dict__", None) if isinstance(found, types.ModuleType) else None
    entry: Entry = (f"obj:module {module}", ANY_KEY, "w")
    if type(namespace) is not dict:
        return [entry]
    steps = run._steps
    kept = _MODULE_WALKS.get(id(namespace))
    if kept is not None and kept[0]() is run and kept[1] == steps.index and kept[2] == steps.actor:
        return kept[3]
    roots = [
        (value, f"{module}.{name}")
        for name, value in list(dict.items(namespace))
        if not name.startswith("__") and not isinstance(value, types.ModuleType)
    ]
    entries = [entry, *reach_entries(run, roots)]
    if len(_MODULE_WALKS) > 256:
        _MODULE_WALKS.clear()
    _MODULE_WALKS[id(namespace)] = (weakref.ref(run), steps.index, steps.actor, entries)  # no run kept alive
    return entries


def callee_roots(f: Any) -> tuple[list[tuple[Any, str]], str, bool]:
    """What a call of ``f`` may reach through ``f`` itself (its closure, defaults, attributes, receiver, what a
    partial or methodcaller holds, a callable object's fields); the module whose state it may change; and whether
    that module's globals are the code's own (Python code reads them; a C module's state is not in its
    namespace, whose entry alone is charged)."""
    if isinstance(f, types.FunctionType):
        return [(f, "")], f.__module__ or "", True
    if isinstance(f, types.MethodType):
        return [(f, "")], getattr(f.__func__, "__module__", "") or "", True
    if isinstance(f, types.BuiltinFunctionType):
        owner = f.__self__
        if owner is None or isinstance(owner, types.ModuleType):
            return [], getattr(owner, "__name__", "") or "", False
        return [(owner, "")], "", False
    if isinstance(f, functools.partial):
        inner, module, walk = callee_roots(f.func)
        return [(f, ""), *inner], module, walk
    if isinstance(f, type):
        init = getattr(f, "__init__", None)
        module = getattr(init, "__module__", "") if isinstance(init, types.FunctionType) else ""
        return [(f, "")], module or "", True
    call = type(f).__dict__.get("__call__") or next(
        (klass.__dict__["__call__"] for klass in type(f).__mro__ if "__call__" in klass.__dict__), None
    )
    if isinstance(call, types.FunctionType):
        return [(f, "")], call.__module__ or "", True
    return [(f, "")], type(f).__module__, False
