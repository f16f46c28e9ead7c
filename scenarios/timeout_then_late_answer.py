"""A timeout is UNKNOWN, not failed: the provider's late answer, reconciled, is committed or STALE, never lost.

Article 000, section 8: "a read timeout cannot prove the service did not process or bill the request". `slow`
streams with a 10 s deadline; its provider stalls for 30 s, the deadline passes (on the run's clock) and the
client gives up: TIMEOUT, and the request's fate is UNKNOWN. The provider finishes the answer anyway and bills it.
`slow` then reconciles: it asks the provider's record by its request id (a lookup, not a second request) and puts
the late answer through the ordinary commit. Racing `fast`, with no latches, that commit is COMMITTED when slow's
ticket is still current and STALE when fast committed first. Never UNKNOWN (lost), and every request reaches the
provider once: nothing is billed twice.
"""

from lab import (
    CommitStatus,
    Pause,
    Scenario,
    Stream,
    TransportFailure,
    VersionedSession,
    acceptable,
    actor,
    forbidden,
    is_whole_pairs,
)


class TimeoutThenLateAnswer(Scenario):
    source = "article 000, sections 8 and 10; article 003, section 3"
    outcomes = (
        acceptable(
            "both began on version 0; the late answer was reconciled first", slow="COMMITTED", fast="STALE", version=1
        ),
        acceptable("both began on version 0; fast committed first", slow="STALE", fast="COMMITTED", version=1),
        acceptable("one began after the other committed", slow="COMMITTED", fast="COMMITTED", version=2),
        forbidden("the provider finished and billed an answer the session never accounted for", slow="UNKNOWN"),
        forbidden("a request reached the provider twice: billed twice", sends_per_request=2),
    )

    def setup(self) -> None:
        self.slow_model = self.lab.transport(
            "slow_model", [Stream(("late ", Pause(seconds=30), "answer"), finishes_if_abandoned=True)]
        )
        self.slow_model.deadline = 10.0
        self.fast_model = self.lab.transport("fast_model", [Stream(("fast ", "answer"))])
        self.session = self.lab.wire(VersionedSession, "s1")
        self.first: dict[str, str] = {}

    @actor
    def slow(self) -> CommitStatus:
        ticket = self.session.begin("r-slow", "slow question")
        try:
            reply = self.slow_model.stream(ticket.to_request(stream=True), request_id=ticket.request_id)
        except TransportFailure as failure:
            self.first["slow"] = str(failure.kind)
            self.lab.note(f"{failure.kind}: the outcome is UNKNOWN until reconciled")
            return self.session.reconcile(ticket, self.slow_model)
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def fast(self) -> CommitStatus:
        ticket = self.session.begin("r-fast", "fast question")
        reply = self.fast_model.stream(ticket.to_request(stream=True), request_id=ticket.request_id)
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    def observe(self) -> dict[str, object]:
        entries = [*self.slow_model.journal.entries, *self.fast_model.journal.entries]
        return {"version": self.session.version, "sends_per_request": max(entry.sends for entry in entries)}

    def invariants(self):
        slow = self.slow_model.journal["r-slow"]
        yield "slow's first outcome was a timeout", self.first.get("slow") == "TIMEOUT"
        yield (
            "the provider finished slow's answer after the client gave up",
            (slow.abandoned == "TIMEOUT" and slow.finished is not None),
        )
        yield (
            "reconciling sent no second request",
            self.slow_model.calls == 1 and self.slow_model.journal.lookups == ["r-slow"],
        )
        yield "history is whole pairs", is_whole_pairs(self.session.snapshot()[1])
