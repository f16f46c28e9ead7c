"""The footprint of a call into code that is not rewritten: what a C function, a built-in's method or another
module's function may touch, classified once per callee.

Code under test records its own accesses and the lab's primitives schedule for themselves (``TRANSPARENT``); what the
lab cannot see into is charged by kind: a function the table (:mod:`lab.engine.record._builtin_footprints`) says only
reads (``len``, ``sorted``, ``json.dumps``) reads its arguments; a method of a built-in type the table knows reads
(``dict.get``) or writes (``list.append``) its receiver; anything else (a C method no table knows, a function of a
module not under test, the standard library's Python code) writes everything it can reach, for as long as it runs
(:mod:`lab.engine.record._unknown`). The classification is cached per set of code under test, because the hot path
asks it for every call.
"""

from __future__ import annotations

import enum
import functools
import sys
import types
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY, Entry
from lab.engine.record._builtin_footprints import (
    GENERATOR_TYPES,
    KNOWN_RECEIVERS,
    READ_ONLY_METHODS,
    READING_FUNCTIONS,
    RESUMING,
)
from lab.engine.record._unknown import callee_roots, module_entries, reach_entries
from lab.engine.record._values import CLASS_OR_MODULE, IMMUTABLE_TYPE

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


class Kind:
    TRANSPARENT = 0  # code under test or a lab primitive: it records (or schedules) for itself
    READS = 1  # a C function that only reads its arguments
    METHOD_READS = 2  # a read-only method of a built-in type: reads its receiver
    METHOD_WRITES = 3  # a mutating method of a built-in type: writes its receiver, reads its arguments
    OPAQUE = 4  # code the lab cannot see: writes its receiver, every mutable argument, and its module's state
    RESUMES = 5  # a generator's or coroutine's send, throw, close or __next__: writes it, for as long as it runs


WRAPPERS = frozenset({types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType})


PLAIN_CALLEES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, type)


KINDS: dict[frozenset[types.CodeType], dict[object, int]] = {}
"""Classifications, kept across runs for each set of instrumented code objects (which live as long as the process)."""


KINDS_KEPT = 4096
"""At most this many per set: functions made afresh in every run would otherwise pile up."""


def classify(run: Recording, f: object) -> int:
    """How a call of ``f`` touches shared state (cached per function, per built-in and name, or per type)."""
    key = kind_key(f)
    kind = run._kinds.get(key)
    if kind is None:
        kind = run._kinds[key] = _classify(run, f)
    return kind


def _classify(run: Recording, f: object) -> int:
    if isinstance(f, types.BuiltinFunctionType):
        owner = f.__self__
        if owner is None or isinstance(owner, types.ModuleType):
            return Kind.READS if f in READING_FUNCTIONS else Kind.OPAQUE
        if run._is_lab_object(owner):
            return Kind.TRANSPARENT
        if type(owner) in GENERATOR_TYPES and f.__name__ in RESUMING:
            return Kind.RESUMES
        known = owner if isinstance(owner, type) else type(owner)  # dict.fromkeys is bound to its class
        if not issubclass(known, KNOWN_RECEIVERS):
            return Kind.OPAQUE  # a C method no table knows: sqlite3's, io's, random's
        return Kind.METHOD_READS if f.__name__ in READ_ONLY_METHODS else Kind.METHOD_WRITES
    func = f.__func__ if isinstance(f, types.MethodType) else f
    if isinstance(func, types.FunctionType):
        if func.__code__ in run._instrumented or func.__module__.startswith(run._transparent):
            return Kind.TRANSPARENT
        return Kind.READS if func in READING_FUNCTIONS and f is func else Kind.OPAQUE
    if isinstance(f, type):
        if f.__module__ == "builtins" or isinstance(f, enum.EnumMeta):
            return Kind.READS  # a built-in constructor or an enum lookup reads its arguments
        if f.__module__.startswith(run._transparent):
            return Kind.TRANSPARENT
        init = getattr(f, "__init__", None)
        code = getattr(init, "__code__", None)
        if code in run._instrumented:
            return Kind.TRANSPARENT
        if code is None or code.co_filename == "<string>":  # object.__init__, or a dataclass's generated one
            return Kind.READS  # it stores its arguments; a __post_init__ under test records itself
        return Kind.OPAQUE
    if run._is_lab_object(f):
        return Kind.TRANSPARENT
    call = type(f).__dict__.get("__call__")
    if getattr(call, "__code__", None) in run._instrumented:
        return Kind.TRANSPARENT
    if isinstance(f, types.MethodWrapperType | types.WrapperDescriptorType | types.MethodDescriptorType):
        name = getattr(f, "__name__", "")
        if name == "__next__":  # a generator's, or any iterator's (which may run code under test: a map's lambda)
            return Kind.RESUMES
        return Kind.METHOD_READS if name in READ_ONLY_METHODS else Kind.METHOD_WRITES
    return Kind.OPAQUE


