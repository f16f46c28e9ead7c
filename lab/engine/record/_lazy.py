"""Lazy objects: iterators, ``map``/``filter``/``zip`` results and dict views, which read their sources only later,
as they are used.

A built-in that returns such an object has read nothing yet; each later use (a loop's step, ``next``, ``list(it)``)
reads the containers at its root, in the step that uses it. So the recording remembers, per lazy object, what using
it touches (:func:`derive`), charges it at each use (:func:`use_derived`, :class:`Iteration`), and holds those reads
open while a use may run code under test between them (a ``map`` over a lambda).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import lab.engine.record._active as _active
from lab.engine.core._footprint import ANY_KEY, Entry
from lab.engine.record._builtin_footprints import GENERATOR_TYPES, READ_ONLY_METHODS
from lab.engine.record._calls import Kind, callback_entries, classify, opaque_subscript, outside_python
from lab.engine.record._unknown import reach_entries
from lab.engine.record._values import CLASS_OR_MODULE, IMMUTABLE_TYPE

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording


@dataclass(frozen=True, slots=True)
class Derived:
    """What using a lazy object touches: a read of each container it reads from, a write of each iterator it
    advances (see :func:`derive`)."""

    entries: tuple[Entry, ...]
    calls_back: bool
    """Whether using it may run code under test (a function it applies, a generator it advances) between its reads."""
    footprint: frozenset[Entry]
    outside: bool = False
    """Whether it applies the program's Python code outside the modules under test, which a thread can be switched
    out of between its accesses: its entries are then not one operation (:func:`outside_python`)."""


NOT_LAZY, VIEW, ITERATOR = 0, 1, 2


_VIEW_TYPES = frozenset({type({}.keys()), type({}.values()), type({}.items())})


class _LazyKinds(dict[type, int]):
    """Type -> whether a built-in's result of this type reads its sources only later, as it is used: a dict view
    (:data:`VIEW`: a read of the dict each time) or an iterator (:data:`ITERATOR`: ``iter``, ``enumerate``,
    ``map``, ``filter``, ``zip``, ``reversed``, itertools, a container's ``__iter__``), else :data:`NOT_LAZY`."""

    def __missing__(self, kind: type) -> int:
        if kind in _VIEW_TYPES:
            lazy = VIEW
        elif callable(getattr(kind, "__next__", None)):
            lazy = ITERATOR
        else:
            lazy = NOT_LAZY
        self[kind] = lazy
        return lazy


LAZY_KIND = _LazyKinds()


def derive(run: Recording, lazy: object, sources: tuple[Any, ...]) -> None:
    """``lazy`` (an iterator, a ``map``, a dict view: see :data:`LAZY_KIND`) was made by a built-in from
    ``sources`` and reads them only later, as it is used: remember what each use touches (see :class:`Derived`).

    Flattened: a lazy object over a lazy object derives from the latter's sources too, so using the outer one
    touches the containers at the root. An iterator among the sources is advanced by each use (a write of it);
    anything else is read. ``lazy`` is kept alive for the run, so its id stays its own."""
    entries: list[Entry] = []
    calls_back = outside = False
    derived, things = run._derived, run._things
    for value in sources:
        kind = type(value)
        if IMMUTABLE_TYPE[kind]:
            if kind is types.FunctionType or kind is types.MethodType:
                calls_back = True  # code applied to each item: C reads straddle the steps it may open
                if kind is types.FunctionType and classify(run, value) == Kind.OPAQUE:  # and the lab cannot see it
                    entries.extend(callback_entries(run, value, sources))
                    outside = outside or outside_python(value.__module__ or "")
            elif kind is types.BuiltinMethodType:  # a built-in's method applied to each item: ``map(d.get, ks)``
                owner = value.__self__
                if not IMMUTABLE_TYPE[type(owner)] and not isinstance(owner, CLASS_OR_MODULE):
                    thing = things.get(id(owner)) or "obj:" + run.label(owner)
                    writes = value.__name__ not in READ_ONLY_METHODS
                    entries.append((thing, ANY_KEY, "w" if writes else "r"))
            continue
        if isinstance(value, CLASS_OR_MODULE):
            continue
        lazy_kind = LAZY_KIND[kind]
        earlier = derived.get(id(value)) if derived else None
        if earlier is not None:
            entries.extend(earlier.entries)
            calls_back = calls_back or earlier.calls_back
            outside = outside or earlier.outside
        elif lazy_kind == ITERATOR or callable(value):
            calls_back = True  # a generator or a callable object may run code under test, mid-use
        thing = things.get(id(value)) or "obj:" + run.label(value)
        entries.append((thing, ANY_KEY, "w" if lazy_kind == ITERATOR else "r"))
    if entries:
        run._alive.append(lazy)
        before = derived.get(id(lazy))  # ``iter(it)`` is ``it``; ``d.get(k)`` may return a stored iterator
        if before is not None:
            entries.extend(before.entries)
            calls_back = calls_back or before.calls_back
            outside = outside or before.outside
        unique = tuple(dict.fromkeys(entries))
        derived[id(lazy)] = Derived(unique, calls_back, frozenset(unique), outside)


def use_derived(run: Recording, values: tuple[Any, ...], where: tuple[str, int]) -> frozenset[Entry] | None:
    """Some of ``values`` may be lazy objects (see :meth:`derive`): record what using them touches, now. Returns
    that footprint when using them may call back into code under test (a ``map`` over a lambda, a ``filter`` over
    a generator), whose steps the C code's later reads then straddle: the caller holds it open across the call
    (:meth:`Scheduler.enter_opaque`). ``None`` when no value is lazy or none calls back."""
    derived = run._derived
    touched: list[Entry] = []
    calls_back = outside = False
    for value in values:
        got = derived.get(id(value))
        if got is not None:
            touched.extend(got.entries)
            calls_back = calls_back or got.calls_back
            outside = outside or got.outside
    if not touched:
        return None
    if run.schedules:
        run.scheduler.access_all(touched, where, schedule=True, one_operation=not outside)
    else:
        steps = run._steps
        for entry in touched:
            if not steps.closed:
                steps.current.add(entry)
                steps.log.append((steps.index, steps.actor, entry, where, steps.locks))
    return frozenset(touched) if calls_back else None


def lazy_call(
    run: Recording,
    f: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    used: tuple[Any, ...],
    where: tuple[str, int],
) -> Any:
    """A call of a built-in that reads (or a built-in method), in a run that has made lazy objects: one passed
    (``list(map(...))``, ``len(d.keys())``) reads its sources too, for as long as the call lasts when it may call
    back into code under test; a lazy result remembers its sources (see :func:`derive`)."""
    held = use_derived(run, used, where)
    if held is None:
        result = f(*args, **kwargs)
    else:
        scheduler = run.scheduler
        scheduler.enter_opaque(held)
        try:
            result = f(*args, **kwargs)
        finally:
            scheduler.leave_opaque()
    if LAZY_KIND[type(result)]:
        derive(run, result, used)
    return result


_PLAIN = frozenset({list, dict, set, tuple, str, bytes, range})
"""Iterated by their own C code: a read of the container, no call of code the lab cannot see."""


class Iteration:
    """A loop's iterator inside a recorded run (:meth:`ModuleRuntime.it`): each ``__next__`` records, in the step
    that takes it, a read of the container iterated (a write of the iterable when it is itself an iterator:
    advancing it changes it) and what the lazy object iterated reads or advances (see :func:`derive`),
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
            # a generator's body runs in the loop's step: its write held open (see RESUMING)
            self._held: frozenset[Entry] | None = frozenset({own}) if type(iterable) in GENERATOR_TYPES else None
            if type(iterable) not in _PLAIN and opaque_subscript(run, type(iterable), "__iter__"):
                # a ChainMap's __iter__, code the lab cannot see: each step may touch all the iterable reaches
                self._entries = tuple(reach_entries(run, [(iterable, thing[4:])]))
                self._held = frozenset(self._entries)
        else:
            self._entries = tuple(dict.fromkeys((own, *derived.entries)))
            self._held = derived.footprint if derived.calls_back else None

    def __iter__(self) -> Iteration:
        return self

    def __next__(self) -> Any:
        run = self._run
        if run is not _active.recording or getattr(run.local, "actor", None) is None:
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
