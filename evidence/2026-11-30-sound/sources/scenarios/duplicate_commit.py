"""The same reply delivered twice is recognised as a DUPLICATE, not applied twice and not called STALE.

Article 003, section 3. A network retry can hand the session the very same ticket and answer a second time. The
session remembers a receipt (request id -> question and answer) for every commit, and it looks receipts up before
it compares versions: the retry gets a precise DUPLICATE instead of a vague STALE, and the version grows once.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, is_whole_pairs, only, versioned_state


class DuplicateCommit(Scenario):
    source = "article 003, section 3"
    outcomes = only(first="COMMITTED", retry="DUPLICATE", version=1, history=["question", "answer"])

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")
        self.ticket = self.session.begin("r1", "question")  # one request, issued before either delivery
        self.first_delivered = self.lab.latch("first-delivered")

    @actor
    def first(self) -> CommitStatus:
        status = self.session.commit(self.ticket, "answer", "stop")
        self.first_delivered.count_down()
        return status

    @actor
    def retry(self) -> CommitStatus:
        self.first_delivered.wait()
        return self.session.commit(self.ticket, "answer", "stop")  # the same ticket, the same answer

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)

    def invariants(self):
        yield "history is whole pairs", is_whole_pairs(self.session.snapshot()[1])
