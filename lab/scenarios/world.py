"""One run's world: the scenario object and its lab, made once the run's scheduler exists, and what the run installs
for it, each a :data:`lab.engine.core.Install` that :func:`lab.engine.core.execute` enters and leaves.

The engine names no package of the lab, so the scenario layer says what a scenario's run needs: the standard
library's stand-ins (from setup to the end of the run), the modules under test rewritten (the same span) and their
accesses recorded (while the actors run), and at line granularity every line of those modules a scheduling point.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping

from lab.engine.core import Granularity, Json, Scheduler, sorted_detail
from lab.engine.record import LineTracer, Recording, start_recording
from lab.engine.sync import scheduler_aware_primitives
from lab.errors import LabError, Unavailable
from lab.scenarios.base import Lab, Scenario
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.under_test import instrumented_modules, traced_code
from lab.text import one_line


class SetupFailed(LabError):
    """The scenario's setup raised, so nothing ran: ``problem`` in one line, ``details`` its traceback;
    ``skipped`` when it raised :class:`~lab.errors.Unavailable` (this machine cannot run it)."""

    def __init__(self, problem: str, details: str = "", *, skipped: bool = False) -> None:
        super().__init__(problem)
        self.problem, self.details, self.skipped = problem, details, skipped


class World:
    """The scenario of one run and the :data:`~lab.engine.core.Install` callables of that run."""

    def __init__(self, loaded: LoadedScenario, granularity: Granularity, variant: str, watch_states: bool) -> None:
        self.loaded, self.granularity, self.variant = loaded, granularity, variant
        self.state_rows: list[tuple[int, Mapping[str, Json]]] | None = [] if watch_states else None
        """``observe()`` after each actor ended, with the trace step (only when watched)."""
        self.scenario: Scenario = loaded.cls()
        self.lab: Lab | None = None
        self._recorder: _Recorder | None = None
        self._scheduler: Scheduler | None = None

    def stand_ins(self, scheduler: Scheduler) -> contextlib.AbstractContextManager[object]:
        """threading.Lock, queue.Queue, time.sleep... are scheduler-aware from setup to the end of the run."""
        cls = self.loaded.cls
        return scheduler_aware_primitives(scheduler, code=(cls, *cls.line_modules))

    def instrumented(self, scheduler: Scheduler) -> contextlib.AbstractContextManager[object]:
        """The modules under test rewritten, from setup to the end of the run."""
        self._recorder = _Recorder(self.loaded.cls, scheduler, self.granularity)
        return self._recorder.installed()

    def actors(self, scheduler: Scheduler) -> dict[str, Callable[[], object]]:
        """The scenario's actors, bound to its object, whose lab is made with this run's scheduler."""
        cls = self.loaded.cls
        self.scenario.lab = self.lab = Lab(scheduler, cls)
        self._scheduler = scheduler
        if self.variant:
            self.scenario.variant = cls.variants[self.variant]
        return {name: getattr(self.scenario, name) for name in cls.actors}

    def setup(self) -> None:
        """The scenario's ``setup()``, once its actors are known: :class:`SetupFailed` if it raised."""
        try:
            self.scenario.setup()
        except Unavailable as missing:
            raise SetupFailed(str(missing), skipped=True) from None
        except Exception as error:
            raise SetupFailed(f"setup() raised {one_line(error)}", traceback.format_exc()) from None
        rows = self.state_rows
        if rows is not None and self._scheduler is not None:
            self._scheduler.watch_ends(lambda actor, step: rows.append((step, _safe_observe(self.scenario))))

    def recording(self, scheduler: Scheduler) -> contextlib.AbstractContextManager[object]:
        """Accesses recorded while the actors run (the modules were rewritten by :meth:`instrumented`)."""
        if self._recorder is None:
            raise LabError("World.recording needs World.instrumented among the run's installs")
        return self._recorder.recording(self.scenario)

    def lines(self, scheduler: Scheduler) -> contextlib.AbstractContextManager[object]:
        """At line granularity, every line of the modules under test a scheduling point."""
        if self.granularity is not Granularity.LINE:
            return contextlib.nullcontext()
        files, codes = traced_code(self.loaded.cls)
        tracer = LineTracer(scheduler, files, codes, recorded=True)
        scheduler.set_actor_hooks(tracer.install, tracer.uninstall)
        return tracer.active()


def _safe_observe(scenario: Scenario) -> Mapping[str, Json]:
    try:
        return sorted_detail(dict(scenario.observe()))
    except Exception as error:  # another actor may hold the lock observe() needs: say so, do not stop the run
        return {"unreadable": one_line(error)}


class _Recorder:
    """Instruments the modules under test for one run and records each actor's accesses by object identity."""

    def __init__(self, cls: type[Scenario], scheduler: Scheduler, granularity: Granularity) -> None:
        self._modules, codes = instrumented_modules(cls)
        self._recording = Recording(
            scheduler,
            every_access_schedules=granularity is Granularity.INSTRUCTION,
            instrumented=codes,
            leave_alone=("lab.scenarios.base",),  # the scenario's Lab and its helpers: machinery, not state
            stateless_modules=("lab.",),  # the lab's own modules keep no state a call of theirs could change
        )

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The rewritten bodies in place (outside a recording they behave exactly like the originals)."""
        for module in self._modules:
            module.install()
        try:
            yield
        finally:
            for module in self._modules:
                module.uninstall()

    @contextlib.contextmanager
    def recording(self, scenario: Scenario) -> Iterator[None]:
        """Record accesses while the actors run, with the scenario's state named by path first."""
        modules = tuple(sys.modules[module.name] for module in self._modules)
        # the scenario's lab and variant class are not state: the walk skips them
        self._recording.name_roots({"self": scenario}, modules=modules)
        start_recording(self._recording)
        try:
            yield
        finally:
            start_recording(None)
            self._recording.close()
