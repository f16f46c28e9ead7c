"""Line granularity: every line executed in the modules under test becomes a scheduling point.

A learner's own session has no probe points, and an explorer that can switch threads only at probes and locks
would call a racy check-then-act green. With ``sys.settrace`` (Python 3.11 has no ``sys.monitoring``) each line
event in the chosen files hands control to the scheduler *before* the line runs, so a switch can fall between a
check and the write that relies on it.

A line announces "anything" (what it touches is only known once it ran) and executes nothing by itself: the
accesses it performs are recorded by the instrumented code (:mod:`lab.engine.accesses`) as they happen, each in the
step that really performs it -- also when a line such as ``self.count = self._read() + 1`` calls a function whose
own lines are steps, and the store completes only after the call returned.

Files are compared after resolving symlinks, so a module imported through a linked path is traced all the same.
One trap remains: an actor parked at a line while holding a lock the scheduler cannot see blocks every other actor;
the watchdog reports it as HUNG, naming the actor and its stack.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import Any

from lab.engine.footprint import EVERYTHING, NOTHING
from lab.engine.scheduler import Scheduler


class LineTracer:
    """Turns line events in ``files`` into scheduling points of ``scheduler``, for actor threads only."""

    def __init__(self, scheduler: Scheduler, files: Iterable[str | Path]) -> None:
        self._scheduler = scheduler
        self._files = {os.path.realpath(f) for f in files}
        self._seen: dict[str, str | None] = {}  # co_filename -> its label when traced, None when not

    def install(self) -> None:
        """Start tracing in the calling thread (the scheduler calls this at the start of each actor)."""
        sys.settrace(self._on_call)

    def uninstall(self) -> None:
        """Stop tracing in the calling thread."""
        sys.settrace(None)

    def _label(self, filename: str) -> str | None:
        label = self._seen.get(filename, "")
        if label == "":
            label = Path(filename).stem if os.path.realpath(filename) in self._files else None
            self._seen[filename] = label
        return label

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "call" and self._label(frame.f_code.co_filename) is not None:
            return self._on_line
        return None

    def _on_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and not self._scheduler.aborted:
            self._scheduler.point(EVERYTHING, executes=NOTHING)
            self._scheduler.record("line", self._label(frame.f_code.co_filename) or "", {"line": frame.f_lineno})
        return self._on_line
