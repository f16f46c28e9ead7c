"""The model of a queue: the stand-ins for ``queue.Queue``, ``LifoQueue``, ``PriorityQueue``, ``SimpleQueue`` (see
:mod:`lab.engine.sync._standard`); the lab has no queue of its own."""

from __future__ import annotations

import queue
from typing import Any, ClassVar

from lab.engine.core._footprint import writes
from lab.engine.sync._standard_base import (
    _REAL_LIFO_QUEUE,
    _REAL_PRIORITY_QUEUE,
    _REAL_QUEUE,
    _REAL_SIMPLE_QUEUE,
    _acting,
    _caller_keeps_real,
    _new_name,
    _timed,
    _touch,
    _wait,
)


class _StandInQueue(_REAL_QUEUE):  # type: ignore[type-arg]
    """Scheduling points for ``put``, ``get``, ``task_done`` and ``join``; the storage is the real queue class's."""

    _label: ClassVar[str] = "Queue"
    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)
    _real_class: ClassVar[type[Any]] = _REAL_QUEUE

    def __new__(cls, maxsize: int = 0) -> Any:
        if cls in _QUEUE_STAND_INS and _caller_keeps_real(1):
            return cls._real_class(maxsize)
        return super().__new__(cls)

    def __init__(self, maxsize: int = 0) -> None:
        super().__init__(maxsize)
        self.lab_name = _new_name(self._label)
        self.lab_footprint = writes("queue", self.lab_name)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Put ``item``, waiting for room in a bounded queue (raises ``queue.Full`` when it cannot)."""
        acting = _acting()
        if acting is None:
            super().put(item, block, timeout)
            return
        run, me = acting
        if self.maxsize > 0 and block and timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        run.scheduler.point(_timed(self.lab_footprint, timeout if block and self.maxsize > 0 else None))
        if self.maxsize > 0 and self._qsize() >= self.maxsize:
            if not block:
                run.scheduler.record("queue.full", self.lab_name)
                raise queue.Full
            run.scheduler.record("queue.wait", self.lab_name, {"for": "room"})
            describe = lambda: f"queue {self.lab_name!r} to have room"  # noqa: E731
            if not _wait(run, me, lambda: self._qsize() < self.maxsize, describe, timeout):
                run.scheduler.record("queue.timeout", self.lab_name, {"clock": run.clock})
                raise queue.Full
        with self.mutex:
            self._put(item)
            self.unfinished_tasks += 1
            self.not_empty.notify()
        run.scheduler.record("queue.put", self.lab_name, {"size": self._qsize()})

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Take an item, waiting for one (raises ``queue.Empty`` when it cannot)."""
        acting = _acting()
        if acting is None:
            return super().get(block, timeout)
        run, me = acting
        if block and timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        run.scheduler.point(_timed(self.lab_footprint, timeout if block else None))
        if not self._qsize():
            if not block:
                run.scheduler.record("queue.empty", self.lab_name)
                raise queue.Empty
            run.scheduler.record("queue.wait", self.lab_name, {"for": "an item"})
            describe = lambda: f"queue {self.lab_name!r} to get an item"  # noqa: E731
            if not _wait(run, me, lambda: self._qsize() > 0, describe, timeout):
                run.scheduler.record("queue.timeout", self.lab_name, {"clock": run.clock})
                raise queue.Empty
        with self.mutex:
            item = self._get()
            self.not_full.notify()
        run.scheduler.record("queue.get", self.lab_name, {"size": self._qsize()})
        return item

    def task_done(self) -> None:
        """Mark one item as processed (``ValueError`` when called more times than items were put)."""
        acting = _acting()
        if acting is None:
            super().task_done()
            return
        acting[0].scheduler.point(self.lab_footprint)
        super().task_done()
        acting[0].scheduler.record("queue.task_done", self.lab_name, {"unfinished": self.unfinished_tasks})

    def join(self) -> None:
        """Wait until every item put has been marked done."""
        acting = _acting()
        if acting is None:
            super().join()
            return
        run, me = acting
        run.scheduler.point(self.lab_footprint)
        run.scheduler.record("queue.join", self.lab_name, {"unfinished": self.unfinished_tasks})
        describe = lambda: f"queue {self.lab_name!r} to finish {self.unfinished_tasks} task(s)"  # noqa: E731
        if self.unfinished_tasks:
            _wait(run, me, lambda: self.unfinished_tasks == 0, describe, None)
            run.scheduler.record("queue.joined", self.lab_name)

    def qsize(self) -> int:
        """How many items are queued (a read of the queue, for the explorer)."""
        _touch(("queue", self.lab_name, "r"))
        return super().qsize()

    def empty(self) -> bool:
        """True when no item is queued."""
        _touch(("queue", self.lab_name, "r"))
        return super().empty()

    def full(self) -> bool:
        """True when a bounded queue has no room."""
        _touch(("queue", self.lab_name, "r"))
        return super().full()

    def __repr__(self) -> str:
        return f"<lab stand-in {self._label} {self.lab_name!r} size={self._qsize()}>"


