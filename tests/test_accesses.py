"""What the rewritten modules record: each access path, by object identity, in the step that performs it.

The programs here are written to a temporary module, imported, rewritten by :mod:`lab.engine.record._rewriter` and run
as one actor of a scheduler with recording on; the test reads back the recorded entries.
"""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import ClassVar

import pytest

from lab.engine.core import EVERYTHING, Access, Scheduler, conflict, describe_entry, entries_conflict, writes
from lab.engine.record import InstrumentedModule, Recording, instrument_module, start_recording
from lab.engine.record._snapshot import Snapshot, snapshot, unchanged
from lab.engine.record._syntax import always_bool
from lab.engine.record._walk import Walk

_SOURCE = """
import enum
import heapq
import json

COUNT = 0
SEEN = []


class Box:
    total = 0

    def __init__(self):
        self.value = 0
        self.items = []

    @property
    def doubled(self):
        return self.value * 2


def bump_global():
    global COUNT
    COUNT = COUNT + 1


def append_seen(x):
    SEEN.append(x)


def set_attr(box):
    box.value = 5


def read_then_write(box):
    seen = box.value
    box.value = seen + 1


def subscript(d):
    d["k"] = d.get("k", 0) + 1


def via_vars(box):
    vars(box)["value"] += 1


def class_attribute(box):
    Box.total += 1
    return box.total


def by_name(box):
    setattr(box, "value", getattr(box, "value") + 1)


def counter():
    n = 0

    def inc():
        nonlocal n
        n += 1
        return n

    return inc


def opaque(box):
    return heapq.heapify(box.items)


def serialised(box):
    return json.dumps(box.items)


def same_result(box):
    box.items.append(1)
    box.items += [2]
    return [i * 2 for i in box.items if i], box.doubled, {k: v for k, v in {"a": 1}.items()}, box.items[0:1]


class Shadowed:
    label = "class"


class Seat:
    __slots__ = ("taken",)

    def __init__(self):
        self.taken = False


class Color(enum.Enum):
    RED = 1


def read_label(obj):
    return obj.label


def read_taken(seat):
    return seat.taken


def read_red():
    return Color.RED


def through_wrappers(d):
    size = d.__len__
    put = d.__setitem__
    size()
    put("k", 1)


def loop_sum(items):
    total = 0
    for x in items:
        total += x
    return total


def keys_then_len(d):
    keys = d.keys()
    return len(keys)


def lazy_results(box):
    pairs = list(enumerate(x for x in box.items))
    kept = [y for ys in [box.items, box.items] for y in filter(None, ys)]
    return pairs, kept, list(zip(box.items, map(str, box.items))), sorted(reversed(box.items))


def loop_over(value):
    for _ in value:
        pass
"""


