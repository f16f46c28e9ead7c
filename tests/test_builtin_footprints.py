"""Every entry of the built-ins table (lab/engine/record/_builtin_footprints.py) against what the call really does.

The table says, for each function it names, "reads its arguments, changes none of them", and for each method of a
built-in type it knows, "reads its receiver" (``READ_ONLY_METHODS``) or "writes it", and "reads its arguments". It
also says, by :data:`DEEP_READERS` and :data:`DEEP_METHODS_BY_NAME`, which of them read what their arguments hold
(comparing, hashing, formatting), not only the arguments. A wrong entry is a silent green: a step the reduction
thinks commutes with another one that does not. So each entry is called on values holding other mutable values,
and the test checks the two promises it makes:

1. what the entry says is only read is unchanged by the call (a writer listed as a reader fails here);
2. unless the entry reads deeply, changing a value held one level down (the first nested list, emptied and given
   another number) changes neither the call's result nor what it leaves in its receiver, told by identity and
   plain values (a deep reader listed as shallow fails here: ``sorted``, ``list.index``).

A method call is found from a few argument shapes; a method none of them fits is named in :data:`_CALLS`.
"""

from __future__ import annotations

import builtins
import collections
import copy
import itertools
from collections.abc import Callable
from typing import Any

import pytest

from lab.engine.record._builtin_footprints import KNOWN_RECEIVERS, READ_ONLY_METHODS, READING_FUNCTIONS
from lab.engine.record._deep import DEEP_METHODS_BY_NAME, DEEP_READERS


def _nested() -> list[Any]:
    return [[2], [1], "x"]


_RECEIVERS: dict[type, Callable[[], Any]] = {
    list: _nested,
    tuple: lambda: ([2], [1], "x"),
    dict: lambda: {"a": [2], "b": [1]},
    set: lambda: {"x", 1, 2},
    frozenset: lambda: frozenset({"x", 1, 2}),
    str: lambda: "a,b",
    bytes: lambda: b"a,b",
    bytearray: lambda: bytearray(b"a,b"),
    int: lambda: 5,
    float: lambda: 2.5,
    complex: lambda: 1 + 2j,
    range: lambda: range(3),
    collections.deque: lambda: collections.deque(_nested()),
    collections.OrderedDict: lambda: collections.OrderedDict({"a": [2], "b": [1]}),
    collections.defaultdict: lambda: collections.defaultdict(list, {"a": [2], "b": [1]}),
}
"""A fresh receiver of each known type, holding mutable values where the type can."""


_SHAPES: tuple[Callable[[], tuple[Any, ...]], ...] = (
    lambda: (),
    lambda: ([2],),
    lambda: ("a",),
    lambda: (0,),
    lambda: ("a", [2]),
    lambda: (0, [2]),
    lambda: ([[2], [1]],),
    lambda: ({"c": [3]},),
    lambda: (b"a",),
    lambda: ("a", "b"),
    lambda: (b"a", b"b"),
    lambda: (0, 1),
    lambda: (1,),
    lambda: (2.5,),
    lambda: ("",),
)
"""Argument lists tried in turn for a method: the first one the call accepts is its test."""


_CALLS: dict[tuple[type, str], Callable[[], tuple[Any, ...]]] = {
    (str, "maketrans"): lambda: ("", "a", "b"),
    (str, "format_map"): lambda: ("{a}", {"a": [2]}),
    (bytes, "maketrans"): lambda: (b"", b"a", b"b"),
    (bytearray, "maketrans"): lambda: (bytearray(), b"a", b"b"),
    (bytes, "join"): lambda: (b",", [b"a", bytearray(b"b")]),
    (bytearray, "join"): lambda: (bytearray(b","), [b"a", bytearray(b"b")]),
    (bytes, "translate"): lambda: (b"a,b", None),
    (bytearray, "translate"): lambda: (bytearray(b"a,b"), None),
    (bytearray, "remove"): lambda: (bytearray(b"a,b"), 97),
    (int, "from_bytes"): lambda: (0, b"a", "big"),
    (int, "to_bytes"): lambda: (5, 2, "big"),
    (float, "fromhex"): lambda: (0.0, "0x1p0"),
    (bytes, "fromhex"): lambda: (b"", "61"),
    (bytearray, "fromhex"): lambda: (bytearray(), "61"),
    (dict, "fromkeys"): lambda: ({}, ("a", "b"), [2]),
    (collections.OrderedDict, "fromkeys"): lambda: (collections.OrderedDict(), ("a", "b"), [2]),
    (collections.defaultdict, "fromkeys"): lambda: (collections.defaultdict(list), ("a", "b"), [2]),
    (list, "sort"): lambda: ([[2], [1]],),
    (tuple, "__hash__"): lambda: (("a", ("b", 1)),),
}
"""Calls no shape fits: the receiver, then the method's own arguments."""


