"""Demanding "fast commits first" of a session that holds its lock over the network can never finish.

Article 003, section 1's latch order applied to article 000's TransactionalChat. `slow` asks first and takes the
lock; its reply is held until `fast` has committed. `fast` asks next and waits for the lock that `slow` holds.
Each waits for the other: a deadlock. The lab stops at once and the report is the lesson: `slow` waits for the
latch `fast-committed`, `fast` waits for `chat.lock`, held by `slow`. With the lock held over the network, the
fast request cannot overtake the slow one at all; `versioned_lets_fast_through` shows the way out.
"""

from lab import AskResult, Held, Reply, Scenario, TransactionalChat, actor, chat_state, only


class SynchronizedFastFirstDeadlocks(Scenario):
    source = "article 003, section 1 and article 000, section 10"
    outcomes = only(
        run="DEADLOCK",
        slow="BLOCKED",
        fast="BLOCKED",
        history=[],
        transport_calls=1,
        blocked_on={
            "slow": "latch 'fast-committed' still needs 1 count_down",
            "fast": "lock 'chat.lock' held by slow",
        },
    )

    def setup(self) -> None:
        self.slow_in_flight = self.lab.latch("slow-in-flight")
        self.fast_committed = self.lab.latch("fast-committed")
        self.model = self.lab.transport(
            "model",
            by_question={
                "slow question": Held(Reply("slow answer"), until=self.fast_committed),
                "fast question": Reply("fast answer"),
            },
        )
        self.chat = self.lab.wire(TransactionalChat, self.model, name="chat")
        self.lab.signal("slow", at="transport:send", latch=self.slow_in_flight)

    @actor
    def slow(self) -> AskResult:
        return self.chat.ask("slow question")

    @actor
    def fast(self) -> AskResult:
        self.slow_in_flight.wait()
        result = self.chat.ask("fast question")
        self.fast_committed.count_down()
        return result

    def observe(self) -> dict[str, object]:
        return {**chat_state(self.chat), "transport_calls": self.model.calls}
