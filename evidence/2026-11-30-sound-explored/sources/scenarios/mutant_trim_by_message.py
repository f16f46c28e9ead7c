"""MUTANT: trimming by single messages leaves an answer without its question.

Article 000, section 4: the wrong boundary is `assistant1 -> user2 -> assistant2 -> user3`. TrimByMessageSession
keeps the last three messages instead of whole pairs. After two rounds the history starts with `a1`, an answer
whose question is gone; a model reading it sees a reply to nothing. Compare `whole_round_trimming`, where the same
commits leave whole pairs. This scenario passes when it shows the bug.
"""

from lab import CommitStatus, Scenario, TrimByMessageSession, actor, is_whole_pairs, only, versioned_state


class MutantTrimByMessage(Scenario):
    source = "article 000, section 4"
    mutant = True
    outcomes = only(round1="COMMITTED", round2="COMMITTED", version=2, history=["a1", "q2", "a2"])

    def setup(self) -> None:
        self.session = self.lab.wire(TrimByMessageSession, "s1")
        self.round1_done = self.lab.latch("round1-done")

    @actor
    def round1(self) -> CommitStatus:
        status = self.session.commit(self.session.begin("r1", "q1"), "a1", "stop")
        self.round1_done.count_down()
        return status

    @actor
    def round2(self) -> CommitStatus:
        self.round1_done.wait()
        return self.session.commit(self.session.begin("r2", "q2"), "a2", "stop")

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)

    def invariants(self):
        history = self.session.snapshot()[1]
        yield "the bug shows: history starts with an orphan answer", history[0].role == "assistant"
        yield "the bug shows: history is not whole pairs", not is_whole_pairs(history)
