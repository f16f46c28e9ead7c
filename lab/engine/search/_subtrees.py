"""Work items of a parallel exploration: a part of the search tree, named by the choices that lead to it.

A :class:`Subtree` is everything one process needs to explore the part of the search below one branch exactly as
the one-process search would: the choices that lead to the decision (a schedule string, the lab's own format, plus
how many decisions that is, single-choice ones included), the branch to take there with the plan of what follows it
(a wakeup tree), and which actors are asleep at each decision of the way (with what their next step touches). It
serialises to one line of text, so that it can be handed to any process, on this machine or another one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lab.engine.core._footprint import Footprint
from lab.errors import UsageError


@dataclass
class Branch:
    """One planned step in a wakeup tree: an actor, what its step touched when the plan was made, what follows."""

    actor: str
    footprint: Footprint
    children: list[Branch] = field(default_factory=list)


@dataclass(frozen=True)
class Subtree:
    """The part of the search below ``branch``, taken at decision ``depth`` after the choices in ``prefix``.

    ``sleep`` maps a decision (by its index, at most ``depth``) to the actors asleep there, each with its next
    step's footprint; decisions not named have none.
    """

    prefix: str
    depth: int
    branch: Branch
    sleep: dict[int, dict[str, Footprint]] = field(default_factory=dict)

    def to_text(self) -> str:
        """One line of JSON: what a worker on another machine needs (with the same scenario and settings)."""
        return json.dumps(
            {
                "prefix": self.prefix,
                "depth": self.depth,
                "branch": _branch_json(self.branch),
                "sleep": {
                    str(k): {a: _footprint_json(fp) for a, fp in sorted(v.items())} for k, v in self.sleep.items()
                },
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_text(cls, text: str) -> Subtree:
        """The subtree ``to_text`` wrote; a malformed line (it came from a task queue) is a :class:`UsageError`."""
        try:
            data = json.loads(text)
            sleep = {int(k): {a: _footprint(fp) for a, fp in v.items()} for k, v in data["sleep"].items()}
            return cls(str(data["prefix"]), int(data["depth"]), _branch(data["branch"]), sleep)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            raise UsageError(f"not a subtree: {error}") from None


def _footprint_json(footprint: Footprint) -> list[list[str]]:
    return [list(entry) for entry in sorted(footprint)]


def _footprint(data: Any) -> Footprint:
    return frozenset((str(thing), str(key), str(mode)) for thing, key, mode in data)


def _branch_json(branch: Branch) -> list[Any]:
    return [branch.actor, _footprint_json(branch.footprint), [_branch_json(child) for child in branch.children]]


def _branch(data: Any) -> Branch:
    actor, footprint, children = data
    return Branch(str(actor), _footprint(footprint), [_branch(child) for child in children])
