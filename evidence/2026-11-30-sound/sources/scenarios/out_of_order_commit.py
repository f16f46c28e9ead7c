"""Two answers built on version 0: the one that returns first commits, the late one comes back STALE.

Article 003, section 1. Both requests begin at version 0 with an empty history. The fast request's reply arrives
first and commits (version 0 -> 1). The slow request's reply arrives afterwards, still carrying a ticket for
version 0; the session refuses it as STALE instead of splicing two answers that were each built on an empty
history into one conversation that looks continuous but never happened.

Two latches fix the order: `slow-began` (fast may not begin until slow holds its version-0 ticket) and
`fast-committed` (slow may not commit until fast has). No sleeps, no luck: `run.py --explore` confirms that these
latches leave exactly one outcome under every interleaving. Drop `slow-began` and the explorer finds a schedule where
slow begins only after fast committed, gets a version-1 ticket, and commits too.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, is_whole_pairs, only, versioned_state


class OutOfOrderCommit(Scenario):
    source = "article 003, section 1"
    # The one outcome the latches leave: each actor's status, then the final state that observe() reports.
    outcomes = only(fast="COMMITTED", slow="STALE", version=1, history=["fast question", "new answer"])

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")  # its lock s1.lock and probe s1 show in the trace
        self.slow_began = self.lab.latch("slow-began")
        self.fast_committed = self.lab.latch("fast-committed")

    @actor  # actor 0: the first defined
    def slow(self) -> CommitStatus:
        ticket = self.session.begin("r-slow", "slow question")
        self.lab.note(f"begin -> ticket v{ticket.version}")
        self.slow_began.count_down()
        self.fast_committed.wait()  # the slow reply "arrives" only after fast has committed
        return self.session.commit(ticket, "old answer", "stop")

    @actor
    def fast(self) -> CommitStatus:
        self.slow_began.wait()
        ticket = self.session.begin("r-fast", "fast question")
        self.lab.note(f"begin -> ticket v{ticket.version}")
        status = self.session.commit(ticket, "new answer", "stop")
        self.fast_committed.count_down()
        return status

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)  # {"version": 1, "history": ["fast question", "new answer"]}

    def invariants(self):
        yield "history is whole pairs", is_whole_pairs(self.session.snapshot()[1])
