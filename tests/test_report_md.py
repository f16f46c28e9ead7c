"""report.md's diagrams: one lane per actor, locks and latches as notes, notes never clipped, races and their
counterexamples drawn as what happened."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.engine.core import TraceEvent
from lab.evidence.records.exploration import exploration_record
from lab.evidence.report.explore_report import exploration_section
from lab.evidence.report.mermaid import WRAP, schedule_diagram, sequence_diagram
from lab.evidence.report.report import render_report
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import ScenarioResult, run_scenario
from tests.evidence_checkout import FROZEN, frozen_checkout


@pytest.fixture(scope="module", autouse=True)
def _frozen() -> Iterator[Path]:
    with frozen_checkout() as path:
        yield path


def _load(name: str) -> LoadedScenario:
    loaded = load(FROZEN / "scenarios" / f"{name}.py")
    assert isinstance(loaded, LoadedScenario), loaded
    return loaded


def _run(name: str) -> ScenarioResult:
    return run_scenario(_load(name))


def _notes(diagram: str) -> list[list[str]]:
    """Every note's and message's lines, unescaped (Mermaid's ``#NN;`` entity codes back to characters)."""
    texts = [line.split(": ", 1)[1] for line in diagram.splitlines() if ": " in line and "participant" not in line]
    return [[html.unescape(re.sub(r"#(\d+);", r"&#\1;", part)) for part in text.split("<br>")] for text in texts]


def test_one_participant_per_actor_and_locks_and_latches_as_notes() -> None:
    result = _run("out_of_order_commit")
    diagram = sequence_diagram(result.trace, list(result.outcomes))
    assert re.findall(r"participant (\S+) as (\S+)", diagram) == [("a0", "slow"), ("a1", "fast")]
    lines = [line for note in _notes(diagram) for line in note]
    assert "lock.acquire s1.lock" in lines
    assert "waits for latch fast-committed (1 to go)" in lines
    # the wake-up is an arrow from fast, who counted the latch down, to slow, whose waiting span it closes
    assert "    deactivate a0\n    a1-->>a0: latch.open fast-committed\n" in diagram
    assert diagram.count("activate a0") == 2  # activate, deactivate


def test_notes_wrap_between_words_and_keep_every_word() -> None:
    """The deadlock note (once clipped to "DLOCK") names every blocked actor in full, on lines of its own."""
    result = _run("synchronized_fast_first_deadlocks")
    diagram = sequence_diagram(result.trace, list(result.outcomes))
    [deadlock] = [note for note in _notes(diagram) if note[0] == "DEADLOCK"]
    blocked = next(e for e in result.trace if e.op == "deadlock").detail["blocked"]
    assert isinstance(blocked, list)
    text = " ".join(deadlock)
    for actor, reason in blocked:  # type: ignore[misc]
        assert f"{actor} waits for {reason}" in text
    for note in _notes(diagram):
        for line in note:
            assert len(line) <= WRAP or " " not in line, line


def test_hostile_text_is_escaped() -> None:
    events = [
        TraceEvent(0, "a", "start", "", {}),
        TraceEvent(1, "a", "note", "", {"text": "x; y # <b>z</b> end"}),
        TraceEvent(2, "a", "end", "", {"outcome": "OK"}),
    ]
    diagram = sequence_diagram(events, ["a"])
    [note] = [line for line in diagram.splitlines() if "Note over" in line]
    bare = re.sub(r"#\d+;", "", note.split(": ", 1)[1]).replace("<br>", "")
    assert not set(bare) & set(';#<>"&%'), bare  # Mermaid's lexer ends a message at ; or #, and reads < as HTML
    assert ["starts", "x; y # <b>z</b> end", "ends OK"] in _notes(diagram)


def test_a_race_says_its_diagram_is_one_schedule() -> None:
    race, latched = _run("race_two_requests"), _run("out_of_order_commit")
    report = render_report({"status": "PASS"}, [race, latched], [])
    race_part = report[report.index("## race_two_requests") : report.index("## out_of_order_commit")]
    assert "A race: this run took one schedule, the scheduler's default" in race_part
    assert "A race:" not in report[report.index("## out_of_order_commit") :]


def test_a_schedule_is_drawn_with_its_preemptions() -> None:
    diagram = schedule_diagram("0:01-0:01-1:01-1:1-0:0", ["slow", "fast"], "ends badly")
    assert diagram.splitlines()[3:] == [
        "    Note over a0: choices 1-2: slow runs",
        "    a0->>a1: preempted at choice 3",
        "    Note over a1: choices 3-4: fast runs",
        "    a1-->>a0: blocked or ended: choice 5",
        "    Note over a0: choice 5: slow runs",
        "    Note over a0,a1: ends badly",
    ]


def test_each_forbidden_outcome_gets_a_picture_of_its_shortest_counterexample() -> None:
    found = explore_scenario(_load("race_two_requests"), granularity="probe", variant="CheckOutsideLockSession")
    assert found.counterexample is not None
    record = exploration_record(found, default_variant=False)
    rel = "explore/race_two_requests/probe.CheckOutsideLockSession.json"
    settings = {"granularities": ["probe"], "preemption_bound": None, "max_schedules": 20_000}
    section = "\n".join(exploration_section(settings, [(rel, record)], None, {"race_two_requests": ["slow", "fast"]}))
    assert section.count("```mermaid") == 1
    reached = "fast=COMMITTED, slow=COMMITTED, tickets=same, version=3"
    assert (
        f"The shortest counterexample, FORBIDDEN: {found.rows[-1].reason} (reached {reached}): `{found.replay_command}`"
        in section
    )
    picture = section[section.index("```mermaid") :]
    assert "participant a0 as slow" in picture and "preempted at choice" in picture
    # without the actors (older callers), the section has no picture
    assert "```mermaid" not in "\n".join(exploration_section(settings, [(rel, record)], None))
