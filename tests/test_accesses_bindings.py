"""Every way a function stores a global or a shared closure variable is recorded: a walrus (in a comprehension
too, where it stores the enclosing function's variable), ``for`` and ``with`` targets, ``except ... as``, ``import``,
``case`` captures, ``del``, a nested ``def``.

A store the rewriting misses is a write no footprint shows: two actors that bump a global through a walrus, a
``for`` target or an ``except ... as`` would be explored in one order only.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from lab.engine.record import InstrumentedModule
from tests.test_accesses import _entries, _record, instrumented_program

_SOURCE = """
import json

HITS = 0
G = None


class Manager:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def walrus_global(n):
    global HITS
    return (HITS := n)


def walrus_in_comprehension(xs):
    global HITS
    return [HITS := x for x in xs]


def walrus_cell():
    count = 0

    def bump():
        nonlocal count
        (count := count + 1)
        return count

    return bump


def for_global(xs):
    global G
    for G in xs:
        pass
    return G


def for_tuple_global(pairs):
    global G
    for _k, G in pairs:
        pass
    return G


def with_global(manager):
    global G
    with manager as G, Manager() as other:
        return G is manager and other is not manager


def except_global():
    global G
    try:
        raise KeyError("k")
    except KeyError as G:
        seen = type(G).__name__
    return seen, "G" in globals()


def import_global():
    global G
    import json as G
    from json import dumps as G

    return G is json.dumps


def match_global(value):
    global G
    match value:
        case [G, *_]:
            return G
        case {"k": G} if G:
            return G
    return None


def del_global():
    global G
    G = 1
    del G
    return "G" in globals()


def def_global():
    global G

    def G():
        return 1

    return G()


def cell_by_for():
    made = None

    def get():
        return made

    for made in [1, 2]:
        pass
    return get


def all_results():
    return (
        walrus_global(3),
        walrus_in_comprehension([1, 2]),
        for_global([1, 2]),
        for_tuple_global([(1, 2)]),
        with_global(Manager()),
        except_global(),
        import_global(),
        match_global({"k": 5}),
        match_global([7]),
        del_global(),
        def_global(),
        walrus_cell()(),
        cell_by_for()(),
    )
"""

_G = ("obj:module bindings_program", "G", "w")
_HITS = ("obj:module bindings_program", "HITS", "w")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    yield from instrumented_program(tmp_path_factory, "bindings_program", _SOURCE)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("function", "args", "written"),
    [
        ("walrus_global", (3,), _HITS),
        ("walrus_in_comprehension", ([1, 2],), _HITS),  # the comprehension's walrus stores the function's global
        ("for_global", ([1, 2],), _G),
        ("for_tuple_global", ([(1, 2)],), _G),
        ("with_global", ("manager",), _G),
        ("except_global", (), _G),
        ("import_global", (), _G),
        ("match_global", ({"k": 5},), _G),
        ("del_global", (), _G),
        ("def_global", (), _G),
    ],
)
def test_each_binding_form_records_its_store_of_a_global(
    program: tuple[ModuleType, InstrumentedModule], function: str, args: tuple[object, ...], written: object
) -> None:
    module, _ = program
    values = tuple(module.Manager() if arg == "manager" else arg for arg in args)
    assert written in _entries(_record(program, lambda: getattr(module, function)(*values)))


@pytest.mark.timeout(30)
def test_a_match_reads_its_subject(program: tuple[ModuleType, InstrumentedModule]) -> None:
    """``match items: case [G, *_]`` reads the list (its length, its first item), which a race may change."""
    module, _ = program
    found = _entries(_record(program, lambda: module.match_global([7])))
    assert any(thing.startswith("obj:list#") and key == "*" and mode == "r" for thing, key, mode in found), found


@pytest.mark.timeout(30)
def test_del_of_a_global_is_a_write_of_its_own(program: tuple[ModuleType, InstrumentedModule]) -> None:
    module, _ = program
    accesses = _record(program, module.del_global)
    assert [access.entry for access in accesses].count(_G) == 2  # ``G = 1``, then ``del G``


@pytest.mark.timeout(30)
def test_an_except_name_is_stored_then_deleted(program: tuple[ModuleType, InstrumentedModule]) -> None:
    """Leaving the handler stores ``None`` in the name and deletes it: writes too, after the handler's body."""
    module, _ = program
    entries = [access.entry for access in _record(program, module.except_global)]
    reads = [i for i, entry in enumerate(entries) if entry == ("obj:module bindings_program", "G", "r")]
    stores = [i for i, entry in enumerate(entries) if entry == _G]
    assert len(stores) >= 2 and stores[0] < reads[0] < stores[-1], entries


@pytest.mark.timeout(30)
def test_a_for_target_store_is_recorded_on_every_iteration(program: tuple[ModuleType, InstrumentedModule]) -> None:
    module, _ = program
    accesses = _record(program, lambda: module.for_global([1, 2, 3]))
    assert [access.entry for access in accesses].count(_G) == 3


@pytest.mark.timeout(30)
@pytest.mark.parametrize("maker", ["walrus_cell", "cell_by_for"])
def test_a_closure_variable_stored_by_a_walrus_or_a_for_target(
    program: tuple[ModuleType, InstrumentedModule], maker: str
) -> None:
    module, instrumented = program
    instrumented.install()
    try:
        closure = getattr(module, maker)()  # made by the rewritten body, so it is rewritten too
    finally:
        instrumented.uninstall()
    made = _record(program, getattr(module, maker))  # the store happens in the maker (cell_by_for) ...
    used = _record(program, closure)  # ... or in the closure (walrus_cell)
    cells = {(thing, mode) for thing, _key, mode in _entries(made) | _entries(used) if thing.startswith("obj:cell ")}
    assert {mode for _thing, mode in cells} == {"r", "w"}, cells


@pytest.mark.timeout(30)
def test_the_rewritten_binding_forms_compute_what_the_original_does(
    program: tuple[ModuleType, InstrumentedModule],
) -> None:
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
