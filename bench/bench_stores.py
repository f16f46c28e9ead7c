"""Measure what article 003 did not: commits per second, STALE share and lock waits on memory, SQLite and PostgreSQL.

Each client asks questions on one shared session for a fixed time: begin, ask the scripted model (which answers
after a fixed delay, the stand-in for a real model call), commit. A STALE answer is counted and never re-asked
(the article's rule); the client moves on to its next question. Cells:

- ``synchronized``: the baseline, article 000's ``TransactionalChat`` in memory, shared by threads: the lock is
  held across the model call, so every answer commits and the session answers one question at a time;
- ``memory``: article 003's ``VersionedSession`` in memory, shared by threads (one object, one lock);
- ``sqlite`` and ``postgresql``: each client has its own session object and its own connection to one database
  file or server, as threads of one process and as separate processes (``fork``).

Lock waits are the commits that found the database's write lock (SQLite) or the session's row lock (PostgreSQL)
taken and had to wait for it; busy errors are waits that ran past the busy timeout. SQLite runs in WAL mode with
``synchronous=NORMAL`` in a file on disk; PostgreSQL is a throwaway server started from the machine's binaries
with its durable defaults (``fsync=on``, ``synchronous_commit=on``), on 127.0.0.1.

Run from the repository root: ``.venv/bin/python bench/bench_stores.py`` (``--seconds``, ``--delay-ms``,
``--clients``). It prints the machine and one row per cell. Stops by itself; talks to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lab.messages import ChatRequest
from lab.sessions.stores import Store, StoreError, open_store
from lab.sessions.stores import postgres as postgres_store
from lab.sessions.stores.pgserver import TemporaryPostgres, find_binaries
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.transactional import TransactionalChat
from lab.sessions.versioned import VersionedSession
from lab.transport.contract import Reply


class DelayedModel:
    """The scripted model with a fixed delay: every question is answered ``delay`` seconds after it is asked."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def send(self, request: ChatRequest) -> Reply:
        time.sleep(self.delay)
        return Reply(f"answer to {request.question}", "stop")


@dataclass
class Cell:
    store: str
    mode: str
    clients: int
    seconds: float
    counts: Counter[str]

    @property
    def committed_per_second(self) -> float:
        return self.counts["COMMITTED"] / self.seconds

    @property
    def stale_share(self) -> float:
        decided = self.counts["COMMITTED"] + self.counts["STALE"]
        return self.counts["STALE"] / decided if decided else 0.0


def _connect(spec: str) -> Store:
    if spec.startswith("sqlite:"):
        return SqliteStore(spec.removeprefix("sqlite:"), lock_timeout=10.0)
    store = open_store(spec)
    assert store is not None
    return store


def _client(ask: Callable[[int], str], seconds: float, start: threading.Event | None = None) -> Counter[str]:
    counts: Counter[str] = Counter()
    deadline = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < deadline:
        n += 1
        try:
            counts[ask(n)] += 1
        except StoreError:
            counts["busy_errors"] += 1
    return counts


def _versioned_ask(session: VersionedSession, model: DelayedModel, who: str) -> Callable[[int], str]:
    def ask(n: int) -> str:
        ticket = session.begin(f"{who}-r{n}", f"{who} question {n}")
        reply = model.send(ticket.to_request())
        return session.commit(ticket, reply.content, reply.finish_reason).value

    return ask


def _waits(store: Store) -> int:
    return int(getattr(store, "busy_waits", 0)) + int(getattr(store, "lock_waits", 0))


def _durable_client(spec: str, name: str, who: str, delay: float, seconds: float) -> Counter[str]:
    store = _connect(spec)
    session = VersionedSession(name, store=store)
    counts = _client(_versioned_ask(session, DelayedModel(delay), who), seconds)
    counts["lock_waits"] += _waits(store)
    store.close()
    return counts


