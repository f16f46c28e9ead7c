"""Article 003's outcome table on every store (memory, SQLite, PostgreSQL), and what only durable stores promise.

One parametrized suite: each test asks ``make`` for sessions and runs the same rows on the three stores. ``make``
gives a fresh session (a fresh row); ``make.again(session)`` gives another session object over the *same* state (a
second worker process, or the same one after a restart), which in memory is the object itself, since nothing else
can reach that state.
"""

from __future__ import annotations

import dataclasses
import itertools
import pickle
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.errors import LabError
from lab.messages import Message, Role, is_whole_pairs
from lab.mutants import InProcessLockSession
from lab.sessions.stores import SCHEMA_VERSION, Store, StoreError, open_store
from lab.sessions.stores.postgres import PostgresStore, psycopg
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession

_names = itertools.count(1)


class Maker:
    """Sessions on one kind of store: fresh ones, and more objects over one session's state."""

    def __init__(self, kind: str, connect: Callable[[], Store | None]) -> None:
        self.kind = kind
        self._connect = connect
        self._stores: list[Store] = []

    def store(self) -> Store | None:
        store = self._connect()
        if store is not None:
            self._stores.append(store)
        return store

    def __call__(
        self, name: str = "", cls: type[VersionedSession] = VersionedSession, **options: object
    ) -> VersionedSession:
        """A new session; durable ones get a name no other test uses, so each starts on a fresh row."""
        session_id = name or f"t{next(_names)}"
        if self.kind != "memory":
            session_id = f"{session_id}-{next(_names)}"
        return cls(session_id, store=self.store(), **options)  # type: ignore[arg-type]

    def again(
        self, session: VersionedSession, cls: type[VersionedSession] = VersionedSession, **options: object
    ) -> VersionedSession:
        """Another object over the same state: a second worker, or a restarted one (memory: the object itself)."""
        if self.kind == "memory":
            return session
        return cls(session.session_id, store=self.store(), **options)  # type: ignore[arg-type]

    def close(self) -> None:
        for store in self._stores:
            store.close()


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Maker]:
    """Sessions on each of the three stores."""
    kind = request.param
    if kind == "memory":
        maker = Maker(kind, lambda: None)
    elif kind == "sqlite":
        maker = Maker(kind, lambda: SqliteStore(tmp_path / "sessions.db"))
    else:
        url = request.getfixturevalue("postgres_url")
        maker = Maker(kind, lambda: open_store(url))
    yield maker
    maker.close()


def _state(session: VersionedSession) -> tuple[int, tuple[Message, ...], tuple[str, ...]]:
    version, history = session.snapshot()
    return version, history, session.receipt_ids


def _pair(question: str, answer: str) -> tuple[Message, Message]:
    return Message(Role.USER, question), Message(Role.ASSISTANT, answer)


