# size: grown by accretion: the object walk that labels state (_Walk, _children, _key_of) should leave the hooks
"""What the instrumented code calls: every read and write of shared state, recorded by object identity as it runs.

The modules under test are rewritten (see :mod:`lab.engine.record._rewriter`) so that each attribute, subscript, global,
closure-cell access and each call goes through one of the small functions of :class:`ModuleRuntime`. While a run is
being recorded, each of them:

1. at instruction granularity, makes the access a scheduling point (the policy may switch actors right before it);
2. adds ``(thing, key, mode)`` to the running step's executed footprint, where ``thing`` is a *label* of the
   object's identity (``obj:self.session._history``), never the name of the variable that happened to hold it;
3. logs the access with its file, line and the locks the actor held, for the atomicity check and for explaining
   counterexamples;
4. performs the access exactly as the original code would.

Labels are assigned per run: objects reachable from the scenario when its actors start are named by the path that
reaches them (``self.session._receipts``), and an object first met later is named by the access that produced it
(``self.store.items[0]``), or failing that by the actor and a counter. A label is kept for the object's identity for
the whole run and the object is kept alive meanwhile, so an identity is never reused for another object.

Calls are classified once per callee. Code under test records its own accesses; the lab's primitives are scheduling
points with their own footprints; C functions that only read (``len``, ``sorted``, ``dict.get``) read their
arguments (and when one returns a lazy object -- an iterator, a ``map``, a dict view -- each later use of it reads
them again, see :meth:`Recording.derive`); anything else the lab cannot see -- a C method that mutates
(``list.append``), a function of a module not under test -- counts as a write of its receiver and of every mutable
argument, for as long as the call lasts.

Outside a recorded run (no :class:`Recording` active, or a thread that is not an actor) every function here is a
plain pass-through, so instrumented code behaves exactly like the original.

Over 300 lines: the runtime the rewritten code calls, the labels and the call classification it needs are one
hot path, kept together so that it can be read (and kept fast) in one place.
"""

from __future__ import annotations

import _pickle
import builtins
import contextlib
import copy
import enum
import functools
import json
import marshal
import operator
import types
import weakref
from collections import defaultdict, deque
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from lab import hooks
from lab.engine.core._footprint import ANY_KEY, EVERYTHING, Entry
from lab.engine.core._scheduler import Scheduler

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

_METHODS = (
    types.FunctionType,
    staticmethod,
    classmethod,
    types.BuiltinFunctionType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
)


class _ImmutableTypes(dict[type, bool]):
    """Type -> whether no step can change its values. A miss works the answer out once; a hit is a dictionary
    lookup without a Python call (``_IMMUTABLE_TYPE[type(x)]``), which the recording path makes for every access."""

    def __missing__(self, kind: type) -> bool:
        known = kind in _IMMUTABLE or issubclass(kind, enum.Enum)
        self[kind] = known
        return known


_IMMUTABLE_TYPE = _ImmutableTypes()


def _immutable(value: object) -> bool:
    """True for values no step can change: numbers, strings, tuples, enum members, functions (cached per type)."""
    return _IMMUTABLE_TYPE[type(value)]


_PURE_BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "bool",
        "callable",
        "chr",
        "divmod",
        "enumerate",
        "filter",
        "format",
        "frozenset",
        "hash",
        "hex",
        "id",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "map",
        "max",
        "min",
        "oct",
        "ord",
        "pow",
        "repr",
        "reversed",
        "round",
        "sorted",
        "sum",
        "zip",
        "type",
        "str",
        "int",
        "float",
        "tuple",
        "list",
        "dict",
        "set",
        "bytes",
        "print",
        "dumps",
        "loads",
        "deepcopy",
        "copy",
    }
)
"""C functions that read their arguments and change none of them (``print`` writes only to the terminal)."""

_READ_ONLY_METHODS = frozenset(
    {
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "count",
        "index",
        "locked",
        "is_set",
        "__len__",
        "__contains__",
        "__getitem__",
        "__iter__",
        "startswith",
        "endswith",
        "join",
        "split",
        "strip",
        "format",
        "encode",
        "decode",
        "issubset",
        "issuperset",
        "isdisjoint",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__repr__",
        "__str__",
        "__format__",
    }
)
"""Methods of built-in types that only read their receiver."""

