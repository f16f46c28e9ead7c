"""The scheduler: one actor at a time, deterministic choices, deadlocks and hangs diagnosed."""

from __future__ import annotations

import _thread
import gc
import signal
import threading
import time
import weakref

import pytest

from lab.engine.core import ACTOR_POOL as _POOL
from lab.engine.core import DecisionPoint, RunStatus, Scheduler
from lab.engine.core import _handoff as handoff
from lab.engine.sync import Barrier, Event, LabLock, Latch, Probes
from lab.errors import ReplayDivergedError


class _Stop(BaseException):
    """A user's own BaseException subclass, as code under test may define one to unwind past ``except Exception``."""


def _ops(scheduler_result: object) -> list[str]:
    return [f"{e.actor}:{e.op}:{e.obj}" for e in scheduler_result.trace]  # type: ignore[attr-defined]


@pytest.mark.timeout(10)
class TestScheduling:
    def test_keeps_current_actor_until_it_blocks(self) -> None:
        """The default policy runs actor 0 to its first block, then the lowest runnable actor."""
        s = Scheduler()
        go = Latch(s, "go")
        s.add_actor("a", lambda: (go.wait(), "a-done")[1])
        s.add_actor("b", lambda: go.count_down())
        result = s.run()
        assert _ops(result) == [
            "a:start:",
            "a:latch.wait:go",
            "b:start:",
            "b:latch.count_down:go",
            "b:end:",
            "a:latch.open:go",
            "a:end:",
        ]
        assert result.outcomes == {"a": "a-done", "b": "DONE"}
        assert result.status is RunStatus.FINISHED

    def test_only_one_actor_runs_at_a_time(self) -> None:
        """No two actors are ever inside their bodies at once, even when both spin through many points."""
        s = Scheduler(policy=_Alternate())
        lock = LabLock(s, "l")
        inside = [0]
        overlaps = [0]

        def body() -> None:
            for _ in range(200):
                inside[0] += 1
                if inside[0] > 1:
                    overlaps[0] += 1
                inside[0] -= 1
                with lock:
                    pass

        s.add_actor("a", body)
        s.add_actor("b", body)
        result = s.run()
        assert result.status is RunStatus.FINISHED and overlaps == [0]
        assert sum(d.chosen != d.runnable[0] for d in result.decisions) > 0  # the policy really switched

    def test_lock_contention_is_traced_with_its_holder(self) -> None:
        """A contended acquire shows who holds the lock; the waiter gets it after the release."""
        s = Scheduler()
        lock = LabLock(s, "l")
        entered = Latch(s, "entered")

        def holder() -> None:
            with lock:
                entered.count_down()
                s.point()  # a chance for the other actor, which must then wait

        def waiter() -> None:
            entered.wait()
            with lock:
                pass

        s.add_actor("holder", holder)
        s.add_actor("waiter", waiter)
        result = s.run()
        assert result.status is RunStatus.FINISHED

    def test_barrier_releases_all_parties_together(self) -> None:
        """Nobody passes a barrier before every party has arrived."""
        s = Scheduler()
        barrier = Barrier(s, "b", 3)
        order: list[str] = []

        def party(name: str) -> object:
            def body() -> None:
                order.append(f"{name} arrives")
                barrier.wait()
                order.append(f"{name} passes")

            return body

        for name in ("a", "b", "c"):
            s.add_actor(name, party(name))  # type: ignore[arg-type]
        assert s.run().status is RunStatus.FINISHED
        assert order[:3] == ["a arrives", "b arrives", "c arrives"]
        assert sorted(order[3:]) == ["a passes", "b passes", "c passes"]

    def test_event_and_probe_hold(self) -> None:
        """A probe hold parks the actor at that point until the latch opens."""
        s = Scheduler()
        probes = Probes(s)
        hook = probes.hook("obj")
        opened = Event(s, "opened")
        probes.hold("a", "p", until=opened)
        log: list[str] = []
        s.add_actor("a", lambda: (hook("p"), log.append("a past p")))
        s.add_actor("b", lambda: (log.append("b sets"), opened.set()))
        assert s.run().status is RunStatus.FINISHED
        assert log == ["b sets", "a past p"]


