"""On SQLite, receipts outlive the process: the client's retry after a restart is DUPLICATE, committed once.

The same story as restart_forgets_receipts, on a durable store. `worker` commits request r1 into a SQLite file and
its process stops before the client hears back. `restarted_worker` is a new process: it opens the same file, and
the session's row -- version, history and receipts -- is still there. The retry of r1 finds its receipt (same
question, same answer) and is DUPLICATE: the version grows once and the history holds the pair once. What the
receipt cannot undo: the model was asked twice (two calls), since the worker only learns it is a duplicate at
commit. Each worker has its own connection; the database, not a lock of either process, holds the state.
"""

from lab import CommitStatus, Reply, Scenario, SqliteStore, VersionedSession, actor, only, scratch_database


class DurableReceiptsSurviveRestart(Scenario):
    source = "article 003, section 3, with the state moved into SQLite"
    outcomes = only(
        worker="COMMITTED",
        restarted_worker="DUPLICATE",
        store="sqlite:receipts.db",
        model_calls=2,
        version=1,
        receipts=["r1"],
        history=["what is a receipt?", "a record of a commit"],
    )

    def setup(self) -> None:
        self.path = scratch_database("receipts")  # a fresh file for every run
        self.model = self.lab.transport("model", by_question={"what is a receipt?": Reply("a record of a commit")})
        self.worker_stopped = self.lab.latch("worker-stopped")
        self.session = None

    def _open(self, who: str) -> VersionedSession:
        """What a worker process does at start: connect to the database and open the session's row."""
        store = SqliteStore(self.path, name="receipts.db")
        return self.lab.wire(VersionedSession, "s1", store=store, name=who)

    def _handle(self, session: VersionedSession) -> CommitStatus:
        ticket = session.begin("r1", "what is a receipt?")
        reply = self.model.send(ticket.to_request())
        return session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def worker(self) -> CommitStatus:
        status = self._handle(self._open("worker"))
        self.worker_stopped.count_down()  # the process stops; the file stays
        return status

    @actor
    def restarted_worker(self) -> CommitStatus:
        self.worker_stopped.wait()
        self.session = self._open("restarted")
        return self._handle(self.session)  # the client's retry of r1

    def observe(self) -> dict[str, object]:
        version, history = self.session.snapshot()
        return {
            "store": self.session.store_name,
            "model_calls": self.model.calls,
            "version": version,
            "receipts": list(self.session.receipt_ids),
            "history": [m.content for m in history],
        }
