"""Blank and oversized questions are refused before any request is sent: zero transport calls.

Article 000, sections 3 and 4. A blank question is EMPTY_QUESTION. A question that, with only the model name and
the system prompt around it, exceeds the 16,000-byte budget is QUESTION_TOO_LARGE: trimming history cannot make it
fit, and silently truncating it would send a different question than the user asked. Neither reaches the
transport, and neither changes the history.
"""

from lab import AskResult, Scenario, TransactionalChat, actor, chat_state, only


class RejectedBeforeTransport(Scenario):
    source = "article 000, sections 3-4"
    outcomes = only(blank="EMPTY_QUESTION", oversized="QUESTION_TOO_LARGE", history=[], transport_calls=0)

    def setup(self) -> None:
        self.model = self.lab.transport("model", [])  # an empty script: any call would fail the scenario
        self.chat = self.lab.wire(TransactionalChat, self.model, name="chat")

    @actor
    def blank(self) -> AskResult:
        return self.chat.ask("   \n")

    @actor
    def oversized(self) -> AskResult:
        result = self.chat.ask("字" * 6_000)  # 18,000 bytes of question alone
        self.lab.note(result.detail)
        return result

    def observe(self) -> dict[str, object]:
        return {**chat_state(self.chat), "transport_calls": self.model.calls}
