"""A ticket from another session is FOREIGN: it is refused before its version is even looked at.

Article 003, section 3. Session s2 has moved on to version 1; a ticket from s1 for version 0 arrives at s2. It is
not STALE (a stale ticket is an old ticket *of this session*): it was never s2's at all. Ownership is checked
first, so s2 answers FOREIGN and nothing changes, on either session.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class ForeignTicket(Scenario):
    source = "article 003, section 3"
    outcomes = only(
        s2_user="COMMITTED",
        stray="FOREIGN",
        s1={"version": 0, "history": []},
        s2={"version": 1, "history": ["q on s2", "a on s2"]},
    )

    def setup(self) -> None:
        self.s1 = self.lab.wire(VersionedSession, "s1")
        self.s2 = self.lab.wire(VersionedSession, "s2")
        self.s2_moved_on = self.lab.latch("s2-moved-on")

    @actor
    def s2_user(self) -> CommitStatus:
        status = self.s2.commit(self.s2.begin("r1", "q on s2"), "a on s2", "stop")
        self.s2_moved_on.count_down()
        return status

    @actor
    def stray(self) -> CommitStatus:
        ticket = self.s1.begin("r9", "q on s1")
        self.s2_moved_on.wait()
        self.lab.note(f"commit a ticket of {ticket.session_id} v{ticket.version} into s2 v{self.s2.version}")
        return self.s2.commit(ticket, "a", "stop")

    def observe(self) -> dict[str, object]:
        return {"s1": versioned_state(self.s1), "s2": versioned_state(self.s2)}
