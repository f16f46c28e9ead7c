"""How the durable stores fail: bounded waits, one error line, reconnecting, rows checked on read, inputs refused
the same way on SQLite and PostgreSQL (issue 24). After each failure the row still holds whole pairs and one
receipt per committed request id.

Another client is played by a raw connection (``sqlite3`` or ``psycopg``) doing what a store's commit does, then
stopping mid-commit: ``BEGIN``, the ``UPDATE`` of the row, and no ``COMMIT``. Damage is done the same way, by hand.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.console import main
from lab.messages import Role, is_whole_pairs
from lab.sessions.stores import StoreError, open_store
from lab.sessions.stores.postgres import PostgresStore
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.versioned import CommitStatus, VersionedSession

TIMEOUT = 0.3  # seconds: short, so that a test of a wait that runs out stays short
_names = itertools.count(1)


class Database:
    """One database under test: stores on it, and a raw connection for what another client (or a person) does."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind = kind
        self.where = where
        self._stores: list[SqliteStore | PostgresStore] = []
        self._raw: list[Any] = []

    def store(self, **options: Any) -> SqliteStore | PostgresStore:
        options.setdefault("lock_timeout", TIMEOUT)
        made: SqliteStore | PostgresStore = (
            SqliteStore(self.where, **options) if self.kind == "sqlite" else PostgresStore(self.where, **options)
        )
        self._stores.append(made)
        return made

    def session(self, name: str = "", *, max_rounds: int = 1000, **options: Any) -> VersionedSession:
        """A session on a fresh row; it keeps every pair, so that nothing lost can hide behind trimming."""
        return VersionedSession(name or f"f{next(_names)}", store=self.store(**options), max_rounds=max_rounds)

    def raw(self) -> Any:
        """A connection of the database's own driver, in autocommit mode."""
        if self.kind == "sqlite":
            db: Any = sqlite3.connect(self.where, isolation_level=None, check_same_thread=False)
        else:
            import psycopg

            db = psycopg.connect(self.where, autocommit=True)
        self._raw.append(db)
        return db

    def sql(self, statement: str, *params: object) -> None:
        """Run one statement by hand (a person repairing, or damaging, a row)."""
        db = self.raw()
        db.execute(statement.replace("?", "%s") if self.kind != "sqlite" else statement, params)
        db.close()

    @contextlib.contextmanager
    def held(self, session: VersionedSession) -> Iterator[None]:
        """Another client mid-commit on ``session``'s row: its transaction has written the row and not ended."""
        db = self.raw()
        db.execute("BEGIN IMMEDIATE" if self.kind == "sqlite" else "BEGIN")
        placeholder = "?" if self.kind == "sqlite" else "%s"
        db.execute(f"UPDATE lab_sessions SET version = version WHERE name = {placeholder}", (session.session_id,))
        try:
            yield
        finally:
            db.execute("ROLLBACK")
            db.close()

    def close(self) -> None:
        for store in self._stores:
            with contextlib.suppress(StoreError):
                store.close()
        for db in self._raw:
            db.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    where = str(tmp_path / "f.db") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    made = Database(request.param, where)
    yield made
    made.close()


def _commit(session: VersionedSession, request_id: str, answer: str | None = None) -> CommitStatus:
    ticket = session.begin(request_id, f"question {request_id}")
    return session.commit(ticket, answer or f"answer {request_id}", "stop")


def _sound(session: VersionedSession) -> None:
    """The promises that must survive every failure: whole pairs, each committed answer once, one receipt per
    committed request id, version = commits."""
    version, history = session.snapshot()
    answers = [m.content for m in history if m.role is Role.ASSISTANT]
    assert is_whole_pairs(history)
    assert len(set(answers)) == len(answers) == version  # max_rounds is large enough in these tests
    receipts = session.receipt_ids
    assert len(set(receipts)) == len(receipts) == version


def _one_line(error: pytest.ExceptionInfo[StoreError]) -> str:
    text = str(error.value)
    assert "\n" not in text and "Traceback" not in text
    return text


