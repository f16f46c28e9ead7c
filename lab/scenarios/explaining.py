# size: one algorithm (steps, races, swapped replays) and the record it leaves; split, each half is unreadable alone
"""Why a counterexample fails: the two racing steps whose order decided it, and the one swap that saves the run.

A FAIL says *that* some schedule reaches a forbidden outcome. A learner also needs *why*: which two pieces of code,
touching which state, ran in the wrong order. The answer is found the way a person would test it, by experiment:

1. The failing run (recorded with its accesses) is cut into steps, one per scheduling decision. Two steps of
   different actors *race* when their executed footprints conflict (same object, overlapping key, one writes) and
   nothing else orders them: no step in between is ordered after the first and before the second (vector clocks
   over program order and every conflict, as the explorer's reduction computes them). Racing steps are adjacent in
   some run equivalent to the failing one: the steps between them commute out of the way.
2. For each race, latest first, the run is replayed with the two steps swapped: the steps before the first racing
   step as they were, then the steps between them that do not depend on the first (they commute, so the state is
   the same), then the second racing step *before* the first, then the rest of the failing order as long as it can
   still be followed, and after that the scheduler's default (keep the running actor, else the lowest-numbered
   runnable one). Each is one run; a swap whose second step could not run at that point (a lock taken after the
   first step released it) ends at once.
3. The first swap whose run reaches an ACCEPTABLE or INTERESTING outcome, with every invariant held, is *the* swap:
   those two steps in the failing order make the run forbidden, in the other order allowed.

Latest first, because the latest race that decides the outcome keeps the longest common prefix with the failing
run: the acceptable run differs from the failing one as late, and so as little, as possible, and the learner sees
the last moment the run could still have been saved. The work is bounded by the number of races (at most
:data:`MAX_SWAPS` replays), and it is only done for a FAIL: a PASS never pays for it.

Everything in an :class:`Explanation` is deterministic: steps are decision indices, objects are the run's labels
(paths such as ``self.session._version``, never addresses), files are relative to the lab's root, so an auditor who
explores again gets the same explanation, word for word.
"""

from __future__ import annotations

import itertools
import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.engine.core import (
    DecisionPoint,
    Entry,
    Footprint,
    Granularity,
    Json,
    KeepCurrent,
    ReplayPolicy,
    RunResult,
    RunStatus,
    conflict,
    describe_entry,
    entries_conflict,
    schedule_string,
)
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import Grade, Outcome, row_for
from lab.scenarios.runner import ScenarioResult, Verdict, run_scenario

MAX_SWAPS = 64
"""The most swapped runs one explanation may replay (the latest races first); a run with more races says so."""
SHOWN_RACES = 3
"""How many races an explanation without a saving swap lists (latest first)."""
SHOWN_ACCESSES = 4
"""How many conflicting accesses of one step the text names; the record keeps them all."""
WATCHDOG_SECONDS = 2.0
"""The watchdog of each swapped run, as for exploration's runs."""

_ROOT = Path(__file__).resolve().parents[2]  # the checkout: this file is lab/scenarios/explaining.py


@dataclass(frozen=True)
class Touch:
    """One access of a racing step that conflicts with the other step: what, where, under which locks.

    ``file`` is "" (and ``line`` 0) for an access without a place of its own: the lab operation that began the step
    (a lock's acquire, say), or state the code noted without one (a database row, through ``note_shared_access``).
    """

    mode: str
    thing: str
    key: str
    file: str
    line: int
    locks: frozenset[str] = frozenset()

    @property
    def entry(self) -> Entry:
        """The footprint entry, as the engine writes it."""
        return self.thing, self.key, "w" if self.mode == "write" else "r"

    def describe(self) -> str:
        """``read self.session._version at lab/sessions/versioned.py:260``."""
        if self.file:
            return f"{describe_entry(self.entry)} at {self.file}:{self.line}"
        if self.thing == "*" or self.thing.startswith("obj:"):  # state noted without a place (a database row)
            return describe_entry(self.entry)
        return f"{describe_entry(self.entry)} (the {self.thing} operation that began the step)"

    def to_json(self) -> dict[str, Json]:
        """The record of this access."""
        return {
            "mode": self.mode,
            "thing": self.thing,
            "key": self.key,
            "access": describe_entry(self.entry),
            "file": self.file,
            "line": self.line,
            "locks": sorted(self.locks),
        }


