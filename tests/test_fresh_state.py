"""Every execution is a fresh program: nothing of one execution's threads, and no hold of the lab's, reaches the next.

The explorer re-runs a program from ``setup()`` once per schedule, on pooled actor threads, while recording what each
step touches. Two things used to leak into what the program sees (issue 21, point 3), and each turned racy programs
into silent greens and correct ones into false alarms or a crash of the explorer:

- a pooled thread kept the ``threading.local`` and ``contextvars`` values of the execution before (a duplicate-id
  race guarded by a per-thread or per-context cache explored PASS, a correct program saw impossible values or
  crashed the explorer with a NondeterminismError);
- the recording kept every object it had labelled alive for the whole run, so a ``WeakValueDictionary`` entry never
  vanished and ``__del__`` never ran within the run.

Each shape below is a racy program and its correct twin, explored with DPOR in prove mode at line granularity and
held to what real threads must do: the racy one FAILs, the twin PASSes. The programs live in this module (the module
calling :func:`lab.testing.explore_code` is code under test); a file in ``tests/soundness/`` would be taken for one
of that suite's scenario programs.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from typing import Any

import pytest

from lab.scenarios.exploring import ExploreVerdict
from lab.testing import ExplorationFailed, explore_code

pytestmark = pytest.mark.timeout(120)


def _verdict(**kwargs: Any) -> ExploreVerdict:
    """The verdict of a DPOR proof at line granularity (explore_code raises on anything but a PASS)."""
    try:
        found = explore_code(strategy="dpor", mode="prove", granularity="line", **kwargs)
    except ExplorationFailed as failed:
        return failed.found.verdict
    return found.verdict


# -- a thread-local id cache -------------------------------------------------------------------------------------

_MINE = threading.local()


class Ids:
    """Ids handed out from one shared counter; each thread caches the one it took."""

    def __init__(self) -> None:
        self.next = 0
        self.taken: list[int] = []
        self.lock = threading.Lock()


def _take_racy(ids: Ids) -> None:
    mine = getattr(_MINE, "id", None)
    if mine is None:
        n = ids.next
        ids.next = n + 1
        _MINE.id = mine = n
    ids.taken.append(mine)


def _take_locked(ids: Ids) -> None:
    mine = getattr(_MINE, "id", None)
    if mine is None:
        with ids.lock:
            n = ids.next
            ids.next = n + 1
        _MINE.id = mine = n
    ids.taken.append(mine)


def _distinct(ids: Ids) -> dict[str, bool]:
    return {"two distinct ids": sorted(ids.taken) == [0, 1]}


def test_a_thread_local_cache_does_not_hide_a_duplicate_id() -> None:
    """Each actor is a new thread: its cache is empty, it takes from the counter, and two can read the same value.
    Kept from the execution before, the cache skipped the counter and the race explored PASS."""
    assert _verdict(setup=lambda lab: Ids(), actors={"a": _take_racy, "b": _take_racy}, check=_distinct) is (
        ExploreVerdict.FAIL
    )


def test_a_thread_local_cache_under_a_lock_passes() -> None:
    assert _verdict(setup=lambda lab: Ids(), actors={"a": _take_locked, "b": _take_locked}, check=_distinct) is (
        ExploreVerdict.PASS
    )


_COUNT = threading.local()


class Firsts:
    def __init__(self) -> None:
        self.first: list[int] = []


def _count_own(state: Firsts) -> None:
    n = getattr(_COUNT, "n", 0) + 1
    _COUNT.n = n
    state.first.append(n)


def test_a_per_thread_counter_starts_at_one_in_every_execution() -> None:
    """Correct: a thread-local counter is 1 at each thread's first use (it saw 2, 3, ... from the pool)."""
    assert _verdict(
        setup=lambda lab: Firsts(),
        actors={"a": _count_own, "b": _count_own},
        check=lambda state: {"each counted 1": state.first == [1, 1]},
    ) is (ExploreVerdict.PASS)


# -- a ContextVar ------------------------------------------------------------------------------------------------

_TOKEN: contextvars.ContextVar[int | None] = contextvars.ContextVar("_TOKEN", default=None)
_MODE: contextvars.ContextVar[str] = contextvars.ContextVar("_MODE", default="default")


def _token_racy(ids: Ids) -> None:
    mine = _TOKEN.get()
    if mine is None:
        n = ids.next
        ids.next = n + 1
        _TOKEN.set(n)
        mine = n
    ids.taken.append(mine)


def _token_locked(ids: Ids) -> None:
    mine = _TOKEN.get()
    if mine is None:
        with ids.lock:
            n = ids.next
            ids.next = n + 1
        _TOKEN.set(n)
        mine = n
    ids.taken.append(mine)


def test_a_context_variable_cache_does_not_hide_a_duplicate_id() -> None:
    """A new thread starts in an empty context: the cached token is unset in every execution."""
    assert _verdict(setup=lambda lab: Ids(), actors={"a": _token_racy, "b": _token_racy}, check=_distinct) is (
        ExploreVerdict.FAIL
    )


def test_a_context_variable_cache_under_a_lock_passes() -> None:
    assert _verdict(setup=lambda lab: Ids(), actors={"a": _token_locked, "b": _token_locked}, check=_distinct) is (
        ExploreVerdict.PASS
    )


