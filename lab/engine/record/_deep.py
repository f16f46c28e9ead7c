"""Deep reads: comparing, hashing, formatting or serialising a value reads everything it holds, not only the value.

``a == b`` on two lists compares their elements, an f-string formats a container's items, ``json.dumps`` and
``sorted`` read every element, and a dataclass's generated ``__eq__`` reads each field -- all in C or in generated
code the lab does not rewrite. A deep read walks what a value holds (without running any of the program's code) and
reads each mutable container and each object whose comparison the lab cannot see into; past its limits it counts as
reading everything, never as reading less.
"""

from __future__ import annotations

import _pickle
import builtins
import contextlib
import copy
import json
import marshal
import types
from collections import deque
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY, EVERYTHING, Entry
from lab.engine.record._calls import CARRIERS
from lab.engine.record._values import CLASS_OR_MODULE, IMMUTABLE_TYPE, SLOTS, instance_dict, key_text, slots_of

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


class _DeepLeaves(dict[type, bool]):
    """Type -> whether reading its values deeply reads nothing: an immutable value that holds no other value (a
    number, a string, an enum member, a function). A tuple or frozenset is immutable but holds values that are
    read with it."""

    def __missing__(self, kind: type) -> bool:
        leaf = IMMUTABLE_TYPE[kind] and not issubclass(kind, tuple | frozenset)
        self[kind] = leaf
        return leaf


DEEP_LEAF = _DeepLeaves()


DEEP_LEAF_OF = DEEP_LEAF.__getitem__


class _Inert(dict[type, bool]):
    """Type -> whether a call handed a value of it can touch nothing through it: a leaf (:data:`DEEP_LEAF`) that
    is not a callable carrying state (:data:`CARRIERS`: a bound method's receiver, what a partial holds)."""

    def __missing__(self, kind: type) -> bool:
        inert = DEEP_LEAF[kind] and kind not in CARRIERS
        self[kind] = inert
        return inert


class _InertRead(dict[type, bool]):
    """Type -> whether a built-in that only reads its arguments touches nothing through a value of it: an inert
    value, or a class or module (read by name where it is used, never as data)."""

    def __missing__(self, kind: type) -> bool:
        inert = INERT[kind] or issubclass(kind, type | types.ModuleType)
        self[kind] = inert
        return inert


INERT = _Inert()
INERT_OF = INERT.__getitem__
INERT_READ_OF = _InertRead().__getitem__


_DEEP_LIMIT = 20_000
"""At most this many values looked at by one deep read (as many as a walk of the modules finds): past it, or past
:data:`_DEEP_DEPTH`, the read counts as touching everything (:data:`EVERYTHING`), never as touching less."""


_DEEP_DEPTH = 6


_EVERYTHING_ENTRY: Entry = next(iter(EVERYTHING))


class _Deep:
    """What a deep read does with a value that is not a leaf, which its type decides."""

    HOLDER = 0  # a tuple or frozenset: nothing of its own can change, its items are read
    CONTAINER = 1  # a list, dict, set or deque: read whole, and its items (a dict's keys and values) are read
    FIELDS = 2  # an object whose comparison or formatting runs code the lab does not rewrite: read whole, and its
    #             fields' values (a dataclass's generated ``__eq__`` and ``__repr__`` read every field)
    OPAQUE = 3  # a mutable object whose C-level comparison reads only itself (bytearray, array): read whole
    OWN_CODE = 4  # compared by identity and formatted by default, or by methods under test that record themselves


_HOLDER, _OWN_CODE, _OPAQUE, _FIELDS = _Deep.HOLDER, _Deep.OWN_CODE, _Deep.OPAQUE, _Deep.FIELDS


_DEEP_METHODS = (
    *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"),
    *("__repr__", "__str__", "__format__"),
)


_OBJECT_METHODS = tuple(getattr(object, name) for name in _DEEP_METHODS)


def _deep_sort(run: Recording, kind: type) -> int:
    """How a deep read treats a value of type ``kind`` (:class:`_Deep`), cached with the run's call
    classifications, which hold for the same code under test."""
    key = (_Deep, kind)
    sort = run._kinds.get(key)
    if sort is None:
        sort = run._kinds[key] = _classify_deep(run, kind)
    return sort


