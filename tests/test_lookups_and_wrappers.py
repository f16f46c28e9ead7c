"""Class attribute lookups read every class they search.

``Sub.x`` (and ``obj.x``, ``super().x``, ``getattr(obj, "x")``) takes its value from the first class of an MRO that
defines ``x``: a store to that class, or to any class searched before it, changes what the read finds, so the read
records each of them.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from types import ModuleType

import pytest

from lab.engine.instrument import InstrumentedModule, instrument_module
from tests.test_accesses import _entries, _record

_SOURCE = """
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
