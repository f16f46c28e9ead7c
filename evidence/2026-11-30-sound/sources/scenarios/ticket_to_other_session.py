"""Equal version numbers do not make a ticket yours: a ticket of s1 at v0 is FOREIGN to s2 at v0.

Article 003, section 6 (exercise 3). Two fresh sessions are both at version 0. A ticket begun on s1 is handed to
s2. Had the session compared only version numbers, the commit would succeed and s2's history would hold an answer
built on s1's conversation. "Same version" does not mean "same state": s2 answers FOREIGN.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class TicketToOtherSession(Scenario):
    source = "article 003, section 6, exercise 3"
    outcomes = only(mixup="FOREIGN", s1={"version": 0, "history": []}, s2={"version": 0, "history": []})

    def setup(self) -> None:
        self.s1 = self.lab.wire(VersionedSession, "s1")
        self.s2 = self.lab.wire(VersionedSession, "s2")

    @actor
    def mixup(self) -> CommitStatus:
        ticket = self.s1.begin("r1", "question for s1")
        self.lab.note(f"ticket of {ticket.session_id} v{ticket.version}; s2 is at v{self.s2.version} too")
        return self.s2.commit(ticket, "answer", "stop")

    def observe(self) -> dict[str, object]:
        return {"s1": versioned_state(self.s1), "s2": versioned_state(self.s2)}
