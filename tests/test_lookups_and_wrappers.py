"""Class attribute lookups read every class they search, and functions reached only through a wrapper are rewritten.

``Sub.x`` (and ``obj.x``, ``super().x``, ``getattr(obj, "x")``) takes its value from the first class of an MRO that
defines ``x``: a store to that class, or to any class searched before it, changes what the read finds, so the read
records each of them. A function that a module's namespace reaches only through a wrapper (a decorator's closure,
``cached_property``, ``partial``...) still runs when the wrapper is called; its body is rewritten like any other.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from lab.engine.record import InstrumentedModule, instrument_module
from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from tests.test_accesses import _entries, _record

_SOURCE = """
import functools
import json


class Base:
    limit = 1


class Sub(Base):
    pass


class Child(Base):
    limit = 100

    def base_limit(self):
        return super().limit


def read_sub_limit():
    return Sub.limit


def read_limit(obj):
    return obj.limit


def read_by_name(obj):
    return getattr(obj, "limit"), hasattr(obj, "missing"), getattr(obj, "missing", None)


def logged(method):
    def call(*args):
        return method(*args)

    return call


def wrapped(method):
    @functools.wraps(method)
    def call(*args):
        return method(*args)

    return call


def double(x, factor):
    return x * factor


class Tool:
    def __init__(self):
        self.items = [1]

    @logged
    def total(self):
        return sum(self.items)

    @staticmethod
    @logged
    def static_total(items):
        return sum(items)

    @functools.cached_property
    def cached_total(self):
        return sum(self.items)

    @wrapped
    def wrapped_total(self):
        return sum(self.items)

    def _half(self, by):
        return len(self.items) // by

    halved = functools.partialmethod(_half, 2)


class Caller:
    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)


@Caller
def called(x):
    return x + 1


