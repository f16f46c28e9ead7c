"""Progress while a campaign or an audit works: a live display on a terminal, a line per finished item in a pipe.

A live display shows one bar for the step under way and its running counts, redescribed as the step changes, so
it never grows taller than the screen (one task per exploration used to push the running one out of view). In a
pipe (a CI log, a file) a live display would only leave control sequences behind: there each scenario, exploration
and kill-matrix cell prints one line when it finishes, verdict first.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Self

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from lab.campaign import Listener
from lab.cli.common import Output
from lab.engine.search import Exploration
from lab.errors import ScenarioError
from lab.render import Hanging, verdict_text
from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.kill_matrix import CellStatus
from lab.scenarios.loader import BrokenScenario
from lab.scenarios.runner import ScenarioResult


class _Display:
    """A live display on standard error while the ``with`` block lasts, when it is a terminal; else nothing."""

    def __init__(self, output: Output, first: str, *columns: ProgressColumn) -> None:
        self._output = output
        self._columns = columns
        self._first = first
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Self:
        if self._output.live:
            self._progress = Progress(*self._columns, console=self._output.err, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self._first, total=None, extra="")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class CampaignProgress(_Display, Listener):
    """A campaign's progress, shown the way :class:`~lab.cli.common.Output` says; a context manager."""

    def __init__(self, output: Output) -> None:
        super().__init__(
            output,
            "running scenarios",
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn("{task.fields[extra]}"),
            TimeElapsedColumn(),
        )

    def _show(self, description: str, *, completed: int = 0, total: int | None = None, extra: str = "") -> None:
        if self._progress is not None and self._task is not None:
            self._progress.reset(self._task, description=description, total=total, completed=completed, extra=extra)

    def _line(self, *parts: str | Text) -> None:
        if self._progress is None:
            self._output.out.print(Hanging(Text.assemble(*parts)))  # continuation lines indented

    def scenario_done(self, outcome: ScenarioResult | BrokenScenario, done: int, total: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description="running scenarios", completed=done, total=total)
            return
        if isinstance(outcome, BrokenScenario):
            self._line(verdict_text("BROKEN"), f" {outcome.name}  ({done}/{total}): {outcome.problem}")
        else:
            self._line(verdict_text(outcome.verdict.value), f" {outcome.name}  ({done}/{total})")

    def note(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            self._output.line(text)

    def exploration_started(self, name: str, granularity: str) -> None:
        self._show(f"exploring {name} ({granularity})", extra="schedules")

    def exploration_progress(self, found: Exploration) -> None:
        if self._progress is not None and self._task is not None:
            done = found.schedules + found.pruned
            self._progress.update(self._task, completed=done, extra=f"schedules, {len(found.counts)} outcomes")

    def exploration_done(self, found: ScenarioExploration | ScenarioError) -> None:
        if isinstance(found, ScenarioError):
            self.note(f"not explored: {found}")
            return
        self._line(
            verdict_text(found.verdict.value),
            f" explored {found.name} ({found.granularity}): {found.classes} interleaving classes, "
            f"{found.executions} executions run ({found.blocked} redundant), {found.distinct} outcomes, "
            f"{found.seconds:.1f} s",
        )

    def cross_check_started(self, name: str, granularity: str, runs: int) -> None:
        self._show(f"cross-checking {name} ({granularity}) on real threads", extra=f"{runs} runs")

    def cross_check_done(self, found: ScenarioExploration, lines: Sequence[str]) -> None:
        for line in lines:  # on a terminal too: a MODEL GAP, or a scenario not checked, is never only transient
            self.note(line)

    def kill_matrix_started(self, cells: int) -> None:
        self._show("kill matrix", total=cells, extra="cells")

    def kill_cell_done(self, found: ScenarioExploration) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)
            return
        status = CellStatus.of(found.verdict)
        self._line(f"kill matrix: {found.variant} on {found.name} ({found.granularity}): {status}")


class AuditProgress(_Display):
    """An audit's steps: a spinner with the step and the time on a terminal, a line per step in a pipe."""

    def __init__(self, output: Output) -> None:
        super().__init__(
            output,
            "verifying integrity, consistency and sources",
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
        )

    def __call__(self, step: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=step)
        else:
            self._output.line(f"{step} ...")
