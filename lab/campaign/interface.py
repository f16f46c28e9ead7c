"""What a campaign is given and gives back: its defaults and settings, what it tells a listener while it works, and
what a run or a replay did."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lab
from lab.commandline import DEFAULT_WATCHDOG as DEFAULT_WATCHDOG
from lab.commandline import WATCHDOG_RANGE as WATCHDOG_RANGE
from lab.commandline import check_watchdog as check_watchdog
from lab.engine.core import Granularity, RunStatus
from lab.engine.search import DEFAULT_MAX_SCHEDULES, Exploration
from lab.errors import ScenarioError
from lab.evidence.records.findings import AuditReport
from lab.evidence.records.sources import is_checkout
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.kill_matrix import KillMatrix
from lab.scenarios.loader import BrokenScenario, LoadedScenario
from lab.scenarios.runner import ScenarioResult, Verdict

Item = LoadedScenario | BrokenScenario


def lab_root() -> Path:
    """The folder holding the ``lab`` package in use: a checkout, or an installed lab's ``site-packages``."""
    return Path(lab.__file__).resolve().parent.parent


def default_scenarios(*, for_new: bool = False) -> Path:
    """The scenario folder used when none is named: ``scenarios/`` in the current folder when it has one (the
    person's own project), else the checkout's ``scenarios/`` when the lab runs from a checkout, else
    ``scenarios/`` here (an installed lab has none of its own).

    ``for_new``: where ``lab new`` writes. Outside the lab's checkout that is always ``scenarios/`` here (made if
    missing), never the checkout an editable install points to: a command writes where the person stands."""
    root = lab_root()
    here = Path("scenarios")
    inside = is_checkout(root) and Path.cwd().resolve().is_relative_to(root)
    if here.is_dir() and not inside:
        return here
    if is_checkout(root) and (root / "scenarios").is_dir() and (inside or not for_new):
        return root / "scenarios"
    return here


@dataclass(frozen=True, slots=True)
class ExploreSettings:
    """How a run explores: at which granularities, within which bounds, over which variant, on how many cores."""

    granularities: tuple[str, ...] = (Granularity.PROBE,)
    preemptions: int | None = None
    max_schedules: int = DEFAULT_MAX_SCHEDULES
    variant: str | None = None
    jobs: int = 1
    """Processes exploring one scenario at once: any number finds the same schedules, counts and verdicts."""
    strategy: str = "dpor"
    """The search strategy (:data:`lab.engine.search.STRATEGIES`); each record says which it used."""
    mode: str = "prove"
    """``prove`` counts every outcome (a lesson's table is graded on all); ``find`` stops at the first failure."""
    seed: int = 0
    seconds: float | None = None
    """A time budget per exploration beside ``max_schedules`` (``None``: none)."""
    cross_check: int = 0
    """Real runs of each explored scenario on free threads after its exploration (0: none); a MODEL GAP fails it."""

    def record(self) -> dict[str, Any]:
        """The settings as ``run.json`` records them (``jobs`` changes no count, so it is not recorded)."""
        return {
            "granularities": list(self.granularities),
            "preemption_bound": self.preemptions,
            "max_schedules": self.max_schedules,
        }


class Listener:
    """What a campaign tells its caller while it works; every method does nothing here (a quiet run).

    The command line subclasses it to show progress on a terminal, or a line per item in a pipe.
    """

    def scenario_done(self, outcome: ScenarioResult | BrokenScenario, done: int, total: int) -> None:
        """A scenario's normal run finished (``done`` of ``total``)."""

    def note(self, text: str) -> None:
        """A fact worth one line: a pinned scenario not explored, the scenarios a variant keeps."""

    def exploration_started(self, name: str, granularity: str) -> None:
        """An exploration begins."""

    def exploration_progress(self, found: Exploration) -> None:
        """An exploration's running counts (called often)."""

    def exploration_done(self, found: ScenarioExploration | ScenarioError) -> None:
        """An exploration finished, or its scenario's setup raised (then no exploration is recorded)."""

    def cross_check_started(self, name: str, granularity: str, runs: int) -> None:
        """Real threads begin checking an exploration's model (``--cross-check``)."""

    def cross_check_done(self, found: ScenarioExploration, lines: Sequence[str]) -> None:
        """An exploration was cross-checked: ``lines`` say what real threads reached (each MODEL GAP, or none), or
        why its scenario is not cross-checked."""

    def kill_matrix_started(self, cells: int) -> None:
        """The kill matrix begins: ``cells`` explorations."""

    def kill_cell_done(self, found: ScenarioExploration) -> None:
        """One cell of the kill matrix is explored."""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run did: its results, explorations, the evidence's self-audit, and the status ``run.json`` holds."""

    folder: Path
    results: tuple[ScenarioResult, ...]
    broken: tuple[BrokenScenario, ...]
    explorations: tuple[ScenarioExploration, ...] = ()
    kill_matrix: KillMatrix | None = None
    counterexamples: tuple[ScenarioExploration, ...] = ()
    """Every failed exploration with a counterexample, explorations first, then the kill matrix's cells."""
    audit: AuditReport | None = None
    explored: bool = False
    variant: str | None = None

    @property
    def status(self) -> str:
        """The run's status as recorded in ``run.json`` and read back by the self-audit: decided once, there."""
        recorded = self.audit.run_status if self.audit is not None else None
        return recorded or Verdict.FAIL

    @property
    def passed(self) -> bool:
        """Every check passed and the evidence verified."""
        return self.status == Verdict.PASS and self.audit is not None and self.audit.ok


@dataclass(frozen=True, slots=True)
class Replayed:
    """One replayed schedule: the run, and the scenario's actors (the replay table's columns)."""

    result: ScenarioResult
    actors: tuple[str, ...]

    @property
    def diverged(self) -> bool:
        """The schedule could not be followed to the end."""
        return self.result.run_status == RunStatus.DIVERGED
