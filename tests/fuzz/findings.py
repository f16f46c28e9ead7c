"""What the fuzzer found that is not yet fixed: the smallest program of each finding, and the steps kept out of the
generated programs until it is.

A finding whose cause is in the search (``lab/engine/search``) is fixed there, with its program kept as a regression
test; one whose cause is elsewhere (the recorder's footprints, the stand-in primitives) is written up in
``/tmp/helpers/fuzz-findings.md`` for its owner and listed here. ``tests/test_fuzz.py`` runs each program below as an
``xfail(strict=True)`` test, so the day its cause is fixed the test passes, fails as XPASS, and says to move the
finding's steps back into the grammar (delete its entry here).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.fuzz.programs import Program, Step


@dataclass(frozen=True)
class Finding:
    """A difference between reduced and naive exploration the fuzzer found, still open."""

    title: str
    where: str
    """Whose code holds the cause, as far as the fuzzer could tell."""
    program: Program
    granularity: str
    kinds: tuple[str, ...]
    """The steps kept out of generated programs while it is open."""


FIXED: dict[str, Finding] = {
    "F7": Finding(
        "a list made and bound to a module global by one actor, then first touched by another, is labelled by "
        "whoever touches it first (list#a.1 in one run, list#b.1 in the next): the sleep set keeps a asleep "
        "across its own append, and the reversal's run is cut as redundant",
        "recorder: lab/engine/record/_runtime_names.py (a global read does not label the value it reads by its "
        "path, as an attribute or item read does in _runtime.py; _recording.label then names it after its first "
        "toucher)",
        Program(((Step("reg_rebind"), Step("reg_append", 1)), (Step("reg_append", 2),))),
        "line",
        ("reg_rebind",),
    ),
    "F8": Finding(
        "F7's shape through a closure cell: a list one actor binds to a nonlocal, then another appends to",
        "recorder: lab/engine/record/_runtime_names.py (a cell read labels nothing by its path either)",
        Program(((Step("bag_swap"), Step("bag_put", 1)), (Step("bag_put", 2),))),
        "line",
        ("bag_swap",),
    ),
}
"""Findings fixed since, whose programs stay as regression tests: F7 and F8, by naming a value stored in a global or
a closure cell by that path when nothing has named it yet (``lab/engine/record/_runtime_names.py``: ``wg``,
``wc``). Their steps are back in the grammar."""

FINDINGS: dict[str, Finding] = {}
"""The open findings, by their number in the fuzzer's findings note (``/tmp/helpers/fuzz-findings.md`` while issue
21 is worked on). Fixed and so removed: F1 (a generator resumed by its methods) and F2 (a coroutine's send), by
e1753f8; F4-F6 (Barrier, Semaphore and Queue state read through attributes), by a72252e; F3
(``operator.methodcaller`` made inside an actor), by 7960393. A new one is added as::

    "F7": Finding("what differs", "whose code", Program(((Step("a_step"),), (Step("another"),))), "line", ("a_step",)),
"""


KNOWN: frozenset[str] = frozenset(kind for finding in FINDINGS.values() for kind in finding.kinds)
"""The steps the generated programs leave out while their finding is open."""
