"""Synchronisation the scheduler can see: one model per primitive, used by the lab's own primitives and by the
standard library's stand-ins alike, plus probe points and virtual time.

One module per primitive, each holding its model and its faces:

- ``_lock`` (the lock model and the lab's ``LabLock``), ``_lock_stand_in`` (``threading.Lock``), ``_rlock``,
  ``_condition``;
- ``_event`` (the lab's one-shot event, the ``threading.Event`` stand-in), ``_barrier`` (both faces as well);
- ``_semaphore``, ``_queue`` (stand-ins only), ``_latch`` (the lab's only);
- ``_probe``: probe points made scheduling points (a latch may hold an actor at one);
- ``_sleep``: ``time.sleep``, ``monotonic`` and ``time`` on the run's virtual clock.

``_standard`` installs the stand-ins for the length of one run (:func:`scheduler_aware_primitives`), on what they
share in ``_standard_base`` (the genuine articles, the active run, deterministic names, timed waits).
"""

from __future__ import annotations

from lab.engine.sync._barrier import Barrier
from lab.engine.sync._event import Event
from lab.engine.sync._latch import Latch
from lab.engine.sync._lock import LabLock
from lab.engine.sync._probe import FREE_ACTOR, ProbeHook, Probes
from lab.engine.sync._standard import scheduler_aware_primitives

__all__ = [
    "FREE_ACTOR",
    "Barrier",
    "Event",
    "LabLock",
    "Latch",
    "ProbeHook",
    "Probes",
    "scheduler_aware_primitives",
]
