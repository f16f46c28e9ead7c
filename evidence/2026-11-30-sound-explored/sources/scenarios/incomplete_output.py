"""A truncated or empty reply is INVALID and changes nothing, even though its ticket is current.

Article 003, section 3 (and article 000's reply table). A reply cut off by `finish_reason="length"`, and a reply
with blank content, are not answers. The session validates the reply before anything else about the state, so both
come back INVALID with version 0, an empty history and no receipt: the request id stays free for a real retry.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class IncompleteOutput(Scenario):
    source = "article 003, section 3"
    outcomes = only(truncated="INVALID", blank="INVALID", version=0, history=[], receipts=[])

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")

    @actor
    def truncated(self) -> CommitStatus:
        ticket = self.session.begin("r1", "long question")
        return self.session.commit(ticket, "the answer stops half", "length")

    @actor
    def blank(self) -> CommitStatus:
        ticket = self.session.begin("r2", "another question")
        return self.session.commit(ticket, "   ", "stop")

    def observe(self) -> dict[str, object]:
        return {**versioned_state(self.session), "receipts": list(self.session.receipt_ids)}