class TestOutcomeTable:
    """Every row of article 003's table, and its precedence, on every store."""

    def test_committed_then_stale(self, make: Maker) -> None:
        """Both begin at v0; the fast one commits, the slow one is STALE; history holds only the fast pair."""
        session = make()
        slow, fast = session.begin("r-slow", "slow question"), session.begin("r-fast", "fast question")
        assert session.commit(fast, "new answer", "stop") is CommitStatus.COMMITTED
        assert session.commit(slow, "old answer", "stop") is CommitStatus.STALE
        assert _state(session) == (1, _pair("fast question", "new answer"), ("r-fast",))

    def test_duplicate_before_stale(self, make: Maker) -> None:
        """A committed ticket re-sent after later commits is DUPLICATE, not STALE."""
        session = make()
        ticket = session.begin("r1", "q")
        assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        assert session.commit(session.begin("r2", "q2"), "a2", "stop") is CommitStatus.COMMITTED
        assert session.commit(ticket, "a", "stop") is CommitStatus.DUPLICATE
        assert session.version == 2

    @pytest.mark.parametrize(("question", "answer"), [("q", "other answer"), ("other question", "a")])
    def test_id_conflict(self, make: Maker, question: str, answer: str) -> None:
        """The same request id with another question or answer is ID_CONFLICT, even on an old ticket."""
        session = make()
        old = session.begin("r1", question)
        assert session.commit(session.begin("r1", "q"), "a", "stop") is CommitStatus.COMMITTED
        assert session.commit(old, answer, "stop") is CommitStatus.ID_CONFLICT

    @pytest.mark.parametrize(("answer", "finish_reason"), [("", "stop"), (None, "stop"), ("a", "length"), ("a", None)])
    def test_invalid_before_duplicate(self, make: Maker, answer: str | None, finish_reason: str | None) -> None:
        """A blank answer or a finish reason other than stop is INVALID, even on a committed request id."""
        session = make()
        ticket = session.begin("r1", "q")
        assert session.commit(ticket, answer, finish_reason) is CommitStatus.INVALID
        assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        assert session.commit(ticket, answer, finish_reason) is CommitStatus.INVALID

    def test_foreign_before_invalid(self, make: Maker) -> None:
        """Another session's ticket, or one built by hand or by replace, is FOREIGN, whatever its reply."""
        session, other = make("s1"), make("s1")
        assert session.commit(other.begin("r1", "q"), "", "length") is CommitStatus.FOREIGN
        issued = session.begin("r1", "q")
        assert session.commit(Ticket(issued.session_id, 0, "r1", "q", ()), "a", "stop") is CommitStatus.FOREIGN
        assert session.commit(dataclasses.replace(issued), "a", "stop") is CommitStatus.FOREIGN
        assert _state(session) == (0, (), ())

    @pytest.mark.parametrize("case", ["stale", "duplicate", "id_conflict", "invalid", "foreign"])
    def test_only_committed_changes_anything(self, make: Maker, case: str) -> None:
        """Every status but COMMITTED leaves version, history and receipts as they were."""
        session = make()
        old, first = session.begin("r-old", "old"), session.begin("r1", "q1")
        session.commit(first, "a1", "stop")
        before = _state(session)
        status = {
            "stale": lambda: session.commit(old, "x", "stop"),
            "duplicate": lambda: session.commit(first, "a1", "stop"),
            "id_conflict": lambda: session.commit(first, "other", "stop"),
            "invalid": lambda: session.commit(session.begin("r2", "q2"), " ", "stop"),
            "foreign": lambda: session.commit(make().begin("r3", "q"), "a", "stop"),
        }[case]()
        assert status.value == case.upper()
        assert _state(session) == before

    def test_whole_rounds_trimmed_and_receipts_evicted(self, make: Maker) -> None:
        """max_rounds=2 drops the oldest whole pair; receipt_capacity=2 evicts the oldest receipt, after which an
        old committed ticket is just STALE."""
        session = make(receipt_capacity=2)
        first = session.begin("r1", "q1")
        session.commit(first, "a1", "stop")
        for i in (2, 3):
            session.commit(session.begin(f"r{i}", f"q{i}"), f"a{i}", "stop")
        version, history, receipts = _state(session)
        assert (version, [m.content for m in history], receipts) == (3, ["q2", "a2", "q3", "a3"], ("r2", "r3"))
        assert is_whole_pairs(history)
        assert session.commit(first, "a1", "stop") is CommitStatus.STALE


