"""The one-process side of work items: a search that takes subtrees explored elsewhere, and the items for elsewhere.

:func:`split_work` writes work items as lines of text, :func:`explore_work` explores one anywhere, and
:func:`take_results` runs the one-process search, taking a subtree's result wherever it reaches that subtree with
the same inputs (:mod:`lab.engine.search._work_items`). The same function finishes a parallel exploration that a
budget cut, with the subtrees the workers finished (:mod:`lab.engine.search._parallel`); :func:`quietly` keeps the
caller from hearing twice about the runs already reported.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lab.engine.core._run import RunResult
from lab.engine.search._exploration import Exploration
from lab.engine.search._explorer import Explorer
from lab.engine.search._subtrees import Subtree
from lab.engine.search._work_items import Ran, Result, apply, inputs_here, normal, ran, take

if TYPE_CHECKING:
    from lab.engine.search._choices import Guide
    from lab.engine.search._tree import Node


def quietly(explorer: Explorer, runs: int, search: Callable[[], Exploration]) -> Exploration:
    """Run ``search`` with the caller's adopt and progress left out for its first ``runs`` runs."""
    adopt, progress = explorer._adopt, explorer._progress
    adopted = reported = 0

    def quiet_adopt(parts: list[Any]) -> None:
        nonlocal adopted
        adopted += 1
        if adopted > runs and adopt is not None:
            adopt(parts)

    def quiet_progress(found: Exploration) -> None:
        nonlocal reported
        reported += 1
        if reported > runs and progress is not None:
            progress(found)

    explorer._adopt, explorer._progress = quiet_adopt, quiet_progress
    try:
        return search()
    finally:
        explorer._adopt, explorer._progress = adopt, progress


def take_done(explorer: Explorer, done: Sequence[bytes]) -> Exploration:
    """The one-process search, taking the subtrees other machines explored (:func:`explore_work`)."""
    results: dict[str, Result] = {}
    for blob in done:
        result = pickle.loads(blob)
        if isinstance(result, Result):
            results[result.text] = result
    return take_results(explorer, results)


def take_results(explorer: Explorer, results: dict[str, Result]) -> Exploration:
    """The one-process search, taking each subtree explored elsewhere where it reaches that subtree with the same
    inputs (unless the budget would end inside it: then it runs that subtree itself, to stop where it stops)."""

    def skip(nodes: list[Node], found: Exploration) -> bool:
        result = results.get(inputs_here(explorer, nodes))
        if result is None or found.executions_run + len(result.runs) >= explorer.max_schedules:
            return False
        apply(explorer, nodes, found, result)
        for one in result.runs:
            take(explorer, found, one)
            found.reused += 1
        return True

    return explorer._search(skip=skip)


def split_work(explorer: Explorer, at_least: int) -> list[str]:
    """Work items for other machines: run the search here until it has planned at least ``at_least`` branches it
    has not begun (or for ``at_least`` runs, if that comes first), and return those subtrees, one line of text each
    (none when the search ended first: it is small enough for one machine). Hand each line to
    :func:`explore_work` anywhere the same checkout runs."""
    return [normal(subtree) for subtree in explorer.split(at_least)]


def explore_work(explorer: Explorer, line: str) -> bytes:
    """Explore the subtree ``line`` names (from :func:`split_work`, with an explorer of the same scenario and
    settings, used for nothing else) and return its result, for ``explore(done=...)`` to take. Bytes of pickles:
    accept them only from machines you trust, as with any task queue that carries pickles."""
    explorer.quiet_for_worker()
    runs: list[Ran] = []
    best: dict[str, tuple[int, int, str]] = {}

    def emit(run: RunResult, key: str, payload: object, policy: Guide, found: Exploration) -> None:
        runs.append(ran(explorer, run, key, payload, policy, found, best))

    outside, first, bounded = explorer.explore_subtree(Subtree.from_text(line), emit)
    return pickle.dumps(Result(line, outside, first, bounded, runs), protocol=pickle.HIGHEST_PROTOCOL)
