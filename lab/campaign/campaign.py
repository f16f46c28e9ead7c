"""The campaign: the scenarios of one folder, listed, run, explored, replayed, and a run's evidence written."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from lab.campaign.exploring import Item, Plan, plan, select
from lab.campaign.exploring import explore as explore_plan
from lab.campaign.interface import (
    DEFAULT_WATCHDOG,
    ExploreSettings,
    Listener,
    Replayed,
    RunOutcome,
    check_watchdog,
    default_scenarios,
    lab_root,
)
from lab.engine.core import Granularity
from lab.errors import UsageError
from lab.evidence.records import sources as source_files
from lab.evidence.records.layout import STARTED, SUMS
from lab.evidence.records.signing import check_signing_key
from lab.evidence.records.sources import source_root
from lab.evidence.reexecute.isolation import Job, run_files
from lab.evidence.write import OpenFolder, create_evidence_folder, resume_folder, write_evidence
from lab.scenarios.exploring import ScenarioExploration, replay_scenario
from lab.scenarios.kill_matrix import KillMatrix
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load_all
from lab.scenarios.pinning import save_counterexample
from lab.scenarios.runner import ScenarioResult
from lab.scenarios.template import check_new_name, write_template


class Campaign:
    """The scenarios of one folder, and what can be done with them.

    ``scenarios``: the scenario folder. ``root``: the folder holding the ``lab`` package whose sources a run
    records (default :func:`lab_root`; ``run.py`` passes its checkout).
    """

    def __init__(self, scenarios: Path | None = None, *, root: Path | None = None, for_new: bool = False) -> None:
        self.scenarios = Path(scenarios) if scenarios is not None else default_scenarios(for_new=for_new)
        self.root = root if root is not None else lab_root()

    def _require_folder(self) -> None:
        if not self.scenarios.is_dir():
            raise UsageError(f"{self.scenarios} is not a folder of scenarios; name one with --scenarios DIR")

    def items(self, names: Sequence[str] = ()) -> list[Item]:
        """The scenario files, loaded (or broken), in name order; only ``names`` when given, in their order."""
        self._require_folder()
        return select(load_all(self.scenarios), names)

    def new(self, name: str) -> Path:
        """Write ``NAME.py`` in the scenario folder from the template; never overwrites."""
        check_new_name(name)
        if not self.scenarios.exists() and self.scenarios.parent.is_dir():
            self.scenarios.mkdir()  # a first scenario in an empty project: its folder too
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
        resume: bool = False,
    ) -> RunOutcome:
        """Run the scenarios (each file in a worker process of its own), explore them if asked, and write the
        evidence into the new folder ``out``; every mistake is refused before the folder exists.

        ``created`` is told the folder the moment it exists (so an interrupted run can say which one it left).
        ``resume``: ``out`` is the unfinished folder this same command began (``command`` holds ``--resume``, which
        the folder does not record); only the scenarios it lacks run (:mod:`lab.evidence.write.resume`).
        """
        listener = listener or Listener()
        self._require_folder()
        check_watchdog(watchdog)
        if sign is not None:
            check_signing_key(sign)
        refuse_out(out, root=self.root, scenarios=self.scenarios)
        with source_root(self.root, self.scenarios) as root:
            folder = root / "scenarios"
            command = [word for word in command if word != "--resume"] if resume else list(command)
            resumed = resume_folder(out, root, command) if resume else None
            archived = (  # read and hashed once, before anything runs: what is archived, and what runs
                resumed.opened.archived or [] if resumed is not None else source_files.collect(root)
            )
            texts = {file.path: file.data for file in archived}
            listed = source_files.scenario_files(texts, source_files.archived_helpers(texts, texts.get))
            chosen_names = select(listed, names, str)
            chosen = plan(folder, names, explore) if explore is not None else Plan()
            kept = resumed.finished if resumed is not None else {}
            if resumed is None:
                started = datetime.now(UTC)
                created_folder = create_evidence_folder(out, started=started, command=command)
                opened = OpenFolder(created_folder, root)
                opened.sources(archived)
            else:
                started, created_folder, opened = resumed.started, out, resumed.opened
            if created is not None:
                created(created_folder)
            todo = [name for name in chosen_names if name not in kept]
            finished: list[int] = []

            def scenario_done(_: int, outcome: ScenarioResult | BrokenScenario) -> None:
                if isinstance(outcome, ScenarioResult):
                    opened.result(outcome)  # on disk now: a run killed later still leaves it
                finished.append(1)
                listener.scenario_done(outcome, len(finished), len(todo))

            with source_files.snapshot(archived) as copy:  # the workers load the bytes read, not the checkout
                jobs = [Job(copy / "scenarios" / f"{name}.py", watchdog, shown=folder / f"{name}.py") for name in todo]
                ran = {outcome.name: outcome for outcome in run_files(jobs, on_done=scenario_done)}
                outcomes = [kept[name] if name in kept else ran[name] for name in chosen_names]
                results = tuple(o for o in outcomes if isinstance(o, ScenarioResult))
                broken = tuple(o for o in outcomes if isinstance(o, BrokenScenario))
                explorations: list[ScenarioExploration] = []
                matrix: KillMatrix | None = None
                counterexamples: list[ScenarioExploration] = []
                if explore is not None:
                    explorations, matrix, counterexamples = explore_plan(chosen, explore, listener)
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
                    opened=opened,
                    # read once the self-audit's re-execution has started, while the run's own copy still exists
                    sources_changed=lambda: source_files.changed_during(archived, root, copy),
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


def refuse_out(out: Path, *, root: Path, scenarios: Path) -> None:
    """Refuse, before anything is written, an evidence folder inside the checkout's ``lab/`` or the scenario folder
    (its files would be archived, and run, as code by the next run, and change the checkout under this one) or
    inside another evidence folder, its ``sources/`` above all (it would be a file that folder does not list)."""
    where = Path(os.path.abspath(out))
    places = [(root / "lab", "the checkout's lab/"), (scenarios, "the scenario folder")]
    for place, name in places:
        if where.is_relative_to(Path(os.path.abspath(place))) or where.is_relative_to(place.resolve()):
            raise UsageError(
                f"--out {out} is inside {name} ({place}): the evidence would be archived as the code of the next "
                "run; choose a folder outside lab/ and the scenarios"
            )
    for parent in where.parents:
        if any((parent / marker).is_file() for marker in (STARTED, SUMS)):
            inside = " (its archived sources/)" if (parent / "sources") in (where, *where.parents) else ""
            raise UsageError(
                f"--out {out} is inside the evidence folder {parent}{inside}, which must hold only what its run "
                "wrote; choose a folder outside it"
            )
