"""Race: a failed reply and a valid one, in any order. The failure must never make the valid answer STALE.

Article 003, section 6 (exercise 2), without latches. Both requests begin on one version; one reply is truncated
(`length`), the other is fine. In every order the failure is INVALID and changes nothing, so the valid reply, built
on the same version, still commits. A session that claims the version before it validates the reply turns the
failure into a silent commit of nothing, and the valid answer comes back STALE: FORBIDDEN.
"""

from lab import VERSIONED_VARIANTS, CommitStatus, Reply, Scenario, acceptable, actor, forbidden, versioned_state


class RaceFailedReply(Scenario):
    source = "article 003, section 6, exercise 2"
    variants = VERSIONED_VARIANTS
    outcomes = (
        acceptable(
            "the failure changed nothing; the valid reply committed", failing="INVALID", valid="COMMITTED", version=1
        ),
        forbidden("a reply that committed nothing made the valid answer STALE", valid="STALE"),
    )

    def setup(self) -> None:
        self.session = self.lab.wire(self.variant, "s1")
        self.failing_model = self.lab.transport("failing_model", [Reply("cut off mid-", "length")])
        self.valid_model = self.lab.transport("valid_model", [Reply("a complete answer")])
        self.both_began = self.lab.barrier("both-began", 2)  # both tickets are for version 0

    def _request(self, who: str, model) -> CommitStatus:
        ticket = self.session.begin(f"r-{who}", f"{who} question")
        self.both_began.wait()
        reply = model.send(ticket.to_request())
        return self.session.commit(ticket, reply.content, reply.finish_reason)

    @actor
    def failing(self) -> CommitStatus:
        return self._request("failing", self.failing_model)

    @actor
    def valid(self) -> CommitStatus:
        return self._request("valid", self.valid_model)

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)
