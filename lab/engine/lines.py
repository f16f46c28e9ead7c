"""Line granularity: every line executed in the modules under test becomes a scheduling point.

A learner's own session has no probe points, and an explorer that can switch threads only at probes and locks
would call a racy check-then-act green. Each line event in the chosen code hands control to the scheduler *before*
the line runs, so a switch can fall between a check and the write that relies on it. On Python 3.12 and later the
events come from ``sys.monitoring``, enabled on the code objects under test only (nothing else pays for them); on
3.11 from ``sys.settrace``, in actor threads only. Both give the same events, so the same schedules
(``tests/test_versions.py`` compares the explorations of every interpreter the machine has).

A line announces "anything" (what it touches is only known once it ran) and executes nothing by itself: the
accesses it performs are recorded by the instrumented code (:mod:`lab.engine.accesses`) as they happen, each in the
step that really performs it -- also when a line such as ``self.count = self._read() + 1`` calls a function whose
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
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from lab.engine.scheduler import Scheduler
from lab.errors import ScheduleError

_TOOL_NAME = "concurrency-lab lines"


@functools.lru_cache(maxsize=1024)
def _resolved(path: str) -> str:
    """``path`` with its symlinks resolved, once per process (every run of an exploration builds a tracer)."""
    return os.path.realpath(path)


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
        # co_filename -> the local trace function for its frames, or None: one lookup per call event, no Python call
        # (on 3.11 the hook sees every call an actor makes, the lab's own recording included)
        self._local_trace: dict[str, Any] = {}
        self._codes = tuple(codes)
        # the code whose every access is recorded: only its lines may join a step that touched nothing (settrace
        # also reports lines of other code in a traced file, such as a function compiled at run time)
        self._joinable = frozenset(self._codes) if recorded else frozenset()
        self._monitoring = (
            sys.version_info >= (3, 12) and bool(self._codes) and os.environ.get("LAB_LINE_EVENTS", "") != "settrace"
        )

    def install(self) -> None:
        """Start tracing in the calling thread (the scheduler calls this at the start of each actor)."""
        if not self._monitoring:
            sys.settrace(self._on_call)

    def uninstall(self) -> None:
        """Stop tracing in the calling thread."""
        if not self._monitoring:
            sys.settrace(None)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """For the duration of a run: the monitoring events, on 3.12+ (settrace needs nothing here)."""
        if not self._monitoring:
            yield
            return
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 (absent on 3.11, where this is not reached)
        tool = next((t for t in range(1, 6) if monitoring.get_tool(t) is None), None)
        if tool is None:
            raise ScheduleError("line granularity needs a free sys.monitoring tool id (ids 1-5 are all taken)")
        monitoring.use_tool_id(tool, _TOOL_NAME)
        line = monitoring.events.LINE
        monitoring.register_callback(tool, line, self._on_monitored_line)
        try:
            for code in self._codes:
                monitoring.set_local_events(tool, code, line)
            yield
        finally:
            for code in self._codes:
                monitoring.set_local_events(tool, code, 0)
            monitoring.register_callback(tool, line, None)
            monitoring.free_tool_id(tool)

    def _on_monitored_line(self, code: CodeType, line: int) -> None:
        label = self._seen.get(code.co_filename)
        self._scheduler.line(
            label if label is not None else self._label(code.co_filename) or "", line, join_invisible=self._join
        )

    def _label(self, filename: str) -> str | None:
        label = self._seen.get(filename, "")
        if label == "":
            label = Path(filename).stem if _resolved(filename) in self._files else None
            self._seen[filename] = label
        return label

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        filename = frame.f_code.co_filename  # the global hook gets "call" events only
        try:
            return self._local_trace[filename]
        except KeyError:
            found = self._local_trace[filename] = self._on_line if self._label(filename) is not None else None
            return found

    def _on_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":  # a frame of a traced file: its label is known (see _on_call)
            code = frame.f_code
            label = self._seen[code.co_filename] or ""
            self._scheduler.line(label, frame.f_lineno, join_invisible=code in self._joinable)
        return self._on_line
