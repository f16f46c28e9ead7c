"""The atomicity check: a step the granularity treats as atomic, that another actor can split, makes the verdict
INCOMPLETE (one line: the object, both lines, the finer granularity), and correctly synchronised steps do not.

Most tests explore tiny scenarios written to ``tmp_path``; a few feed :class:`AtomicityCheck` runs of fixed orders,
or runs built by hand, to pin down what one run alone shows and what only runs compared show.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lab.engine.core import Access, Decision, DecisionPoint, Entry, RunResult, RunStatus
from lab.engine.search import AtomicityCheck, find_split_step
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, discover, load
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
PASS, INCOMPLETE = ExploreVerdict.PASS, ExploreVerdict.INCOMPLETE

HANDOFF = '''
    """Correct: the producer writes the box twice, then sets an event; the consumer waits on it, then updates."""

    from lab import Scenario, acceptable, actor


    class Box:
        def __init__(self) -> None:
            self.value = 0


    class Handoff(Scenario):
        source = "test"
        outcomes = (acceptable("the consumer saw both writes", value=3),)

        def setup(self) -> None:
            self.box = Box()
            self.ready = self.lab.event("ready")

        @actor
        def producer(self) -> None:
            self.box.value = 1
            self.box.value = 2
            self.ready.set()

        @actor
        def consumer(self) -> None:
            self.ready.wait()
            self.box.value = self.box.value + 1

        def observe(self) -> dict[str, int]:
            return {"value": self.box.value}
'''

COUNTER = '''
    """Two actors add one to a counter: read it, then write it back."""

    from lab import Scenario, acceptable, actor


    class Counter(Scenario):
        source = "test"
        outcomes = (acceptable("both additions landed", count=2),)

        def setup(self) -> None:
            self.count = 0
            self.guard = self.lab.lock("guard")

        @actor
        def a(self) -> None:
            GUARD
                BODY

        @actor
        def b(self) -> None:
            GUARD
                self.count = self.count + 1  # b

        def observe(self) -> dict[str, int]:
            return {"count": self.count}
'''

LEDGER = '''
    """One delivery, made twice with nothing ordering the two: whichever commits first, the other is a duplicate."""

    from lab import Scenario, acceptable, actor


    class Ledger:
        def __init__(self) -> None:
            self.receipts: dict[str, int] = {}
            self.version = 0


    def deliver(ledger: Ledger, request: str) -> str:
        if request in ledger.receipts:
            return "DUPLICATE"
        ledger.version = ledger.version + 1
        ledger.receipts[request] = ledger.version
        return "COMMITTED"


    class Redelivery(Scenario):
        source = "test"
        outcomes = (
            acceptable("first committed", first="COMMITTED", retry="DUPLICATE"),
            acceptable("the retry committed", first="DUPLICATE", retry="COMMITTED"),
        )

        def setup(self) -> None:
            self.ledger = Ledger()

        @actor
        def first(self) -> str:
            return deliver(self.ledger, "r1")

        @actor
        def retry(self) -> str:
            return deliver(self.ledger, "r1")
'''


def _scenario(folder: Path, name: str, text: str) -> LoadedScenario:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), str(loaded)
    return loaded


TWO_LINES = "n = self.count  # read\n                self.count = n + 1  # write"
ONE_LINE = "self.count = self.count + 1  # read and write"


def _counter(guard: str, body: str = TWO_LINES) -> str:
    return COUNTER.replace("GUARD", guard).replace("BODY", body)


def _line(loaded: LoadedScenario, marker: str) -> int:
    """The number of the one line of the scenario file that contains ``marker``."""
    lines = [i for i, text in enumerate(loaded.path.read_text().splitlines(), 1) if marker in text]
    assert len(lines) == 1, (marker, lines)
    return lines[0]


def _explore(loaded: LoadedScenario, granularity: str = "probe", variant: str | None = None) -> ScenarioExploration:
    found = explore_scenario(loaded, granularity=granularity, variant=variant)
    assert found.counterexample is None, found.problem  # nothing here reaches an outcome its table forbids
    return found


@pytest.mark.timeout(30)
def test_an_event_hand_off_is_not_split(tmp_path: Path) -> None:
    """The producer's two writes all come before ``set``, the consumer's update after ``wait``: PASS. Where the
    consumer blocks in ``wait`` it takes one more step than where it does not, which must not shift what its steps
    are matched with across runs."""
    found = _explore(_scenario(tmp_path, "handoff", HANDOFF))
    assert (found.verdict, found.problem) == (PASS, "")


@pytest.mark.timeout(30)
def test_a_lock_protected_read_modify_write_is_not_split(tmp_path: Path) -> None:
    found = _explore(_scenario(tmp_path, "locked_counter", _counter("with self.guard:")))
    assert (found.verdict, found.problem) == (PASS, "")


@pytest.mark.timeout(30)
def test_a_read_modify_write_between_probes_is_incomplete_naming_the_attribute_and_both_lines(tmp_path: Path) -> None:
    loaded = _scenario(tmp_path, "bare_counter", _counter("if True:"))
    found = _explore(loaded)
    assert found.verdict is INCOMPLETE
    read, write = _line(loaded, "# read"), _line(loaded, "# write")
    assert f"read self.count (bare_counter.py:{read}) and then write self.count (bare_counter.py:{write})" in (
        found.problem
    )
    assert f"while b may read self.count (bare_counter.py:{_line(loaded, '# b')})" in found.problem


@pytest.mark.timeout(30)
def test_the_message_is_one_line_that_names_the_finer_granularity(tmp_path: Path) -> None:
    at_probe = _explore(_scenario(tmp_path, "message_counter", _counter("if True:")))
    assert "\n" not in at_probe.problem
    assert at_probe.problem.startswith("at probe granularity one step of a does ")
    assert at_probe.problem.endswith("with no lock in common: re-explore with --granularity line")
    one_line = _scenario(tmp_path, "one_line_counter", _counter("if True:", ONE_LINE))
    at_line = _explore(one_line, granularity="line")  # a line is atomic there, and this one reads then writes
    assert at_line.verdict is INCOMPLETE
    assert "\n" not in at_line.problem
    assert at_line.problem.endswith("re-explore with --granularity instruction")


class _Order:
    """Runs the actors one after the other, in the given order."""

    def __init__(self, *order: str) -> None:
        self._order = order

    def choose(self, point: DecisionPoint) -> str:
        return next(actor for actor in self._order if actor in point.runnable)


def _run(loaded: LoadedScenario, *order: str) -> RunResult:
    result = run_scenario(loaded, policy=_Order(*order), record_accesses=True)
    assert result.run is not None, result.problem
    return result.run


@pytest.mark.timeout(30)
def test_a_split_only_runs_compared_show_is_incomplete(tmp_path: Path) -> None:
    """Whoever delivers second finds the receipt and touches only it, so no run alone shows a step that the other
    actor can split; together they do: the retry's whole commit can fall inside the first delivery's."""
    loaded = _scenario(tmp_path, "redelivery", LEDGER)
    first_then_retry, retry_then_first = _run(loaded, "first", "retry"), _run(loaded, "retry", "first")
    assert find_split_step(first_then_retry) is None
    assert find_split_step(retry_then_first) is None
    check = AtomicityCheck()
    check.add_run(first_then_retry)
    check.add_run(retry_then_first)
    assert check.finding() is not None
    found = _explore(loaded)
    assert found.verdict is INCOMPLETE
    assert "self.ledger.version" in found.problem and "self.ledger.receipts" in found.problem


AFTER_RELEASE = '''
    """Racy: b writes the counter right after giving the lock back, outside it, while a updates it under the lock."""

    from lab import Scenario, acceptable, actor


    class AfterRelease(Scenario):
        source = "test"
        outcomes = (acceptable("any", run="FINISHED"),)

        def setup(self) -> None:
            self.count = 0
            self.guard = self.lab.lock("guard")

        @actor
        def a(self) -> None:
            with self.guard:
                n = self.count
                self.count = n + 1

        @actor
        def b(self) -> None:
            with self.guard:
                pass
            self.count = 100
'''

AFTER_COUNT_DOWN = '''
    """Racy: the producer counts the latch down and goes on writing, while the consumer updates after its wait."""

    from lab import Scenario, acceptable, actor


    class AfterCountDown(Scenario):
        source = "test"
        outcomes = (acceptable("any", run="FINISHED"),)

        def setup(self) -> None:
            self.value = 0
            self.go = self.lab.latch("go")

        @actor
        def producer(self) -> None:
            self.go.count_down()
            self.value = 5

        @actor
        def consumer(self) -> None:
            self.go.wait()
            n = self.value
            self.value = n + 1
'''


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("name", "text", "attribute"),
    [("after_release", AFTER_RELEASE, "self.count"), ("after_count_down", AFTER_COUNT_DOWN, "self.value")],
)
def test_an_operation_orders_what_came_before_it_not_what_follows_in_its_step(
    tmp_path: Path, name: str, text: str, attribute: str
) -> None:
    """A step begins with the operation that opened it; the accesses after that operation are not ordered by it."""
    found = _explore(_scenario(tmp_path, name, text))
    assert found.verdict is INCOMPLETE
    assert f"read {attribute} " in found.problem and f"may write {attribute} " in found.problem


CORRECT = {
    "latch": ("self.box.done = self.lab.latch('done')", "self.box.done.count_down()", "self.box.done.wait()"),
    "barrier": ("self.box.done = self.lab.barrier('done', 2)", "self.box.done.wait()", "self.box.done.wait()"),
    "stdlib_event": ("self.box.done = threading.Event()", "self.box.done.set()", "self.box.done.wait(5)"),
    "stdlib_queue": ("self.box.done = queue.Queue()", "self.box.done.put(1)", "self.box.done.get()"),
}

SYNCHRONISED = '''
    """Correct: the producer fills two fields, then synchronises; the consumer synchronises, then reads and writes."""

    import queue
    import threading

    from lab import Scenario, acceptable, actor


    class Box:
        def __init__(self) -> None:
            self.a = 0
            self.b = 0
            self.done: object = None


    class Synchronised(Scenario):
        source = "test"
        outcomes = (acceptable("the consumer saw both fields", total=3),)

        def setup(self) -> None:
            self.box = Box()
            MAKE

        @actor
        def producer(self) -> None:
            self.box.a = 1
            self.box.b = self.box.a + 1
            GIVE

        @actor
        def consumer(self) -> None:
            TAKE
            self.box.a = self.box.a + self.box.b
            self.box.b = 0

        def observe(self) -> dict[str, int]:
            return {"total": self.box.a + self.box.b}
'''


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", sorted(CORRECT))
def test_a_hand_off_through_any_primitive_is_not_split(tmp_path: Path, kind: str) -> None:
    make, give, take = CORRECT[kind]
    text = SYNCHRONISED.replace("MAKE", make).replace("GIVE", give).replace("TAKE", take)
    found = _explore(_scenario(tmp_path, f"hand_off_{kind}", text))
    assert (found.verdict, found.problem) == (PASS, "")


def _shipped(name: str) -> LoadedScenario:
    loaded = load(ROOT / "scenarios" / f"{name}.py")
    assert isinstance(loaded, LoadedScenario), str(loaded)
    return loaded


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", ["race_two_requests", "race_duplicate_delivery"])
def test_the_unlocked_session_is_incomplete_at_probe_granularity_and_the_versioned_one_passes(name: str) -> None:
    unlocked = explore_scenario(_shipped(name), variant="UnlockedSession")
    assert unlocked.verdict is INCOMPLETE, unlocked.problem
    assert "self.session._version" in unlocked.problem and "--granularity line" in unlocked.problem
    versioned = explore_scenario(_shipped(name), variant="VersionedSession")
    assert (versioned.verdict, versioned.problem) == (PASS, "")


SLOW = frozenset({"reply_table"})
"""Shipped scenarios left out here for their cost (reply_table: nine actors, 256 schedules, seconds)."""


def _shipped_names() -> list[str]:
    return [path.stem for path in discover(ROOT / "scenarios") if path.stem not in SLOW]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_every_shipped_scenario_passes_at_probe_granularity_with_its_default_variant() -> None:
    """The lessons synchronise correctly (or their races lie at probes, where the explorer runs them): none is
    INCOMPLETE for a step another actor could split."""
    problems = []
    for name in _shipped_names():
        loaded = _shipped(name)
        if loaded.cls.pin is not None:  # a pinned counterexample replays one schedule; it is not explored
            continue
        if run_scenario(loaded).verdict == "SKIPPED":  # it needs what this machine lacks (a database server)
            continue
        found = explore_scenario(loaded)
        if found.verdict is not PASS:
            problems.append(f"{name}: {found.verdict} {found.problem}")
    assert not problems, "\n".join(problems)


def _access(step: int, actor: str, thing: str, mode: str, line: int, *locks: str) -> Access:
    return Access(step, actor, (f"obj:{thing}", "*", mode), ("t.py", line), frozenset(locks))


def _handmade(
    status: RunStatus,
    decisions: list[tuple[str, tuple[str, ...]]],
    sync: dict[int, str | Entry],
    accesses: list[Access],
) -> RunResult:
    """A run built by hand: who ran each step (and who could), what synchronisation each step carried (a name alone
    is a write of that event), and the accesses."""
    entries = {i: ("event", what, "w") if isinstance(what, str) else what for i, what in sync.items()}
    footprints = tuple(frozenset({entries[i]}) if i in entries else frozenset() for i in range(len(decisions)))
    return RunResult(
        status=status,
        trace=(),
        outcomes={},
        errors={},
        blocked=(),
        decisions=tuple(Decision(runnable, chosen) for chosen, runnable in decisions),
        step_footprints=footprints,
        accesses=tuple(accesses),
    )


def _producer_writes_twice(status: RunStatus) -> RunResult:
    """The producer writes x twice and is done; the consumer starts waiting on ``ready``, and the run ends there:
    in a deadlock (nobody will ever set it), or cut short by the explorer (who knows what came next)."""
    return _handmade(
        status,
        [("producer", ("producer", "consumer")), ("consumer", ("consumer",))],
        {1: "ready"},
        [_access(0, "producer", "x", "w", 1), _access(0, "producer", "x", "w", 2)],
    )


@pytest.mark.timeout(10)
def test_a_run_cut_short_does_not_judge_what_would_have_come_next() -> None:
    """A pruned run that stops after the producer's two writes cannot tell whether the consumer's update would have
    been ordered after them; a run that ended there (the producer done, the consumer stuck) can: it is not."""
    consumer = _hand_off(blocked=True)
    for status, expected in ((RunStatus.DIVERGED, False), (RunStatus.DEADLOCK, True)):
        check = AtomicityCheck()
        check.add_run(_producer_writes_twice(status))
        check.add_run(consumer)
        assert (check.finding() is not None) is expected, status


def _hand_off(blocked: bool) -> RunResult:
    """The producer writes x twice, then sets ``ready``; the consumer starts, waits on ``ready``, then updates x.

    Where the consumer waits before the producer sets, it is parked, and resumes in a step of its own.
    """
    both = ("producer", "consumer")
    producer_writes = [_access(0, "producer", "x", "w", 1), _access(0, "producer", "x", "w", 2)]
    if blocked:
        return _handmade(
            RunStatus.FINISHED,
            [
                ("producer", both),
                ("consumer", both),
                ("consumer", both),
                ("producer", ("producer",)),
                ("consumer", ("consumer",)),
            ],
            {2: "ready", 3: "ready", 4: "ready"},
            [*producer_writes, _access(4, "consumer", "x", "r", 5), _access(4, "consumer", "x", "w", 5)],
        )
    return _handmade(
        RunStatus.FINISHED,
        [("producer", both), ("producer", both), ("consumer", ("consumer",)), ("consumer", ("consumer",))],
        {1: "ready", 3: "ready"},
        [*producer_writes, _access(3, "consumer", "x", "r", 5), _access(3, "consumer", "x", "w", 5)],
    )


@pytest.mark.timeout(10)
def test_a_resumed_wait_stays_in_the_epoch_of_the_wait() -> None:
    """The consumer updates x in its 2nd step where its wait did not block and in its 3rd where it did: in both, after
    its first synchronisation, so the window of the producer's writes (up to it) excludes the update in both."""
    check = AtomicityCheck()
    check.add_run(_hand_off(blocked=True))
    check.add_run(_hand_off(blocked=False))
    assert check.finding() is None
    unordered = _handmade(
        RunStatus.FINISHED,  # the same update with no wait before it does race the two writes
        [("producer", ("producer", "consumer")), ("consumer", ("consumer",))],
        {},
        [_access(0, "producer", "x", "w", 1), _access(0, "producer", "x", "w", 2), _access(1, "consumer", "x", "r", 5)],
    )
    found = find_split_step(unordered)
    assert found is not None and (found.first.where[1], found.second.where[1], found.other.where[1]) == (1, 2, 5)


