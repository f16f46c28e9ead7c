"""A worker process of a parallel exploration: it explores whole subtrees, gives part of one away when asked, and
takes part of another while it waits.

A worker explores the subtree it was given as the one-process search would (:meth:`Explorer.explore_subtree`),
sending each run to the coordinator. Asked to split (another worker is idle), it gives away, at the shallowest
decision with branches planned but not begun, the one it will reach first there (the next sibling), and notes the
inputs it had then: what the search does at that decision before it reaches a branch can grow the branch's plan or
its sleep set, and so restart the item, and the next sibling has the least of that before it (giving the last one
away, about a third of the items were restarted, 3 to 12 % of the runs wasted on the 4-request race; now 1 to 3 %).
After every run it checks those inputs again: a race found since may have grown the plan below that branch, and then
it sends the new inputs (the coordinator restarts that work item). When its search reaches a branch it gave away, it
waits for that subtree's result, and while it waits it explores a part of that same subtree, given to it by the
coordinator (only a part of what it waits for: a worker's items nest, so no two workers ever wait for each other).
With the result it goes on as if it had explored the subtree itself (:func:`lab.engine.search._work_items.apply`).

Messages from the coordinator: ``("item", id, text)`` (``text`` ``None``: the whole tree), ``("split",)``,
``("result", id, outside, first, bounded)``, ``("cancel", id)`` and ``("quit",)``. To it: ``("run", id, ...)``,
``("gave", id, child, text)``, ``("nothing",)``, ``("revise", old, new, id, text)``, ``("drop", child)``,
``("wait", id, child)``, ``("sub", id, child)`` (the child's runs go here in the search's order), ``("done", id,
outside, first, bounded)`` and ``("error", text)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from lab.engine.core._run import RunResult
from lab.engine.search._exploration import Exploration
from lab.engine.search._explorer import Explorer
from lab.engine.search._subtrees import Subtree
from lab.engine.search._work_items import Key, Result, apply, inputs_here, key_here, normal, planned, ran

if TYPE_CHECKING:
    from lab.engine.search._choices import Guide
    from lab.engine.search._tree import Node


_BATCH = 16
"""Runs sent together."""

_REVISE_EVERY = 4
"""Branches begun between two looks at whether what was given away has new inputs (each look writes the plan of
every branch not begun: 4 % of a worker's time when taken at every branch)."""


class _Cancel(Exception):
    """Raised to leave the work item ``target`` (and any nested in it): the coordinator gave up on it."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target


@dataclass
class _Frame:
    """A work item this worker is exploring; nested ones are explored while an outer one waits."""

    ident: str
    floor: int
    given: dict[Key, tuple[str, str]] = field(default_factory=dict)  # branch -> (child item, inputs when given)
    best: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # outcome -> best rank of its runs so far
    begun: int = 0  # branches begun while something was given away or asked for


class Parts:
    """Each part of the runs' digests is sent once (runs share most): a number stands for it afterwards."""

    def __init__(self) -> None:
        self._numbers: dict[Any, int] = {}

    def encode(self, parts: list[Any]) -> tuple[list[Any], list[int]]:
        """The parts not sent before, and the number of every part."""
        new: list[Any] = []
        ids: list[int] = []
        numbers = self._numbers
        for part in parts:  # _part_key inline: a run has dozens of parts
            known = (part[0], part[1], part[3]) if type(part) is tuple and len(part) == 4 else part
            number = numbers.get(known)
            if number is None:
                number = numbers[known] = len(numbers)
                new.append(part)
            ids.append(number)
        return new, ids


def _part_key(part: Any) -> Any:
    """What tells parts of run digests apart. A part of an atomicity digest (``run_parts``) is its place, what it
    accessed and its windows; its accesses add only their step numbers, which differ from run to run and which
    nothing that merges them reads, so a part seen once is sent once, with the accesses of the first run."""
    if isinstance(part, tuple) and len(part) == 4:
        return (part[0], part[1], part[3])
    return part


class Worker:
    """One worker's life, in the forked process: explore each item it is given until told to quit."""

    def __init__(self, conn: Connection, explorer: Explorer, number: int) -> None:
        self._conn = conn
        self._explorer = explorer
        self._number = number
        self._made = 0
        self._stack: list[_Frame] = []
        self._results: dict[str, Result] = {}
        self._items: list[tuple[str, str | None]] = []
        self._split = False
        self._parts = Parts()
        self._batch: list[tuple[Any, ...]] = []

    def live(self) -> None:
        """Explore items as they come; an error ends the worker after saying what it was (the coordinator then
        searches in its own process, where the same error is met in the search's order)."""
        self._explorer.quiet_for_worker()
        try:
            while True:
                if self._items:
                    self._explore(*self._items.pop(0))
                    continue
                if self._split:  # asked while busy, answered now: nothing is left to give
                    self._split = False
                    self._send(("nothing",))
                self._handle(self._recv(), idle=True)
        except _Quit:
            return
        except Exception as error:
            self._send(("error", f"{type(error).__name__}: {error}"))

    # -- messages ------------------------------------------------------------------------------------------------

    def _send(self, message: tuple[Any, ...]) -> None:
        """Runs go in batches (each message wakes the coordinator, and on a busy machine a wake-up costs a switch);
        anything else goes at once, after the runs before it."""
        if message[0] == "run":
            self._batch.append(message)
            if len(self._batch) < _BATCH:
                return
        if self._batch:
            self._conn.send(("runs", self._batch))
            self._batch = []
        if message[0] != "run":
            self._conn.send(message)

    def _recv(self) -> tuple[Any, ...]:
        """The next message, waited for (after sending the runs still held)."""
        if self._batch:
            self._conn.send(("runs", self._batch))
            self._batch = []
        message: tuple[Any, ...] = self._conn.recv()
        return message

    def _handle(self, message: tuple[Any, ...], *, idle: bool = False) -> None:
        kind = message[0]
        if kind == "item":
            self._items.append((message[1], message[2]))
        elif kind == "split":
            if idle:
                self._send(("nothing",))
            else:
                self._split = True
        elif kind == "result":
            _, ident, outside, first, bounded = message
            self._results[ident] = Result("", outside, first, bounded)
        elif kind == "cancel":
            ident = message[1]
            self._items = [item for item in self._items if item[0] != ident]
            if any(frame.ident == ident for frame in self._stack):
                raise _Cancel(ident)
        elif kind == "quit":
            raise _Quit

    def _poll(self) -> None:
        while self._conn.poll():
            self._handle(self._conn.recv())

    # -- one item ------------------------------------------------------------------------------------------------

    def _explore(self, ident: str, text: str | None) -> None:
        seed = Subtree.from_text(text) if text is not None else None
        frame = _Frame(ident, seed.depth if seed is not None else -1)
        self._stack.append(frame)
        try:
            outside, first, bounded = self._explorer.explore_subtree(seed, self._emit, self._skip)
            for child, _inputs in frame.given.values():
                self._send(("drop", child))  # planned once, never reached: the search dropped that branch
            self._send(("done", ident, outside, first, bounded))
        except _Cancel as cancel:
            if cancel.target != ident:
                raise
        finally:
            self._stack.pop()

    def _emit(self, run: RunResult, key: str, payload: object, policy: Guide, found: Exploration) -> None:
        frame = self._stack[-1]
        one = ran(self._explorer, run, key, payload, policy, found, frame.best)
        new, ids = self._parts.encode(one.parts)
        fields = (one.cut, one.asleep, one.key, one.name, new, ids, one.preemptions, one.naive, one.bounded, one.best)
        self._send(("run", frame.ident, *fields))
        self._poll()

    def _skip(self, nodes: list[Node], found: Exploration) -> bool:
        """At each branch the search begins: revise or drop what was given away, give a branch away if asked, and
        if this is a branch given away, wait for its result and take it instead of exploring it."""
        frame = self._stack[-1]
        self._poll()
        if not frame.given and not self._split:
            return False  # most branches: nothing given away, nobody asking
        # the branch begun here, written only when it may be one given away (same decision, same actor) or is
        # needed to give one: most branches begun are neither
        depth, actor = len(nodes) - 1, nodes[-1].chosen
        mine = self._split or any(key[1] == depth and key[2] == actor for key in frame.given)
        here = key_here(self._explorer, nodes) if mine else None
        frame.begun += 1
        if frame.begun % _REVISE_EVERY == 0 and len(frame.given) > (here in frame.given):
            # every few branches, not at each: a change found late costs the child a few runs, and the owner
            # compares the inputs again when it reaches the branch, so no result is taken for other inputs
            now = {branch: subtree for branch, subtree in planned(self._explorer, nodes, frame.floor)}
            for branch, (child, before) in list(frame.given.items()):
                if branch == here:
                    continue
                if branch not in now:
                    self._send(("drop", child))
                    del frame.given[branch]
                    continue
                inputs = normal(now[branch])
                if inputs != before:
                    frame.given[branch] = (self._revise(frame, child, inputs), inputs)
        if self._split and here is not None:
            self._split = False
            self._give(frame, nodes, here)
        if here is None or here not in frame.given:
            return False
        child, before = frame.given.pop(here)
        inputs = inputs_here(self._explorer, nodes)
        if before != inputs:
            child = self._revise(frame, child, inputs)
        self._send(("wait", frame.ident, child))
        result = self._wait(child)
        apply(self._explorer, nodes, found, result)
        self._send(("sub", frame.ident, child))
        return True

    def _give(self, frame: _Frame, nodes: list[Node], here: Key) -> None:
        chosen = None
        for branch, subtree in planned(self._explorer, nodes, frame.floor):
            if branch != here and branch not in frame.given:
                if chosen is not None and subtree.depth != chosen[1].depth:
                    break
                chosen = (branch, subtree)
        if chosen is not None:
            branch, subtree = chosen
            inputs = normal(subtree)
            child = self._name()
            frame.given[branch] = (child, inputs)
            self._send(("gave", frame.ident, child, inputs))
            return
        self._send(("nothing",))

    def _revise(self, frame: _Frame, child: str, inputs: str) -> str:
        new = self._name()
        self._send(("revise", child, new, frame.ident, inputs))
        return new

    def _name(self) -> str:
        self._made += 1
        return f"{self._number}.{self._made}"

    def _wait(self, child: str) -> Result:
        """Wait for ``child``'s result, exploring meanwhile what the coordinator hands over (parts of ``child``)."""
        while child not in self._results:
            if self._items:
                self._explore(*self._items.pop(0))
                continue
            if self._split:
                self._split = False
                self._send(("nothing",))
            self._handle(self._recv())
            if self._split:  # asked while waiting: this worker's own search is paused, nothing to give
                self._split = False
                self._send(("nothing",))
        return self._results.pop(child)


class _Quit(Exception):
    """Raised when the coordinator says the exploration is over."""


def work(conn: Connection, explorer: Explorer, number: int) -> None:
    """The target of a forked worker process."""
    Worker(conn, explorer, number).live()
