"""A ticket's history is a snapshot: later commits do not change what an in-flight answer was built on.

Article 003, section 4. A reader begins while the history holds one round, then waits while a writer commits two
more. The reader's ticket still shows exactly the one round it began with (reads see a snapshot, writes go to the
current state), and its late commit is STALE rather than silently rebased onto a history it never saw.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, only, versioned_state


class SnapshotIsolation(Scenario):
    source = "article 003, section 4"
    outcomes = only(
        reader="STALE", writer="COMMITTED", version=3, history=["q2", "a2", "q3", "a3"], reader_ticket=["q1", "a1"]
    )

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1")
        self.session.commit(self.session.begin("r1", "q1"), "a1", "stop")  # one round before the actors start
        self.reader_began = self.lab.latch("reader-began")
        self.writer_done = self.lab.latch("writer-done")
        self.reader_ticket = None

    @actor
    def reader(self) -> CommitStatus:
        self.reader_ticket = self.session.begin("r-read", "what did we say?")
        self.lab.note(f"begin -> ticket v{self.reader_ticket.version}, {len(self.reader_ticket.history)} messages")
        self.reader_began.count_down()
        self.writer_done.wait()
        self.lab.note(f"ticket still holds {len(self.reader_ticket.history)} messages")
        return self.session.commit(self.reader_ticket, "built on the snapshot", "stop")

    @actor
    def writer(self) -> CommitStatus:
        self.reader_began.wait()
        self.session.commit(self.session.begin("r2", "q2"), "a2", "stop")
        status = self.session.commit(self.session.begin("r3", "q3"), "a3", "stop")
        self.writer_done.count_down()
        return status

    def observe(self) -> dict[str, object]:
        ticket = [m.content for m in self.reader_ticket.history] if self.reader_ticket else None
        return {**versioned_state(self.session), "reader_ticket": ticket}

    def invariants(self):
        yield "the ticket's history is a tuple", isinstance(self.reader_ticket.history, tuple)
