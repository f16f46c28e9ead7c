"""A list's items are parts of their own: threads that touch different slots of one table do not conflict.

Recorded by index (``lst[i]``, ``lst[i] = v`` for an index in range, counted from the front), a list's items commute
with each other; whatever changes the length or moves items (``append``, ``insert``, ``pop``, ``del lst[i]``, a
slice, ``sort``) and whatever reads the list whole (``len``, a loop, ``==``) still touches all of it. Thirteen
threads claiming thirteen slots of a 128-slot table were 13! orders of one list; they are now one. Two threads
claiming the same slot still race, and the race is still found.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lab.testing import ExplorationFailed, explore_code

SLOTS = 128
CLAIMERS = 13


class Table:
    """A table of slots, each claimed by whoever finds it empty first."""

    def __init__(self) -> None:
        self.slots: list[str | None] = [None] * SLOTS
        self.won: dict[str, bool] = {}

    def claim(self, slot: int, who: str) -> None:
        if self.slots[slot] is None:  # check, then act: racy when two claim one slot
            self.slots[slot] = who
            self.won[who] = True
        else:
            self.won[who] = False


def _claimer(slot: int, who: str) -> Callable[[Table], None]:
    return lambda table: table.claim(slot, who)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_thirteen_threads_claiming_different_slots_explore_to_pass_in_one_schedule() -> None:
    claims = {f"t{i}": i * 9 for i in range(CLAIMERS - 1)}  # slots 0, 9, ..., 99
    claims[f"t{CLAIMERS - 1}"] = -19  # slot 109, spelt from the end
    found = explore_code(
        setup=lambda lab: Table(),
        actors={who: _claimer(slot, who) for who, slot in claims.items()},
        check=lambda table: {
            "every claim won": all(table.won.get(who) for who in claims),
            "every slot holds its claimer": all(table.slots[slot] == who for who, slot in claims.items()),
        },
        mode="prove",
        strategy="dpor",
    )
    assert found.schedules + found.pruned <= 2, (found.schedules, found.pruned)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("spelling", [(5, 5), (5, 5 - SLOTS)], ids=["same index", "from the front and the end"])
def test_two_threads_claiming_one_slot_still_fail(spelling: tuple[int, int]) -> None:
    first, second = spelling
    with pytest.raises(ExplorationFailed, match="one claim won"):
        explore_code(
            setup=lambda lab: Table(),
            actors={"a": _claimer(first, "a"), "b": _claimer(second, "b")},
            check=lambda table: {"one claim won": sum(table.won.values()) == 1},
            mode="prove",
            strategy="dpor",
        )
