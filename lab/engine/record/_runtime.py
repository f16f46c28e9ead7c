# size: the hot path whole: each access kind records inline, since a Python call per access is what it avoids
"""The hot path: the functions the rewritten code calls for every attribute, subscript, whole value and call.

The modules under test are rewritten (see :mod:`lab.engine.record._rewriter`) so that each access goes through one of
the small functions of :class:`ModuleRuntime`. While a run is being recorded, each of them:

1. at instruction granularity, makes the access a scheduling point (the policy may switch actors right before it);
2. adds ``(thing, key, mode)`` to the running step's executed footprint, where ``thing`` is a *label* of the
   object's identity (see :mod:`lab.engine.record._recording`);
3. logs the access with its file, line and the locks the actor held, for the atomicity check and for explaining
   counterexamples;
4. performs the access exactly as the original code would.

The commonest accesses record inline, without a Python call (see StepLog); everything that is a model of its own --
attribute lookups, calls into code that is not rewritten, lazy objects, deep reads -- lives in its own module.
Outside a recorded run every function here is a plain pass-through.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

import lab.engine.record._active as _active
from lab.engine.core._footprint import ANY_KEY
from lab.engine.record._calls import PARTIAL, WRAPPERS, Kind, charged_subscript, classify
from lab.engine.record._deep import DEEP_LEAF, DEEP_LEAF_OF, INERT, INERT_OF, INERT_READ_OF, read_deeply
from lab.engine.record._lazy import Iteration, use_derived
from lab.engine.record._lookups import (
    ALWAYS_PART,
    CACHED_PART,
    CLASS_PART,
    ENUM_CLASSES,
    FALLBACK_PART,
    METHOD_PART,
    PRIMITIVE_PART,
    SLOT_PART,
    STATE_HOLDER,
    SUPER_PART,
    UNLESS_SHADOWED_PART,
    attribute_owner,
    class_lookup,
    class_lookups,
    forget_classes,
    opaque_fallback,
    opaque_getter,
    owners,
    primitive_entries,
    read_primitive,
    read_super,
    read_through,
)
from lab.engine.record._runtime_calls import recorded_call
from lab.engine.record._runtime_names import NameRuntime
from lab.engine.record._values import IMMUTABLE_TYPE, INPLACE, instance_dict, key_of

_TRANSPARENT, _READS, _OPAQUE = Kind.TRANSPARENT, Kind.READS, Kind.OPAQUE
_PLAIN = frozenset({dict, list})  # subscripted by their own C slots: no call of code the lab cannot see


class ModuleRuntime(NameRuntime):
    """The functions one instrumented module calls, bound to its file so each access knows where it happened."""

    slice = builtins.slice

    def ga(self, obj: Any, name: str, line: int) -> Any:
        """``obj.name``: reads the attribute of this object, and of each class the lookup searches up to the one
        that defines it (a store to any of them would change what the read finds)."""
        run = _active.recording
        kind = type(obj)
        if run is not None and not IMMUTABLE_TYPE[kind] and getattr(run.local, "actor", None) is not None:
            found = owners.get((kind, name))
            owner, part, path = found if found is not None else attribute_owner(obj, name)
            if part is METHOD_PART and owner is not obj:
                # A method looked up: code, not state. (Re-binding a method while another actor calls it is
                # not modelled; the call itself records what the method touches.)
                return getattr(obj, name)
            where = (self._file, line)
            if part is PRIMITIVE_PART:  # Barrier.broken, Queue.queue: a stand-in primitive's own state
                return read_primitive(run, obj, name, where)
            # a slot's value is the instance's state (recorded below); what the class holds is its descriptor
            if part and part is not SLOT_PART and owner is not obj:
                if part is ALWAYS_PART:
                    descriptor = owner.__dict__[name]
                    opaque = isinstance(descriptor, property) and opaque_getter(descriptor, run)
                    return read_through(run, obj, name, path, where, opaque=obj if opaque else None)
                if part is UNLESS_SHADOWED_PART:
                    if name not in instance_dict(obj):
                        return read_through(run, obj, name, path, where)
                elif part is CLASS_PART:
                    if type(obj) in ENUM_CLASSES and name in obj._member_map_:
                        return getattr(obj, name)  # an enum's member: the enum refuses to rebind or delete it
                    known = class_lookups.get((obj, name))
                    path = known if known is not None else class_lookup(obj, name)
                    if path:
                        return read_through(run, obj, name, path, where)
                elif part is SUPER_PART:
                    return read_super(run, obj, name, where)
                elif part is FALLBACK_PART and name not in instance_dict(obj) and opaque_fallback(run, obj):
                    return read_through(run, obj, name, path, where, opaque=obj)  # a __getattr__ outside
                elif part is CACHED_PART and name not in instance_dict(obj):
                    # cached_property.__get__ (functools' code, not rewritten) runs the getter, then stores what it
                    # returned in the instance's dict: a getter under test records that store itself, when it
                    # returns (see InstrumentedModule.install); any other one takes no scheduling point the lab
                    # knows of, so the store belongs to this step
                    getter = owner.__dict__[name].func
                    stores = None if getattr(getter, "records_its_store", False) else obj
                    return read_through(run, obj, name, path, where, stores=stores)
            # Recording.access inline, for the commonest access of all (see StepLog on why no call)
            thing = run._things.get(id(obj))
            steps = run._steps
            if run.schedules:
                run.access(obj, name, "r", where)
            else:
                if thing is None:
                    thing = "obj:" + run.label(obj)
                if not steps.closed:
                    entry = (thing, name, "r")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, where, steps.locks))
            value = getattr(obj, name)
            if not IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
                label = run._labels.get(id(obj))
                run.label(value, f"{label if label is not None else run.label(obj)}.{name}")
            return value
        return getattr(obj, name)

    def stored(self, obj: Any, name: str, line: int) -> None:
        """``obj.__dict__[name]`` is about to be set by code the lab does not rewrite, with no scheduling point
        before it (``cached_property.__get__`` once the getter returns): a write, in the running step."""
        run = self._recording()
        if run is not None and not IMMUTABLE_TYPE[type(obj)]:
            thing = run._things.get(id(obj)) or "obj:" + run.label(obj)
            run.scheduler.access((thing, name, "w"), (self._file, line), schedule=False)

    def sa(self, obj: Any, name: str, line: int) -> Any:
        """Before ``obj.name = ...`` or ``del obj.name``: writes that attribute. Returns ``obj``."""
        run = _active.recording
        if run is not None and getattr(run.local, "actor", None) is not None:
            if STATE_HOLDER[type(obj)]:  # a stand-in primitive's attribute: its footprint, written
                run.scheduler.access_all(primitive_entries(obj, "w"), (self._file, line), schedule=run.schedules)
                return obj
            thing = run._things.get(id(obj))  # Recording.access inline (see StepLog on why no call)
            steps = run._steps
            if run.schedules:
                run.access(obj, name, "w", (self._file, line))
            else:
                if thing is None:
                    thing = "obj:" + run.label(obj)
                if not steps.closed:
                    entry = (thing, name, "w")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))
        if isinstance(obj, type):
            forget_classes()  # a class attribute may now be found elsewhere in some MRO
        return obj

    def gi(self, obj: Any, key: Any, line: int) -> Any:
        """``obj[key]``: reads that key of a dict (a mapping with ``__missing__``, a defaultdict or any subclass of
        one, may insert it: a write), all of anything else."""
        run = _active.recording
        if run is not None and not IMMUTABLE_TYPE[type(obj)] and getattr(run.local, "actor", None) is not None:
            kind = type(obj)
            plain = kind is dict or kind is list
            if not plain and charged_subscript(run, obj, key, "__getitem__", self._file, line):
                return obj[key]  # a ChainMap's, say: code the lab cannot see
            part = key_of(obj, key, run)
            mode = "r" if plain or getattr(kind, "__missing__", None) is None else "w"
            run.access(obj, part, mode, (self._file, line))
            value = obj[key]
            if not IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
                run.label(value, f"{run.label(obj)}{part if part != ANY_KEY else '[' + ANY_KEY + ']'}")
            return value
        return obj[key]

    def sd(self, obj: Any, key: Any, line: int) -> Any:
        """Before ``del obj[key]``: writes that key of a dict, all of a list (the items after it move). Returns
        ``key``."""
        run = self._recording()
        if run is not None and not IMMUTABLE_TYPE[type(obj)]:
            if type(obj) not in _PLAIN and charged_subscript(run, obj, key, "__delitem__", self._file, line):
                return key
            part = ANY_KEY if type(obj) is list else key_of(obj, key, run)
            run.access(obj, part, "w", (self._file, line))
        return key

    def si(self, obj: Any, key: Any, line: int) -> Any:
        """Before ``obj[key] = ...`` or ``del obj[key]``: writes that key. Returns ``key``."""
        run = self._recording()
        if run is not None and not IMMUTABLE_TYPE[type(obj)]:
            if type(obj) not in _PLAIN and charged_subscript(run, obj, key, "__setitem__", self._file, line):
                return key
            run.access(obj, key_of(obj, key, run), "w", (self._file, line))
        return key

    def rv(self, value: Any, line: int) -> Any:
        """A value read as a whole (iterated, compared, tested for truth, formatted). Returns ``value``."""
        if IMMUTABLE_TYPE[type(value)]:
            return value
        run = _active.recording
        if run is not None and getattr(run.local, "actor", None) is not None:
            thing = run._things.get(id(value))  # Recording.access inline (see StepLog on why no call)
            steps = run._steps
            if run.schedules:
                run.access(value, ANY_KEY, "r", (self._file, line))
            else:
                if thing is None:
                    thing = "obj:" + run.label(value)
                if not steps.closed:
                    entry = (thing, ANY_KEY, "r")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))
            if run._derived:
                use_derived(run, (value,), (self._file, line))  # ``k in d.keys()``: a read of ``d`` too
        return value

    def it(self, iterable: Any, line: int) -> Any:
        """The iterable of a ``for`` loop or of a comprehension's ``for`` clause: ``iter(iterable)``, made at once
        (where Python's own ``GET_ITER`` runs, raising what it raises). Inside a recorded actor, and unless the
        iterable cannot change (a tuple, a string, a range), an iterator that records each step of the loop as it
        is taken (see :class:`Iteration`): a loop reads its container at every iteration, not once at its start,
        so another actor's write between two iterations (a ``pop`` that makes it skip an item, an insertion that
        breaks a dict's iteration) conflicts with the loop's next step."""
        iterator = iter(iterable)
        run = _active.recording
        if run is None or IMMUTABLE_TYPE[type(iterable)] or getattr(run.local, "actor", None) is None:
            return iterator
        return Iteration(run, iterable, iterator, (self._file, line))

    def rd(self, value: Any, line: int) -> Any:
        """A value Python reads deeply: compared (``==``, ``<``, ``in``: containers compare their elements) or
        formatted (an f-string formats a container's elements). Reads ``value`` and everything
        :func:`deep_entries` finds in it. Returns ``value``."""
        kind = type(value)
        if DEEP_LEAF[kind]:
            return value
        run = _active.recording
        if run is None or getattr(run.local, "actor", None) is None:
            return value
        if (kind is tuple or kind is frozenset) and all(map(DEEP_LEAF_OF, map(type, value))):
            return value  # strings, numbers, enum members, told without a Python call per item
        read_deeply(run, (value,), (self._file, line))
        return value

    def cm(self, manager: Any, line: int) -> Any:
        """A ``with`` item: a context manager the lab cannot see writes itself on entry and exit."""
        run = self._recording()
        if run is not None and not run._is_lab_object(manager):
            enter = getattr(type(manager), "__enter__", None)
            if getattr(enter, "__code__", None) not in run._instrumented:
                run.access(manager, ANY_KEY, "w", (self._file, line))
        return manager

    def iop(self, op: str, left: Any, right: Any, line: int) -> Any:
        """``left op= right``: in place for mutable values (a write of ``left``), reading ``right``."""
        run = self._recording()
        if run is not None:
            where = (self._file, line)
            if not IMMUTABLE_TYPE[type(right)]:
                run.access(right, ANY_KEY, "r", where)
            if not IMMUTABLE_TYPE[type(left)]:
                run.access(left, ANY_KEY, "w", where)
        return INPLACE[op](left, right)

    def call(self, line: int, f: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``f(*args, **kwargs)``, recording what a call the lab cannot see into may touch."""
        run = _active.recording
        if run is None or getattr(run.local, "actor", None) is None:
            return f(*args, **kwargs)
        kind = None  # the usual callees are looked up without a Python call (see kind_key)
        callee = type(f)
        if callee is types.MethodType:
            kind = run._kinds.get(f.__func__)
        elif callee is types.FunctionType:
            kind = run._kinds.get(f)
        elif callee is types.BuiltinFunctionType:
            owner = f.__self__
            kind = run._kinds.get(f if owner is None or type(owner) is types.ModuleType else (type(owner), f.__name__))
        elif callee in WRAPPERS:
            kind = run._kinds.get((callee, getattr(f, "__name__", "")))
        elif isinstance(f, type):
            kind = run._kinds.get(f)
        else:  # a callable object: classified by its type
            if callee is PARTIAL or (isinstance(f, PARTIAL) and callee.__call__ is PARTIAL.__call__):
                # calling a partial is calling its function with its arguments and keywords first: charged so
                return self.call(line, f.func, *f.args, *args, **{**f.keywords, **kwargs})
            kind = run._kinds.get((callee, "__call__"))  # not the class's own key: calling it makes one
        if kind is None:
            kind = classify(run, f)
        if kind == _TRANSPARENT:
            return f(*args, **kwargs)
        if kind == _READS:
            inert = INERT_READ_OF
        elif kind != _OPAQUE and INERT[type(getattr(f, "__self__", None))]:
            inert = INERT_OF
        else:
            return recorded_call(self, run, line, kind, f, args, kwargs)
        # a built-in that reads (handed only numbers, strings, enum members and classes), or a built-in's method
        # (those, but classes, and its receiver too): it touches nothing the lab records (``isinstance(text, str)``,
        # ``text.encode()``); what recorded_call finds out value by value, said here -- the commonest shapes (no
        # argument, one, two) without building an iterator
        if not kwargs:
            count = len(args)
            if count == 0:
                return f()
            if count == 1:
                if inert(type(args[0])):
                    return f(*args)
            elif count == 2:
                if inert(type(args[0])) and inert(type(args[1])):
                    return f(*args)
            elif all(map(inert, map(type, args))):
                return f(*args)
        elif all(map(inert, map(type, args))) and all(map(inert, map(type, kwargs.values()))):
            return f(*args, **kwargs)
        return recorded_call(self, run, line, kind, f, args, kwargs)
