"""A fast answer commits while two slow ones still stream: one streams to the end and is STALE, one stops early.

Article 003's race, with the slow replies streamed (issue 25): `slow` and `early` both begin on version 0 and
start streaming; `fast` begins on version 0 too, and commits while both are still in flight. `slow` streams its
five chunks to the end and is refused as STALE: all five were generated and billed for nothing. `early` asks the
session after every chunk whether its ticket is still current (`is_current`, early STALE) and, once it is not,
stops the stream: CANCELLED after three chunks, so it pays for three instead of five. Neither is ever spliced onto
the history fast's answer made.
"""

from lab import CommitStatus, Pause, Scenario, Stream, TransportFailure, VersionedSession, actor, only, versioned_state


class FastCommitsWhileSlowStreams(Scenario):
    source = "article 003, section 2; article 000, section 10"
    outcomes = only(
        slow="STALE",
        early="CANCELLED",
        fast="COMMITTED",
        version=1,
        history=["fast question", "fast answer"],
        slow_billed=5,
        early_billed=3,
    )

    def setup(self) -> None:
        self.slow_in_flight = self.lab.latch("slow-in-flight")
        self.early_checked = self.lab.latch("early-checked-twice")
        self.fast_committed = self.lab.latch("fast-committed")
        later = Pause(until=self.fast_committed)  # the rest of each slow stream arrives after fast committed
        self.slow_model = self.lab.transport("slow_model", [Stream(("s1 ", later, "s2 ", "s3 ", "s4 ", "s5"))])
        self.early_model = self.lab.transport("early_model", [Stream(("e1 ", "e2 ", later, "e3 ", "e4 ", "e5"))])
        self.fast_model = self.lab.transport("fast_model", [Stream(("fast ", "answer"))])
        self.session = self.lab.wire(VersionedSession, "s1")
        self.lab.signal("slow", at="transport:send", latch=self.slow_in_flight)
        self.checks = 0

    @actor
    def slow(self) -> CommitStatus:
        ticket = self.session.begin("r-slow", "slow question")
        reply = self.slow_model.stream(ticket.to_request(stream=True), request_id=ticket.request_id)
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def early(self) -> object:
        ticket = self.session.begin("r-early", "early question")

        def refused_already() -> bool:
            current = self.session.is_current(ticket)
            self.checks += 1
            if self.checks == 2:
                self.early_checked.count_down()
            return not current

        try:
            reply = self.early_model.stream(
                ticket.to_request(stream=True), should_stop=refused_already, request_id=ticket.request_id
            )
        except TransportFailure as failure:
            self.lab.note(f"stopped after {self.checks} chunks: the version moved on")
            return failure.kind
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def fast(self) -> CommitStatus:
        self.slow_in_flight.wait()
        self.early_checked.wait()
        ticket = self.session.begin("r-fast", "fast question")
        reply = self.fast_model.stream(ticket.to_request(stream=True), request_id=ticket.request_id)
        status = self.session.commit(ticket, reply.content, reply.finish_reason)
        self.fast_committed.count_down()
        return status

    def observe(self) -> dict[str, object]:
        return {
            **versioned_state(self.session),
            "slow_billed": self.slow_model.journal.chunks_billed,
            "early_billed": self.early_model.journal.chunks_billed,
        }

    def invariants(self):
        steps = [(e.actor, e.op, e.obj, e.detail.get("point")) for e in self.lab.trace]
        fast_wrote = steps.index(("fast", "probe", "s1", "commit:write"))
        slow_returned = steps.index(("slow", "probe", "slow_model", "transport:return"))
        yield "fast committed while slow was still streaming", fast_wrote < slow_returned
        yield (
            "early paid for fewer chunks than slow",
            (self.early_model.journal.chunks_billed < self.slow_model.journal.chunks_billed),
        )
