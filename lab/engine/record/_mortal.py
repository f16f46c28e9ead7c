"""Objects the recording keeps alive for their labels, let go of when the program lets go of them.

A label names an object's identity for as long as it lives, and an id may be reused once it dies, so the recording
keeps what it labels: by weak reference where one can follow it (its labels go when it dies, see
:func:`lab.engine.record._labels.forgetter`), and strongly where none can (a list, a dict, a tuple). Kept so, a
dict the program dropped kept alive everything in it: a resource held only by ``self.pending`` never ran its
``__del__`` when an actor set ``self.pending = {}``, and a thing held only by a list stayed in a
``WeakValueDictionary`` (correct programs FAILED, racy ones PASSED). So, in a run where it can matter, the
recording looks at every scheduling point for what only it still holds (``sys.getrefcount``), forgets its labels
and lets it go: it dies there, in the step that dropped it, as it would have without the lab (a finalizer's
accesses are that step's), and its id, if reused, gets a label of its own.

It can matter once the run has labelled a *mortal* object (:data:`MORTAL_TYPE`, :func:`is_mortal`): one whose type
has a finalizer, a weak container or reference, or one that something else already refers to weakly. Until then
nothing is looked at, so a run without any costs nothing.

What a death changes in a weak container is recorded by :mod:`lab.engine.record._weak`; an object let go of here
dies into its containers the same way (its labels are forgotten first, so its death is the program's).
"""

from __future__ import annotations

import sys
import types
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lab.engine.record._recording import Recording

_count = sys.getrefcount
_ALONE = next(map(_count, [object()]))
"""What :func:`sweep` counts for a value that nothing but its list holds (the list, and the call's argument)."""

WEAK_KINDS: tuple[type, ...] = (
    weakref.ref,
    weakref.WeakValueDictionary,
    weakref.WeakKeyDictionary,
    weakref.WeakSet,
    weakref.finalize,
)
"""What changes, unseen, when an object it refers to dies."""

NOT_MORTAL, FINALIZED, WEAK = 0, 1, 2  # what MORTAL_TYPE says of a type


class _MortalTypes(dict[type, int]):
    """Type -> :data:`WEAK` for a weak container or reference, :data:`FINALIZED` for a type with a finalizer
    (``__del__``, or a C type's), else :data:`NOT_MORTAL`: worked out once per type, then a dictionary hit."""

    def __missing__(self, kind: type) -> int:
        if issubclass(kind, WEAK_KINDS):
            found = WEAK
        elif getattr(kind, "__del__", None) is not None and not issubclass(kind, type):
            found = FINALIZED
        else:
            found = NOT_MORTAL
        self[kind] = found
        return found


MORTAL_TYPE = _MortalTypes()

_NEVER_WEAK = (type, types.ModuleType, types.FunctionType)
"""Objects the interpreter itself refers to weakly (a class's subclasses, a module's, a function's caches)."""


def is_mortal(obj: object) -> bool:
    """Whether ``obj`` (about to be labelled) makes letting go matter: a mortal type, or weakly referenced by now."""
    if MORTAL_TYPE[type(obj)]:
        return True
    return bool(type(obj).__weakrefoffset__) and not isinstance(obj, _NEVER_WEAK) and weakref.getweakrefcount(obj) > 0


def note_mortal(run: Recording, obj: object, held: bool) -> None:
    """``run`` labels ``obj`` (``held``: it will follow it by weak reference, not yet made): the first mortal object
    makes the run let go (:func:`become_mortal`)."""
    if is_mortal(obj) if held else MORTAL_TYPE[type(obj)]:
        become_mortal(run)


def sweep(alive: list[object], forget: Callable[[int], None]) -> None:
    """Let go of everything in ``alive`` that nothing but ``alive`` holds, until nothing more is (an owner gone,
    its attribute dict is next): ``forget(id)`` first drops its labels, then it dies, here."""
    while alive:
        counts = list(map(_count, alive))
        if _ALONE not in counts:
            return
        gone = [obj for obj, n in zip(alive, counts, strict=True) if n == _ALONE]
        alive[:] = [obj for obj, n in zip(alive, counts, strict=True) if n != _ALONE]
        for obj in gone:
            forget(id(obj))
        del obj
        gone.clear()  # they die here: finalizers run, weak references clear, in the running step


def become_mortal(run: Recording) -> None:
    """``run`` labelled a mortal object: from now on it lets go, at every scheduling point, of what only it holds
    (a scratch recording, which labels a modules' walk once for later runs, has no scheduler: its runs do this)."""
    run._mortal = True
    scheduler = getattr(run, "scheduler", None)
    if scheduler is None:
        return
    alive, labels, things = run._alive, run._labels, run._things
    instance_dicts, derived, per_thread = run._instance_dicts, run._derived, run._per_thread

    def forget(key: int) -> None:
        labels.pop(key, None)
        things.pop(key, None)
        instance_dicts.discard(key)
        derived.pop(key, None)
        per_thread.pop(key, None)

    scheduler.sweep_with(lambda: sweep(alive, forget))
