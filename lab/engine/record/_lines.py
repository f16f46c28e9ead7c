"""Line granularity: every line executed in the modules under test becomes a scheduling point.

A learner's own session has no probe points, and an explorer that can switch threads only at probes and locks
would call a racy check-then-act green. Each line event in the chosen code hands control to the scheduler *before*
the line runs, so a switch can fall between a check and the write that relies on it. On Python 3.12 and later the
events come from ``sys.monitoring``, enabled on the code objects under test only (nothing else pays for them); on
3.11 from ``sys.settrace``, in actor threads only. Both give the same events, so the same schedules
(``tests/test_versions.py`` compares the explorations of every interpreter the machine has).

A line announces "anything" (what it touches is only known once it ran) and executes nothing by itself: the
accesses it performs are recorded by the instrumented code (:mod:`lab.engine.record._runtime`) as they happen, each
in the step that really performs it -- also when a line such as ``self.count = self._read() + 1`` calls a function whose
own lines are steps, and the store completes only after the call returned.

When the run records every access (a scenario's run does), a line that follows a step which touched nothing shared
joins that step instead of being a point of its own (see :meth:`Scheduler.line`): about half of all lines touch only
locals, and a switch before such a line orders nothing that a switch before the step does not.

Files are compared after resolving symlinks, so a module imported through a linked path is traced all the same.
One trap remains: an actor parked at a line while holding a lock the scheduler cannot see blocks every other actor;
the watchdog reports it as HUNG, naming the actor and its stack.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from lab.engine.core._scheduler import Scheduler
from lab.errors import ScheduleError

_TOOL_NAME = "concurrency-lab lines"


@functools.lru_cache(maxsize=1024)
def _resolved(path: str) -> str:
    """``path`` with its symlinks resolved, once per process (every run of an exploration builds a tracer)."""
    return os.path.realpath(path)


class _LineEvents:
    """The process's registration of line events with ``sys.monitoring`` (3.12+): one tool id, one callback that
    hands each event to the tracer of the calling thread's run, and the events enabled on the code of every run that
    needs them. Runs that overlap, or that an exploration keeps together (:func:`line_events_kept`), share it; the
    last one to end disables the events and frees the tool. Enabling events on a code object and disabling them
    again re-instruments its bytecode: done for every run of an exploration, it cost more than the run's lines."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._tool = 0
        self._enabled: set[CodeType] = set()
        self._sets: list[frozenset[CodeType]] = []  # the sets of codes enabled so far, told apart by identity

    def acquire(self, codes: frozenset[CodeType]) -> None:
        """One more user; line events on ``codes`` from now until the last user releases."""
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 (absent on 3.11, where this is not reached)
        line = monitoring.events.LINE
        with self._lock:
            if self._users == 0:
                tool = next((t for t in range(1, 6) if monitoring.get_tool(t) is None), None)
                if tool is None:
                    raise ScheduleError("line granularity needs a free sys.monitoring tool id (ids 1-5 are all taken)")
                monitoring.use_tool_id(tool, _TOOL_NAME)
                monitoring.register_callback(tool, line, _on_line_event)
                self._tool = tool
            self._users += 1
            if any(codes is done for done in self._sets):
                return  # the same set as a run before (one per scenario class): enabled already
            self._sets.append(codes)
            for code in codes:
                if code not in self._enabled:
                    monitoring.set_local_events(self._tool, code, line)
                    self._enabled.add(code)

    def release(self) -> None:
        """One user fewer; the last one leaves no event enabled and no tool taken."""
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009
        with self._lock:
            self._users -= 1
            if self._users:
                return
            for code in self._enabled:
                monitoring.set_local_events(self._tool, code, 0)
            self._enabled.clear()
            self._sets.clear()
            monitoring.register_callback(self._tool, monitoring.events.LINE, None)
            monitoring.free_tool_id(self._tool)


_LINE_EVENTS = _LineEvents()
_thread_tracer = threading.local()
"""``tracer``: the :class:`LineTracer` of the run whose actor is the calling thread (set while the actor runs)."""


def _on_line_event(code: CodeType, line: int) -> None:
    tracer: LineTracer | None = getattr(_thread_tracer, "tracer", None)
    if tracer is not None:  # a thread that is no actor (the main thread during setup) runs its lines unscheduled
        tracer._on_monitored_line(code, line)


