"""What one scenario run produced: its verdict, its named checks, and everything the evidence records of it."""

from __future__ import annotations

import enum
import inspect
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from lab.engine.core import BlockedActor, Granularity, Json, RunResult, TraceEvent


class Verdict(StrEnum):
    """A scenario's grade."""

    PASS = "PASS"
    """Every check held."""
    FAIL = "FAIL"
    """It ran, and at least one check did not hold."""
    ERROR = "ERROR"
    """It could not run: its setup or its checks raised."""
    SKIPPED = "SKIPPED"
    """It cannot run on this machine: something it needs is not there (its setup raised
    :class:`~lab.errors.Unavailable`; ``problem`` says what). It ran nothing and has no checks: not a pass, not a
    failure, and never dropped from the evidence."""


NOT_RUN = "NOT_RUN"
"""The run status of a scenario that never reached the scheduler (its setup raised, it was skipped, or its worker
did not report); every other run status is a :class:`~lab.engine.core._run.RunStatus`."""


@dataclass(frozen=True, slots=True)
class Check:
    """One named expectation, whether it held, and why not.

    ``kind`` says what was checked: ``run``, ``outcome``, ``state``, ``blocked``, ``table`` or ``invariant``.
    """

    name: str
    passed: bool
    reason: str = ""
    kind: str = ""


@dataclass(frozen=True)
class ScenarioResult:
    """Everything one scenario run produced; ``seconds`` is the only field that depends on the clock."""

    name: str
    lesson: str
    description: str
    source: str
    mutant: bool
    verdict: Verdict
    run_status: str
    expect: Mapping[str, str]
    outcomes: Mapping[str, str]
    state: Mapping[str, Json]
    checks: tuple[Check, ...]
    trace: tuple[TraceEvent, ...]
    requests: tuple[bytes, ...] = ()
    transport_calls: int = 0
    blocked: tuple[BlockedActor, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)
    problem: str = ""
    seconds: float = 0.0
    variant: str = ""
    granularity: str = Granularity.PROBE
    store: str = ""
    """Where its sessions kept their state: ``memory``, or the labels of the durable stores they used (``, ``
    between two); ``""`` when it did not run."""
    run: RunResult | None = field(default=None, repr=False, compare=False)
    state_rows: tuple[tuple[int, Mapping[str, Json]], ...] = field(default=(), repr=False, compare=False)

    @property
    def observed(self) -> dict[str, Json]:
        """What an outcome-table row is compared with: the run status, each actor's outcome, the final state."""
        return {"run": self.run_status, **self.outcomes, **self.state}

    @property
    def failed_invariants(self) -> tuple[str, ...]:
        """The names of the invariants that did not hold."""
        return tuple(c.name for c in self.checks if c.kind == "invariant" and not c.passed)

    @property
    def passed(self) -> bool:
        """True when the verdict is PASS."""
        return self.verdict is Verdict.PASS

    @property
    def checks_passed(self) -> int:
        """How many checks held."""
        return sum(check.passed for check in self.checks)

    @property
    def checks_failed(self) -> int:
        """How many checks did not hold."""
        return len(self.checks) - self.checks_passed


def outcome_text(value: object) -> str:
    """An actor's return value as the word that expectations compare: ``STALE``, ``COMMITTED``, ``DONE``."""
    if value is None:
        return "DONE"
    if isinstance(value, enum.Enum):
        return str(value.value)
    status = _static_attribute(value, "status")
    if status is not None:
        return outcome_text(status)
    held = _static_attribute(value, "value")
    return str(held if held is not None else value)


def _static_attribute(value: object, name: str) -> object:
    """``value.name`` found without running the learner's code (no ``__getattr__``, no property of theirs): what
    the instance dict or a slot holds, or a plain class attribute; ``None`` when there is none."""
    try:
        found = inspect.getattr_static(value, name)
    except AttributeError:
        return None
    if isinstance(found, types.MemberDescriptorType):
        try:
            return found.__get__(value, type(value))
        except AttributeError:
            return None
    if isinstance(found, property | types.GetSetDescriptorType | staticmethod | classmethod) or callable(found):
        return None
    return found
