"""Random small programs, each explored reduced and naively: any difference in the outcomes reached is a bug.

A program is 2-3 actors of 1-4 steps each over one shared world: an object's attributes (``self.box.x``), a dict's
items (``self.d["k"]``, ``self.d.get``), a list's items (``self.items[0]``, ``append``, ``len``), a module global
(``G``), a standard ``threading.Lock`` taken around steps, a ``threading.Event`` (``set``, ``wait``, ``is_set``), a
``threading.Condition`` (notify under a flag, wait in a ``while`` loop on it) and local computation. Every actor
returns what it read, and ``observe()`` reports the whole final state, so an outcome says a lot about the schedule.

:func:`programs` is a Hypothesis strategy (``@composite``, so a failing program shrinks to a small one);
:func:`source` writes a program as a scenario file's text (what a failure prints); :func:`explore_both` writes it
to a module file, loads it as the lab loads any scenario (its own module is its ``line_modules``, so line
granularity instruments it) and explores it twice at line granularity: naively (``reduction=False``, the ground
truth) and reduced (optimal DPOR, prove mode). A deadlock or an actor's error is an outcome like any other: the
comparison is of the outcome keys reached (``found.outcomes``), not of verdicts.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import math
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from lab.scenarios.exploring import ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, load

MAX_NAIVE = 2_000
"""The schedule budget of the naive enumeration: a program it does not finish within is skipped, not compared."""

ESTIMATE_LIMIT = 300
"""The generator keeps a program's estimated naive count (:meth:`Program.estimate`) within this."""

# One line each: the name of a step, and its text with ``{c}`` for its constant.
SIMPLE_STEPS: dict[str, str] = {
    "read_x": "seen.append(v := self.box.x)",
    "write_x": "self.box.x = v + {c}",
    "read_y": "seen.append(v := self.box.y)",
    "write_y": "self.box.y = {c}",
    "read_item": 'seen.append(v := self.d["k"])',
    "write_item": 'self.d["k"] = v + {c}',
    "get_item": 'seen.append(v := self.d.get("j", -1))',
    "add_key": 'self.d["j"] = {c}',
    "read_list": "seen.append(v := self.items[0])",
    "write_list": "self.items[0] = v + {c}",
    "append": "self.items.append({c})",
    "length": "seen.append(v := len(self.items))",
    "last": "seen.append(v := self.items[-1])",
    "read_global": "seen.append(v := G)",
    "write_global": "G = v + {c}",
    "local": "v = v * 2 + {c}",
    "set_event": "self.ev.set()",
    "event_is_set": "seen.append(self.ev.is_set())",
}

# Steps of more than one line, or that may block; never put under the lock.
SYNC_STEPS: dict[str, tuple[str, ...]] = {
    "wait_event": ("self.ev.wait()",),
    "notify": ("with self.cond:", "    self.ready = True", "    self.cond.notify_all()"),
    "wait_cond": ("with self.cond:", "    while not self.ready:", "        self.cond.wait()"),
}


LOCATIONS: dict[str, tuple[str, ...]] = {
    "attribute x": ("read_x", "write_x"),
    "attribute y": ("read_y", "write_y", "read_x"),
    "dict item": ("read_item", "write_item"),
    "dict key": ("get_item", "add_key", "write_item"),
    "list": ("read_list", "write_list", "append", "length", "last"),
    "global": ("read_global", "write_global"),
    "event": ("set_event", "event_is_set", "wait_event"),
    "condition": ("notify", "wait_cond"),
}
"""The shared places a program's steps touch, each with its steps (a program draws one or two places)."""

POINTS = {"set_event": 2, "event_is_set": 2, "wait_event": 1, "notify": 7, "wait_cond": 4}
"""Scheduling points of the steps that have more than one (their lines, and the primitive's own operations)."""