_STATELESS_MODULES = frozenset(
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


class _Kind:
    TRANSPARENT = 0  # code under test or a lab primitive: it records (or schedules) for itself
    READS = 1  # a C function that only reads its arguments
    METHOD_READS = 2  # a read-only method of a built-in type: reads its receiver
    METHOD_WRITES = 3  # a mutating method of a built-in type: writes its receiver, reads its arguments
    OPAQUE = 4  # code the lab cannot see: writes its receiver, every mutable argument, and its module's state


_weak_ref = weakref.ref
_partial = functools.partial


def _forgetter(
    labels: dict[int, str],
    things: dict[int, str],
    instance_dicts: set[int],
    weak: dict[int, object],
    owned: dict[int, dict[str, Any]],
) -> Callable[[int, object], None]:
    """The callback of a recording's weak references: the object ``key`` names died, so its id and its attribute
    dict's may now be another object's, which must get a label of its own (a dict that outlives its owner is
    labelled again when next met). A label never spells an address: a new object's label depends only on the
    accesses that met it, never on whether its address was used before.

    A closure over the recording's tables, not a bound method: a bound method in each weak reference's callback
    would make a cycle of the recording that only the garbage collector, paused during a run, could free.
    Weakly held, rather than kept alive for the run: a program's ``WeakValueDictionary`` entry must vanish, and its
    ``__del__`` run, when the program drops its last reference, in the step that drops it, as without the lab.
    """

    def forget(key: int, _ref: object) -> None:
        labels.pop(key, None)
        things.pop(key, None)
        weak.pop(key, None)
        attributes = owned.pop(key, None)
        if attributes is not None:
            inner = id(attributes)
            if labels.get(inner) is not None and inner in instance_dicts:
                labels.pop(inner, None)
                things.pop(inner, None)
                instance_dicts.discard(inner)

    return forget


class Recording:
    """The state of one recorded run: the scheduler, object labels, and the granularity's scheduling rule."""

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        every_access_schedules: bool,
        instrumented: AbstractSet[types.CodeType],
        transparent_modules: tuple[str, ...] = ("lab.engine", "lab.scenarios.base"),
    ) -> None:
        self.scheduler = scheduler
        self.local = scheduler.local  # ``getattr(local, "actor", None)``: is the calling thread an actor?
        self.schedules = every_access_schedules
        self._steps = scheduler.steps
        self._instrumented = instrumented
        self._transparent = transparent_modules
        self._labels: dict[int, str] = {}
        self._things: dict[int, str] = {}
        self._instance_dicts: set[int] = set()
        self._alive: list[object] = []
        """What must stay alive for its id to stay its own: objects no weak reference can follow (lists, dicts)."""
        self._weak: dict[int, object] | None = {}
        """id -> a weak reference to the labelled object, whose callback forgets its labels when it dies."""
        self._owned: dict[int, dict[str, Any]] = {}
        """id of a weakly held object -> its attribute dict, kept while the owner lives (it keeps it alive anyway)."""
        self._forget = _forgetter(self._labels, self._things, self._instance_dicts, self._weak, self._owned)
        self._counters: dict[str, int] = {}
        self._derived: dict[int, _Derived] = {}
        """id of a lazy object made by a built-in (an iterator, a ``map``, a dict view) -> what using it touches."""
        codes = frozenset(instrumented)  # the same frozenset every run of a scenario: its hash is computed once
        kinds = _KINDS.get(codes)
        if kinds is None or len(kinds) > _KINDS_KEPT:
            kinds = _KINDS[codes] = {}
        self._kinds = kinds

    def close(self) -> None:
        """The run is over: let go of every object kept alive for its labels. Kept, an exception the code under
        test raised would hold, through its traceback, the frames that hold this recording: a cycle with the whole
        run in it that only the garbage collector could free."""
        self._alive.clear()
        if self._weak is not None:
            self._weak.clear()  # first: a weak reference gone calls back no more
        self._owned.clear()
        self._labels.clear()
        self._things.clear()
        self._instance_dicts.clear()
        self._derived.clear()

    # -- labels ----------------------------------------------------------------------------------------------------

    def name_roots(self, roots: dict[str, object], *, modules: tuple[types.ModuleType, ...] = ()) -> None:
        """Label every object reachable from ``roots`` and from the namespaces of ``modules`` by its path, breadth
        first, in a schedule-independent order: the scenario's state, module globals, what functions capture in
        closures and default arguments, what bound methods are bound to, class-level data.

        An object first met during the run is labelled by the access that reached it, or else as made by the actor
        that met it; naming everything that exists beforehand keeps the second kind to objects really made during
        the run, which is what lets the atomicity check treat them as private to the step that made them.

        The modules' part is walked once per process and reused while every module-level name still holds the same
        object and everything the walk went through still holds what it held (module state outlives runs, and a
        ``setup()`` may put a fresh list in a module's dict or rebind a class attribute: reusing a stale walk would
        leave that list to be labelled by whichever access meets it first, a label that then depends on the
        schedule, and the reduction compares labels across runs); the scenario's part is walked every run, but it
        does not walk again
        into the classes and functions the modules' walk went through (a scenario reaches its session class and
        every method of it): all it could find there is named already.
        """
        owners = frozenset(module.__name__ for module in modules)
        namespaces = tuple((tuple(vars(module)), tuple(vars(module).values())) for module in modules)
        cached = _module_walks.get(owners)
        if cached is None or not _same_namespaces(cached.namespaces, namespaces) or not _unchanged(cached.parts):
            walk = _Walk(owners, snapshot=True)
            found = walk.run(
                [
                    (f"{module.__name__}.{name}", value)
                    for module in modules
                    for name, value in list(vars(module).items())
                    if not name.startswith("__")
                ]
            )
            cached = _module_walks[owners] = _ModuleWalk(
                namespaces, found, walk.expanded if walk.complete else {}, _snapshot(walk.parts)
            )
        if self._labels or not self._keep_kept(cached):
            for obj, path in cached.found:
                if id(obj) not in self._labels:
                    self._keep(obj, path)
        for module in modules:
            self._name_globals(module)
        for obj, path in _Walk(owners, known=self._labels, expanded=cached.expanded).run(list(roots.items())):
            self._keep(obj, path)

    def _name_globals(self, module: types.ModuleType) -> None:
        """Name a module's namespace dict as the module's globals: ``globals()["x"]``, ``module.__dict__["x"]`` and
        ``global x`` are one piece of state, and the rewritten code records the last as (``obj:module M``, ``x``)."""
        namespace = vars(module)
        name = f"module {module.__name__}"
        self._labels[id(namespace)] = name
        self._things[id(namespace)] = "obj:" + name
        self._instance_dicts.add(id(namespace))
        self._alive.append(namespace)

    def _keep_kept(self, cached: _ModuleWalk) -> bool:
        """Label what the modules' walk found, in a recording that has labelled nothing yet, by copying what doing so
        gave the last time (labels, things, instance dicts: the same for the same objects), when every object's
        instance dict is still the one it had then. False (nothing done) when one is not."""
        kept = cached.kept
        if kept is None:
            scratch = Recording.__new__(Recording)
            scratch._labels, scratch._things, scratch._instance_dicts, scratch._alive = {}, {}, set(), []
            scratch._weak = None  # the modules' walk is kept across runs, strongly (see _Kept): copied as it is
            for obj, path in cached.found:
                if id(obj) not in scratch._labels:
                    scratch._keep(obj, path)
            owning = tuple(obj for obj, _ in cached.found if _dict_slot(obj))
            kept = cached.kept = _Kept(
                scratch._labels,
                scratch._things,
                scratch._instance_dicts,
                scratch._alive,
                owning,
                tuple(map(_own_dict, owning)),
            )
        elif not all(map(operator.is_, map(_own_dict, kept.owning), kept.dicts)):
            return False
        self._labels.update(kept.labels)
        self._things.update(kept.things)
        self._instance_dicts.update(kept.instance_dicts)
        self._alive.extend(kept.alive)
        return True

    def label(self, obj: object, hint: str = "") -> str:
        """The label of ``obj``'s identity in this run, giving it ``hint`` (or a fresh name) the first time."""
        got = self._labels.get(id(obj))
        if got is not None:
            return got
        if isinstance(obj, types.ModuleType):
            name = f"module {obj.__name__}"
        elif isinstance(obj, type):
            name = f"class {obj.__module__}.{obj.__qualname__}"
        elif hint:
            name = hint
        else:
            me = getattr(self.local, "actor", None)
            actor = me.name if me is not None else "lab"
            n = self._counters.get(actor, 0) + 1
            self._counters[actor] = n
            name = f"{type(obj).__name__}#{actor}.{n}"
        # _keep inline: a run labels objects from the actors' threads, where (line granularity, 3.11) every Python
        # call is a trace event
        thing = "obj:" + name
        key = id(obj)
        self._labels[key] = name
        self._things[key] = thing
        weak = self._weak
        held = weak is not None and type(obj).__weakrefoffset__ != 0
        if held:  # followed, not kept: the program's own weak references and __del__ behave as without the lab
            weak[key] = _weak_ref(obj, _partial(self._forget, key))  # type: ignore[index]
        else:
            self._alive.append(obj)
        if type(obj).__dictoffset__ and not isinstance(obj, _CLASS_OR_MODULE):
            try:
                attributes = object.__getattribute__(obj, "__dict__")
            except AttributeError:
                return name
            if type(attributes) is dict and id(attributes) not in self._labels:
                self._labels[id(attributes)] = name
                self._things[id(attributes)] = thing
                self._instance_dicts.add(id(attributes))
                if held:
                    self._owned[key] = attributes
                else:
                    self._alive.append(attributes)
        return name

    def _keep(self, obj: object, name: str) -> None:
        """Label ``obj`` (and its attribute dict, the same state) ``name``, and keep it alive (as :meth:`label`)."""
        thing = "obj:" + name
        key = id(obj)
        self._labels[key] = name
        self._things[key] = thing
        weak = self._weak
        held = weak is not None and type(obj).__weakrefoffset__ != 0
        if held:  # the identity stays this object's while it lives; its labels go when it dies (see label)
            weak[key] = _weak_ref(obj, _partial(self._forget, key))  # type: ignore[index]
        else:
            self._alive.append(obj)  # the identity stays this object's for the whole run
        if type(obj).__dictoffset__ and not isinstance(obj, _CLASS_OR_MODULE):
            try:
                attributes = object.__getattribute__(obj, "__dict__")
            except AttributeError:
                return
            if type(attributes) is dict and id(attributes) not in self._labels:
                # ``vars(obj)["x"]`` and ``obj.x`` are one piece of state: the dict is labelled as its owner
                self._labels[id(attributes)] = name
                self._things[id(attributes)] = thing
                self._instance_dicts.add(id(attributes))
                if held:
                    self._owned[key] = attributes
                else:
                    self._alive.append(attributes)

    def _is_lab_object(self, obj: object) -> bool:
        return type(obj).__module__.startswith(self._transparent)

    # -- recording -------------------------------------------------------------------------------------------------

    def access(self, obj: object, key: str, mode: str, where: tuple[str, int], hint: str = "") -> None:
        """Record one access of ``obj`` (part ``key``) by the calling actor, a scheduling point if so configured."""
        thing = self._things.get(id(obj))
        if thing is None:
            thing = "obj:" + self.label(obj, hint)
        entry = (thing, key, mode)
        if self.schedules:
            self.scheduler.access(entry, where, schedule=True)
            return
        steps = self._steps  # StepLog.accessed, inline: no Python call per access (see StepLog)
        if not steps.closed:
            steps.current.add(entry)
            steps.log.append((steps.index, steps.actor, entry, where, steps.locks))

    def note(self, entry: Entry, where: tuple[str, int], *, schedule: bool = True) -> None:
        """Record one access of a named piece of state (a module global, a closure cell), a scheduling point if so
        configured and ``schedule`` allows."""
        if self.schedules and schedule:
            self.scheduler.access(entry, where, schedule=True)
        else:
            self._steps.accessed(entry, where)

    def derive(self, lazy: object, sources: tuple[Any, ...]) -> None:
        """``lazy`` (an iterator, a ``map``, a dict view: see :data:`_LAZY_KIND`) was made by a built-in from
        ``sources`` and reads them only later, as it is used: remember what each use touches (see :class:`_Derived`).

        Flattened: a lazy object over a lazy object derives from the latter's sources too, so using the outer one
        touches the containers at the root. An iterator among the sources is advanced by each use (a write of it);
        anything else is read. ``lazy`` is kept alive for the run, so its id stays its own."""
        entries: list[Entry] = []
        calls_back = False
        derived, things = self._derived, self._things
        for value in sources:
            kind = type(value)
            if _IMMUTABLE_TYPE[kind]:
                if kind is types.FunctionType or kind is types.MethodType:
                    calls_back = True  # code applied to each item: C reads straddle the steps it may open
                elif kind is types.BuiltinMethodType:  # a built-in's method applied to each item: ``map(d.get, ks)``
                    owner = value.__self__
                    if not _IMMUTABLE_TYPE[type(owner)] and not isinstance(owner, _CLASS_OR_MODULE):
                        thing = things.get(id(owner)) or "obj:" + self.label(owner)
                        writes = value.__name__ not in _READ_ONLY_METHODS
                        entries.append((thing, ANY_KEY, "w" if writes else "r"))
                continue
            if isinstance(value, _CLASS_OR_MODULE):
                continue
            lazy_kind = _LAZY_KIND[kind]
            earlier = derived.get(id(value)) if derived else None
            if earlier is not None:
                entries.extend(earlier.entries)
                calls_back = calls_back or earlier.calls_back
            elif lazy_kind == _ITERATOR or callable(value):
                calls_back = True  # a generator or a callable object may run code under test, mid-use
            thing = things.get(id(value)) or "obj:" + self.label(value)
            entries.append((thing, ANY_KEY, "w" if lazy_kind == _ITERATOR else "r"))
        if entries:
            self._alive.append(lazy)
            before = derived.get(id(lazy))  # ``iter(it)`` is ``it``; ``d.get(k)`` may return a stored iterator
            if before is not None:
                entries.extend(before.entries)
                calls_back = calls_back or before.calls_back
            unique = tuple(dict.fromkeys(entries))
            derived[id(lazy)] = _Derived(unique, calls_back, frozenset(unique))

    def use_derived(self, values: tuple[Any, ...], where: tuple[str, int]) -> frozenset[Entry] | None:
        """Some of ``values`` may be lazy objects (see :meth:`derive`): record what using them touches, now. Returns
        that footprint when using them may call back into code under test (a ``map`` over a lambda, a ``filter`` over
        a generator), whose steps the C code's later reads then straddle: the caller holds it open across the call
        (:meth:`Scheduler.enter_opaque`). ``None`` when no value is lazy or none calls back."""
        derived = self._derived
        touched: list[Entry] = []
        calls_back = False
        for value in values:
            got = derived.get(id(value))
            if got is not None:
                touched.extend(got.entries)
                calls_back = calls_back or got.calls_back
        if not touched:
            return None
        if self.schedules:
            self.scheduler.access_all(touched, where, schedule=True)
        else:
            steps = self._steps
            for entry in touched:
                if not steps.closed:
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, where, steps.locks))
        return frozenset(touched) if calls_back else None

    def classify(self, f: object) -> int:
        """How a call of ``f`` touches shared state (cached per function, per built-in and name, or per type)."""
        key = _kind_key(f)
        kind = self._kinds.get(key)
        if kind is None:
            kind = self._kinds[key] = self._classify(f)
        return kind

    def _classify(self, f: object) -> int:
        if isinstance(f, types.BuiltinFunctionType):
            owner = f.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                return _Kind.READS if f.__name__ in _PURE_BUILTINS else _Kind.OPAQUE
            if self._is_lab_object(owner):
                return _Kind.TRANSPARENT
            return _Kind.METHOD_READS if f.__name__ in _READ_ONLY_METHODS else _Kind.METHOD_WRITES
        func = f.__func__ if isinstance(f, types.MethodType) else f
        if isinstance(func, types.FunctionType):
            if func.__code__ in self._instrumented or func.__module__.startswith(self._transparent):
                return _Kind.TRANSPARENT
            return _Kind.OPAQUE
        if isinstance(f, type):
            if f.__module__ == "builtins" or isinstance(f, enum.EnumMeta):
                return _Kind.READS  # a built-in constructor or an enum lookup reads its arguments
            if f.__module__.startswith(self._transparent):
                return _Kind.TRANSPARENT
            init = getattr(f, "__init__", None)
            code = getattr(init, "__code__", None)
            if code in self._instrumented:
                return _Kind.TRANSPARENT
            if code is None or code.co_filename == "<string>":  # object.__init__, or a dataclass's generated one
                return _Kind.READS  # it stores its arguments; a __post_init__ under test records itself
            return _Kind.OPAQUE
        if self._is_lab_object(f):
            return _Kind.TRANSPARENT
        call = type(f).__dict__.get("__call__")
        if getattr(call, "__code__", None) in self._instrumented:
            return _Kind.TRANSPARENT
        if isinstance(f, types.MethodWrapperType | types.WrapperDescriptorType | types.MethodDescriptorType):
            name = getattr(f, "__name__", "")
            return _Kind.METHOD_READS if name in _READ_ONLY_METHODS else _Kind.METHOD_WRITES
        return _Kind.OPAQUE