class TestAcrossWorkers:
    """Several session objects over one state: what a durable store adds (in memory they are one object)."""

    def test_two_workers_one_commits_one_is_stale(self, make: Maker) -> None:
        """Two workers begin on version 0; whichever commits second is STALE, in any process."""
        first = make()
        second = make.again(first)
        a, b = first.begin("ra", "qa"), second.begin("rb", "qb")
        assert second.commit(b, "B", "stop") is CommitStatus.COMMITTED
        assert first.commit(a, "A", "stop") is CommitStatus.STALE
        assert first.snapshot() == second.snapshot() == (1, _pair("qb", "B"))

    def test_a_retry_delivered_to_another_worker_is_duplicate(self, make: Maker) -> None:
        """A ticket committed through one worker and re-delivered to another (pickled, as between processes) is a
        DUPLICATE: tickets carry the row's key, so the other worker knows it as its own."""
        first = make()
        second = make.again(first)
        ticket = first.begin("r1", "q")
        assert first.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        carried = pickle.loads(pickle.dumps(ticket))
        expected = CommitStatus.FOREIGN if make.kind == "memory" else CommitStatus.DUPLICATE
        assert second.commit(carried, "a", "stop") is expected

    def test_the_check_is_redone_when_the_compare_and_set_fails(self, make: Maker) -> None:
        """A commit whose write comes after another worker committed is STALE (or DUPLICATE for the same request):
        the compare-and-set wrote nothing and the checks ran again on the row as it is now (SQLite: the session
        reads again, ``commit:raced``; PostgreSQL decides in the server, on the row its statement saw)."""
        if make.kind == "memory":
            pytest.skip("in memory one lock orders every commit: the write cannot find the version moved")
        points: list[str] = []
        first = make()
        rival = make.again(first)

        def rival_commits(ticket: Ticket, answer: str) -> Callable[[str], None]:
            def probe(point: str) -> None:  # the rival commits after our checks passed, before our write
                points.append(point)
                if point == "commit:write" and points.count(point) == 1:
                    assert rival.commit(ticket, answer, "stop") is CommitStatus.COMMITTED

            return probe

        session = make.again(first, probe=rival_commits(rival.begin("r-rival", "q2"), "b"))
        assert session.commit(session.begin("r-mine", "q1"), "a", "stop") is CommitStatus.STALE
        read_first = ["commit:checked", "commit:write", "commit:raced"] if make.kind == "sqlite" else ["commit:write"]
        assert points == ["begin:enter", "commit:enter", *read_first]
        twin = rival.begin("r-same", "q")  # one request delivered to two workers
        points.clear()
        racer = make.again(first, probe=rival_commits(twin, "a"))
        assert racer.commit(pickle.loads(pickle.dumps(twin)), "a", "stop") is CommitStatus.DUPLICATE
        assert points == ["commit:enter", *read_first]
        assert _state(first) == (2, (*_pair("q2", "b"), *_pair("q", "a")), ("r-rival", "r-same"))

    def test_same_name_new_row_is_another_session(self, make: Maker, tmp_path: Path) -> None:
        """Identity is the row's random key, never the name: a session recreated under the same name, or one of
        the same name in another database, refuses the old tickets."""
        if make.kind == "memory":
            pytest.skip("in memory, identity is the object (tests/test_versioned.py)")
        session = make()
        ticket = session.begin("r1", "q")
        store = make.store()
        assert store is not None
        store.drop_session(session.session_id)
        reborn = VersionedSession(session.session_id, store=store)
        assert reborn.commit(ticket, "a", "stop") is CommitStatus.FOREIGN
        elsewhere = VersionedSession(session.session_id, store=SqliteStore(tmp_path / "elsewhere.db"))
        assert elsewhere.commit(reborn.begin("r2", "q"), "a", "stop") is CommitStatus.FOREIGN

    def test_receipts_survive_a_restart(self, make: Maker) -> None:
        """Durable: a new session object (a restarted process) still knows the request id; memory cannot."""
        if make.kind == "memory":
            pytest.skip("a restarted process starts from nothing (scenarios/restart_forgets_receipts.py)")
        session = make()
        session.commit(session.begin("r1", "q"), "a", "stop")
        restarted = make.again(session)
        assert restarted.commit(restarted.begin("r1", "q"), "a", "stop") is CommitStatus.DUPLICATE
        assert _state(restarted) == (1, _pair("q", "a"), ("r1",))

    def test_without_compare_and_set_an_answer_is_lost(self, make: Maker) -> None:
        """The mutant writes what it decided on its snapshot: two workers both COMMITTED, one answer gone."""
        if make.kind == "memory":
            pytest.skip("in memory the mutant's one lock does protect the state")
        second = make(cls=InProcessLockSession)
        b = second.begin("rb", "qb")

        def probe(point: str) -> None:  # second commits after first's check passed, before first writes
            if point == "commit:write":
                assert second.commit(b, "B", "stop") is CommitStatus.COMMITTED

        first = make.again(second, cls=InProcessLockSession, probe=probe)
        assert first.commit(first.begin("ra", "qa"), "A", "stop") is CommitStatus.COMMITTED
        assert second.snapshot() == (1, _pair("qa", "A"))  # two COMMITTED, one version, B's answer is gone


