"""Primitives made before the run: a module's ``_LOCK = threading.Lock()`` at import, a class's ``lock =
threading.Lock()``, given a scheduler-aware twin for the length of one run.

The stand-ins replace the *factories* (``threading.Lock`` and the rest) while a run lasts, so a lock made at import
time, before any run, is the real one: an actor that blocks on it blocks its thread where the scheduler cannot see,
and a correct program ends HUNG with the actor blamed. The code under test reaches such a primitive through a module
global or a class attribute, so those two places are rebound: each real primitive found there, in the state it was
made in (a lock nobody holds, an event not yet set, a semaphore, a queue), is replaced for the run by a stand-in
in the same state (a lock is named after where it lives, ``premade._LOCK``, ``premade.Account.lock``), and put
back after.
Every run starts from the real object's state, as every execution must be a fresh program. A primitive in use when
the run starts (a lock held, a condition over a lock that is not free) is left as it is.

Objects reached another way (an instance attribute set in ``__init__`` at import time, a list of locks) stay real:
``docs/writing-scenarios.md`` says to make them in ``setup()``.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

from lab.engine.sync._condition import Condition
from lab.engine.sync._event import StandardEvent
from lab.engine.sync._lock_stand_in import Lock
from lab.engine.sync._queue import LifoQueue, PriorityQueue, Queue
from lab.engine.sync._rlock import RLock
from lab.engine.sync._semaphore import BoundedSemaphore, Semaphore
from lab.engine.sync._standard_base import (
    _REAL_ALLOCATE_LOCK,
    _REAL_BOUNDED_SEMAPHORE,
    _REAL_CONDITION,
    _REAL_EVENT,
    _REAL_QUEUE,
    _REAL_RLOCK,
    _REAL_SEMAPHORE,
)

_LOCK_TYPE = type(_REAL_ALLOCATE_LOCK())
_RLOCK_TYPE = _REAL_RLOCK
_STAND_IN_QUEUES: dict[type, type] = {queue.LifoQueue: LifoQueue, queue.PriorityQueue: PriorityQueue}

Saved = list[tuple[Any, str, object]]
"""Where each twin went and what it replaced: ``(namespace or class, name, the real object)``."""


def rebind_made_before(namespaces: list[dict[str, Any]]) -> Saved:
    """Give every real primitive in ``namespaces`` (module globals) and in the classes they define a stand-in twin;
    return what to put back. Call it with the run's stand-ins active (their names and clock are the run's)."""
    saved: Saved = []
    for namespace in namespaces:
        module = str(namespace.get("__name__", "")).rsplit(".", 1)[-1]
        for name, value in list(namespace.items()):
            twin = _twin(value, f"{module}.{name}")
            if twin is not None:
                saved.append((namespace, name, value))
                namespace[name] = twin
            elif isinstance(value, type) and value.__module__ == namespace.get("__name__"):
                saved += _rebind_class(value, f"{module}.{value.__qualname__}")
    return saved


def _rebind_class(cls: type, label: str) -> Saved:
    saved: Saved = []
    for name, value in list(vars(cls).items()):
        twin = _twin(value, f"{label}.{name}")
        if twin is not None:
            saved.append((cls, name, value))
            setattr(cls, name, twin)
    return saved


def _twin(value: object, name: str) -> object | None:
    """A stand-in in the state of ``value``, or ``None`` when it is no real primitive, or one in use."""
    kind = type(value)
    make = _TWINS.get(kind)
    if make is None:
        if isinstance(value, _REAL_QUEUE) and not hasattr(value, "lab_name"):
            return _queue_twin(value, name)
        return None
    return make(value, name)


def _lock_twin(value: Any, name: str) -> object | None:
    return None if value.locked() else Lock(name)


def _rlock_twin(value: Any, name: str) -> object | None:
    if value._is_owned() or not value.acquire(blocking=False):  # held, by this thread or another: in use
        return None
    value.release()
    return RLock(name)


def _event_twin(value: Any, name: str) -> object:
    twin = _make(StandardEvent)
    if value.is_set():
        twin.set()  # from this thread, not an actor: as the real event would be set
    return twin


def _semaphore_twin(value: Any, name: str) -> object:
    bounded = isinstance(value, _REAL_BOUNDED_SEMAPHORE)
    twin: Any = _make(BoundedSemaphore, value._initial_value) if bounded else _make(Semaphore, 0)
    twin._value = value._value
    return twin


def _condition_twin(value: Any, name: str) -> object | None:
    inner = value._lock
    lock = _twin(inner, f"{name}.lock")
    if lock is None:
        return None
    twin: object = _make(Condition, lock)
    return twin


def _queue_twin(value: Any, name: str) -> object | None:
    if value.mutex.locked():
        return None
    twin = _make(_STAND_IN_QUEUES.get(type(value), Queue), value.maxsize)
    for item in list(value.queue):
        twin._put(item)
    twin.unfinished_tasks = value.unfinished_tasks  # puts not yet marked done stay so
    made: object = twin
    return made


def _make(cls: type, *args: object) -> Any:
    """A stand-in of ``cls``, made here: its constructor would give the lab's machinery (this module) a real one."""
    twin: Any = object.__new__(cls)
    cls.__init__(twin, *args)  # type: ignore[misc]
    return twin


_TWINS: dict[type, Callable[[Any, str], object | None]] = {
    _LOCK_TYPE: _lock_twin,
    _RLOCK_TYPE: _rlock_twin,
    _REAL_EVENT: _event_twin,
    _REAL_SEMAPHORE: _semaphore_twin,
    _REAL_BOUNDED_SEMAPHORE: _semaphore_twin,
    _REAL_CONDITION: _condition_twin,
}

__all__ = ["rebind_made_before"]
