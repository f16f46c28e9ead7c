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


def _two(a: tuple[Step, ...], b: tuple[Step, ...]) -> Program:
    return Program((a, b))


FINDINGS: dict[str, Finding] = {
    "F1": Finding(
        "a generator resumed through its methods (send, __next__, throw, close) is not held open while it runs: a "
        "second actor's call in the middle is never explored ('generator already executing')",
        "recorder: lab/engine/record/_runtime_calls.py (a built-in method's call is not held open as opaque_call is)",
        _two((Step("gen_send"),), (Step("gen_dunder"),)),
        "line",
        ("gen_send", "gen_dunder", "gen_throw", "gen_close"),
    ),
    "F2": Finding(
        "a coroutine driven by send(None) from two actors: the second send while the first runs is never explored",
        "recorder: lab/engine/record/_runtime_calls.py (as F1)",
        _two((Step("coro_send"),), (Step("coro_send"),)),
        "instruction",
        ("coro_send",),
    ),
    "F3": Finding(
        "operator.methodcaller('append', c)(items) made inside an actor mutates items with no write",
        "recorder: lab/engine/record/_calls.py (kind_key of a methodcaller instance is its type, the same key as "
        "the constructor methodcaller, classified READS, so the instance's call reads its argument)",
        _two((Step("methodcaller"),), (Step("length"),)),
        "line",
        ("methodcaller",),
    ),
    "F4": Finding(
        "a Barrier's broken and n_waiting read through attributes never conflict with abort() or wait()",
        "sync stand-ins (lab/engine/sync/_barrier.py) or the recorder's attribute reads of a lab object",
        _two((Step("bar_abort"),), (Step("bar_broken"),)),
        "line",
        ("bar_waiting", "bar_broken"),
    ),
    "F5": Finding(
        "a Semaphore's _value read through an attribute never conflicts with acquire() or release()",
        "sync stand-ins (lab/engine/sync/_semaphore.py) or the recorder's attribute reads of a lab object",
        _two((Step("sem_held", 1, (Step("local"),)),), (Step("sem_value"),)),
        "line",
        ("sem_value",),
    ),
    "F6": Finding(
        "a Queue's queue and unfinished_tasks read through attributes never conflict with put() or task_done()",
        "sync stand-ins (lab/engine/sync/_queue.py) or the recorder's attribute reads of a lab object",
        _two((Step("q_put"),), (Step("q_items"),)),
        "instruction",
        ("q_items", "q_unfinished"),
    ),
}
"""The open findings, by their number in ``/tmp/helpers/fuzz-findings.md``."""


KNOWN: frozenset[str] = frozenset(kind for finding in FINDINGS.values() for kind in finding.kinds)
"""The steps the generated programs leave out while their finding is open."""
