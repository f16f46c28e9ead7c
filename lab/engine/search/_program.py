"""The explorer's contract with its callers: one object says what to explore, another what each run came to.

Hypothesis hands its engine one test function and reads every run's result off one data object; a search here is
handed one :class:`Program` -- the actors, the function that makes one fresh run under a policy, and what the
caller's checks beside the outcome want of each run -- and every run comes back as one :class:`Ran`. Every search
strategy (:mod:`lab.engine.search._strategies`), the minimiser and the parallel workers run the program through the
same ``run``, so they all explore the same program the same way.

The search never looks inside a payload (``object``: the caller's grading of the run, kept with the best run per
outcome) nor inside a digest's parts (``Hashable``: a worker process sends each distinct part once); it only carries
them, in the search's order, from where a run was made to the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from lab.engine.core._policies import Policy
from lab.engine.core._run import RunResult
from lab.errors import UsageError

Digest = Sequence[Hashable]
"""What one run adds to the caller's checks beside its outcome (the atomicity check's parts, say), worked out by
``Program.digest`` in the process that made the run and handed to ``Program.adopt`` in the one that searches."""


@dataclass(frozen=True)
class Ran:
    """One run of the program, as the caller made of it: the engine's run (its decisions, footprints, status), the
    outcome ``key`` (equal keys, same outcome) and the ``payload`` kept with the best run of each outcome."""

    run: RunResult
    key: str
    payload: object = None


RunOnce = Callable[[Policy], Ran]
"""Build a fresh world, run it under the policy, and say what the run came to."""


@dataclass(frozen=True)
class Program:
    """What a search explores.

    ``run`` makes one fresh run under a policy. ``digest`` (optional) works out, where a run was made, what it adds
    to the caller's checks; ``adopt`` takes each digest in the search's order. Either both or neither: a digest
    nobody adopts would be work for nothing, and ``adopt`` has nothing to take without one.
    """

    actors: tuple[str, ...]
    run: RunOnce
    digest: Callable[[RunResult], Digest] | None = None
    adopt: Callable[[Digest], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.actors, tuple) or not all(isinstance(name, str) for name in self.actors):
            raise UsageError(f"a program's actors are a tuple of names (got {self.actors!r})")
        if len(set(self.actors)) != len(self.actors):
            raise UsageError(f"a program's actors have distinct names (got {', '.join(self.actors)})")
        if (self.digest is None) != (self.adopt is None):
            raise UsageError("a program has both a digest and an adopt, or neither")

    def observe(self, run: RunResult) -> None:
        """Digest ``run`` and adopt the digest here (a run made in this process, by any strategy)."""
        if self.digest is not None and self.adopt is not None:
            self.adopt(self.digest(run))
