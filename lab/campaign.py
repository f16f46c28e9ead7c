"""A campaign: the scenarios of one folder, listed, run, explored, replayed, and a run's evidence written.

The commands (:mod:`lab.cli`) only parse arguments, call this, print what it reports and set the exit code; what a
run does and decides is here: which scenario files run, in which order, what is explored, the checks made before
anything is written, and the run's status, decided once, by the record (``run.json``, as its self-audit read it).
The scenario folder may be anywhere: with an installed lab, :func:`~lab.evidence.records.sources.source_root` lays
``lab/`` and the folder out as a checkout, so the evidence and its audit look exactly like a checkout's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lab
from lab.engine.explorer import DEFAULT_MAX_SCHEDULES, Exploration
from lab.engine.granularity import Granularity
from lab.errors import ScenarioError, UsageError
from lab.evidence.records.findings import AuditReport
from lab.evidence.records.signing import check_signing_key
from lab.evidence.records.sources import is_checkout, source_root
from lab.evidence.write.isolation import Job, run_files
from lab.evidence.write.writer import create_evidence_folder, write_evidence
from lab.scenarios.exploring import ScenarioExploration, explore_scenario, replay_scenario
from lab.scenarios.kill_matrix import KillMatrix, build_kill_matrix, race_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, discover, load_all
from lab.scenarios.pinning import describe_pin, is_pinned, save_counterexample
from lab.scenarios.runner import ScenarioResult
from lab.scenarios.template import check_new_name, write_template

DEFAULT_WATCHDOG = 10.0
WATCHDOG_RANGE = (0.01, 3600.0)
"""The seconds a watchdog may be: ``nan`` and ``inf`` would never report a blocked actor, and below a hundredth of
a second ordinary scheduling looks like a hang."""

Item = LoadedScenario | BrokenScenario


def lab_root() -> Path:
    """The folder holding the ``lab`` package in use: a checkout, or an installed lab's ``site-packages``."""
    return Path(lab.__file__).resolve().parent.parent


def default_scenarios() -> Path:
    """The scenario folder used when none is named: the checkout's ``scenarios/`` when the lab runs from a
    checkout, else ``scenarios/`` in the current folder (an installed lab has none of its own)."""
    root = lab_root()
    if is_checkout(root) and (root / "scenarios").is_dir():
        return root / "scenarios"
    return Path("scenarios")


def check_watchdog(seconds: float) -> None:
    """A finite number of seconds within :data:`WATCHDOG_RANGE`, or a :class:`UsageError`."""
    low, high = WATCHDOG_RANGE
    if not (math.isfinite(seconds) and low <= seconds <= high):
        raise UsageError(f"--watchdog needs a number of seconds from {low:g} to {high:g}, not {seconds:g}")


@dataclass(frozen=True, slots=True)
class ExploreSettings:
    """How a run explores: at which granularities, within which bounds, over which variant, on how many cores."""

    granularities: tuple[str, ...] = (Granularity.PROBE,)
    preemptions: int | None = None
    max_schedules: int = DEFAULT_MAX_SCHEDULES
    variant: str | None = None
    jobs: int = 1
    """Processes exploring one scenario at once: any number finds the same schedules, counts and verdicts."""

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
        return recorded or "FAIL"

    @property
    def passed(self) -> bool:
        """Every check passed and the evidence verified."""
        return self.status == "PASS" and self.audit is not None and self.audit.ok


@dataclass(frozen=True, slots=True)
class Replayed:
    """One replayed schedule: the run, and the scenario's actors (the replay table's columns)."""

    result: ScenarioResult
    actors: tuple[str, ...]

    @property
    def diverged(self) -> bool:
        """The schedule could not be followed to the end."""
        return self.result.run_status == "DIVERGED"


@dataclass(slots=True)
class _Plan:
    """What a run will explore, checked before its evidence folder exists."""

    loaded: list[LoadedScenario] = field(default_factory=list)
    to_explore: list[LoadedScenario] = field(default_factory=list)
    all_races: set[str] = field(default_factory=set)


