"""Standard primitives just work: threading, queue and time.sleep are scheduler-aware inside a run, real outside."""

from __future__ import annotations

import _thread
import queue
import textwrap
import threading
import time
from pathlib import Path

import pytest

from lab.engine.core import DecisionPoint, RunStatus, Scheduler
from lab.engine.sync import _standard as standard
from lab.engine.sync import scheduler_aware_primitives
from lab.errors import ScheduleError
from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import ScenarioResult, Verdict, run_scenario
from lab.transport.scripted import ScriptedTransport

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"

ORIGINALS = {
    (threading, "Lock"): threading.Lock,
    (threading, "RLock"): threading.RLock,
    (threading, "Condition"): threading.Condition,
    (threading, "Event"): threading.Event,
    (threading, "Semaphore"): threading.Semaphore,
    (threading, "BoundedSemaphore"): threading.BoundedSemaphore,
    (threading, "Barrier"): threading.Barrier,
    (queue, "Queue"): queue.Queue,
    (queue, "LifoQueue"): queue.LifoQueue,
    (queue, "PriorityQueue"): queue.PriorityQueue,
    (queue, "SimpleQueue"): queue.SimpleQueue,
    (time, "sleep"): time.sleep,
    (time, "monotonic"): time.monotonic,
    (time, "time"): time.time,
}


def _scenario(folder: Path, name: str, body: str) -> LoadedScenario:
    """Write a scenario file made of standard imports and ``body``, and load it."""
    header = '"""A program on standard primitives."""\n\nimport queue\nimport threading\nimport time\n\n'
    header += "from lab import Scenario, acceptable, actor, forbidden, only\n\n\n"
    path = folder / f"{name}.py"
    path.write_text(header + textwrap.dedent(body), encoding="utf-8")
    item = load(path)
    assert isinstance(item, LoadedScenario), str(item)
    return item


def _shipped(name: str) -> LoadedScenario:
    item = load(SCENARIOS / f"{name}.py")
    assert isinstance(item, LoadedScenario), str(item)
    return item


def _passes(loaded: LoadedScenario) -> ScenarioResult:
    """Run under the default policy and explore: both must PASS. Returns the default run."""
    result = run_scenario(loaded, watchdog_seconds=5)
    assert result.verdict is Verdict.PASS, (result.problem, [f"{c.name}: {c.reason}" for c in result.checks])
    found = explore_scenario(loaded)
    assert found.verdict is ExploreVerdict.PASS, (found.problem, found.rows)
    return result


def _ops(result: ScenarioResult) -> list[str]:
    return [f"{event.actor} {event.describe()}" for event in result.trace]


class _WaiterFirst:
    """Runs ``waiter`` until it waits, then ``setter`` to its end while it can, then whoever can go."""

    def __init__(self) -> None:
        self._waited = False

    def choose(self, point: DecisionPoint) -> str:
        if not self._waited and "waiter" in point.runnable:
            return "waiter"
        self._waited = True
        return "setter" if "setter" in point.runnable else point.runnable[0]


