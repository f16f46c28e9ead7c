"""Many processes on one session: commits per second, and WAL syncs per COMMITTED commit, on SQLite and PostgreSQL.

Each worker process asks questions on one shared session for a fixed time: begin, ask the scripted model (which
answers after a fixed delay, the stand-in for a real model call), commit. A STALE answer is counted and never
re-asked (article 003's rule); the worker moves on to its next question. Every worker has its own connection,
opened before the clock starts. One session takes one answer per version, so N workers that began on one version
get one COMMITTED and N-1 refusals: what matters is that the refusals do not slow the winner down.

Two rates per cell: ``commits/s``, the COMMITTED commits per second (what issue 24's bar is about: at least 0.8 of
the 4-process figure at 32 processes, for PostgreSQL now), and ``decided/s``, every commit that came back with a
status (COMMITTED, STALE, DUPLICATE...) per second, the work the store did for all its clients.

Both are counted while every worker of the cell is running: from the moment the last worker's clock starts to
the moment the first worker's runs out (:func:`window`). Until 2026-12-03 they were counted over the cell's whole
time, from the start signal to the last worker's report, which at 32 processes on 2 busy cores included 0.2 to
0.6 s of workers still waking up or already done (the last started 0.1 to 0.3 s after the first), and biased the
32-process rates low by 5 to 10% against the 4-process ones. The workers' loop is unchanged.

Cells, each at 4, 8 and 32 processes (``--processes``):

- ``sqlite``: a database file on disk, WAL mode, ``synchronous=NORMAL``;
- ``postgresql before``: the commit as it was before issue 24 (:class:`CommitBefore`, the old statements kept here
  verbatim): the row locked, the receipt looked up, the compare-and-set, and the transaction *committed* even when
  it refused, so a refusal that had taken the row lock still wrote and synced the WAL;
- ``postgresql read+cas``: issue 24's first fix (:class:`ReadThenCommit`): the session reads the row, decides,
  then sends one compare-and-set statement (``PostgresStore.COMMIT_ROUND``); a refusal writes nothing;
- ``postgresql one-step``: the store's commit now: the session sends the ticket, and one statement reads the row
  and, when the read allows the commit, calls the server-side function that decides and writes
  (``PostgresStore.COMMIT_TICKET``, ``lab_commit_ticket``): one round trip per commit, none before. Like the
  read, it is a statement prepared on the connection and sent on libpq directly (``pgprepared``); ``read+cas``
  and ``before`` read the same way, and send their commits through psycopg's cursor.

PostgreSQL is a throwaway server started from the machine's binaries with its durable defaults (``fsync=on``,
``synchronous_commit=on``), on 127.0.0.1. WAL syncs are the server's own count (``pg_stat_wal.wal_sync``, read
before and after each cell, once the workers' connections have closed and flushed their statistics).

``--repeat N`` runs the whole table N times, each store's cells one after another, and prints for each cell the
median of its N runs; ``x4`` is the median of the N ratios to the same store's 4-process cell *of the same
repetition* (on a machine shared with other work, the two cells of a ratio ran seconds apart). ``busy`` is how
busy the machine's CPUs were during the cell (all processes, ours and others'), ``syncs/C`` the WAL syncs per
COMMITTED commit over all N runs. Run from the repository root: ``.venv/bin/python bench/bench_stores.py``
(``--seconds``, ``--delay-ms``, ``--processes``, ``--repeat``). Stops by itself; talks to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.stores import Store, StoreError
from lab.sessions.stores import postgres as postgres_store
from lab.sessions.stores.pgserver import TemporaryPostgres, find_binaries
from lab.sessions.stores.postgres import PostgresStore
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.stores.store import access_name, encode_history, row_name
from lab.sessions.versioned import VersionedSession


class ReadThenCommit(PostgresStore):
    """Issue 24's first fix, kept to be measured: no one-step commit, so the session reads the row, decides, and
    sends the one-statement compare-and-set (:attr:`PostgresStore.COMMIT_ROUND`) for a commit the read allowed."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._one_step = False


