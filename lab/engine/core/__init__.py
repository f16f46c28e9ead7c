"""The core: the scheduler that runs actors one at a time over real threads, and the vocabulary of one run.

One run is :func:`execute` (or a :class:`Scheduler` driven by hand): actors, a policy that names who runs at each
scheduling point, and what comes back (:class:`RunResult`, its trace, its decisions, what each step touched). The
pieces behind this face, each in its own private module:

- ``_scheduler``: the state machine, one part per module (``_state`` its fields, ``_handoff`` the baton, blocking
  and waking, ``_reports`` what primitives tell it, ``_actor_life`` an actor's thread, ``_watchdog`` hangs and
  leaks, ``_view`` what a decision point shows, ``_collector`` the garbage collector around runs, ``_actor`` one
  actor's record), and ``_pool``, the actor threads kept across runs;
- ``_policies`` and ``_schedule``: who runs next, and schedule strings with the policy that replays one;
- ``_run``, ``_trace``, ``_steps``, ``_footprint``: what a run produced, in plain values every layer reads;
- ``_granularity``: how finely actors may be interleaved, the one vocabulary every layer uses.

The core knows nothing of what it runs: it imports only :mod:`lab.hooks` and :mod:`lab.errors`.
"""

from __future__ import annotations

from lab.engine.core._collector import collector_relaxed
from lab.engine.core._execute import BARE, Actors, Install, MakeActors, RunSettings, execute
from lab.engine.core._footprint import (
    ANY_KEY,
    EVERYTHING,
    NOTHING,
    Entry,
    Footprint,
    conflict,
    describe_entry,
    entries_conflict,
    writes,
)
from lab.engine.core._granularity import Granularity
from lab.engine.core._policies import DecisionPoint, KeepCurrent, Policy
from lab.engine.core._pool import ACTOR_POOL
from lab.engine.core._run import Access, ActorEnd, BlockedActor, Decision, RunResult, RunStatus
from lab.engine.core._schedule import ReplayPolicy, parse_schedule, read_schedule, schedule_length, schedule_string
from lab.engine.core._scheduler import Scheduler
from lab.engine.core._steps import StepLog
from lab.engine.core._trace import Json, TraceEvent, encode_trace, sorted_detail, trace_digest
from lab.engine.core._watchdog import DEFAULT_WATCHDOG_SECONDS

__all__ = [
    "ACTOR_POOL",
    "ANY_KEY",
    "BARE",
    "DEFAULT_WATCHDOG_SECONDS",
    "EVERYTHING",
    "NOTHING",
    "Access",
    "ActorEnd",
    "Actors",
    "BlockedActor",
    "Decision",
    "DecisionPoint",
    "Entry",
    "Footprint",
    "Granularity",
    "Install",
    "Json",
    "KeepCurrent",
    "MakeActors",
    "Policy",
    "ReplayPolicy",
    "RunResult",
    "RunSettings",
    "RunStatus",
    "Scheduler",
    "StepLog",
    "TraceEvent",
    "collector_relaxed",
    "conflict",
    "describe_entry",
    "encode_trace",
    "entries_conflict",
    "execute",
    "parse_schedule",
    "read_schedule",
    "schedule_length",
    "schedule_string",
    "sorted_detail",
    "trace_digest",
    "writes",
]
