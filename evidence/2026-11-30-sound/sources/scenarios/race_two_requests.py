"""Race: two requests on one session, no latches. Can two answers built on the same version both be committed?

Article 003's question, asked of every interleaving instead of one. `slow` and `fast` each begin, call their model
and commit; nothing orders them. The explorer runs every schedule that matters. A correct session reaches three
outcomes: one of the two wins and the other is STALE (both began on the same version), or both commit because one
began only after the other had committed. What must never happen: both COMMITTED on tickets of the same version,
which splices two answers built on the same history. Run over the mutants (`--variant`), the explorer finds that.
The session starts with one committed round, so trimming to `max_rounds=2` matters too.
"""

from lab import VERSIONED_VARIANTS, CommitStatus, Reply, Scenario, acceptable, actor, forbidden, is_whole_pairs


class RaceTwoRequests(Scenario):
    source = "article 003, sections 1-2"
    variants = VERSIONED_VARIANTS
    outcomes = (
        acceptable(
            "both began on one version; slow committed first, fast is STALE", slow="COMMITTED", fast="STALE", version=2
        ),
        acceptable(
            "both began on one version; fast committed first, slow is STALE", slow="STALE", fast="COMMITTED", version=2
        ),
        acceptable(
            "one began after the other had committed: each answer is built on the history it joins",
            slow="COMMITTED",
            fast="COMMITTED",
            tickets="different",
            version=3,
        ),
        forbidden(
            "two answers built on the same version were both committed: the history splices them",
            slow="COMMITTED",
            fast="COMMITTED",
            tickets="same",
        ),
    )

    def setup(self) -> None:
        self.session = self.lab.wire(self.variant, "s1")
        self.session.commit(self.session.begin("r0", "q0"), "a0", "stop")  # one round already committed
        self.slow_model = self.lab.transport("slow_model", [Reply("slow answer")])
        self.fast_model = self.lab.transport("fast_model", [Reply("fast answer")])
        self.tickets = {}
        self.seen = {}

    def _request(self, who: str, model) -> CommitStatus:
        ticket = self.session.begin(f"r-{who}", f"{who} question")
        self.tickets[who] = ticket
        self.seen[who] = tuple(ticket.history)
        reply = model.send(ticket.to_request())
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def slow(self) -> CommitStatus:
        return self._request("slow", self.slow_model)

    @actor
    def fast(self) -> CommitStatus:
        return self._request("fast", self.fast_model)

    def observe(self) -> dict[str, object]:
        versions = {ticket.version for ticket in self.tickets.values()}
        return {"version": self.session.version, "tickets": "same" if len(versions) == 1 else "different"}

    def invariants(self):
        _version, history = self.session.snapshot()
        yield "history is whole pairs", is_whole_pairs(history)
        yield "history keeps at most 2 rounds", len(history) <= 4
        yield (
            "each ticket still holds the history it began with",
            all(tuple(ticket.history) == self.seen[who] for who, ticket in self.tickets.items()),
        )
