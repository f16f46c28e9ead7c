"""The garbage collector around runs: paused while one runs, relaxed while many follow each other.

A run allocates thousands of objects that live until it ends and leaves no cycle of its own, so a collection during
it only traverses them; between the runs of an exploration, the books kept for the explorer are freed long before
a relaxed threshold is reached. Both are process-wide, counted so that runs in several threads share them, and put
back in a forked child.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
from collections.abc import Iterator

_pausing = _thread.allocate_lock()
_paused_runs = 0


def pause_collector() -> bool:
    """No garbage collection while a run runs; the first collection after it looks at everything the run made.
    True when this run paused it (:func:`resume_collector` then lets it go). Two plain calls, not a context
    manager: a generator's frames and its manager object cost a run more than the calls.

    A run leaves no cycle of its own (see :meth:`lab.engine.core._scheduler.Scheduler.run`), yet it allocates thousands
    of objects that live until it ends: collecting while it runs only traverses them, promotes them, and every dozen
    runs of a line-granularity exploration sets off a collection of the whole heap, which cost a third of its time.
    The allocation counts go on meanwhile, so the collector runs as soon as the run is over and frees any cycle the
    code under test made (nothing is kept from it). Runs at once in several threads pause it together; it is left
    alone when the program had disabled it.

    The lab does not ``gc.freeze()`` the heap, although that would save about a sixth of a line-granularity run:
    it is process-wide, and in the process of a user's test suite it would keep every cycle that existed before
    the first run forever.
    """
    global _paused_runs
    with _pausing:
        pause = _paused_runs > 0 or gc.isenabled()
        if pause:
            _paused_runs += 1
            gc.disable()
    return pause


def resume_collector(paused: bool) -> None:
    """The end of a run that :func:`pause_collector` paused the collector for: the last such run enables it."""
    global _paused_runs
    if paused:
        with _pausing:
            _paused_runs -= 1
            if _paused_runs == 0:
                gc.enable()


_RELAXED_THRESHOLD = 10_000
_relaxed = 0
_thresholds: tuple[int, int, int] = gc.get_threshold()


@contextlib.contextmanager
def collector_relaxed() -> Iterator[None]:
    """While many runs follow each other (an exploration): the young generation is collected after 10,000 new
    objects rather than 700, and the previous thresholds come back at the end.

    A run leaves no cycle (see :meth:`lab.engine.core._scheduler.Scheduler.run`) but keeps its books until the explorer
    is done with them, so the collection that followed each run traversed about a thousand live objects, promoted
    them, and every few dozen runs went through the whole heap, to free nothing: a tenth of a line-granularity
    exploration. With the larger threshold, the books are freed (which lowers the count again) long before it is
    reached. Cycles that the code under test makes are still collected, after more allocations."""
    global _relaxed, _thresholds
    with _pausing:
        if _relaxed == 0:
            _thresholds = gc.get_threshold()
            if _thresholds[0] and _thresholds[0] < _RELAXED_THRESHOLD:
                gc.set_threshold(_RELAXED_THRESHOLD, *_thresholds[1:])
        _relaxed += 1
    try:
        yield
    finally:
        with _pausing:
            _relaxed -= 1
            if _relaxed == 0 and gc.get_threshold()[0] == _RELAXED_THRESHOLD:
                gc.set_threshold(*_thresholds)


def _after_fork_in_child() -> None:
    """A child forked while a run ran in another thread has no run of its own: the collector is back on there."""
    global _pausing, _paused_runs
    _pausing = _thread.allocate_lock()
    if _paused_runs:
        _paused_runs = 0
        gc.enable()


os.register_at_fork(after_in_child=_after_fork_in_child)
