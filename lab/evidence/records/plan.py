"""What a folder must contain, derived from the command that made it and what its scenario files declare.

A run's command (read by :mod:`lab.commandline`) and its scenario files decide everything the folder holds: which
scenarios ran, each exploration (scenario x granularity x variant), the kill matrix with each of its cells, and
whether it may be partial. The run decides it one way (:mod:`lab.campaign.exploring`); this module derives it again
from the command and the facts each scenario file declares (:class:`ScenarioFacts`), so that the auditor can
require exactly that, and a forger who drops, strips or relabels explorations or cells, however consistently, is
caught. Pure: it reads no file and runs no code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lab.evidence.records.layout import exploration_path

MATRIX_GRANULARITIES = ("probe", "line")
"""The granularities the kill matrix explores each cell at, whatever ``--granularity`` says."""


@dataclass(frozen=True, slots=True)
class ScenarioFacts:
    """What one scenario file declares that decides what a run explores: its session variants (the first is the
    correct one) and whether it is pinned to one schedule (then it is never explored)."""

    variants: tuple[str, ...]
    pinned: bool

    @property
    def race(self) -> bool:
        """A race scenario: the kill matrix explores it over every variant."""
        return bool(self.variants) and not self.pinned


@dataclass(frozen=True, slots=True)
class ExpectedMatrix:
    """The kill matrix a run must have built: its columns, rows, correct variants and every cell."""

    scenarios: tuple[str, ...]
    variants: tuple[str, ...]
    correct: tuple[str, ...]
    cells: tuple[tuple[str, str, str], ...]
    """``(variant, scenario, granularity)``, in the order the matrix explores them."""
    partial: bool | None
    """Whether it is partial, or ``None`` when that cannot be derived (the files not selected were not described)."""


@dataclass(frozen=True, slots=True)
class ExpectedContents:
    """Everything exploration must have left in a folder."""

    explorations: tuple[str, ...] = ()
    """Each exploration file's path, in the order the run explores them."""
    optional: frozenset[str] = field(default_factory=frozenset)
    """Those that may be missing: a scenario whose setup raised (its normal run is NOT_RUN) explores nothing."""
    kill_matrix: ExpectedMatrix | None = None


def expected_contents(
    *,
    selected: Sequence[str],
    every: Sequence[str],
    facts: Mapping[str, ScenarioFacts],
    granularities: Sequence[str],
    variant: str | None,
    not_run: frozenset[str] = frozenset(),
) -> ExpectedContents:
    """What a run that explored ``selected`` (in run order, the broken files left out) must have written.

    ``every``: every scenario file of the folder that loaded (for ``partial``). ``facts``: what each scenario file
    declares; a selected scenario without facts explores as a scenario with no variants. ``not_run``: scenarios
    whose normal run never started (``NOT_RUN``), whose explorations may be missing.
    """
    none = ScenarioFacts((), False)
    explorable = [name for name in selected if not facts.get(name, none).pinned]
    if variant is not None:
        explorable = [name for name in explorable if variant in facts.get(name, none).variants]
    paths: list[str] = []
    optional: set[str] = set()
    for name in explorable:
        declared = facts.get(name, none).variants
        chosen = variant if variant is not None else (declared[0] if declared else "")
        for granularity in granularities:
            path = exploration_path(name, granularity, chosen)
            paths.append(path)
            if name in not_run:
                optional.add(path)
    races = [name for name in explorable if facts.get(name, none).race]
    matrix = None
    if races and variant is None:
        variants: list[str] = []
        correct: list[str] = []
        cells: list[tuple[str, str, str]] = []
        for race in races:
            declared = facts[race].variants
            if declared[0] not in correct:
                correct.append(declared[0])
            for name in declared:
                if name not in variants:
                    variants.append(name)
                cells.extend((name, race, granularity) for granularity in MATRIX_GRANULARITIES)
        described = all(name in facts for name in every)
        all_races = {name for name in every if name in facts and facts[name].race}
        partial = set(races) != all_races if described else None
        matrix = ExpectedMatrix(tuple(races), tuple(variants), tuple(correct), tuple(cells), partial)
    return ExpectedContents(tuple(paths), frozenset(optional), matrix)