class TestSameInputsEverywhere:
    """Text no store keeps (a NUL character, which PostgreSQL cannot hold in text; a lone surrogate, which no UTF-8
    database can) is refused by every store, memory included, with the same line, before anything is written."""

    @staticmethod
    def _line(make: Maker, what: str, bad: str) -> str:
        label = "memory" if make.kind == "memory" else make.store().label  # type: ignore[union-attr]
        if "\x00" in bad:
            return f"{label}: the {what} holds a NUL character (\\x00), which no store keeps; nothing was written"
        return f"{label}: the {what} holds a lone surrogate, which is not text any store keeps; nothing was written"

    @pytest.mark.parametrize("bad", ["a\x00b", "\x00", "a\ud800b"])
    @pytest.mark.parametrize("where", ["session name", "request id", "question", "answer"])
    def test_refused_the_same_way_before_any_write(self, make: Maker, where: str, bad: str) -> None:
        """The session name when the session is made, the request id and the question at ``begin`` (before the
        model is asked for an answer no store could keep), the answer when the commit would write it."""
        with pytest.raises(StoreError) as raised:
            if where == "session name":
                make(bad)
            else:
                session = make()
                request_id, question = (
                    (bad, "q") if where == "request id" else ("r1", bad if where == "question" else "q")
                )
                ticket = session.begin(request_id, question)
                try:
                    session.commit(ticket, bad if where == "answer" else "a", "stop")
                finally:
                    assert _state(session) == (0, (), ())  # nothing was written
        assert str(raised.value) == self._line(make, where, bad)

    def test_a_refused_commit_still_answers_with_its_status(self, make: Maker) -> None:
        """An answer no store keeps is refused only when it would be written: a STALE or INVALID reply holding a
        NUL answers STALE or INVALID on every store, and one whose request id was committed is ID_CONFLICT."""
        session = make()
        slow, fast = session.begin("r-slow", "q1"), session.begin("r-fast", "q2")
        assert session.commit(fast, "A", "stop") is CommitStatus.COMMITTED
        assert session.commit(slow, "a\x00b", "stop") is CommitStatus.STALE
        assert session.commit(slow, "a\x00b", "length") is CommitStatus.INVALID
        assert session.commit(fast, "A\x00", "stop") is CommitStatus.ID_CONFLICT
        assert _state(session) == (1, _pair("q2", "A"), ("r-fast",))


class _RoundTrips:
    """The round trips a store's connection makes, read off libpq's own trace of the wire (a store may send
    through psycopg's cursor or prepared statements on libpq directly: both are seen). ``statements`` names each
    round trip by its statement's first word (``SELECT``, ``WITH``, ``BEGIN``...), plus ``lab_commit_ticket``
    when it calls the one-step function; a round trip is one ``Sync`` (extended protocol) or ``Query``."""

    def __init__(self, store: Any) -> None:
        self._pgconn = store._db.pgconn
        self._trace = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed by close(), after the store is done
        self._read = 0
        self._known = {
            PostgresStore.READ_PREPARED.name.decode(): PostgresStore.READ,
            PostgresStore.READ_ROW_PREPARED.name.decode(): PostgresStore.READ_ROW,
            PostgresStore.COMMIT_TICKET_PREPARED.name.decode(): PostgresStore.COMMIT_TICKET,
        }
        self._pgconn.trace(self._trace.fileno())
        assert psycopg is not None
        self._pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)

    @property
    def statements(self) -> list[str]:
        self._trace.seek(self._read)
        lines = self._trace.read().splitlines()
        sent: list[str] = []
        pending = ""
        for line in lines:
            fields = line.split("\t")
            if len(fields) < 3 or fields[0] != "F":
                continue
            kind, rest = fields[2], fields[3] if len(fields) > 3 else ""
            quoted = rest.split('"')
            if kind == "Query":
                sent.append(self._name(rest.strip().strip('"')))
            elif kind == "Parse":
                self._known[quoted[1]] = quoted[3]
                pending = pending or quoted[3]
            elif kind == "Bind":
                pending = self._known.get(quoted[3], pending)
            elif kind == "Sync":
                sent.append(self._name(pending))
                pending = ""
        return sent

    def clear(self) -> None:
        self._trace.seek(0, 2)
        self._read = self._trace.tell()

    @staticmethod
    def _name(sql: str) -> str:
        return sql.split()[0] + (" lab_commit_ticket" if "lab_commit_ticket(" in sql else "") if sql else "?"

    def close(self) -> None:
        self._pgconn.untrace()
        self._trace.close()


