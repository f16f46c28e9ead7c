"""A rewritten body keeps the code flags a decorator set after compiling: ``types.coroutine`` generators stay awaitable.

``types.coroutine`` marks a generator function's code (``CO_ITERABLE_COROUTINE``) so that a coroutine may ``await``
its generators. The rewritten twin is compiled from the source, without that mark: installed as it was, an
``await`` of such a generator under test raised ``TypeError: object generator can't be used in 'await' expression``
in every recorded run, a crash of a correct program.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator
from types import ModuleType

import pytest

from lab.engine.record import InstrumentedModule
from tests.test_accesses import instrumented_program

_SOURCE = """
import types

@types.coroutine
def pause():
    yield "paused"

async def twice(box):
    await pause()
    box.append(1)
    await pause()
    box.append(2)

def plain():
    yield 1
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    yield from instrumented_program(tmp_path_factory, "code_flags_program", _SOURCE)


def test_an_awaitable_generator_stays_awaitable_with_the_rewritten_body(
    program: tuple[ModuleType, InstrumentedModule],
) -> None:
    module, instrumented = program
    original = module.pause.__code__
    instrumented.install()
    try:
        assert module.pause.__code__ is not original, "the rewritten body is installed"
        assert module.pause.__code__.co_flags & inspect.CO_ITERABLE_COROUTINE
        box: list[int] = []
        coroutine = module.twice(box)
        assert coroutine.send(None) == "paused"
        assert coroutine.send(None) == "paused"
        with pytest.raises(StopIteration):
            coroutine.send(None)
        assert box == [1, 2]
    finally:
        instrumented.uninstall()
    assert module.pause.__code__ is original


def test_no_flag_is_added_to_a_function_that_had_none(program: tuple[ModuleType, InstrumentedModule]) -> None:
    module, instrumented = program
    instrumented.install()
    try:
        assert not module.plain.__code__.co_flags & inspect.CO_ITERABLE_COROUTINE
        assert isinstance(module.plain(), types.GeneratorType)
    finally:
        instrumented.uninstall()