@dataclass(frozen=True)
class RacingStep:
    """One of two racing steps: whose, its index among the run's steps (decisions, from 0), what it touched."""

    actor: str
    step: int
    touches: tuple[Touch, ...]

    def to_json(self) -> dict[str, Json]:
        """The record of this step."""
        return {"actor": self.actor, "step": self.step, "accesses": [touch.to_json() for touch in self.touches]}


@dataclass(frozen=True)
class Race:
    """Two steps of different actors that conflict and that nothing else orders: ``first`` ran first.

    ``lock`` names a lock both conflicting accesses were made under ("" when none): then it is the two critical
    sections that can be swapped, by letting ``second``'s actor take the lock first. ``exchanged`` are the two
    steps the swapped run puts the other way round: the racing steps themselves, or, under a common lock, the steps
    where each actor took it.
    """

    first: RacingStep
    second: RacingStep
    lock: str = ""
    exchanged: tuple[int, int] = (0, 0)

    def to_json(self) -> dict[str, Json]:
        """The record of this race."""
        return {
            "first": self.first.to_json(),
            "second": self.second.to_json(),
            "lock": self.lock,
            "exchanged": list(self.exchanged),
        }


@dataclass(frozen=True)
class Swapped:
    """The run with the two racing steps swapped: its schedule, what it reached, and the row that allows it."""

    schedule: str
    observed: dict[str, Json]
    grade: str
    reason: str

    def to_json(self) -> dict[str, Json]:
        """The record of the swapped run."""
        return {"schedule": self.schedule, "observed": dict(self.observed), "grade": self.grade, "reason": self.reason}