class TestOneStepCommit:
    """PostgreSQL decides a commit in one round trip, in the server, and a refusal leaves the row untouched."""

    def test_one_round_trip_per_begin_and_per_commit(self, postgres_url: str) -> None:
        store = PostgresStore(postgres_url)
        session = VersionedSession(f"one-step-{next(_names)}", store=store)
        counted = _RoundTrips(store)
        slow, fast = session.begin("r-slow", "q1"), session.begin("r-fast", "q2")
        assert counted.statements == ["SELECT", "SELECT"]  # a begin is one read, no transaction
        raw = psycopg.connect(postgres_url, autocommit=True)
        row_version = "SELECT xmin::text, xmax::text FROM lab_sessions WHERE name = %s"
        for ticket, answer, status in (
            (fast, "A", CommitStatus.COMMITTED),
            (slow, "B", CommitStatus.STALE),
            (fast, "A", CommitStatus.DUPLICATE),
            (fast, "other", CommitStatus.ID_CONFLICT),
        ):
            before = raw.execute(row_version, (session.session_id,)).fetchone()
            counted.clear()
            assert session.commit(ticket, answer, "stop") is status
            assert counted.statements == ["WITH lab_commit_ticket"]  # no read first: one round trip
            if status is not CommitStatus.COMMITTED:  # a refusal took no lock and wrote nothing
                assert raw.execute(row_version, (session.session_id,)).fetchone() == before
        assert _state(session) == (1, _pair("q2", "A"), ("r-fast",))
        assert store.lock_waits == 0
        counted.close()
        raw.close()
        store.close()

    def test_statements_the_server_forgot_are_prepared_again(self, postgres_url: str) -> None:
        """The read and the one-step commit are prepared statements of the connection (pgprepared); a server
        that forgot them (``DEALLOCATE ALL``) has run nothing, so they are prepared again and sent again."""
        store = PostgresStore(postgres_url)
        session = VersionedSession(f"forgot-{next(_names)}", store=store)
        ticket = session.begin("r1", "q")
        store._db.execute("DEALLOCATE ALL")
        assert session.snapshot() == (0, ())
        store._db.execute("DEALLOCATE ALL")
        assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        assert _state(session) == (1, _pair("q", "a"), ("r1",))
        store.close()

    def test_without_the_function_a_session_reads_decides_and_writes(self, postgres_url: str) -> None:
        """A user who may use the tables but not create a function (PostgreSQL 15's default for schema public):
        the store says it cannot decide in one step, and the session reads, decides and writes itself."""
        database = f"lab_limited_{next(_names)}"
        admin = psycopg.connect(postgres_url, autocommit=True)
        admin.execute(f"CREATE DATABASE {database}")
        admin.execute(f"DO $$ BEGIN CREATE ROLE {database} LOGIN; EXCEPTION WHEN duplicate_object THEN END $$")
        owner_url = postgres_url.rsplit("/", 1)[0] + f"/{database}"
        PostgresStore(owner_url).close()  # the tables, made by their owner
        with psycopg.connect(owner_url, autocommit=True) as owner:
            owner.execute("DROP FUNCTION lab_commit_ticket")
            owner.execute(
                f"GRANT SELECT, INSERT, UPDATE, DELETE ON lab_schema, lab_sessions, lab_receipts TO {database}"
            )
        try:
            store = PostgresStore(owner_url.replace("//lab@", f"//{database}@"))
            assert not store._one_step
            session = VersionedSession("limited", store=store)
            counted = _RoundTrips(store)
            slow, fast = session.begin("r-slow", "q1"), session.begin("r-fast", "q2")
            counted.clear()
            assert session.commit(fast, "A", "stop") is CommitStatus.COMMITTED
            assert counted.statements == ["SELECT", "WITH"]  # the read, then the compare-and-set
            assert session.commit(slow, "B", "stop") is CommitStatus.STALE
            assert session.commit(fast, "A", "stop") is CommitStatus.DUPLICATE
            assert _state(session) == (1, _pair("q2", "A"), ("r-fast",))
            counted.close()
            store.close()
        finally:
            admin.execute(f"DROP DATABASE {database} WITH (FORCE)")
            admin.close()


