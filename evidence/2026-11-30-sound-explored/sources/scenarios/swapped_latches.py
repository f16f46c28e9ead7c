"""Swap the latches and the slow answer wins: whoever commits first commits, and the version grows exactly once.

Article 003, section 6 (exercise 1). The same two requests as `out_of_order_commit`, but now the fast request may
not commit until the slow one has. Slow commits (version 0 -> 1) and fast, still holding a ticket for version 0,
comes back STALE. Which answer wins depends only on the commit order, never on which request "deserved" it, and
the version still grows exactly once for two requests begun on the same version.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, is_whole_pairs, only, versioned_state


class SwappedLatches(Scenario):
    source = "article 003, section 6, exercise 1"
    outcomes = only(slow="COMMITTED", fast="STALE", version=1, history=["slow question", "old answer"])

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")
        self.fast_began = self.lab.latch("fast-began")  # both must hold a version-0 ticket before anyone commits
        self.slow_committed = self.lab.latch("slow-committed")

    @actor
    def slow(self) -> CommitStatus:
        ticket = self.session.begin("r-slow", "slow question")
        self.lab.note(f"begin -> ticket v{ticket.version}")
        self.fast_began.wait()
        status = self.session.commit(ticket, "old answer", "stop")
        self.slow_committed.count_down()
        return status

    @actor
    def fast(self) -> CommitStatus:
        ticket = self.session.begin("r-fast", "fast question")
        self.lab.note(f"begin -> ticket v{ticket.version}")
        self.fast_began.count_down()
        self.slow_committed.wait()  # this time the fast reply must wait for the slow commit
        return self.session.commit(ticket, "new answer", "stop")

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)

    def invariants(self):
        yield "history is whole pairs", is_whole_pairs(self.session.snapshot()[1])