@pytest.mark.timeout(10)
class TestDiagnosis:
    def test_deadlock_is_reported_at_once_with_each_wait(self) -> None:
        """A latch nobody counts down stops the run at once (no watchdog wait) and names the latch."""
        s = Scheduler(watchdog_seconds=60)
        latch = Latch(s, "fast-committed")
        lock = LabLock(s, "chat.lock")
        s.add_actor("slow", lambda: (lock.acquire(), latch.wait()))
        s.add_actor("fast", lambda: lock.acquire())
        result = s.run()
        assert result.status is RunStatus.DEADLOCK
        assert [(b.actor, b.waits_for) for b in result.blocked] == [
            ("slow", "latch 'fast-committed' still needs 1 count_down"),
            ("fast", "lock 'chat.lock' held by slow"),
        ]
        assert result.outcomes == {"slow": "BLOCKED", "fast": "BLOCKED"}
        assert result.trace[-1].op == "deadlock"
        assert result.seconds < 60

    def test_barrier_deadlock_names_the_parties(self) -> None:
        """A barrier short of parties is named with how many arrived."""
        s = Scheduler()
        barrier = Barrier(s, "meet", 2)
        s.add_actor("alone", barrier.wait)
        result = s.run()
        assert [b.waits_for for b in result.blocked] == ["barrier 'meet' has 1 of 2 parties"]

    def test_actor_exception_is_captured_and_others_go_on(self) -> None:
        """An exception in one actor is kept with its traceback; the other actor still finishes."""
        s = Scheduler()

        def broken() -> None:
            raise ValueError("boom")

        s.add_actor("broken", broken)
        s.add_actor("fine", lambda: "ok")
        result = s.run()
        assert result.status is RunStatus.FINISHED
        assert result.outcomes == {"broken": "ERROR", "fine": "ok"}
        assert "ValueError: boom" in result.errors["broken"]
        assert any(e.op == "error" and e.detail == {"type": "ValueError"} for e in result.trace)

    @pytest.mark.parametrize("kind", [_Stop, SystemExit, KeyboardInterrupt, GeneratorExit])
    def test_a_base_exception_in_an_actor_is_an_error_at_once(self, kind: type[BaseException]) -> None:
        """An actor raising a BaseException that is no Exception (a user's ``class Stop(BaseException)``,
        ``sys.exit()``, a KeyboardInterrupt raised by the code itself) ends ERROR, the exception named, and the run
        goes on: never HUNG after the watchdog (issue 23, point 5). The watchdog here is the test's whole budget."""
        s = Scheduler(watchdog_seconds=3.0, leak_grace_seconds=0.05)

        def stops() -> None:
            raise kind("stop here")

        s.add_actor("stops", stops)
        s.add_actor("fine", lambda: "ok")
        result = s.run()
        assert (result.status, result.problem) == (RunStatus.FINISHED, "")
        assert result.outcomes == {"stops": "ERROR", "fine": "ok"}
        assert f"{kind.__name__}: stop here" in result.errors["stops"]
        assert [e.detail for e in result.trace if e.op == "error"] == [{"type": kind.__name__}]
        assert result.leaked == ()

    @pytest.mark.timeout(30)
    def test_keyboard_interrupt_in_the_main_thread_still_interrupts(self) -> None:
        """Ctrl-C while a run runs reaches the thread that started it, and the run's actors are unwound, not left
        parked on their pooled threads.

        Python's own handler is put in place for the test: a process started in the background by a shell without
        job control (``./.ci/run &``) inherits SIGINT ignored, Python then installs no handler, and
        ``interrupt_main`` does nothing (the run would spin to its decision limit)."""
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        s = Scheduler(watchdog_seconds=20.0)

        def interrupts() -> None:
            _thread.interrupt_main()  # what Ctrl-C does: SIGINT, handled in the main thread
            while True:
                s.point()  # a scheduling point each time: where the unwinding run stops it

        s.add_actor("interrupts", interrupts)
        s.add_actor("other", lambda: None)
        try:
            with pytest.raises(KeyboardInterrupt):
                s.run()
        finally:
            signal.signal(signal.SIGINT, previous)
        assert s.aborted
        deadline = time.monotonic() + 10
        while any(t.name.startswith("lab-actor-") for t in threading.enumerate()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(t.name.startswith("lab-actor-") for t in threading.enumerate())  # every actor unwound

    def test_watchdog_names_an_actor_blocked_outside_the_lab(self) -> None:
        """An actor stuck on a raw threading.Event is reported as HUNG, with its stack, and the run returns."""
        gate = threading.Event()
        s = Scheduler(watchdog_seconds=0.2, leak_grace_seconds=0.05)

        def stuck_on_raw_event() -> None:
            gate.wait()

        s.add_actor("stuck", stuck_on_raw_event)
        s.add_actor("never_runs", lambda: None)
        result = s.run()
        assert result.leaked == ("stuck",)  # blocked in C code: it cannot be stopped, so it is named
        gate.set()  # once released, the stuck body ends and its pooled thread goes back to waiting for work
        deadline = time.monotonic() + 5
        while any(t.name == "lab-actor-stuck" for t in threading.enumerate()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(t.name == "lab-actor-stuck" for t in threading.enumerate())
        assert result.status is RunStatus.HUNG
        assert "stuck" in result.problem
        assert "stuck_on_raw_event" in result.hang_stack
        assert result.outcomes["stuck"] == "HUNG"
        assert "hang" in [e.op for e in result.trace]

    def test_a_spinner_stopped_at_the_decision_limit_is_unwound_not_leaked(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A run past MAX_DECISIONS is HUNG naming the spinner, and the spinner, parked on its baton inside the lab,
        is woken and unwound: before, it was sent an asynchronous exception it could never receive there, so its
        thread was leaked for good (and the next run of the same program waited for the watchdog)."""
        monkeypatch.setattr(handoff, "MAX_DECISIONS", 500)
        s = Scheduler(leak_grace_seconds=1.0)

        def spins() -> None:
            while True:
                s.point()

        s.add_actor("spins", spins)
        result = s.run()
        assert result.status is RunStatus.HUNG and "'spins' was still running" in result.problem
        assert result.leaked == ()
        assert not any(t.name == "lab-actor-spins" for t in threading.enumerate())

    def test_no_thread_outlives_a_deadlocked_run(self) -> None:
        """After a deadlock every actor thread has ended, its locks unwound."""
        before = {t.name for t in threading.enumerate()}
        s = Scheduler()
        lock = LabLock(s, "l")
        never = Latch(s, "never")

        def holds_then_waits() -> None:
            with lock:
                never.wait()

        s.add_actor("a", holds_then_waits)
        s.add_actor("b", lambda: lock.acquire())
        result = s.run()
        assert result.status is RunStatus.DEADLOCK and result.leaked == ()
        assert {t.name for t in threading.enumerate()} - before <= {"lab-actor"}  # only idle pooled threads
        assert not lock.locked()

    @pytest.mark.timeout(60)  # under a loaded machine a worker may take seconds to go back to the pool
    def test_pooled_threads_are_reused_and_all_end_at_shutdown(self) -> None:
        """Actor threads are kept across runs (no thread start per schedule) and end when the pool shuts down."""

        def one_run() -> set[int]:
            idents: set[int] = set()
            s = Scheduler()
            s.add_actor("a", lambda: idents.add(threading.get_ident()))
            s.add_actor("b", lambda: idents.add(threading.get_ident()))
            assert s.run().status is RunStatus.FINISHED
            return idents

        one_run()
        deadline = time.monotonic() + 30
        while len(_POOL.idle_threads()) < 2 and time.monotonic() < deadline:  # a worker goes back after its task
            time.sleep(0.01)
        idle = {thread.ident for thread in _POOL.idle_threads()}
        assert one_run() <= idle  # the second run started no thread
        _POOL.shutdown()
        assert not [t for t in threading.enumerate() if t.name.startswith("lab-actor") and t.is_alive()]


@pytest.mark.timeout(10)
class TestPolicy:
    def test_a_run_leaves_its_world_to_reference_counting(self) -> None:
        """Actors are methods of a world whose lab holds the scheduler: once the run is over the scheduler lets go of
        them, so the world and the run's books are freed at once, with no cycle left for the garbage collector
        (which, collecting such cycles, took a third of an exploration's time)."""

        class World:
            def __init__(self) -> None:
                self.scheduler = Scheduler()
                self.scheduler.add_actor("a", self.act)

            def act(self) -> None:
                self.scheduler.point()

        world = World()
        assert world.scheduler.run().status is RunStatus.FINISHED
        freed = weakref.ref(world)
        gc.disable()
        try:
            del world
            assert freed() is None
        finally:
            gc.enable()

    def test_the_collector_rests_while_actors_run(self) -> None:
        """Collecting while a run runs would only traverse its books: the collector is off while actors run, and on
        again once the run is over."""
        collecting: list[bool] = []
        s = Scheduler()
        s.add_actor("a", lambda: collecting.append(gc.isenabled()))
        assert s.run().status is RunStatus.FINISHED
        assert collecting == [False] and gc.isenabled()

    def test_policy_refusal_stops_the_run_as_diverged(self) -> None:
        """A policy that raises (a replay that no longer matches) stops the run and says why."""

        class _Refuse:
            def choose(self, point: DecisionPoint) -> str:
                raise ReplayDivergedError("step 0: expected b to be runnable")

        s = Scheduler(policy=_Refuse())
        s.add_actor("a", lambda: None)
        result = s.run()
        assert result.status is RunStatus.DIVERGED
        assert "expected b" in result.problem
        assert result.outcomes == {"a": "UNFINISHED"}

    def test_decisions_record_who_could_run(self) -> None:
        """Every decision keeps the runnable set and the choice, for replay."""
        s = Scheduler()
        s.add_actor("a", lambda: None)
        s.add_actor("b", lambda: None)
        result = s.run()
        assert [(d.runnable, d.chosen) for d in result.decisions] == [
            (("a", "b"), "a"),
            (("b",), "b"),
        ]


class _Alternate:
    """Switch to another actor at every point where one can run."""

    def choose(self, point: DecisionPoint) -> str:
        others = [name for name in point.runnable if name != point.current]
        return others[0] if others else point.runnable[0]
