# size: one run's label tables, labelling inline twice (label, _keep: on 3.11 a call is a traced event)
"""The state of one recorded run: object labels and the recording of each access by the calling actor.

A label names an object's identity for the whole run (``obj:self.session._history``), never the variable that held
it: objects that exist before the run are named by path (:mod:`lab.engine.record._walk`), an object first met later
by the access that produced it, or failing that by the actor and a counter. Every access the runtime records goes
through :meth:`Recording.access` or :meth:`Recording.note`, or their inline copies on the hot path.
"""

from __future__ import annotations

import functools
import operator
import types
import weakref
from collections.abc import Set as AbstractSet
from typing import Any

from lab.engine.core._footprint import Entry
from lab.engine.core._scheduler import Scheduler
from lab.engine.record._calls import KINDS, KINDS_KEPT
from lab.engine.record._labels import (
    PER_THREAD,
    Kept,
    ModuleWalk,
    dict_slot,
    forgetter,
    module_walks,
    same_namespaces,
    share_label,
)
from lab.engine.record._lazy import Derived
from lab.engine.record._mortal import become_mortal, note_mortal
from lab.engine.record._snapshot import snapshot, unchanged
from lab.engine.record._values import CLASS_OR_MODULE, ENGINE, own_dict
from lab.engine.record._walk import Walk
from lab.engine.record._weak import WEAK_TYPE, Deaths

_weak_ref = weakref.ref
_partial = functools.partial