def _kind_key(f: object) -> object:
    """What a call's classification depends on: the function (a bound method's function); a module's built-in
    itself, or a built-in method's receiver type and name; a slot wrapper's type and name; else the callee's type."""
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
    if kind in _WRAPPERS:
        return (kind, getattr(f, "__name__", ""))
    return kind


_CLASS_OR_MODULE = (type, types.ModuleType)
"""``isinstance`` against a tuple made once (``type | types.ModuleType`` would build a union on every call)."""
_PLAIN_CALLEES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, type)

_ENUM_CLASSES = frozenset({enum.EnumType})
"""The metaclass of enums: an object of this type is an enum class, whose members never change."""

_WRAPPERS = frozenset({types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType})
_KINDS: dict[frozenset[types.CodeType], dict[object, int]] = {}
"""Classifications, kept across runs for each set of instrumented code objects (which live as long as the process)."""
_KINDS_KEPT = 4096
"""At most this many per set: functions made afresh in every run would otherwise pile up."""

_active: Recording | None = None


@dataclass(frozen=True, slots=True)
class _Derived:
    """What using a lazy object touches: a read of each container it reads from, a write of each iterator it
    advances (see :meth:`Recording.derive`)."""

    entries: tuple[Entry, ...]
    calls_back: bool
    """Whether using it may run code under test (a function it applies, a generator it advances) between its reads."""
    footprint: frozenset[Entry]


_NOT_LAZY, _VIEW, _ITERATOR = 0, 1, 2
_VIEW_TYPES = frozenset({type({}.keys()), type({}.values()), type({}.items())})


class _LazyKinds(dict[type, int]):
    """Type -> whether a built-in's result of this type reads its sources only later, as it is used: a dict view
    (:data:`_VIEW`: a read of the dict each time) or an iterator (:data:`_ITERATOR`: ``iter``, ``enumerate``,
    ``map``, ``filter``, ``zip``, ``reversed``, itertools, a container's ``__iter__``), else :data:`_NOT_LAZY`."""

    def __missing__(self, kind: type) -> int:
        if kind in _VIEW_TYPES:
            lazy = _VIEW
        elif callable(getattr(kind, "__next__", None)):
            lazy = _ITERATOR
        else:
            lazy = _NOT_LAZY
        self[kind] = lazy
        return lazy


_LAZY_KIND = _LazyKinds()


@dataclass(frozen=True)
class _Kept:
    """What labelling a modules' walk's objects did to an empty recording, and the instance dicts it depended on."""

    labels: dict[int, str]
    things: dict[int, str]
    instance_dicts: set[int]
    alive: list[object]
    owning: tuple[object, ...]
    """The objects whose type gives them a ``__dict__`` slot..."""
    dicts: tuple[object, ...]
    """... and what reading it gave (``None`` for nothing, or no dict): the same objects keep the same labels."""


@dataclass
class _ModuleWalk:
    """The walk of some modules' namespaces, valid while each namespace holds the same names and objects."""

    namespaces: tuple[tuple[tuple[str, ...], tuple[object, ...]], ...]
    found: list[tuple[object, str]]
    expanded: dict[int, tuple[int, object]]
    parts: _Snapshot
    """What the walk read of each object it went through (see :func:`_parts`)."""
    kept: _Kept | None = None
    """Labelling ``found`` in an empty recording, worked out once (see :meth:`Recording._keep_kept`)."""


def _dict_slot(obj: object) -> bool:
    """Whether ``Recording._keep`` reads ``obj``'s ``__dict__`` (the same test)."""
    return bool(type(obj).__dictoffset__) and not isinstance(obj, _CLASS_OR_MODULE)


