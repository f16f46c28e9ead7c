"""Synchronisation the scheduler can see: the lab's own primitives, probe points, and the standard library's
stand-ins installed for a run.

- ``_primitives``: latches, events, barriers and the lab's lock;
- ``_probes``: probe points made scheduling points (a latch may hold an actor at one);
- ``_standard`` and its families (``_standard_locks``, ``_standard_events``, ``_standard_semaphores``,
  ``_standard_queues``, on what they share in ``_standard_base``): ``threading`` and ``queue`` stand-ins and
  virtual time, installed for the length of one run (:func:`scheduler_aware_primitives`).
"""

from __future__ import annotations

from lab.engine.sync._lock import LabLock
from lab.engine.sync._primitives import Barrier, Event, Latch
from lab.engine.sync._probes import ProbeHook, Probes
from lab.engine.sync._standard import scheduler_aware_primitives

__all__ = [
    "Barrier",
    "Event",
    "LabLock",
    "Latch",
    "ProbeHook",
    "Probes",
    "scheduler_aware_primitives",
]