# One correct program per primitive. Latch-free: each must come out the same under every schedule (or, with an
# outcome table, only in allowed ways), which the exploration checks.
PROGRAMS = {
    "lock": """
        class P(Scenario):
            source = "test"
            outcomes = only(count=4)

            def setup(self):
                self.lock = threading.Lock()
                self.count = 0

            def _bump(self):
                for _ in range(2):
                    with self.lock:
                        seen = self.count
                        time.sleep(0)  # a scheduling point inside the critical section
                        self.count = seen + 1

            @actor
            def a(self):
                self._bump()

            @actor
            def b(self):
                self._bump()

            def observe(self):
                return {"count": self.count}
""",
    "rlock": """
        class P(Scenario):
            source = "test"
            outcomes = only(count=4)

            def setup(self):
                self.lock = threading.RLock()
                self.count = 0

            def _add(self):
                with self.lock:
                    with self.lock:  # reentrant
                        seen = self.count
                        time.sleep(0)
                        self.count = seen + 2

            @actor
            def a(self):
                self._add()

            @actor
            def b(self):
                self._add()

            def observe(self):
                return {"count": self.count}
""",
    "condition": """
        class P(Scenario):
            source = "test"
            outcomes = only(consumer="x,y", producer="DONE")

            def setup(self):
                self.ready = threading.Condition()
                self.items = []

            @actor
            def consumer(self):
                with self.ready:
                    self.ready.wait_for(lambda: len(self.items) == 2)
                    return ",".join(self.items)

            @actor
            def producer(self):
                for item in ("x", "y"):
                    with self.ready:
                        self.items.append(item)
                        self.ready.notify_all()
""",
    "condition_on_lock": """
        class P(Scenario):
            source = "test"
            outcomes = only(waiter="True")

            def setup(self):
                self.lock = threading.Lock()
                self.changed = threading.Condition(self.lock)
                self.flag = False

            @actor
            def waiter(self):
                with self.changed:
                    while not self.flag:
                        self.changed.wait()
                    return self.flag

            @actor
            def notifier(self):
                with self.lock:
                    self.flag = True
                    self.changed.notify()
""",
    "event": """
        class P(Scenario):
            source = "test"
            outcomes = only(reader="42")

            def setup(self):
                self.published = threading.Event()
                self.value = None

            @actor
            def reader(self):
                self.published.wait()
                return self.value

            @actor
            def writer(self):
                self.value = 42
                self.published.set()
""",
    "semaphore": """
        class P(Scenario):
            source = "test"
            outcomes = (acceptable("everyone got through", run="FINISHED"),)

            def setup(self):
                self.slots = threading.Semaphore(2)

            def _use(self):
                with self.slots:
                    pass

            @actor
            def a(self):
                self._use()

            @actor
            def b(self):
                self._use()

            @actor
            def c(self):
                self._use()

            def invariants(self):
                inside = most = 0
                for event in self.lab.trace:
                    inside += {"semaphore.acquire": 1, "semaphore.release": -1}.get(event.op, 0)
                    most = max(most, inside)
                yield "never more than two inside", most <= 2
                yield "all three got in", sum(e.op == "semaphore.acquire" for e in self.lab.trace) == 3
""",
    "bounded_semaphore": """
        class P(Scenario):
            source = "test"
            outcomes = only(a="refused", b="DONE")

            def setup(self):
                self.slots = threading.BoundedSemaphore(1)
                self.b_done = threading.Event()

            @actor
            def a(self):
                with self.slots:
                    time.sleep(1)
                self.b_done.wait()
                try:
                    self.slots.release()  # one release too many
                except ValueError:
                    return "refused"
                return "accepted"

            @actor
            def b(self):
                with self.slots:
                    time.sleep(1)
                self.b_done.set()
""",
    "barrier": """
        class P(Scenario):
            source = "test"
            outcomes = (acceptable("both passed both rounds", run="FINISHED"),)

            def setup(self):
                self.rounds = []
                self.gate = threading.Barrier(2, action=lambda: self.rounds.append("tripped"))

            def _phase(self):
                first = self.gate.wait()
                second = self.gate.wait()  # reusable: a second round
                return f"{first}{second}"

            @actor
            def a(self):
                return self._phase()

            @actor
            def b(self):
                return self._phase()

            def invariants(self):
                yield "the action ran once per round", self.rounds == ["tripped", "tripped"]
                passed = [e.op for e in self.lab.trace if e.op in ("barrier.wait", "barrier.pass")]
                yield "each round: two arrivals, one waiter released", passed == ["barrier.wait", "barrier.wait",
                                                                                 "barrier.pass"] * 2
""",
    "queue": """
        class P(Scenario):
            source = "test"
            outcomes = only(producer="DONE", consumer="0,1,2")

            def setup(self):
                self.q = queue.Queue(maxsize=1)

            @actor
            def producer(self):
                for item in range(3):
                    self.q.put(item)
                self.q.join()

            @actor
            def consumer(self):
                got = []
                for _ in range(3):
                    got.append(str(self.q.get()))
                    self.q.task_done()
                return ",".join(got)
""",
    "priority_and_lifo": """
        class P(Scenario):
            source = "test"
            outcomes = only(a="first", b="top")

            def setup(self):
                self.pq = queue.PriorityQueue()
                for pair in ((3, "third"), (1, "first"), (2, "second")):
                    self.pq.put(pair)  # on the main thread: the real queue's behaviour
                self.stack = queue.LifoQueue()

            @actor
            def a(self):
                return self.pq.get()[1]

            @actor
            def b(self):
                self.stack.put("bottom")
                self.stack.put("top")
                return self.stack.get()
""",
    "simple_queue": """
        class P(Scenario):
            source = "test"
            outcomes = only(consumer="ab")

            def setup(self):
                self.q = queue.SimpleQueue()

            @actor
            def consumer(self):
                return self.q.get() + self.q.get()

            @actor
            def producer(self):
                self.q.put("a")
                self.q.put("b")
""",
    "sleep_polling": """
        class P(Scenario):
            source = "test"
            outcomes = only(poller="done")

            def setup(self):
                self.finished = threading.Event()

            @actor
            def poller(self):
                polls = 0
                while not self.finished.is_set():
                    polls += 1
                    time.sleep(0.1)
                return "done"

            @actor
            def worker(self):
                time.sleep(1)
                self.finished.set()
""",
}