class Campaign:
    """The scenarios of one folder, and what can be done with them.

    ``scenarios``: the scenario folder. ``root``: the folder holding the ``lab`` package whose sources a run
    records (default :func:`lab_root`; ``run.py`` passes its checkout).
    """

    def __init__(self, scenarios: Path | None = None, *, root: Path | None = None) -> None:
        self.scenarios = Path(scenarios) if scenarios is not None else default_scenarios()
        self.root = root if root is not None else lab_root()

    def _require_folder(self) -> None:
        if not self.scenarios.is_dir():
            raise UsageError(f"{self.scenarios} is not a folder of scenarios; name one with --scenarios DIR")

    def items(self, names: Sequence[str] = ()) -> list[Item]:
        """The scenario files, loaded (or broken), in name order; only ``names`` when given, in their order."""
        self._require_folder()
        return self._select(load_all(self.scenarios), names)

    def new(self, name: str) -> Path:
        """Write ``NAME.py`` in the scenario folder from the template; never overwrites."""
        check_new_name(name)
        self._require_folder()
        return write_template(self.scenarios, name)

    def check_new_name(self, name: str) -> None:
        """Refuse, before anything runs, a name a counterexample cannot be saved under."""
        check_new_name(name)
        if (self.scenarios / f"{name}.py").exists():
            raise UsageError(
                f"--save-scenario {name}: {self.scenarios / name}.py already exists; choose another name "
                "(nothing was written)"
            )

    def replay(
        self, spec: str, *, granularity: str | None = None, variant: str | None = None, watchdog: float | None = None
    ) -> Replayed:
        """Re-run ``NAME:SCHEDULE`` exactly; a pinned scenario replays over its own variant and granularity."""
        name, sep, schedule = spec.partition(":")
        if not sep:
            raise UsageError("a replay takes NAME:SCHEDULE, for example out_of_order_commit:0:01-1:01")
        item = self.items([name])[0]
        if isinstance(item, BrokenScenario):
            raise UsageError(f"scenario {item}")
        pin = item.cls.pin
        if pin is not None:  # its schedule was recorded over its own variant and granularity
            variant = variant or pin.variant or None
            granularity = granularity or pin.granularity
        result = replay_scenario(
            item,
            schedule,
            granularity=granularity or Granularity.PROBE,
            variant=variant,
            watchdog_seconds=watchdog if watchdog is not None else DEFAULT_WATCHDOG,
            watch_states=True,
        )
        return Replayed(result, tuple(item.cls.actors))

    def run(
        self,
        out: Path,
        *,
        names: Sequence[str] = (),
        command: Sequence[str],
        watchdog: float = DEFAULT_WATCHDOG,
        explore: ExploreSettings | None = None,
        sign: Path | None = None,
        listener: Listener | None = None,
        created: Callable[[Path], None] | None = None,
    ) -> RunOutcome:
        """Run the scenarios (each file in a worker process of its own), explore them if asked, and write the
        evidence into the new folder ``out``; every mistake is refused before the folder exists.

        ``created`` is told the folder the moment it exists (so an interrupted run can say which one it left).
        """
        listener = listener or Listener()
        self._require_folder()
        check_watchdog(watchdog)
        if sign is not None:
            check_signing_key(sign)
        with source_root(self.root, self.scenarios) as root:
            folder = root / "scenarios"
            paths = self._select_paths(discover(folder), names)
            plan = self._plan(folder, names, explore) if explore is not None else _Plan()
            started = datetime.now(UTC)
            created_folder = create_evidence_folder(out, started=started)
            if created is not None:
                created(created_folder)
            finished: list[int] = []

            def scenario_done(_: int, outcome: ScenarioResult | BrokenScenario) -> None:
                finished.append(1)
                listener.scenario_done(outcome, len(finished), len(paths))

            outcomes = run_files([Job(path, watchdog) for path in paths], on_done=scenario_done)
            results = tuple(o for o in outcomes if isinstance(o, ScenarioResult))
            broken = tuple(o for o in outcomes if isinstance(o, BrokenScenario))
            explorations: list[ScenarioExploration] = []
            matrix: KillMatrix | None = None
            counterexamples: list[ScenarioExploration] = []
            if explore is not None:
                explorations, matrix, counterexamples = self._explore(plan, explore, listener)
            audit = write_evidence(
                created_folder,
                results,
                broken,
                root=root,
                command=command,
                started=started,
                ended=datetime.now(UTC),
                explorations=explorations,
                kill_matrix=matrix,
                explore_settings=explore.record() if explore is not None else None,
                sign_with=sign,
            )
        return RunOutcome(
            created_folder,
            results,
            broken,
            tuple(explorations),
            matrix,
            tuple(counterexamples),
            audit,
            explored=explore is not None,
            variant=explore.variant if explore is not None else None,
        )

    def save(self, outcome: RunOutcome, name: str) -> tuple[ScenarioExploration, Path] | None:
        """Save the run's first counterexample as the pinned scenario ``NAME.py`` in the scenario folder; ``None``
        when there is none to save (every exploration passed). Raises :class:`~lab.errors.LabError` when it cannot
        be saved. Called after the evidence is written, so the folder holds what ran and nothing else."""
        found = next((f for f in outcome.counterexamples if f.counterexample is not None), None)
        if found is None or found.counterexample is None:
            return None
        item = self.items([found.name])[0]
        assert isinstance(item, LoadedScenario)
        replayed = replay_scenario(
            item, found.counterexample.schedule, granularity=found.granularity, variant=found.variant or None
        )
        return found, save_counterexample(self.scenarios, name, found, replayed, item.cls.actors)

    def _plan(self, folder: Path, names: Sequence[str], explore: ExploreSettings) -> _Plan:
        """The scenarios an exploration explores, checked before anything is written.

        A pinned counterexample is never explored (it is one interleaving, which its normal run replays). With a
        variant only scenarios that declare it are explored: a scenario named that does not is a usage error;
        without names, the others are skipped.
        """
        every = load_all(folder)
        loaded = [item for item in self._select(every, names) if isinstance(item, LoadedScenario)]
        plan = _Plan(
            loaded=loaded,
            all_races={item.name for item in every if isinstance(item, LoadedScenario) and race_scenario(item)},
        )
        explorable = [item for item in loaded if not is_pinned(item.cls)]
        variant = explore.variant
        if variant is None:
            plan.to_explore = explorable
            return plan
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
        plan.to_explore = declaring
        return plan

    def _explore(
        self, plan: _Plan, settings: ExploreSettings, listener: Listener
    ) -> tuple[list[ScenarioExploration], KillMatrix | None, list[ScenarioExploration]]:
        """Explore each planned scenario at each granularity, then build the kill matrix (not over one variant)."""
        for item in plan.loaded:
            if is_pinned(item.cls):
                listener.note(
                    f"not explored: {item.name} is pinned to {describe_pin(item.cls)}; its normal run replayed it"
                )
        if settings.variant is not None and len(plan.to_explore) < len(
            [i for i in plan.loaded if not is_pinned(i.cls)]
        ):
            listener.note(
                f"--variant {settings.variant}: exploring only the scenarios that declare it: "
                f"{', '.join(item.name for item in plan.to_explore)}"
            )
        explorations: list[ScenarioExploration] = []
        cells: list[ScenarioExploration] = []
        for item in plan.to_explore:
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
                    )
                except ScenarioError as error:  # its setup raises: the normal run already reports it as ERROR
                    listener.exploration_done(error)
                    break
                explorations.append(found)
                listener.exploration_done(found)
        races = [item for item in plan.to_explore if race_scenario(item)]
        matrix = None
        if races and settings.variant is None:
            listener.kill_matrix_started(sum(len(r.cls.variants) * 2 for r in races))

            def cell_done(found: ScenarioExploration) -> None:
                listener.kill_cell_done(found)
                if found.counterexample is not None:
                    cells.append(found)

            partial = {race.name for race in races} != plan.all_races
            matrix = build_kill_matrix(races, max_schedules=settings.max_schedules, on_cell=cell_done, partial=partial)
        elif races:
            listener.note(f"kill matrix: not built: --variant {settings.variant} explores one variant")
        failed = [found for found in explorations if found.counterexample is not None]
        return explorations, matrix, failed + cells

    @staticmethod
    def _select(items: list[Item], names: Sequence[str]) -> list[Item]:
        if not names:
            return items
        known = {item.name: item for item in items}
        _check_known(names, known)
        return [known[name] for name in dict.fromkeys(names)]

    @staticmethod
    def _select_paths(paths: list[Path], names: Sequence[str]) -> list[Path]:
        """The scenario files named (by stem, in the order given, once each), or all of them."""
        if not names:
            return paths
        known = {path.stem: path for path in paths}
        _check_known(names, known)
        return [known[name] for name in dict.fromkeys(names)]


def _check_known(names: Sequence[str], known: dict[str, Any]) -> None:
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; the list command shows every scenario")
