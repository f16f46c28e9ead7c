"""How finely the explorer may interleave actors: the one vocabulary every layer uses for it."""

from __future__ import annotations

from enum import StrEnum

from lab.errors import UsageError


class Granularity(StrEnum):
    """Where an actor may be preempted; each is a superset of the points of the one before.

    A ``StrEnum``, so a value read from a record or a command line (``"line"``) compares and serialises as itself.
    """

    PROBE = "probe"
    """At the lab's own operations: probe points, latches, locks, transports. Cheap; misses races between them."""
    LINE = "line"
    """Also before every line of the modules under test."""
    INSTRUCTION = "instruction"
    """Also before every bytecode instruction of the modules under test: splits a line such as ``x += 1``."""

    @classmethod
    def parse(cls, text: str) -> Granularity:
        """The granularity named ``text``; a :class:`UsageError` naming the choices otherwise."""
        try:
            return cls(text)
        except ValueError:
            choices = ", ".join(member.value for member in cls)
            raise UsageError(f"granularity is one of {choices}, not {text!r}") from None
