"""Counterexamples kept as lessons: a scenario file that replays one recorded schedule of a race scenario.

When an exploration fails (a FORBIDDEN or undeclared outcome, or a broken invariant: over the correct session or
over a mutant of the kill matrix), ``run.py --explore --save-scenario NAME`` writes ``scenarios/NAME.py``: a
docstring that tells the interleaving step by step, and one call to :func:`pinned_scenario` naming the race
scenario, its :class:`~lab.scenarios.base.Pin` (the schedule string, its granularity and the session variant) and
the outcome that schedule reaches (``only(...)``). Run normally, the pinned scenario replays exactly that
interleaving and checks that outcome; if the code no longer follows the schedule, the replay stops and says where it
diverged. A found race becomes a permanent, readable regression test.

What makes it a lesson rather than a failure: it *expects* the outcome the schedule reaches, and when that outcome
is one the race's table does not allow, it expects :data:`OUTCOME_INVARIANT` to be broken ("the bug shows").
Exploring it would explore the race again under a one-row table and fail, so ``run.py --explore`` skips it with a
line saying so, and :func:`lab.scenarios.kill_matrix.build_kill_matrix` leaves it out.
"""

from __future__ import annotations

import dataclasses
import keyword
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lab.engine.core import ActorEnd, Granularity, Json, RunStatus, TraceEvent, parse_schedule, sorted_detail
from lab.errors import ScenarioError, UsageError
from lab.scenarios.base import Pin, Scenario
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.outcomes import Grade, Outcome, row_for
from lab.scenarios.runner import ScenarioResult
from lab.scenarios.template import check_new_name, write_new_scenario_file
from lab.scenarios.under_test import modules_under_test
from lab.text import shorten

OUTCOME_INVARIANT = "outcome allowed by the race's table"
"""The invariant every pinned scenario adds: its run's outcome matches an ACCEPTABLE or INTERESTING row of the
race's table. A counterexample that reached a FORBIDDEN or undeclared outcome lists it in ``expect_broken``, so the
saved lesson shows that exact bug as a passing check ("the bug shows: ...")."""


def pinned_scenario(
    race: str, *, pin: Pin, outcomes: Sequence[Outcome], expect_broken: Sequence[str] = ()
) -> type[Scenario]:
    """A scenario class that replays ``pin`` of the race scenario ``race`` (a file beside the caller's).

    The class inherits the race's actors, setup and invariants. Its table is ``outcomes``, the one row
    (``only(...)``) the schedule reaches; it adds :data:`OUTCOME_INVARIANT`, and keeps the pin: the runner replays
    it, ``run.py --explore`` leaves it out (there is one interleaving to run, and the normal run runs it), and the
    kill matrix never counts it as a race.
    """
    caller = sys._getframe(1).f_globals  # the race file sits beside the pinned file, wherever that was loaded from
    folder = Path(str(caller.get("__file__", "."))).resolve().parent
    loaded = load(folder / f"{race}.py")
    if not isinstance(loaded, LoadedScenario):
        raise ScenarioError(f"pinned_scenario names {race!r}, which does not load: {loaded}")
    base = loaded.cls
    if base.pin is not None:
        raise ScenarioError(f"pinned_scenario names {race!r}, which is itself pinned; name the race it replays")
    if not isinstance(pin, Pin):
        raise ScenarioError("pinned_scenario needs pin=Pin(schedule=..., granularity=..., variant=...)")
    if pin.granularity not in tuple(Granularity):
        known = ", ".join(Granularity)
        raise ScenarioError(f"pinned_scenario granularity is one of {known}, not {pin.granularity!r}")
    if pin.variant and pin.variant not in base.variants:
        known = ", ".join(base.variants) or "none"
        raise ScenarioError(f"{race} has no variant {pin.variant!r} (variants: {known})")
    try:
        parse_schedule(pin.schedule, base.actors)
    except UsageError as error:
        raise ScenarioError(f"pinned_scenario schedule: {error}") from None
    table = tuple(base.outcomes)

    def invariants(self: Scenario) -> Iterable[tuple[str, bool]]:
        yield from base.invariants(self)
        observed = {**_trace_outcomes(self.lab.trace, base.actors), **sorted_detail(dict(self.observe()))}
        yield OUTCOME_INVARIANT, outcome_allowed(table, observed, base.actors)

    attributes: dict[str, Any] = {
        "__module__": caller.get("__name__", __name__),
        "pin": dataclasses.replace(pin, granularity=Granularity(pin.granularity), race=race),
        "outcomes": tuple(outcomes),
        "expect_broken": tuple(expect_broken),
        "mutant": bool(pin.variant) and pin.variant != next(iter(base.variants), pin.variant),
        "invariants": invariants,
        # The race's code under test, so that line and instruction schedules replay at the same points they were
        # recorded at (the pinned file itself runs no code of its own in the actors).
        "line_modules": tuple(modules_under_test(base)),
    }
    return type(f"Pinned{base.__name__}", (base,), attributes)


