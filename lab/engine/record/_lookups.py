"""The attribute-lookup model: which classes a read of ``obj.name`` reads besides ``obj`` itself.

Python finds ``obj.name`` by searching the MRO of ``type(obj)`` (and, for a class, its own MRO first); a store to any
class searched before the one that defines ``name`` changes what the read finds, so the read touches each of them.
Which classes, and what kind of attribute is found (a method is code, a slot lives in the instance, a property runs
whatever the instance holds), is worked out statically, once per (type, name), and forgotten when any class attribute
is stored. Kept apart from the runtime because it is a model of Python's semantics with its own invariants, not a
piece of the hot path's bookkeeping.
"""

from __future__ import annotations

import enum
import functools
import types
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import EVERYTHING
from lab.engine.record._unknown import reach_entries
from lab.engine.record._values import IMMUTABLE_TYPE, instance_dict

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


_METHODS = (
    types.FunctionType,
    staticmethod,
    classmethod,
    types.BuiltinFunctionType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
)


class ClassPart(enum.IntEnum):
    """What reading ``obj.name`` reads of the class that defines ``name`` (decided by the attribute's kind)."""

    NONE = 0  # no class in the MRO defines it: the instance's own attribute, nothing of a class
    METHOD = 1  # a method looked up: code, not state
    SLOT = 2  # a slot's member descriptor: the value lives in the instance, the class holds only the descriptor
    UNLESS_SHADOWED = 3  # a plain value or a non-data descriptor: read only when the instance's dict lacks the name
    ALWAYS = 4  # a data descriptor (a property, say): it runs whatever the instance holds
    CLASS = 5  # ``obj`` is a class and its metaclass has no data descriptor ``name``: the class's own MRO decides
    SUPER = 6  # ``obj`` is a ``super()`` proxy: the MRO of the instance's class after ``__thisclass__`` decides
    CACHED = 7  # a functools.cached_property: as UNLESS_SHADOWED, and its first read writes the instance's dict
    PRIMITIVE = 8  # any attribute of a stand-in primitive but a method: the primitive's footprint (STATE_HOLDER)
    FALLBACK = 9  # no class defines it, and the type has a Python __getattr__: it runs when the instance lacks it


METHOD_PART, ALWAYS_PART, UNLESS_SHADOWED_PART = ClassPart.METHOD, ClassPart.ALWAYS, ClassPart.UNLESS_SHADOWED
SLOT_PART, CLASS_PART, SUPER_PART, CACHED_PART = ClassPart.SLOT, ClassPart.CLASS, ClassPart.SUPER, ClassPart.CACHED
PRIMITIVE_PART, FALLBACK_PART = ClassPart.PRIMITIVE, ClassPart.FALLBACK
"""The members ``ga`` compares with, looked up once (not through the enum class on every read)."""


ENUM_CLASSES = frozenset({enum.EnumType})
"""The metaclass of enums: an object of this type is an enum class, whose members never change."""


_IMMUTABLE_CLASS = 1 << 8
"""``Py_TPFLAGS_IMMUTABLETYPE``: a class no code can give an attribute (``object``, ``dict``...), so no store can
shadow a name behind it: a lookup that passes it need not read it."""


owners: dict[tuple[type, str], tuple[type | None, ClassPart, tuple[type, ...]]] = {}


def attribute_owner(obj: object, name: str) -> tuple[type | None, ClassPart, tuple[type, ...]]:
    """The class in ``obj``'s MRO whose namespace defines ``name``, found statically (no descriptor runs), what a
    read of ``obj.name`` reads of it, and the classes such a read searches (see :func:`_lookup_path`), whose ``name``
    it therefore reads: a class before the owner that gains ``name`` would shadow it.

    Cached per (type, name); any attribute store on a class clears the cache (:meth:`ModuleRuntime.sa`)."""
    kind = type(obj)
    found = owners.get((kind, name))
    if found is not None:
        return found
    owner, path = _lookup_path(kind.__mro__, name)
    part = ClassPart.NONE
    if owner is not None:
        descriptor = type(owner.__dict__[name])
        if descriptor in _METHODS:
            part = ClassPart.METHOD
        elif descriptor is types.MemberDescriptorType:
            part = ClassPart.SLOT
        elif hasattr(descriptor, "__set__") or hasattr(descriptor, "__delete__"):
            part = ClassPart.ALWAYS
        elif issubclass(descriptor, functools.cached_property):
            part = ClassPart.CACHED
        else:
            part = ClassPart.UNLESS_SHADOWED
    if owner is None and isinstance(getattr(kind, "__getattr__", None), types.FunctionType):
        part = ClassPart.FALLBACK
    if STATE_HOLDER[kind] and part != ClassPart.METHOD:
        part = ClassPart.PRIMITIVE  # Barrier.broken, Queue.unfinished_tasks: the primitive's own state
    elif issubclass(kind, type) and part != ClassPart.ALWAYS:
        part = ClassPart.CLASS  # type.__getattribute__ searches the class's MRO before the metaclass's
    elif issubclass(kind, super) and owner is None:
        part = ClassPart.SUPER
    found = owners[(kind, name)] = (owner, part, path if part in _CLASS_VALUE_PARTS else ())
    return found


