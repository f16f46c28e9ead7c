"""How a problem shows a value from a folder in its one line: shortened, escaped, and where two texts first differ.

Every check of the auditor and of the re-execution names values it found (a field of the wrong kind, an outcome
that came out differently, a kill-matrix cell); they all show them the same way, so a problem line stays one line
however long or hostile the value, and reads the same whichever check wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from lab.errors import EvidenceError
from lab.evidence.records.safefs import printable
from lab.text import shorten


def shown(value: object, width: int = 60) -> str:
    """``value`` for a problem line: a string as itself, anything else as compact JSON (or its ``repr`` when it
    is not JSON), escaped (:func:`~lab.evidence.records.safefs.printable`) and shortened to ``width``."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return shorten(printable(text), width)


def first_difference(old: Sequence[str], new: Sequence[str]) -> tuple[int, str, str] | None:
    """The first line (counted from 1) at which ``old`` and ``new`` differ, with both lines; ``None`` when one is
    the start of the other (then only their lengths differ, if anything)."""
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return number, a, b
    return None


def cell_name(key: tuple[str, str, str]) -> str:
    """A kill-matrix cell by its ``(variant, scenario, granularity)``: ``Mutant x race (probe)``."""
    return f"{printable(key[0])} x {printable(key[1])} ({printable(key[2])})"


class NotJsonNumber(EvidenceError, ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's JSON reader accepts them, JSON does not, and a number that
    is not finite would poison every sum and timeout made from it. A :class:`ValueError` too, so every reader of
    JSON that already turns a ``ValueError`` into a one-line problem handles it."""


def refuse_constant(name: str) -> object:
    """The ``parse_constant`` of every JSON read from a folder or a child: it raises :class:`NotJsonNumber`."""
    raise NotJsonNumber(f"{name} is not a JSON number")


STRICT_JSON = json.JSONDecoder(parse_constant=refuse_constant)
"""A decoder with :func:`refuse_constant`, made once: ``json.loads`` with that option builds a new decoder per call,
which reading a trace line by line did for every line."""
