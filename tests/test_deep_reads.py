"""Where Python reads deeply, the recording does too: ``==``, ``<`` and ``in`` compare elements, an f-string or
``repr`` formats them, ``sorted`` compares them, and a dataclass's generated ``__eq__`` compares its fields. A
value tested for truth, iterated or compared with ``is`` is read at the top only, as Python reads it.

The programs are written to a temporary module, rewritten and run as one actor of a recorded run (as in
``tests/test_accesses.py``); the tests look up the labels of the very objects they handed in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from lab.engine.core import EVERYTHING, Scheduler
from lab.engine.record import InstrumentedModule, Recording, start_recording
from tests.test_accesses import instrumented_program

_SOURCE = """
from dataclasses import dataclass, field


@dataclass
class Cart:
    items: list = field(default_factory=list)


class Plain:
    def __init__(self):
        self.items = []


def equal(a, b):
    return a == b


def ordered(a, b):
    return a < b


def identical(a, b):
    return a is b


def truth(a):
    if a:
        return 1
    return 0


def member(x, xs):
    return x in xs


def text(a):
    return f"{a}"


def percent(a):
    return "%s" % (a,)


def shown(a):
    return repr(a)


def position(xs, x):
    return xs.index(x)


def formatted(a):
    return "{}".format(a)


def iterate(a):
    return [x for x in a]


def items_text(d):
    return f"{d.items()}"
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    yield from instrumented_program(tmp_path_factory, "deep_reads_program", _SOURCE)


def _record(
    program: tuple[ModuleType, InstrumentedModule], body: Callable[[], object], *watched: object
) -> tuple[list[bool], bool]:
    """Run ``body`` as the one actor of a recorded run: for each watched object, whether it was read whole; and
    whether the run recorded a read of everything (a deep read past its bounds)."""
    module, instrumented = program
    scheduler = Scheduler(watchdog_seconds=5)
    scheduler.add_actor("a", body)
    recording = Recording(scheduler, every_access_schedules=False, instrumented=set(instrumented.codes))
    recording.name_roots({f"w{i}": obj for i, obj in enumerate(watched)}, modules=(module,))
    instrumented.install()
    start_recording(recording)
    try:
        run = scheduler.run()
    finally:
        start_recording(None)
        instrumented.uninstall()
    assert not run.errors, run.errors
    entries = {access.entry for access in run.accesses}
    things = recording._things
    return [(things.get(id(obj)), "*", "r") in entries for obj in watched], entries >= EVERYTHING


def _reads(program: tuple[ModuleType, InstrumentedModule], body: Callable[[], object], *watched: object) -> list[bool]:
    return _record(program, body, *watched)[0]


@pytest.mark.timeout(30)
class TestDeepWherePythonReadsDeeply:
    def test_comparing_lists_reads_the_lists_inside(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        inner: list[int] = []
        assert _reads(program, lambda: module.equal([inner], [[]]), inner) == [True]
        assert _reads(program, lambda: module.ordered([inner], [[1]]), inner) == [True]

    def test_in_reads_the_elements_and_the_value_looked_for(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        inner, needle = [1], [1]
        assert _reads(program, lambda: module.member(needle, [inner]), inner, needle) == [True, True]

    def test_a_dict_is_read_with_its_values(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        inner: list[str] = []
        assert _reads(program, lambda: module.text({"items": inner}), inner) == [True]
        assert _reads(program, lambda: module.percent({"items": inner}), inner) == [True]
        assert _reads(program, lambda: module.shown({"items": inner}), inner) == [True]
        assert _reads(program, lambda: module.formatted({"items": inner}), inner) == [True]

    def test_a_tuple_is_gone_through(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        inner: list[int] = []
        assert _reads(program, lambda: module.equal(("a", inner), ("a", [])), inner) == [True]

    def test_a_list_method_that_compares_reads_the_elements(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        inner = [2]
        assert _reads(program, lambda: module.position([inner, [1]], [1]), inner) == [True]

    def test_a_dict_view_reads_its_dict_and_what_it_holds(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        inner: list[int] = []
        table = {"k": inner}
        assert _reads(program, lambda: module.items_text(table), table, inner) == [True, True]

    def test_a_dataclass_is_read_with_its_fields(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        """Its ``__eq__`` is generated from ``<string>``: never rewritten, it compares every field unseen."""
        module, _ = program
        left, right = module.Cart(), module.Cart()
        assert _reads(program, lambda: module.equal(left, right), left.items, right.items) == [True, True]

    def test_an_object_compared_by_identity_is_read_at_the_top(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        left, right = module.Plain(), module.Plain()
        assert _reads(program, lambda: module.equal(left, right), left, left.items) == [True, False]

    def test_the_bounds_give_everything_never_less(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        deep: list[object] = []
        for _ in range(10):
            deep = [deep]
        assert _record(program, lambda: module.equal(deep, []))[1]
        wide: list[list[int]] = [[] for _ in range(25_000)]
        assert _record(program, lambda: module.equal(wide, []))[1]
        assert not _record(program, lambda: module.equal([[1], [2]], []))[1]


@pytest.mark.timeout(30)
class TestShallowWherePythonReadsTheTop:
    def test_is_truth_and_iteration(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        module, _ = program
        inner: list[int] = []
        outer = [inner]
        assert _reads(program, lambda: module.identical(outer, []), outer, inner) == [True, False]
        assert _reads(program, lambda: module.truth(outer), outer, inner) == [True, False]
        assert _reads(program, lambda: module.iterate(outer), outer, inner) == [True, False]