def _lock_then_hand_off(gated: bool) -> RunResult:
    """The producer takes the lock (writes y), gives it back, writes x twice, then sets ``ready``; the consumer
    reads z, takes the lock (writes y), gives it back, waits on ``ready``, then updates x. Where the producer holds
    the lock when the consumer reaches it, the consumer cannot run until it is free (its acquisition is gated)."""
    lock: Entry = ("lock", "guard", "w")
    both, producer, consumer = ("producer", "consumer"), ("producer",), ("consumer",)
    if gated:
        return _handmade(
            RunStatus.FINISHED,
            [
                ("producer", both),
                ("producer", both),
                ("consumer", both),
                ("producer", producer),
                ("producer", both),
                ("consumer", consumer),
                ("consumer", consumer),
                ("consumer", consumer),
            ],
            {1: lock, 4: "ready", 5: lock, 7: "ready"},
            [
                _access(1, "producer", "y", "w", 1, "guard"),
                _access(2, "consumer", "z", "r", 4),
                _access(3, "producer", "x", "w", 2),
                _access(3, "producer", "x", "w", 3),
                _access(5, "consumer", "y", "w", 5, "guard"),
                _access(7, "consumer", "x", "r", 6),
                _access(7, "consumer", "x", "w", 6),
            ],
        )
    return _handmade(
        RunStatus.FINISHED,
        [
            ("consumer", both),
            ("consumer", both),
            ("consumer", both),
            ("producer", both),
            ("producer", both),
            ("producer", both),
            ("producer", both),
            ("consumer", consumer),
        ],
        {1: lock, 4: lock, 6: "ready", 7: "ready"},
        [
            _access(0, "consumer", "z", "r", 4),
            _access(1, "consumer", "y", "w", 5, "guard"),
            _access(4, "producer", "y", "w", 1, "guard"),
            _access(5, "producer", "x", "w", 2),
            _access(5, "producer", "x", "w", 3),
            _access(7, "consumer", "x", "r", 6),
            _access(7, "consumer", "x", "w", 6),
        ],
    )


