"""The lab's exceptions, split by who is at fault.

Every exception the lab raises on purpose derives from :class:`LabError`, so a command can catch one base class
and turn any of them into a one-line message and a non-zero exit code. The subclasses say *whose* mistake it was:
the caller's arguments, the learner's scenario file, the code under test (a hang), or the evidence on disk.
"""

from __future__ import annotations


class LabError(Exception):
    """Base class of every error the lab raises deliberately."""


class UsageError(LabError):
    """Raised when a caller passes arguments the lab cannot act on (a blank request id, an existing folder)."""


class ArgumentTypeError(UsageError, TypeError):
    """Raised when a caller passes ``None`` or a value of the wrong type where the lab needs a specific one.

    It is both a :class:`UsageError` (commands turn it into one line) and a :class:`TypeError` (what Python code
    expects a wrong type to raise). The message names the parameter, so ``commit(None, ...)`` says "ticket" rather
    than failing deep inside with an ``AttributeError`` on ``None``.
    """

    @classmethod
    def naming(cls, where: str, name: str, expected: str, value: object) -> ArgumentTypeError:
        """The error for parameter ``name`` of ``where``: "commit() needs ticket to be a Ticket, not None"."""
        got = "None" if value is None else type(value).__name__
        return cls(f"{where} needs {name} to be {expected}, not {got}")


class ScenarioError(LabError):
    """Raised when a scenario file is malformed; raised while loading it, never midway through a run."""


class ScheduleError(LabError):
    """Raised when a run cannot go on: every live actor is blocked, or an actor blocked outside the lab."""


class ReplayDivergedError(ScheduleError):
    """Raised when code no longer follows a recorded schedule (another set of runnable actors at some step)."""


class EvidenceError(LabError):
    """Raised when a folder is not an evidence folder at all (missing, a file, or empty)."""


class Unavailable(LabError):
    """Raised by a scenario's setup when something it needs is not on this machine (a database server): the
    scenario is then recorded as SKIPPED, with this message as the reason, never passed and never dropped."""
