"""A run's exploration: which scenarios it explores (checked before anything is written), and exploring them at
each granularity (each then checked on real threads, with ``--cross-check``), then the kill matrix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import TypeVar

from lab.campaign.interface import ExploreSettings, Listener
from lab.errors import ScenarioError, UsageError
from lab.scenarios.cross_check import check_exploration
from lab.scenarios.exploring import ScenarioExploration, explore_scenario
from lab.scenarios.kill_matrix import KillMatrix, build_kill_matrix, race_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load_all
from lab.scenarios.pinning import describe_pin, is_pinned

Item = LoadedScenario | BrokenScenario
T = TypeVar("T")


@dataclass(slots=True)
class Plan:
    """What a run will explore, checked before its evidence folder exists."""

    loaded: list[LoadedScenario] = field(default_factory=list)
    to_explore: list[LoadedScenario] = field(default_factory=list)
    all_races: set[str] = field(default_factory=set)


def plan(folder: Path, names: Sequence[str], explore: ExploreSettings) -> Plan:
    """The scenarios an exploration explores, checked before anything is written.

    A pinned counterexample is never explored (it is one interleaving, which its normal run replays). With a
    variant only scenarios that declare it are explored: a scenario named that does not is a usage error;
    without names, the others are skipped.
    """
    every = load_all(folder)
    loaded = [item for item in select(every, names) if isinstance(item, LoadedScenario)]
    chosen = Plan(
        loaded=loaded,
        all_races={item.name for item in every if isinstance(item, LoadedScenario) and race_scenario(item)},
    )
    explorable = [item for item in loaded if not is_pinned(item.cls)]
    variant = explore.variant
    if variant is None:
        chosen.to_explore = explorable
        return chosen
    if loaded and not explorable:
        raise UsageError(
            f"--variant {variant}: every selected scenario is pinned to one schedule, and pinned "
            "scenarios are not explored"
        )
    declaring = [item for item in explorable if variant in item.cls.variants]
    if names:
        lacking = next((item for item in explorable if item not in declaring), None)
        if lacking is not None:
            known = ", ".join(lacking.cls.variants) or "none: it is not a race scenario"
            raise UsageError(
                f"--variant {variant}: scenario {lacking.name} does not declare it (its variants: {known})"
            )
    if not declaring:
        declared = sorted({name for item in explorable for name in item.cls.variants})
        raise UsageError(
            f"--variant {variant}: no selected scenario declares it (declared variants: "
            f"{', '.join(declared) or 'none'})"
        )
    chosen.to_explore = declaring
    return chosen


def explore(
    chosen: Plan, settings: ExploreSettings, listener: Listener
) -> tuple[list[ScenarioExploration], KillMatrix | None, list[ScenarioExploration]]:
    """Explore each planned scenario at each granularity, then build the kill matrix (not over one variant)."""
    for item in chosen.loaded:
        if is_pinned(item.cls):
            listener.note(
                f"not explored: {item.name} is pinned to {describe_pin(item.cls)}; its normal run replayed it"
            )
    if settings.variant is not None and len(chosen.to_explore) < len(
        [i for i in chosen.loaded if not is_pinned(i.cls)]
    ):
        listener.note(
            f"--variant {settings.variant}: exploring only the scenarios that declare it: "
            f"{', '.join(item.name for item in chosen.to_explore)}"
        )
    explorations: list[ScenarioExploration] = []
    cells: list[ScenarioExploration] = []
    for item in chosen.to_explore:
        for granularity in settings.granularities:
            listener.exploration_started(item.name, granularity)
            try:
                found = explore_scenario(
                    item,
                    granularity=granularity,
                    variant=settings.variant,
                    preemption_bound=settings.preemptions,
                    max_schedules=settings.max_schedules,
                    progress=listener.exploration_progress,
                    jobs=settings.jobs,
                    strategy=settings.strategy,
                    mode=settings.mode,
                    seed=settings.seed,
                    seconds=settings.seconds,
                )
            except ScenarioError as error:  # its setup raises: the normal run already reports it as ERROR
                listener.exploration_done(error)
                break
            listener.exploration_done(found)
            if settings.cross_check:  # real threads check the model; the records stay the search's own
                listener.cross_check_started(item.name, granularity, settings.cross_check)
                found = check_exploration(item, found, settings.cross_check, contained=True)
                listener.cross_check_done(found, found.lines())
            explorations.append(found)
    races = [item for item in chosen.to_explore if race_scenario(item)]
    matrix = None
    if races and settings.variant is None:
        listener.kill_matrix_started(sum(len(r.cls.variants) * 2 for r in races))

        def cell_done(found: ScenarioExploration) -> None:
            listener.kill_cell_done(found)
            if found.counterexample is not None:
                cells.append(found)

        partial = {race.name for race in races} != chosen.all_races
        matrix = build_kill_matrix(
            races, max_schedules=settings.max_schedules, on_cell=cell_done, partial=partial, jobs=settings.jobs
        )
    elif races:
        listener.note(f"kill matrix: not built: --variant {settings.variant} explores one variant")
    failed = [found for found in explorations if found.counterexample is not None]
    return explorations, matrix, failed + cells


def select(items: list[T], names: Sequence[str], name: Callable[[T], str] = attrgetter("name")) -> list[T]:
    """The items named (by ``name(item)``, in the order given, once each), or all of them; an unknown name is a
    usage error."""
    if not names:
        return items
    known = {name(item): item for item in items}
    unknown = [wanted for wanted in names if wanted not in known]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; the list command shows every scenario")
    return [known[wanted] for wanted in dict.fromkeys(names)]
