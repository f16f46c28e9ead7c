"""A streamed reply is a candidate until it ends: a cut, an oversized or a `length` stream commits nothing.

Article 000 ends on what it did not build: "no streaming transactions yet". Here they are. Every chunk of a
streamed reply goes into a candidate, never into the history, and each chunk is a scheduling point. Four
questions stream in turn. The first stream is cut after two chunks (the connection closes, no finish): IO. The
second passes the 256 KiB budget in total, three chunks of 90,000 bytes: IO, and nothing of it is kept. The third
ends with `finish_reason=length`: INCOMPLETE. Only the fourth ends with `stop`, and only it is committed. Meanwhile
`reader` looks at the history while the first stream is in flight and sees none of it, and no request after a
failed stream carries that stream's question.
"""

from lab import AskResult, Pause, Scenario, Stream, StreamEnd, TransactionalChat, actor, is_whole_pairs, only

HUGE_CHUNK = "長" * 30_000  # 90,000 UTF-8 bytes: the third such chunk passes 256 KiB


class StreamCutCommitsNothing(Scenario):
    source = "article 000, sections 3 and 10"
    outcomes = only(
        asker="COMMITTED",
        reader="DONE",
        statuses=["IO", "IO", "INCOMPLETE", "COMMITTED"],
        seen_mid_stream=0,
        history=["q4", "A4"],
    )

    def setup(self) -> None:
        self.streaming = self.lab.latch("cut-stream-in-flight")
        self.reader_looked = self.lab.latch("reader-looked")
        self.model = self.lab.transport(
            "model",
            [
                Stream(("A1 half ", "an answer", Pause(until=self.reader_looked)), end=StreamEnd.CUT),
                Stream((HUGE_CHUNK, HUGE_CHUNK, HUGE_CHUNK, "never seen")),
                Stream(("A3 cut ", "short by"), finish_reason="length"),
                Stream(("A4 ", "a whole ", "answer")),
            ],
        )
        self.chat = self.lab.wire(TransactionalChat, self.model, stream=True, name="chat")
        self.lab.signal("asker", at="transport:chunk", latch=self.streaming)
        self.statuses: list[str] = []
        self.seen: int = -1

    @actor
    def asker(self) -> AskResult:
        result = None
        for question in ("q1 cut", "q2 huge", "q3 length", "q4 whole"):
            result = self.chat.ask(question)
            self.lab.note(f"{question.split()[0]} -> {result.status}")
            self.statuses.append(str(result.status))
        return result

    @actor
    def reader(self) -> None:
        self.streaming.wait()  # the first chunk of the cut stream has arrived
        self.seen = len(self.chat.snapshot())
        self.reader_looked.count_down()

    def observe(self) -> dict[str, object]:
        return {
            "statuses": self.statuses,
            "seen_mid_stream": self.seen,
            "history": [m.content.split()[0] for m in self.chat.snapshot()],
        }

    def invariants(self):
        requests = self.model.requests
        yield "every request asked for a stream", all(body.endswith(b',"stream":true}') for body in requests)
        for failed, question in enumerate((b"q1 cut", b"q2 huge", b"q3 length")):
            later = requests[failed + 1 :]
            yield f"no request after stream {failed + 1} carries its question", all(question not in r for r in later)
        yield (
            "nothing of a failed stream's text was committed",
            all(word not in m.content for m in self.chat.snapshot() for word in ("A1", "A3", "長")),
        )
        yield "history is whole pairs", is_whole_pairs(self.chat.snapshot())