@dataclass(frozen=True)
class Explanation:
    """Why a failing run fails: the race whose swap makes it allowed, or, when no single swap does, the races.

    ``races`` counts the racing pairs of the failing run (on data; on synchronisation alone when none is on data),
    ``swaps`` the distinct swaps they make, and ``tried`` the swapped runs replayed (latest race first, at most
    :data:`MAX_SWAPS`). ``swap`` and ``swapped`` are set together, when some swap saves the run; ``racing`` lists
    the latest races (at most :data:`SHOWN_RACES`) when none does.
    """

    races: int
    swaps: int
    tried: int
    swap: Race | None = None
    swapped: Swapped | None = None
    racing: tuple[Race, ...] = ()

    @property
    def found(self) -> bool:
        """True when one swap of two racing steps turns the failing run into an allowed one."""
        return self.swap is not None and self.swapped is not None

    def to_json(self) -> dict[str, Json]:
        """The record of this explanation (``lab.evidence`` writes it into the counterexample)."""
        return {
            "races": self.races,
            "swaps": self.swaps,
            "tried": self.tried,
            "swap": None if self.swap is None else self.swap.to_json(),
            "swapped": None if self.swapped is None else self.swapped.to_json(),
            "racing": [race.to_json() for race in self.racing],
            "text": list(self.sentences()),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Explanation:
        """The explanation a record describes (the inverse of :meth:`to_json`); a malformed record raises
        ``KeyError``, ``TypeError`` or ``ValueError``."""
        swapped = data["swapped"]
        return cls(
            races=_count(data["races"]),
            swaps=_count(data["swaps"]),
            tried=_count(data["tried"]),
            swap=None if data["swap"] is None else _race_from_json(data["swap"]),
            swapped=None
            if swapped is None
            else Swapped(
                _text(swapped["schedule"]), dict(swapped["observed"]), _text(swapped["grade"]), _text(swapped["reason"])
            ),
            racing=tuple(_race_from_json(race) for race in data["racing"]),
        )

    def sentences(self) -> tuple[str, ...]:
        """The explanation in plain sentences, one per line, unwrapped (the record keeps them as ``text``); an
        access line starts with two spaces."""
        if self.swap is not None and self.swapped is not None:
            first, second, swapped = self.swap.first, self.swap.second, self.swapped
            if self.swap.lock:
                b, a = self.swap.exchanged[1], self.swap.exchanged[0]
                how = (
                    f"both hold {self.swap.lock}: with {second.actor} taking it first (its step {b} before "
                    f"{first.actor}'s step {a})"
                )
            else:
                how = f"with {second.actor}'s step first"
            return (
                f"{first.actor}'s step {first.step} ran before {second.actor}'s step {second.step}, and they race:",
                *_step_lines(first),
                *_step_lines(second),
                f"{how}, the run reaches {swapped.grade}: {_outcome(swapped.observed)} ({swapped.reason})",
            )
        if self.races == 0:
            return (
                "no two steps of different actors touch the same state in this run: if the order of their "
                "steps decided the outcome, it did so through locks, latches or other synchronisation alone",
            )
        each = (
            "swapping its only race"
            if self.races == 1
            else f"swapping each of its {self.races} races in turn"
            if self.tried >= self.swaps
            else f"swapping the latest {self.tried} of its {self.races} races in turn"
        )
        lines = [f"no single swap of two racing steps makes this run allowed ({each} still fails); the latest:"]
        for race in self.racing:
            lines += [
                f"{race.first.actor}'s step {race.first.step}, then {race.second.actor}'s step {race.second.step}:",
                *_step_lines(race.first),
                *_step_lines(race.second),
            ]
        return tuple(lines)

    def lines(self, *, width: int = 80, indent: str = "  ") -> list[str]:
        """The sentences wrapped to ``width`` columns, never inside a word or a name, each indented (a sentence's
        own leading spaces are kept, and its continuation lines are indented two more)."""
        wrapped: list[str] = []
        for sentence in self.sentences():
            body = sentence.lstrip(" ")
            lead = indent + " " * (len(sentence) - len(body))
            wrapped += textwrap.wrap(
                body,
                width=width,
                initial_indent=lead,
                subsequent_indent=lead + "  ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        return wrapped


def explain_failure(
    loaded: LoadedScenario,
    schedule: str,
    *,
    granularity: str = Granularity.PROBE,
    variant: str | None = None,
    run: RunResult | None = None,
    max_swaps: int = MAX_SWAPS,
) -> Explanation:
    """Explain why ``schedule`` fails: find the race whose swap makes the run allowed (see the module docstring).

    ``run`` is the failing run if the caller already has it with its accesses recorded (the explorer does);
    otherwise the schedule is replayed once, recording them.
    """
    if run is None or not run.accesses:
        replayed = run_scenario(
            loaded,
            policy=ReplayPolicy(schedule, loaded.cls.actors),
            granularity=granularity,
            variant=variant,
            watchdog_seconds=WATCHDOG_SECONDS,
            record_accesses=True,
        )
        run = replayed.run
    if run is None:
        return Explanation(0, 0, 0)
    actors = [decision.chosen for decision in run.decisions]
    footprints = [run.step_footprints[k] if k < len(run.step_footprints) else _EMPTY for k in range(len(actors))]
    races, clocks = _races(actors, [_ordering(f) for f in footprints], [_data(f) for f in footprints])
    if not races:  # the order of synchronisation alone (an ABBA deadlock): its races, locks ordering too
        races, clocks = _races(actors, footprints, footprints)
    roots = (_ROOT, loaded.path.resolve().parent.parent)  # a scenario sits in <checkout>/scenarios/
    found = [_race(run, actors, i, j, roots) for i, j in sorted(races, key=lambda pair: (-pair[1], -pair[0]))]
    swaps = list(dict.fromkeys(race.exchanged for race in found))
    table = tuple(loaded.cls.outcomes)
    for tried, (a, b) in enumerate(swaps[:max_swaps], 1):
        order, strict = _swapped_order(actors, clocks, a, b)
        policy = _FollowThenDefault(order, strict)
        result = run_scenario(
            loaded, policy=policy, granularity=granularity, variant=variant, watchdog_seconds=WATCHDOG_SECONDS
        )
        allowed = None if policy.refused or result.run is None else _allowed(table, result)
        if allowed is not None and result.run is not None:
            race = next(race for race in found if race.exchanged == (a, b))
            swapped = Swapped(
                schedule_string(result.run.decisions, loaded.cls.actors),
                _plain(result.observed),
                str(allowed.grade),
                allowed.reason,
            )
            return Explanation(len(found), len(swaps), tried, race, swapped)
    return Explanation(len(found), len(swaps), min(len(swaps), max_swaps), racing=tuple(found[:SHOWN_RACES]))


class _FollowThenDefault:
    """A policy that follows ``order`` (one actor per step) exactly for its first ``strict`` steps, refusing to go
    on if it cannot, then follows it as long as its next actor can run, then keeps the running actor (or the
    lowest-numbered runnable one), as the scheduler's default does."""

    def __init__(self, order: Sequence[str], strict: int) -> None:
        self._order = order
        self._strict = strict
        self._following = True
        self._default = KeepCurrent()
        self.refused = False

    def choose(self, point: DecisionPoint) -> str:
        """The next actor of the order while it can run, then the default."""
        if self._following and point.index < len(self._order):
            wanted = self._order[point.index]
            if wanted in point.runnable:
                return wanted
            if point.index < self._strict:
                self.refused = True
                raise _SwapImpossible(f"step {point.index}: {wanted} cannot run here")
            self._following = False
        return self._default.choose(point)


class _SwapImpossible(Exception):
    """The swapped order cannot be followed: the later racing step could not run before the earlier one."""


_EMPTY: Footprint = frozenset()
_LOCK = "lock"


def _ordering(footprint: Footprint) -> Footprint:
    """What orders steps for the search: everything but locks, whose order is one of the things a swap changes."""
    return frozenset(entry for entry in footprint if entry[0] != _LOCK)


def _data(footprint: Footprint) -> Footprint:
    """The program's own state in a footprint (and "anything"): what a race is about."""
    return frozenset(entry for entry in footprint if entry[0] == "*" or entry[0].startswith("obj:"))


def _races(
    actors: Sequence[str], ordering: Sequence[Footprint], racing: Sequence[Footprint]
) -> tuple[list[tuple[int, int]], list[dict[str, int]]]:
    """The racing pairs ``(i, j)`` of a run, and each step's vector clock (actor -> its latest step ordered at or
    before this one, by program order and ``ordering`` conflicts).

    ``i`` races ``j`` when they are of different actors, their ``racing`` footprints conflict, and ``i`` is ordered
    before none of ``j``'s other direct predecessors (the actor's previous step, the other earlier steps of other
    actors whose ``ordering`` footprints conflict with ``j``'s).
    """
    clocks: list[dict[str, int]] = []
    last: dict[str, int] = {}
    by_thing: dict[str, list[int]] = {}
    unknown: list[int] = []  # steps that may have touched anything
    touching: list[int] = []  # steps with a non-empty footprint
    races: list[tuple[int, int]] = []
    for j, me in enumerate(actors):
        footprint = ordering[j]
        things = {thing for thing, _key, _mode in footprint if thing != "probe"}
        candidates = (
            set(touching) if "*" in things else set(unknown).union(*(by_thing.get(thing, ()) for thing in things))
        )
        preds = sorted(i for i in candidates if actors[i] != me and conflict(ordering[i], footprint))
        clock = dict(clocks[last[me]]) if me in last else {}
        for i in preds:
            who = actors[i]
            if (
                conflict(racing[i], racing[j])
                and clock.get(who, -1) < i
                and not any(clocks[k].get(who, -1) >= i for k in preds if k != i)
            ):
                races.append((i, j))
        for k in preds:
            for who, tick in clocks[k].items():
                if clock.get(who, -1) < tick:
                    clock[who] = tick
        clock[me] = j
        clocks.append(clock)
        last[me] = j
        if footprint:
            touching.append(j)
        if "*" in things:
            unknown.append(j)
        for thing in things:
            by_thing.setdefault(thing, []).append(j)
    return races, clocks


def _swapped_order(actors: Sequence[str], clocks: Sequence[Mapping[str, int]], i: int, j: int) -> tuple[list[str], int]:
    """The failing run's order with ``j`` moved just before ``i``, and how many of its steps must be followed
    exactly: the steps before ``i``, the steps between that do not depend on ``i`` (they commute with it), ``j``,
    then ``i`` and the steps that do depend on it, then the rest."""
    first = actors[i]
    between = range(i + 1, j)
    after = [k for k in between if clocks[k].get(first, -1) >= i]
    before = [k for k in between if clocks[k].get(first, -1) < i]
    order = [
        *actors[:i],
        *(actors[k] for k in before),
        actors[j],
        actors[i],
        *(actors[k] for k in after),
        *actors[j + 1 :],
    ]
    return order, i + len(before) + 1


def _allowed(table: Sequence[Outcome], result: ScenarioResult) -> Outcome | None:
    """The ACCEPTABLE or INTERESTING row ``result`` reaches with every invariant held, or ``None``."""
    if result.run_status == RunStatus.DIVERGED or result.failed_invariants or result.verdict is Verdict.ERROR:
        return None
    row = row_for(table, result.observed, tuple(result.outcomes))
    return row if row is not None and row.grade is not Grade.FORBIDDEN else None


def _race(run: RunResult, actors: Sequence[str], i: int, j: int, roots: Sequence[Path]) -> Race:
    """The two racing steps with the accesses of each that conflict with the other's, and what to swap: the steps
    themselves, or, when every conflicting pair of accesses was made under a common lock, the steps where each
    actor took that lock (a critical section cannot start inside another one)."""
    mine, theirs = _touches(run, i, roots), _touches(run, j, roots)
    pairs = [(a, b) for a, b in itertools.product(mine, theirs) if entries_conflict(a.entry, b.entry)]
    on_data = [(a, b) for a, b in pairs if _data(frozenset((a.entry, b.entry)))]
    pairs = on_data or pairs  # a race on data is about the data; the locks it was made under are said apart
    left = tuple(dict.fromkeys(a for a, _ in pairs))
    right = tuple(dict.fromkeys(b for _, b in pairs))
    common = [a.locks & b.locks for a, b in pairs]
    lock = min(frozenset.intersection(*common)) if common and all(common) and frozenset.intersection(*common) else ""
    exchanged = (i, j)
    if lock:
        exchanged = (_took(run, actors, i, lock), _took(run, actors, j, lock))
    return Race(RacingStep(actors[i], i, left), RacingStep(actors[j], j, right), lock, exchanged)


def _took(run: RunResult, actors: Sequence[str], step: int, lock: str) -> int:
    """The step where the actor of ``step``, holding ``lock`` there, took it: its latest step up to ``step`` whose
    operation was on that lock (the step itself when none is found)."""
    entry = (_LOCK, lock, "w")
    for k in range(step, -1, -1):
        if actors[k] == actors[step] and k < len(run.step_footprints) and entry in run.step_footprints[k]:
            return k
    return step


def _touches(run: RunResult, step: int, roots: Sequence[Path]) -> list[Touch]:
    """What ``step`` touched, in the order it happened, each access once; footprint entries no access logged (the
    operation that began the step) first, without a line."""
    seen: set[tuple[Entry, str, int]] = set()
    logged: set[Entry] = set()
    found: list[Touch] = []
    for access in run.accesses:
        if access.step != step or access.entry[0] == "probe":
            continue
        logged.add(access.entry)
        where = (_shown(access.where[0], roots), access.where[1]) if access.where[0] else ("", 0)
        if (access.entry, *where) not in seen:
            seen.add((access.entry, *where))
            found.append(_touch(access.entry, *where, access.locks))
    footprint = run.step_footprints[step] if step < len(run.step_footprints) else _EMPTY
    operation = [_touch(entry, "", 0, frozenset()) for entry in sorted(footprint - logged) if entry[0] != "probe"]
    return operation + found


def _touch(entry: Entry, file: str, line: int, locks: frozenset[str]) -> Touch:
    thing, key, mode = entry
    return Touch("write" if mode == "w" else "read", thing, key, file, line, locks)


def _race_from_json(data: Mapping[str, Any]) -> Race:
    a, b = data["exchanged"]
    return Race(
        _step_from_json(data["first"]), _step_from_json(data["second"]), _text(data["lock"]), (_count(a), _count(b))
    )


def _text(value: object) -> str:
    # _text and _count read a record from a folder: their TypeError and ValueError are what the auditor's reader
    # (lab.evidence.verify.explore_checks) turns into a problem line, like json's own.
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{value!r} is not a whole number >= 0")
    return value


def _step_from_json(data: Mapping[str, Any]) -> RacingStep:
    touches = tuple(
        Touch(
            _text(t["mode"]),
            _text(t["thing"]),
            _text(t["key"]),
            _text(t["file"]),
            _count(t["line"]),
            frozenset(map(_text, t["locks"])),
        )
        for t in data["accesses"]
    )
    return RacingStep(_text(data["actor"]), _count(data["step"]), touches)


def _step_lines(step: RacingStep) -> list[str]:
    """One line per conflicting access of ``step`` (at most :data:`SHOWN_ACCESSES`), indented under its race."""
    shown = [f"  {step.actor}, step {step.step}: {touch.describe()}" for touch in step.touches[:SHOWN_ACCESSES]]
    hidden = len(step.touches) - SHOWN_ACCESSES
    if hidden > 0:
        shown.append(
            f"  {step.actor}, step {step.step}: and {hidden} more conflicting access{'es' if hidden > 1 else ''}"
        )
    if not shown:  # a conflict only through "anything": a step the lab could not observe
        shown.append(f"  {step.actor}, step {step.step}: anything (a step the lab could not observe)")
    return shown


def _outcome(observed: Mapping[str, Json]) -> str:
    return ", ".join(f"{key}={_value(value)}" for key, value in observed.items())


def _value(value: Json) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _plain(observed: Mapping[str, Json]) -> dict[str, Json]:
    """``observed`` as JSON keeps it, keys sorted, as a counterexample's ``observed`` is."""
    plain: dict[str, Json] = json.loads(json.dumps(dict(observed), sort_keys=True, ensure_ascii=False))
    return plain


def _shown(filename: str, roots: Sequence[Path]) -> str:
    """A file as the explanation names it: relative to the first of ``roots`` it is inside (the lab's root, the
    checkout the scenario sits in), the same in every clone and in an evidence folder's archive; else in full."""
    path = Path(filename).resolve()
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return path.as_posix()


def replay_command(name: str, schedule: str, granularity: str, variant: str) -> str:
    """The ``lab replay`` command of ``schedule``, with the same flags a counterexample's command has.

    Spelt ``python -m lab replay``: it works alike in a checkout and with an installed lab (``run.py``, the first
    spelling, exists only in a checkout)."""
    flags = f" --granularity {granularity}" if granularity != Granularity.PROBE else ""
    flags += f" --variant {variant}" if variant else ""
    return f"python -m lab replay {name}:{schedule}{flags}"


__all__ = ["Explanation", "Race", "RacingStep", "Swapped", "Touch", "explain_failure", "replay_command"]