@pytest.mark.timeout(30)
class TestCorrectProgramsPass:
    @pytest.mark.parametrize("program", sorted(PROGRAMS))
    def test_program_passes_by_default_and_explored(self, tmp_path: Path, program: str) -> None:
        """A correct program on each primitive finishes with its expected outcome, and explores to PASS."""
        _passes(_scenario(tmp_path, f"std_{program}", PROGRAMS[program]))

    def test_primitives_show_in_the_trace_with_deterministic_names(self, tmp_path: Path) -> None:
        """Each operation is a trace event on a name fixed by creation order, never an address."""
        ops = _ops(_passes(_scenario(tmp_path, "std_queue", PROGRAMS["queue"])))
        assert "producer queue.put Queue#1 (size=1)" in ops
        assert "producer queue.wait Queue#1 (for=room)" in ops
        assert "consumer queue.task_done Queue#1 (unfinished=0)" in ops
        assert ops == _ops(run_scenario(_scenario(tmp_path, "std_queue_again", PROGRAMS["queue"])))

    def test_objects_made_by_an_actor_carry_its_name(self, tmp_path: Path) -> None:
        """A lock made inside an actor is named after the actor and its own count."""
        loaded = _scenario(
            tmp_path,
            "std_actor_made",
            """
            class P(Scenario):
                source = "test"

                @actor
                def a(self):
                    first, second = threading.Lock(), threading.Lock()
                    with second:
                        pass
                    return first.lab_name
""",
        )
        result = run_scenario(loaded)
        assert result.outcomes == {"a": "Lock@a#1"}
        assert "a lock.acquire Lock@a#2" in _ops(result)

    def test_a_broken_program_on_a_standard_lock_is_caught(self, tmp_path: Path) -> None:
        """Checking the version outside the lock is found by the explorer: the stand-ins do not hide races."""
        source = (SCENARIOS / "stdlib_lock_session.py").read_text(encoding="utf-8")
        broken = source.replace(
            '        with self._lock:\n            if version != self.version:\n                return "STALE"\n',
            '        if version != self.version:\n            return "STALE"\n        time.sleep(0)\n'
            "        with self._lock:\n",
        )
        assert broken != source
        (tmp_path / "std_broken_session.py").write_text(broken, encoding="utf-8")
        item = load(tmp_path / "std_broken_session.py")
        assert isinstance(item, LoadedScenario), str(item)
        found = explore_scenario(item)
        assert found.verdict is ExploreVerdict.FAIL
        assert found.counterexample is not None and found.counterexample.replayed

    def test_a_session_built_without_a_lab_lock_explores(self, tmp_path: Path) -> None:
        """A VersionedSession made in setup without lock= gets a stand-in, so probes inside its lock do not hang."""
        loaded = _scenario(
            tmp_path,
            "std_default_session_lock",
            """
            from lab import VersionedSession


            class P(Scenario):
                source = "test"
                outcomes = (
                    acceptable("slow first", slow="COMMITTED", fast="STALE"),
                    acceptable("fast first", slow="STALE", fast="COMMITTED"),
                    acceptable("one after the other", slow="COMMITTED", fast="COMMITTED", tickets="different"),
                    forbidden("both on one version", slow="COMMITTED", fast="COMMITTED", tickets="same"),
                )

                def setup(self):
                    self.session = VersionedSession("s1", probe=self.lab.probe("s1"))
                    self.tickets = {}

                def _ask(self, who):
                    ticket = self.session.begin(f"r-{who}", f"{who} question")
                    self.tickets[who] = ticket.version
                    return self.session.commit(ticket, f"{who} answer", "stop")

                @actor
                def slow(self):
                    return self._ask("slow")

                @actor
                def fast(self):
                    return self._ask("fast")

                def observe(self):
                    return {"tickets": "same" if len(set(self.tickets.values())) == 1 else "different"}
""",
        )
        result = _passes(loaded)
        assert any("lock.acquire Lock#1" in op for op in _ops(result))
        assert explore_scenario(loaded).distinct == 3


