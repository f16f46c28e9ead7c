"""Receipts are bounded: once a request's receipt is evicted, its retry is just an old ticket (STALE).

Article 003, section 3. With room for one receipt, request r1 commits, then r2 commits and evicts r1's receipt.
When r1's reply is delivered again, the session no longer remembers r1, so it cannot say DUPLICATE; it compares
versions and says STALE. This is what "in-process idempotency only" means: memory is bounded, and a restart
forgets everything.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class ReceiptEviction(Scenario):
    source = "article 003, section 3"
    outcomes = only(
        first="COMMITTED",
        second="COMMITTED",
        retry="STALE",
        version=2,
        history=["q1", "a1", "q2", "a2"],
        receipts=["r2"],
    )

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1", receipt_capacity=1)
        self.ticket = self.session.begin("r1", "q1")
        self.first_done = self.lab.latch("first-done")
        self.second_done = self.lab.latch("second-done")

    @actor
    def first(self) -> CommitStatus:
        status = self.session.commit(self.ticket, "a1", "stop")
        self.first_done.count_down()
        return status

    @actor
    def second(self) -> CommitStatus:
        self.first_done.wait()
        status = self.session.commit(self.session.begin("r2", "q2"), "a2", "stop")
        self.lab.note(f"receipts now: {', '.join(self.session.receipt_ids)}")
        self.second_done.count_down()
        return status

    @actor
    def retry(self) -> CommitStatus:
        self.second_done.wait()
        return self.session.commit(self.ticket, "a1", "stop")  # same ticket, same answer, receipt gone

    def observe(self) -> dict[str, object]:
        return {**versioned_state(self.session), "receipts": list(self.session.receipt_ids)}