class CommitBefore(ReadThenCommit):
    """The PostgreSQL commit before issue 24, statement for statement (commit 89c025f): kept only to be measured.

    One transaction: the row lock (``NOWAIT`` in a savepoint first, then waiting), the receipt lookup, the
    compare-and-set; the transaction ends with ``COMMIT`` whatever it decided, so a refusal that took the row lock
    (a transaction id, a WAL record) made the server sync its WAL like a real commit. The session reads first, as it
    did then (no one-step commit: :class:`ReadThenCommit`).
    """

    COMPARE_AND_SET = "UPDATE lab_sessions SET version = version + 1, history = %s WHERE key = %s AND version = %s"

    def commit_round(
        self,
        key: str,
        name: str,
        *,
        expected_version: int,
        history: tuple[Message, ...],
        request_id: str,
        question: str,
        answer: str,
        receipt_capacity: int,
    ) -> bool:
        note_shared_access(access_name(self.label), row_name(name), "w")
        db = self._db
        with db.transaction():
            try:
                with db.transaction():
                    db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE NOWAIT", (key,))
            except postgres_store.psycopg.errors.LockNotAvailable:
                self.lock_waits += 1
                db.execute("SELECT 1 FROM lab_sessions WHERE key = %s FOR UPDATE", (key,))
            taken = "SELECT 1 FROM lab_receipts WHERE session = %s AND request_id = %s"
            if db.execute(taken, (key, request_id)).fetchone() is not None:
                return False
            moved = db.execute(self.COMPARE_AND_SET, (encode_history(history), key, expected_version))
            if moved.rowcount != 1:
                return False
            db.execute(self.STORE_RECEIPT, (key, request_id, expected_version + 1, question, answer))
            db.execute(self.EVICT_RECEIPTS, (key, expected_version + 1 - receipt_capacity))
            return True


@dataclass
class Cell:
    store: str
    commit: str
    processes: int
    seconds: float
    counts: Counter[str]
    """Everything the workers counted, over the whole cell (the WAL syncs are divided by its COMMITTED)."""
    syncs: int | None
    busy: float
    window: Counter[str]
    """The statuses of the commits that came back while every worker was running (see :func:`window`)."""
    window_seconds: float

    @property
    def committed_per_second(self) -> float:
        return self.window["COMMITTED"] / self.window_seconds

    @property
    def decided_per_second(self) -> float:
        return sum(self.window.values()) / self.window_seconds

    @property
    def stale_share(self) -> float:
        decided = self.window["COMMITTED"] + self.window["STALE"]
        return self.window["STALE"] / decided if decided else 0.0


def _connect(spec: str, commit: str) -> Store:
    if spec.startswith("sqlite:"):
        return SqliteStore(spec.removeprefix("sqlite:"), lock_timeout=10.0)
    if commit == "before":
        return CommitBefore(spec, lock_timeout=10.0)
    if commit == "read+cas":
        return ReadThenCommit(spec, lock_timeout=10.0)
    return PostgresStore(spec, lock_timeout=10.0)


@dataclass
class Asked:
    """What one worker reports: its counts, when its clock started and ran out, and when each commit came back
    with which status (the machine's monotonic clock, the same in every process)."""

    counts: Counter[str]
    began: float
    deadline: float
    decided: list[tuple[float, str]]


def _worker(spec: str, commit: str, name: str, who: str, delay: float, seconds: float, start: Any, out: Any) -> None:
    """One process: connect, wait for the start, then begin / model / commit until the time is up."""
    try:
        out.put(_asks(spec, commit, name, who, delay, seconds, start))
    except BaseException as error:  # reported by the parent, which would otherwise wait for a result in vain
        out.put(f"crashed: {type(error).__name__}: {error}")