class Queue(_StandInQueue):
    """The stand-in for ``queue.Queue``."""


class LifoQueue(_StandInQueue, _REAL_LIFO_QUEUE):  # type: ignore[type-arg]
    """The stand-in for ``queue.LifoQueue``."""

    _label: ClassVar[str] = "LifoQueue"
    _real_class: ClassVar[type[Any]] = _REAL_LIFO_QUEUE


class PriorityQueue(_StandInQueue, _REAL_PRIORITY_QUEUE):  # type: ignore[type-arg]
    """The stand-in for ``queue.PriorityQueue``."""

    _label: ClassVar[str] = "PriorityQueue"
    _real_class: ClassVar[type[Any]] = _REAL_PRIORITY_QUEUE


_QUEUE_STAND_INS = (Queue, LifoQueue, PriorityQueue)


class SimpleQueue(_REAL_SIMPLE_QUEUE):  # type: ignore[type-arg]
    """The stand-in for ``queue.SimpleQueue`` (unbounded: only ``get`` waits)."""

    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)

    def __new__(cls) -> Any:
        if cls is SimpleQueue and _caller_keeps_real(1):
            return _REAL_SIMPLE_QUEUE()
        return super().__new__(cls)

    def __init__(self) -> None:
        self.lab_name = _new_name("SimpleQueue")
        self.lab_footprint = writes("queue", self.lab_name)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Put ``item`` (never waits)."""
        acting = _acting()
        if acting is None:
            super().put(item, block, timeout)
            return
        acting[0].scheduler.point(self.lab_footprint)
        super().put(item)
        acting[0].scheduler.record("queue.put", self.lab_name, {"size": super().qsize()})

    def put_nowait(self, item: Any) -> None:
        """Put ``item``."""
        self.put(item, block=False)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Take an item, waiting for one (raises ``queue.Empty`` when it cannot)."""
        acting = _acting()
        if acting is None:
            return super().get(block, timeout)
        run, me = acting
        if block and timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        run.scheduler.point(_timed(self.lab_footprint, timeout if block else None))
        if not super().qsize():
            if not block:
                run.scheduler.record("queue.empty", self.lab_name)
                raise queue.Empty
            run.scheduler.record("queue.wait", self.lab_name, {"for": "an item"})
            describe = lambda: f"queue {self.lab_name!r} to get an item"  # noqa: E731
            if not _wait(run, me, lambda: _REAL_SIMPLE_QUEUE.qsize(self) > 0, describe, timeout):
                run.scheduler.record("queue.timeout", self.lab_name, {"clock": run.clock})
                raise queue.Empty
        item = super().get(False)
        run.scheduler.record("queue.get", self.lab_name, {"size": super().qsize()})
        return item

    def get_nowait(self) -> Any:
        """Take an item or raise ``queue.Empty``."""
        return self.get(False)

    def qsize(self) -> int:
        """How many items are queued (a read of the queue, for the explorer)."""
        _touch(("queue", self.lab_name, "r"))
        return super().qsize()

    def empty(self) -> bool:
        """True when no item is queued."""
        _touch(("queue", self.lab_name, "r"))
        return super().empty()

    def __repr__(self) -> str:
        return f"<lab stand-in SimpleQueue {self.lab_name!r} size={super().qsize()}>"