class TestBoundedWaits:
    def test_a_client_mid_commit_makes_another_commit_fail_within_the_timeout(self, database: Database) -> None:
        """The row held mid-commit by another client: a commit waits the lock timeout, then one StoreError line;
        nothing was written, and once the holder lets go the same request commits."""
        session = database.session()
        assert _commit(session, "r1") is CommitStatus.COMMITTED
        ticket = session.begin("r2", "question r2")
        with database.held(session):
            begun = time.perf_counter()
            with pytest.raises(StoreError) as raised:
                session.commit(ticket, "answer r2", "stop")
            waited = time.perf_counter() - begun
        line = _one_line(raised)
        assert f"session {session.session_id}'s row is held by another client for over {TIMEOUT:g} s" in line
        assert "nothing was written" in line
        assert TIMEOUT * 0.9 <= waited < TIMEOUT + 3.0
        assert session.commit(ticket, "answer r2", "stop") is CommitStatus.COMMITTED
        _sound(session)

    def test_opening_and_reading_a_held_session_never_wait(self, database: Database) -> None:
        """Another client mid-commit does not stop a new session object over the same row from opening, nor
        anyone from reading it: readers never wait (before, PostgreSQL's opening waited for the holder)."""
        session = database.session()
        assert _commit(session, "r1") is CommitStatus.COMMITTED
        with database.held(session):
            begun = time.perf_counter()
            again = VersionedSession(session.session_id, store=database.store(lock_timeout=30.0))
            assert again.snapshot()[0] == 1 and again.begin("r2", "q").version == 1
            assert time.perf_counter() - begun < 5.0  # far below the 30 s it would wait for the row

    def test_a_new_session_is_bounded_too(self, database: Database) -> None:
        """Creating a session's row while another client is mid-commit: PostgreSQL locks rows, so another
        session's row is free; SQLite has one writer per file, so the creation waits the lock timeout and fails in
        one line. Neither waits longer."""
        session = database.session()
        with database.held(session):
            begun = time.perf_counter()
            if database.kind == "postgresql":
                other = database.session()
                assert _commit(other, "r1") is CommitStatus.COMMITTED
            else:
                with pytest.raises(StoreError) as raised:
                    database.session()
                assert f"is held by another client for over {TIMEOUT:g} s" in _one_line(raised)
            assert time.perf_counter() - begun < TIMEOUT + 3.0

    def test_timeouts_come_from_the_url_and_are_checked(self, database: Database) -> None:
        """``?lock_timeout=`` in the store's name sets the wait; a setting that is not a positive number of
        seconds, or not a setting at all, is one line."""
        prefix = "sqlite:" if database.kind == "sqlite" else ""
        store = open_store(f"{prefix}{database.where}?lock_timeout=0.2")
        assert isinstance(store, SqliteStore | PostgresStore) and store.lock_timeout == 0.2
        store.close()
        for query, message in (("lock_timeout=-1", "greater than 0"), ("lock_timeout=soon", "greater than 0")):
            with pytest.raises(StoreError, match=message) as raised:
                open_store(f"{prefix}{database.where}?{query}")
            _one_line(raised)

    @pytest.mark.slow
    def test_postgres_statement_timeout(self, postgres_url: str) -> None:
        """A statement that runs past ``statement_timeout`` (here: a wait shorter than it would be given under
        the lock timeout) is one line naming the statement timeout."""
        database = Database("postgresql", postgres_url)
        try:
            session = database.session(lock_timeout=30.0, statement_timeout=TIMEOUT)
            ticket = session.begin("r1", "q")
            with database.held(session), pytest.raises(StoreError) as raised:
                session.commit(ticket, "a", "stop")
            assert "ran for over 0.3 s (the statement timeout); nothing was written" in _one_line(raised)
            assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        finally:
            database.close()

    def test_unknown_sqlite_setting_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(StoreError, match="unknown setting 'sync'; the settings are lock_timeout, synchronous"):
            open_store(f"sqlite:{tmp_path / 'x.db'}?sync=full")


class TestOneErrorLine:
    def test_a_read_only_database(self, database: Database) -> None:
        """A database that refuses writes: the commit is one StoreError line; reads still work."""
        session = database.session()
        store: Any = session._store  # the test reaches in to turn the store's own connection read-only
        store._db.execute(
            "PRAGMA query_only = ON" if database.kind == "sqlite" else "SET default_transaction_read_only = on"
        )
        with pytest.raises(StoreError) as raised:
            _commit(session, "r1")
        assert "the database is read-only" in _one_line(raised) and "nothing was written" in str(raised.value)
        assert session.snapshot() == (0, ())

    def test_a_full_disk_on_sqlite(self, tmp_path: Path) -> None:
        """SQLite's "database or disk is full" (a file at its page limit) is one line; nothing is committed."""
        database = Database("sqlite", str(tmp_path / "full.db"))
        try:
            session = database.session()
            store: Any = session._store
            pages = store._db.execute("PRAGMA page_count").fetchone()[0]
            store._db.execute(f"PRAGMA max_page_count = {pages}")
            with pytest.raises(StoreError) as raised:
                for n in range(200):
                    _commit(session, f"r{n}", "x" * 2000)
            assert "the disk is full" in _one_line(raised)
            _sound(session)
        finally:
            database.close()

    def test_a_history_that_is_not_json(self, database: Database) -> None:
        session = database.session()
        database.sql("UPDATE lab_sessions SET history = ? WHERE name = ?", "{not json", session.session_id)
        with pytest.raises(StoreError) as raised:
            session.begin("r1", "q")
        assert f"session {session.session_id}'s row is damaged (history is not JSON" in _one_line(raised)


