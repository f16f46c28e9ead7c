# size: the coordinator and its workers share one wire format (_Encoder, _Decoder), kept beside both
"""All cores, one answer: worker processes run parts of the search ahead of time; the search itself stays one.

The coordinator runs the one-process search (:class:`lab.engine.search._explorer.Explorer`) unchanged: the same nodes,
the same wakeup trees and sleep sets, the same races planned in the same order. What it spreads over processes is the
expensive part, running schedules. Whenever a worker is idle, the coordinator hands it a branch the search has
planned but not begun (the shallowest one: the search reaches it last), as a
:class:`lab.engine.search._subtrees.Subtree`,
with the sleep sets the search will have there. The worker explores that subtree exactly as the whole search would,
and sends back every run it made, with what each decision point showed.

Before running a schedule itself, the coordinator follows the worker runs it holds, decision by decision, asking its
own policy at each point. Runs are deterministic, so where its policy makes the same choices all the way, the worker's
run *is* the run it would have made, and it takes it instead of running it. Where it chooses differently (a race
found later changed the plan, a sleep set differs), it runs the schedule itself. Either way every run the search
takes is the run the one-process search takes, in the same order, so counts, outcomes, examples and verdicts are the
same for any number of processes: parallelism can change the time, never the answer.

Why not split the tree and merge what the parts found? In optimal DPOR a race found in one part plans a branch above
it, in a part another process owns, and which runs the search makes depends on the order plans arrive in; merged
counts would depend on timing. Following the one search keeps the answer exact, and a worker whose guess turned out
wrong costs time, not correctness. When the search reaches a branch a worker is still exploring and needs a run the
worker has not sent, it stops that worker (which then takes another branch) and goes on itself, so two processes
never run the same subtree for long.

Workers are forked (the scenario modules, loaded by path, are already in memory), talk over pipes, take no thread
with them (the pool of idle actor threads is emptied in a forked child) and are stopped and reaped when the
exploration ends, however it ends. Where ``fork`` does not exist, exploration runs in one process.

Over 300 lines: both halves of one protocol (the coordinator's and the workers', and the messages between them),
which only make sense together.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Any

from lab.engine.core._footprint import Footprint
from lab.engine.core._policies import DecisionPoint, Policy
from lab.engine.core._run import Decision, RunResult, RunStatus
from lab.engine.core._schedule import schedule_string
from lab.engine.search._exploration import run_class
from lab.engine.search._explorer import Explorer
from lab.engine.search._recording import Recording, Shown
from lab.engine.search._subtrees import Subtree

_REST = 8
"""Runs to wait, after finding no branch to give an idle worker, before looking again (looking costs a walk of the
search's path)."""

FORKS = "fork" in multiprocessing.get_all_start_methods()
"""Whether worker processes can be forked here; without, exploration runs in one process."""

_Point = tuple[int, tuple[str, ...], str | None, dict[str, Footprint], dict[str, str], Footprint]
_Taken = tuple[RunResult, str, object, bytes, list[Any]]


class _Stop(Exception):
    """Raised in a worker when the coordinator asks it to leave its subtree."""


class _Trie:
    """Worker runs by their choices: the decision point at this depth, the runs that chose each actor here, or the
    end of a run."""

    __slots__ = ("children", "end", "point")

    def __init__(self) -> None:
        self.point: _Point | None = None
        self.children: dict[str, _Trie] = {}
        self.end: _Taken | None = None

    def add(self, points: Sequence[_Point], chosen: Sequence[str], taken: _Taken) -> None:
        node = self
        for point, actor in zip(points, chosen, strict=True):
            if node.point is None:
                node.point = point
            node = node.children.setdefault(actor, _Trie())
        if node.end is None and not node.children:
            node.end = taken

    def follow(self, policy: Policy) -> _Taken | None:
        """The run ``policy`` would make, if a worker made it (and it was not taken yet), else ``None``."""
        node = self
        while node.end is None:
            if node.point is None:
                return None
            index, runnable, current, pending, held, last = node.point
            try:
                chosen = policy.choose(DecisionPoint(index, runnable, current, Shown(pending, held, last)))
            except Exception:  # the policy would cut the run short or finds it diverged: run it for real
                return None
            nxt = node.children.get(chosen)
            if nxt is None:
                return None
            node = nxt
        taken, node.end = node.end, None
        return taken


class _Worker:
    """One forked worker, seen from the coordinator: its pipe, and the subtree it is exploring, if any."""

    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.item: Subtree | None = None
        self.ident = 0
        self.stopping = False
        self.decoder = _Decoder()


class Speculation:
    """The worker processes of one exploration (a context manager: none outlives the ``with``)."""

    def __init__(self, explorer: Explorer, workers: int, done: Sequence[bytes] = ()) -> None:
        self._explorer = explorer
        self._count = workers
        self._workers: list[_Worker] = []
        self._trie = _Trie()
        for work in done:  # runs other machines made (explore_work)
            decoder = _Decoder()
            for message in pickle.loads(work):
                self._trie.add(*decoder.decode(message))
        self._given: set[tuple[str, int, str]] = set()
        self._next_ident = 0
        self._rest = 0

    def __enter__(self) -> Speculation:
        if not self._count:  # no fork here, or only runs from elsewhere (done): nothing to start
            return self
        context = multiprocessing.get_context("fork")
        try:
            for _ in range(self._count):
                mine, theirs = context.Pipe()
                process = context.Process(target=_work, args=(theirs, self._explorer), daemon=True)
                process.start()
                theirs.close()
                self._workers.append(_Worker(process, mine))
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._close()

    def reuse(self, policy: Policy, nodes: list[Any]) -> _Taken | None:
        """The next run of the search, if a worker made it; otherwise ``None`` (the caller runs it, after dropping
        the nodes this attempt added), having stopped a worker whose subtree the search has now reached."""
        self._receive()
        start = len(nodes)
        taken = self._trie.follow(policy)
        if taken is not None:
            return taken
        del nodes[start:]
        self._stop_covering(nodes)
        self._give(nodes)
        return None

    # -- talking to workers --------------------------------------------------------------------------------------

    def _receive(self) -> None:
        for worker in self._workers:
            while worker.conn.poll():
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    worker.item, worker.stopping = None, True  # it died: never give it work again
                    break
                if message[0] == "run":
                    self._trie.add(*worker.decoder.decode(message))
                elif message[0] == "done" and message[1] == worker.ident:
                    worker.item, worker.stopping = None, False

    def _give(self, nodes: Sequence[Any]) -> None:
        if self._rest > 0:  # nothing was left to give a moment ago: look again in a few runs, not at every one
            self._rest -= 1
            return
        idle = [w for w in self._workers if w.item is None and not w.stopping and w.process.is_alive()]
        if not idle:
            return
        self._rest = _REST
        for subtree in self._explorer.pending_subtrees(nodes):
            key = (subtree.prefix, subtree.depth, subtree.branch.actor)
            if key in self._given:
                continue
            self._given.add(key)
            worker = idle.pop(0)
            self._next_ident += 1
            worker.item, worker.ident = subtree, self._next_ident
            self._rest = 0
            if not self._send(worker, ("item", worker.ident, subtree.to_text())):
                worker.item = None
            if not idle:
                return

    def _stop_covering(self, nodes: Sequence[Any]) -> None:
        """Stop the worker exploring the subtree the search's next run lies in: the search goes on there itself."""
        for worker in self._workers:
            item = worker.item
            if item is None or worker.stopping or item.depth >= len(nodes):
                continue
            if nodes[item.depth].chosen != item.branch.actor or self._prefix(nodes, item.depth) != item.prefix:
                continue
            worker.stopping = True
            self._send(worker, ("stop",))

    @staticmethod
    def _send(worker: _Worker, message: tuple[Any, ...]) -> bool:
        """Send, or give the worker up if it is gone (the search runs what it would have run)."""
        try:
            worker.conn.send(message)
        except OSError:
            worker.stopping = True
            return False
        return True

    def _prefix(self, nodes: Sequence[Any], depth: int) -> str:
        return schedule_string([Decision(n.enabled, n.chosen) for n in nodes[:depth]], self._explorer.actors)

    def _close(self) -> None:
        for worker in self._workers:
            with contextlib.suppress(OSError):
                worker.conn.send(("quit",))
        for worker in self._workers:
            worker.process.join(timeout=0.2)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
            worker.process.close()
        self._workers.clear()


def _slimmed(run: RunResult, points: Sequence[_Point], chosen: Sequence[str]) -> RunResult:
    """``run`` without what travels otherwise: the trace (no part of a result), the accesses (they travel digested;
    a failing run is replayed for its explanation), and the decisions and step footprints, which the decision
    points already show (each shows what the step before it touched), but the last step's."""
    slim = replace(run, trace=(), accesses=())
    if (
        _decisions(points, chosen) == run.decisions
        and _footprints(points, run.step_footprints[-1:]) == run.step_footprints
    ):
        slim = replace(slim, decisions=(), step_footprints=run.step_footprints[-1:])
    return slim


def _filled(run: RunResult, points: Sequence[_Point], chosen: Sequence[str]) -> RunResult:
    """The run :func:`_slimmed` sent, with its decisions and step footprints made again from its points."""
    if run.decisions or not chosen:
        return run
    return replace(run, decisions=_decisions(points, chosen), step_footprints=_footprints(points, run.step_footprints))


def _decisions(points: Sequence[_Point], chosen: Sequence[str]) -> tuple[Decision, ...]:
    return tuple(Decision(point[1], actor) for point, actor in zip(points, chosen, strict=True))


def _footprints(points: Sequence[_Point], last: tuple[Footprint, ...]) -> tuple[Footprint, ...]:
    return tuple(point[5] for point in points[1:]) + last


def _part_key(part: Any) -> Any:
    """What tells parts of run digests apart. A part of an atomicity digest (``run_parts``) is its place, what it
    accessed and its windows; its accesses add only their step numbers, which differ from run to run and which
    nothing that merges them reads, so a part seen once is sent once, with the accesses of the first run."""
    if isinstance(part, tuple) and len(part) == 4:
        return (part[0], part[1], part[3])
    return part


class _Encoder:
    """Turns a worker's runs into messages: each run says how many of its first choices it shares with the run
    before it and sends only the rest of its decision points, and each part of its digest is sent once."""

    def __init__(self, explorer: Explorer) -> None:
        self._explorer = explorer
        self._last: list[str] = []
        self._numbers: dict[Any, int] = {}

    def restart(self) -> None:
        """A new subtree begins: its first run shares nothing with the last one sent."""
        self._last = []

    def encode(self, ident: int, recording: Recording, run: RunResult, key: str, payload: object) -> tuple[Any, ...]:
        points, chosen = recording.points, recording.chosen
        same = next((k for k, (a, b) in enumerate(zip(self._last, chosen, strict=False)) if a != b), len(self._last))
        same = min(same, len(chosen))
        self._last = chosen
        parts: list[Any] = []
        ids: list[int] = []
        for part in self._explorer.digest(run):  # runs share most parts: each is sent once
            known = _part_key(part)
            number = self._numbers.get(known)
            if number is None:
                number = self._numbers[known] = len(self._numbers)
                parts.append(part)
            ids.append(number)
        slim = _slimmed(run, points, chosen)
        return ("run", ident, same, points[same:], chosen[same:], slim, parts, ids, key, payload, run_class(run))


class _Decoder:
    """Makes runs again from one worker's messages (the state :class:`_Encoder` keeps on the other side)."""

    def __init__(self) -> None:
        self.points: list[_Point] = []
        self.chosen: list[str] = []
        self.parts: list[Any] = []

    def decode(self, message: tuple[Any, ...]) -> tuple[list[_Point], list[str], _Taken]:
        _, _, same, points, chosen, run, parts, ids, key, payload, name = message
        self.points = points = self.points[:same] + points
        self.chosen = chosen = self.chosen[:same] + chosen
        self.parts.extend(parts)
        digested = [self.parts[i] for i in ids]
        return points, chosen, (_filled(run, points, chosen), key, payload, name, digested)


def split_work(explorer: Explorer, at_least: int) -> list[str]:
    """Work items for other machines: run the search here until it has planned at least ``at_least`` branches it
    has not begun (or for ``at_least`` runs, if that comes first), and return those subtrees, one line of text each
    (none when the search ended first: it is small enough for one machine). Hand each line to
    :func:`explore_work` anywhere the same checkout runs."""
    return [subtree.to_text() for subtree in explorer.split(at_least)]


def explore_work(explorer: Explorer, line: str) -> bytes:
    """Explore the subtree ``line`` names (from :func:`split_work`, with an explorer of the same scenario and
    settings) and return its runs, for ``explore(done=...)`` to take. Bytes of pickles: accept them only from
    machines you trust, as with any task queue that carries pickles."""
    encoder = _Encoder(explorer)
    messages: list[tuple[Any, ...]] = []

    def emit(recording: Recording, run: RunResult, key: str, payload: object) -> None:
        if run.status != RunStatus.DIVERGED:
            messages.append(encoder.encode(0, recording, run, key, payload))

    explorer.explore_subtree(Subtree.from_text(line), emit)
    return pickle.dumps(messages, protocol=pickle.HIGHEST_PROTOCOL)


def _work(conn: Connection, explorer: Explorer) -> None:
    """A worker's life: explore each subtree it is given, sending every run, until told to quit."""
    explorer.quiet_for_worker()
    encoder = _Encoder(explorer)

    def emit(recording: Recording, run: RunResult, key: str, payload: object) -> None:
        if run.status != RunStatus.DIVERGED:
            conn.send(encoder.encode(ident, recording, run, key, payload))
        if conn.poll():
            message = conn.recv()
            if message[0] == "quit":
                raise SystemExit(0)
            raise _Stop

    ident = 0
    while True:
        message = conn.recv()
        if message[0] == "quit":
            return
        if message[0] != "item":
            continue  # a stop that came after the subtree was done
        ident = message[1]
        encoder.restart()
        try:
            explorer.explore_subtree(Subtree.from_text(message[2]), emit)
        except _Stop:
            pass
        except Exception:  # the coordinator runs whatever this worker did not send, and meets the error itself
            pass
        conn.send(("done", ident))
