"""With the network outside the lock, the fast request commits while the slow one is still in flight.

Article 003, section 2. The same two requests as `synchronized_blocks_fast`, on a VersionedSession: `begin` takes a
ticket, the model is called with no lock held, `commit` takes the lock only to check and write. `fast` begins,
sends, and commits while `slow` is still waiting for its reply. The price of that speed: slow's answer was built
on version 0 and comes back STALE.
"""

from lab import CommitStatus, Held, Reply, Scenario, VersionedSession, actor, only, versioned_state


class VersionedLetsFastThrough(Scenario):
    source = "article 003, section 2"
    outcomes = only(slow="STALE", fast="COMMITTED", version=1, history=["fast question", "fast answer"])

    def setup(self) -> None:
        self.slow_in_flight = self.lab.latch("slow-in-flight")
        self.fast_committed = self.lab.latch("fast-committed")
        self.slow_model = self.lab.transport("slow_model", [Held(Reply("slow answer"), until=self.fast_committed)])
        self.fast_model = self.lab.transport("fast_model", [Reply("fast answer")])
        self.session = self.lab.wire(VersionedSession, "s1")
        self.lab.signal("slow", at="transport:send", latch=self.slow_in_flight)

    @actor
    def slow(self) -> CommitStatus:
        ticket = self.session.begin("r-slow", "slow question")
        reply = self.slow_model.send(ticket.to_request())  # no lock held while waiting
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def fast(self) -> CommitStatus:
        self.slow_in_flight.wait()
        ticket = self.session.begin("r-fast", "fast question")
        reply = self.fast_model.send(ticket.to_request())
        status = self.session.commit(ticket, reply.content, reply.finish_reason)
        self.fast_committed.count_down()
        return status

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)

    def invariants(self):
        steps = [(e.actor, e.op, e.obj, e.detail.get("point")) for e in self.lab.trace]
        fast_wrote = steps.index(("fast", "probe", "s1", "commit:write"))
        slow_returned = steps.index(("slow", "probe", "slow_model", "transport:return"))
        yield "fast committed while slow was still in flight", fast_wrote < slow_returned
