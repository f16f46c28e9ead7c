"""A failed reply that returns first changes nothing, so the valid reply behind it still commits.

Article 003, section 6 (exercise 2). Both requests begin at version 0. The first reply back is truncated
(`finish_reason="length"`): INVALID, and because an invalid reply never touches the state the version stays 0. The
valid reply arrives second with its version-0 ticket and is COMMITTED: a failure is not a commit, so it cannot make
anyone else stale.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class FailedReplyFirst(Scenario):
    source = "article 003, section 6, exercise 2"
    outcomes = only(failing="INVALID", valid="COMMITTED", version=1, history=["valid question", "valid answer"])

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")
        self.failure_returned = self.lab.latch("failure-returned")

    @actor
    def failing(self) -> CommitStatus:
        ticket = self.session.begin("r-fail", "failing question")
        status = self.session.commit(ticket, "cut off mid-", "length")
        self.failure_returned.count_down()
        return status

    @actor
    def valid(self) -> CommitStatus:
        ticket = self.session.begin("r-ok", "valid question")
        self.lab.note(f"begin -> ticket v{ticket.version}")
        self.failure_returned.wait()
        return self.session.commit(ticket, "valid answer", "stop")

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)
