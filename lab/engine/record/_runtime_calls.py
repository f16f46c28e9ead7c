"""The recorded path of a call the lab cannot see into: what :meth:`ModuleRuntime.call` charges once it knows the
callee is not code under test.

By the callee's kind (:mod:`lab.engine.record._calls`): a C function that reads charges a read of each argument; a
built-in's method a read or write of its receiver; ``getattr`` and friends the one attribute they name; anything else
a write of everything it is handed, held open for as long as it runs (:meth:`Scheduler.enter_opaque`), because its
reads and writes straddle whatever steps it lets other actors take.
"""

from __future__ import annotations

import builtins
import types
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY, Entry
from lab.engine.record._builtin_footprints import GENERATOR_TYPES
from lab.engine.record._calls import (
    CARRIERS,
    PLAIN_CALLEES,
    Kind,
    callback_entries,
    classify,
    opaque_protocol,
    outside_python,
    passed_entries,
)
from lab.engine.record._deep import (
    DEEP_METHODS_BY_NAME,
    DEEP_READERS,
    deep_arguments,
    deep_entries,
    read_arguments_deeply,
)
from lab.engine.record._lazy import LAZY_KIND, derive, lazy_call
from lab.engine.record._lookups import forget_classes
from lab.engine.record._unknown import callee_roots, module_entries, reach_entries
from lab.engine.record._values import CLASS_OR_MODULE, IMMUTABLE_TYPE
from lab.engine.record._weak import WEAK_TYPE

Where = tuple[str, int]
FUNCTION = types.FunctionType

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording
    from lab.engine.record._runtime import ModuleRuntime


