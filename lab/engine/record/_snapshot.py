"""Whether a walk of the modules kept from an earlier run would still find the same objects under the same paths.

Module state outlives runs, so the walk of the modules' namespaces is done once per process and reused -- but only
while nothing it went through changed (a ``setup()`` may put a fresh list in a module's dict or rebind a class
attribute; reusing a stale walk would leave that list to be named by whichever access meets it first). What the walk
read of each object is kept as a tuple compared by identity, checked every run with C-level maps.
"""

from __future__ import annotations

import operator
import types
from collections import deque
from dataclasses import dataclass

from lab.engine.record._values import CODE_LIKE, SLOTS, own_dict, slots_of

_EMPTY_CELL = object()


def parts_of(obj: object) -> tuple[object, ...]:
    """Everything the walk reads of ``obj`` to find what it holds (the walk's ``_children`` and ``_held_by_code``, a
    class's dict, a wrapper's function), as one tuple compared by identity: while none of it changes, a walk through
    ``obj`` finds the same objects under the same paths. Built with C-level copies, a handful per object; functions
    and classes first, the most of what a modules' walk goes through."""
    kind = type(obj)
    if kind is types.FunctionType:
        closure = obj.__closure__  # type: ignore[attr-defined]
        keywords = obj.__kwdefaults__  # type: ignore[attr-defined]
        held: tuple[object, ...] = (obj.__defaults__, keywords)  # type: ignore[attr-defined]  # a default's contents are its own parts
        if closure:
            held += tuple(map(_cell_value, closure))
        if keywords:
            held += (*keywords, *keywords.values())
        return held
    if isinstance(obj, type):
        namespace = vars(obj)
        return (*namespace, *namespace.values())
    if isinstance(obj, dict):
        return (*dict.keys(obj), *dict.values(obj))
    if isinstance(obj, list | tuple | deque):
        return tuple(obj)
    if kind in CODE_LIKE or isinstance(obj, staticmethod | classmethod):
        return (getattr(obj, "__self__", None), getattr(obj, "__func__", None))
    attributes = own_dict(obj)
    held = (*attributes, *attributes.values()) if isinstance(attributes, dict) else ()
    slots = SLOTS.get(kind)
    if slots is None:
        slots = SLOTS[kind] = slots_of(kind)
    for _, descriptor in slots[1]:
        try:
            held += (descriptor.__get__(obj, kind),)
        except AttributeError:
            held += (_EMPTY_CELL,)
    return held


def _cell_value(cell: types.CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY_CELL


@dataclass(frozen=True)
class Snapshot:
    """What a modules' walk read, arranged to be checked cheaply every run (see :func:`unchanged`)."""

    plain: tuple[object, ...]
    """The functions that capture nothing and have no keyword-only defaults (most of them)..."""
    defaults: tuple[object, ...]
    """... and their ``__defaults__`` then (a default's contents are its own parts, below)."""
    others: tuple[tuple[object, tuple[object, ...]], ...]
    """Every other object gone through, with :func:`parts_of` of it then."""


def snapshot(parts: list[tuple[object, tuple[object, ...]]]) -> Snapshot:
    plain = tuple(obj for obj, held in parts if type(obj) is types.FunctionType and len(held) == 2 and held[1] is None)
    kept = {id(obj) for obj in plain}
    return Snapshot(
        plain,
        tuple(held[0] for obj, held in parts if id(obj) in kept),
        tuple((obj, held) for obj, held in parts if id(obj) not in kept),
    )


_DEFAULTS = operator.attrgetter("__defaults__")


_KWDEFAULTS = operator.attrgetter("__kwdefaults__")


def unchanged(snapshot: Snapshot) -> bool:
    """Whether every object a walk went through still holds, by identity, what it held then: the plain functions
    through C-level maps of their defaults (they run every run, over every function of the modules under test),
    the rest one by one."""
    plain = snapshot.plain
    if not all(map(operator.is_, map(_DEFAULTS, plain), snapshot.defaults)):
        return False
    if any(map(_KWDEFAULTS, plain)):
        return False
    for obj, held in snapshot.others:
        now = parts_of(obj)
        if len(now) != len(held) or not all(map(operator.is_, now, held)):
            return False
    return True