class Recording:
    """The state of one recorded run: the scheduler, object labels, and the granularity's scheduling rule."""

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        every_access_schedules: bool,
        instrumented: AbstractSet[types.CodeType],
        leave_alone: tuple[str, ...] = (),
        stateless_modules: tuple[str, ...] = (),
    ) -> None:
        """``leave_alone``: the prefixes of modules besides the engine's whose code and objects are machinery, not
        the program's (the caller's own layer: not walked, their calls not recorded, since they schedule for
        themselves); ``stateless_modules``: prefixes of modules whose functions and properties, not rewritten, keep
        no state of their own (a call of one writes what it is handed, not its module)."""
        self.scheduler = scheduler
        self.local = scheduler.local  # ``getattr(local, "actor", None)``: is the calling thread an actor?
        self.schedules = every_access_schedules
        self._steps = scheduler.steps
        self._instrumented = instrumented
        self._transparent = (ENGINE, *leave_alone)
        self._stateless = (ENGINE, *stateless_modules)
        self._labels: dict[int, str] = {}
        self._things: dict[int, str] = {}
        self._instance_dicts: set[int] = set()
        self._alive: list[object] = []  # what no weak reference can follow (lists, dicts): kept alive (see _mortal)
        self._kept: list[object] = []  # the same for what the modules' walk found (which it keeps anyway)
        self._mortal = False  # whether it labelled an object whose death the program can see (see _mortal)
        self._weak: dict[int, object] | None = {}
        """id -> a weak reference to the labelled object, whose callback forgets its labels when it dies."""
        self._owned: dict[int, dict[str, Any]] = {}
        """id of a weakly held object -> its attribute dict, kept while the owner lives (it keeps it alive anyway)."""
        self.running_generators: set[int] = set()
        """Generators resumed and not yet suspended (see ``_runtime_calls._resumed_with_a_window``)."""
        self.deaths = Deaths(self._steps, self.local)
        """The weak containers each object dies into (:mod:`lab.engine.record._weak`)."""
        self._watching: list[tuple[object, str]] | None = None  # weak containers the roots' walk labels
        self._forget = forgetter(
            self._labels, self._things, self._instance_dicts, self._weak, self._owned, self.deaths.died
        )
        self._counters: dict[str, int] = {}
        self._per_thread: dict[int, str] = {}  # id of a thread-local or ContextVar -> its label (see share_label)
        self._derived: dict[int, Derived] = {}
        """id of a lazy object made by a built-in (an iterator, a ``map``, a dict view) -> what using it touches."""
        codes = frozenset(instrumented)  # the same frozenset every run of a scenario: its hash is computed once
        kinds = KINDS.get(codes)
        if kinds is None or len(kinds) > KINDS_KEPT:
            kinds = KINDS[codes] = {}
        self._kinds = kinds

    def close(self) -> None:
        """The run is over: let go of every object kept alive for its labels. Kept, an exception the code under
        test raised would hold, through its traceback, the frames that hold this recording: a cycle with the whole
        run in it that only the garbage collector could free."""
        self.scheduler.sweep_with(None)
        self._alive.clear()
        self._kept.clear()
        if self._weak is not None:
            self._weak.clear()  # first: a weak reference gone calls back no more
        self._owned.clear()
        self._labels.clear()
        self._things.clear()
        self._instance_dicts.clear()
        self._derived.clear()
        self._per_thread.clear()
        self.deaths.clear()

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
        cached = module_walks.get((owners, self._transparent))
        if cached is None or not same_namespaces(cached.namespaces, namespaces) or not unchanged(cached.parts):
            walk = Walk(owners, snapshot=True, leave_alone=self._transparent)
            found = walk.run(
                [
                    (f"{module.__name__}.{name}", value)
                    for module in modules
                    for name, value in list(vars(module).items())
                    if not name.startswith("__")
                ]
            )
            cached = module_walks[owners, self._transparent] = ModuleWalk(
                namespaces, found, walk.expanded if walk.complete else {}, snapshot(walk.parts)
            )
        if self._labels or not self._keep_kept(cached):
            for obj, path in cached.found:
                if id(obj) not in self._labels:
                    self._keep(obj, path)
        for module in modules:
            self._name_globals(module)
        things = self._things
        self._watching = [
            (obj, things[id(obj)]) for obj, _ in cached.found if WEAK_TYPE[type(obj)] and id(obj) in things
        ]
        for obj, path in Walk(owners, known=self._labels, expanded=cached.expanded, leave_alone=self._transparent).run(
            list(roots.items())
        ):
            self._keep(obj, path)
        watching, self._watching = self._watching, None
        for obj, thing in watching:  # after the walk: its paths name the objects the containers hold
            self.deaths.watch(self, obj, thing)

    def _name_globals(self, module: types.ModuleType) -> None:
        """Name a module's namespace dict as the module's globals: ``globals()["x"]``, ``module.__dict__["x"]`` and
        ``global x`` are one piece of state, and the rewritten code records the last as (``obj:module M``, ``x``)."""
        namespace = vars(module)
        name = f"module {module.__name__}"
        self._labels[id(namespace)] = name
        self._things[id(namespace)] = "obj:" + name
        self._instance_dicts.add(id(namespace))
        self._kept.append(namespace)

    def _keep_kept(self, cached: ModuleWalk) -> bool:
        """Label what the modules' walk found, in a recording that has labelled nothing yet, by copying what doing so
        gave the last time (labels, things, instance dicts: the same for the same objects), when every object's
        instance dict is still the one it had then. False (nothing done) when one is not."""
        kept = cached.kept
        if kept is None:
            scratch = Recording.__new__(Recording)
            scratch._labels, scratch._things, scratch._instance_dicts, scratch._alive = {}, {}, set(), []
            scratch._per_thread, scratch._kept, scratch._mortal = {}, [], False
            scratch._watching = None
            scratch._weak = None  # the modules' walk is kept across runs, strongly (see Kept): copied as it is
            for obj, path in cached.found:
                if id(obj) not in scratch._labels:
                    scratch._keep(obj, path)
            owning = tuple(obj for obj, _ in cached.found if dict_slot(obj))
            kept = cached.kept = Kept(
                scratch._labels,
                scratch._things,
                scratch._instance_dicts,
                scratch._alive,
                owning,
                tuple(map(own_dict, owning)),
                scratch._per_thread,
                scratch._mortal,
            )
        elif not all(map(operator.is_, map(own_dict, kept.owning), kept.dicts)):
            return False
        self._labels.update(kept.labels)
        self._things.update(kept.things)
        self._instance_dicts.update(kept.instance_dicts)
        self._kept.extend(kept.alive)
        self._per_thread.update(kept.per_thread)
        if kept.mortal:
            become_mortal(self)
        return True

    def label(self, obj: object, hint: str = "") -> str:
        """The label of ``obj``'s identity in this run, giving it ``hint`` (or a fresh name) the first time."""
        got = self._labels.get(id(obj))
        if got is not None:
            return got
        if isinstance(obj, PER_THREAD):
            return share_label(self, obj, hint)
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
        if WEAK_TYPE[type(obj)]:  # a weak container first met in the run: its objects die into it
            self.deaths.watch(self, obj, thing)
        weak = self._weak
        held = weak is not None and type(obj).__weakrefoffset__ != 0
        if not self._mortal:
            note_mortal(self, obj, held)  # before our own weak reference to it
        if held:  # followed, not kept: the program's own weak references and __del__ behave as without the lab
            weak[key] = _weak_ref(obj, _partial(self._forget, key))  # type: ignore[index]
        else:
            self._alive.append(obj)
        if type(obj).__dictoffset__ and not isinstance(obj, CLASS_OR_MODULE):
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
        if isinstance(obj, PER_THREAD):
            if id(obj) not in self._per_thread:
                self._per_thread[id(obj)] = name
                self._alive.append(obj)
            return
        thing = "obj:" + name
        key = id(obj)
        self._labels[key] = name
        self._things[key] = thing
        if WEAK_TYPE[type(obj)] and self._watching is not None:
            self._watching.append((obj, thing))
        weak = self._weak
        held = weak is not None and type(obj).__weakrefoffset__ != 0
        if not self._mortal:
            note_mortal(self, obj, held)  # before our own weak reference to it
        if held:  # the identity stays this object's while it lives; its labels go when it dies (see label)
            weak[key] = _weak_ref(obj, _partial(self._forget, key))  # type: ignore[index]
        else:
            self._alive.append(obj)  # the identity stays this object's for the whole run
        if type(obj).__dictoffset__ and not isinstance(obj, CLASS_OR_MODULE):
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