def kind_key(f: object) -> object:
    """What a call's classification depends on: the function (a bound method's function); a module's built-in
    itself, or a built-in method's receiver type and name; a slot wrapper's type and name; a class itself; else
    the callee's type with ``"__call__"`` (never the class's own key: ``operator.methodcaller`` called reads its
    arguments, one of its objects called may write them)."""
    kind = type(f)
    if kind is types.MethodType:
        return f.__func__  # type: ignore[attr-defined]
    if kind is types.FunctionType or isinstance(f, type):
        return f
    if kind is types.BuiltinFunctionType:
        owner = f.__self__  # type: ignore[attr-defined]
        if owner is None or type(owner) is types.ModuleType:
            return f
        return (type(owner), f.__name__)  # type: ignore[attr-defined]
    if kind in WRAPPERS:
        return (kind, getattr(f, "__name__", ""))
    return (kind, "__call__")  # an object called: apart from its class, whose call makes one (methodcaller)


PARTIAL = functools.partial


CARRIERS = frozenset({types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType, functools.partial})
"""Callables that hold state their call touches (a bound method's receiver, what a partial holds): passed as an
argument, such a value is not data read whole (most of these types count as immutable) but a call the callee may
make, charged as :func:`passed_entries` says."""


def passed_entries(run: Recording, f: Any) -> list[Entry]:
    """What calling ``f``, a callable passed as an argument, may touch of the state ``f`` itself holds, charged as
    :meth:`ModuleRuntime.call` would charge the call: the receiver of a built-in method, read by a read-only
    method and written by any other; for a method the lab cannot see, its receiver and its module's state
    written; for a partial, what its function holds and its arguments (read by a function that only reads them,
    else written). Code under test records its own accesses when called, and a built-in that only reads its
    arguments holds nothing: both charge nothing here."""
    found: list[Entry] = []
    if isinstance(f, PARTIAL):
        func = f.func
        found.extend(passed_entries(run, func))
        kind = classify(run, func)
        if kind == Kind.TRANSPARENT:
            return found
        mode = "r" if kind in (Kind.READS, Kind.METHOD_READS) else "w"
        for value in (*f.args, *f.keywords.values()):
            if type(value) in CARRIERS:
                found.extend(passed_entries(run, value))
            elif not IMMUTABLE_TYPE[type(value)] and not isinstance(value, CLASS_OR_MODULE):
                found.append(("obj:" + run.label(value), ANY_KEY, mode))
        return found
    kind = classify(run, f)
    if kind == Kind.TRANSPARENT or kind == Kind.READS:
        return found
    receiver = getattr(f, "__self__", None)
    if receiver is not None and not IMMUTABLE_TYPE[type(receiver)]:
        if kind == Kind.OPAQUE:
            found.append(("obj:" + run.label(receiver), ANY_KEY, "w"))
        elif not isinstance(receiver, CLASS_OR_MODULE):  # a built-in method bound to a class takes its receiver
            found.append(("obj:" + run.label(receiver), ANY_KEY, "r" if kind == Kind.METHOD_READS else "w"))
    if kind == Kind.OPAQUE:
        module = module_state(run, f)
        if module is not None:
            found.append(module)
        if not isinstance(f, PLAIN_CALLEES) and not IMMUTABLE_TYPE[type(f)]:  # a callable object (a partial's)
            found.append(("obj:" + run.label(f), ANY_KEY, "w"))
    return found


