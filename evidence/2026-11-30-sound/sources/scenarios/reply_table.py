"""Every row of article 000's reply table on one session: only a complete `stop` reply is committed.

Article 000, section 3. Nine clients ask one TransactionalChat in turn (a latch per turn); the scripted model
answers each with one row of the table: a good reply, HTTP 429, HTTP 500, a timeout, a broken connection, an
unparsable body, an empty reply, a reply cut off by `length`, and one with no finish reason at all. Each failure has
its own status, and none of them leaves anything behind: the history holds the one good pair.
"""

from lab import AskResult, FailureKind, Reply, Scenario, TransactionalChat, TransportFailure, actor, chat_state, only

ROWS = {
    "ok": Reply("a complete answer", "stop"),
    "rate_limited": FailureKind.HTTP_429,
    "server_error": TransportFailure(FailureKind.HTTP_STATUS, 500),
    "timed_out": FailureKind.TIMEOUT,
    "connection_lost": FailureKind.IO,
    "unparsable": FailureKind.PARSE,
    "empty": Reply("", "stop"),
    "truncated": Reply("an answer cut off mid-", "length"),
    "no_reason": Reply("an answer without a finish reason", None),
}


class ReplyTable(Scenario):
    source = "article 000, section 3"
    outcomes = only(
        ok="COMMITTED",
        rate_limited="HTTP_429",
        server_error="HTTP_STATUS",
        timed_out="TIMEOUT",
        connection_lost="IO",
        unparsable="PARSE",
        empty="EMPTY",
        truncated="INCOMPLETE",
        no_reason="INCOMPLETE",
        history=["question from ok", "a complete answer"],
        transport_calls=9,
    )

    def setup(self) -> None:
        self.model = self.lab.transport("model", by_question={f"question from {k}": v for k, v in ROWS.items()})
        self.chat = self.lab.wire(TransactionalChat, self.model, name="chat")
        self.turn_done = {who: self.lab.latch(f"{who}-done") for who in ROWS}

    def _ask(self, who: str) -> AskResult:
        turn = list(ROWS).index(who)
        if turn:
            self.turn_done[list(ROWS)[turn - 1]].wait()  # one client after the other, in table order
        result = self.chat.ask(f"question from {who}")
        self.turn_done[who].count_down()
        return result

    @actor
    def ok(self) -> AskResult:
        return self._ask("ok")

    @actor
    def rate_limited(self) -> AskResult:
        return self._ask("rate_limited")

    @actor
    def server_error(self) -> AskResult:
        return self._ask("server_error")

    @actor
    def timed_out(self) -> AskResult:
        return self._ask("timed_out")

    @actor
    def connection_lost(self) -> AskResult:
        return self._ask("connection_lost")

    @actor
    def unparsable(self) -> AskResult:
        return self._ask("unparsable")

    @actor
    def empty(self) -> AskResult:
        return self._ask("empty")

    @actor
    def truncated(self) -> AskResult:
        return self._ask("truncated")

    @actor
    def no_reason(self) -> AskResult:
        return self._ask("no_reason")

    def observe(self) -> dict[str, object]:
        return {**chat_state(self.chat), "transport_calls": self.model.calls}