_NOT_CALLED = frozenset({"__init__", "__new__", "__init_subclass__", "__subclasshook__", "__class_getitem__"})
"""Methods the recorder never charges as a call of a receiver: the object's making (a constructor is classified
with its class, as a function reading its arguments), and the class protocol."""


def _methods() -> list[tuple[type, str]]:
    """Every method of every known receiver type that the table's rule covers: its public methods, and the dunder
    methods :data:`READ_ONLY_METHODS` names."""
    found: list[tuple[type, str]] = []
    for kind in KNOWN_RECEIVERS:
        for name in sorted(dir(kind)):
            if name in _NOT_CALLED or (name.startswith("_") and name not in READ_ONLY_METHODS):
                continue
            if callable(getattr(kind, name)):
                found.append((kind, name))
    return found


def _names(values: tuple[Any, ...]) -> dict[int, str]:
    """A name for every mutable value the call is handed, by its path (``0``, ``0[1]``, ``1['a']``): the same in
    every run of the same values, so a result or a receiver is shown by which of them it holds, not by address."""
    names: dict[int, str] = {}
    for i, value in enumerate(values):
        names.setdefault(id(value), str(i))
        parts: Any = ()
        if isinstance(value, dict):
            parts = list(value.items())
        elif isinstance(value, list | tuple | collections.deque):
            parts = list(enumerate(value))
        for key, part in parts:
            names.setdefault(id(part), f"{i}[{key!r}]")
    return names


