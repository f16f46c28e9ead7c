"""Each program explored twice at the same granularity, naively (the ground truth) and reduced (optimal DPOR, prove
mode), and the outcomes they reached compared.

:func:`explore_both` writes a program to a module file, loads it as the lab loads any scenario (its own module is
its ``line_modules``, so line granularity instruments it) and explores it both ways. A deadlock or an actor's error
is an outcome like any other: the comparison is of the outcome keys reached (``found.outcomes``), not of verdicts.
Before either exploration, one run with the default policy counts each actor's scheduling points
(:func:`measured_points`): a program whose naive count would be over the budget is skipped without running it.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lab.engine import KeepCurrent
from lab.scenarios.exploring import ScenarioExploration, explore_scenario, scenario_explorer
from lab.scenarios.loader import LoadedScenario, load
from tests.fuzz.programs import Program, multinomial, source

MAX_NAIVE = 2_000
"""The schedule budget of the naive enumeration: a program it does not finish within is skipped, not compared."""

_folder: Path | None = None
_serial = itertools.count()


def _home() -> Path:
    """A temporary folder for the generated modules, removed when the process ends."""
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="lab_fuzz_"))
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


@dataclass(frozen=True)
class Comparison:
    """Both explorations of one program, and what the comparison needs of them."""

    text: str
    granularity: str
    naive: ScenarioExploration
    reduced: ScenarioExploration

    @property
    def reduced_complete(self) -> bool:
        return not (self.reduced.budget_hit or self.reduced.time_hit or self.reduced.bounded)

    @property
    def missing(self) -> set[str]:
        """Outcomes naive enumeration reached that the reduced exploration did not."""
        return set(self.naive.outcomes) - set(self.reduced.outcomes)

    @property
    def extra(self) -> set[str]:
        """Outcomes the reduced exploration reached that naive enumeration did not (impossible when it is real)."""
        return set(self.reduced.outcomes) - set(self.naive.outcomes)

    @property
    def redundant(self) -> int:
        """Runs the reduced exploration cut because every runnable actor was asleep. Optimal DPOR runs none when
        every step's footprint names the same state the same way in every run; one means a footprint changed
        between runs (a sleep set carried an earlier run's name for an object), which can lose an outcome even
        where, this time, the outcomes agree."""
        return self.reduced.blocked

    def message(self) -> str:
        """What a failing comparison says: the difference, then the program as a scenario file."""
        lines = [
            f"reduced and naive exploration differ at {self.granularity} granularity: naive "
            f"{len(self.naive.outcomes)} outcomes in {self.naive.schedules} schedules, reduced "
            f"{len(self.reduced.outcomes)} in {self.reduced.schedules}",
            *(f"  only naive reached: {key}" for key in sorted(self.missing)),
            *(f"  only reduced reached: {key}" for key in sorted(self.extra)),
            *([f"  the reduced exploration cut {self.redundant} runs as redundant"] if self.redundant else []),
            "the program, a scenario file: save it as DIR/fuzzed.py and, from the checkout, run",
            f"  PYTHONPATH=. .venv/bin/lab explore --scenarios DIR --scenario fuzzed --granularity {self.granularity}"
            " --out OUT",
            self.text,
        ]
        return "\n".join(lines)


Explore = Callable[[LoadedScenario, bool, int], ScenarioExploration]


def line_exploration(loaded: LoadedScenario, reduction: bool, max_schedules: int) -> ScenarioExploration:
    """The lab's exploration at line granularity: optimal DPOR proving when ``reduction``, else naive."""
    return explore_scenario(loaded, granularity="line", reduction=reduction, max_schedules=max_schedules)


def instruction_exploration(loaded: LoadedScenario, reduction: bool, max_schedules: int) -> ScenarioExploration:
    """The lab's exploration at instruction granularity (every recorded access a scheduling point)."""
    return explore_scenario(loaded, granularity="instruction", reduction=reduction, max_schedules=max_schedules)


EXPLORATIONS: dict[str, Explore] = {"line": line_exploration, "instruction": instruction_exploration}

tally: Counter[str] = Counter()
"""What this process compared: programs compared, skipped (by granularity), different."""


def measured_points(loaded: LoadedScenario, granularity: str) -> list[int]:
    """Each actor's scheduling points in one run with the default policy (each keeps running while it can)."""
    explorer = scenario_explorer(loaded, granularity=granularity, reduction=False, max_schedules=1)
    ran = explorer.program.run(KeepCurrent())
    counts = Counter(decision.chosen for decision in ran.run.decisions)
    return [counts[name] for name in loaded.cls.actors]


def explore_both(
    program: Program,
    *,
    granularity: str = "line",
    max_naive: int = MAX_NAIVE,
    explore: Explore | None = None,
) -> Comparison | None:
    """Write ``program`` to a module, load it and explore it naively, then (if that finished) reduced.

    ``None`` when the naive enumeration would not finish, or did not, within ``max_naive`` schedules: there is no
    ground truth. ``explore`` is the exploration to run (by default the one of ``granularity``; a test passes a
    broken one to check that the comparison catches it).
    """
    explore = explore or EXPLORATIONS[granularity]
    text = source(program)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    # A name never used before in this process: a module loaded again at the same path once its first load left
    # sys.modules explores other scheduling points (462 naive schedules where the first load ran 10).
    path = _home() / f"fuzz_{next(_serial)}_{digest}.py"
    path.write_text(text, encoding="utf-8")
    loaded = load(path)
    if not isinstance(loaded, LoadedScenario):
        raise AssertionError(f"the fuzzer wrote a program the loader refuses ({loaded}):\n{text}")
    try:
        if multinomial(measured_points(loaded, granularity)) > max_naive:
            tally[f"skipped at {granularity}"] += 1
            return None
        naive = explore(loaded, False, max_naive)
        if naive.budget_hit or naive.time_hit or naive.bounded:
            tally[f"skipped at {granularity}"] += 1
            return None
        reduced = explore(loaded, True, max_naive * 10)
        tally[f"compared at {granularity}"] += 1
        return Comparison(text, granularity, naive, reduced)
    finally:
        sys.modules.pop(loaded.cls.__module__, None)
        path.unlink(missing_ok=True)