@pytest.mark.timeout(10)
def test_a_gated_acquisition_is_a_new_operation() -> None:
    """The step that takes a lock another actor held is the acquisition itself, not a resumption: the consumer's
    update is in its third epoch whether or not it had to wait for the lock, and stays out of the window of the
    producer's writes (which ends at its ``ready``)."""
    check = AtomicityCheck()
    check.add_run(_lock_then_hand_off(gated=False))
    check.add_run(_lock_then_hand_off(gated=True))
    assert check.finding() is None


def _held_hand_off(held: bool) -> RunResult:
    """The producer writes x twice, then counts ``go`` down; the consumer reads z, reaches a probe where it is held
    until ``go`` opens (the probe step reads ``go``), then updates x. Where ``go`` is still closed, the consumer is
    parked at the probe and resumes in a step of its own, which carries the latch it waited for."""
    read_go: Entry = ("latch", "go", "r")
    go: Entry = ("latch", "go", "w")
    both = ("producer", "consumer")
    writes = [_access(0, "producer", "x", "w", 1), _access(0, "producer", "x", "w", 2)]
    if held:
        return _handmade(
            RunStatus.FINISHED,
            [
                ("consumer", both),
                ("consumer", both),
                ("producer", ("producer",)),
                ("producer", ("producer",)),
                ("consumer", ("consumer",)),
            ],
            {1: read_go, 3: go, 4: go},
            [
                _access(0, "consumer", "z", "r", 4),
                *[a._replace(step=2) for a in writes],
                _access(4, "consumer", "x", "r", 5),
                _access(4, "consumer", "x", "w", 5),
            ],
        )
    return _handmade(
        RunStatus.FINISHED,
        [("producer", both), ("producer", both), ("consumer", ("consumer",)), ("consumer", ("consumer",))],
        {1: go, 3: read_go},
        [
            *writes,
            _access(2, "consumer", "z", "r", 4),
            _access(3, "consumer", "x", "r", 5),
            _access(3, "consumer", "x", "w", 5),
        ],
    )