def _asks(spec: str, commit: str, name: str, who: str, delay: float, seconds: float, start: Any) -> Asked:
    store = _connect(spec, commit)
    session = VersionedSession(name, store=store)
    counts: Counter[str] = Counter()
    decided: list[tuple[float, str]] = []
    start.wait()
    began = time.perf_counter()
    deadline = began + seconds
    n = 0
    while time.perf_counter() < deadline:
        n += 1
        try:
            ticket = session.begin(f"{who}-r{n}", f"{who} question {n}")
            time.sleep(delay)  # the model answers
            status = session.commit(ticket, f"answer {n}", "stop").value
            counts[status] += 1
            decided.append((time.perf_counter(), status))
        except StoreError:
            counts["errors"] += 1
    counts["lock_waits"] += int(getattr(store, "busy_waits", 0)) + int(getattr(store, "lock_waits", 0))
    store.close()
    return Asked(counts, began, deadline, decided)


def window(asked: list[Asked], fallback: float) -> tuple[Counter[str], float]:
    """The statuses of the commits that came back while every worker was running, and how long that was: from the
    last worker's start to the first worker's deadline.

    Why not every commit over the cell's whole time: the start wakes all the workers at once, and with 32 of them
    on 2 busy cores the last one starts its clock 0.1 to 0.3 s after the first (measured), and each runs its
    full time from its own start, then closes its store and reports. Counted over the whole cell, a 32-process
    cell's time included 0.2 to 0.6 s in which fewer than 32 workers ran (2.2 to 2.4 s for a 2 s cell, against
    2.04 to 2.07 for 4 processes), so its rate was not the rate *with 32 processes*, and the ratio to 4 processes
    was biased low by 5 to 10%. With no such window (a worker starting after another's time ran out), the whole
    cell (``fallback`` seconds) is used."""
    first = max(one.began for one in asked)
    last = min(one.deadline for one in asked)
    if last - first <= 0:
        counts: Counter[str] = Counter(status for one in asked for _at, status in one.decided)
        return counts, fallback
    counts = Counter(status for one in asked for at, status in one.decided if first <= at <= last)
    return counts, last - first


