"""Footprints: what a step touched, so the explorer can tell which orders can matter.

Two steps whose footprints do not conflict commute: running them in either order reaches the same state, so the
explorer need not try both (partial-order reduction). Each entry is ``(thing, key, mode)``:

- ``thing`` names one object: a lab primitive (``lock:s1.lock``, ``latch:fast-committed``), or a piece of the
  program's own state, ``obj:<label>``, where the label identifies one live object of the run (see
  :mod:`lab.engine.record._accesses`: objects are told apart by identity, not by the name of the variable that held
  them);
- ``key`` says which part of it: an attribute name, a dictionary key, or ``*`` for "all of it" (a list that was
  appended to, an object handed to code the lab cannot see);
- ``mode`` is ``r`` or ``w``.

Two entries conflict when they name the same thing, their keys overlap (equal, or either is ``*``) and at least one
writes. ``EVERYTHING`` conflicts with every non-empty footprint: it is what a step that could not be observed is
assumed to touch. Probe announcements (``probe``) are pure scheduling points and conflict with nothing by
themselves: the accesses recorded around them carry the truth.

Footprints are *executed* footprints: what a step was seen to touch while it ran, recorded by the instrumented
modules under test as each access happened, plus the lab operation that began the step.
"""

from __future__ import annotations

from collections.abc import Iterable

from lab.hooks import ANY_KEY as ANY_KEY

Entry = tuple[str, str, str]
Footprint = frozenset[Entry]

NOTHING: Footprint = frozenset()
EVERYTHING: Footprint = frozenset({("*", "*", "w")})
_EVERYTHING_ENTRY: Entry = ("*", "*", "w")


def writes(kind: str, name: str) -> Footprint:
    """A footprint that writes one named lab object (``writes("lock", "s1.lock")``)."""
    return frozenset({(kind, name, "w")})


def entries_conflict(a: Entry, b: Entry) -> bool:
    """True when two single accesses may not commute."""
    if a == _EVERYTHING_ENTRY or b == _EVERYTHING_ENTRY:
        return True
    if a[0] != b[0] or a[0] == "probe":
        return False
    if a[1] != b[1] and a[1] != ANY_KEY and b[1] != ANY_KEY:
        return False
    return a[2] == "w" or b[2] == "w"


def conflict(a: Footprint, b: Footprint) -> bool:
    """True when steps with footprints ``a`` and ``b`` may not commute."""
    if not a or not b:
        return False
    if _EVERYTHING_ENTRY in a or _EVERYTHING_ENTRY in b:
        return True
    left, right = (a, b) if len(a) <= len(b) else (b, a)
    index = _by_thing(right)
    for thing, key, mode in left:
        others = index.get(thing)
        if not others or thing == "probe":
            continue
        for other_key, other_mode in others:
            if (key in (other_key, ANY_KEY) or other_key == ANY_KEY) and (mode == "w" or other_mode == "w"):
                return True
    return False


def _by_thing(footprint: Iterable[Entry]) -> dict[str, list[tuple[str, str]]]:
    index: dict[str, list[tuple[str, str]]] = {}
    for thing, key, mode in footprint:
        index.setdefault(thing, []).append((key, mode))
    return index


def describe_entry(entry: Entry) -> str:
    """An entry as a person reads it: ``write s1._version``, ``read self.tickets['slow']``, ``write lock s1.lock``."""
    thing, key, mode = entry
    verb = "write" if mode == "w" else "read"
    if thing == "*":
        return "anything (a step the lab could not observe)"
    if thing.startswith("obj:"):
        label = thing[4:]
        if key == ANY_KEY:
            return f"{verb} {label} (all of it)"
        return f"{verb} {label}{key}" if key.startswith("[") else f"{verb} {label}.{key}"
    return f"{verb} {thing} {key}"