class TestSchema:
    def test_created_on_first_use_and_versioned(self, tmp_path: Path) -> None:
        """The tables appear with the first store and carry their schema version."""
        path = tmp_path / "new.db"
        SqliteStore(path).close()
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT version FROM lab_schema").fetchall() == [(SCHEMA_VERSION,)]
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables >= {"lab_schema", "lab_sessions", "lab_receipts"}

    def test_another_schema_version_is_refused(self, tmp_path: Path) -> None:
        """A database written by another schema version is refused in one line, not misread."""
        path = tmp_path / "future.db"
        SqliteStore(path).close()
        with sqlite3.connect(path) as db:
            db.execute("UPDATE lab_schema SET version = 99")
        with pytest.raises(StoreError, match="schema version 99; this lab knows version 1"):
            SqliteStore(path)

    def test_postgres_schema(self, postgres_url: str) -> None:
        """PostgreSQL gets the same tables and version, created once however many stores open it."""
        import psycopg

        for _ in range(2):
            store = open_store(postgres_url)
            assert store is not None
            store.close()
        with psycopg.connect(postgres_url) as db:
            assert db.execute("SELECT version FROM lab_schema").fetchall() == [(SCHEMA_VERSION,)]

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("sqlite:", "sqlite: needs a file"),
            ("mysql://x", "unknown store 'mysql://x'"),
            ("sqlite:/nonexistent-folder/x.db", "cannot use /nonexistent-folder/x.db as a SQLite store"),
            ("postgresql://lab@127.0.0.1:1/none", "cannot use postgresql://lab@127.0.0.1:1/none as a PostgreSQL store"),
        ],
    )
    def test_store_mistakes_are_one_line(self, spec: str, message: str) -> None:
        """A store that cannot be used is a LabError in one line."""
        from lab.sessions.stores import postgres

        if spec.startswith("postgresql") and not postgres.available():
            message = "the PostgreSQL store needs psycopg 3"
        with pytest.raises(LabError, match=message) as raised:
            open_store(spec)
        assert "\n" not in str(raised.value)

    def test_memory_is_no_store(self) -> None:
        """``memory`` names the session object itself."""
        assert open_store("memory") is None
        assert VersionedSession("s1").store_name == "memory"


class TestThrowawayServer:
    def test_loopback_only_unprivileged_and_its_own(self, postgres_url: str) -> None:
        """The test server listens on 127.0.0.1 only and does not run as root; its data lives in a temp folder."""
        import os

        import psycopg

        with psycopg.connect(postgres_url) as db:
            assert db.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
            data = str(db.execute("SHOW data_directory").fetchone()[0])
        assert data.startswith(tempfile.gettempdir()) and os.stat(data).st_uid != 0


class TestHistoryCodec:
    """The history column's codec, which every store shares (lab.sessions.stores.rows and .store)."""

    @pytest.mark.parametrize(
        "contents",
        [(), ("q", "a"), ("ünïcode 中文", 'quote " backslash \\ newline \n tab \t'), ("\u2028", "😀" * 3)],
    )
    def test_encoding_is_what_json_dumps_wrote(self, contents: tuple[str, ...]) -> None:
        import json

        from lab.sessions.stores.store import encode_history

        history = tuple(Message(Role.USER if n % 2 == 0 else Role.ASSISTANT, text) for n, text in enumerate(contents))
        before = json.dumps([[str(m.role), m.content] for m in history], ensure_ascii=False, separators=(",", ":"))
        assert encode_history(history) == before

    def test_a_text_is_remembered_only_once_it_passed(self) -> None:
        from lab.sessions.stores.rows import Histories

        histories = Histories()
        good = '[["user","q"],["assistant","a"]]'
        first = histories.decode(good, 1, "l", "s")
        assert histories.decode(good, 5, "l", "s") is first  # the same text, the same messages
        with pytest.raises(StoreError, match="history holds 1 pairs after only 0 commits"):
            histories.decode(good, 0, "l", "s")  # what depends on the version is checked on every read
        bad = '[["user","q"]]'
        for _ in range(2):
            with pytest.raises(StoreError, match="history holds 1 messages, not whole pairs"):
                histories.decode(bad, 1, "l", "s")
        assert histories.encode(first) == good
        for n in range(2 * Histories.KEPT):  # bounded
            histories.decode(f'[["user","q{n}"],["assistant","a"]]', 1, "l", "s")
        assert len(histories._decoded) <= Histories.KEPT