@pytest.mark.timeout(30)
class TestShippedLessons:
    def test_abba_is_a_deadlock_naming_both_holders(self) -> None:
        """Two standard locks taken in opposite orders: DEADLOCK, each actor waiting for the lock the other holds."""
        result = run_scenario(_shipped("abba_deadlock"), watchdog_seconds=30)
        assert result.verdict is Verdict.PASS
        assert result.run_status == "DEADLOCK"
        assert {b.actor: b.waits_for for b in result.blocked} == {
            "s1_into_s2": "lock 'Lock#2' held by s2_into_s1",
            "s2_into_s1": "lock 'Lock#1' held by s1_into_s2",
        }
        assert explore_scenario(_shipped("abba_deadlock")).verdict is ExploreVerdict.PASS

    def test_stdlib_lock_session_reaches_every_allowed_outcome(self) -> None:
        """The plain-lock session explores to PASS and reaches all three allowed outcomes, at every granularity."""
        for granularity in ("probe", "line", "instruction"):
            found = explore_scenario(_shipped("stdlib_lock_session"), granularity=granularity)
            assert found.verdict is ExploreVerdict.PASS, granularity
            assert [row.schedules > 0 for row in found.rows] == [True, True, True, False], granularity


@pytest.mark.timeout(30)
class TestVirtualTime:
    def test_a_long_sleep_returns_at_once_and_advances_the_clock(self, tmp_path: Path) -> None:
        """time.sleep(3600) in an actor costs no real time; monotonic() inside the actor sees the hour pass."""
        loaded = _scenario(
            tmp_path,
            "std_hour",
            """
            class P(Scenario):
                source = "test"
                outcomes = only(a="3600")

                @actor
                def a(self):
                    begun = time.monotonic()
                    time.sleep(3600)
                    return round(time.monotonic() - begun)
""",
        )
        begun = time.perf_counter()
        result = run_scenario(loaded)
        assert time.perf_counter() - begun < 5
        assert result.verdict is Verdict.PASS
        assert "a wake clock (clock=3600.0)" in _ops(result)

    @pytest.mark.parametrize(
        ("switch", "seconds", "wakes"),
        [
            (True, 2.5, [1.0, 2.5]),  # b begins its sleep before a wakes: the two overlap, earliest wake-up first
            (False, 3.5, [2.5, 3.5]),  # a wakes first: b was kept off the processor while a slept, and began late
        ],
    )
    def test_the_clock_is_handed_out_by_the_context_manager(
        self, switch: bool, seconds: float, wakes: list[float]
    ) -> None:
        """The context manager yields the run's virtual clock; a sleep orders nothing, so where it ends depends
        on the schedule, and the clock only moves on to the earliest wake-up pending."""

        class Switch:
            """Another actor than the one running, when one can go on (else the running one)."""

            def choose(self, point: DecisionPoint) -> str:
                others = [name for name in point.runnable if name != point.current]
                if switch and others:
                    return others[0]
                return point.current if point.current in point.runnable else point.runnable[0]

        scheduler = Scheduler(watchdog_seconds=5, policy=Switch())
        with scheduler_aware_primitives(scheduler) as clock:
            scheduler.add_actor("a", lambda: time.sleep(2.5))
            scheduler.add_actor("b", lambda: time.sleep(1))
            run = scheduler.run()
        assert run.status is RunStatus.FINISHED
        assert clock.seconds == seconds
        assert sorted(event.detail["clock"] for event in run.trace if event.op == "wake") == wakes

    @pytest.mark.parametrize(
        ("wait", "expected"),
        [
            ("threading.Event().wait(5)", "False"),
            ("self.cond_wait()", "False"),
            ("self.queue_get()", "Empty"),
            ("self.lock_wait()", "False"),
            ("threading.Semaphore(0).acquire(timeout=5)", "False"),
            ("self.barrier_wait()", "Broken"),
        ],
    )
    def test_a_wait_nobody_ends_times_out_on_the_virtual_clock(self, tmp_path: Path, wait: str, expected: str) -> None:
        """With no other actor able to go on, a timed wait returns its timeout result and the clock moves."""
        loaded = _scenario(
            tmp_path,
            "std_timeout",
            f"""
            class P(Scenario):
                source = "test"
                outcomes = only(waiter="{expected}")

                def setup(self):
                    self.lock = threading.Lock()
                    self.never = threading.Event()

                @actor
                def holder(self):
                    with self.lock:
                        self.never.wait()  # parked for good, holding the lock

                def cond_wait(self):
                    cond = threading.Condition()
                    with cond:
                        return cond.wait(timeout=5)

                def queue_get(self):
                    try:
                        return queue.Queue().get(timeout=5)
                    except queue.Empty:
                        return "Empty"

                def lock_wait(self):
                    return self.lock.acquire(timeout=5)

                def barrier_wait(self):
                    try:
                        return threading.Barrier(2).wait(timeout=5)
                    except threading.BrokenBarrierError:
                        return "Broken"

                @actor
                def waiter(self):
                    result = {wait}
                    return str(result)
        """,
        )
        result = run_scenario(loaded, watchdog_seconds=30)
        assert result.outcomes["waiter"] == expected
        assert result.run_status == "DEADLOCK"  # the holder still waits for an event nobody sets
        assert any(".timeout" in op and "clock=5.0" in op for op in _ops(result)), _ops(result)

    def test_a_wait_returns_when_its_condition_comes_before_its_timeout(self, tmp_path: Path) -> None:
        """A one-second sleeper sets the event before a five-second timeout fires, under every schedule."""
        _passes(
            _scenario(
                tmp_path,
                "std_before_timeout",
                """
            class P(Scenario):
                source = "test"
                outcomes = only(waiter="True")

                def setup(self):
                    self.event = threading.Event()

                @actor
                def waiter(self):
                    return self.event.wait(timeout=5)

                @actor
                def setter(self):
                    time.sleep(1)
                    self.event.set()
""",
            )
        )

    @pytest.mark.parametrize("timeout", ["", "timeout=5"])
    def test_a_waiter_present_at_a_set_returns_true_though_cleared_before_it_ran(
        self, tmp_path: Path, timeout: str
    ) -> None:
        """As in CPython, set() wakes the waiters there: one that was waiting when the event was set and cleared at
        once returns True (it does not go back to waiting for the flag, nor time out)."""
        loaded = _scenario(
            tmp_path,
            "std_set_clear",
            f"""
            class P(Scenario):
                source = "test"
                outcomes = only(waiter="True")

                def setup(self):
                    self.event = threading.Event()

                @actor
                def waiter(self):
                    return self.event.wait({timeout})

                @actor
                def setter(self):
                    self.event.set()
                    self.event.clear()
""",
        )
        result = run_scenario(loaded, policy=_WaiterFirst(), watchdog_seconds=5)
        assert "waiter event.wait Event#1 (set=False)" in _ops(result)  # it was waiting when the setter came
        assert result.verdict is Verdict.PASS, (result.problem, _ops(result))

    def test_zero_timeouts_poll(self, tmp_path: Path) -> None:
        """A timeout of zero never waits: it answers with the state as it is."""
        loaded = _scenario(
            tmp_path,
            "std_poll",
            """
            class P(Scenario):
                source = "test"
                outcomes = only(a="False False")

                @actor
                def a(self):
                    lock = threading.Lock()
                    lock.acquire()
                    return f"{lock.acquire(timeout=0)} {threading.Event().wait(0)}"
""",
        )
        assert run_scenario(loaded).verdict is Verdict.PASS


