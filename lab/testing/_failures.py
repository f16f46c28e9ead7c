"""What a failed exploration of your own code says, and the failing schedule replayed before any search.

The message of :class:`ExplorationFailed` is read in a pytest report as it stands: how the search ended, why the
run fails, what it reached, the schedule as a table with one column per actor and the source line each row ran, and
the two racing steps, numbered as the table numbers them. A schedule an earlier run saved (the pytest plugin keeps
them, as Hypothesis keeps its examples) is replayed first and, if it still fails, is the failure at once.
"""

from __future__ import annotations

import io

from rich.console import Console

from lab.engine.core import RunStatus
from lab.errors import LabError
from lab.render import replay_table
from lab.scenarios import (
    Explanation,
    LoadedScenario,
    ScenarioExploration,
    explain_failure,
    failure_reason,
    replay_scenario,
)

TABLE_ROWS = 120
"""The most rows a failure's replay table shows: its start and its end, and how many rows were left out."""


class ExplorationFailed(LabError, AssertionError):
    """An exploration that was not a PASS, raised by :func:`explore_code` with a message readable as it stands;
    ``found`` is the whole :class:`~lab.scenarios.exploring.ScenarioExploration` (verdict, executions, outcomes).

    It is an :class:`AssertionError` so pytest reports it as a failed test, not an error in the test, and a
    :class:`~lab.errors.LabError` so a command turns it into one line. ``found`` is ``None`` when the failure is a
    saved schedule replayed before any search (``replay_first``): no exploration ran."""

    def __init__(self, message: str, found: ScenarioExploration | None, schedule: str = "") -> None:
        super().__init__(message)
        self.found = found
        self.schedule = schedule or (found.counterexample.schedule if found and found.counterexample else "")
        """The failing schedule (``""`` when the search found none to name): what a regression pin replays."""


def replay_code(found: ScenarioExploration, loaded: LoadedScenario, schedule: str) -> str:
    """The table of one schedule (``found.counterexample.schedule``, say), one column per actor, as text."""
    result = replay_scenario(loaded, schedule, granularity=found.granularity, watch_states=True)
    return _render(replay_table(result, loaded.cls.actors, limit=TABLE_ROWS))


def failure_text(found: ScenarioExploration, loaded: LoadedScenario) -> str:
    """What a failed or incomplete exploration says to the person reading the test output."""
    lines = [
        f"{found.name}: {found.verdict} after {found.executions} executions at {found.granularity} granularity",
        f"search: {_searched(found)}",
    ]
    example = found.counterexample
    if example is None:
        lines.append(found.problem or "the search was cut short (a bound or the schedule budget)")
        return "\n".join(lines)
    lines.append(f"why: {example.why}")
    lines.append(f"reached: {', '.join(f'{key}={value}' for key, value in example.observed.items())}")
    lines.append(f"schedule: {example.schedule}")
    lines.append(replay_code(found, loaded, example.schedule))
    if example.explanation is not None:
        lines.append(_render_explanation(example.explanation))
    return "\n".join(lines)


def replay_saved(loaded: LoadedScenario, schedule: str, granularity: str) -> None:
    """Raise :class:`ExplorationFailed` if ``schedule`` replays and still fails; else return, and the search runs."""
    __tracebackhide__ = True
    try:
        replayed = replay_scenario(loaded, schedule, granularity=granularity, watch_states=True)
    except LabError:  # the schedule no longer fits the code (a changed program): search afresh
        return
    why = (
        ""
        if replayed.run_status == RunStatus.DIVERGED
        else failure_reason(loaded.cls.outcomes, loaded.cls.actors, replayed)
    )
    if not why:
        return
    lines = [
        f"{loaded.name}: FAIL on the failing schedule saved by an earlier run, replayed before any search",
        f"why: {why}",
        f"reached: {', '.join(f'{key}={value}' for key, value in sorted(replayed.observed.items()))}",
        f"schedule: {schedule}",
        _render(replay_table(replayed, loaded.cls.actors, limit=TABLE_ROWS)),
    ]
    explanation = explain_failure(loaded, schedule, granularity=granularity, run=replayed.run)
    if explanation.lines(width=100):
        lines.append(_render_explanation(explanation))
    raise ExplorationFailed("\n".join(lines), None, schedule)


def _searched(found: ScenarioExploration) -> str:
    """How it searched: ``portfolio, seed 0, first failure at execution 12``."""
    parts = [found.strategy, f"seed {found.seed}"] if found.strategy != "dpor" else ["dpor"]
    if found.first_failure is not None:
        parts.append(f"first failure at execution {found.first_failure}")
    return ", ".join(parts)


def _render(renderable: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=100, force_terminal=False, color_system=None).print(renderable)
    return buffer.getvalue().rstrip()


def _render_explanation(explanation: Explanation) -> str:
    return "\n".join(["why it fails:", *explanation.lines(width=100, indent="  ")])


__all__ = ["ExplorationFailed", "failure_text", "replay_code", "replay_saved"]
