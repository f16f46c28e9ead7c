"""A truncated or empty reply is INVALID and changes nothing, even though its ticket is current.

Article 003, section 3 (and article 000's reply table). A reply cut off by `finish_reason="length"`, and a reply
with blank content, are not answers. The session validates the reply before anything else about the state, so both
come back INVALID with version 0, an empty history and no receipt: the request id stays free for a real retry.
"""

from lab import CommitStatus, Scenario, VersionedSession, versioned_state


class IncompleteOutput(Scenario):
    source = "article 003, section 3"
    actors = ("truncated", "blank")
    expect = {"truncated": "INVALID", "blank": "INVALID"}
    expect_state = {"version": 0, "history": [], "receipts": []}

    def setup(self) -> None:
        self.session = VersionedSession("s1", lock=self.lab.lock("s1.lock"), probe=self.lab.probe("s1"))

    def truncated(self) -> CommitStatus:
        ticket = self.session.begin("r1", "long question")
        return self.session.commit(ticket, "the answer stops half", "length")

    def blank(self) -> CommitStatus:
        ticket = self.session.begin("r2", "another question")
        return self.session.commit(ticket, "   ", "stop")

    def observe(self) -> dict[str, object]:
        return {**versioned_state(self.session), "receipts": list(self.session.receipt_ids)}