def instrumented_program(
    tmp_path_factory: pytest.TempPathFactory, name: str, source: str
) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    """Import ``source`` as the module ``name`` from a fresh folder, with its instrumented twin, for one test module
    (its fixture yields from this); the module is forgotten afterwards."""
    folder = tmp_path_factory.mktemp(name)
    (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(name)
        yield module, instrument_module(name)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    yield from instrumented_program(tmp_path_factory, "accesses_program", _SOURCE)


def _record(
    program: tuple[ModuleType, InstrumentedModule], body: Callable[[], object], kind: type[Recording] = Recording
) -> list[Access]:
    """What ``body``, run as the one actor of a recorded run of ``program`` (by a ``kind`` of recording), touched."""
    module, instrumented = program
    scheduler = Scheduler(watchdog_seconds=5)
    scheduler.add_actor("a", body)
    recording = kind(scheduler, every_access_schedules=False, instrumented=set(instrumented.codes))
    recording.name_roots({}, modules=(module,))
    instrumented.install()
    start_recording(recording)
    try:
        run = scheduler.run()
    finally:
        start_recording(None)
        instrumented.uninstall()
    assert not run.errors, run.errors
    return list(run.accesses)


def _entries(accesses: list[Access]) -> set[tuple[str, str, str]]:
    return {access.entry for access in accesses}


@pytest.mark.timeout(30)
class TestWhatIsRecorded:
    def test_a_module_global(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        found = _entries(_record(program, module.bump_global))
        assert {("obj:module accesses_program", "COUNT", "r"), ("obj:module accesses_program", "COUNT", "w")} <= found

    def test_a_global_list_is_named_by_its_path(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        found = _entries(_record(program, lambda: module.append_seen(1)))
        assert ("obj:accesses_program.SEEN", "*", "w") in found

    def test_a_read_and_a_write_in_order_with_their_lines(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        box = module.Box()
        accesses = [a for a in _record(program, lambda: module.read_then_write(box)) if a.entry[1] == "value"]
        assert [a.entry[2] for a in accesses] == ["r", "w"]
        assert accesses[0].where[1] + 1 == accesses[1].where[1]  # two lines, each charged where it happened
        assert accesses[0].where[0].endswith("accesses_program.py")

    def test_one_key_of_a_dict(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        shared: dict[str, int] = {}
        found = _entries(_record(program, lambda: module.subscript(shared)))
        things = {thing for thing, key, mode in found if key == "['k']" and mode == "w"}
        assert len(things) == 1

    def test_vars_is_the_same_state_as_the_attribute(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        box = module.Box()

        def both() -> None:
            module.set_attr(box)
            module.via_vars(box)

        accesses = _record(program, both)
        writes_of_value = {a.entry[0] for a in accesses if a.entry[1] == "value" and a.entry[2] == "w"}
        assert len(writes_of_value) == 1, writes_of_value  # one object, whichever spelling
        assert box.value == 6

    def test_a_class_attribute_read_through_an_instance(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        box = module.Box()
        found = _entries(_record(program, lambda: module.class_attribute(box)))
        assert ("obj:class accesses_program.Box", "total", "w") in found
        assert ("obj:class accesses_program.Box", "total", "r") in found

    def test_a_class_value_is_read_only_where_no_instance_attribute_shadows_it(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        """``obj.label`` reads the class's ``label`` only while the instance has none of its own: a class store
        then races with the read; once the instance holds its own, the class's value is not what is read."""
        module, _ = program
        obj = module.Shadowed()
        from_class = _entries(_record(program, lambda: module.read_label(obj)))
        assert ("obj:class accesses_program.Shadowed", "label", "r") in from_class
        obj.label = "own"
        own = _entries(_record(program, lambda: module.read_label(obj)))
        assert {(key, mode) for _thing, key, mode in own} == {("label", "r")}
        assert not any(thing.startswith("obj:class") for thing, _key, _mode in own)

    def test_a_slot_is_the_instance_state(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        """A slot's value lives in the instance; the class holds only its descriptor, which nothing rebinds."""
        module, _ = program
        seat = module.Seat()
        found = _entries(_record(program, lambda: module.read_taken(seat)))
        assert [(key, mode) for thing, key, mode in found if not thing.startswith("obj:class")] == [("taken", "r")]
        assert not any(thing == "obj:class accesses_program.Seat" for thing, _key, _mode in found)

    def test_an_enum_member_is_no_state(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        """An enum refuses to rebind or delete its members: reading one touches nothing shared."""
        module, _ = program
        found = _entries(_record(program, module.read_red))
        assert not any(key == "RED" for _thing, key, _mode in found), found

    def test_getattr_and_setattr_by_name(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        box = module.Box()
        found = _entries(_record(program, lambda: module.by_name(box)))
        assert {mode for _thing, key, mode in found if key == "value"} == {"r", "w"}

    def test_a_closure_variable(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, instrumented = program
        instrumented.install()
        try:
            inc = module.counter()
        finally:
            instrumented.uninstall()
        found = _entries(_record(program, inc))
        assert {mode for thing, _key, mode in found if thing.startswith("obj:cell ") and "counter" in thing} == {
            "r",
            "w",
        }

    def test_code_the_lab_cannot_see_writes_what_it_is_given(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        box = module.Box()
        found = _entries(_record(program, lambda: module.opaque(box)))
        assert any(key == "*" and mode == "w" and "items" in thing for thing, key, mode in found), found

    def test_json_dumps_reads_what_it_is_given_as_its_table_entry_says(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        """``json.dumps`` is in the table of functions that only read (deeply): no write of what it is handed."""
        module, _ = program
        box = module.Box()
        found = _entries(_record(program, lambda: module.serialised(box)))
        assert any(key == "*" and mode == "r" and "items" in thing for thing, key, mode in found), found
        assert not any(mode == "w" for _thing, _key, mode in found), found


@pytest.mark.timeout(30)
class TestLazyReads:
    def test_a_loop_reads_its_list_at_every_iteration_and_at_its_end(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        items = [1, 2, 3]
        accesses = _record(program, lambda: module.loop_sum(items))
        reads = [a for a in accesses if a.entry[2] == "r" and a.entry[1] == "*" and "list" in a.entry[0]]
        assert len(reads) == 4, accesses  # three items, then the read that ends the loop

    def test_a_dict_view_reads_its_dict_where_it_is_used(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        d = {"x": 1}
        accesses = _record(program, lambda: module.keys_then_len(d))
        made = accesses[0]  # d.keys(): a read of d
        lines = {a.where[1] for a in accesses if a.entry == made.entry}
        assert len(lines) == 2, accesses  # where the view is made, and where len() uses it

    def test_lazy_results_are_what_the_original_computes(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        expected = module.lazy_results(module.Box())
        results: list[object] = []
        _record(program, lambda: results.append(module.lazy_results(module.Box())))
        assert results == [expected]

    def test_a_loop_over_what_is_not_iterable_raises_what_python_raises(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        with pytest.raises(TypeError) as original:
            module.loop_over(3)
        errors: list[BaseException] = []

        def body() -> None:
            try:
                module.loop_over(3)
            except TypeError as error:
                errors.append(error)

        _record(program, body)
        assert [str(e) for e in errors] == [str(original.value)]


@pytest.mark.timeout(30)
def test_a_slot_wrapper_is_classified_by_its_name(program: tuple[ModuleType, InstrumentedModule]) -> None:
    """``d.__setitem__`` called through its bound wrapper writes ``d``, also after ``d.__len__`` (a read) was called
    the same way: what a call does is cached per wrapper name, not per wrapper type."""
    module, _ = program
    found = _entries(_record(program, lambda: module.through_wrappers({})))
    whole = [(thing, mode) for thing, key, mode in found if key == "*"]
    assert {thing for thing, mode in whole if mode == "r"} & {thing for thing, mode in whole if mode == "w"}, found


@pytest.mark.timeout(30)
def test_the_rewritten_code_computes_what_the_original_does(program: tuple[ModuleType, InstrumentedModule]) -> None:
    module, instrumented = program
    expected = module.same_result(module.Box())
    results: list[object] = []
    _record(program, lambda: results.append(module.same_result(module.Box())))
    instrumented.install()
    try:
        unrecorded = module.same_result(module.Box())  # rewritten, outside any recording: a plain pass-through
    finally:
        instrumented.uninstall()
    assert results == [expected] and unrecorded == expected


class TestConflict:
    def test_keys_overlap_when_equal_or_either_is_all(self) -> None:
        assert entries_conflict(("obj:a", "x", "w"), ("obj:a", "x", "r"))
        assert entries_conflict(("obj:a", "*", "w"), ("obj:a", "x", "r"))
        assert not entries_conflict(("obj:a", "x", "w"), ("obj:a", "y", "w"))
        assert not entries_conflict(("obj:a", "x", "r"), ("obj:a", "x", "r"))
        assert not entries_conflict(("obj:a", "x", "w"), ("obj:b", "x", "w"))

    def test_everything_conflicts_with_anything_but_nothing(self) -> None:
        assert conflict(EVERYTHING, frozenset({("obj:a", "x", "r")}))
        assert not conflict(EVERYTHING, frozenset())
        assert conflict(writes("lock", "l"), writes("lock", "l"))
        assert not conflict(writes("probe", "s1"), writes("probe", "s1"))  # announcements only

    def test_entries_read_as_people_say_them(self) -> None:
        assert describe_entry(("obj:self.session", "_version", "w")) == "write self.session._version"
        assert describe_entry(("obj:self.tickets", "['slow']", "r")) == "read self.tickets['slow']"
        assert describe_entry(("obj:self.items", "*", "w")) == "write self.items (all of it)"


@pytest.mark.parametrize(
    ("expression", "left_out"),
    [
        ("not x", True),
        ("a is None", True),
        ("a is not b is not c", True),
        ("k in d", True),
        ("k not in d", True),
        ("a is None or (k in d and not x)", True),
        ("a == b", False),  # a rich comparison may return any object, which is then read whole
        ("a < b", False),
        ("a and b", False),  # ``and`` returns one of its operands
        ("a is None or b", False),
        ("-x", False),
    ],
)
def test_only_values_that_are_always_a_new_bool_skip_the_whole_read(expression: str, left_out: bool) -> None:
    """``not``, ``is`` and ``in`` give ``True`` or ``False`` whatever their operands: reading such a value whole
    touches nothing, so the rewriting calls no runtime for it; anything that may be another object is still read."""
    node = ast.parse(expression, mode="eval").body
    assert always_bool(node) is left_out


class TestTheModulesWalkIsReusedOnlyWhileNothingChanged:
    """The walk of the modules' namespaces is kept across runs (module state outlives them), so it must notice any
    change that would make a fresh walk find other objects: else an object set up afresh is first named during a
    run, by whichever access meets it first, and names that depend on the schedule defeat the reduction."""

    @staticmethod
    def _walked(*roots: object) -> Snapshot:
        walk = Walk(frozenset({__name__}), snapshot=True)
        walk.run([(f"root{i}", root) for i, root in enumerate(roots)])
        return snapshot(walk.parts)

    def test_an_untouched_walk_is_still_valid(self) -> None:
        class Shelf:
            items: ClassVar[list[str]] = []

        registry = {"a": [1], "shelf": Shelf}
        assert unchanged(self._walked(registry))

    @pytest.mark.parametrize(
        "change",
        ["dict value", "class attribute", "closure cell", "instance attribute", "list", "defaults", "keywords"],
    )
    def test_any_change_of_what_the_walk_went_through_is_seen(self, change: str) -> None:
        class Shelf:
            items: ClassVar[list[str]] = []

        holder = Shelf()
        holder.__dict__["own"] = []
        cell_value: list[int] = []

        def reader() -> list[int]:
            return cell_value

        def plain(items: list[int] | None = None) -> None:
            del items

        registry: dict[str, object] = {
            "a": [1],
            "shelf": Shelf,
            "reader": reader,
            "holder": holder,
            "list": [[]],
            "plain": plain,
        }
        parts = self._walked(registry)
        if change == "dict value":
            registry["a"] = [1]
        elif change == "class attribute":
            Shelf.items = []
        elif change == "closure cell":
            cell_value = []  # rebinds the cell ``reader`` closes over
        elif change == "instance attribute":
            holder.__dict__["own"] = []
        elif change == "defaults":
            plain.__defaults__ = ([],)
        elif change == "keywords":
            plain.__kwdefaults__ = {"more": []}
        else:
            registry["list"][0] = []  # type: ignore[index]
        assert not unchanged(parts), change
