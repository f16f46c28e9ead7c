"""Output read at 80 columns and in a pipe: no zero-width column, no cut name, no word split in the middle."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from lab.render import (
    exploration_table,
    kill_matrix_table,
    list_table,
    outcome_rows_table,
    replay_table,
    summary_table,
)
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.kill_matrix import build_kill_matrix
from lab.scenarios.loader import LoadedScenario, load, load_all
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
WIDTHS = (80, 120)


def _render(renderable: object, width: int) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(renderable)
    return buffer.getvalue()


def _readable(text: str, width: int, names: list[str]) -> None:
    lines = text.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), max(lines, key=len)
    assert "…" not in text, "a cell was cut"
    tokens = set(re.split(r"[\s│┃|]+", text))
    tokens |= {token.strip(":,;()") for token in tokens}  # "slow:" names the actor slow
    for name in names:
        assert name in tokens, f"{name!r} is cut or split"


@pytest.fixture(scope="module")
def scenarios() -> list[LoadedScenario]:
    return [item for item in load_all(ROOT / "scenarios") if isinstance(item, LoadedScenario)]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_list_reads_at_every_width(scenarios: list[LoadedScenario], width: int) -> None:
    text = _render(list_table(scenarios), width)
    _readable(text, width, [item.name for item in scenarios])
    for item in scenarios:
        assert any(line.strip(" │").startswith(item.name) for line in text.splitlines()), item.name


@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_summary_reads_at_every_width(scenarios: list[LoadedScenario], width: int) -> None:
    chosen = scenarios[:6]
    results = [run_scenario(item) for item in chosen]
    text = _render(summary_table(results), width)
    _readable(text, width, [item.name for item in chosen] + [result.verdict.value for result in results])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_exploration_and_kill_matrix_read_at_every_width(width: int) -> None:
    race = load(ROOT / "scenarios" / "race_duplicate_delivery.py")
    assert isinstance(race, LoadedScenario)
    found = [explore_scenario(race, granularity=g) for g in ("probe", "line")]
    text = _render(exploration_table(found), width)
    _readable(text, width, ["race_duplicate_delivery", "PASS"])
    matrix = build_kill_matrix([race])
    text = _render(kill_matrix_table(matrix), width)
    _readable(text, width, [*matrix.variants, "killed", "survived"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", WIDTHS)
def test_outcome_rows_and_replay_read_at_every_width(width: int) -> None:
    """An exploration's graded rows and a replay (a column per actor) where they fit; else one row or event per
    line, each reason and outcome whole."""
    race = load(ROOT / "scenarios" / "race_two_requests.py")
    assert isinstance(race, LoadedScenario)
    found = explore_scenario(race, granularity="probe")
    text = _render(outcome_rows_table(found), width)
    reasons = [word for row in found.rows for word in row.reason.split()]
    _readable(text, width, ["ACCEPTABLE", "FORBIDDEN", *reasons])
    ordered = load(ROOT / "scenarios" / "out_of_order_commit.py")
    assert isinstance(ordered, LoadedScenario)
    result = run_scenario(ordered, watch_states=True)
    text = _render(replay_table(result, ordered.cls.actors), width)
    _readable(text, width, ["slow", "fast", "STALE", "COMMITTED", "state:"])
