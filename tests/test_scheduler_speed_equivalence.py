"""The scheduler's shortcuts change its cost, never what a run records.

Per decision the scheduler makes no Python call it can avoid (at line granularity on 3.11 each one is also a trace
event): it builds trace events without the dataclass constructor, decision points without ``__init__``, answers a
point's questions itself, opens each step of the :class:`StepLog` itself, and hands out one runnable tuple and one
:class:`Decision` per choice, shared by every run of the same actors. These tests hold each shortcut to what the
plain way gives.
"""

from __future__ import annotations

import dataclasses

import pytest

from lab.engine.core import (
    EVERYTHING,
    NOTHING,
    Access,
    Decision,
    DecisionPoint,
    Footprint,
    RunStatus,
    Scheduler,
    StepLog,
    TraceEvent,
    sorted_detail,
    writes,
)
from lab.engine.sync import LabLock, Latch


class _Alternate:
    """Switch to another actor at every point where one can run."""

    def choose(self, point: DecisionPoint) -> str:
        others = [name for name in point.runnable if name != point.current]
        return others[0] if others else point.runnable[0]


def _busy(s: Scheduler, lock: LabLock, name: str) -> None:
    for k in range(3):
        s.point(writes("probe", name), executes=NOTHING)
        s.record("note", name, {"z": k, "a": name, "m": [k]})
        s.line(name, 10 + k)
        with lock:
            s.access_all([("obj:x", "n", "r"), ("obj:x", "n", "w")], (name, k))
            s.access(("obj:y", name, "w"), (name, 100 + k))
            s.point(EVERYTHING)  # a switch while the lock is held: the other actor's acquire waits at its gate


def _two_busy_actors(policy: object = None) -> tuple[Scheduler, LabLock]:
    s = Scheduler(policy=_Alternate() if policy is None else policy)  # type: ignore[arg-type]
    lock = LabLock(s, "l")
    s.add_actor("a", lambda: _busy(s, lock, "a"))
    s.add_actor("b", lambda: _busy(s, lock, "b"))
    return s, lock


@pytest.mark.timeout(20)
class TestShortcuts:
    def test_trace_events_equal_the_constructors(self) -> None:
        """Events made field by field are the events the constructor makes, details sorted by key."""
        assert [f.name for f in dataclasses.fields(TraceEvent)] == ["step", "actor", "op", "obj", "detail"]
        s, _lock = _two_busy_actors()
        result = s.run()
        assert result.status is RunStatus.FINISHED
        assert {e.op for e in result.trace} >= {"start", "note", "line", "lock.acquire", "end"}
        for k, event in enumerate(result.trace):
            assert type(event) is TraceEvent and event.step == k
            assert event == TraceEvent(event.step, event.actor, event.op, event.obj, sorted_detail(event.detail))
            assert list(event.detail) == sorted(event.detail)
            assert hash(event.to_line()) == hash(TraceEvent(**dataclasses.asdict(event)).to_line())

    def test_points_answer_as_the_run_view(self) -> None:
        """What a decision point says is what the scheduler's RunView methods say at that moment."""
        seen: list[tuple[dict[str, Footprint], dict[str, str], Footprint]] = []

        class _Asking(_Alternate):
            def choose(self, point: DecisionPoint) -> str:
                assert isinstance(point, DecisionPoint)
                assert point.pending() == s.pending_footprints()
                assert point.held() == s.locks_held()
                assert point.last_step() == s.last_step()
                seen.append((point.pending(), point.held(), point.last_step()))
                return super().choose(point)

        s, _lock = _two_busy_actors(_Asking())
        assert s.run().status is RunStatus.FINISHED
        assert any(held for _p, held, _l in seen) and any(last for _p, _h, last in seen)
        assert any(len(pending) == 2 for pending, _h, _l in seen)

    def test_decisions_are_shared_by_runs_of_the_same_actors(self) -> None:
        """Equal decisions of two runs are one object, and equal to a Decision made anew."""
        first = _two_busy_actors()[0].run()
        second = _two_busy_actors()[0].run()
        assert first.decisions == second.decisions and len(first.decisions) > 10
        for one, other in zip(first.decisions, second.decisions, strict=True):
            assert one is other and one == Decision(tuple(one.runnable), str(one.chosen))
        assert len({id(d) for d in first.decisions}) < len(first.decisions)

    def test_steps_and_accesses_are_what_the_step_log_methods_make(self) -> None:
        """The steps the scheduler opens itself and the accesses it logs itself are what StepLog's own methods
        make from the same reports."""
        s, _lock = _two_busy_actors()
        result = s.run()
        assert all(type(a) is Access for a in result.accesses) and len(result.accesses) == 18
        log = StepLog()
        by_step: dict[int, list[Access]] = {}
        for access in result.accesses:
            by_step.setdefault(access.step, []).append(access)
        for k, decision in enumerate(result.decisions):
            accesses = by_step.get(k, [])
            executes = result.step_footprints[k] - {a.entry for a in accesses}
            log.step(decision.chosen, executes, (), accesses[0].locks if accesses else frozenset())
            for access in accesses:
                log.relocked(access.locks)
                log.accessed(access.entry, access.where)
        assert log.footprints() == result.step_footprints
        assert log.accesses() == result.accesses

    def test_an_impossible_or_unhashable_choice_diverges(self) -> None:
        """A policy's answer outside the runnable set, even one that cannot be a key, ends the run as DIVERGED."""

        for answer in ("nobody", ["a"]):

            class _Wrong:
                def choose(self, point: DecisionPoint, answer: object = answer) -> str:
                    return answer  # type: ignore[return-value]

            s = Scheduler(policy=_Wrong())
            s.add_actor("a", lambda: None)
            result = s.run()
            assert result.status is RunStatus.DIVERGED
            assert f"the policy chose {answer!r}, which cannot run now (runnable: a)" == result.problem

    def test_a_deadlock_still_reports_every_waiter(self) -> None:
        """No runnable actor while some wait: the run ends at once as DEADLOCK with who waits for what."""
        s = Scheduler()
        never = Latch(s, "never")
        s.add_actor("a", never.wait)
        s.add_actor("b", lambda: s.point(EVERYTHING))
        result = s.run()
        assert result.status is RunStatus.DEADLOCK
        assert [b.actor for b in result.blocked] == ["a"]
        assert result.decisions[-1].chosen == "b"
