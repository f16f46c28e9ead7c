"""A request id reused for a different question is an ID_CONFLICT: a receipt is not just "seen this id before".

Article 003, section 3. Two clients reuse request id `r1`, one for "question A" and one for "question B". The first
commits. The second carries the same id with a different question and answer: that is not a harmless duplicate,
and the session says so with ID_CONFLICT, leaving version, history and receipts exactly as they were.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class IdConflict(Scenario):
    source = "article 003, section 3"
    outcomes = only(client_a="COMMITTED", client_b="ID_CONFLICT", version=1, history=["question A", "answer A"])

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")
        self.a_committed = self.lab.latch("a-committed")

    @actor
    def client_a(self) -> CommitStatus:
        ticket = self.session.begin("r1", "question A")
        status = self.session.commit(ticket, "answer A", "stop")
        self.a_committed.count_down()
        return status

    @actor
    def client_b(self) -> CommitStatus:
        self.a_committed.wait()
        ticket = self.session.begin("r1", "question B")  # same id, different question, current version
        self.lab.note(f"begin -> ticket v{ticket.version}, same request id r1")
        return self.session.commit(ticket, "answer B", "stop")

    def observe(self) -> dict[str, object]:
        return {**versioned_state(self.session), "receipts": list(self.session.receipt_ids)}

    def invariants(self):
        yield "one receipt, for the committed request", self.session.receipt_ids == ("r1",)
