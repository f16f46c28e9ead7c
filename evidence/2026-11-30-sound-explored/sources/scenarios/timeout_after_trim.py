"""A trim made for a request that then times out is forgotten; a trim made for a request that succeeds is kept.

Article 000, section 6, both halves. A long answer is committed. The next question does not fit the byte budget
with the whole history, so its *candidate* drops the oldest pair, and then the transport times out: the candidate
is discarded and the committed history is exactly what it was, the dropped pair included. The retry trims the same
way and succeeds, so now the trimmed candidate plus the answer is committed, and the dropped pair never returns:
the history reflects the context the model actually saw.

Messages are labelled by their first word (`q2`, `A2`); the long ones are padded with Chinese text, 3 bytes a
character, to push the request over its 1,400-byte budget.
"""

from lab import AskResult, FailureKind, Reply, Scenario, TransactionalChat, actor, is_whole_pairs, only

LONG_ANSWER = "A2 " + "長" * 200
LONG_QUESTION = "問" * 150


class TimeoutAfterTrim(Scenario):
    source = "article 000, section 6"
    outcomes = only(
        earlier="COMMITTED", timed_out="TIMEOUT", retry="COMMITTED", history=["q2", "A2", "q4", "A4"], transport_calls=4
    )

    def setup(self) -> None:
        self.model = self.lab.transport(
            "model", [Reply("A1 short"), Reply(LONG_ANSWER), FailureKind.TIMEOUT, Reply("A4 after the retry")]
        )
        self.chat = self.lab.wire(TransactionalChat, self.model, max_request_bytes=1_400, name="chat")
        self.earlier_done = self.lab.latch("earlier-done")
        self.timeout_done = self.lab.latch("timeout-done")

    @actor
    def earlier(self) -> AskResult:
        self.chat.ask("q1 short question")
        result = self.chat.ask("q2 asks for a long answer")
        self.earlier_done.count_down()
        return result

    @actor
    def timed_out(self) -> AskResult:
        self.earlier_done.wait()
        self.before = self.chat.snapshot()
        result = self.chat.ask("q3 " + LONG_QUESTION)
        self.lab.note(f"candidate dropped {result.trimmed_pairs} pair(s), then {result.status}")
        self.after = self.chat.snapshot()
        self.timeout_done.count_down()
        return result

    @actor
    def retry(self) -> AskResult:
        self.timeout_done.wait()
        result = self.chat.ask("q4 " + LONG_QUESTION)
        self.lab.note(f"candidate dropped {result.trimmed_pairs} pair(s), then {result.status}")
        return result

    def observe(self) -> dict[str, object]:
        return {"history": [m.content.split()[0] for m in self.chat.snapshot()], "transport_calls": self.model.calls}

    def invariants(self):
        yield "the timeout left the committed history exactly as it was", self.before == self.after
        yield "the candidate that timed out had dropped q1", b"q1 short" not in self.model.requests[2]
        yield "q1's pair survived the timeout", self.after[0].content == "q1 short question"
        yield (
            "q1's pair never returns after the successful trim",
            all("q1" not in m.content for m in self.chat.snapshot()),
        )
        yield "history is whole pairs", is_whole_pairs(self.chat.snapshot())