class Modes:
    def __init__(self) -> None:
        self.seen: list[str] = []


def _change_mode(state: Modes) -> None:
    mode = _MODE.get()
    state.seen.append(mode)
    _MODE.set("changed")


def test_a_context_variable_changed_by_an_actor_is_unchanged_for_the_others_and_the_next_execution() -> None:
    """Correct: each actor sees the default, whatever another actor, or the same thread before, set."""
    assert _verdict(
        setup=lambda lab: Modes(),
        actors={"a": _change_mode, "b": _change_mode},
        check=lambda state: {"both saw the default": state.seen == ["default", "default"]},
    ) is (ExploreVerdict.PASS)


# -- a WeakValueDictionary ---------------------------------------------------------------------------------------


class Thing:
    """Something a weak cache can point to."""


class Cached:
    def __init__(self) -> None:
        self.cache: weakref.WeakValueDictionary[str, Thing] = weakref.WeakValueDictionary()
        self.holder: Thing | None = Thing()
        self.cache["k"] = self.holder
        self.found: bool | None = None


def _drop(state: Cached) -> None:
    state.holder = None  # the last strong reference: the entry vanishes here


def _lookup_racy(state: Cached) -> None:
    thing = state.cache["k"]  # a KeyError once the entry vanished: every real run with _drop first hits it
    state.found = thing is not None


def _lookup_checked(state: Cached) -> None:
    thing = state.cache.get("k")
    state.found = thing is not None


def test_a_weak_cache_entry_vanishes_when_its_last_reference_dies_in_an_actor() -> None:
    """Racy: the lookup after the drop raises. Held alive by the lab, the entry never vanished: PASS."""
    assert _verdict(setup=lambda lab: Cached(), actors={"a": _drop, "b": _lookup_racy}) is ExploreVerdict.FAIL


def test_a_weak_cache_read_with_get_passes_and_is_empty_at_the_end() -> None:
    """Correct: whichever runs first, nothing holds the thing once both are done, so the cache is empty."""
    assert _verdict(
        setup=lambda lab: Cached(),
        actors={"a": _drop, "b": _lookup_checked},
        check=lambda state: {"the entry vanished": "k" not in state.cache},
    ) is (ExploreVerdict.PASS)


def _make_and_drop(state: Cached) -> None:
    made = Thing()
    made.size = 1  # a recorded write: the recording labels the thing (it used to keep it alive for the run)
    state.cache["m"] = made
    del made
    state.found = "m" in state.cache  # nothing holds it: it is gone already


def test_a_thing_made_and_dropped_in_an_actor_leaves_the_weak_cache() -> None:
    """Correct: an object made in an actor, labelled by the recording, still dies at its last reference."""
    assert _verdict(
        setup=lambda lab: Cached(),
        actors={"a": _make_and_drop, "b": _drop},
        check=lambda state: {"gone at once": state.found is False},
    ) is (ExploreVerdict.PASS)


# -- __del__ -----------------------------------------------------------------------------------------------------


class Closing:
    """Counts or logs, from ``__del__``, that a resource was closed."""

    def __init__(self, board: Board, name: str) -> None:
        self.board = board
        self.name = name

    def __del__(self) -> None:
        board = self.board
        if board.racy:
            n = board.closed
            board.closed = n + 1
        else:
            board.log.append(self.name)


class Board:
    def __init__(self, racy: bool) -> None:
        self.racy = racy
        self.closed = 0
        self.log: list[str] = []
        self.a: Closing | None = Closing(self, "a")
        self.b: Closing | None = Closing(self, "b")
        self.saw: dict[str, bool] = {}


def _close_a(board: Board) -> None:
    board.a = None  # __del__ runs here, in this actor's step
    board.saw["a"] = board.racy or "a" in board.log


def _close_b(board: Board) -> None:
    board.b = None
    board.saw["b"] = board.racy or "b" in board.log


def test_two_finalizers_that_count_lose_an_update() -> None:
    """Racy: both ``__del__`` read the count, then write it. Kept alive for the run, neither ran in it: PASS."""
    assert _verdict(
        setup=lambda lab: Board(racy=True),
        actors={"a": _close_a, "b": _close_b},
        check=lambda board: {"both closes counted": board.closed == 2},
    ) is (ExploreVerdict.FAIL)


def test_a_finalizer_runs_when_the_last_reference_dies_in_an_actor() -> None:
    """Correct: each actor sees its own ``__del__`` has run right after it dropped the resource."""
    assert _verdict(
        setup=lambda lab: Board(racy=False),
        actors={"a": _close_a, "b": _close_b},
        check=lambda board: {
            "each saw its close": board.saw == {"a": True, "b": True},
            "both closed": sorted(board.log) == ["a", "b"],
        },
    ) is (ExploreVerdict.PASS)


def test_pooled_threads_are_reused() -> None:
    """Fresh state costs no fresh threads: the pool still hands the same threads from one execution to the next."""
    from lab.engine.core import ACTOR_POOL

    _verdict(setup=lambda lab: Firsts(), actors={"a": _count_own, "b": _count_own})
    before = {thread.ident for thread in ACTOR_POOL.idle_threads()}
    _verdict(setup=lambda lab: Firsts(), actors={"a": _count_own, "b": _count_own})
    assert before & {thread.ident for thread in ACTOR_POOL.idle_threads()}