def is_pinned(cls: type[Scenario]) -> bool:
    """True for a pinned counterexample: it replays one recorded schedule, so there is nothing to explore."""
    return cls.pin is not None


def describe_pin(cls: type[Scenario]) -> str:
    """``one schedule of race_two_requests (variant CheckOutsideLockSession, probe granularity)``."""
    pin = cls.pin
    if pin is None:
        return "not pinned"
    variant = f"variant {pin.variant}, " if pin.variant else ""
    return f"one schedule of {pin.race or 'its race'} ({variant}{pin.granularity} granularity)"


def outcome_allowed(table: Sequence[Outcome], observed: Mapping[str, Json], actors: Sequence[str]) -> bool:
    """True when the first row of ``table`` that ``observed`` matches is ACCEPTABLE or INTERESTING (as the explorer
    grades it); a FORBIDDEN row, or no row at all (undeclared), is not allowed."""
    row = row_for(table, observed, actors)
    return row is not None and row.grade is not Grade.FORBIDDEN


def _trace_outcomes(trace: Sequence[TraceEvent], actors: Sequence[str]) -> dict[str, Json]:
    """The run status and each actor's outcome, read back from the trace the way the scheduler reports them."""
    outcomes: dict[str, Json] = {}
    status: str = RunStatus.FINISHED.value  # values stay plain text: an observed row is printed and written out
    for event in trace:
        if event.op == "end" and event.actor in actors:
            outcomes[event.actor] = event.detail.get("outcome")
        elif event.op == "error" and event.actor in actors:
            outcomes[event.actor] = ActorEnd.ERROR.value
        elif event.op == "deadlock":
            status = RunStatus.DEADLOCK.value
        elif event.op == "hang":
            status = RunStatus.HUNG.value
    if status == RunStatus.FINISHED and len(outcomes) < len(actors):
        status = ActorEnd.UNFINISHED.value  # a replay that diverged: its run check says why
    unfinished = ActorEnd.unfinished(status).value
    return {"run": status, **{actor: outcomes.get(actor, unfinished) for actor in actors}}


