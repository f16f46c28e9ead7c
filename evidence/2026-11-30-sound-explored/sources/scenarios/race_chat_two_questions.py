"""Race: two questions on one TransactionalChat, in any order. Both commit, one after the other, never mixed.

Article 000, with the article's own lock held across the network. Two users ask at once; the explorer tries every
order. Because `ask` holds the session's lock for the whole call, one question always runs entirely before the
other: both are COMMITTED, the second request carries the first pair, and the history is two whole pairs in the
order the lock was taken. Safe, and serialized: `synchronized_blocks_fast` shows what that costs.
"""

from lab import AskResult, Reply, Scenario, TransactionalChat, acceptable, actor, is_whole_pairs


class RaceChatTwoQuestions(Scenario):
    source = "article 000, sections 1 and 10"
    variants = {"TransactionalChat": TransactionalChat}
    outcomes = (
        acceptable("alice took the lock first", alice="COMMITTED", bob="COMMITTED", order="alice,bob"),
        acceptable("bob took the lock first", alice="COMMITTED", bob="COMMITTED", order="bob,alice"),
    )

    def setup(self) -> None:
        self.model = self.lab.transport(
            "model",
            by_question={
                "alice question": Reply("alice answer"),
                "bob question": Reply("bob answer"),
            },
        )
        self.chat = self.lab.wire(self.variant, self.model, name="chat")

    @actor
    def alice(self) -> AskResult:
        return self.chat.ask("alice question")

    @actor
    def bob(self) -> AskResult:
        return self.chat.ask("bob question")

    def observe(self) -> dict[str, object]:
        users = [m.content.split()[0] for m in self.chat.snapshot() if m.role == "user"]
        return {"order": ",".join(users)}

    def invariants(self):
        history = self.chat.snapshot()
        yield "history is whole pairs", is_whole_pairs(history)
        second = self.model.requests[1]
        first_answer = history[1].content.encode()
        yield "the second request carries the first pair", first_answer in second
