"""The object walk that names the state existing before a run by the path that reaches it.

Labels must not depend on the schedule: the reduction compares footprints across runs. So before the actors start,
everything reachable from the scenario and from the modules under test is named by its path (``self.session._history``,
``module.REGISTRY[0]``), breadth first and in a schedule-independent order, without running any of the program's code:
module globals, what functions capture in closures and defaults, what bound methods are bound to, class-level data.
Only objects made during the run are then named by the access that meets them.
"""

from __future__ import annotations

import contextlib
import enum
import types
from collections import deque

from lab.engine.record._snapshot import parts_of
from lab.engine.record._values import CODE_LIKE, ENGINE, IMMUTABLE_TYPE, SLOTS, key_text, slots_of


class Walk:
    """A breadth-first walk from named roots through what objects hold, without running any of the program's code.

    ``expanded`` (an earlier walk's :attr:`expanded`) names classes and functions already gone through, each at a
    depth: one met again no shallower is not gone through twice (the object is kept, so its id stays its own).
    With ``snapshot``, :attr:`parts` keeps what each object gone through held, so that a later run can tell whether
    the same walk would find the same objects without walking again.
    """

    def __init__(
        self,
        owners: frozenset[str],
        known: dict[int, str] | None = None,
        expanded: dict[int, tuple[int, object]] | None = None,
        *,
        snapshot: bool = False,
        leave_alone: tuple[str, ...] = (ENGINE,),
    ) -> None:
        self._owners = owners
        self._sorts = _walk_sorts(leave_alone)
        self._known = known if known is not None else {}
        self._before = expanded if expanded is not None else {}
        self._snapshot = snapshot
        self.expanded: dict[int, tuple[int, object]] = {}
        """id -> (depth, object) of each class, function or method wrapper this walk went through."""
        self.parts: list[tuple[object, tuple[object, ...]]] = []
        """With ``snapshot``: each object gone through, and :func:`parts_of` of it at the time."""
        self.complete = True
        """False when the walk stopped at its limit with objects still to go through."""

    def run(self, roots: list[tuple[str, object]]) -> list[tuple[object, str]]:
        """The objects found, each with the path that reached it first."""
        found: list[tuple[object, str]] = []
        seen: set[int] = set()
        before, known, sorts, owners = self._before, self._known, self._sorts, self._owners
        parts = self.parts if self._snapshot else None
        expanded = self.expanded
        queue: deque[tuple[str, object, int]] = deque((path, obj, 0) for path, obj in roots)
        while queue and len(found) < 20_000:
            path, obj, depth = queue.popleft()
            key = id(obj)
            if key in seen or key in known:
                continue
            gone_through = before.get(key)
            if gone_through is not None and gone_through[0] <= depth:
                continue
            seen.add(key)
            kind = type(obj)
            sort = sorts[kind]
            if sort is _DATA:
                found.append((obj, path))
                if depth < 6:
                    if parts is not None:  # only what the walk reads: an object it goes through
                        parts.append((obj, parts_of(obj)))
                    queue.extend(_children(path, obj, depth + 1))
                continue
            if sort is _PASS:
                continue
            children: list[tuple[str, object]]
            if sort is _WRAPPER:
                children = [(path, obj.__func__)]  # type: ignore[attr-defined]
            elif sort is _CLASS:
                if obj.__module__ not in owners or issubclass(obj, enum.Enum):  # type: ignore[arg-type]
                    continue  # another module's class, or an enum (its members cannot change)
                children = [
                    (f"{path}.{name}", value) for name, value in list(vars(obj).items()) if not name.startswith("__")
                ]  # class-level data of a module under test
            else:  # code
                if kind is types.FunctionType and getattr(obj, "__module__", None) not in owners and depth == 0:
                    continue  # a function a module under test imported: not its state
                children = _held_by_code(path, obj)  # what a function or bound method holds, not itself
            if parts is not None:
                parts.append((obj, parts_of(obj)))
            expanded[key] = (depth, obj)
            queue.extend([(child_path, child, depth + 1) for child_path, child in children])
        self.complete = not queue
        return found


class _Sort(enum.Enum):
    """What the walk does with an object, which its type alone decides (but for a class: whose it is)."""

    PASS = "pass"  # the lab's machinery, a module, a descriptor, an immutable value: nothing of the program's state
    WRAPPER = "wrapper"  # a static or class method: go on to its function
    CLASS = "class"  # a class: its class-level data, when a module under test defines it
    CODE = "code"  # a function or bound method: what it captures or is bound to
    DATA = "data"  # the program's state: named, and gone through


