"""The engine: a deterministic scheduler over real threads, and the systematic exploration of its schedules.

Its one job is to run actors one at a time in an order it alone decides, record what each did (the trace, and what
each step touched), and explore the orders that matter: the scheduler and its policies, the primitives it can see
(latches, events, barriers, lab locks, probes, and stand-ins for the standard library's), the instrumentation that
records shared accesses and line events, the explorer (optimal DPOR) and replay. It knows nothing of chat or lessons:
it imports only :mod:`lab.hooks` and :mod:`lab.errors`, so it could test any lock-guarded object.
"""

from __future__ import annotations

from lab.engine.accesses import Recording, start_recording
from lab.engine.atomicity import AtomicityCheck, run_parts
from lab.engine.explorer import (
    DEFAULT_MAX_SCHEDULES,
    Execution,
    Exploration,
    Explorer,
    NondeterminismError,
    RunOnce,
    tally,
)
from lab.engine.footprint import Entry, Footprint, conflict, describe_entry, entries_conflict
from lab.engine.granularity import Granularity
from lab.engine.instrument import InstrumentedModule, InstrumentError, instrument_module, instrumented_function
from lab.engine.lines import LineTracer, line_events_kept
from lab.engine.policies import DecisionPoint, KeepCurrent, Policy
from lab.engine.pool import ACTOR_POOL
from lab.engine.primitives import Barrier, Event, LabLock, Latch
from lab.engine.probes import ProbeHook, Probes
from lab.engine.run import ActorEnd, BlockedActor, RunResult, RunStatus
from lab.engine.schedule import ReplayPolicy, parse_schedule, read_schedule, schedule_string
from lab.engine.scheduler import DEFAULT_WATCHDOG_SECONDS, Scheduler, collector_relaxed
from lab.engine.standard import scheduler_aware_primitives
from lab.engine.trace import Json, TraceEvent, encode_trace, sorted_detail

__all__ = [
    "ACTOR_POOL",
    "DEFAULT_MAX_SCHEDULES",
    "DEFAULT_WATCHDOG_SECONDS",
    "ActorEnd",
    "AtomicityCheck",
    "Barrier",
    "BlockedActor",
    "DecisionPoint",
    "Entry",
    "Event",
    "Execution",
    "Exploration",
    "Explorer",
    "Footprint",
    "Granularity",
    "InstrumentError",
    "InstrumentedModule",
    "Json",
    "KeepCurrent",
    "LabLock",
    "Latch",
    "LineTracer",
    "NondeterminismError",
    "Policy",
    "ProbeHook",
    "Probes",
    "Recording",
    "ReplayPolicy",
    "RunOnce",
    "RunResult",
    "RunStatus",
    "Scheduler",
    "TraceEvent",
    "collector_relaxed",
    "conflict",
    "describe_entry",
    "encode_trace",
    "entries_conflict",
    "instrument_module",
    "instrumented_function",
    "line_events_kept",
    "parse_schedule",
    "read_schedule",
    "run_parts",
    "schedule_string",
    "scheduler_aware_primitives",
    "sorted_detail",
    "start_recording",
    "tally",
]