twice = functools.partial(double, factor=2)
dumps = logged(json.dumps)
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    folder = tmp_path_factory.mktemp("lookups")
    (folder / "lookups_program.py").write_text(textwrap.dedent(_SOURCE), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("lookups_program")
        yield module, instrument_module("lookups_program")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("lookups_program", None)


_BASE, _SUB, _CHILD = (f"obj:class lookups_program.{name}" for name in ("Base", "Sub", "Child"))


@pytest.mark.timeout(30)
class TestClassLookups:
    def test_a_class_read_reads_each_class_it_searches_once(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        accesses = _record(program, module.read_sub_limit)
        reads = [access.entry for access in accesses if access.entry[1] == "limit"]
        assert sorted(reads) == sorted([(_SUB, "limit", "r"), (_BASE, "limit", "r")])

    def test_an_instance_read_reads_each_class_before_the_owner(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        """A store of ``Sub.limit`` would shadow ``Base.limit`` for this instance: the read reads both."""
        module, _ = program
        found = _entries(_record(program, lambda: module.read_limit(module.Sub())))
        assert {(_SUB, "limit", "r"), (_BASE, "limit", "r")} <= found

    def test_getattr_by_name_looks_up_as_the_attribute_does(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        result: list[object] = []
        found = _entries(_record(program, lambda: result.append(module.read_by_name(module.Sub))))
        assert result == [(1, False, None)]
        assert {(_SUB, "limit", "r"), (_BASE, "limit", "r"), (_BASE, "missing", "r")} <= found

    def test_super_reads_the_classes_after_this_one_not_the_proxy(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        child = module.Child()
        result: list[int] = []
        found = _entries(_record(program, lambda: result.append(child.base_limit())))
        assert result == [1]
        assert (_BASE, "limit", "r") in found
        assert not any(thing.startswith("obj:super") for thing, _key, _mode in found), found
        assert (_CHILD, "limit", "r") not in found  # super() starts after Child


@pytest.mark.timeout(30)
class TestWrappedFunctions:
    def test_every_function_behind_a_wrapper_is_rewritten_once(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        _module, instrumented = program
        names = [original.co_qualname for _function, original, _new in instrumented.swaps]  # wraps copies names
        for name in ("Tool.total", "Tool.static_total", "Tool.cached_total", "Tool.wrapped_total", "Tool._half"):
            assert names.count(name) == 1, (name, names)
        assert names.count("called") == 1 and names.count("double") == 1
        assert "logged.<locals>.call" in names and "wrapped.<locals>.call" in names  # the module's own wrappers
        assert len(names) == len({id(function) for function, _original, _new in instrumented.swaps})

    def test_code_of_other_modules_is_left_alone(self, program: tuple[ModuleType, InstrumentedModule]) -> None:
        _module, instrumented = program
        assert all(function.__module__ == "lookups_program" for function, _original, _new in instrumented.swaps)
        assert json.dumps not in {function for function, _original, _new in instrumented.swaps}

    def test_a_body_behind_a_decorator_records_its_accesses(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, _ = program
        tool = module.Tool()
        found = _entries(_record(program, tool.total))
        assert any(key == "items" and mode == "r" for _thing, key, mode in found), found

    def test_a_cached_property_records_its_getter_and_its_store(
        self, program: tuple[ModuleType, InstrumentedModule]
    ) -> None:
        module, instrumented = program
        tool = module.Tool()
        found = _entries(_record(program, lambda: tool.cached_total))
        assert any(key == "items" and mode == "r" for _thing, key, mode in found), found
        assert any(key == "cached_total" and mode == "w" for _thing, key, mode in found), found
        assert vars(tool)["cached_total"] == 1
        descriptor = vars(module.Tool)["cached_total"]
        assert descriptor.func is next(f for f, o, _n in instrumented.swaps if o.co_qualname == "Tool.cached_total")
        if sys.version_info < (3, 12):
            assert type(descriptor.lock) is type(threading.RLock())  # the import-time lock is back


_TWO_READERS = '''
"""Two actors read one cached_property whose getter, now rewritten, takes scheduling points."""

import functools

from lab import Scenario, acceptable, actor, forbidden


class _Cart:
    def __init__(self) -> None:
        self.items = [1]
        self.sums = 0

    @functools.cached_property
    def total(self) -> int:
        self.sums += 1
        n = sum(self.items)
        return n


class TwoReaders(Scenario):
    source = "test_lookups_and_wrappers"
    line_modules = (__name__,)
    outcomes = (acceptable("summed once", sums=1), forbidden("summed twice (Python 3.12 may)", sums=2))

    def setup(self) -> None:
        self.cart = _Cart()

    @actor
    def a(self) -> None:
        self.x = self.cart.total

    @actor
    def b(self) -> None:
        self.y = self.cart.total

    def observe(self) -> dict[str, int]:
        return {"sums": self.cart.sums}
'''


@pytest.mark.timeout(120)
@pytest.mark.parametrize("granularity", ["probe", "line"])
def test_readers_of_one_cached_property_never_hang(tmp_path: Path, granularity: str) -> None:
    """Python 3.11's cached_property holds one real RLock per property while the getter runs: with the rewritten
    getter's scheduling points inside it, the other reader would block outside the scheduler's view (HUNG). In a
    recorded run the getter runs without it, as on Python 3.12: both readers may compute the total."""
    path = tmp_path / "two_readers.py"
    path.write_text(_TWO_READERS, encoding="utf-8")
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    reduced = explore_scenario(loaded, granularity=granularity, reduction=True, max_schedules=500)
    naive = explore_scenario(loaded, granularity=granularity, reduction=False, max_schedules=500)
    assert not any("HUNG" in key for key in (*reduced.outcomes, *naive.outcomes)), naive.outcomes
    assert set(reduced.outcomes) == set(naive.outcomes)
    if granularity == "line":
        assert reduced.verdict is ExploreVerdict.FAIL  # summed twice, as Python 3.12 may
