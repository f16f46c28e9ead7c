"""What an audit finds, as plain data: problems, drift, the re-execution summary, and the report that holds them.

Problems are values, not exceptions, so a verifier can collect every one of them and report them together; only
"this is not an evidence folder at all" is raised (:class:`lab.errors.EvidenceError`), because then nothing else can
be checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MACHINERY = (
    "lab/engine/",
    "lab/hooks.py",
    "lab/scenarios/",
    "lab/campaign/",
    "lab/evidence/",
    "lab/cli/",
    "run.py",
    "audit.py",
)
"""The lab's own machinery, by path prefix: the engine and the hooks that feed it, the scenario runner, the
campaign that decides a run's status, and the evidence code with the commands. Archived machinery that differs
from the auditing checkout fails an audit unless the drift is accepted."""


def is_machinery(path: str) -> bool:
    """True for a path (relative, with ``/``) of the lab's machinery."""
    return path.startswith(MACHINERY)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an evidence folder: the file (relative to the folder) and why, in one line."""

    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"

    def to_json(self) -> dict[str, str]:
        """The problem as a JSON object."""
        return {"file": self.file, "reason": self.reason}


class RerunStatus(StrEnum):
    """How re-executing the archived sources went."""

    MATCHED = "MATCHED"
    """Every scenario ran again to a byte-identical trace, the same requests, outcomes and verdict."""
    DIFFERED = "DIFFERED"
    """It ran, and at least one scenario came out differently (each difference is a problem)."""
    FAILED = "FAILED"
    """It could not run to the end: a timeout, a crash, or no sources to run."""
    SKIPPED = "SKIPPED"
    """Not attempted: ``--no-rerun``, or the archived sources failed verification and were not executed."""


@dataclass(frozen=True, slots=True)
class Rerun:
    """The re-execution's summary; its individual differences are problems of the report."""

    status: RerunStatus
    note: str
    scenarios: int = 0
    seconds: float = 0.0
    explorations: int = 0
    code: str = ""
    """Whose code ran: "the auditing checkout" or "the archived sources" (``--execute-archive``); "" when none did."""

    def to_json(self) -> dict[str, object]:
        """The summary as a JSON object."""
        return {
            "code": self.code,
            "status": str(self.status),
            "note": self.note,
            "scenarios": self.scenarios,
            "explorations": self.explorations,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True, slots=True)
class Drift:
    """How the archived sources differ from a checkout: reported to inform, never a failure by itself."""

    checkout: str
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def files(self) -> int:
        """How many files differ in any way."""
        return len(self.changed) + len(self.added) + len(self.removed)

    @property
    def machinery(self) -> tuple[str, ...]:
        """The differing files that are the lab's machinery (:data:`MACHINERY`): engine, runner, evidence code."""
        return tuple(sorted(p for p in (*self.changed, *self.added, *self.removed) if is_machinery(p)))

    @property
    def runnable(self) -> tuple[str, ...]:
        """The differing files a re-execution would run: archived under ``lab/`` or ``scenarios/`` and changed or
        missing from the checkout, or a module the checkout's ``lab/`` has and the archive lacks (it could be
        imported)."""
        return tuple(
            sorted(
                {p for p in (*self.changed, *self.removed) if p.startswith(("lab/", "scenarios/"))}
                | {p for p in self.added if p.startswith("lab/")}
            )
        )

    def to_json(self) -> dict[str, object]:
        """The drift as a JSON object."""
        return {
            "checkout": self.checkout,
            "changed": list(self.changed),
            "added": list(self.added),
            "removed": list(self.removed),
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Everything one audit found. ``ok`` is true only when there is no problem at all."""

    folder: str
    mode: str
    problems: tuple[Problem, ...]
    rerun: Rerun
    drift: Drift | None
    files_verified: int
    scenarios: int
    explorations: int = 0
    accepted_drift: tuple[str, ...] = ()
    """Machinery files that differ from the checkout, accepted with ``--accept-drift`` (else each is a problem)."""
    signature: str = ""
    """What was found of ``SHA256SUMS.sig``: who signed it (verified), "present, not verified", or "" (none)."""
    run_status: str | None = None
    """``run.json``'s own status (PASS or FAIL) when it could be read: a folder can verify completely and be
    faithful evidence of a run that failed."""
    unfinished: bool = False
    """The folder has no ``SHA256SUMS``: the run that wrote it did not finish (it was interrupted, or failed)."""

    @property
    def ok(self) -> bool:
        """True when the folder verified completely."""
        return not self.problems

    def to_json(self) -> dict[str, object]:
        """The report as a JSON object (the content of ``audit.json`` and of ``audit.py --json``)."""
        return {
            "folder": self.folder,
            "mode": self.mode,
            "ok": self.ok,
            "problems": [problem.to_json() for problem in self.problems],
            "rerun": self.rerun.to_json(),
            "drift": self.drift.to_json() if self.drift is not None else None,
            "files_verified": self.files_verified,
            "scenarios": self.scenarios,
            "explorations": self.explorations,
            "accepted_drift": list(self.accepted_drift),
            "run_status": self.run_status,
            "signature": self.signature,
            "unfinished": self.unfinished,
        }
