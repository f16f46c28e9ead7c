"""The mutant kill matrix: every race scenario explored over every session variant, at both granularities.

Rows are session variants (the correct ones and the mutants), columns are race scenarios, and each cell says
whether exploration *killed* the variant (reached a FORBIDDEN or undeclared outcome, or broke an invariant) with
the counterexample schedule, or whether it *survived* every schedule. The matrix is honest only if both hold: every
mutant is killed somewhere, and no correct variant is killed anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from lab.engine.core import Granularity
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario

GRANULARITIES = (Granularity.PROBE, Granularity.LINE)
"""The granularities the kill matrix explores each cell at (instruction granularity is for a closer look)."""


class CellStatus(StrEnum):
    """What exploring one variant in one race scenario at one granularity found, in the kill matrix's words."""

    KILLED = "killed"
    """The exploration failed: it found this variant's bug (for a correct variant, a false alarm)."""
    SURVIVED = "survived"
    """The exploration passed: every schedule that matters was run and none failed."""
    INCOMPLETE = "incomplete"
    """Nothing failed, but a bound or the budget cut the search short."""

    @classmethod
    def of(cls, verdict: str) -> CellStatus:
        """The cell's word for an exploration's verdict (an :class:`ExploreVerdict` or its text from a record).

        >>> CellStatus.of(ExploreVerdict.FAIL), CellStatus.of("INCOMPLETE")
        (<CellStatus.KILLED: 'killed'>, <CellStatus.INCOMPLETE: 'incomplete'>)
        """
        words: dict[str, CellStatus] = {ExploreVerdict.FAIL: cls.KILLED, ExploreVerdict.PASS: cls.SURVIVED}
        return words.get(verdict, cls.INCOMPLETE)


@dataclass(frozen=True)
class KillCell:
    """One variant, one race scenario, one granularity: killed, survived or incomplete."""

    variant: str
    scenario: str
    granularity: str
    status: str
    schedules: int
    schedule: str = ""
    why: str = ""

    @property
    def killed(self) -> bool:
        """True when exploration found this variant's bug."""
        return self.status == CellStatus.KILLED


@dataclass(frozen=True)
class KillMatrix:
    """The cells, plus which variants are the correct ones (the first variant of each race scenario)."""

    variants: tuple[str, ...]
    scenarios: tuple[str, ...]
    correct: tuple[str, ...]
    cells: tuple[KillCell, ...]
    partial: bool = False
    """Built over some of the race scenarios only (``--scenario``): a mutant another race kills may survive these."""

    def cell(self, variant: str, scenario: str, granularity: str) -> KillCell | None:
        """The cell for that variant, scenario and granularity, if the scenario runs that variant."""
        for cell in self.cells:
            if (cell.variant, cell.scenario, cell.granularity) == (variant, scenario, granularity):
                return cell
        return None

    def notes(self) -> list[str]:
        """What a partial matrix cannot tell: the mutants the selected race scenarios did not kill."""
        if not self.partial:
            return []
        return [
            f"mutant {variant} was not killed by {', '.join(self.scenarios)}; whether another race scenario "
            f"kills it, only the whole matrix (every race scenario) says"
            for variant in self.variants
            if variant not in self.correct and not any(c.killed for c in self.cells if c.variant == variant)
        ]

    def problems(self) -> list[str]:
        """What makes the matrix fail: a mutant nobody killed, a correct variant killed, an incomplete cell of a
        correct variant or of a mutant killed nowhere."""
        found = []
        for variant in self.variants:
            cells = [c for c in self.cells if c.variant == variant]
            if variant in self.correct:
                found += [
                    f"correct variant {variant} was killed by {c.scenario} ({c.granularity}): {c.why}"
                    for c in cells
                    if c.killed
                ]
            elif not any(c.killed for c in cells) and not self.partial:
                found.append(f"mutant {variant} survived every race scenario")
        killed = {c.variant for c in self.cells if c.killed}
        found += [  # an incomplete cell matters unless the mutant is killed elsewhere: then the claim still holds
            f"{c.scenario} over {c.variant} ({c.granularity}) is incomplete"
            for c in self.cells
            if c.status == CellStatus.INCOMPLETE and (c.variant in self.correct or c.variant not in killed)
        ]
        return found


def build_kill_matrix(
    races: Sequence[LoadedScenario],
    *,
    partial: bool = False,
    granularities: Sequence[str] = GRANULARITIES,
    max_schedules: int = 20_000,
    on_cell: Callable[[ScenarioExploration], None] | None = None,
    jobs: int | None = 1,
) -> KillMatrix:
    """Explore every race scenario over each of its variants at each granularity (``jobs`` processes each, which
    changes no cell: see :func:`lab.scenarios.exploring.explore_scenario`).

    A pinned counterexample (a scenario with a ``pin``) inherits its race's ``variants`` but is not a
    race: explored, its one-row table would make the correct variant look killed. It is left out.
    """
    races = [race for race in races if race_scenario(race)]
    cells: list[KillCell] = []
    variants: list[str] = []
    correct: list[str] = []
    for race in races:
        names = list(race.cls.variants)
        if names and names[0] not in correct:
            correct.append(names[0])
        for variant in names:
            if variant not in variants:
                variants.append(variant)
            for granularity in granularities:
                found = explore_scenario(
                    race, granularity=granularity, variant=variant, max_schedules=max_schedules, jobs=jobs
                )
                if on_cell is not None:
                    on_cell(found)
                cells.append(_cell(found))
    return KillMatrix(tuple(variants), tuple(r.name for r in races), tuple(correct), tuple(cells), partial)


def race_scenario(item: LoadedScenario) -> bool:
    """True for a scenario the kill matrix explores: it lists session variants and is not pinned to a schedule."""
    return bool(item.cls.variants) and item.cls.pin is None


def _cell(found: ScenarioExploration) -> KillCell:
    status = CellStatus.of(found.verdict).value  # the cell keeps its text: records are read back into cells
    example = found.counterexample
    return KillCell(
        found.variant,
        found.name,
        found.granularity,
        status,
        found.schedules,
        example.schedule if example else "",
        example.why if example else "",
    )