def _classify_deep(run: Recording, kind: type) -> int:
    if issubclass(kind, tuple | frozenset):
        return _Deep.HOLDER
    if issubclass(kind, list | dict | set | deque) or kind in _DICT_VIEWS:
        return _Deep.CONTAINER
    if issubclass(kind, type | types.ModuleType) or kind.__module__.startswith(run._transparent):
        return _Deep.OWN_CODE  # a class or a module compares by identity; the lab's objects are not the program's
    sort = _Deep.OWN_CODE
    for name, default in zip(_DEEP_METHODS, _OBJECT_METHODS, strict=True):
        method = getattr(kind, name, None)
        if method is None or method is default:
            continue  # unhashable, or object's own: identity, or a default text that reads no state
        code = getattr(method, "__code__", None)
        if code is None:
            if not isinstance(method, types.WrapperDescriptorType | types.MethodDescriptorType):
                return _Deep.FIELDS  # some other callable: whatever it runs may read the fields
            sort = _Deep.OPAQUE  # a C type's own slot: reads the object itself
        elif code not in run._instrumented and not getattr(method, "__module__", "").startswith(run._transparent):
            return _Deep.FIELDS  # generated (a dataclass's, from "<string>") or another module's code
    return sort


def deep_entries(run: Recording, values: tuple[Any, ...]) -> list[Entry]:
    """What reading ``values`` deeply reads: each mutable container met (read whole), each object whose comparison
    or formatting the lab cannot see into (read whole, and its fields' values), going through tuples; classes,
    the lab's own objects and objects compared by identity or by code under test (which records itself) stop the
    walk. Breadth first, without running any of the program's code; past the limits, everything.

    A part that is a leaf (a string, a number) is passed over where it is met, before its path is written: most
    of what a deep read meets is such values (the strings of a JSON document)."""
    found: list[Entry] = []
    seen: set[int] = set()
    things, label, derived, kinds, leaf = run._things, run.label, run._derived, run._kinds, DEEP_LEAF_OF
    queue: deque[tuple[Any, str, int]] = deque((value, "", 0) for value in values)
    looked = 0
    while queue:
        value, hint, depth = queue.popleft()
        key = id(value)
        if key in seen:
            continue
        seen.add(key)
        if derived and key in derived:  # a dict view, an iterator: what reading it reads of its sources
            found.extend(derived[key].entries)
        kind = type(value)
        sort = kinds.get((_Deep, kind))  # _deep_sort, inline
        if sort is None:
            sort = kinds[(_Deep, kind)] = _classify_deep(run, kind)
        path = hint
        if sort != _HOLDER:
            if sort == _OWN_CODE and depth:
                continue  # met inside a container: its comparison reads nothing the lab does not see
            thing = things.get(key)
            if thing is None:
                thing = "obj:" + label(value, hint)
            found.append((thing, ANY_KEY, "r"))
            if sort >= _OPAQUE:
                continue
            path = thing[4:]
        parts: list[tuple[object, str]]
        if sort == _FIELDS:
            fields = _fields(value)
            looked += len(fields)
            parts = [(part, f"{path}.{name}") for name, part in fields if not leaf(type(part))]
        elif isinstance(value, dict):
            pairs = list(dict.items(value))  # dict's own view: no overridden items() runs
            looked += 2 * len(pairs)
            leaves = looked <= _DEEP_LIMIT and all(map(leaf, map(type, dict.keys(value))))
            if leaves and all(map(leaf, map(type, dict.values(value)))):
                continue  # strings and numbers only, told without a Python call per item
            parts = [(key, f"{path}[*]") for key, _ in pairs if not leaf(type(key))]
            parts += [(item, f"{path}[{key_text(key)}]") for key, item in pairs if not leaf(type(item))]
        else:
            items = _items(value)
            looked += len(items)
            if looked <= _DEEP_LIMIT and all(map(leaf, map(type, items))):
                continue
            parts = [(item, f"{path}[*]") for item in items if not leaf(type(item))]
        if looked > _DEEP_LIMIT:
            found.append(_EVERYTHING_ENTRY)
            return found
        if parts:
            if depth >= _DEEP_DEPTH:
                found.append(_EVERYTHING_ENTRY)
                return found
            queue.extend([(part, part_path, depth + 1) for part, part_path in parts])
    return found