class _WalkSorts(dict[type, _Sort]):
    """Type -> :class:`_Sort`, worked out once per type (the walk meets hundreds of objects a run), for one set of
    modules whose objects are machinery (the engine's, and those the caller leaves alone)."""

    def __init__(self, leave_alone: tuple[str, ...]) -> None:
        super().__init__()
        self._leave_alone = leave_alone

    def __missing__(self, kind: type) -> _Sort:
        if kind.__module__.startswith(self._leave_alone) or issubclass(kind, types.ModuleType):
            sort = _Sort.PASS
        elif issubclass(kind, staticmethod | classmethod):
            sort = _Sort.WRAPPER
        elif issubclass(kind, property | types.MemberDescriptorType | types.GetSetDescriptorType):
            sort = _Sort.PASS  # the descriptor itself holds no state of the program
        elif issubclass(kind, type):
            sort = _Sort.CLASS
        elif kind in CODE_LIKE:
            sort = _Sort.CODE
        elif kind is not tuple and IMMUTABLE_TYPE[kind]:
            sort = _Sort.PASS
        else:
            sort = _Sort.DATA
        self[kind] = sort
        return sort


_PASS, _WRAPPER, _CLASS, _DATA = _Sort.PASS, _Sort.WRAPPER, _Sort.CLASS, _Sort.DATA
_WALK_SORTS: dict[tuple[str, ...], _WalkSorts] = {}


def _walk_sorts(leave_alone: tuple[str, ...]) -> _WalkSorts:
    """The sorts for ``leave_alone``, kept across runs (one caller passes the same names every run)."""
    sorts = _WALK_SORTS.get(leave_alone)
    if sorts is None:
        sorts = _WALK_SORTS[leave_alone] = _WalkSorts(leave_alone)
    return sorts


def _held_by_code(path: str, obj: object) -> list[tuple[str, object]]:
    """What a function captures (closure cells, default arguments) or a bound method is bound to."""
    found: list[tuple[str, object]] = []
    if isinstance(obj, types.FunctionType):
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=False):
            with contextlib.suppress(ValueError):  # an empty cell has no contents
                found.append((f"{path}.<{name}>", cell.cell_contents))
        for i, value in enumerate(obj.__defaults__ or ()):
            found.append((f"{path}.<default {i}>", value))
        for name, value in (obj.__kwdefaults__ or {}).items():
            found.append((f"{path}.<default {name}>", value))
    else:
        owner = getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            found.append((f"{path}.__self__", owner))
        function = getattr(obj, "__func__", None)
        if function is not None:
            found.append((f"{path}.__func__", function))
    return found


def _children(path: str, obj: object, depth: int) -> list[tuple[str, object, int]]:
    """What ``obj`` holds, with the path to each part (and ``depth``, for the walk's queue), read without running
    any of the program's code.

    A part the walk would pass over at once (a number, a string: immutable, and neither a tuple nor code) is left
    out here, before its path is written: the walk runs every run, and most parts are such values."""
    found: list[tuple[str, object, int]] = []
    if isinstance(obj, dict):
        items: list[tuple[object, object]] = list(dict.items(obj))  # dict's own view: no overridden items() runs
        for key, value in items:
            kind = type(value)
            if kind is tuple or kind in CODE_LIKE or not IMMUTABLE_TYPE[kind]:
                found.append((f"{path}[{key_text(key)}]", value, depth))
        return found
    if isinstance(obj, list | tuple | deque):
        for i, value in enumerate(list(obj)):
            kind = type(value)
            if kind is tuple or kind in CODE_LIKE or not IMMUTABLE_TYPE[kind]:
                found.append((f"{path}[{i}]", value, depth))
        return found
    slots = SLOTS.get(type(obj))
    if slots is None:
        slots = SLOTS[type(obj)] = slots_of(type(obj))
    if slots[0]:  # without one, reading ``__dict__`` could only raise AttributeError (slow, and for nothing)
        try:
            attributes = object.__getattribute__(obj, "__dict__")
        except AttributeError:
            attributes = {}
        if isinstance(attributes, dict):
            for name, value in list(attributes.items()):
                kind = type(value)
                if kind is tuple or kind in CODE_LIKE or not IMMUTABLE_TYPE[kind]:
                    found.append((f"{path}.{name}", value, depth))
    for slot, descriptor in slots[1]:
        try:
            value = descriptor.__get__(obj, type(obj))
        except AttributeError:
            continue
        kind = type(value)
        if kind is tuple or kind in CODE_LIKE or not IMMUTABLE_TYPE[kind]:  # as above: the walk passes the rest
            found.append((f"{path}.{slot}", value, depth))
    return found
