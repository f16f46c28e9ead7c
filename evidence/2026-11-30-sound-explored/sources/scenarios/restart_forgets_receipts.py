"""After a restart, an in-memory session has forgotten the request id: the client's retry is committed again.

Article 003 names its own limit: receipts are "in-process idempotency only ... a process restart forgets the request
id". `worker` handles request r1 (begin, ask the model, commit: COMMITTED), and its process stops before the client
hears back. The client retries r1, with the same question, and `restarted_worker` -- a new process, so a new
in-memory session that starts from nothing -- handles it: it asks the model again (the model is called, and billed,
twice) and commits again: COMMITTED, since nothing remembers r1. Here the first answer is gone with the process
anyway; with several workers or a durable history, the same retry would be applied twice. Compare
durable_receipts_survive_restart, where the same retry on SQLite is DUPLICATE.
"""

from lab import CommitStatus, Reply, Scenario, VersionedSession, actor, only


class RestartForgetsReceipts(Scenario):
    source = "article 003, section 3 (its limits: a restart forgets the request id)"
    outcomes = only(
        worker="COMMITTED",
        restarted_worker="COMMITTED",
        store="memory",
        model_calls=2,
        version=1,
        receipts=["r1"],
        history=["what is a receipt?", "a record of a commit"],
    )

    def setup(self) -> None:
        self.model = self.lab.transport("model", by_question={"what is a receipt?": Reply("a record of a commit")})
        self.worker_stopped = self.lab.latch("worker-stopped")
        self.session = None

    def _handle(self, session: VersionedSession) -> CommitStatus:
        """One worker's whole request: begin, ask the model outside any lock, commit."""
        ticket = session.begin("r1", "what is a receipt?")
        reply = self.model.send(ticket.to_request())
        return session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def worker(self) -> CommitStatus:
        session = self.lab.wire(VersionedSession, "s1", name="worker")
        status = self._handle(session)
        self.worker_stopped.count_down()  # the process stops; its memory, receipts included, is gone
        return status

    @actor
    def restarted_worker(self) -> CommitStatus:
        self.worker_stopped.wait()
        self.session = self.lab.wire(VersionedSession, "s1", name="restarted")
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
