"""Footprints: what a step is about to touch, so the explorer can tell which orders can matter.

Two steps whose footprints do not conflict commute: running them in either order reaches the same state, so the
explorer need not try both (partial-order reduction). Each entry is ``(kind, name, mode)``: ``kind`` says what
sort of thing it is (``lock``, ``latch``, ``barrier``, ``probe``, ``attr`` for an attribute seen by the line tracer,
``*`` for "anything"), ``mode`` is ``r`` or ``w``. Two entries conflict when they name the same thing and at least
one writes.

Footprints are *executed* footprints: what a step was seen to touch while it ran, its lab operation plus the
``self`` attributes read and written by the traced lines it executed. Probe announcements carry nothing (the lines
around them carry their own reads and writes), locks and latches only themselves, attributes conflict only on a
write. Code outside the traced modules is not seen: shared state must live in the modules under test.
"""

from __future__ import annotations

from collections.abc import Iterable

Entry = tuple[str, str, str]
Footprint = frozenset[Entry]

NOTHING: Footprint = frozenset()
EVERYTHING: Footprint = frozenset({("*", "*", "w")})


def writes(kind: str, name: str) -> Footprint:
    """A footprint that writes one named thing."""
    return frozenset({(kind, name, "w")})


def conflict(a: Footprint, b: Footprint) -> bool:
    """True when steps with footprints ``a`` and ``b`` may not commute."""
    if not a or not b:
        return False
    if ("*", "*", "w") in a or ("*", "*", "w") in b:
        return True
    left, right = _normal(a), _normal(b)
    if len(right) < len(left):
        left, right = right, left
    return any((name, "w") in right or (mode == "w" and (name, "r") in right) for name, mode in left)


def _normal(footprint: Iterable[Entry]) -> set[tuple[str, str]]:
    return {(f"{kind}:{name}", mode) for kind, name, mode in footprint if kind != "probe"}
