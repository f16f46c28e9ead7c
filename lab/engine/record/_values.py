"""What the recording can tell of a value without running any of the program's code.

Every part of the recording asks the same few questions of the values it meets -- can this value change at all, what
are an object's own attributes and slots, how does a key read as part of a label, which part of a container does a
subscript name -- and each answer must come without calling into the program (a property, an overridden
``__getattribute__`` would run code under test at a moment no schedule chose). The answers live here once, cached
per type where the hot path asks them for every access.
"""

from __future__ import annotations

import enum
import operator
import types
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording

ENGINE = __name__.rpartition(".record.")[0]
"""The engine's own package (``lab.engine``), the one package the engine knows: its objects are machinery, never the
program's state, and its functions keep no state a call could change. Any other package to leave alone is the
caller's to name (see :class:`lab.engine.record.Recording`)."""

_IMMUTABLE: frozenset[type] = frozenset(
    {
        int,
        float,
        bool,
        str,
        bytes,
        complex,
        type(None),
        range,
        frozenset,
        tuple,
        type(Ellipsis),
        slice,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.MethodType,
        types.CodeType,
    }
)
"""Values whose contents no step can change: reading or passing them touches nothing shared."""


class _ImmutableTypes(dict[type, bool]):
    """Type -> whether no step can change its values. A miss works the answer out once; a hit is a dictionary
    lookup without a Python call (``IMMUTABLE_TYPE[type(x)]``), which the recording path makes for every access."""

    def __missing__(self, kind: type) -> bool:
        known = kind in _IMMUTABLE or issubclass(kind, enum.Enum)
        self[kind] = known
        return known


IMMUTABLE_TYPE = _ImmutableTypes()


CLASS_OR_MODULE = (type, types.ModuleType)
"""``isinstance`` against a tuple made once (``type | types.ModuleType`` would build a union on every call)."""


CODE_LIKE = frozenset({types.FunctionType, types.MethodType, types.BuiltinMethodType})


def own_dict(obj: object) -> object:
    """What ``Recording._keep`` finds as ``obj``'s own attribute dict: the dict, or ``None``."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return attributes if type(attributes) is dict else None


def instance_dict(obj: object) -> Any:
    """``obj``'s own attributes, read without running any of its code (empty when it has none)."""
    try:
        return object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return ()


SLOTS: dict[type, tuple[bool, tuple[tuple[str, types.MemberDescriptorType], ...]]] = {}
"""Type -> whether some class in its MRO defines ``__dict__`` (else an instance has none to read), and its slots
and their descriptors (every class in the MRO): the walk meets the same types every run."""


def slots_of(kind: type) -> tuple[bool, tuple[tuple[str, types.MemberDescriptorType], ...]]:
    found: list[tuple[str, types.MemberDescriptorType]] = []
    for klass in kind.__mro__:
        names = klass.__dict__.get("__slots__")
        for slot in names if isinstance(names, tuple) else ():
            descriptor = klass.__dict__.get(slot)
            if isinstance(descriptor, types.MemberDescriptorType):
                found.append((slot, descriptor))
    return bool(kind.__dictoffset__) or any("__dict__" in klass.__dict__ for klass in kind.__mro__), tuple(found)


def key_text(key: object) -> str:
    """A dictionary key as part of a label: equal keys give equal text (``1``, ``1.0`` and ``True`` alike)."""
    kind = type(key)
    if kind is str:
        return repr(key)
    if kind in (int, bool, float):
        number = float(key)  # type: ignore[arg-type]
        return repr(int(number)) if number.is_integer() else repr(number)
    if kind is tuple and all(type(part) in (str, int) for part in key):  # type: ignore[attr-defined]
        return repr(key)
    return ANY_KEY


def key_of(container: object, key: object, run: Recording) -> str:
    """The part of ``container`` that ``container[key]`` reads or stores: one key of a dict, one item of a list (by
    its index from the front), all of anything else; for an object's ``__dict__``, the attribute of that name.

    A list's item is its own part only for an index in range: ``lst[-1]`` is the item at ``len(lst) - 1``, and
    every operation that changes the length or moves items (``append``, ``insert``, ``pop``, ``del lst[i]``, a
    slice, ``sort``) writes the whole list, so no step can change which item an index names without conflicting
    with it. An index out of range (an IndexError, whose outcome the length decides) is the whole list."""
    if id(container) in run._instance_dicts:
        return key if type(key) is str else ANY_KEY
    kind = type(container)
    if kind is list:
        if type(key) is int:
            length = len(container)  # type: ignore[arg-type]
            if -length <= key < length:
                return f"[{key % length}]"
        return ANY_KEY
    if kind is dict or kind is defaultdict:
        text = key_text(key)
        return text if text == ANY_KEY else f"[{text}]"
    return ANY_KEY


INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.iadd,
    "-": operator.isub,
    "*": operator.imul,
    "/": operator.itruediv,
    "//": operator.ifloordiv,
    "%": operator.imod,
    "**": operator.ipow,
    "<<": operator.ilshift,
    ">>": operator.irshift,
    "&": operator.iand,
    "|": operator.ior,
    "^": operator.ixor,
    "@": operator.imatmul,
}
"""The in-place operators by their spelling (``x += v`` is ``rt.iop("+", x, v, line)``)."""
