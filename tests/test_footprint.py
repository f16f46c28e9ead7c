"""Footprints: which steps may not commute. The explorer's reduction is only as sound as this relation."""

from __future__ import annotations

import itertools

from lab.engine.core import (
    ANY_KEY,
    EVERYTHING,
    NOTHING,
    Entry,
    Footprint,
    conflict,
    describe_entry,
    entries_conflict,
    writes,
)

_READ_X = ("obj:s1", "x", "r")
_WRITE_X = ("obj:s1", "x", "w")
_READ_Y = ("obj:s1", "y", "r")
_WRITE_Y = ("obj:s1", "y", "w")
_WRITE_ALL = ("obj:s1", ANY_KEY, "w")
_READ_ALL = ("obj:s1", ANY_KEY, "r")
_OTHER_WRITE_X = ("obj:s2", "x", "w")
_PROBE = ("probe", "s1", "w")
_EVERYTHING_ENTRY = next(iter(EVERYTHING))

# Every entry shape the relation distinguishes: key equal or not, either key ANY_KEY, read or write, another thing, a
# probe, and the "anything" entry of a step the lab could not observe.
_POOL: tuple[Entry, ...] = (
    _READ_X,
    _WRITE_X,
    _READ_Y,
    _WRITE_Y,
    _WRITE_ALL,
    _READ_ALL,
    _OTHER_WRITE_X,
    _PROBE,
    _EVERYTHING_ENTRY,
)


def _footprint(*entries: Entry) -> Footprint:
    return frozenset(entries)


class TestEntriesConflict:
    def test_a_write_conflicts_with_a_read_of_the_same_key(self) -> None:
        """Reading a key another step writes depends on their order."""
        assert entries_conflict(_WRITE_X, _READ_X)
        assert entries_conflict(_READ_X, _WRITE_X)

    def test_two_writes_of_the_same_key_conflict(self) -> None:
        """The last writer wins, so two writes of one key do not commute."""
        assert entries_conflict(_WRITE_X, _WRITE_X)

    def test_two_reads_never_conflict(self) -> None:
        """Reads commute, even of the same key or of all of a thing."""
        assert not entries_conflict(_READ_X, _READ_X)
        assert not entries_conflict(_READ_ALL, _READ_X)
        assert not entries_conflict(_READ_ALL, _READ_ALL)

    def test_different_keys_of_one_thing_do_not_conflict(self) -> None:
        """Writing ``s1.x`` and ``s1.y`` commute."""
        assert not entries_conflict(_WRITE_X, _WRITE_Y)
        assert not entries_conflict(_WRITE_X, _READ_Y)

    def test_the_any_key_overlaps_every_key(self) -> None:
        """An access to all of a thing (``*``) overlaps each of its keys, from either side."""
        assert entries_conflict(_WRITE_ALL, _READ_X)
        assert entries_conflict(_READ_X, _WRITE_ALL)
        assert entries_conflict(_READ_ALL, _WRITE_Y)
        assert entries_conflict(_WRITE_Y, _READ_ALL)

    def test_different_things_do_not_conflict(self) -> None:
        """The same key of two objects is two places."""
        assert not entries_conflict(_WRITE_X, _OTHER_WRITE_X)

    def test_probe_announcements_conflict_with_nothing_by_themselves(self) -> None:
        """A probe is a scheduling point; the accesses around it carry the truth."""
        assert not entries_conflict(_PROBE, _PROBE)
        assert not entries_conflict(_PROBE, _WRITE_X)

    def test_the_everything_entry_conflicts_with_any_entry(self) -> None:
        """A step the lab could not observe may have touched anything, a probe included."""
        for entry in _POOL:
            assert entries_conflict(_EVERYTHING_ENTRY, entry), entry
            assert entries_conflict(entry, _EVERYTHING_ENTRY), entry


class TestConflict:
    def test_nothing_conflicts_with_nothing_at_all(self) -> None:
        """An empty footprint commutes with every step, even one that may touch anything."""
        assert not conflict(NOTHING, EVERYTHING)
        assert not conflict(EVERYTHING, NOTHING)
        assert not conflict(NOTHING, NOTHING)

    def test_everything_conflicts_with_every_non_empty_footprint(self) -> None:
        """``EVERYTHING`` is what an unobserved step is assumed to touch."""
        for entry in _POOL:
            assert conflict(EVERYTHING, _footprint(entry)), entry
            assert conflict(_footprint(entry), EVERYTHING), entry

    def test_one_conflicting_pair_is_enough(self) -> None:
        """Footprints conflict when any entry of one conflicts with any entry of the other."""
        assert conflict(_footprint(_READ_Y, _OTHER_WRITE_X, _READ_X), _footprint(_WRITE_X))

    def test_read_read_footprints_commute(self) -> None:
        """Two steps that only read commute, however much they share."""
        reads = _footprint(_READ_X, _READ_Y, _READ_ALL)
        assert not conflict(reads, reads)

    def test_a_probe_shared_by_both_steps_is_no_conflict(self) -> None:
        """Two steps at the same probe, touching different keys, commute."""
        assert not conflict(_footprint(_PROBE, _WRITE_X), _footprint(_PROBE, _WRITE_Y))

    def test_a_lab_object_written_by_both_conflicts(self) -> None:
        """Two operations on one lab lock do not commute; on two locks they do."""
        assert conflict(writes("lock", "s1.lock"), writes("lock", "s1.lock"))
        assert not conflict(writes("lock", "s1.lock"), writes("lock", "s2.lock"))

    def test_agrees_with_the_pairwise_definition_on_every_small_footprint(self) -> None:
        """The indexed check equals "some pair of entries conflicts", on every pair of footprints of 0-2 entries."""
        small = [frozenset(c) for size in range(3) for c in itertools.combinations(_POOL, size)]
        for a, b in itertools.product(small, repeat=2):
            expected = any(entries_conflict(x, y) for x in a for y in b)
            assert conflict(a, b) == expected, (sorted(a), sorted(b))


class TestWritesAndDescriptions:
    def test_writes_names_one_lab_object(self) -> None:
        """``writes(kind, name)`` is the footprint of an operation on one lab primitive."""
        assert writes("latch", "go") == frozenset({("latch", "go", "w")})

    def test_descriptions_read_like_what_happened(self) -> None:
        """Attributes, subscripts, whole objects, lab objects and the unobserved step each read plainly."""
        assert describe_entry(("obj:s1", "_version", "w")) == "write s1._version"
        assert describe_entry(("obj:self.tickets", "['slow']", "r")) == "read self.tickets['slow']"
        assert describe_entry(("obj:history", ANY_KEY, "w")) == "write history (all of it)"
        assert describe_entry(("lock", "s1.lock", "w")) == "write lock s1.lock"
        assert describe_entry(_EVERYTHING_ENTRY) == "anything (a step the lab could not observe)"