def _wal_syncs(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        return int(db.execute("SELECT wal_sync FROM pg_stat_wal").fetchone()[0])


def _cpu_times() -> tuple[int, int]:
    """The machine's CPU time so far, in ticks: (all, idle) (Linux's /proc/stat; (0, 0) elsewhere)."""
    try:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return sum(fields), fields[3] + fields[4]


def measure(store: str, commit: str, processes: int, spec: str, delay: float, seconds: float, run: int) -> Cell:
    """One cell of the table."""
    name = f"bench-{store}-{commit}-{processes}-{run}"
    _connect(spec, commit).close()  # the schema exists before the workers start
    context = multiprocessing.get_context("fork")
    start, out = context.Event(), context.Queue()
    workers = [
        context.Process(target=_worker, args=(spec, commit, name, f"p{i}", delay, seconds, start, out))
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    time.sleep(0.5 + processes * 0.02)  # every worker connected and waiting
    syncs_before = _wal_syncs(spec) if store == "postgresql" else None
    begun = time.perf_counter()
    cpu_before = _cpu_times()
    start.set()
    reports = [out.get(timeout=120) for _ in workers]
    crashed = [report for report in reports if isinstance(report, str)]
    if crashed:
        raise SystemExit(f"a worker {crashed[0]}")
    asked: list[Asked] = reports
    counts = sum((one.counts for one in asked), Counter())
    elapsed = max(time.perf_counter() - begun, seconds)
    cpu_after = _cpu_times()
    total = cpu_after[0] - cpu_before[0]
    busy = 1 - (cpu_after[1] - cpu_before[1]) / total if total > 0 else 0.0
    for worker in workers:
        worker.join(timeout=60)
    syncs = None
    if syncs_before is not None:
        time.sleep(1.0)  # the workers' backends have exited and reported their WAL statistics
        syncs = _wal_syncs(spec) - syncs_before
    inside, inside_seconds = window(asked, elapsed)
    return Cell(store, commit, processes, elapsed, counts, syncs, busy, inside, inside_seconds)


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


HEADER = (
    f"{'store':<11}{'commit':<9}{'procs':>5}{'commit/s':>9}{'x4':>5}{'decided/s':>10}{'x4':>5}{'STALE':>6}"
    f"{'waits':>6}{'syncs/C':>8}{'busy':>5}"
)


def row(runs: list[Cell], bases: list[Cell]) -> str:
    """One line of the table (79 columns; a cell whose commits failed says so at the end): the medians of a
    cell's runs, ``x4`` the median ratio to the 4-process cell of the same repetition."""
    first = runs[0]

    def median(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    committed = median([cell.committed_per_second for cell in runs])
    decided = median([cell.decided_per_second for cell in runs])
    ratio = median([c.committed_per_second / b.committed_per_second for c, b in zip(runs, bases, strict=True)])
    ratio_all = median([c.decided_per_second / b.decided_per_second for c, b in zip(runs, bases, strict=True)])
    stale = median([cell.stale_share for cell in runs])
    waits = round(median([cell.counts["lock_waits"] for cell in runs]))
    errors = sum(cell.counts["errors"] for cell in runs)
    syncs = [cell.syncs for cell in runs if cell.syncs is not None]
    commits = sum(cell.counts["COMMITTED"] for cell in runs)
    per = "-" if not syncs or not commits else f"{sum(syncs) / commits:.2f}"
    busy = median([cell.busy for cell in runs])
    return (
        f"{first.store:<11}{first.commit:<9}{first.processes:>5}{committed:>9.1f}{ratio:>5.2f}{decided:>10.1f}"
        f"{ratio_all:>5.2f}{stale:>6.0%}{waits:>6}{per:>8}{busy:>5.0%}" + (f" {errors} errors" if errors else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each cell runs (default 3)")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="the model's fixed delay (default 5 ms)")
    parser.add_argument("--processes", default="4,8,32", help="process counts (default 4,8,32; the first is x4's base)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the whole table; medians printed (default 1)")
    args = parser.parse_args()
    counts = [int(c) for c in args.processes.split(",")]
    delay = args.delay_ms / 1000
    print(f"machine: {machine()}")
    print(
        f"each cell: {args.seconds:g} s, model delay {args.delay_ms:g} ms, STALE answers never re-asked, "
        f"median of {args.repeat}"
    )
    folder = Path(tempfile.mkdtemp(prefix="bench-stores-", dir=Path.cwd() if os.access(".", os.W_OK) else None))
    server: TemporaryPostgres | None = None
    try:
        cells: list[tuple[str, str, str]] = [("sqlite", "after", f"sqlite:{folder / 'bench.db'}")]
        if postgres_store.available() and find_binaries() is not None:
            server = TemporaryPostgres(max_connections=max(counts) + 20)
            url = server.start()
            cells += [(name, commit, url) for name, commit in (("postgresql", c) for c in COMMITS)]
        else:
            print("postgresql: skipped (no server binaries or no psycopg)")
        results: dict[tuple[str, str, int], list[Cell]] = {}
        run = 0
        for repetition in range(args.repeat):
            for store, commit, spec in cells:
                for processes in counts:
                    run += 1
                    cell = measure(store, commit, processes, spec, delay, args.seconds, run)
                    results.setdefault((store, commit, processes), []).append(cell)
            print(f"repetition {repetition + 1} of {args.repeat} done", file=sys.stderr, flush=True)
        print(HEADER)
        for store, commit, _spec in cells:
            bases = results[(store, commit, counts[0])]
            for processes in counts:
                print(row(results[(store, commit, processes)], bases), flush=True)
    finally:
        if server is not None:
            server.stop()
        for path in folder.glob("*"):
            path.unlink()
        folder.rmdir()
    return 0


COMMITS = ("before", "read+cas", "one-step")
"""PostgreSQL's commits measured, oldest first (see the module docstring)."""


if __name__ == "__main__":
    sys.exit(main())