@dataclass(frozen=True)
class Step:
    """One step of an actor: a simple or sync step by name, or ``locked`` around ``body`` (simple steps)."""

    kind: str
    constant: int = 1
    body: tuple[Step, ...] = ()

    def lines(self) -> list[str]:
        if self.kind == "locked":
            return ["with self.lock:", *("    " + line for step in self.body for line in step.lines())]
        if self.kind in SYNC_STEPS:
            return list(SYNC_STEPS[self.kind])
        return [SIMPLE_STEPS[self.kind].format(c=self.constant)]

    def points(self) -> int:
        """About how many scheduling points the step has at line granularity (measured, loops counted once)."""
        if self.kind == "locked":
            return 4 + sum(step.points() for step in self.body)
        return POINTS.get(self.kind, 1)


@dataclass(frozen=True)
class Program:
    """Two or three actors, each a tuple of steps."""

    actors: tuple[tuple[Step, ...], ...]

    def estimate(self) -> int:
        """About how many naive schedules: the multinomial of the actors' scheduling points."""
        return estimate([sum(step.points() for step in steps) for steps in self.actors])


def estimate(points: list[int]) -> int:
    """The multinomial of ``points`` (each actor's, plus one for its end)."""
    counts = [count + 1 for count in points]
    total = math.factorial(sum(counts))
    for count in counts:
        total //= math.factorial(count)
    return total


ACTOR_NAMES = ("a", "b", "c")

_HEADER = '''"""A program the differential fuzzer generated (tests/fuzz/programs.py): {actors} actors, {steps} steps."""

import threading

from lab import Scenario, acceptable, actor

G = 0


class Box:
    def __init__(self) -> None:
        self.x = 0
        self.y = 0


class Fuzzed(Scenario):
    source = "the differential fuzzer"
    line_modules = (__name__,)
    outcomes = (
        acceptable("any finished run", run="FINISHED"),
        acceptable("any deadlock", run="DEADLOCK"),
    )

    def setup(self) -> None:
        global G
        G = 0
        self.box = Box()
        self.d = {{"k": 0}}
        self.items = [0]
        self.lock = threading.Lock()
        self.ev = threading.Event()
        self.cond = threading.Condition()
        self.ready = False
'''

_OBSERVE = """
    def observe(self) -> dict[str, object]:
        return {
            "x": self.box.x,
            "y": self.box.y,
            "d": dict(self.d),
            "items": list(self.items),
            "g": G,
            "ev": self.ev.is_set(),
            "ready": self.ready,
        }
"""


def source(program: Program) -> str:
    """The program as the text of a scenario file (loadable by ``lab.scenarios.loader.load``, or ``lab explore``)."""
    steps = sum(len(steps) for steps in program.actors)
    parts = [_HEADER.format(actors=len(program.actors), steps=steps)]
    for name, actor_steps in zip(ACTOR_NAMES, program.actors, strict=False):
        parts.append("\n    @actor")
        parts.append(f"    def {name}(self) -> list[object]:")
        parts.append("        global G")
        parts.append("        seen: list[object] = []")
        parts.append("        v = 0")
        for step in actor_steps:
            parts.extend("        " + line for line in step.lines())
        parts.append("        return seen")
    parts.append(_OBSERVE)
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------- generation


def _simple(kinds: list[str]) -> st.SearchStrategy[Step]:
    return st.builds(Step, st.sampled_from(kinds), st.integers(1, 3))


def _steps(kinds: list[str], sync: list[str]) -> st.SearchStrategy[Step]:
    """One step: simple first, so that a failing program shrinks toward plain reads and writes."""
    simple = _simple(kinds)
    locked = st.builds(lambda body: Step("locked", 1, tuple(body)), st.lists(simple, min_size=1, max_size=2))
    if not sync:
        return st.one_of(simple, locked)
    return st.one_of(simple, locked, st.builds(Step, st.sampled_from(sync)))