def _items(container: object) -> list[object]:
    """The items of a list, tuple, set, frozenset or deque, read through the built-in type's own iterator (no
    overridden ``__iter__`` runs)."""
    for base in _ITEM_BASES:
        if isinstance(container, base):
            return list(base.__iter__(container))
    if type(container) in _DICT_VIEWS:
        viewed: list[object] = list(container)  # type: ignore[call-overload]  # a dict's keys, values or items
        return viewed
    return []


_DICT_VIEWS = frozenset({type({}.keys()), type({}.values()), type({}.items())})


_ITEM_BASES: tuple[Any, ...] = (list, tuple, set, frozenset, deque)


def _fields(obj: object) -> list[tuple[str, object]]:
    """An object's own attributes and slots, read without running any of its code."""
    attributes = instance_dict(obj)
    found = list(dict.items(attributes)) if isinstance(attributes, dict) else []
    slots = SLOTS.get(type(obj))
    if slots is None:
        slots = SLOTS[type(obj)] = slots_of(type(obj))
    for slot, descriptor in slots[1]:
        with contextlib.suppress(AttributeError):
            found.append((slot, descriptor.__get__(obj, type(obj))))
    return found


DEEP_READERS = frozenset(
    id(f)
    for f in (
        *(builtins.repr, builtins.str, builtins.ascii, builtins.format, builtins.print, builtins.hash),
        *(builtins.sorted, builtins.min, builtins.max, builtins.sum),
        *(json.dumps, json.dump, copy.deepcopy, _pickle.dumps, _pickle.dump, marshal.dumps),
    )
)
"""Functions (by identity) that read what their arguments hold, not only the arguments: they format or serialise
every element, or compare elements (``sorted``, ``min``), or hash them, or add them up (``sum``)."""


DEEP_METHODS_BY_NAME = frozenset(
    {
        *("format", "format_map", "index", "count", "remove", "sort", "join", "__contains__"),
        *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__repr__", "__str__", "__format__"),
    }
)
"""Methods of built-in types that compare or format their receiver's elements with their arguments
(``list.index``, ``list.remove``, ``str.format``): they read what both hold."""


def deep_arguments(values: tuple[Any, ...]) -> list[Any]:
    """The arguments a deep read goes into: not a class or module (read by name where used) nor a callable passed
    along (charged by :func:`passed_entries`)."""
    return [
        value
        for value in values
        if not DEEP_LEAF[type(value)] and type(value) not in CARRIERS and not isinstance(value, CLASS_OR_MODULE)
    ]


_HOLDERS = frozenset({tuple, frozenset})


def read_arguments_deeply(run: Recording, values: tuple[Any, ...], where: tuple[str, int]) -> None:
    """A call that reads what its arguments hold: each argument read deeply, as one operation."""
    held = deep_arguments(values)
    if held and not all(type(value) in _HOLDERS and all(map(DEEP_LEAF_OF, map(type, value))) for value in held):
        read_deeply(run, tuple(held), where)


def read_deeply(run: Recording, values: tuple[Any, ...], where: tuple[str, int]) -> None:
    """Record a deep read of ``values`` as one operation: at instruction granularity one scheduling point, whose
    pending footprint is what the values held then, and the step that follows reads what they hold when it runs
    (another actor may have changed them in between)."""
    entries = deep_entries(run, values)
    if not run.schedules:
        run.scheduler.access_all(entries, where, schedule=False)
        return
    run.scheduler.access_all(entries, where, schedule=True)
    pending = set(entries)
    fresh = [entry for entry in deep_entries(run, values) if entry not in pending]
    run.scheduler.access_all(fresh, where, schedule=False)
