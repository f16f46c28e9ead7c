"""Counterexamples kept as lessons: a scenario file that replays one recorded schedule of a race scenario.

When the explorer finds a FORBIDDEN outcome, ``run.py --explore --save-scenario NAME`` writes
``scenarios/NAME.py``: a docstring that tells the interleaving step by step, and one call to
:func:`pinned_scenario` naming the race scenario, the schedule string, the session variant and the outcome that
schedule reaches. Run normally, the pinned scenario replays exactly that interleaving and checks that outcome; if
the code no longer follows the schedule, the replay stops and says where it diverged. A found race becomes a
permanent, readable regression test.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lab.engine.trace import Json, TraceEvent
from lab.errors import ScenarioError, UsageError
from lab.scenarios.base import Scenario
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import ScenarioResult
from lab.scenarios.template import check_new_name, write_new_scenario_file


def pinned_scenario(
    race: str,
    *,
    schedule: str,
    expect: Mapping[str, Json],
    variant: str = "",
    granularity: str = "probe",
    expect_broken: Sequence[str] = (),
) -> type[Scenario]:
    """A scenario class that replays ``schedule`` of the race scenario ``race`` (a file beside the caller's)."""
    caller = sys._getframe(1).f_globals
    folder = Path(str(caller.get("__file__", "."))).resolve().parent
    loaded = load(folder / f"{race}.py")
    if not isinstance(loaded, LoadedScenario):
        raise ScenarioError(f"pinned_scenario names {race!r}, which does not load: {loaded}")
    base = loaded.cls
    actors = set(base.actors)
    attributes: dict[str, Any] = {
        "__module__": caller.get("__name__", __name__),
        "schedule": schedule,
        "granularity": granularity,
        "variant_name": variant,
        "outcomes": (),
        "expect_run": str(expect.get("run", "FINISHED")),
        "expect": {key: value for key, value in expect.items() if key in actors},
        "expect_state": {key: value for key, value in expect.items() if key not in actors and key != "run"},
        "expect_broken": tuple(expect_broken),
        "mutant": bool(variant) and variant != next(iter(base.variants), variant),
    }
    return type(f"Pinned{base.__name__}", (base,), attributes)


def counterexample_source(
    name: str, exploration: ScenarioExploration, replayed: ScenarioResult, actors: Sequence[str]
) -> str:
    """The text of a pinned-scenario file for the counterexample of ``exploration``."""
    example = exploration.counterexample
    if example is None:
        raise UsageError(f"{exploration.name} has no counterexample to save")
    broken = replayed.failed_invariants
    lines = [
        f'"""Counterexample from {exploration.name}: {example.why}.',
        "",
        f"Found by `python run.py --explore` ({exploration.granularity} granularity"
        + (f", variant {exploration.variant}" if exploration.variant else "") + "). This file replays the shortest",
        "schedule that reaches it, and checks that it still does. The interleaving, one column per actor:",
        "",
        *("    " + row for row in interleaving_lines(replayed.trace, actors)),
        '"""',
        "",
        "from lab import pinned_scenario",
        "",
        f"{_class_name(name)} = pinned_scenario(",
        f"    {exploration.name!r},",
        f"    schedule={example.schedule!r},",
        f"    variant={exploration.variant!r},",
        f"    granularity={exploration.granularity!r},",
        f"    expect={_literal(example.observed)},",
    ]
    if broken:
        lines.append(f"    expect_broken={tuple(broken)!r},")
    lines.append(")")
    return "\n".join(lines) + "\n"


def save_counterexample(
    folder: Path, name: str, exploration: ScenarioExploration, replayed: ScenarioResult, actors: Sequence[str]
) -> Path:
    """Write ``folder/NAME.py`` for the counterexample; refuses a bad name or an existing file."""
    check_new_name(name)
    text = counterexample_source(name, exploration, replayed, actors)
    return write_new_scenario_file(folder / f"{name}.py", text)


def interleaving_lines(trace: Sequence[TraceEvent], actors: Sequence[str], width: int = 34) -> list[str]:
    """The trace as text columns, one per actor (lab events span the row)."""
    header = " | ".join(f"{actor:<{width}}" for actor in actors).rstrip()
    lines = [header, "-" * len(header)]
    for event in trace:
        if event.actor not in actors:
            lines.append(f"[{event.describe()}]"[: width * len(actors)])
            continue
        cells = ["" for _ in actors]
        cells[list(actors).index(event.actor)] = _short(event.describe(), width)
        lines.append(" | ".join(f"{cell:<{width}}" for cell in cells).rstrip())
    return lines


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part)


def _literal(values: Mapping[str, Json]) -> str:
    return "{" + ", ".join(f"{key!r}: {value!r}" for key, value in values.items()) + "}"