def _own_dict(obj: object) -> object:
    """What ``Recording._keep`` finds as ``obj``'s own attribute dict: the dict, or ``None``."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return attributes if type(attributes) is dict else None


_module_walks: dict[frozenset[str], _ModuleWalk] = {}


def _same_namespaces(
    old: tuple[tuple[tuple[str, ...], tuple[object, ...]], ...],
    new: tuple[tuple[tuple[str, ...], tuple[object, ...]], ...],
) -> bool:
    """The same names bound to the very same objects (compared without a Python call per name)."""
    return len(old) == len(new) and all(
        names == new_names and len(values) == len(new_values) and all(map(operator.is_, values, new_values))
        for (names, values), (new_names, new_values) in zip(old, new, strict=True)
    )


class _Walk:
    """A breadth-first walk from named roots through what objects hold, without running any of the program's code.

    ``expanded`` (an earlier walk's :attr:`expanded`) names classes and functions already gone through, each at a
    depth: one met again no shallower is not gone through twice (the object is kept, so its id stays its own).
    With ``snapshot``, :attr:`parts` keeps what each object gone through held, so that a later run can tell whether
    the same walk would find the same objects without walking again.
    """

    def __init__(
        self,
        owners: frozenset[str],
        known: dict[int, str] | None = None,
        expanded: dict[int, tuple[int, object]] | None = None,
        *,
        snapshot: bool = False,
    ) -> None:
        self._owners = owners
        self._known = known if known is not None else {}
        self._before = expanded if expanded is not None else {}
        self._snapshot = snapshot
        self.expanded: dict[int, tuple[int, object]] = {}
        """id -> (depth, object) of each class, function or method wrapper this walk went through."""
        self.parts: list[tuple[object, tuple[object, ...]]] = []
        """With ``snapshot``: each object gone through, and :func:`_parts` of it at the time."""
        self.complete = True
        """False when the walk stopped at its limit with objects still to go through."""

    def run(self, roots: list[tuple[str, object]]) -> list[tuple[object, str]]:
        """The objects found, each with the path that reached it first."""
        found: list[tuple[object, str]] = []
        seen: set[int] = set()
        before, known, sorts = self._before, self._known, _WALK_SORT
        queue: deque[tuple[str, object, int]] = deque((path, obj, 0) for path, obj in roots)
        while queue and len(found) < 20_000:
            path, obj, depth = queue.popleft()
            key = id(obj)
            if key in seen or key in known:
                continue
            gone_through = before.get(key)
            if gone_through is not None and gone_through[0] <= depth:
                continue
            seen.add(key)
            kind = type(obj)
            sort = sorts[kind]
            if sort is _Sort.PASS:
                continue
            children: list[tuple[str, object]]
            if sort is _Sort.WRAPPER:
                children = [(path, obj.__func__)]  # type: ignore[attr-defined]
            elif sort is _Sort.CLASS:
                if obj.__module__ not in self._owners or issubclass(obj, enum.Enum):  # type: ignore[arg-type]
                    continue  # another module's class, or an enum (its members cannot change)
                children = [
                    (f"{path}.{name}", value) for name, value in list(vars(obj).items()) if not name.startswith("__")
                ]  # class-level data of a module under test
            elif sort is _Sort.CODE:
                if kind is types.FunctionType and getattr(obj, "__module__", None) not in self._owners and depth == 0:
                    continue  # a function a module under test imported: not its state
                children = _held_by_code(path, obj)  # what a function or bound method holds, not itself
            else:
                found.append((obj, path))
                if depth < 6:
                    if self._snapshot:  # only what the walk reads: an object it goes through
                        self.parts.append((obj, _parts(obj)))
                    queue.extend(_children(path, obj, depth + 1))
                continue
            if self._snapshot:
                self.parts.append((obj, _parts(obj)))
            self.expanded[id(obj)] = (depth, obj)
            queue.extend((child_path, child, depth + 1) for child_path, child in children)
        self.complete = not queue
        return found


_LAB_MODULES = ("lab.engine", "lab.scenarios.base")


class _Sort(enum.Enum):
    """What the walk does with an object, which its type alone decides (but for a class: whose it is)."""

    PASS = "pass"  # the lab's machinery, a module, a descriptor, an immutable value: nothing of the program's state
    WRAPPER = "wrapper"  # a static or class method: go on to its function
    CLASS = "class"  # a class: its class-level data, when a module under test defines it
    CODE = "code"  # a function or bound method: what it captures or is bound to
    DATA = "data"  # the program's state: named, and gone through


class _WalkSorts(dict[type, _Sort]):
    """Type -> :class:`_Sort`, worked out once per type (the walk meets hundreds of objects a run)."""

    def __missing__(self, kind: type) -> _Sort:
        if kind.__module__.startswith(_LAB_MODULES) or issubclass(kind, types.ModuleType):
            sort = _Sort.PASS
        elif issubclass(kind, staticmethod | classmethod):
            sort = _Sort.WRAPPER
        elif issubclass(kind, property | types.MemberDescriptorType | types.GetSetDescriptorType):
            sort = _Sort.PASS  # the descriptor itself holds no state of the program
        elif issubclass(kind, type):
            sort = _Sort.CLASS
        elif kind in _CODE_LIKE:
            sort = _Sort.CODE
        elif kind is not tuple and _IMMUTABLE_TYPE[kind]:
            sort = _Sort.PASS
        else:
            sort = _Sort.DATA
        self[kind] = sort
        return sort


_WALK_SORT = _WalkSorts()


def _opaque_getter(descriptor: property, run: Recording) -> bool:
    """True for a property whose getter is code the lab cannot see (and that may keep state of its own)."""
    getter = descriptor.fget
    if getattr(getter, "__code__", None) in run._instrumented:
        return False
    module = getattr(getter, "__module__", "") or ""
    stateless = module.split(".")[0] in _STATELESS_MODULES or module in ("builtins", "enum")
    return not (stateless or module.startswith("lab."))


def start_recording(recording: Recording | None) -> None:
    """Make ``recording`` the run being recorded (``None`` stops recording)."""
    global _active
    _active = recording


_CODE_LIKE = frozenset({types.FunctionType, types.MethodType, types.BuiltinMethodType})


def _held_by_code(path: str, obj: object) -> list[tuple[str, object]]:
    """What a function captures (closure cells, default arguments) or a bound method is bound to."""
    found: list[tuple[str, object]] = []
    if isinstance(obj, types.FunctionType):
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=False):
            with contextlib.suppress(ValueError):  # an empty cell has no contents
                found.append((f"{path}.<{name}>", cell.cell_contents))
        for i, value in enumerate(obj.__defaults__ or ()):
            found.append((f"{path}.<default {i}>", value))
        for name, value in (obj.__kwdefaults__ or {}).items():
            found.append((f"{path}.<default {name}>", value))
    else:
        owner = getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            found.append((f"{path}.__self__", owner))
        function = getattr(obj, "__func__", None)
        if function is not None:
            found.append((f"{path}.__func__", function))
    return found


_EMPTY_CELL = object()


def _parts(obj: object) -> tuple[object, ...]:
    """Everything the walk reads of ``obj`` to find what it holds (:func:`_children`, :func:`_held_by_code`, a
    class's dict, a wrapper's function), as one tuple compared by identity: while none of it changes, a walk through
    ``obj`` finds the same objects under the same paths. Built with C-level copies, a handful per object; functions
    and classes first, the most of what a modules' walk goes through."""
    kind = type(obj)
    if kind is types.FunctionType:
        closure = obj.__closure__  # type: ignore[attr-defined]
        keywords = obj.__kwdefaults__  # type: ignore[attr-defined]
        held: tuple[object, ...] = (obj.__defaults__, keywords)  # type: ignore[attr-defined]  # a default's contents are its own parts
        if closure:
            held += tuple(map(_cell_value, closure))
        if keywords:
            held += (*keywords, *keywords.values())
        return held
    if isinstance(obj, type):
        namespace = vars(obj)
        return (*namespace, *namespace.values())
    if isinstance(obj, dict):
        return (*dict.keys(obj), *dict.values(obj))
    if isinstance(obj, list | tuple | deque):
        return tuple(obj)
    if kind in _CODE_LIKE or isinstance(obj, staticmethod | classmethod):
        return (getattr(obj, "__self__", None), getattr(obj, "__func__", None))
    attributes = _own_dict(obj)
    held = (*attributes, *attributes.values()) if isinstance(attributes, dict) else ()
    slots = _SLOTS.get(kind)
    if slots is None:
        slots = _SLOTS[kind] = _slots_of(kind)
    for _, descriptor in slots[1]:
        try:
            held += (descriptor.__get__(obj, kind),)
        except AttributeError:
            held += (_EMPTY_CELL,)
    return held


def _cell_value(cell: types.CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY_CELL


@dataclass(frozen=True)
class _Snapshot:
    """What a modules' walk read, arranged to be checked cheaply every run (see :func:`_unchanged`)."""

    plain: tuple[object, ...]
    """The functions that capture nothing and have no keyword-only defaults (most of them)..."""
    defaults: tuple[object, ...]
    """... and their ``__defaults__`` then (a default's contents are its own parts, below)."""
    others: tuple[tuple[object, tuple[object, ...]], ...]
    """Every other object gone through, with :func:`_parts` of it then."""


def _snapshot(parts: list[tuple[object, tuple[object, ...]]]) -> _Snapshot:
    plain = tuple(obj for obj, held in parts if type(obj) is types.FunctionType and len(held) == 2 and held[1] is None)
    kept = {id(obj) for obj in plain}
    return _Snapshot(
        plain,
        tuple(held[0] for obj, held in parts if id(obj) in kept),
        tuple((obj, held) for obj, held in parts if id(obj) not in kept),
    )


_DEFAULTS = operator.attrgetter("__defaults__")
_KWDEFAULTS = operator.attrgetter("__kwdefaults__")


def _unchanged(snapshot: _Snapshot) -> bool:
    """Whether every object a walk went through still holds, by identity, what it held then: the plain functions
    through C-level maps of their defaults (they run every run, over every function of the modules under test),
    the rest one by one."""
    plain = snapshot.plain
    if not all(map(operator.is_, map(_DEFAULTS, plain), snapshot.defaults)):
        return False
    if any(map(_KWDEFAULTS, plain)):
        return False
    for obj, held in snapshot.others:
        now = _parts(obj)
        if len(now) != len(held) or not all(map(operator.is_, now, held)):
            return False
    return True


def _children(path: str, obj: object, depth: int) -> list[tuple[str, object, int]]:
    """What ``obj`` holds, with the path to each part (and ``depth``, for the walk's queue), read without running
    any of the program's code.

    A part the walk would pass over at once (a number, a string: immutable, and neither a tuple nor code) is left
    out here, before its path is written: the walk runs every run, and most parts are such values."""
    found: list[tuple[str, object, int]] = []
    if isinstance(obj, dict):
        items: list[tuple[object, object]] = list(dict.items(obj))  # dict's own view: no overridden items() runs
        for key, value in items:
            kind = type(value)
            if kind is tuple or kind in _CODE_LIKE or not _IMMUTABLE_TYPE[kind]:
                found.append((f"{path}[{_key_text(key)}]", value, depth))
        return found
    if isinstance(obj, list | tuple | deque):
        for i, value in enumerate(list(obj)):
            kind = type(value)
            if kind is tuple or kind in _CODE_LIKE or not _IMMUTABLE_TYPE[kind]:
                found.append((f"{path}[{i}]", value, depth))
        return found
    slots = _SLOTS.get(type(obj))
    if slots is None:
        slots = _SLOTS[type(obj)] = _slots_of(type(obj))
    if slots[0]:  # without one, reading ``__dict__`` could only raise AttributeError (slow, and for nothing)
        try:
            attributes = object.__getattribute__(obj, "__dict__")
        except AttributeError:
            attributes = {}
        if isinstance(attributes, dict):
            for name, value in list(attributes.items()):
                kind = type(value)
                if kind is tuple or kind in _CODE_LIKE or not _IMMUTABLE_TYPE[kind]:
                    found.append((f"{path}.{name}", value, depth))
    for slot, descriptor in slots[1]:
        try:
            value = descriptor.__get__(obj, type(obj))
        except AttributeError:
            continue
        kind = type(value)
        if kind is tuple or kind in _CODE_LIKE or not _IMMUTABLE_TYPE[kind]:  # as above: the walk passes the rest
            found.append((f"{path}.{slot}", value, depth))
    return found


_SLOTS: dict[type, tuple[bool, tuple[tuple[str, types.MemberDescriptorType], ...]]] = {}
"""Type -> whether some class in its MRO defines ``__dict__`` (else an instance has none to read), and its slots
and their descriptors (every class in the MRO): the walk meets the same types every run."""


def _slots_of(kind: type) -> tuple[bool, tuple[tuple[str, types.MemberDescriptorType], ...]]:
    found: list[tuple[str, types.MemberDescriptorType]] = []
    for klass in kind.__mro__:
        names = klass.__dict__.get("__slots__")
        for slot in names if isinstance(names, tuple) else ():
            descriptor = klass.__dict__.get(slot)
            if isinstance(descriptor, types.MemberDescriptorType):
                found.append((slot, descriptor))
    return bool(kind.__dictoffset__) or any("__dict__" in klass.__dict__ for klass in kind.__mro__), tuple(found)


def _key_text(key: object) -> str:
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


def _key_of(container: object, key: object, run: Recording) -> str:
    """The part of ``container`` that ``container[key]`` touches: one key of a dict, all of anything else; for an
    object's ``__dict__``, the attribute of that name."""
    if id(container) in run._instance_dicts:
        return key if type(key) is str else ANY_KEY
    if type(container) is dict or type(container) is defaultdict:
        text = _key_text(key)
        return text if text == ANY_KEY else f"[{text}]"
    return ANY_KEY


class _ClassPart(enum.IntEnum):
    """What reading ``obj.name`` reads of the class that defines ``name`` (decided by the attribute's kind)."""

    NONE = 0  # no class in the MRO defines it: the instance's own attribute, nothing of a class
    METHOD = 1  # a method looked up: code, not state
    SLOT = 2  # a slot's member descriptor: the value lives in the instance, the class holds only the descriptor
    UNLESS_SHADOWED = 3  # a plain value or a non-data descriptor: read only when the instance's dict lacks the name
    ALWAYS = 4  # a data descriptor (a property, say): it runs whatever the instance holds
    CLASS = 5  # ``obj`` is a class and its metaclass has no data descriptor ``name``: the class's own MRO decides
    SUPER = 6  # ``obj`` is a ``super()`` proxy: the MRO of the instance's class after ``__thisclass__`` decides
    CACHED = 7  # a functools.cached_property: as UNLESS_SHADOWED, and its first read writes the instance's dict


_METHOD_PART, _ALWAYS_PART, _UNLESS_SHADOWED_PART = _ClassPart.METHOD, _ClassPart.ALWAYS, _ClassPart.UNLESS_SHADOWED
_CLASS_PART, _SUPER_PART, _CACHED_PART = _ClassPart.CLASS, _ClassPart.SUPER, _ClassPart.CACHED
"""The members ``ga`` compares with, looked up once (not through the enum class on every read)."""

_IMMUTABLE_CLASS = 1 << 8
"""``Py_TPFLAGS_IMMUTABLETYPE``: a class no code can give an attribute (``object``, ``dict``...), so no store can
shadow a name behind it: a lookup that passes it need not read it."""

_owners: dict[tuple[type, str], tuple[type | None, _ClassPart, tuple[type, ...]]] = {}


def _attribute_owner(obj: object, name: str) -> tuple[type | None, _ClassPart, tuple[type, ...]]:
    """The class in ``obj``'s MRO whose namespace defines ``name``, found statically (no descriptor runs), what a
    read of ``obj.name`` reads of it, and the classes such a read searches (see :func:`_lookup_path`), whose ``name``
    it therefore reads: a class before the owner that gains ``name`` would shadow it.

    Cached per (type, name); any attribute store on a class clears the cache (:meth:`ModuleRuntime.sa`)."""
    kind = type(obj)
    found = _owners.get((kind, name))
    if found is not None:
        return found
    owner, path = _lookup_path(kind.__mro__, name)
    part = _ClassPart.NONE
    if owner is not None:
        descriptor = type(owner.__dict__[name])
        if descriptor in _METHODS:
            part = _ClassPart.METHOD
        elif descriptor is types.MemberDescriptorType:
            part = _ClassPart.SLOT
        elif hasattr(descriptor, "__set__") or hasattr(descriptor, "__delete__"):
            part = _ClassPart.ALWAYS
        elif issubclass(descriptor, functools.cached_property):
            part = _ClassPart.CACHED
        else:
            part = _ClassPart.UNLESS_SHADOWED
    if issubclass(kind, type) and part != _ClassPart.ALWAYS:
        part = _ClassPart.CLASS  # type.__getattribute__ searches the class's MRO before the metaclass's
    elif issubclass(kind, super) and owner is None:
        part = _ClassPart.SUPER
    found = _owners[(kind, name)] = (owner, part, path if part in _CLASS_VALUE_PARTS else ())
    return found


_CLASS_VALUE_PARTS = frozenset({_ClassPart.ALWAYS, _ClassPart.UNLESS_SHADOWED, _ClassPart.CACHED})
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


_class_lookups: dict[tuple[object, ...], tuple[type, ...]] = {}
"""(class, name) for ``Class.name``, (instance's class, ``__thisclass__``, name) for ``super().name`` -> the classes
that lookup reads (:func:`_class_lookup`, :func:`_super_lookup`); cleared with :data:`_owners`."""


def _class_lookup(cls: type, name: str) -> tuple[type, ...]:
    """The classes ``cls.name`` reads besides ``cls`` itself: the others of its MRO up to the one that defines
    ``name`` (none for a method: re-binding one is a documented limit)."""
    owner, path = _lookup_path(cls.__mro__, name)
    if owner is not None and type(owner.__dict__[name]) in _METHODS:
        path = ()
    found = _class_lookups[(cls, name)] = tuple(klass for klass in path if klass is not cls)
    return found


def _super_lookup(proxy: Any, name: str) -> tuple[type, ...]:
    """The classes ``super().name`` reads: the MRO of the instance's class after ``__thisclass__``, up to the one
    that defines ``name`` (none for a method, as in :func:`_class_lookup`)."""
    start: type | None = proxy.__self_class__
    this: type = proxy.__thisclass__
    if start is None:
        return ()  # an unbound super() proxy: it reads nothing through an MRO
    found = _class_lookups.get((start, this, name))
    if found is not None:
        return found
    mro = start.__mro__
    owner, path = _lookup_path(mro[mro.index(this) + 1 :] if this in mro else (), name)
    if owner is not None and type(owner.__dict__[name]) in _METHODS:
        path = ()
    found = _class_lookups[(start, this, name)] = path
    return found


def _instance_dict(obj: object) -> Any:
    """``obj``'s own attributes, read without running any of its code (empty when it has none)."""
    try:
        return object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return ()


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
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


class ModuleRuntime:
    """The functions one instrumented module calls, bound to its file so each access knows where it happened."""

    slice = builtins.slice

    def __init__(self, filename: str, module: str) -> None:
        self._file = filename
        self._module = module
        self._globals = f"obj:module {module}"  # the thing a global of this module is part of

    def _recording(self) -> Recording | None:
        run = _active
        if run is None or getattr(run.local, "actor", None) is None:
            return None
        return run

    # -- attributes -------------------------------------------------------------------------------------------------

    def ga(self, obj: Any, name: str, line: int) -> Any:
        """``obj.name``: reads the attribute of this object, and of each class the lookup searches up to the one
        that defines it (a store to any of them would change what the read finds)."""
        run = _active
        if run is not None and not _IMMUTABLE_TYPE[type(obj)] and getattr(run.local, "actor", None) is not None:
            where = (self._file, line)
            found = _owners.get((type(obj), name))
            owner, part, path = found if found is not None else _attribute_owner(obj, name)
            if part and owner is not obj:
                if part == _METHOD_PART:
                    # A method looked up: code, not state. (Re-binding a method while another actor calls it is
                    # not modelled; the call itself records what the method touches.)
                    return getattr(obj, name)
                if part == _ALWAYS_PART:
                    descriptor = owner.__dict__[name]
                    opaque = isinstance(descriptor, property) and _opaque_getter(descriptor, run)
                    return self._read_through(run, obj, name, path, where, opaque=obj if opaque else None)
                if part == _UNLESS_SHADOWED_PART:
                    if name not in _instance_dict(obj):
                        return self._read_through(run, obj, name, path, where)
                elif part == _CLASS_PART:
                    if type(obj) in _ENUM_CLASSES and name in obj._member_map_:
                        return getattr(obj, name)  # an enum's member: the enum refuses to rebind or delete it
                    known = _class_lookups.get((obj, name))
                    path = known if known is not None else _class_lookup(obj, name)
                    if path:
                        return self._read_through(run, obj, name, path, where)
                elif part == _SUPER_PART:
                    return self._read_super(run, obj, name, where)
                elif part == _CACHED_PART and name not in _instance_dict(obj):
                    # cached_property.__get__ (functools' code, not rewritten) runs the getter, then stores what it
                    # returned in the instance's dict: a getter under test records that store itself, when it
                    # returns (see InstrumentedModule.install); any other one takes no scheduling point the lab
                    # knows of, so the store belongs to this step
                    getter = owner.__dict__[name].func
                    stores = None if getattr(getter, "records_its_store", False) else obj
                    return self._read_through(run, obj, name, path, where, stores=stores)
                # a slot's value is the instance's state (recorded below); what the class holds is its descriptor
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
            if not _IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
                label = run._labels.get(id(obj))
                run.label(value, f"{label if label is not None else run.label(obj)}.{name}")
            return value
        return getattr(obj, name)

    @staticmethod
    def _read_through(
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
        lab cannot see may change whole; ``stores``: an object whose ``name`` the lookup writes."""
        things = run._things
        entries = [(things.get(id(klass)) or "obj:" + run.label(klass), name, "r") for klass in classes]
        if own:
            entries.append((things.get(id(obj)) or "obj:" + run.label(obj), name, "r"))
        if opaque is not None:
            entries.append((things.get(id(opaque)) or "obj:" + run.label(opaque), ANY_KEY, "w"))
        if stores is not None:
            entries.append((things.get(id(stores)) or "obj:" + run.label(stores), name, "w"))
        run.scheduler.access_all(entries, where, schedule=run.schedules)
        value = getattr(obj, name)
        if own and not _IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
            run.label(value, f"{run.label(obj)}.{name}")
        return value

    def _read_super(self, run: Recording, proxy: Any, name: str, where: tuple[str, int]) -> Any:
        """``super().name``: the classes after ``__thisclass__`` in the instance's MRO, up to the one that defines
        ``name`` (the proxy itself is a fresh object, no state; a property's getter the lab cannot see may change
        the instance)."""
        path = _super_lookup(proxy, name)
        if not path:
            return getattr(proxy, name)  # a method (a documented limit) or an unbound proxy
        descriptor = path[-1].__dict__.get(name)
        opaque = isinstance(descriptor, property) and _opaque_getter(descriptor, run)
        return self._read_through(run, proxy, name, path, where, own=False, opaque=proxy.__self__ if opaque else None)

    def stored(self, obj: Any, name: str, line: int) -> None:
        """``obj.__dict__[name]`` is about to be set by code the lab does not rewrite, with no scheduling point
        before it (``cached_property.__get__`` once the getter returns): a write, in the running step."""
        run = self._recording()
        if run is not None and not _IMMUTABLE_TYPE[type(obj)]:
            thing = run._things.get(id(obj)) or "obj:" + run.label(obj)
            run.scheduler.access((thing, name, "w"), (self._file, line), schedule=False)

    def sa(self, obj: Any, name: str, line: int) -> Any:
        """Before ``obj.name = ...`` or ``del obj.name``: writes that attribute. Returns ``obj``."""
        run = _active
        if run is not None and getattr(run.local, "actor", None) is not None:
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
            _owners.clear()  # a class attribute may now be found elsewhere in some MRO
            _class_lookups.clear()
        return obj

    # -- subscripts -------------------------------------------------------------------------------------------------

    def gi(self, obj: Any, key: Any, line: int) -> Any:
        """``obj[key]``: reads that key of a dict (a mapping with ``__missing__``, a defaultdict or any subclass of
        one, may insert it: a write), all of anything else."""
        run = _active
        if run is not None and not _IMMUTABLE_TYPE[type(obj)] and getattr(run.local, "actor", None) is not None:
            part = _key_of(obj, key, run)
            kind = type(obj)
            mode = "r" if kind is dict or kind is list or getattr(kind, "__missing__", None) is None else "w"
            run.access(obj, part, mode, (self._file, line))
            value = obj[key]
            if not _IMMUTABLE_TYPE[type(value)] and id(value) not in run._labels and not isinstance(value, type):
                run.label(value, f"{run.label(obj)}{part if part != ANY_KEY else '[' + ANY_KEY + ']'}")
            return value
        return obj[key]

    def si(self, obj: Any, key: Any, line: int) -> Any:
        """Before ``obj[key] = ...`` or ``del obj[key]``: writes that key. Returns ``key``."""
        run = self._recording()
        if run is not None and not _IMMUTABLE_TYPE[type(obj)]:
            run.access(obj, _key_of(obj, key, run), "w", (self._file, line))
        return key

    # -- whole values -----------------------------------------------------------------------------------------------

    def rv(self, value: Any, line: int) -> Any:
        """A value read as a whole (iterated, compared, tested for truth, formatted). Returns ``value``."""
        if _IMMUTABLE_TYPE[type(value)]:
            return value
        run = _active
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
                run.use_derived((value,), (self._file, line))  # ``k in d.keys()``: a read of ``d`` too
        return value

    def it(self, iterable: Any, line: int) -> Any:
        """The iterable of a ``for`` loop or of a comprehension's ``for`` clause: ``iter(iterable)``, made at once
        (where Python's own ``GET_ITER`` runs, raising what it raises). Inside a recorded actor, and unless the
        iterable cannot change (a tuple, a string, a range), an iterator that records each step of the loop as it
        is taken (see :class:`_Iteration`): a loop reads its container at every iteration, not once at its start,
        so another actor's write between two iterations (a ``pop`` that makes it skip an item, an insertion that
        breaks a dict's iteration) conflicts with the loop's next step."""
        iterator = iter(iterable)
        run = _active
        if run is None or _IMMUTABLE_TYPE[type(iterable)] or getattr(run.local, "actor", None) is None:
            return iterator
        return _Iteration(run, iterable, iterator, (self._file, line))

    def rd(self, value: Any, line: int) -> Any:
        """A value Python reads deeply: compared (``==``, ``<``, ``in``: containers compare their elements) or
        formatted (an f-string formats a container's elements). Reads ``value`` and everything
        :func:`_deep_entries` finds in it. Returns ``value``."""
        kind = type(value)
        if _DEEP_LEAF[kind]:
            return value
        run = _active
        if run is None or getattr(run.local, "actor", None) is None:
            return value
        if (kind is tuple or kind is frozenset) and all(map(_DEEP_LEAF_OF, map(type, value))):
            return value  # strings, numbers, enum members, told without a Python call per item
        _read_deeply(run, (value,), (self._file, line))
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
            if not _IMMUTABLE_TYPE[type(right)]:
                run.access(right, ANY_KEY, "r", where)
            if not _IMMUTABLE_TYPE[type(left)]:
                run.access(left, ANY_KEY, "w", where)
        return _INPLACE[op](left, right)

    # -- names ------------------------------------------------------------------------------------------------------

    def rg(self, name: str, line: int) -> None:
        """Before reading the module global ``name``. Returns ``None`` (the code reads the global right after)."""
        run = _active
        if run is not None and getattr(run.local, "actor", None) is not None:
            if run.schedules:
                run.note((self._globals, name, "r"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (self._globals, name, "r")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))

    def wg(self, value: Any, name: str, line: int) -> Any:
        """Before storing ``value`` in the module global ``name``. Returns ``value``."""
        run = _active
        if run is not None and getattr(run.local, "actor", None) is not None:
            if run.schedules:
                run.note((self._globals, name, "w"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (self._globals, name, "w")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))
        return value

    def rc(self, cell: str, line: int) -> None:
        """Before reading the closure variable ``cell`` (``scope.name``). Returns ``None``."""
        run = _active
        if run is not None and getattr(run.local, "actor", None) is not None:
            if run.schedules:
                run.note((f"obj:cell {self._module}.{cell}", "value", "r"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (f"obj:cell {self._module}.{cell}", "value", "r")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))

    def wc(self, value: Any, cell: str, line: int) -> Any:
        """Before storing ``value`` in the closure variable ``cell``. Returns ``value``."""
        run = _active
        if run is not None and getattr(run.local, "actor", None) is not None:
            if run.schedules:
                run.note((f"obj:cell {self._module}.{cell}", "value", "w"), (self._file, line))
            else:  # Recording.note, StepLog.accessed inline (see StepLog on why no call)
                steps = run._steps
                if not steps.closed:
                    entry = (f"obj:cell {self._module}.{cell}", "value", "w")
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, (self._file, line), steps.locks))
        return value

    def touch_global(self, name: str, line: int) -> None:
        """After a statement stored the global ``name`` through a complex target: records the write, no point."""
        run = self._recording()
        if run is not None:
            run.note((self._globals, name, "w"), (self._file, line), schedule=False)

    def touch_cell(self, cell: str, line: int) -> None:
        """After a statement stored the closure variable ``cell`` through a complex target."""
        run = self._recording()
        if run is not None:
            run.note((f"obj:cell {self._module}.{cell}", "value", "w"), (self._file, line), schedule=False)

    # -- calls ------------------------------------------------------------------------------------------------------

    def call(self, line: int, f: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``f(*args, **kwargs)``, recording what a call the lab cannot see into may touch."""
        run = _active
        if run is None or getattr(run.local, "actor", None) is None:
            return f(*args, **kwargs)
        kind = None  # the usual callees are looked up without a Python call (see _kind_key)
        callee = type(f)
        if callee is types.MethodType:
            kind = run._kinds.get(f.__func__)
        elif callee is types.FunctionType:
            kind = run._kinds.get(f)
        elif callee is types.BuiltinFunctionType:
            owner = f.__self__
            kind = run._kinds.get(f if owner is None or type(owner) is types.ModuleType else (type(owner), f.__name__))
        elif callee in _WRAPPERS:
            kind = run._kinds.get((callee, getattr(f, "__name__", "")))
        elif isinstance(f, type):
            kind = run._kinds.get(f)
        else:  # a callable object: classified by its type
            if callee is _PARTIAL or (isinstance(f, _PARTIAL) and callee.__call__ is _PARTIAL.__call__):
                # calling a partial is calling its function with its arguments and keywords first: charged so
                return self.call(line, f.func, *f.args, *args, **{**f.keywords, **kwargs})
            kind = run._kinds.get(callee)
        if kind is None:
            kind = run.classify(f)
        if kind == _Kind.TRANSPARENT:
            return f(*args, **kwargs)
        where = (self._file, line)
        # Recording.access inline below, for labelled values (see StepLog on why no call)
        things, steps = run._things, run._steps
        if kind == _Kind.READS:
            for value in (*args, *kwargs.values()) if kwargs else args:
                if type(value) in _CARRIERS:  # a callable passed along: the callee may call it
                    for entry in _passed_entries(run, value):
                        run.note(entry, where)
                elif not _IMMUTABLE_TYPE[type(value)] and not isinstance(value, _CLASS_OR_MODULE):
                    thing = things.get(id(value))
                    if run.schedules:
                        run.access(value, ANY_KEY, "r", where)
                    else:
                        if thing is None:
                            thing = "obj:" + run.label(value)
                        if not steps.closed:
                            entry = (thing, ANY_KEY, "r")
                            steps.current.add(entry)
                            steps.log.append((steps.index, steps.actor, entry, where, steps.locks))
            if id(f) in _DEEP_READERS:  # repr, sorted, hash...: read what their arguments hold, too
                _read_arguments_deeply(run, (*args, *kwargs.values()), where)
            if run._derived:
                return self._lazy_call(run, f, args, kwargs, (*args, *kwargs.values()) if kwargs else args, where)
            result = f(*args, **kwargs)
            if _LAZY_KIND[type(result)]:
                run.derive(result, (*args, *kwargs.values()) if kwargs else args)
            return result
        receiver = getattr(f, "__self__", None)
        if kind != _Kind.OPAQUE:  # a method of a built-in type, that reads or writes its receiver
            others = args
            if receiver is None or isinstance(receiver, _CLASS_OR_MODULE):
                receiver, others = (args[0], args[1:]) if args else (None, ())
            for value in (*others, *kwargs.values()) if kwargs else others:
                if type(value) in _CARRIERS:  # a callable passed along: the callee may call it
                    for entry in _passed_entries(run, value):
                        run.note(entry, where)
                elif not _IMMUTABLE_TYPE[type(value)]:
                    thing = things.get(id(value))
                    if run.schedules:
                        run.access(value, ANY_KEY, "r", where)
                    else:
                        if thing is None:
                            thing = "obj:" + run.label(value)
                        if not steps.closed:
                            entry = (thing, ANY_KEY, "r")
                            steps.current.add(entry)
                            steps.log.append((steps.index, steps.actor, entry, where, steps.locks))
            if receiver is not None and not _IMMUTABLE_TYPE[type(receiver)]:
                mode = "w" if kind == _Kind.METHOD_WRITES else "r"
                thing = things.get(id(receiver))
                if run.schedules:
                    run.access(receiver, ANY_KEY, mode, where)
                else:
                    if thing is None:
                        thing = "obj:" + run.label(receiver)
                    if not steps.closed:
                        entry = (thing, ANY_KEY, mode)
                        steps.current.add(entry)
                        steps.log.append((steps.index, steps.actor, entry, where, steps.locks))
            if getattr(f, "__name__", None) in _DEEP_METHODS_BY_NAME:  # compares or formats what it is given
                _read_arguments_deeply(run, (receiver, *others, *kwargs.values()), where)
            used = (receiver, *others, *kwargs.values()) if kwargs else (receiver, *others)
            if run._derived:
                return self._lazy_call(run, f, args, kwargs, used, where)
            result = f(*args, **kwargs)
            if _LAZY_KIND[type(result)]:
                run.derive(result, used)
            return result
        # getattr and the like are classified opaque (none is a pure built-in): by name, they touch one attribute
        by_name = f is builtins.getattr or f is builtins.hasattr or f is builtins.setattr or f is builtins.delattr
        if by_name and len(args) >= 2 and type(args[1]) is str and not _IMMUTABLE_TYPE[type(args[0])]:
            if f is builtins.getattr or f is builtins.hasattr:
                try:  # the lookup ``obj.name`` makes, and reads, whoever spells it
                    value = self.ga(args[0], args[1], line)
                except AttributeError:
                    if f is builtins.hasattr:
                        return False
                    if len(args) > 2:
                        return args[2]
                    raise
                return True if f is builtins.hasattr else value
            run.access(args[0], args[1], "w", where)
            if isinstance(args[0], type):
                _owners.clear()  # as in sa
                _class_lookups.clear()
            return f(*args, **kwargs)
        return self._opaque(run, f, receiver, args, kwargs, where)

    def _lazy_call(
        self,
        run: Recording,
        f: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        used: tuple[Any, ...],
        where: tuple[str, int],
    ) -> Any:
        """A call of a built-in that reads (or a built-in method), in a run that has made lazy objects: one passed
        (``list(map(...))``, ``len(d.keys())``) reads its sources too, for as long as the call lasts when it may call
        back into code under test; a lazy result remembers its sources (see :meth:`Recording.derive`)."""
        held = run.use_derived(used, where)
        if held is None:
            result = f(*args, **kwargs)
        else:
            scheduler = run.scheduler
            scheduler.enter_opaque(held)
            try:
                result = f(*args, **kwargs)
            finally:
                scheduler.leave_opaque()
        if _LAZY_KIND[type(result)]:
            run.derive(result, used)
        return result

    def _opaque(
        self,
        run: Recording,
        f: Any,
        receiver: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        where: tuple[str, int],
    ) -> Any:
        touched: list[Entry] = []
        for value in (receiver, *args, *kwargs.values()):
            if type(value) in _CARRIERS:  # a callable passed along: code the lab cannot see may do anything to it
                touched.extend((thing, key, "w") for thing, key, _mode in _passed_entries(run, value))
            elif value is not None and not _IMMUTABLE_TYPE[type(value)]:
                touched.append(("obj:" + run.label(value), ANY_KEY, "w"))
        if id(f) in _DEEP_READERS:  # json.dumps, copy.deepcopy: what the arguments hold is read too
            touched.extend(_deep_entries(run, tuple(_deep_arguments((*args, *kwargs.values())))))
        module = _module_state(f)
        if module is not None:
            touched.append(module)
        plain = isinstance(f, _PLAIN_CALLEES)
        if not plain and not _IMMUTABLE_TYPE[type(f)]:
            touched.append(("obj:" + run.label(f), ANY_KEY, "w"))
        derived = run._derived
        if derived:  # ``next(iterator)``: what the lazy objects passed read (a write of each is recorded above)
            for value in (receiver, *args, *kwargs.values()):
                got = derived.get(id(value))
                if got is not None:
                    touched.extend(got.entries)
        scheduler = run.scheduler
        scheduler.access_all(touched, where, schedule=run.schedules)
        if not touched:
            return f(*args, **kwargs)
        scheduler.enter_opaque(frozenset(touched))
        try:
            return f(*args, **kwargs)
        finally:
            scheduler.leave_opaque()


_PARTIAL = functools.partial
_CARRIERS = frozenset({types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType, functools.partial})
"""Callables that hold state their call touches (a bound method's receiver, what a partial holds): passed as an
argument, such a value is not data read whole (most of these types count as immutable) but a call the callee may
make, charged as :func:`_passed_entries` says."""


def _passed_entries(run: Recording, f: Any) -> list[Entry]:
    """What calling ``f``, a callable passed as an argument, may touch of the state ``f`` itself holds, charged as
    :meth:`ModuleRuntime.call` would charge the call: the receiver of a built-in method, read by a read-only
    method and written by any other; for a method the lab cannot see, its receiver and its module's state
    written; for a partial, what its function holds and its arguments (read by a function that only reads them,
    else written). Code under test records its own accesses when called, and a built-in that only reads its
    arguments holds nothing: both charge nothing here."""
    found: list[Entry] = []
    if isinstance(f, _PARTIAL):
        func = f.func
        found.extend(_passed_entries(run, func))
        kind = run.classify(func)
        if kind == _Kind.TRANSPARENT:
            return found
        mode = "r" if kind in (_Kind.READS, _Kind.METHOD_READS) else "w"
        for value in (*f.args, *f.keywords.values()):
            if type(value) in _CARRIERS:
                found.extend(_passed_entries(run, value))
            elif not _IMMUTABLE_TYPE[type(value)] and not isinstance(value, _CLASS_OR_MODULE):
                found.append(("obj:" + run.label(value), ANY_KEY, mode))
        return found
    kind = run.classify(f)
    if kind == _Kind.TRANSPARENT or kind == _Kind.READS:
        return found
    receiver = getattr(f, "__self__", None)
    if receiver is not None and not _IMMUTABLE_TYPE[type(receiver)]:
        if kind == _Kind.OPAQUE:
            found.append(("obj:" + run.label(receiver), ANY_KEY, "w"))
        elif not isinstance(receiver, _CLASS_OR_MODULE):  # a built-in method bound to a class takes its receiver
            found.append(("obj:" + run.label(receiver), ANY_KEY, "r" if kind == _Kind.METHOD_READS else "w"))
    if kind == _Kind.OPAQUE:
        module = _module_state(f)
        if module is not None:
            found.append(module)
        if not isinstance(f, _PLAIN_CALLEES) and not _IMMUTABLE_TYPE[type(f)]:  # a callable object (a partial's)
            found.append(("obj:" + run.label(f), ANY_KEY, "w"))
    return found


class _DeepLeaves(dict[type, bool]):
    """Type -> whether reading its values deeply reads nothing: an immutable value that holds no other value (a
    number, a string, an enum member, a function). A tuple or frozenset is immutable but holds values that are
    read with it."""

    def __missing__(self, kind: type) -> bool:
        leaf = _IMMUTABLE_TYPE[kind] and not issubclass(kind, tuple | frozenset)
        self[kind] = leaf
        return leaf


_DEEP_LEAF = _DeepLeaves()
_DEEP_LEAF_OF = _DEEP_LEAF.__getitem__

_DEEP_LIMIT = 20_000
"""At most this many values looked at by one deep read (as many as a walk of the modules finds): past it, or past
:data:`_DEEP_DEPTH`, the read counts as touching everything (:data:`EVERYTHING`), never as touching less."""
_DEEP_DEPTH = 6
_EVERYTHING_ENTRY: Entry = next(iter(EVERYTHING))


class _Deep:
    """What a deep read does with a value that is not a leaf, which its type decides."""

    HOLDER = 0  # a tuple or frozenset: nothing of its own can change, its items are read
    CONTAINER = 1  # a list, dict, set or deque: read whole, and its items (a dict's keys and values) are read
    FIELDS = 2  # an object whose comparison or formatting runs code the lab does not rewrite: read whole, and its
    #             fields' values (a dataclass's generated ``__eq__`` and ``__repr__`` read every field)
    OPAQUE = 3  # a mutable object whose C-level comparison reads only itself (bytearray, array): read whole
    OWN_CODE = 4  # compared by identity and formatted by default, or by methods under test that record themselves


_DEEP_METHODS = (
    *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"),
    *("__repr__", "__str__", "__format__"),
)
_OBJECT_METHODS = tuple(getattr(object, name) for name in _DEEP_METHODS)


def _deep_sort(run: Recording, kind: type) -> int:
    """How a deep read treats a value of type ``kind`` (:class:`_Deep`), cached with the run's call
    classifications, which hold for the same code under test."""
    key = (_Deep, kind)
    sort = run._kinds.get(key)
    if sort is None:
        sort = run._kinds[key] = _classify_deep(run, kind)
    return sort


def _classify_deep(run: Recording, kind: type) -> int:
    if issubclass(kind, tuple | frozenset):
        return _Deep.HOLDER
    if issubclass(kind, list | dict | set | deque) or kind in _DICT_VIEWS:
        return _Deep.CONTAINER
    if issubclass(kind, type | types.ModuleType) or kind.__module__.startswith(run._transparent):
        return _Deep.OWN_CODE  # a class or a module compares by identity; the lab's objects are not the program's
    sort = _Deep.OWN_CODE
    for name, default in zip(_DEEP_METHODS, _OBJECT_METHODS, strict=True):
        method = getattr(kind, name, None)
        if method is None or method is default:
            continue  # unhashable, or object's own: identity, or a default text that reads no state
        code = getattr(method, "__code__", None)
        if code is None:
            if not isinstance(method, types.WrapperDescriptorType | types.MethodDescriptorType):
                return _Deep.FIELDS  # some other callable: whatever it runs may read the fields
            sort = _Deep.OPAQUE  # a C type's own slot: reads the object itself
        elif code not in run._instrumented and not getattr(method, "__module__", "").startswith(run._transparent):
            return _Deep.FIELDS  # generated (a dataclass's, from "<string>") or another module's code
    return sort


def _deep_entries(run: Recording, values: tuple[Any, ...]) -> list[Entry]:
    """What reading ``values`` deeply reads: each mutable container met (read whole), each object whose comparison
    or formatting the lab cannot see into (read whole, and its fields' values), going through tuples; classes,
    the lab's own objects and objects compared by identity or by code under test (which records itself) stop the
    walk. Breadth first, without running any of the program's code; past the limits, everything."""
    found: list[Entry] = []
    seen: set[int] = set()
    things, label, derived = run._things, run.label, run._derived
    queue: deque[tuple[Any, str, int]] = deque((value, "", 0) for value in values)
    looked = 0
    while queue:
        value, hint, depth = queue.popleft()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if derived and id(value) in derived:  # a dict view, an iterator: what reading it reads of its sources
            found.extend(derived[id(value)].entries)
        sort = _deep_sort(run, type(value))
        path = hint
        if sort != _Deep.HOLDER:
            if sort == _Deep.OWN_CODE and depth:
                continue  # met inside a container: its comparison reads nothing the lab does not see
            thing = things.get(id(value))
            if thing is None:
                thing = "obj:" + label(value, hint)
            found.append((thing, ANY_KEY, "r"))
            if sort >= _Deep.OPAQUE:
                continue
            path = thing[4:]
        parts: list[tuple[object, str]]
        if sort == _Deep.FIELDS:
            parts = [(part, f"{path}.{name}") for name, part in _fields(value)]
        elif isinstance(value, dict):
            pairs = list(dict.items(value))  # dict's own view: no overridden items() runs
            looked += 2 * len(pairs)
            leaves = looked <= _DEEP_LIMIT and all(map(_DEEP_LEAF_OF, map(type, dict.keys(value))))
            if leaves and all(map(_DEEP_LEAF_OF, map(type, dict.values(value)))):
                continue  # strings and numbers only, told without a Python call per item
            parts = [(key, f"{path}[*]") for key, _ in pairs]
            parts += [(item, f"{path}[{_key_text(key)}]") for key, item in pairs]
        else:
            items = _items(value)
            looked += len(items)
            if looked <= _DEEP_LIMIT and all(map(_DEEP_LEAF_OF, map(type, items))):
                continue
            parts = [(item, f"{path}[*]") for item in items]
        looked += len(parts) if sort == _Deep.FIELDS else 0
        if looked > _DEEP_LIMIT:
            found.append(_EVERYTHING_ENTRY)
            return found
        for part, part_path in parts:
            if not _DEEP_LEAF[type(part)]:
                if depth >= _DEEP_DEPTH:
                    found.append(_EVERYTHING_ENTRY)
                    return found
                queue.append((part, part_path, depth + 1))
    return found


def _items(container: object) -> list[object]:
    """The items of a list, tuple, set, frozenset or deque, read through the built-in type's own iterator (no
    overridden ``__iter__`` runs)."""
    for base in _ITEM_BASES:
        if isinstance(container, base):
            return list(base.__iter__(container))
    if type(container) in _DICT_VIEWS:
        viewed: list[object] = list(container)  # type: ignore[call-overload]  # a dict's keys, values or items
        return viewed
    return []


_DICT_VIEWS = frozenset({type({}.keys()), type({}.values()), type({}.items())})


_ITEM_BASES: tuple[Any, ...] = (list, tuple, set, frozenset, deque)


def _fields(obj: object) -> list[tuple[str, object]]:
    """An object's own attributes and slots, read without running any of its code."""
    attributes = _instance_dict(obj)
    found = list(dict.items(attributes)) if isinstance(attributes, dict) else []
    slots = _SLOTS.get(type(obj))
    if slots is None:
        slots = _SLOTS[type(obj)] = _slots_of(type(obj))
    for slot, descriptor in slots[1]:
        with contextlib.suppress(AttributeError):
            found.append((slot, descriptor.__get__(obj, type(obj))))
    return found


_DEEP_READERS = frozenset(
    id(f)
    for f in (
        *(builtins.repr, builtins.str, builtins.ascii, builtins.format, builtins.print, builtins.hash),
        *(builtins.sorted, builtins.min, builtins.max, builtins.sum),
        *(json.dumps, json.dump, copy.deepcopy, _pickle.dumps, _pickle.dump, marshal.dumps),
    )
)
"""Functions (by identity) that read what their arguments hold, not only the arguments: they format or serialise
every element, or compare elements (``sorted``, ``min``), or hash them, or add them up (``sum``)."""

_DEEP_METHODS_BY_NAME = frozenset(
    {
        *("format", "format_map", "index", "count", "remove", "sort", "__contains__"),
        *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__repr__", "__str__", "__format__"),
    }
)
"""Methods of built-in types that compare or format their receiver's elements with their arguments
(``list.index``, ``list.remove``, ``str.format``): they read what both hold."""


def _deep_arguments(values: tuple[Any, ...]) -> list[Any]:
    """The arguments a deep read goes into: not a class or module (read by name where used) nor a callable passed
    along (charged by :func:`_passed_entries`)."""
    return [
        value
        for value in values
        if not _DEEP_LEAF[type(value)] and type(value) not in _CARRIERS and not isinstance(value, _CLASS_OR_MODULE)
    ]


_HOLDERS = frozenset({tuple, frozenset})


def _read_arguments_deeply(run: Recording, values: tuple[Any, ...], where: tuple[str, int]) -> None:
    """A call that reads what its arguments hold: each argument read deeply, as one operation."""
    held = _deep_arguments(values)
    if held and not all(type(value) in _HOLDERS and all(map(_DEEP_LEAF_OF, map(type, value))) for value in held):
        _read_deeply(run, tuple(held), where)


def _read_deeply(run: Recording, values: tuple[Any, ...], where: tuple[str, int]) -> None:
    """Record a deep read of ``values`` as one operation: at instruction granularity one scheduling point, whose
    pending footprint is what the values held then, and the step that follows reads what they hold when it runs
    (another actor may have changed them in between)."""
    entries = _deep_entries(run, values)
    if not run.schedules:
        run.scheduler.access_all(entries, where, schedule=False)
        return
    run.scheduler.access_all(entries, where, schedule=True)
    pending = set(entries)
    fresh = [entry for entry in _deep_entries(run, values) if entry not in pending]
    run.scheduler.access_all(fresh, where, schedule=False)


def _module_state(f: Any) -> Entry | None:
    """The state of the module that defines ``f``, which a call of ``f`` the lab cannot see may change: none for
    the lab's own modules and for modules that keep no state (``json``, ``math``, ...)."""
    module = getattr(f, "__module__", None) or getattr(type(f), "__module__", "")
    if module and module.split(".")[0] not in _STATELESS_MODULES and not module.startswith("lab."):
        return (f"obj:module {module}", ANY_KEY, "w")
    return None


class _Iteration:
    """A loop's iterator inside a recorded run (:meth:`ModuleRuntime.it`): each ``__next__`` records, in the step
    that takes it, a read of the container iterated (a write of the iterable when it is itself an iterator:
    advancing it changes it) and what the lazy object iterated reads or advances (see :meth:`Recording.derive`),
    then takes the next item. The last one, that ends the loop, too: it reads the container's length. At instruction
    granularity each is a scheduling point, as every access is. When taking an item may run code under test between
    the lazy object's reads (a ``map`` of a lambda, a ``filter`` over a generator), those reads are held open for as
    long as it runs (:meth:`Scheduler.enter_opaque`)."""

    __slots__ = ("_entries", "_held", "_iterator", "_run", "_where")

    def __init__(self, run: Recording, iterable: Any, iterator: Any, where: tuple[str, int]) -> None:
        self._run = run
        self._iterator = iterator
        self._where = where
        thing = run._things.get(id(iterable)) or "obj:" + run.label(iterable)
        own: Entry = (thing, ANY_KEY, "w" if iterator is iterable else "r")
        derived = run._derived.get(id(iterable)) if run._derived else None
        if derived is None:
            self._entries: tuple[Entry, ...] = (own,)
            self._held: frozenset[Entry] | None = None
        else:
            self._entries = tuple(dict.fromkeys((own, *derived.entries)))
            self._held = derived.footprint if derived.calls_back else None

    def __iter__(self) -> _Iteration:
        return self

    def __next__(self) -> Any:
        run = self._run
        if run is not _active or getattr(run.local, "actor", None) is None:
            return next(self._iterator)
        if run.schedules:
            run.scheduler.access_all(list(self._entries), self._where, schedule=True)
        else:
            steps = run._steps  # StepLog.accessed, inline (see StepLog on why no call)
            for entry in self._entries:
                if not steps.closed:
                    steps.current.add(entry)
                    steps.log.append((steps.index, steps.actor, entry, self._where, steps.locks))
        held = self._held
        if held is None:
            return next(self._iterator)
        scheduler = run.scheduler
        scheduler.enter_opaque(held)
        try:
            return next(self._iterator)
        finally:
            scheduler.leave_opaque()


def _record_shared_access(name: str, key: str, mode: str, where: tuple[str, int]) -> None:
    """The recorder :func:`lab.hooks.note_shared_access` forwards to: outside a recorded run, or an actor, nothing."""
    run = _active
    if run is None or getattr(run.local, "actor", None) is None:
        return
    run.note((f"obj:{name}", key, mode), where)


hooks.install_shared_access_recorder(_record_shared_access)