THREAD_STARTERS = {
    "thread": "thread = threading.Thread(target=self._bump); thread.start(); thread.join()",
    "executor": "pool = concurrent.futures.ThreadPoolExecutor(1); pool.submit(self._bump).result(); pool.shutdown()",
}
"""How an actor may start a thread: itself, or through the standard library (one line each)."""


@pytest.mark.timeout(60)
class TestThreadsStartedByActors:
    @pytest.mark.parametrize("granularity", ["probe", "line", "instruction"])
    @pytest.mark.parametrize("how", sorted(THREAD_STARTERS))
    def test_an_actor_that_starts_a_thread_makes_the_exploration_incomplete(
        self, tmp_path: Path, how: str, granularity: str
    ) -> None:
        """The lab neither schedules a thread an actor starts nor sees what it touches: the race between its bump
        and b's is not explored, so the exploration says INCOMPLETE and why, never PASS."""
        loaded = _scenario(
            tmp_path,
            f"std_thread_{how}",
            f"""
            import concurrent.futures


            class P(Scenario):
                source = "test"
                outcomes = (acceptable("both bumps landed", count=2), forbidden("a bump was lost", count=1))

                def setup(self):
                    self.count = 0

                def _bump(self):
                    n = self.count
                    self.count = n + 1

                @actor
                def a(self):
                    {THREAD_STARTERS[how]}

                @actor
                def b(self):
                    self._bump()

                def observe(self):
                    return {{"count": self.count}}
""",
        )
        found = explore_scenario(loaded, granularity=granularity)
        assert found.verdict in (ExploreVerdict.INCOMPLETE, ExploreVerdict.FAIL), found.rows
        if found.verdict is ExploreVerdict.INCOMPLETE:
            assert found.problem.startswith("actor a started a thread ("), found.problem

    def test_a_thread_started_outside_the_actors_changes_nothing(self, tmp_path: Path) -> None:
        """A thread that setup starts (done before the actors run) is no part of the interleavings."""
        loaded = _scenario(
            tmp_path,
            "std_thread_in_setup",
            """
            class P(Scenario):
                source = "test"
                outcomes = only(a="1")

                def setup(self):
                    self.count = 0
                    t = threading.Thread(target=self._bump)
                    t.start()
                    t.join()

                def _bump(self):
                    self.count += 1

                @actor
                def a(self):
                    return str(self.count)
""",
        )
        _passes(loaded)


