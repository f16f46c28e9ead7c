"""Random small programs over every access path the recorder knows, written as scenario files.

A program is 2 to 4 actors of 1 to 4 steps each over one shared world (:mod:`tests.fuzz.grammar` holds the state a
program may hold and the steps its actors may take on it). Every actor returns what it read, and ``observe()``
reports the final state of every part the program uses, so an outcome says a lot about the schedule.

:func:`programs` is a Hypothesis strategy (``@composite``, so a failing program shrinks to a small one) that keeps a
program's estimated naive count (:func:`estimate`, from the measured points per step) within a budget at the
granularity it is for; :func:`source` writes a program as a scenario file's text (what a failure prints, loadable by
``lab explore``). Running and comparing them is :mod:`tests.fuzz.running`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st

from tests.fuzz.grammar import GUARDS, PARTS, PLACES, STEPS, points

PRIMITIVE_PARTS = frozenset({"lock", "rlock", "sem", "sig", "ev", "cond", "bar", "q"})
"""The parts that are primitives: a step that takes one is never put under a guard."""

BASE_POINTS = {"line": 1, "instruction": 1}
"""An actor's own points besides its steps' (its first line, its return), measured with the steps'."""


@dataclass(frozen=True)
class Step:
    """One step of an actor: a kind of :data:`~tests.fuzz.grammar.STEPS` with its constant, or a guard around
    ``body``."""

    kind: str
    constant: int = 1
    body: tuple[Step, ...] = ()

    def lines(self) -> list[str]:
        own = [line.format(c=self.constant) for line in STEPS[self.kind].lines]
        if not STEPS[self.kind].guard:
            return own
        indent = "    " * len(own)
        return [*own, *(indent + line for step in self.body for line in step.lines())]

    def points(self, granularity: str) -> int:
        """About how many scheduling points the step adds at ``granularity`` (loops counted once)."""
        return points(self.kind, granularity) + sum(step.points(granularity) for step in self.body)

    def kinds(self) -> list[str]:
        return [self.kind, *(kind for step in self.body for kind in step.kinds())]


@dataclass(frozen=True)
class Program:
    """Two to four actors, each a tuple of steps."""

    actors: tuple[tuple[Step, ...], ...]

    def estimate(self, granularity: str = "line") -> int:
        """About how many naive schedules at ``granularity``: the multinomial of the actors' scheduling points."""
        return estimate([sum(step.points(granularity) for step in steps) for steps in self.actors], granularity)

    def kinds(self) -> set[str]:
        return {kind for steps in self.actors for step in steps for kind in step.kinds()}

    def parts(self) -> list[str]:
        """The parts of the world the program's steps need (and what those need), in :data:`PARTS` order."""
        wanted: set[str] = set()
        todo = [need for kind in self.kinds() for need in STEPS[kind].needs]
        while todo:
            part = todo.pop()
            if part not in wanted:
                wanted.add(part)
                todo.extend(PARTS[part].needs)
        return [part for part in PARTS if part in wanted]


def estimate(points: list[int], granularity: str = "line") -> int:
    """The multinomial of ``points`` (each actor's steps', plus its own base points)."""
    return multinomial([count + BASE_POINTS[granularity] for count in points])


def multinomial(counts: list[int]) -> int:
    """How many ways to interleave sequences of ``counts`` scheduling points (the naive count, if none blocks)."""
    total = math.factorial(sum(counts))
    for count in counts:
        total //= math.factorial(count)
    return total


ACTOR_NAMES = ("a", "b", "c", "d")

_THREADING_PARTS = frozenset({"lock", "rlock", "sem", "sig", "ev", "cond", "bar"})


