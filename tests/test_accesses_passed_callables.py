"""A callable passed as an argument is charged for the state it holds: the callee may call it.

``map(self.items.append, ...)`` and ``max(..., key=self.score.get)`` never name the list or the dict; the bound
method they are handed does (its receiver). A ``functools.partial`` holds a function and arguments: calling it is
calling that function with those arguments first, and passing it along hands over what it holds.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from types import ModuleType

import pytest

from lab.engine.record import InstrumentedModule
from tests.test_accesses import _entries, _record, instrumented_program

_SOURCE = """
import functools


def map_append(items):
    return list(map(items.append, ["a"]))


def max_by_get(score):
    return max(["x", "y"], key=score.get)


def call_partial(take):
    return take()


def sort_by(items, key):
    return sorted(items, key=key)


def all_results():
    score = {"x": 2, "y": 1}
    return (
        map_append([]),
        max_by_get({"x": 1, "y": 2}),
        call_partial(functools.partial([1, 2].pop, 0)),
        call_partial(functools.partial(dict, a=1)),
        sort_by(["x", "y"], functools.partial(score.get)),
    )
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    yield from instrumented_program(tmp_path_factory, "passed_program", _SOURCE)


def _whole(found: set[tuple[str, str, str]], kind: str) -> set[str]:
    """The modes of the whole-object accesses of the one object of type ``kind`` the run touched."""
    return {mode for thing, key, mode in found if key == "*" and thing.startswith(f"obj:{kind}#")}


@pytest.mark.timeout(30)
def test_a_bound_method_passed_along_charges_its_receiver(program: tuple[ModuleType, InstrumentedModule]) -> None:
    """``map(items.append, ...)`` writes ``items``; ``max(..., key=score.get)`` reads ``score``, and only reads."""
    module, _ = program
    assert "w" in _whole(_entries(_record(program, lambda: module.map_append([]))), "list")
    assert _whole(_entries(_record(program, lambda: module.max_by_get({"x": 1, "y": 2}))), "dict") == {"r"}


@pytest.mark.timeout(30)
def test_calling_a_partial_is_calling_its_function(program: tuple[ModuleType, InstrumentedModule]) -> None:
    """``partial(items.pop, 0)()`` pops ``items``: a write of the list, not only of the partial object."""
    module, _ = program
    items = [1, 2]
    found = _entries(_record(program, lambda: module.call_partial(functools.partial(items.pop, 0))))
    assert "w" in _whole(found, "list"), found
    assert items == [2]


@pytest.mark.timeout(30)
def test_a_partial_passed_along_charges_what_it_holds(program: tuple[ModuleType, InstrumentedModule]) -> None:
    """``sorted(xs, key=partial(d.get))`` reads ``d``, which only the partial names."""
    module, _ = program
    score = {"x": 2, "y": 1}
    found = _entries(_record(program, lambda: module.sort_by(["x", "y"], functools.partial(score.get))))
    assert "r" in _whole(found, "dict"), found


@pytest.mark.timeout(30)
def test_the_rewritten_calls_compute_what_the_original_does(program: tuple[ModuleType, InstrumentedModule]) -> None:
    module, instrumented = program
    expected = module.all_results()
    results: list[object] = []
    _record(program, lambda: results.append(module.all_results()))
    instrumented.install()
    try:
        unrecorded = module.all_results()  # rewritten, outside any recording: a plain pass-through
    finally:
        instrumented.uninstall()
    assert results == [expected] and unrecorded == expected