def recorded_call(
    runtime: ModuleRuntime,
    run: Recording,
    line: int,
    kind: int,
    f: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """``f(*args, **kwargs)`` for a callee of ``kind`` (not ``TRANSPARENT``), in a recorded run: what the call may
    touch recorded before it runs, as :mod:`lab.engine.record._calls` classifies it."""
    where = (runtime._file, line)
    # Recording.access inline below, for labelled values (see StepLog on why no call)
    things, steps = run._things, run._steps
    consumed: list[Any] = []  # generators handed over: the callee resumes them (list(gen), "".join(gen))
    if kind == Kind.READS:
        for value in (*args, *kwargs.values()) if kwargs else args:
            if type(value) is FUNCTION and classify(run, value) == Kind.OPAQUE:
                consumed.append(value)  # a function the lab cannot see, which the callee calls (sorted's key)
            elif type(value) in CARRIERS:  # a callable passed along: the callee may call it
                for entry in passed_entries(run, value):
                    run.note(entry, where)
            elif type(value) in GENERATOR_TYPES or opaque_protocol(run, type(value)):
                consumed.append(value)  # resumed, or its __len__/__iter__ is code the lab cannot see (ChainMap)
            elif not IMMUTABLE_TYPE[type(value)] and not isinstance(value, CLASS_OR_MODULE):
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
        if id(f) in DEEP_READERS:  # repr, sorted, hash...: read what their arguments hold, too
            read_arguments_deeply(run, (*args, *kwargs.values()), where)
        if consumed:
            return resumed(run, f, consumed, args, kwargs, where)
        if run._derived:
            return lazy_call(run, f, args, kwargs, (*args, *kwargs.values()) if kwargs else args, where)
        result = f(*args, **kwargs)
        if LAZY_KIND[type(result)]:
            derive(run, result, (*args, *kwargs.values()) if kwargs else args)
        return result
    receiver = getattr(f, "__self__", None)
    if kind != Kind.OPAQUE:  # a method of a built-in type, that reads or writes its receiver
        others = args
        if receiver is None or isinstance(receiver, CLASS_OR_MODULE):
            receiver, others = (args[0], args[1:]) if args else (None, ())
        for value in (*others, *kwargs.values()) if kwargs else others:
            if type(value) is FUNCTION and classify(run, value) == Kind.OPAQUE:
                consumed.append(value)  # a function the lab cannot see, which the callee calls (list.sort's key)
            elif type(value) in CARRIERS:  # a callable passed along: the callee may call it
                for entry in passed_entries(run, value):
                    run.note(entry, where)
            elif type(value) in GENERATOR_TYPES or opaque_protocol(run, type(value)):
                consumed.append(value)
            elif not IMMUTABLE_TYPE[type(value)]:
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
        if receiver is not None and not IMMUTABLE_TYPE[type(receiver)]:
            mode = "r" if kind == Kind.METHOD_READS else "w"
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
        if getattr(f, "__name__", None) in DEEP_METHODS_BY_NAME:  # compares or formats what it is given
            read_arguments_deeply(run, (receiver, *others, *kwargs.values()), where)
        used = (receiver, *others, *kwargs.values()) if kwargs else (receiver, *others)
        if kind == Kind.RESUMES and receiver is not None and not IMMUTABLE_TYPE[type(receiver)]:
            consumed.append(receiver)
        if consumed:
            return resumed(run, f, consumed, args, kwargs, where)
        if run._derived:
            return lazy_call(run, f, args, kwargs, used, where)
        result = f(*args, **kwargs)
        if LAZY_KIND[type(result)]:
            derive(run, result, used)
        return result
    # getattr and the like are classified opaque (none is a pure built-in): by name, they touch one attribute
    by_name = f is builtins.getattr or f is builtins.hasattr or f is builtins.setattr or f is builtins.delattr
    if by_name and len(args) >= 2 and type(args[1]) is str and not IMMUTABLE_TYPE[type(args[0])]:
        if f is builtins.getattr or f is builtins.hasattr:
            try:  # the lookup ``obj.name`` makes, and reads, whoever spells it
                value = runtime.ga(args[0], args[1], line)
            except AttributeError:
                if f is builtins.hasattr:
                    return False
                if len(args) > 2:
                    return args[2]
                raise
            return True if f is builtins.hasattr else value
        run.access(args[0], args[1], "w", where)
        if isinstance(args[0], type):
            forget_classes()  # as in sa
        return f(*args, **kwargs)
    return opaque_call(run, f, receiver, args, kwargs, where)


def resumed(
    run: Recording, f: Any, generators: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any], where: Where
) -> Any:
    """A call that resumes ``generators`` (``g.send``, ``list(g)``): a write of each, held open while their bodies
    run, so that every step they take conflicts with another actor resuming them ("generator already
    executing"); a function the lab cannot see among them, which the callee calls, is charged with all it can
    reach (:func:`callback_entries`)."""
    scheduler = run.scheduler
    held: list[Entry] = []
    outside = False
    for g in generators:
        if type(g) is FUNCTION:  # a callback the lab cannot see: all it can reach through what it is handed
            held.extend(callback_entries(run, g, (*args, *kwargs.values())))
            outside = outside or outside_python(g.__module__ or "")
        elif type(g) not in GENERATOR_TYPES:  # its protocol runs code the lab cannot see: all the object reaches
            held.extend(reach_entries(run, [(g, "")]))
        else:
            held.append((run._things.get(id(g)) or "obj:" + run.label(g), ANY_KEY, "w"))
    scheduler.access_all(held, where, schedule=run.schedules, one_operation=not outside)
    return _resumed_with_a_window(run, f, generators, held, args, kwargs, where)


