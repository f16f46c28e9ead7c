"""Holding the lock over the network makes a fast question wait for a slow one it has nothing to do with.

Article 003, opening (the cost of article 000's design). TransactionalChat holds its lock for the whole `ask`,
network call included. `slow` asks first and its reply is held back; `fast` asks while slow is in flight and
cannot even start: the trace shows `fast` waiting on `chat.lock` held by `slow`, and fast's request is built only
after slow's reply returned, so it carries slow's pair. Everything is correct, and everything is serialized.
Compare `versioned_lets_fast_through`.
"""

from lab import AskResult, Held, Reply, Scenario, TransactionalChat, actor, chat_state, only


class SynchronizedBlocksFast(Scenario):
    source = "article 003, opening; article 000, section 10"
    outcomes = only(
        slow="COMMITTED",
        fast="COMMITTED",
        network="DONE",
        history=["slow question", "slow answer", "fast question", "fast answer"],
    )

    def setup(self) -> None:
        self.slow_in_flight = self.lab.latch("slow-in-flight")
        self.fast_arrived = self.lab.latch("fast-arrived")
        self.slow_reply = self.lab.latch("slow-reply")
        self.model = self.lab.transport(
            "model",
            by_question={
                "slow question": Held(Reply("slow answer"), until=self.slow_reply),
                "fast question": Reply("fast answer"),
            },
        )
        self.chat = self.lab.wire(TransactionalChat, self.model, name="chat")
        self.lab.signal("slow", at="transport:send", latch=self.slow_in_flight)
        self.lab.signal("fast", at="ask:enter", latch=self.fast_arrived)

    @actor
    def slow(self) -> AskResult:
        return self.chat.ask("slow question")

    @actor
    def fast(self) -> AskResult:
        self.slow_in_flight.wait()
        return self.chat.ask("fast question")

    @actor
    def network(self) -> None:
        self.fast_arrived.wait()
        self.slow_reply.count_down()  # the slow reply finally arrives

    def observe(self) -> dict[str, object]:
        return chat_state(self.chat)

    def invariants(self):
        steps = [(e.actor, e.op, e.obj, e.detail.get("point")) for e in self.lab.trace]
        slow_returned = steps.index(("slow", "probe", "model", "transport:return"))
        fast_started = steps.index(("fast", "probe", "chat", "ask:locked"))
        yield "fast starts its ask only after slow's transport returned", fast_started > slow_returned
        yield "fast's request carried slow's pair", b"slow answer" in self.model.requests[1]