_CLASS_VALUE_PARTS = frozenset({ClassPart.ALWAYS, ClassPart.UNLESS_SHADOWED, ClassPart.CACHED, ClassPart.FALLBACK})
"""The parts whose read takes its value from the owner's namespace, so from whichever class first defines ``name``.
(A method or a slot descriptor shadowed later is a documented limit: re-binding a method, replacing a slot.)"""


def _lookup_path(mro: tuple[type, ...], name: str) -> tuple[type | None, tuple[type, ...]]:
    """The first class in ``mro`` that defines ``name`` (``None`` if none does), and the classes whose ``name`` a
    lookup along ``mro`` reads: each one searched (up to and including that owner, or all when none defines it)
    that some store could give ``name`` (built-in classes cannot take an attribute). A store to any of them changes
    what the lookup finds."""
    path: list[type] = []
    for klass in mro:
        if name in klass.__dict__:
            path.append(klass)
            return klass, tuple(path)
        if not klass.__flags__ & _IMMUTABLE_CLASS:
            path.append(klass)
    return None, tuple(path)


class_lookups: dict[tuple[object, ...], tuple[type, ...]] = {}
"""(class, name) for ``Class.name``, (instance's class, ``__thisclass__``, name) for ``super().name`` -> the classes
that lookup reads (:func:`class_lookup`, :func:`_super_lookup`); cleared with :data:`owners`."""


def class_lookup(cls: type, name: str) -> tuple[type, ...]:
    """The classes ``cls.name`` reads besides ``cls`` itself: the others of its MRO up to the one that defines
    ``name`` (none for a method: re-binding one is a documented limit)."""
    owner, path = _lookup_path(cls.__mro__, name)
    if owner is not None and type(owner.__dict__[name]) in _METHODS:
        path = ()
    found = class_lookups[(cls, name)] = tuple(klass for klass in path if klass is not cls)
    return found


def _super_lookup(proxy: Any, name: str) -> tuple[type, ...]:
    """The classes ``super().name`` reads: the MRO of the instance's class after ``__thisclass__``, up to the one
    that defines ``name`` (none for a method, as in :func:`class_lookup`)."""
    start: type | None = proxy.__self_class__
    this: type = proxy.__thisclass__
    if start is None:
        return ()  # an unbound super() proxy: it reads nothing through an MRO
    found = class_lookups.get((start, this, name))
    if found is not None:
        return found
    mro = start.__mro__
    owner, path = _lookup_path(mro[mro.index(this) + 1 :] if this in mro else (), name)
    if owner is not None and type(owner.__dict__[name]) in _METHODS:
        path = ()
    found = class_lookups[(start, this, name)] = path
    return found


class _StateHolders(dict[type, str]):
    """Type -> the name of the instance attribute (or of the engine's own method) that gives its objects'
    footprint, for a primitive, the lab's or a stand-in (a class whose MRO says ``lab_state_in``, found in the
    classes' own dicts: no descriptor runs), else ``""``: every attribute of such an object is the primitive's
    state, which its operations write under that footprint."""

    def __missing__(self, kind: type) -> str:
        holder = ""
        for klass in kind.__mro__:
            named = klass.__dict__.get("lab_state_in")
            if type(named) is str:
                holder = named
                break
        self[kind] = holder
        return holder


STATE_HOLDER = _StateHolders()