class TestRowsCheckedOnRead:
    @pytest.mark.parametrize(
        ("history", "version", "what"),
        [
            ('[["user","q"]]', 1, "history holds 1 messages, not whole pairs"),
            ('[["assistant","a"],["user","q"]]', 1, "history item 0 is 'assistant' where user was due"),
            ('[["user","q"],["assistant",5]]', 1, "history item 1 is not a [role, content] pair of strings"),
            ('{"user":"q"}', 1, "history is a JSON dict, not a list"),
            ('[["user","q"],["assistant","a"]]', 0, "history holds 1 pairs after only 0 commits"),
            ("[]", -1, "version -1 is not a whole number >= 0"),
        ],
    )
    def test_a_damaged_row_is_refused_and_never_built_upon(
        self, database: Database, history: str, version: int, what: str
    ) -> None:
        """Every way a row can be damaged is one StoreError naming the session and what is wrong, at the first
        read; the commit that would have built on it writes nothing."""
        session = database.session()
        ticket = session.begin("r1", "q")
        database.sql(
            "UPDATE lab_sessions SET history = ?, version = ? WHERE name = ?", history, version, session.session_id
        )
        with pytest.raises(StoreError) as raised:
            session.commit(ticket, "a", "stop")
        assert f"session {session.session_id}'s row is damaged ({what})" in _one_line(raised)
        raw = database.raw()
        placeholder = "?" if database.kind == "sqlite" else "%s"
        row = raw.execute(
            f"SELECT history, version FROM lab_sessions WHERE name = {placeholder}", (session.session_id,)
        ).fetchone()
        assert tuple(row) == (history, version)  # untouched: nothing was built on it

    def test_a_lowered_version_is_refused(self, database: Database) -> None:
        """A version lowered by hand below the receipts' sequence numbers would make the next receipt take a
        number one already has: refused on read."""
        session = database.session()
        for n in range(3):
            assert _commit(session, f"r{n}") is CommitStatus.COMMITTED
        database.sql("UPDATE lab_sessions SET version = 1 WHERE name = ?", session.session_id)
        with pytest.raises(StoreError) as raised:
            _commit(session, "r9")
        assert "a receipt has sequence number 3, past version 1" in _one_line(raised)
        database.sql("UPDATE lab_sessions SET version = 3 WHERE name = ?", session.session_id)  # repaired
        assert _commit(session, "r9") is CommitStatus.COMMITTED
        _sound(session)

    def test_two_receipts_of_one_sequence_number_are_not_built_upon(self, database: Database) -> None:
        """What a lost update leaves (two receipts, one version) can be read, but no commit builds on it."""
        session = database.session()
        for n in range(2):
            assert _commit(session, f"r{n}") is CommitStatus.COMMITTED
        database.sql("UPDATE lab_receipts SET seq = 2 WHERE request_id = ?", "r0")
        assert session.snapshot()[0] == 2
        with pytest.raises(StoreError) as raised:
            _commit(session, "r9")
        assert "2 receipts share 1 sequence numbers" in _one_line(raised)

    def test_a_row_damaged_back_to_a_text_read_before_is_still_checked_against_its_version(
        self, database: Database
    ) -> None:
        """The store remembers the checks of a history text it passed (rows.Histories), by the exact text: a row
        whose version is then lowered by hand below that text's pairs is refused, and so is a commit refused on it
        (STALE would otherwise be said), though the text is one already read."""
        session = database.session()
        assert _commit(session, "r1") is CommitStatus.COMMITTED
        ticket = session.begin("r2", "q")  # the one-pair text read and passed
        database.sql("UPDATE lab_receipts SET seq = 0 WHERE request_id = ?", "r1")
        database.sql("UPDATE lab_sessions SET version = 0 WHERE name = ?", session.session_id)
        with pytest.raises(StoreError) as raised:
            session.begin("r3", "q")
        assert "history holds 1 pairs after only 0 commits" in _one_line(raised)
        with pytest.raises(StoreError) as raised:
            session.commit(ticket, "a", "stop")
        assert "history holds 1 pairs after only 0 commits" in _one_line(raised)

    def test_a_refused_commit_checks_the_row_it_saw(self, database: Database) -> None:
        """A commit refused because the version moved checks the row the refusal saw, as a read does: a history
        damaged by hand is one line, not STALE."""
        session = database.session()
        ticket = session.begin("r1", "q")
        assert _commit(session, "r0") is CommitStatus.COMMITTED
        database.sql("UPDATE lab_sessions SET history = ? WHERE name = ?", '[["user","a\\u0000b"]]', session.session_id)
        with pytest.raises(StoreError) as raised:
            session.commit(ticket, "a", "stop")
        assert "history item 0 holds a character no store keeps" in _one_line(raised)