def counterexample_source(
    name: str, exploration: ScenarioExploration, replayed: ScenarioResult, actors: Sequence[str]
) -> str:
    """The text of a pinned-scenario file for the counterexample of ``exploration``.

    The text passes ``ruff check`` and ``ruff format`` as written (double quotes, lines of at most 120
    characters), so a saved lesson sits in ``scenarios/`` like any hand-written one.
    """
    example = exploration.counterexample
    if example is None:
        raise UsageError(f"{exploration.name} has no counterexample to save")
    broken = list(replayed.failed_invariants)
    if not _row_allows(exploration, example.observed):
        broken.append(OUTCOME_INVARIANT)
    over = f" over {exploration.variant}" if exploration.variant else ""
    story = (
        f"Found by `lab explore` at {exploration.granularity} granularity. This file replays the shortest "
        "schedule that reaches it, and checks that it still does; `--explore` leaves it out (it is one interleaving "
        "already). The interleaving, one column per actor:"
    )
    width = max(12, min(34, (_WIDTH - 4 - 3 * (len(actors) - 1)) // max(len(actors), 1)))
    lines = [
        *_wrap(f'"""Counterexample of {exploration.name}{over}: {example.why}.'),
        "",
        *_wrap(story),
        "",
        *("    " + row for row in interleaving_lines(replayed.trace, actors, width)),
        '"""',
        "",
        "from lab import Granularity, Pin, only, pinned_scenario",
        "",
        f"{_class_name(name)} = pinned_scenario(",
        f"    {_py(exploration.name)},",
        *_argument("pin", "Pin(", ")", [f"schedule={_py(example.schedule)}", *_pin_rest(exploration)]),
        *_argument("outcomes", "only(", ")", _keywords(example.observed)),
    ]
    if broken:
        lines += _argument("expect_broken", "(", ")", [_py(item) for item in broken], tuple_=True)
    lines.append(")")
    return "\n".join(_docstring_safe(lines)) + "\n"


def save_counterexample(
    folder: Path, name: str, exploration: ScenarioExploration, replayed: ScenarioResult, actors: Sequence[str]
) -> Path:
    """Write ``folder/NAME.py`` for the counterexample; refuses a bad name or an existing file."""
    check_new_name(name)
    if replayed.run_status == RunStatus.DIVERGED:
        raise UsageError(
            f"the counterexample of {exploration.name} did not replay ({replayed.problem}); nothing was saved"
        )
    text = counterexample_source(name, exploration, replayed, actors)
    return write_new_scenario_file(folder / f"{name}.py", text)


def _pin_rest(exploration: ScenarioExploration) -> list[str]:
    """The pin's granularity and variant, as they would be written by hand."""
    return [
        f"granularity=Granularity.{Granularity(exploration.granularity).name}",
        f"variant={_py(exploration.variant)}",
    ]


def _keywords(observed: Mapping[str, Json]) -> list[str]:
    """``only(...)``'s arguments for an observed outcome: ``key=value``, or ``**{"odd key": value}`` for a key that is
    no Python name."""
    plain = [f"{key}={_py(value)}" for key, value in observed.items() if _is_name(key)]
    odd = {key: value for key, value in observed.items() if not _is_name(key)}
    return plain + ([f"**{_py(odd)}"] if odd else [])


def _is_name(key: str) -> bool:
    return key.isidentifier() and not keyword.iskeyword(key) and key != "blocked_on"


def _row_allows(exploration: ScenarioExploration, observed: Mapping[str, Json]) -> bool:
    """Whether the explored table allows ``observed``: the first matching row, as the explorer graded it."""
    for row in exploration.rows:
        if all(key in observed and observed[key] == value for key, value in row.expect.items()):
            return row.grade in (Grade.ACCEPTABLE.value, Grade.INTERESTING.value)
    return False


def interleaving_lines(trace: Sequence[TraceEvent], actors: Sequence[str], width: int = 34) -> list[str]:
    """The trace as text columns, one per actor (lab events span the row)."""
    header = " | ".join(f"{actor:<{width}}" for actor in actors).rstrip()
    lines = [header, "-" * len(header)]
    for event in trace:
        if event.actor not in actors:
            lines.append(f"[{event.describe()}]"[: width * len(actors)])
            continue
        cells = ["" for _ in actors]
        cells[list(actors).index(event.actor)] = shorten(event.describe(), width)
        lines.append(" | ".join(f"{cell:<{width}}" for cell in cells).rstrip())
    return lines


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part)


_WIDTH = 120
"""The line length of the repository's ruff configuration."""


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, _WIDTH, break_long_words=False, break_on_hyphens=False) or [""]


def _argument(key: str, opening: str, closing: str, items: list[str], *, tuple_: bool = False) -> list[str]:
    """``key=<literal>,`` on one line when it fits, else one item per line, as ``ruff format`` would lay it out."""
    one = f"    {key}={opening}{', '.join(items)}{',' if tuple_ and len(items) == 1 else ''}{closing},"
    if len(one) <= _WIDTH:
        return [one]
    return [f"    {key}={opening}", *(f"        {item}," for item in items), f"    {closing},"]


def _py(value: object) -> str:
    """A Python literal for a JSON value, with strings in double quotes (``repr`` would choose single ones)."""
    if isinstance(value, str):
        text = repr(value)
        if text.startswith("'") and '"' not in value:
            text = '"' + text[1:-1].replace("\\'", "'") + '"'
        return text
    if isinstance(value, list):
        return "[" + ", ".join(_py(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _docstring_safe(lines: list[str]) -> list[str]:
    """Escape what trace text could carry into the docstring: backslashes and a closing triple quote."""
    end = lines.index('"""', 1)

    def escape(line: str) -> str:
        return line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')

    return ['"""' + escape(lines[0][3:]), *(escape(line) for line in lines[1:end]), *lines[end:]]