@st.composite
def programs(draw: st.DrawFn, max_actors: int = 3, max_steps: int = 4, limit: int = ESTIMATE_LIMIT) -> Program:
    """A program of 2 to ``max_actors`` actors, 1 to ``max_steps`` steps each, on one or two of the
    :data:`LOCATIONS` (so that its actors meet), whose estimated naive count stays within ``limit``: a step that
    would take it over is drawn and left out (so nothing is filtered out, and shrinking still works); an actor's
    first step is a simple one."""
    places = draw(st.lists(st.sampled_from(sorted(LOCATIONS)), min_size=1, max_size=2, unique=True))
    kinds = sorted({kind for place in places for kind in LOCATIONS[place] if kind in SIMPLE_STEPS} | {"local"})
    sync = sorted(kind for place in places for kind in LOCATIONS[place] if kind in SYNC_STEPS)
    steps = _steps(kinds, sync)
    count = draw(st.integers(2, max_actors))
    actors: list[list[Step]] = [[draw(_simple(kinds))] for _ in range(count)]
    for who in range(count):
        for _ in range(draw(st.integers(0, max_steps - 1))):
            step = draw(steps)
            points = [sum(s.points() for s in actor) for actor in actors]
            points[who] += step.points()
            if estimate(points) <= limit:
                actors[who].append(step)
    return Program(tuple(tuple(actor) for actor in actors))


# ---------------------------------------------------------------------------------------------------- running

_folder: Path | None = None
_serial = itertools.count()


def _home() -> Path:
    """A temporary folder for the generated modules, removed when the process ends."""
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="lab_fuzz_"))
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


@dataclass(frozen=True)
class Comparison:
    """Both explorations of one program, and what the comparison needs of them."""

    text: str
    naive: ScenarioExploration
    reduced: ScenarioExploration

    @property
    def naive_complete(self) -> bool:
        """Naive enumeration ran every schedule (no budget, bound or clock cut it)."""
        return not (self.naive.budget_hit or self.naive.time_hit or self.naive.bounded)

    @property
    def reduced_complete(self) -> bool:
        return not (self.reduced.budget_hit or self.reduced.time_hit or self.reduced.bounded)

    @property
    def missing(self) -> set[str]:
        """Outcomes naive enumeration reached that the reduced exploration did not."""
        return set(self.naive.outcomes) - set(self.reduced.outcomes)

    @property
    def extra(self) -> set[str]:
        """Outcomes the reduced exploration reached that naive enumeration did not (impossible when it is real)."""
        return set(self.reduced.outcomes) - set(self.naive.outcomes)

    def message(self) -> str:
        """What a failing comparison says: the difference, then the program as a scenario file."""
        lines = [
            f"reduced and naive exploration differ: naive {len(self.naive.outcomes)} outcomes in "
            f"{self.naive.schedules} schedules, reduced {len(self.reduced.outcomes)} in {self.reduced.schedules}",
            *(f"  only naive reached: {key}" for key in sorted(self.missing)),
            *(f"  only reduced reached: {key}" for key in sorted(self.extra)),
            "the program (a scenario file):",
            self.text,
        ]
        return "\n".join(lines)


Explore = Callable[[LoadedScenario, bool, int], ScenarioExploration]


def line_exploration(loaded: LoadedScenario, reduction: bool, max_schedules: int) -> ScenarioExploration:
    """The lab's exploration at line granularity: optimal DPOR proving when ``reduction``, else naive."""
    return explore_scenario(loaded, granularity="line", reduction=reduction, max_schedules=max_schedules)


def explore_both(
    program: Program, *, max_naive: int = MAX_NAIVE, explore: Explore = line_exploration
) -> Comparison | None:
    """Write ``program`` to a module, load it and explore it naively, then (if that finished) reduced.

    ``None`` when the naive enumeration did not finish within ``max_naive`` schedules: there is no ground truth.
    ``explore`` is the exploration to run (a test passes a broken one to check that the comparison catches it).
    """
    text = source(program)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    # A name never used before in this process: a module loaded again at the same path once its first load left
    # sys.modules explores other scheduling points (462 naive schedules where the first load ran 10).
    path = _home() / f"fuzz_{next(_serial)}_{digest}.py"
    path.write_text(text, encoding="utf-8")
    loaded = load(path)
    if not isinstance(loaded, LoadedScenario):
        raise AssertionError(f"the fuzzer wrote a program the loader refuses ({loaded}):\n{text}")
    try:
        naive = explore(loaded, False, max_naive)
        if naive.budget_hit or naive.time_hit or naive.bounded:
            return None
        reduced = explore(loaded, True, max_naive * 10)
        return Comparison(text, naive, reduced)
    finally:
        sys.modules.pop(loaded.cls.__module__, None)
        path.unlink(missing_ok=True)