@contextlib.contextmanager
def line_events_kept() -> Iterator[None]:
    """Keep line events registered from one run to the next (an exploration's thousands of runs), not set up and
    torn down for each; nothing on Python 3.11, or where ``LAB_LINE_EVENTS=settrace`` asks for the tracing hook."""
    if sys.version_info < (3, 12) or os.environ.get("LAB_LINE_EVENTS", "") == "settrace":
        yield
        return
    _LINE_EVENTS.acquire(frozenset())
    try:
        yield
    finally:
        _LINE_EVENTS.release()


class LineTracer:
    """Turns line events in ``files`` into scheduling points of ``scheduler``, for actor threads only.

    ``codes``, when given (the rewritten code objects of those files), lets Python 3.12+ use ``sys.monitoring``;
    set ``LAB_LINE_EVENTS=settrace`` in the environment to force the tracing hook anyway. ``recorded`` says that the
    run records every access (see :meth:`Scheduler.line`): a line after a step that touched nothing joins it.
    """

    def __init__(
        self,
        scheduler: Scheduler,
        files: Iterable[str | Path],
        codes: Iterable[CodeType] = (),
        *,
        recorded: bool = False,
    ) -> None:
        self._scheduler = scheduler
        self._join = recorded
        self._files = {_resolved(str(f)) for f in files}
        self._seen: dict[str, str | None] = {}  # co_filename -> its label when traced, None when not
        # co_filename -> whether its frames are traced: one lookup per call event, no Python call (on 3.11 the hook
        # sees every call an actor makes, the lab's own recording included)
        self._local_trace: dict[str, bool] = {}
        # a frozenset the caller keeps (one per scenario class) is taken as it is: a code object hashes its whole
        # contents, and making the set anew cost more than a run's lines
        self._traced = codes if isinstance(codes, frozenset) else frozenset(codes)
        # the code whose every access is recorded: only its lines may join a step that touched nothing (settrace
        # also reports lines of other code in a traced file, such as a function compiled at run time)
        # told apart by identity: a code object's hash is computed from its whole contents, at every event
        self._traced_ids = frozenset(map(id, self._traced))
        self._joinable = self._traced_ids if recorded else frozenset()
        self._monitoring = (
            sys.version_info >= (3, 12) and bool(self._traced) and os.environ.get("LAB_LINE_EVENTS", "") != "settrace"
        )

    def install(self) -> None:
        """Start tracing in the calling thread (the scheduler calls this at the start of each actor)."""
        if self._monitoring:
            _thread_tracer.tracer = self
        else:
            sys.settrace(self._on_call)

    def uninstall(self) -> None:
        """Stop tracing in the calling thread."""
        if self._monitoring:
            _thread_tracer.tracer = None
        else:
            sys.settrace(None)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """For the duration of a run: the monitoring events, on 3.12+ (settrace needs nothing here)."""
        if not self._monitoring:
            yield
            return
        _LINE_EVENTS.acquire(self._traced)
        try:
            yield
        finally:
            _LINE_EVENTS.release()

    def _on_monitored_line(self, code: CodeType, line: int) -> None:
        if id(code) not in self._traced_ids:
            return  # code another run enabled events on, while an exploration keeps them (see _LineEvents)
        label = self._seen.get(code.co_filename, "")
        if label == "":
            label = self._label(code.co_filename)
        if label is not None:  # a code object given of a file not named: its lines are not points, as with settrace
            self._scheduler.line(label, line, join_invisible=self._join)

    def _label(self, filename: str) -> str | None:
        label = self._seen.get(filename, "")
        if label == "":
            label = Path(filename).stem if _resolved(filename) in self._files else None
            self._seen[filename] = label
        return label

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        filename = frame.f_code.co_filename  # the global hook gets "call" events only
        traced = self._local_trace.get(filename)
        if traced is None:
            traced = self._local_trace[filename] = self._label(filename) is not None
        # a fresh bound method, not one kept in the tracer: kept, it would make the tracer (and through it the
        # scheduler and the whole run's books) a cycle that only the garbage collector frees
        return self._on_line if traced else None

    def _on_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":  # a frame of a traced file: its label is known (see _on_call)
            code = frame.f_code
            label = self._seen[code.co_filename] or ""
            self._scheduler.line(label, frame.f_lineno, join_invisible=id(code) in self._joinable)
        return self._on_line