class TestSameInputsEverywhere:
    """Text no store keeps is refused the same way on every store: tests/test_stores.py (memory included)."""

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("postgresql://[::1/postgres", "the PostgreSQL URL is malformed (Invalid IPv6 URL)"),
            ("postgresql://lab@127.0.0.1:port/x", "the PostgreSQL URL is malformed (Port could not be cast"),
            ("postgresql://lab:secret@[::1/x", "the PostgreSQL URL is malformed"),
            ("sqlite:x.db?synchronous=sometimes", "synchronous is one of OFF, NORMAL, FULL, not 'sometimes'"),
            ("sqlite:?synchronous=full", "sqlite: needs a file"),
        ],
    )
    def test_a_bad_url_is_one_line(self, spec: str, message: str) -> None:
        with pytest.raises(StoreError) as raised:
            open_store(spec)
        line = _one_line(raised)
        assert line.startswith(message) and "secret" not in line


class TestDurability:
    def test_sqlite_full_synchronous_is_chosen_by_name_or_flag(self, tmp_path: Path) -> None:
        """``?synchronous=full`` and ``durable=True`` both run SQLite with a sync per commit (FULL = 2)."""
        for store in (
            open_store(f"sqlite:{tmp_path / 'a.db'}?synchronous=full"),
            SqliteStore(tmp_path / "b.db", durable=True),
        ):
            assert isinstance(store, SqliteStore)
            assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2
            store.close()
        default = SqliteStore(tmp_path / "c.db")
        assert default._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        default.close()