def _view(value: Any, names: dict[int, str], depth: int = 0) -> Any:
    """What a result or a receiver shows without reading what its items hold: each value the call was handed by
    its name, any other by its value when immutable (a fresh container, an iterator or a view by its items)."""
    if depth and id(value) in names:
        return ("handed", names[id(value)])
    if isinstance(value, str | bytes | int | float | complex | bool | type(None) | range):
        return value
    if depth > 1:
        return ("fresh", type(value).__name__)
    if isinstance(value, dict):
        return ("dict", tuple((_view(k, names, depth + 1), _view(v, names, depth + 1)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_view(v, names, depth + 1) for v in value))
    if isinstance(value, list | tuple | collections.deque | bytearray):
        return ("seq", tuple(_view(v, names, depth + 1) for v in value))
    if depth == 0 and hasattr(value, "__next__"):
        return ("iterator", tuple(_view(v, names, 1) for v in itertools.islice(value, 20)))
    if depth == 0 and type(value).__name__.startswith("dict_"):
        return ("view", tuple(_view(v, names, 1) for v in value))
    return ("object", type(value).__name__)


def _first_nested(values: tuple[Any, ...]) -> list[Any] | None:
    """The first list held one level down by any of ``values`` (the thing a deep reader reads)."""
    for value in values:
        parts = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else ()
        if isinstance(value, collections.deque):
            parts = list(value)
        for part in parts:
            if isinstance(part, list):
                return part
    return None


def _outcome(call: Callable[[], Any], values: tuple[Any, ...], receiver_index: int | None) -> tuple[Any, Any]:
    names = _names(values)
    try:
        returned = call()
        if id(returned) in names:  # one of the values handed (dict.get, list.pop): by its name
            result: Any = ("returned", "handed", names[id(returned)])
        elif type(returned) is int and returned in {id(v): 0 for v in values}:  # id(): the address of one of them
            result = ("returned", "an id")
        else:
            result = ("returned", _view(returned, names))
    except Exception as error:  # the same call may raise in both runs: then the error is the result
        result = ("raised", type(error).__name__)
    receiver = values[receiver_index] if receiver_index is not None else None
    return result, _view(receiver, names)


def _deep_change(nested: list[Any]) -> None:
    nested[:] = [-100]


def _check_entry(
    call: Callable[[tuple[Any, ...]], Any],
    make: Callable[[], tuple[Any, ...]],
    *,
    reads: tuple[int, ...],
    deep: bool,
    receiver_index: int | None,
) -> None:
    """The two promises above, for one call ``call(values)`` of the values ``make()`` builds: ``reads`` are the
    positions the entry says are only read; ``deep`` whether it reads what they hold."""
    values = make()
    before = [repr(values[i]) for i in reads]
    call(values)
    after = [repr(values[i]) for i in reads]
    assert before == after, f"the call changed what its entry says it only reads: {before} -> {after}"
    if deep:
        return
    values = make()
    plain = _outcome(lambda: call(values), values, receiver_index)
    values = make()
    nested = _first_nested(values)
    if nested is None:
        return  # nothing is held one level down: promise 2 is about nothing here
    _deep_change(nested)
    changed = _outcome(lambda: call(values), values, receiver_index)
    assert plain == changed, (
        f"a value held one level down changed the result, so the call reads it (a deep read): {plain} vs {changed}"
    )


_FUNCTION_CALLS: dict[object, Callable[[], tuple[Any, ...]]] = {
    builtins.abs: lambda: (-3,),
    builtins.all: lambda: ([[2], [1]],),
    builtins.any: lambda: ([[2], [1]],),
    builtins.ascii: lambda: ([[2], [1]],),
    builtins.bin: lambda: (5,),
    builtins.callable: lambda: ([[2]],),
    builtins.chr: lambda: (65,),
    builtins.divmod: lambda: (7, 2),
    builtins.format: lambda: ([[2], [1]], ""),
    builtins.hash: lambda: (([2] and (2,), "x"),),
    builtins.hex: lambda: (5,),
    builtins.id: lambda: ([[2]],),
    builtins.isinstance: lambda: ([[2]], list),
    builtins.issubclass: lambda: (bool, int),
    builtins.iter: lambda: ([[2], [1]],),
    builtins.len: lambda: ([[2], [1]],),
    builtins.max: lambda: ([[2], [1]],),
    builtins.min: lambda: ([[2], [1]],),
    builtins.oct: lambda: (5,),
    builtins.ord: lambda: ("a",),
    builtins.pow: lambda: (2, 3),
    builtins.repr: lambda: ([[2], [1]],),
    builtins.round: lambda: (2.5,),
    builtins.sorted: lambda: ([[2], [1]],),
    builtins.sum: lambda: ([[2], [1]], []),
    builtins.print: lambda: ([[2], [1]],),
}


def _function_call(f: object) -> Callable[[], tuple[Any, ...]]:
    known = _FUNCTION_CALLS.get(f)
    if known is not None:
        return known
    name = getattr(f, "__name__", "")
    module = getattr(f, "__module__", "") or ""
    if name == "loads":
        return (lambda: ('{"a": [2]}',)) if module == "json" else (lambda: (copy.copy(_PICKLED[module]),))
    return lambda: ([[2], [1]],)


_PICKLED = {
    "_pickle": __import__("pickle").dumps([[2], [1]]),
    "marshal": __import__("marshal").dumps([[2], [1]]),
    "pickle": __import__("pickle").dumps([[2], [1]]),
}


def _function_id(f: object) -> str:
    return f"{getattr(f, '__module__', '') or 'builtins'}.{getattr(f, '__name__', f)}"


@pytest.mark.parametrize("f", sorted(READING_FUNCTIONS, key=_function_id), ids=_function_id)
def test_a_reading_function_changes_none_of_its_arguments(f: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Its entry: it reads its arguments (deeply when :data:`DEEP_READERS` says so) and changes none of them."""
    make = _function_call(f)
    arity = len(make())
    deep = id(f) in DEEP_READERS
    _check_entry(lambda values: f(*values), make, reads=tuple(range(arity)), deep=deep, receiver_index=None)


def _method_call(kind: type, name: str) -> Callable[[], tuple[Any, ...]] | None:
    """The values of a call of ``kind.name`` that it accepts: the receiver first, then its arguments."""
    if (kind, name) in _CALLS:
        return _CALLS[(kind, name)]
    for shape in _SHAPES:

        def make(shape: Callable[[], tuple[Any, ...]] = shape) -> tuple[Any, ...]:
            return (_RECEIVERS[kind](), *shape())

        values = make()
        try:
            getattr(values[0], name)(*values[1:])
        except (TypeError, ValueError, KeyError, IndexError, OverflowError, ZeroDivisionError, AttributeError):
            continue
        return make
    return None


@pytest.mark.parametrize(("kind", "name"), _methods(), ids=[f"{k.__name__}.{n}" for k, n in _methods()])
def test_a_known_method_reads_or_writes_as_its_entry_says(kind: type, name: str) -> None:
    """Its entry: it reads its receiver (``READ_ONLY_METHODS``) or writes it, and reads its arguments, deeply when
    :data:`DEEP_METHODS_BY_NAME` says so; a receiver a read-only method leaves as it was, and arguments every
    method leaves as they were."""
    make = _method_call(kind, name)
    assert make is not None, f"no argument shape fits {kind.__name__}.{name}: name its call in _CALLS"
    arity = len(make())
    reads = tuple(range(arity)) if name in READ_ONLY_METHODS else tuple(range(1, arity))
    _check_entry(
        lambda values: getattr(values[0], name)(*values[1:]),
        make,
        reads=reads,
        deep=name in DEEP_METHODS_BY_NAME,
        receiver_index=0,
    )


def test_the_checks_catch_a_wrong_entry() -> None:
    """The checks fail for entries that would be wrong: ``list.pop`` as read-only, ``sorted`` as shallow."""
    with pytest.raises(AssertionError, match="changed what its entry says it only reads"):
        _check_entry(lambda v: v[0].pop(), lambda: (_nested(),), reads=(0,), deep=False, receiver_index=0)
    with pytest.raises(AssertionError, match="deep read"):
        _check_entry(lambda v: sorted(v[0]), lambda: ([[2], [1]],), reads=(0,), deep=False, receiver_index=None)
    with pytest.raises(AssertionError, match="deep read"):
        _check_entry(lambda v: v[0].index([2]), lambda: (_nested(),), reads=(0,), deep=False, receiver_index=0)
