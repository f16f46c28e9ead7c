"""Label bookkeeping: forgetting the labels of objects that die, and the modules' walk kept across runs.

A label is kept for an object's identity for as long as the object lives (an id may be reused once it dies, and must
then get a label of its own); the walk of the modules under test is kept per set of modules, with what labelling its
objects did to an empty recording, so that a run only copies it.
"""

from __future__ import annotations

import _thread
import contextvars
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lab.engine.record._snapshot import Snapshot
from lab.engine.record._values import CLASS_OR_MODULE

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording

PER_THREAD = (_thread._local, contextvars.ContextVar)
"""Objects whose state each thread (a ``threading.local``) or each context (a ``ContextVar``: every actor runs in a
context of its own) has a share of: ``_MINE.id`` in one actor and in another are two pieces of state, so each
actor's accesses are labelled as its own share (``module._MINE@a``), and two actors' never conflict."""


def share_label(run: Recording, obj: object, hint: str) -> str:
    """The label of the calling actor's share of ``obj``, a :data:`PER_THREAD` object: never kept in the tables
    the hot path reads (a miss there asks again, for whichever actor asks), so every access names its own."""
    me = getattr(run.local, "actor", None)
    actor = me.name if me is not None else "lab"
    base = run._per_thread.get(id(obj))
    if base is None:
        n = run._counters.get(actor, 0) + 1
        run._counters[actor] = n
        base = run._per_thread[id(obj)] = hint or f"{type(obj).__name__}#{actor}.{n}"
        run._alive.append(obj)
    return f"{base}@{actor}"


def forgetter(
    labels: dict[int, str],
    things: dict[int, str],
    instance_dicts: set[int],
    weak: dict[int, object],
    owned: dict[int, dict[str, Any]],
    died: Callable[[int], None],
) -> Callable[[int, object], None]:
    """The callback of a recording's weak references: the object ``key`` names died, so its id and its attribute
    dict's may now be another object's, which must get a label of its own (a dict that outlives its owner is
    labelled again when next met). A label never spells an address: a new object's label depends only on the
    accesses that met it, never on whether its address was used before.

    A closure over the recording's tables, not a bound method: a bound method in each weak reference's callback
    would make a cycle of the recording that only the garbage collector, paused during a run, could free.
    Weakly held, rather than kept alive for the run: a program's ``WeakValueDictionary`` entry must vanish, and its
    ``__del__`` run, when the program drops its last reference, in the step that drops it, as without the lab.
    ``died`` is told of the death (:meth:`lab.engine.record._weak.Deaths.died`: the weak containers it empties).
    """

    def forget(key: int, _ref: object) -> None:
        died(key)
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


@dataclass(frozen=True)
class Kept:
    """What labelling a modules' walk's objects did to an empty recording, and the instance dicts it depended on."""

    labels: dict[int, str]
    things: dict[int, str]
    instance_dicts: set[int]
    alive: list[object]
    owning: tuple[object, ...]
    """The objects whose type gives them a ``__dict__`` slot..."""
    dicts: tuple[object, ...]
    """... and what reading it gave (``None`` for nothing, or no dict): the same objects keep the same labels."""
    per_thread: dict[int, str]
    """The labels of thread-locals and context variables, whose shares are each actor's (``Recording._share``)."""
    mortal: bool
    """Whether any of them is mortal (:func:`lab.engine.record._mortal.is_mortal`)."""


@dataclass
class ModuleWalk:
    """The walk of some modules' namespaces, valid while each namespace holds the same names and objects."""

    namespaces: tuple[tuple[tuple[str, ...], tuple[object, ...]], ...]
    found: list[tuple[object, str]]
    expanded: dict[int, tuple[int, object]]
    parts: Snapshot
    """What the walk read of each object it went through (see :func:`parts_of`)."""
    kept: Kept | None = None
    """Labelling ``found`` in an empty recording, worked out once (see :meth:`Recording._keep_kept`)."""


def dict_slot(obj: object) -> bool:
    """Whether ``Recording._keep`` reads ``obj``'s ``__dict__`` (the same test)."""
    return bool(type(obj).__dictoffset__) and not isinstance(obj, CLASS_OR_MODULE)


module_walks: dict[tuple[frozenset[str], tuple[str, ...]], ModuleWalk] = {}


def same_namespaces(
    old: tuple[tuple[tuple[str, ...], tuple[object, ...]], ...],
    new: tuple[tuple[tuple[str, ...], tuple[object, ...]], ...],
) -> bool:
    """The same names bound to the very same objects (compared without a Python call per name)."""
    return len(old) == len(new) and all(
        names == new_names and len(values) == len(new_values) and all(map(operator.is_, values, new_values))
        for (names, values), (new_names, new_values) in zip(old, new, strict=True)
    )
