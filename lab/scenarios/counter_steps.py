"""A counterexample's steps in full: what each actor did at each step of the failing run, as its record keeps them.

An exploration record keeps schedules, not traces; a schedule says who was chosen where there was a choice, which
a person cannot read as a story. The shortest counterexample is the one run a reader must follow, so its record
keeps its steps: per step (one scheduling decision, numbered from 0 as the explanation numbers the racing steps),
the actor that ran and the trace events it made. Reports draw them with the racing steps marked, from the record
alone. Every field is as deterministic as the trace it is cut from. A run past :data:`MAX_STEPS` keeps its first
steps and says how many it left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.engine.core import Json
from lab.scenarios.results import ScenarioResult

MAX_STEPS = 300
"""The most steps a counterexample's record keeps."""


@dataclass(frozen=True, slots=True)
class CounterStep:
    """One step of the failing run: its number, who ran it, and what they did (trace events, in order)."""

    step: int
    actor: str
    did: tuple[str, ...]

    def to_json(self) -> dict[str, Json]:
        """The step as its record holds it."""
        return {"step": self.step, "actor": self.actor, "did": list(self.did)}


def counter_steps(result: ScenarioResult) -> tuple[tuple[CounterStep, ...], int]:
    """The steps of ``result``'s run (at most :data:`MAX_STEPS`), and how many were left out."""
    run = result.run
    if run is None or not run.step_events:
        return (), 0
    trace = run.trace
    starts = [*run.step_events, len(trace)]
    steps = []
    for number, decision in enumerate(run.decisions[: min(len(run.decisions), MAX_STEPS)]):
        events = trace[starts[number] : starts[number + 1]]
        did = tuple(
            event.describe() if event.actor == decision.chosen else f"{event.actor}: {event.describe()}"
            for event in events
        )
        steps.append(CounterStep(number, decision.chosen, did))
    return tuple(steps), max(len(run.decisions) - MAX_STEPS, 0)


__all__ = ["MAX_STEPS", "CounterStep", "counter_steps"]