@pytest.mark.timeout(10)
def test_a_step_resumed_from_a_probe_hold_stays_in_the_epoch_of_the_probe() -> None:
    check = AtomicityCheck()
    check.add_run(_held_hand_off(held=True))
    check.add_run(_held_hand_off(held=False))
    assert check.finding() is None


HELD = '''
    """Correct: the consumer is held at a probe point until the producer has filled both fields."""

    from lab import Scenario, acceptable, actor


    class Box:
        def __init__(self) -> None:
            self.a = 0
            self.b = 0


    class Held(Scenario):
        source = "test"
        outcomes = (acceptable("the consumer saw both fields", total=3),)

        def setup(self) -> None:
            self.box = Box()
            self.filled = self.lab.latch("filled")
            self.probe = self.lab.probe("box")
            self.lab.hold("consumer", at="take:enter", until=self.filled)

        @actor
        def producer(self) -> None:
            self.box.a = 1
            self.box.b = self.box.a + 1
            self.filled.count_down()

        @actor
        def consumer(self) -> None:
            self.probe("take:enter")
            self.box.a = self.box.a + self.box.b
            self.box.b = 0

        def observe(self) -> dict[str, int]:
            return {"total": self.box.a + self.box.b}
'''


@pytest.mark.timeout(30)
def test_a_hand_off_through_a_probe_hold_is_not_split(tmp_path: Path) -> None:
    """Going on past a hold whose latch is already open still reads the latch, so the consumer's update is ordered
    after the producer's count-down in every run, parked or not."""
    found = _explore(_scenario(tmp_path, "held_hand_off", HELD))
    assert (found.verdict, found.problem) == (PASS, "")
