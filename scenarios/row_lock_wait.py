"""On PostgreSQL, a worker holding the session's row in an open transaction makes the other's commit wait for it.

Pessimistic locking, the database's version of article 000's synchronized chat: `holder` locks the session's row
(`SELECT ... FOR UPDATE`) and keeps it locked while its model answers. `waiter` is not stopped from reading: it
begins on version 0 while the row is locked (PostgreSQL's readers see the last committed row and never wait). Its
commit is stopped: it must lock the row too. The server really refuses it (the store asks once with `NOWAIT` and
the lesson records the refusal), and the lab shows the wait instead of a thread stuck inside the database: the
waiter waits on `row s1`, a lock the scheduler sees that stands for the server's row lock, held by `holder` until
its transaction ends. Then the waiter's compare-and-set finds version 1: STALE. Had the holder finished first, the
waiter would not have waited at all; the explorer checks both. Without a PostgreSQL server (LAB_POSTGRES_URL) the
lesson cannot run: `lesson_postgres_url()` raises `Unavailable`, and the scenario's verdict is SKIPPED, with the
reason, in the run's output and its evidence.
"""

from lab import (
    CommitStatus,
    Held,
    Reply,
    Scenario,
    VersionedSession,
    acceptable,
    actor,
    is_whole_pairs,
    lesson_postgres_url,
)

SESSION = "row_lock_wait"


class RowLockWait(Scenario):
    source = "article 003, section 4 (database lock conflicts, which it did not measure), on PostgreSQL"
    outcomes = (
        acceptable(
            "the waiter's commit came while the holder held the row: it waited for the holder's transaction, "
            "then found version 1: STALE",
            holder="COMMITTED",
            waiter="STALE",
            server_refused_waiter=True,
            version=1,
        ),
        acceptable(
            "the holder's transaction ended before the waiter's commit: no wait, and version 1 says STALE",
            holder="COMMITTED",
            waiter="STALE",
            server_refused_waiter=False,
            version=1,
        ),
    )

    def setup(self) -> None:
        self.url = lesson_postgres_url()  # no server: Unavailable, and the scenario is SKIPPED, saying why
        from lab import PostgresStore  # only now: importing its driver, psycopg, takes a tenth of a second

        row = self.lab.lock("row s1")  # the server's lock on the session's row, as the scheduler sees it
        self.stores = {
            who: PostgresStore(self.url, name="postgresql:lessons", row_lock=row, reuse=who) for who in self.actors
        }
        self.stores["holder"].drop_session(SESSION)  # every run starts from a fresh row
        self.sessions = {
            who: self.lab.wire(VersionedSession, SESSION, store=self.stores[who], name=who) for who in self.actors
        }
        self.row_held = self.lab.latch("row-held")
        self.waiter_asked = self.lab.latch("waiter-asked")
        self.holder_model = self.lab.transport("holder.model", [Held(Reply("holder answer"), until=self.waiter_asked)])
        self.waiter_model = self.lab.transport("waiter.model", [Reply("waiter answer")])

    @actor
    def holder(self) -> CommitStatus:
        session = self.sessions["holder"]
        with self.stores["holder"].row_held(SESSION):  # BEGIN; SELECT ... FOR UPDATE -- until the block ends
            ticket = session.begin("r-holder", "holder question")
            self.row_held.count_down()
            reply = self.holder_model.send(ticket.to_request())  # the row stays locked while the model answers
            return session.commit(ticket, reply.content, reply.finish_reason)  # visible once the block commits

    @actor
    def waiter(self) -> CommitStatus:
        session = self.sessions["waiter"]
        self.row_held.wait()
        ticket = session.begin("r-waiter", "waiter question")  # a read: it does not wait for the row lock
        reply = self.waiter_model.send(ticket.to_request())
        self.waiter_asked.count_down()
        return session.commit(ticket, reply.content, reply.finish_reason)  # a write: it must lock the row

    def observe(self) -> dict[str, object]:
        version, _history = self.sessions["holder"].snapshot()
        return {
            "store": self.sessions["holder"].store_name,
            "version": version,
            "server_refused_waiter": self.stores["waiter"].lock_waits > 0,
        }

    def invariants(self):
        _version, history = self.sessions["holder"].snapshot()
        yield "history is whole pairs", is_whole_pairs(history)
        yield "the holder's answer is the one in the history", [m.content for m in history][1::2] == ["holder answer"]