@pytest.mark.timeout(30)
class TestOutsideActorsItIsTheStandardLibrary:
    def test_outside_a_run_every_name_is_the_original(self) -> None:
        """Before, after, and after a failing body: the module attributes are the standard library's."""
        assert all(getattr(owner, name) is original for (owner, name), original in ORIGINALS.items())
        with scheduler_aware_primitives(Scheduler()):
            assert threading.Lock is not ORIGINALS[(threading, "Lock")]
            assert time.sleep is not ORIGINALS[(time, "sleep")]
        assert all(getattr(owner, name) is original for (owner, name), original in ORIGINALS.items())
        with pytest.raises(KeyError), scheduler_aware_primitives(Scheduler()):
            raise KeyError("boom")
        assert all(getattr(owner, name) is original for (owner, name), original in ORIGINALS.items())

    def test_two_runs_at_once_are_refused(self) -> None:
        """One process, one scheduler-aware run at a time, in one line."""
        outer = scheduler_aware_primitives(Scheduler())
        with outer, pytest.raises(ScheduleError, match="another run"), scheduler_aware_primitives(Scheduler()):
            pass
        assert threading.Lock is ORIGINALS[(threading, "Lock")]  # the refused one did not disturb the restore

    def test_the_main_thread_gets_real_semantics(self) -> None:
        """During setup (no actor), stand-ins block, time out and raise exactly as the real primitives do."""
        with scheduler_aware_primitives(Scheduler()):
            lock = threading.Lock()
            assert isinstance(lock, standard.Lock)
            assert lock.acquire() and not lock.acquire(False)
            assert lock.acquire(timeout=0.01) is False
            lock.release()
            with pytest.raises(RuntimeError, match="release unlocked lock"):
                lock.release()
            with pytest.raises(ValueError, match="non-blocking"):
                lock.acquire(False, 1)
            rlock = threading.RLock()
            with rlock, rlock:
                assert rlock._is_owned()
            with pytest.raises(RuntimeError, match="un-acquired"):
                rlock.release()
            event = threading.Event()
            assert event.wait(0.01) is False
            event.set()
            assert event.wait() is True
            q = queue.Queue(maxsize=1)
            q.put(1)
            with pytest.raises(queue.Full):
                q.put(2, timeout=0.01)
            assert q.get() == 1
            with pytest.raises(queue.Empty):
                q.get_nowait()
            assert isinstance(q, ORIGINALS[(queue, "Queue")])
            with pytest.raises(ValueError, match="released too many times"):
                threading.BoundedSemaphore(1).release()
            cond = threading.Condition()
            with cond:
                assert cond.wait(0.01) is False
            begun = time.monotonic()
            time.sleep(0.01)
            assert time.monotonic() - begun >= 0.01

    def test_threads_and_the_standard_library_keep_real_primitives(self) -> None:
        """A Thread started inside a run works; what threading and queue build for themselves is real."""
        with scheduler_aware_primitives(Scheduler()):
            box: list[int] = []
            thread = threading.Thread(target=lambda: box.append(1))
            thread.start()
            thread.join(5)
            assert box == [1]
            assert type(thread._started) is ORIGINALS[(threading, "Event")]  # type: ignore[attr-defined]
            assert type(queue.Queue().mutex) is _thread.LockType

    def test_lab_machinery_keeps_real_locks_and_sessions_get_stand_ins(self) -> None:
        """The scripted transport's guard stays invisible; a session's default lock is code under test."""
        from lab.sessions.versioned import VersionedSession

        with scheduler_aware_primitives(Scheduler()):
            transport = ScriptedTransport()
            session = VersionedSession("s1")
        assert type(transport._guard) is _thread.LockType
        assert isinstance(session._lock, standard.Lock)

    def test_a_thread_waiting_forever_for_an_actors_lock_is_told_why(self) -> None:
        """observe() taking a lock an unfinished actor still holds gets a ScheduleError, not a silent hang."""
        scheduler = Scheduler(watchdog_seconds=5)
        with scheduler_aware_primitives(scheduler):
            lock = threading.Lock()
            never = threading.Event()

            def holder() -> None:
                lock.acquire()  # never released
                never.wait()

            scheduler.add_actor("holder", holder)
            run = scheduler.run()
        assert run.status is RunStatus.DEADLOCK
        with pytest.raises(ScheduleError, match="held by holder"):
            lock.acquire()

    def test_names_imported_before_the_run_are_patched_in_the_scenario_module(self, tmp_path: Path) -> None:
        """``from threading import Lock`` in the scenario file still gets a stand-in, and the module is restored."""
        loaded = _scenario(
            tmp_path,
            "std_from_import",
            """
            from threading import Lock
            from time import sleep


            class P(Scenario):
                source = "test"
                outcomes = only(count=2)

                def setup(self):
                    self.lock = Lock()
                    self.count = 0

                def _add(self):
                    with self.lock:
                        seen = self.count
                        sleep(60)
                        self.count = seen + 1

                @actor
                def a(self):
                    self._add()

                @actor
                def b(self):
                    self._add()

                def observe(self):
                    return {"count": self.count}
""",
        )
        _passes(loaded)
        module = loaded.cls.setup.__globals__
        assert module["Lock"] is ORIGINALS[(threading, "Lock")]
        assert module["sleep"] is ORIGINALS[(time, "sleep")]
