"""A bench model for fresh per-execution state: two workers that use what outlives a thread or a reference.

Each worker takes an id cached in a ``threading.local`` and a ``ContextVar`` (fresh in every execution), files a
resource with a ``__del__`` in a ``WeakValueDictionary`` and a dict, drops the dict, and sleeps: the recording
follows the resources weakly, lets go of the dropped dict at the next scheduling point, and the resource's
finalizer runs there. Correct (one lock around the shared counter), so every exploration runs to its end.
"""

import contextvars
import threading
import time
import weakref

from lab import Scenario, acceptable, actor

_MINE = threading.local()
_TOKEN: contextvars.ContextVar[int | None] = contextvars.ContextVar("_TOKEN", default=None)


class Resource:
    """Logs its own closing."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def __del__(self) -> None:
        self.log.append(self.name)


class FreshState(Scenario):
    source = "bench: fresh state per execution"
    line_modules = (__name__,)
    outcomes = (acceptable("both closed, two ids", closed=["a", "b"], ids=[0, 1]),)

    def setup(self) -> None:
        self.guard = threading.Lock()
        self.next = 0
        self.ids: list[int] = []
        self.log: list[str] = []
        self.cache: weakref.WeakValueDictionary[str, Resource] = weakref.WeakValueDictionary()

    def _work(self, name: str) -> None:
        if getattr(_MINE, "id", None) is None and _TOKEN.get() is None:
            with self.guard:
                mine = self.next
                self.next = mine + 1
                self.ids.append(mine)
            _MINE.id = mine
            _TOKEN.set(mine)
        setattr(self, f"held_{name}", {name: Resource(self.log, name)})
        self.cache[name] = getattr(self, f"held_{name}")[name]  # the dict, read, is labelled (and kept)
        setattr(self, f"held_{name}", None)  # its last reference: let go of at the next point, and closed
        time.sleep(0.001)

    @actor
    def a(self) -> None:
        self._work("a")

    @actor
    def b(self) -> None:
        self._work("b")

    def observe(self) -> dict[str, list[object]]:
        return {"closed": sorted(self.log), "ids": sorted(self.ids)}
