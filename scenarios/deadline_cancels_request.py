"""One deadline bounds the whole request: a stream that stalls is cancelled when it passes, and commits nothing.

Article 000, section 8: the connect and read timeouts bound each wait, not the request ("an overall deadline
needs cancellation ... designed separately"). Here the deadline is 5 s for connect, headers and every chunk
together, on the run's clock. `asker`'s first stream sends two chunks, then stalls for 60 s: at 5 s the transport
abandons it (the provider sees the client leave and stops, billing the two chunks it sent) and the ask ends
TIMEOUT. Its second question is stopped by the user after the first chunk (a Ctrl-C in `lab chat`): CANCELLED.
Neither left anything behind: `next` then asks, commits, and its request carries neither question.
"""

import time

from lab import AskResult, Pause, Scenario, Stream, TransactionalChat, actor, is_whole_pairs, only


class DeadlineCancelsRequest(Scenario):
    source = "article 000, sections 8 and 10"
    not_cross_checked = (
        "its outcome is a time on the run's virtual clock (gave_up_after=5.0), which a run on real threads never "
        "reads exactly"
    )
    outcomes = only(
        asker="CANCELLED",
        next="COMMITTED",
        first="TIMEOUT",
        gave_up_after=5.0,
        billed=[2, 1, 2],
        history=["q3", "A3"],
    )

    def setup(self) -> None:
        self.model = self.lab.transport(
            "model",
            [
                Stream(("A1 ", "begins ", Pause(seconds=60), "never arrives")),
                Stream(("A2 ", "is stopped ", "by the user")),
                Stream(("A3 ", "whole")),
            ],
        )
        self.model.deadline = 5.0
        self.chat = self.lab.wire(TransactionalChat, self.model, stream=True, name="chat")
        self.asked = self.lab.latch("asker-done")
        self.first = ""
        self.waited = 0.0

    @actor
    def asker(self) -> AskResult:
        started = time.monotonic()  # the run's clock: no real time passes
        first = self.chat.ask("q1 stalls", request_id="r1")
        self.waited = round(time.monotonic() - started, 3)
        self.first = str(first.status)
        self.lab.note(f"q1 -> {first.status} after {self.waited} s")
        shown: list[str] = []
        stopped = self.chat.ask("q2 stopped", on_delta=shown.append, should_stop=lambda: bool(shown), request_id="r2")
        self.asked.count_down()
        return stopped

    @actor
    def next(self) -> AskResult:
        self.asked.wait()
        return self.chat.ask("q3 next", request_id="r3")

    def observe(self) -> dict[str, object]:
        return {
            "first": self.first,
            "gave_up_after": self.waited,
            "billed": [entry.chunks_billed for entry in self.model.journal.entries],
            "history": [m.content.split()[0] for m in self.chat.snapshot()],
        }

    def invariants(self):
        journal = self.model.journal
        yield "the provider saw the client leave at the deadline", journal["r1"].abandoned == "TIMEOUT"
        yield "and when the user stopped", journal["r2"].abandoned == "CANCELLED"
        yield "no answer was finished for either", journal["r1"].finished is None and journal["r2"].finished is None
        yield (
            "the next request carries neither question",
            not any(q in self.model.requests[2] for q in (b"q1 stalls", b"q2 stopped")),
        )
        yield "history is whole pairs", is_whole_pairs(self.chat.snapshot())
