"""The footprint of a call into code that is not rewritten: what a C function, a built-in's method or another
module's function may touch, classified once per callee.

Code under test records its own accesses and the lab's primitives schedule for themselves (``TRANSPARENT``); what the
lab cannot see into is charged by kind: a C function that only reads (``len``, ``sorted``, ``dict.get``) reads its
arguments; a mutating method of a built-in type (``list.append``) writes its receiver; anything else (a function of a
module not under test) writes its receiver, every mutable argument and its module's state, for as long as it runs.
The tables are the lab's knowledge of the standard library; the classification is cached per set of code under test,
because the hot path asks it for every call.
"""

from __future__ import annotations

import enum
import functools
import types
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY, Entry
from lab.engine.record._builtin_footprints import GENERATOR_TYPES, PURE_BUILTINS, READ_ONLY_METHODS, RESUMING
from lab.engine.record._values import CLASS_OR_MODULE, IMMUTABLE_TYPE

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


STATELESS_MODULES = frozenset(
    {
        "json",
        "re",
        "math",
        "operator",
        "functools",
        "itertools",
        "dataclasses",
        "copy",
        "hashlib",
        "string",
        "textwrap",
        "collections",
        "typing",
        "enum",
        "abc",
        "unicodedata",
        "contextlib",
        "types",
        "keyword",
    }
)
"""Modules not under test whose functions keep no state of their own: calling one touches only its arguments."""


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
            return Kind.READS if f.__name__ in PURE_BUILTINS else Kind.OPAQUE
        if run._is_lab_object(owner):
            return Kind.TRANSPARENT
        if type(owner) in GENERATOR_TYPES and f.__name__ in RESUMING:
            return Kind.RESUMES
        return Kind.METHOD_READS if f.__name__ in READ_ONLY_METHODS else Kind.METHOD_WRITES
    func = f.__func__ if isinstance(f, types.MethodType) else f
    if isinstance(func, types.FunctionType):
        if func.__code__ in run._instrumented or func.__module__.startswith(run._transparent):
            return Kind.TRANSPARENT
        return Kind.OPAQUE
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
    the engine's own modules and those the caller says keep none, and for the standard library's modules that keep
    no state (``json``, ``math``, ...)."""
    module = getattr(f, "__module__", None) or getattr(type(f), "__module__", "")
    if module and module.split(".")[0] not in STATELESS_MODULES and not module.startswith(run._stateless):
        return (f"obj:module {module}", ANY_KEY, "w")
    return None