def _chat(args: list[str], lines: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    # wide enough that the console's wrapping (issue 26) keeps each message on one line: these tests read the lines
    code = main(["chat", *args], stdin=io.StringIO(lines), stdout=out, stderr=err, environ={"COLUMNS": "1000"})
    return code, out.getvalue(), err.getvalue()


class TestConsole:
    def test_the_console_shows_the_line_and_keeps_running(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A store that fails under the console: each question gets the error's one line, and the console goes
        on to the next question instead of printing a traceback and leaving."""
        path = tmp_path / "chat.db"
        opened: list[SqliteStore] = []

        def read_only_store(spec: str) -> SqliteStore:
            store = SqliteStore(path)
            store._db.execute("PRAGMA query_only = ON")
            opened.append(store)
            return store

        import lab.console

        monkeypatch.setattr(lab.console, "open_store", read_only_store)
        SqliteStore(path).close()
        VersionedSession("console", store=SqliteStore(path))  # the row exists: opening it is a read
        code, out, err = _chat(["--store", f"sqlite:{path}"], "first\nsecond\n")
        lines = out.split("\n\n", 1)[1].splitlines()
        assert code == 0 and err == ""
        assert len(lines) == 2 and all(line.startswith("[STORE] sqlite:") for line in lines), lines
        assert "the database is read-only" in lines[0]


class TestReconnect:
    @pytest.mark.slow
    @pytest.mark.timeout(120)
    @pytest.mark.usefixtures("postgres_url")  # skipped, with the one reason, where the shared server cannot run
    def test_a_server_restart_gives_one_error_and_the_next_call_works(self) -> None:
        """A live store whose server restarts: the next call is one StoreError line saying the connection was
        lost; the call after it reconnects and works; nothing committed is lost, nothing committed twice."""
        from lab.sessions.stores.pgserver import TemporaryPostgres

        with TemporaryPostgres(fsync=False) as server:
            database = Database("postgresql", server.url)
            try:
                session = database.session()
                assert _commit(session, "r1") is CommitStatus.COMMITTED
                ticket = session.begin("r2", "question r2")
                server.restart()
                with pytest.raises(StoreError) as raised:
                    session.commit(ticket, "answer r2", "stop")
                assert "the connection was lost" in _one_line(raised)
                assert "the store reconnects on the next call" in str(raised.value)
                assert session.commit(ticket, "answer r2", "stop") is CommitStatus.COMMITTED
                assert _commit(session, "r3") is CommitStatus.COMMITTED
                _sound(session)
            finally:
                database.close()

    @pytest.mark.parametrize("landed", [True, False])
    def test_a_commit_lost_on_its_way_says_its_outcome_is_unknown(
        self, postgres_url: str, landed: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The connection breaks while COMMIT is on its way: the line says the commit may or may not have landed
        and to retry with the same request id; the retry is DUPLICATE if it had landed, COMMITTED once if not."""
        import psycopg

        from lab.sessions.stores import pgcommit

        database = Database("postgresql", postgres_url)
        try:
            session = database.session()
            store: Any = session._store
            real = store._db
            killer = database.raw()

            def kill() -> None:
                killer.execute("SELECT pg_terminate_backend(%s, 5000)", (real.info.backend_pid,))

            class BreaksAtCommit:
                """The store's connection, which loses the server at the commit's write (nothing lands) or right
                after its COMMIT ran (it landed, the answer is lost), whether sent alone or in a pipeline."""

                committed = False

                def __getattr__(self, attribute: str) -> Any:
                    return getattr(real, attribute)

                def execute(self, statement: str, *args: Any) -> Any:
                    writes = "UPDATE lab_sessions" in statement or "lab_commit_ticket(" in statement
                    if not landed and writes:
                        kill()  # the server goes before the write reaches it
                    cursor = real.execute(statement, *args)
                    if statement == "COMMIT" or writes:
                        self.committed = True  # a COMMIT, or the write, in its own transaction or a later COMMIT's
                        idle = real.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
                        if real.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF and idle:
                            self.lose_the_answer()  # the transaction has ended: its answer is what is lost
                    return cursor

                @contextlib.contextmanager
                def pipeline(self) -> Iterator[None]:
                    with real.pipeline():
                        yield
                    self.lose_the_answer()

                def lose_the_answer(self) -> None:
                    if landed and self.committed:
                        kill()
                        real.execute("SELECT 1")  # raises: the connection is gone, as the COMMIT's answer was

            breaks = BreaksAtCommit()
            real_run = pgcommit.run

            def run(db: Any, statement: Any, params: Any) -> Any:
                """The one-step commit's prepared statement (sent on libpq directly, not through execute)."""
                if db is not breaks or statement is not pgcommit.OneStatementCommit.COMMIT_TICKET_PREPARED:
                    return real_run(db, statement, params)  # a read, or the retry on the reopened connection
                if not landed:
                    kill()
                result = real_run(db, statement, params)
                breaks.committed = True
                breaks.lose_the_answer()
                return result

            monkeypatch.setattr(pgcommit, "run", run)
            store._db = breaks
            ticket = session.begin("r1", "q")
            with pytest.raises(StoreError) as raised:
                session.commit(ticket, "a", "stop")
            line = _one_line(raised)
            assert "the connection was lost during the commit of session" in line
            assert "may or may not have been committed: retry request r1 with the same request id" in line
            expected = CommitStatus.DUPLICATE if landed else CommitStatus.COMMITTED
            assert session.commit(ticket, "a", "stop") is expected
            _sound(session)
            assert isinstance(store._db, psycopg.Connection)  # reopened, the broken one left behind
        finally:
            database.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.usefixtures("postgres_url")  # skipped, with the one reason, where the shared server cannot run
def test_the_throwaway_server_says_it_runs_without_fsync(capfd: pytest.CaptureFixture[str]) -> None:
    """``python -m lab.sessions.stores.pgserver -- CMD`` says in one line that its server is for tests only."""
    import sys

    from lab.sessions.stores.pgserver import NO_FSYNC_NOTE
    from lab.sessions.stores.pgserver import main as pgserver_main

    show = "import os; print(os.environ['LAB_POSTGRES_URL'])"
    assert pgserver_main(["--", sys.executable, "-c", show]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("postgresql://lab@127.0.0.1:")
    assert NO_FSYNC_NOTE in err.splitlines() and len(NO_FSYNC_NOTE) <= 80
