"""Weak references as state: an object's death writes every weak container that held it, in the step that kills it.

A ``WeakValueDictionary`` loses its entry, a ``WeakSet`` its member, a weak reference its object, when the last
strong reference goes: in whichever step drops it, inside whatever operation did (``list.clear``, a rebinding, a
function's return). No access the program names connects that step to another actor's look-up in the container (the
one writes a list, the other reads the weak dictionary), so without this the reduction would run one order only, and
the lookup that finds the entry, or the one that does not, would never be explored.

The recording follows every labelled object weakly already (its labels must go when it dies,
:func:`lab.engine.record._labels.forgetter`); :class:`Deaths` hooks that callback. Each weak container the recording
labels (in the scenario's state, in the modules under test, or first met during a run) is *watched*: its live
objects are noted as dying into it; so again after each call of code the lab cannot see that it is handed
(``weak_set.add(x)``, ``cache.setdefault(key, x)``). A watched object's death then writes the container (all of it)
in the running step of the actor whose thread dropped it, never as a scheduling point (the callback runs inside the
operation that dropped it), in the step's footprint but not in its list of accesses: no line of the program's does
it, so no finer granularity could put a scheduling point before it (the atomicity check reads that list). Deaths
outside an actor's step (the lab's thread tearing a run down) are none of the program's accesses.

Not watched (a limit, documented in docs/exploration.md): an object put into a weak container already labelled by a
subscript store during a run (``cache[key] = x``, which the rewritten code records before the store runs), until the
container is next handed to a call.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import ANY_KEY

if TYPE_CHECKING:
    from lab.engine.core._steps import StepLog
    from lab.engine.record._recording import Recording

WEAK_KINDS = (weakref.ReferenceType, weakref.WeakValueDictionary, weakref.WeakKeyDictionary, weakref.WeakSet)
"""The weak containers: what loses an entry when an object dies (a ``KeyedRef`` is a ``ReferenceType``)."""


class _IsWeak(dict[type, bool]):
    """Type -> whether it is one of :data:`WEAK_KINDS` (or a subclass of one), worked out once per type."""

    def __missing__(self, kind: type) -> bool:
        weak = self[kind] = issubclass(kind, WEAK_KINDS)
        return weak


WEAK_TYPE = _IsWeak()


def referents(container: Any) -> list[object]:
    """The objects ``container`` holds weakly and that still live, read without running any of the program's code
    (the standard library's own fields: ``data`` of a weak dictionary or set)."""
    if isinstance(container, weakref.ReferenceType):
        refs: list[Any] = [container]
    else:
        data = container.__dict__.get("data")
        if isinstance(container, weakref.WeakValueDictionary) and type(data) is dict:
            refs = list(dict.values(data))
        elif isinstance(container, weakref.WeakKeyDictionary) and type(data) is dict:
            refs = list(dict.keys(data))
        elif isinstance(container, weakref.WeakSet) and type(data) is set:
            refs = list(data)
        else:
            return []
    found = []
    for ref in refs:
        if isinstance(ref, weakref.ReferenceType):
            referent = weakref.ReferenceType.__call__(ref)
            if referent is not None:
                found.append(referent)
    return found


class Deaths:
    """Which weak containers each watched object dies into, and the write of them its death records."""

    __slots__ = ("_dies_into", "_local", "_steps")

    def __init__(self, steps: StepLog, local: threading.local) -> None:
        self._steps = steps
        self._local = local
        self._dies_into: dict[int, set[str]] = {}

    def watch(self, run: Recording, container: object, thing: str) -> None:
        """Note the live objects of ``container`` (whose thing is ``thing``) as dying into it; each gets a label,
        and so is followed weakly, if it has none."""
        for referent in referents(container):
            key = id(referent)
            if key not in run._things:
                run.label(referent, f"{thing[4:]}()")
            self._dies_into.setdefault(key, set()).add(thing)

    def died(self, key: int) -> None:
        """The object ``key`` named died: write each container it died into, in the running actor's step."""
        into = self._dies_into.pop(key, None)
        if into and getattr(self._local, "actor", None) is not None:
            self._steps.touched([(thing, ANY_KEY, "w") for thing in sorted(into)])

    def clear(self) -> None:
        """The run is over."""
        self._dies_into.clear()