def module_state(run: Recording, f: Any) -> Entry | None:
    """The state of the module that defines ``f``, which a call of ``f`` the lab cannot see may change: none for
    the engine's own modules and those the caller says keep none (no allow-list of "stateless" standard modules:
    ``functools.singledispatch`` keeps its registry in a closure, ``random`` its generator in a global)."""
    module = getattr(f, "__module__", None) or getattr(type(f), "__module__", "")
    if module and not module.startswith(run._stateless):
        return (f"obj:module {module}", ANY_KEY, "w")
    return None


def opaque_subscript(run: Recording, kind: type, method: str) -> bool:
    """Whether ``obj[key]`` (``method``: ``__getitem__``, ``__setitem__`` or ``__delitem__``) on a ``kind`` runs
    Python code the lab does not rewrite (``collections.ChainMap``, ``UserDict``): then the subscript is a call of
    code it cannot see. A built-in container's C slot touches only the container, as the subscript records.
    Cached per type and method with the run's call classifications."""
    key = ("subscript", kind, method)
    found = run._kinds.get(key)
    if found is None:
        function = getattr(kind, method, None)
        found = run._kinds[key] = int(
            isinstance(function, types.FunctionType)
            and function.__code__ not in run._instrumented
            and not (function.__module__ or "").startswith(run._transparent)
        )
    return bool(found)


def charged_subscript(run: Recording, obj: Any, key: Any, method: str, file: str, line: int) -> bool:
    """``obj[key]`` through code the lab cannot see (:func:`opaque_subscript`): a write of everything reachable
    from ``obj`` and ``key``, and of the method's module, as one operation. False (nothing done) for any other."""
    if not opaque_subscript(run, type(obj), method):
        return False
    function = getattr(type(obj), method)
    entries = reach_entries(run, [(obj, ""), (key, "")])
    entries.extend(module_entries(run, function.__module__ or ""))
    run.scheduler.access_all(entries, (file, line), schedule=run.schedules)
    return True


def callback_entries(run: Recording, f: Any, handed: tuple[Any, ...]) -> list[Entry]:
    """What a function the lab cannot see, handed to a built-in that calls it (``sorted(xs, key=f)``, ``map(f,
    xs)``), may touch: everything reachable from it and from what the built-in hands it (the items of the values
    ``handed``), and its module's globals."""
    roots, module, walk = callee_roots(f)
    entries = reach_entries(run, [*roots, *((value, "") for value in handed if value is not f)])
    entries.extend(module_entries(run, module, walk=walk))
    return entries


_PROTOCOL = ("__iter__", "__len__", "__getitem__", "__contains__", "__bool__", "keys", "__index__")
_BUILT_IN = frozenset({list, dict, set, frozenset, tuple, str, bytes, bytearray, int, float, bool, type(None)})


def opaque_protocol(run: Recording, kind: type) -> bool:
    """Whether a built-in handed a ``kind`` may run Python code the lab does not rewrite through it (its
    ``__iter__``, ``__len__``, ``__getitem__``...: ``len(chain_map)``, ``dict(user_dict)``): then the value is
    charged as that code's, with all it reaches. Cached per type with the run's call classifications."""
    if kind in _BUILT_IN:
        return False
    key = ("protocol", kind)
    found = run._kinds.get(key)
    if found is None:
        found = run._kinds[key] = int(any(opaque_subscript(run, kind, name) for name in _PROTOCOL))
    return bool(found)


def outside_python(module: str) -> bool:
    """Whether Python code of ``module`` is the program's own, outside the modules under test (not the standard
    library's, not the lab's): a thread can be switched out of it between any two of its accesses, so what a call of
    it is charged with is not one operation, and the atomicity check may ask for its module to be put under test.
    The standard library's Python code is taken as one operation, as C code is: its modules keep to themselves
    what they share between threads (or lock it), and no line of theirs can be put under test."""
    top = module.partition(".")[0]
    return bool(top) and top not in sys.stdlib_module_names and top != "lab"