def primitive_entries(obj: object, mode: str) -> list[tuple[str, str, str]]:
    """What reading (``mode`` ``r``) or storing (``w``) any attribute of the stand-in primitive ``obj`` touches:
    each entry of its footprint, in that mode (everything, when it has none yet: a stand-in being made)."""
    holder = STATE_HOLDER[type(obj)]
    footprint = instance_dict(obj).get(holder) if instance_dict(obj) else None
    if footprint is None and callable(method := getattr(type(obj), holder, None)):
        footprint = method(obj)  # the primitive's own code says (a latch: every actor's count-downs)
    if not footprint:
        return [_EVERYTHING_ENTRY]
    return [(thing, key, mode) for thing, key, _mode in footprint]


_EVERYTHING_ENTRY = next(iter(EVERYTHING))


def read_primitive(run: Recording, obj: Any, name: str, where: tuple[str, int]) -> Any:
    """``obj.name`` for a stand-in primitive ``obj``: a read of its footprint, one operation (at instruction
    granularity a scheduling point of its own, right before the lookup), then the lookup."""
    run.scheduler.access_all(primitive_entries(obj, "r"), where, schedule=run.schedules)
    value = getattr(obj, name)
    if not IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
        run.label(value, f"{run.label(obj)}.{name}")
    return value


def opaque_getter(descriptor: property, run: Recording) -> bool:
    """True for a property whose getter is code the lab cannot see (and that may keep state of its own)."""
    getter = descriptor.fget
    if getattr(getter, "__code__", None) in run._instrumented:
        return False
    module = getattr(getter, "__module__", "") or ""
    return not (module in ("builtins", "enum") or module.startswith(run._stateless))


def opaque_fallback(run: Recording, obj: object) -> bool:
    """True when ``type(obj).__getattr__`` is code the lab cannot see (a proxy defined outside the modules under
    test): a read that falls to it is charged with everything ``obj`` reaches."""
    fallback = getattr(type(obj), "__getattr__", None)
    code = getattr(fallback, "__code__", None)
    return code not in run._instrumented and not (getattr(fallback, "__module__", "") or "").startswith(run._stateless)


def forget_classes() -> None:
    """A class attribute was stored: a name may now be found elsewhere in some MRO, so every lookup is worked out
    again."""
    owners.clear()
    class_lookups.clear()


def read_through(
    run: Recording,
    obj: Any,
    name: str,
    classes: tuple[type, ...],
    where: tuple[str, int],
    *,
    own: bool = True,
    opaque: object = None,
    stores: object = None,
) -> Any:
    """``obj.name`` read through ``classes`` (and ``obj``'s own attribute unless not ``own``): one operation,
    so its reads are one scheduling point (instruction granularity) right before the lookup, and a store to any
    of them is ordered before or after the whole lookup, as it happens. ``opaque``: an object that a getter the
    lab cannot see may change, with everything it reaches; ``stores``: an object whose ``name`` the lookup
    writes."""
    things = run._things
    entries = [(things.get(id(klass)) or "obj:" + run.label(klass), name, "r") for klass in classes]
    if own:
        entries.append((things.get(id(obj)) or "obj:" + run.label(obj), name, "r"))
    if opaque is not None:  # a getter the lab cannot see: it may change whatever the object reaches
        entries.extend(reach_entries(run, [(opaque, things.get(id(opaque), "obj:")[4:])]))
    if stores is not None:
        entries.append((things.get(id(stores)) or "obj:" + run.label(stores), name, "w"))
    run.scheduler.access_all(entries, where, schedule=run.schedules)
    value = getattr(obj, name)
    if own and not IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
        run.label(value, f"{run.label(obj)}.{name}")
    return value


def read_super(run: Recording, proxy: Any, name: str, where: tuple[str, int]) -> Any:
    """``super().name``: the classes after ``__thisclass__`` in the instance's MRO, up to the one that defines
    ``name`` (the proxy itself is a fresh object, no state; a property's getter the lab cannot see may change
    the instance)."""
    path = _super_lookup(proxy, name)
    if not path:
        return getattr(proxy, name)  # a method (a documented limit) or an unbound proxy
    descriptor = path[-1].__dict__.get(name)
    opaque = isinstance(descriptor, property) and opaque_getter(descriptor, run)
    return read_through(run, proxy, name, path, where, own=False, opaque=proxy.__self__ if opaque else None)
