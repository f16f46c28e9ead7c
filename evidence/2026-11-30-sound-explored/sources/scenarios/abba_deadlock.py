"""Two actors take two plain threading.Locks in opposite orders: a deadlock, reported with both holders named.

The classic ABBA lock order, on standard locks nobody injected. Each session keeps its history behind its own
`threading.Lock()`; copying one history into the other takes the source's lock, then the target's. `s1_into_s2`
takes s1's lock (`Lock#1`, the first made during setup) and `s2_into_s1` takes s2's (`Lock#2`); a standard
`threading.Barrier(2)` makes both hold their first lock before either asks for its second, so the bad order happens
every time instead of once in a while. Each then waits for the lock the other holds. The lab stops at once and
the report is the lesson: `s1_into_s2` waits for lock 'Lock#2' held by `s2_into_s1`, and the other way round. The
cure is one lock order for everyone (take the locks sorted by session name), not a timeout.
"""

import threading

from lab import Scenario, actor, only


class History:
    """A session's history behind its own standard lock."""

    def __init__(self, name: str, pairs: list[str]) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.pairs = pairs


def copy_into(source: History, target: History, both_hold_one: threading.Barrier) -> None:
    """Append the source's pairs to the target's, holding both locks: source first, then target."""
    with source.lock:
        both_hold_one.wait()  # both actors now hold their first lock
        with target.lock:
            target.pairs = [*target.pairs, *source.pairs]


class AbbaDeadlock(Scenario):
    source = "docs/writing-scenarios.md, Standard primitives (the lab's own lesson on lock order)"
    outcomes = only(
        run="DEADLOCK",
        s1_into_s2="BLOCKED",
        s2_into_s1="BLOCKED",
        s1=["q1", "a1"],
        s2=["q2", "a2"],
        blocked_on={
            "s1_into_s2": "lock 'Lock#2' held by s2_into_s1",
            "s2_into_s1": "lock 'Lock#1' held by s1_into_s2",
        },
    )

    def setup(self) -> None:
        self.s1 = History("s1", ["q1", "a1"])
        self.s2 = History("s2", ["q2", "a2"])
        self.both_hold_one = threading.Barrier(2)

    @actor
    def s1_into_s2(self) -> None:
        copy_into(self.s1, self.s2, self.both_hold_one)

    @actor
    def s2_into_s1(self) -> None:
        copy_into(self.s2, self.s1, self.both_hold_one)

    def observe(self) -> dict[str, object]:
        return {"s1": self.s1.pairs, "s2": self.s2.pairs}