def source(program: Program) -> str:
    """The program as the text of a scenario file (loadable by ``lab.scenarios.loader.load``, or ``lab explore``)."""
    parts = program.parts()
    steps = sum(len(steps) for steps in program.actors)
    imports = sorted({line for part in parts for line in PARTS[part].imports})
    if _THREADING_PARTS & set(parts):
        imports.insert(0, "import threading")
    defs: list[str] = []
    for part in parts:
        text = PARTS[part].defs
        if text and text not in defs:
            defs.append(text)
    names = [name for part in parts for name in PARTS[part].globals]
    head = [
        f'"""A program the differential fuzzer generated (tests/fuzz): {len(program.actors)} actors, {steps} steps."""',
        "",
        "from __future__ import annotations",
        "",
        *([*imports, ""] if imports else []),
        "from lab import Scenario, acceptable, actor",
    ]
    lines = [
        "\n\n\n".join(["\n".join(head), *(text.strip("\n") for text in defs)]),
        "",
        "",
        "class Fuzzed(Scenario):",
        '    source = "the differential fuzzer"',
        "    line_modules = (__name__,)",
        "    outcomes = (",
        '        acceptable("any finished run", run="FINISHED"),',
        '        acceptable("any deadlock", run="DEADLOCK"),',
        "    )",
        "",
        "    def setup(self) -> None:",
        *("        " + line for part in parts for line in PARTS[part].setup),
    ]
    if not any(PARTS[part].setup for part in parts):
        lines.append("        pass")
    for name, actor_steps in zip(ACTOR_NAMES, program.actors, strict=False):
        lines += ["", "    @actor", f"    def {name}(self) -> tuple[object, ...]:"]
        if names:
            lines.append(f"        global {', '.join(names)}")
        lines += ["        seen: tuple[object, ...] = ()", "        v = 0"]
        lines += ["        " + line for step in actor_steps for line in step.lines()]
        lines.append("        return seen")
    lines += ["", "    def observe(self) -> dict[str, object]:", "        return {"]
    lines += [f'            "{key}": {expression},' for part in parts for key, expression in PARTS[part].observe]
    lines += ["        }", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- generation


def _simple(kinds: list[str]) -> st.SearchStrategy[Step]:
    return st.builds(Step, st.sampled_from(kinds), st.integers(1, 3))


def _is_plain(kind: str) -> bool:
    """Neither a guard, nor a step that blocks or takes a primitive: what a guard may hold."""
    step = STEPS[kind]
    return not step.guard and not step.blocks and not PRIMITIVE_PARTS.intersection(step.needs)


@st.composite
def programs(
    draw: st.DrawFn,
    granularity: str = "line",
    *,
    min_actors: int = 2,
    max_actors: int = 3,
    max_steps: int = 4,
    limit: int = 300,
    exclude: frozenset[str] = frozenset(),
) -> Program:
    """A program of 2 to ``max_actors`` actors, 1 to ``max_steps`` steps each, on one to three of the
    :data:`~tests.fuzz.grammar.PLACES` (so that its actors meet), whose estimated naive count at ``granularity``
    stays within ``limit``: a step or an actor that would take it over is drawn and left out (so nothing is
    filtered out, and shrinking still works); the first ``min_actors`` are always kept. An actor's first step
    never blocks. The steps in ``exclude`` are left out (:data:`tests.fuzz.findings.KNOWN`)."""
    places = draw(st.lists(st.sampled_from(sorted(PLACES)), min_size=1, max_size=2, unique=True))
    kinds = sorted(({kind for place in places for kind in PLACES[place]} | {"local", "sleep"}) - exclude)
    free = [kind for kind in kinds if not STEPS[kind].blocks] or ["local"]
    plain = [kind for kind in kinds if _is_plain(kind)] or ["local"]
    guard = draw(st.sampled_from(GUARDS))
    simple = _simple(free)
    guarded = st.builds(lambda body: Step(guard, 1, tuple(body)), st.lists(_simple(plain), min_size=1, max_size=2))
    steps = st.one_of(_simple(kinds), guarded)
    count = draw(st.integers(min_actors, max_actors))
    actors: list[list[Step]] = []
    for who in range(count):
        first = draw(simple)
        if who >= min_actors and _over([*actors, [first]], granularity, limit):
            continue  # a third or fourth actor only where it fits
        actors.append([first])
    for actor in actors:
        for _ in range(draw(st.integers(0, max_steps - 1))):
            step = draw(steps)
            actor.append(step)
            if _over(actors, granularity, limit):
                actor.pop()
    return Program(tuple(tuple(actor) for actor in actors))


def _over(actors: list[list[Step]], granularity: str, limit: int) -> bool:
    return estimate([sum(s.points(granularity) for s in actor) for actor in actors], granularity) > limit
