"""MUTANT: with the version check outside the lock, two answers built on version 0 are both committed.

Article 003, section 2 warns: "if the version comparison is moved outside the lock, two threads can still both
pass the check and then overwrite each other". CheckOutsideLockSession does exactly that. A probe hold parks
`slow` right after it passed the check (`commit:checked`) until `fast` has committed; then slow writes too. Both
come back COMMITTED, the version jumps to 2, and the history splices two answers that were each built on the same
empty history, a conversation that never happened. This scenario passes when it shows the bug.
"""

from lab import CheckOutsideLockSession, CommitStatus, Scenario, actor, only, versioned_state


class MutantCheckOutsideLock(Scenario):
    source = "article 003, section 2"
    mutant = True
    outcomes = only(
        slow="COMMITTED",
        fast="COMMITTED",
        version=2,
        history=["fast question", "fast answer", "slow question", "slow answer"],
    )

    def setup(self) -> None:
        self.session = self.lab.wire(CheckOutsideLockSession, "s1")
        self.slow_checked = self.lab.latch("slow-checked")
        self.fast_committed = self.lab.latch("fast-committed")
        # slow passes the version check, says so, and is parked right there until fast has committed
        self.lab.signal("slow", at="commit:checked", latch=self.slow_checked)
        self.lab.hold("slow", at="commit:checked", until=self.fast_committed)
        self.tickets = {}

    @actor
    def slow(self) -> CommitStatus:
        self.tickets["slow"] = ticket = self.session.begin("r-slow", "slow question")
        return self.session.commit(ticket, "slow answer", "stop")

    @actor
    def fast(self) -> CommitStatus:
        self.tickets["fast"] = ticket = self.session.begin("r-fast", "fast question")
        self.slow_checked.wait()  # slow has already passed the check for version 0
        status = self.session.commit(ticket, "fast answer", "stop")
        self.fast_committed.count_down()
        return status

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)

    def invariants(self):
        both_v0 = all(ticket.version == 0 for ticket in self.tickets.values())
        yield "the bug shows: two tickets for version 0 were both committed", both_v0 and self.session.version == 2
