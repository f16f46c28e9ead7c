"""Which schedules an exploration's reports draw for its failures: the shortest counterexample, and one schedule for
each other FORBIDDEN or undeclared row that was reached.

An exploration record keeps one counterexample (the shortest failing schedule over all failing rows) and, per row,
the first schedule that reached it. So each failing row is pictured by the counterexample when that is the row it
failed on, and otherwise by the row's first schedule, labelled as such: both reports say which one they show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lab.scenarios.explaining import replay_command
from lab.scenarios.outcomes import FAILING_GRADES, UNDECLARED, Grade


@dataclass(frozen=True)
class Failing:
    """One failing schedule to draw: why it fails, the outcome it reached (``slow=COMMITTED, fast=COMMITTED``; every
    box names it, an undeclared one above all, whose reason says nothing of what was reached), the schedule,
    whether it is the shortest, and its replay."""

    title: str
    reached: str
    schedule: str
    shortest: bool
    replay: str


def failing_schedules(record: Mapping[str, Any]) -> list[Failing]:
    """The counterexample first (when there is one), then the first schedule of every other failing row."""
    example = record["counterexample"]
    found: list[Failing] = []
    covered = -1
    if example is not None:
        covered = next((i for i, row in enumerate(record["rows"]) if _is_for(row, example)), -1)
        found.append(
            Failing(
                str(example["why"]),
                reached_text(example["observed"]),
                str(example["schedule"]),
                True,
                str(record["replay_command"]),
            )
        )
    for index, row in enumerate(record["rows"]):
        if index == covered or row["grade"] not in FAILING_GRADES or not row["schedules"] or not row["example"]:
            continue
        command = replay_command(record["name"], row["example"], record["granularity"], record["variant"])
        title = f"{row['grade']}: {row['reason']}"
        found.append(Failing(title, reached_text(row["expect"]), str(row["example"]), False, command))
    return found


def reached_text(observed: object) -> str:
    """An outcome as ``key=value`` pairs in key order (``run=FINISHED`` left out: a failing box says when not)."""
    if not isinstance(observed, Mapping):
        return ""
    pairs = [f"{key}={observed[key]}" for key in sorted(observed) if not (key == "run" and observed[key] == "FINISHED")]
    return ", ".join(pairs) or "(nothing observed)"


def _is_for(row: Mapping[str, Any], example: Mapping[str, Any]) -> bool:
    if row["grade"] == Grade.FORBIDDEN:
        return bool(example["why"] == f"FORBIDDEN: {row['reason']}")
    return bool(
        row["grade"] == UNDECLARED and example["why"] == "undeclared outcome" and row["expect"] == example["observed"]
    )