def _process_main(spec: str, name: str, who: str, delay: float, seconds: float, start: object, out: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    out.put(_durable_client(spec, name, who, delay, seconds))  # type: ignore[attr-defined]


def _threads(clients: int, body: Callable[[int], Counter[str]]) -> Counter[str]:
    results: list[Counter[str]] = [Counter() for _ in range(clients)]

    def run(i: int) -> None:
        results[i] = body(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return sum(results, Counter())


def measure(store: str, mode: str, clients: int, spec: str, delay: float, seconds: float, run: int) -> Cell:
    """One cell of the table."""
    model = DelayedModel(delay)
    name = f"bench-{store}-{mode}-{clients}-{run}"
    begun = time.perf_counter()
    if store == "synchronized":
        chat = TransactionalChat(model)
        counts = _threads(clients, lambda i: _client(lambda n: chat.ask(f"c{i} question {n}").status.value, seconds))
    elif store == "memory":
        session = VersionedSession(name)
        counts = _threads(clients, lambda i: _client(_versioned_ask(session, model, f"c{i}"), seconds))
    elif mode == "threads":
        _connect(spec).close()
        counts = _threads(clients, lambda i: _durable_client(spec, name, f"c{i}", delay, seconds))
    else:
        _connect(spec).close()
        context = multiprocessing.get_context("fork")
        start, out = context.Event(), context.Queue()
        workers = [
            context.Process(target=_process_main, args=(spec, name, f"p{i}", delay, seconds, start, out))
            for i in range(clients)
        ]
        for worker in workers:
            worker.start()
        begun = time.perf_counter()
        start.set()
        counts = sum((out.get(timeout=120) for _ in workers), Counter())
        for worker in workers:
            worker.join(timeout=60)
    elapsed = max(time.perf_counter() - begun, seconds)
    return Cell(store, mode, clients, elapsed, counts)


def machine() -> str:
    """One line about where the numbers come from."""
    pg = "none"
    binaries = find_binaries()
    if binaries is not None:
        pg = binaries.parent.name
    return (
        f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, PostgreSQL {pg}, "
        f"psycopg {postgres_store.psycopg.__version__ if postgres_store.available() else 'missing'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="how long each cell runs (default 1.5)")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="the model's fixed delay (default 5 ms)")
    parser.add_argument("--clients", default="1,4,16", help="client counts (default 1,4,16)")
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    delay = args.delay_ms / 1000
    print(f"machine: {machine()}")
    print(f"each cell: {args.seconds:g} s, model delay {args.delay_ms:g} ms, STALE answers never re-asked")
    print(f"{'store':<13}{'mode':<11}{'clients':>8}{'commits/s':>11}{'STALE':>8}{'lock waits':>12}{'busy errors':>13}")
    folder = Path(tempfile.mkdtemp(prefix="bench-stores-", dir=Path.cwd() if os.access(".", os.W_OK) else None))
    server: TemporaryPostgres | None = None
    try:
        cells: list[tuple[str, str, str]] = [("synchronized", "threads", ""), ("memory", "threads", "")]
        sqlite_spec = f"sqlite:{folder / 'bench.db'}"
        cells += [("sqlite", "threads", sqlite_spec), ("sqlite", "processes", sqlite_spec)]
        if postgres_store.available() and find_binaries() is not None:
            server = TemporaryPostgres()
            url = server.start()
            cells += [("postgresql", "threads", url), ("postgresql", "processes", url)]
        else:
            print("postgresql: skipped (no server binaries or no psycopg)")
        run = 0
        for store, mode, spec in cells:
            for clients in counts:
                run += 1
                cell = measure(store, mode, clients, spec, delay, args.seconds, run)
                print(
                    f"{store:<13}{mode:<11}{clients:>8}{cell.committed_per_second:>11.1f}"
                    f"{cell.stale_share:>8.0%}{cell.counts['lock_waits']:>12}{cell.counts['busy_errors']:>13}",
                    flush=True,
                )
    finally:
        if server is not None:
            server.stop()
        for path in folder.glob("*"):
            path.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
