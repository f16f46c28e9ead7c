"""All cores, one answer: workers explore whole subtrees and steal more; the coordinator hands out and tallies.

The coordinator runs no schedule. It gives the whole tree to one worker (:mod:`lab.engine.search._work_worker`) and,
whenever a worker is idle, asks a busy one to split: the busy worker gives away a branch at the shallowest decision
where its search has planned one but not begun it (the next of them there: its inputs change least before the owner
reaches it), and the idle one explores that subtree.
A worker that reaches a branch it gave away waits for that subtree's result and, meanwhile, takes part of that
subtree in turn (leapfrogging: what a worker takes while it waits lies inside what it waits for, so no two workers
ever wait for each other).

Why the records are the same, byte for byte, for any number of workers: every result is defined by the one-process
search's depth-first order, never by timing.

- A subtree's exploration depends only on its *inputs*: the choices that lead to it, the plan below its branch (a
  wakeup tree) and the sleep sets on the way. The owner notes them when it gives the branch away, compares them after
  each of its runs (a race found later may grow the plan) and sends new ones when they change (the coordinator
  restarts that item), and takes a result only for the inputs it has when its search reaches the branch. With equal
  inputs, the subtree's runs are the runs the owner would have made, and the owner goes on with what the subtree
  found above its branch (:mod:`lab.engine.search._work_items`).
- Each item's runs arrive in its own search's order, with a marker where it took a child's result. The coordinator
  tallies them by walking items in that order, descending into a child at its marker: the one-process order, so
  counts, outcomes, examples (chosen by rank anyway), the first failure, the digests the caller adopts and every
  progress report are the one-process ones.
- A budget (``max_schedules``) cuts the search at its N-th run in that order; what a cut search reports beyond its
  runs (whether anything was left, Knuth's estimate from the path it stopped on) needs the one-process search's path
  at that run, which no worker has. So when the tally reaches the budget the workers stop and this process runs the
  one-process search itself, quietly for the runs already reported: a cut exploration costs its parallel part plus a
  serial one, and says the same as with one process. So does an error in a worker (a nondeterministic run): the
  one-process search meets it where it would.

Workers are forked (the scenario modules, loaded by path, are already in memory), talk over pipes and are stopped and
reaped when the exploration ends, however it ends. Where ``fork`` does not exist, exploration runs in one process.

The same work items run on other machines: :func:`split_work` writes them as lines of text, :func:`explore_work`
explores one, and ``explore(done=...)`` takes the results wherever its search reaches a subtree with the same inputs
(see docs/exploration.md for a task per item on an existing distributed task engine).
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import TYPE_CHECKING, Any

from lab.engine.search._exploration import Exploration
from lab.engine.search._explorer import Explorer
from lab.engine.search._subtrees import Subtree
from lab.engine.search._work_items import Ran, Result
from lab.engine.search._work_local import quietly, take_done, take_results
from lab.engine.search._work_tally import Item, Tally
from lab.engine.search._work_worker import work

if TYPE_CHECKING:
    pass

FORKS = "fork" in multiprocessing.get_all_start_methods()
"""Whether worker processes can be forked here; without, exploration runs in one process."""

_CALM = 4
"""Runs a worker makes, after saying it had nothing to give, before it is asked again."""


class _Handle:
    """One forked worker, seen from the coordinator: its pipe, the items it holds (innermost last, each with the
    child it waits for), the digest parts it sent."""

    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.stack: list[list[str | None]] = []
        self.asked = False
        self.calm = 0
        self.parts: list[Any] = []

    def send(self, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # gone: its end of file says so
            self.conn.send(message)


class _Coordinator:
    """The worker processes of one exploration and what they report (a context manager: none outlives the
    ``with``)."""

    def __init__(self, explorer: Explorer, workers: int) -> None:
        self._explorer = explorer
        self._count = workers
        self._workers: list[_Handle] = []
        self.tally = Tally(explorer)
        self._items = self.tally.items
        self._holders: dict[str, _Handle] = {}
        self._queue: list[str] = []
        self.found = self.tally.found
        self.failed: str | None = None

    def __enter__(self) -> _Coordinator:
        context = multiprocessing.get_context("fork")
        try:
            for number in range(self._count):
                mine, theirs = context.Pipe()
                process = context.Process(target=work, args=(theirs, self._explorer, number), daemon=True)
                process.start()
                theirs.close()
                self._workers.append(_Handle(process, mine))
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._close()

    def run(self) -> bool:
        """Hand out, receive and tally until the search is done (True), or until the budget or an error means the
        one-process search must say the rest (False)."""
        self._hand(self._workers[0], "r")
        self._schedule()  # ask for a split at once: the first worker's first message is a batch of runs away
        while True:
            ready = wait([w.conn for w in self._workers])
            for worker in [w for w in self._workers if w.conn in ready]:
                try:
                    while worker.conn.poll():
                        self._receive(worker, worker.conn.recv())
                except (EOFError, OSError):
                    self.failed = self.failed or "a worker process ended"
            if self.failed is not None:
                return False
            if not self.tally.advance():
                return False
            if self.tally.complete:
                return True
            self._schedule()

    # -- messages ------------------------------------------------------------------------------------------------

    def _receive(self, worker: _Handle, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "runs":
            for one in message[1]:
                self._receive(worker, one)
        elif kind == "run":
            _, ident, cut, asleep, key, name, new, ids, preemptions, naive, bounded, best = message
            worker.parts.extend(new)
            worker.calm = max(worker.calm - 1, 0)
            self.found.reused += 1
            item = self._items[ident]
            if not item.dead:
                parts = [worker.parts[i] for i in ids]
                one = Ran(cut, asleep, key, name, parts, preemptions, naive, bounded, best)
                item.entries.append(("run", one))
        elif kind == "sub":
            _, ident, child = message
            if not self._items[ident].dead:
                self._items[ident].entries.append(("sub", child))
                self._waiting(worker, ident, None)
        elif kind == "wait":
            _, ident, child = message
            if not self._items[ident].dead:
                self._waiting(worker, ident, child)
        elif kind == "gave":
            _, ident, child, text = message
            worker.asked = False
            self._add(ident, child, text)
        elif kind == "nothing":
            worker.asked = False
            worker.calm = _CALM
        elif kind == "revise":
            _, old, new, ident, text = message
            self._kill(old)
            self._add(ident, new, text)
        elif kind == "drop":
            self._kill(message[1])
        elif kind == "done":
            self._done(worker, message[1], Result("", message[2], message[3], message[4]))
        elif kind == "error":
            self.failed = message[1]

    def _add(self, parent: str, child: str, text: str) -> None:
        owner = self._items[parent]
        self._items[child] = item = Item(child, parent, text, Subtree.from_text(text).depth, dead=owner.dead)
        owner.children.append(child)
        if not item.dead:
            self._queue.append(child)

    def _done(self, worker: _Handle, ident: str, result: Result) -> None:
        item = self._items[ident]
        if item.dead:
            return
        item.result = result
        worker.stack = [frame for frame in worker.stack if frame[0] != ident]
        if item.parent is not None:
            holder = self._holders.get(item.parent)
            if holder is not None:
                holder.send(("result", ident, result.outside, result.first, result.bounded))

    def _waiting(self, worker: _Handle, ident: str, child: str | None) -> None:
        for frame in worker.stack:
            if frame[0] == ident:
                frame[1] = child

    def _kill(self, ident: str) -> None:
        """Forget ``ident`` and everything inside it (its inputs changed, or its branch was dropped)."""
        pending = [ident]
        while pending:
            item = self._items[pending.pop()]
            if item.dead:
                continue
            item.dead = True
            pending.extend(item.children)
            for worker in self._workers:
                at = next((k for k, frame in enumerate(worker.stack) if frame[0] == item.name), None)
                if at is not None:  # what it holds above this item lies inside it
                    del worker.stack[at:]
                    worker.send(("cancel", item.name))
        self._queue = [i for i in self._queue if not self._items[i].dead]

    # -- handing out ---------------------------------------------------------------------------------------------

    def _schedule(self) -> None:
        for worker in self._workers:
            if worker.stack and worker.stack[-1][1] is None:
                continue  # busy
            within = worker.stack[-1][1] if worker.stack else None
            ident = next((i for i in self._queue if within is None or self._inside(i, within)), None)
            if ident is not None:
                self._queue.remove(ident)
                self._hand(worker, ident)
                continue
            victims = [
                v
                for v in self._workers
                if v is not worker
                and v.stack
                and v.stack[-1][1] is None
                and not v.asked
                and not v.calm
                and (within is None or self._inside(str(v.stack[-1][0]), within))
            ]
            if victims:
                victim = min(victims, key=lambda v: self._items[str(v.stack[-1][0])].depth)
                victim.asked = True
                victim.send(("split",))

    def _hand(self, worker: _Handle, ident: str) -> None:
        item = self._items[ident]
        self._holders[ident] = worker
        worker.stack.append([ident, None])
        worker.send(("item", ident, item.text))

    def _inside(self, ident: str, within: str) -> bool:
        at: str | None = ident
        while at is not None:
            if at == within:
                return True
            at = self._items[at].parent
        return False

    def _close(self) -> None:
        for worker in self._workers:
            worker.send(("quit",))
        for worker in self._workers:
            worker.process.join(timeout=0.5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
            worker.process.close()
        self._workers.clear()


def explore_parallel(explorer: Explorer, done: Sequence[bytes] = ()) -> Exploration:
    """The exploration ``explorer.explore`` makes with more than one job, or with subtrees explored elsewhere."""
    if done:
        return take_done(explorer, done)
    if not FORKS:
        return explorer._search()
    with _Coordinator(explorer, explorer.jobs) as coordinator:
        complete = coordinator.run()
    if complete:
        return coordinator.found
    # the budget cut the search, or a worker met an error: the one-process search says the rest, reporting nothing
    # twice (its first runs are the ones already reported, in the same order); cut, it takes the subtrees the
    # workers finished wherever it reaches them with the same inputs, so it runs little more than the last item
    if coordinator.failed is not None:
        return quietly(explorer, coordinator.tally.reported, explorer._search)
    finished = coordinator.tally.finished()
    return quietly(explorer, coordinator.tally.reported, lambda: take_results(explorer, finished))
