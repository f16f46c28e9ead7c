"""Stand-ins for ``threading.Semaphore`` and ``BoundedSemaphore`` (see :mod:`lab.engine.sync._standard`)."""

from __future__ import annotations

from typing import Any, ClassVar

from lab.engine.core._footprint import writes
from lab.engine.sync._standard_base import (
    _REAL_BOUNDED_SEMAPHORE,
    _REAL_SEMAPHORE,
    _acting,
    _caller_keeps_real,
    _new_name,
    _raw,
    _timed,
    _wait,
)


class Semaphore(_REAL_SEMAPHORE):
    """The stand-in for ``threading.Semaphore``: acquire and release are scheduling points inside actors."""

    _label: ClassVar[str] = "Semaphore"
    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)
    _real_class: ClassVar[type[Any]] = _REAL_SEMAPHORE

    def __new__(cls, value: int = 1) -> Any:
        if cls in (Semaphore, BoundedSemaphore) and _caller_keeps_real(1):
            return cls._real_class(value)
        return super().__new__(cls)

    def __init__(self, value: int = 1) -> None:
        # threading.BoundedSemaphore.__init__ calls Semaphore.__init__ through the module global, which is this
        # class during a run: call the real one by name instead.
        _REAL_SEMAPHORE.__init__(self, value)
        self.lab_name = _new_name(self._label)
        self.lab_footprint = writes("semaphore", self.lab_name)

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take one unit, waiting while there is none (the standard library's semantics)."""
        acting = _acting()
        if acting is None:
            return super().acquire(blocking, timeout)
        if not blocking and timeout is not None:
            raise ValueError("can't specify timeout for non-blocking acquire")
        run, me = acting
        raw = _raw(self)
        run.scheduler.point(_timed(self.lab_footprint, timeout))
        if raw._value == 0:
            if not blocking:
                run.scheduler.record("semaphore.busy", self.lab_name)
                return False
            run.scheduler.record("semaphore.wait", self.lab_name)
            describe = lambda: f"semaphore {self.lab_name!r} to be released"  # noqa: E731
            if not _wait(run, me, lambda: raw._value > 0, describe, timeout):
                run.scheduler.record("semaphore.timeout", self.lab_name, {"clock": run.clock})
                return False
        with raw._cond:
            raw._value -= 1
        run.scheduler.record("semaphore.acquire", self.lab_name, {"value": raw._value})
        return True

    __enter__ = acquire

    def release(self, n: int = 1) -> None:
        """Give ``n`` units back (a bounded semaphore refuses to go above its initial value)."""
        acting = _acting()
        if acting is None:
            super().release(n)
            return
        if n < 1:
            raise ValueError("n must be one or more")
        acting[0].scheduler.point(self.lab_footprint)
        super().release(n)
        acting[0].scheduler.record("semaphore.release", self.lab_name, {"value": _raw(self)._value})

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<lab stand-in {self._label} {self.lab_name!r} value={_raw(self)._value}>"


class BoundedSemaphore(Semaphore, _REAL_BOUNDED_SEMAPHORE):
    """The stand-in for ``threading.BoundedSemaphore``."""

    _label: ClassVar[str] = "BoundedSemaphore"
    _real_class: ClassVar[type[Any]] = _REAL_BOUNDED_SEMAPHORE

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        _raw(self)._initial_value = value