def _resumed_with_a_window(
    run: Recording,
    f: Any,
    generators: list[Any],
    held: list[Entry],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    where: Where,
) -> Any:
    """A generator's resumption is a window another actor can fall into, not one atomic operation: CPython marks
    the generator running, then may switch threads at once (its frame's first instruction checks for a switch),
    and a ``next`` from another thread meanwhile raises "generator already executing". A body with no access of
    its own has no scheduling point inside, so the window is made one: at instruction granularity the generator is
    marked running, a scheduling point follows (the same write of it), and only then does the body run; another
    actor resuming it while it is marked gets the ``ValueError`` CPython would raise. At a coarser granularity the
    write of it is recorded again when the body is suspended, so that the atomicity check sees the two ends of the
    window, which another actor's resumption can fall between (INCOMPLETE, and the granularity that splits it)."""
    running = run.running_generators
    resumed = [g for g in generators if type(g) in GENERATOR_TYPES]
    mine = [id(g) for g in resumed]
    if any(key in running for key in mine):
        raise ValueError("generator already executing")
    scheduler = run.scheduler
    window = [(run._things.get(id(g)) or "obj:" + run.label(g), ANY_KEY, "w") for g in resumed]
    running.update(mine)
    try:
        if run.schedules:
            scheduler.access_all(window, where, schedule=True)
        scheduler.enter_opaque(frozenset(held))
        try:
            return f(*args, **kwargs)
        finally:
            scheduler.leave_opaque()
            if not run.schedules:
                scheduler.access_all(window, where, schedule=False)
    finally:
        running.difference_update(mine)


def opaque_call(
    run: Recording,
    f: Any,
    receiver: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    where: tuple[str, int],
    extra: tuple[tuple[Any, str], ...] = (),
) -> Any:
    """A call of code the lab cannot see: a write of everything it can reach (:mod:`lab.engine.record._unknown`),
    held open for as long as it runs. ``extra``: more roots it reaches (the caller's globals, for ``eval``)."""
    roots, module, walk = callee_roots(f)
    if module.startswith(run._stateless):
        touched = _handed(run, f, receiver, args, kwargs)  # the caller's own code, on its word
    else:
        values = [(value, "") for value in (receiver, *args, *kwargs.values()) if value is not None]
        touched = reach_entries(run, [*values, *roots, *extra])
        touched.extend(module_entries(run, module, walk=walk))
    derived = run._derived
    if derived:  # ``next(iterator)``: what the lazy objects passed read (a write of each is recorded above)
        for value in (receiver, *args, *kwargs.values()):
            got = derived.get(id(value))
            if got is not None:
                touched.extend(got.entries)
    scheduler = run.scheduler
    scheduler.access_all(touched, where, schedule=run.schedules, one_operation=not (walk and outside_python(module)))
    if not touched:
        return f(*args, **kwargs)
    if any(type(value) in GENERATOR_TYPES for value in (receiver, *args)):  # next(g)
        return _resumed_with_a_window(run, f, [receiver, *args], touched, args, kwargs, where)
    scheduler.enter_opaque(frozenset(touched))
    try:
        return f(*args, **kwargs)
    finally:
        scheduler.leave_opaque()
        for value in (receiver, *args):  # ``weak_set.add(x)``, ``cache.setdefault(k, x)``: x now dies into it
            if WEAK_TYPE[type(value)]:
                run.deaths.watch(run, value, run._things.get(id(value)) or "obj:" + run.label(value))


def _handed(run: Recording, f: Any, receiver: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Entry]:
    """What a call of the caller's own code (``stateless_modules``: it keeps no state of its own and touches only
    what it is handed) is charged: a write of each value handed (what a callable handed holds, too), and a deep
    read where it serialises what it is handed."""
    touched: list[Entry] = []
    for value in (receiver, *args, *kwargs.values()):
        if type(value) in CARRIERS:  # a callable passed along: code the lab cannot see may do anything to it
            touched.extend((thing, key, "w") for thing, key, _mode in passed_entries(run, value))
        elif value is not None and not IMMUTABLE_TYPE[type(value)]:
            touched.append(("obj:" + run.label(value), ANY_KEY, "w"))
    if id(f) in DEEP_READERS:
        touched.extend(deep_entries(run, tuple(deep_arguments((*args, *kwargs.values())))))
    if not isinstance(f, PLAIN_CALLEES) and not IMMUTABLE_TYPE[type(f)]:
        touched.append(("obj:" + run.label(f), ANY_KEY, "w"))
    return touched
