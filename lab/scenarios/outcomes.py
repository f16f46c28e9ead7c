"""What must come out of a scenario: one outcome table, whatever kind of scenario it is.

A race scenario lists the outcomes it allows and forbids (``acceptable``, ``interesting``, ``forbidden`` rows); a
latch-ordered scenario, whose latches leave exactly one outcome, writes that outcome with :func:`only`, a one-row
table the runner grades key by key (so a wrong outcome says which key was wrong). The explorer grades both the same
way: every outcome a schedule reaches must match an allowed row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from lab.engine.core import ActorEnd, Json, RunStatus
from lab.errors import ScenarioError
from lab.sessions.transactional import TransactionalChat
from lab.sessions.versioned import VersionedSession

RUN_STATUSES = (RunStatus.FINISHED, RunStatus.DEADLOCK)
"""How a scenario may expect its run to end: a HUNG or DIVERGED run is never a lesson's outcome."""

ONLY_REASON = "the one outcome this scenario's latches teach"
"""The reason of the row :func:`only` builds (the explorer's table shows it)."""


class Grade(StrEnum):
    """How an outcome is judged, the way jcstress grades results."""

    ACCEPTABLE = "ACCEPTABLE"
    """Allowed, and expected."""
    INTERESTING = "INTERESTING"
    """Allowed, but worth a look: a lesson in itself."""
    FORBIDDEN = "FORBIDDEN"
    """Must never happen: reaching it fails the scenario."""


UNDECLARED = "UNDECLARED"
"""The grade of the row the explorer adds for an outcome no declared row matches; a table never declares it."""

FAILING_GRADES = frozenset({Grade.FORBIDDEN.value, UNDECLARED})
"""The grades of a graded table's rows that fail an exploration once some schedule reaches them."""

LAB_ENDS = frozenset(end.value for end in ActorEnd)
"""The outcomes the lab gives an actor that did not return (it raised, was blocked, hung or never ran): a row
admits one only where it names it."""

_RAISED = frozenset({ActorEnd.ERROR.value})


@dataclass(frozen=True)
class Outcome:
    """One row of an outcome table: what was observed (only the keys given are compared), its grade, and why.

    Keys are actor names (their outcome), keys of ``observe()`` (final state), or ``run`` (FINISHED, DEADLOCK,
    HUNG). A hang is HUNG, never STALE: STALE is a commit status. ``blocked_on`` (rows of :func:`only` only) says
    what each actor of a deadlock waits for; ``exact`` marks the one row of :func:`only`.
    """

    grade: Grade
    reason: str
    expect: Mapping[str, Json] = field(default_factory=dict)
    blocked_on: Mapping[str, str] = field(default_factory=dict)
    exact: bool = False

    def matches(self, observed: Mapping[str, Json]) -> bool:
        """True when every key of this row has the observed value (the keys it names, nothing else)."""
        return all(key in observed and observed[key] == value for key, value in self.expect.items())

    def admits(self, observed: Mapping[str, Json], actors: Sequence[str]) -> bool:
        """True when this row grades ``observed``: it matches, and what it leaves unnamed ended well.

        A row says only the keys it cares about, so a key it leaves out must not smuggle a failure in: unless the
        row names ``run``, the run must have FINISHED (a row that names ``run="DEADLOCK"`` admits the actors it
        leaves blocked); unless it names an actor, that actor must not have raised. An outcome like that is graded
        by no row (undeclared), so that ``acceptable("anything")`` never accepts a crash or a deadlock nobody
        wrote down.
        """
        return self.matches(observed) and not self.unnamed_failure(observed, actors)

    def unnamed_failure(self, observed: Mapping[str, Json], actors: Sequence[str]) -> str:
        """What in ``observed`` failed without this row naming it (``""`` when nothing did): see :meth:`admits`."""
        expect = self.expect
        run = observed.get("run", RunStatus.FINISHED.value)
        if "run" not in expect and run != RunStatus.FINISHED:
            return f"the run ended {run}"
        ended = _RAISED if "run" in expect else LAB_ENDS
        for name in actors:
            if name not in expect and observed.get(name) in ended:
                return f"{name} ended {observed[name]}"
        return ""

    def describe(self) -> str:
        """The row's keys as ``slow=STALE, fast=COMMITTED, version=1``."""
        return ", ".join(f"{key}={value}" for key, value in self.expect.items()) or "(anything)"


def acceptable(reason: str, **expect: Json) -> Outcome:
    """An ACCEPTABLE row: ``acceptable("fast committed first", fast="COMMITTED", slow="STALE")``."""
    return Outcome(Grade.ACCEPTABLE, reason, expect)


def interesting(reason: str, **expect: Json) -> Outcome:
    """An INTERESTING row: allowed, and worth a look."""
    return Outcome(Grade.INTERESTING, reason, expect)


def forbidden(reason: str, **expect: Json) -> Outcome:
    """A FORBIDDEN row: reaching it fails the scenario."""
    return Outcome(Grade.FORBIDDEN, reason, expect)


def only(*, run: str = "FINISHED", blocked_on: Mapping[str, str] | None = None, **expect: Json) -> tuple[Outcome]:
    """The table of a latch-ordered scenario: the one outcome its latches leave, every other one undeclared.

    ``only(fast="COMMITTED", slow="STALE", version=1)`` names each actor's outcome and the keys of ``observe()``
    to compare; ``run="DEADLOCK"`` when the deadlock is the lesson, with ``blocked_on={"slow": "latch 'x' ..."}``
    saying what each stuck actor waits for (as the deadlock report words it).
    """
    if run not in RUN_STATUSES:
        raise ScenarioError(f"only(run={run!r}): a scenario's run ends {' or '.join(RUN_STATUSES)}")
    if blocked_on and run != RunStatus.DEADLOCK:
        raise ScenarioError("only(blocked_on=...) describes a deadlock: add run='DEADLOCK'")
    return (Outcome(Grade.ACCEPTABLE, ONLY_REASON, {"run": run, **expect}, dict(blocked_on or {}), exact=True),)


def row_for(table: Sequence[Outcome], observed: Mapping[str, Json], actors: Sequence[str]) -> Outcome | None:
    """The row of ``table`` that grades ``observed``: the first that admits it (``None``: the outcome is undeclared).

    Every grader of an outcome (one run, an exploration, a pinned replay, an explanation's swap) asks this, so that
    they agree on what an outcome table allows.
    """
    return next((row for row in table if row.admits(observed, actors)), None)


def versioned_state(session: VersionedSession) -> dict[str, Json]:
    """What most scenarios observe of a versioned session: its version and the contents of its history."""
    version, history = session.snapshot()
    return {"version": version, "history": [message.content for message in history]}


def chat_state(chat: TransactionalChat) -> dict[str, Json]:
    """What most scenarios observe of a transactional chat: the contents of its committed history."""
    return {"history": [message.content for message in chat.snapshot()]}
