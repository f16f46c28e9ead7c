"""Keeping the last two rounds drops the oldest whole user/assistant pair, never a lone message.

Article 003, section 4. With `max_rounds=2`, three commits in a row leave rounds 2 and 3. The oldest round goes as
a pair, so the history still starts with a question: no answer is left without the question it answered.
Compare `mutant_trim_by_message`, which trims single messages and leaves exactly that orphan.
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, is_whole_pairs, only, versioned_state


class WholeRoundTrimming(Scenario):
    source = "article 003, section 4"
    outcomes = only(
        round1="COMMITTED", round2="COMMITTED", round3="COMMITTED", version=3, history=["q2", "a2", "q3", "a3"]
    )

    def setup(self) -> None:
        self.session = self.lab.wire(VersionedSession, "s1", max_rounds=2)
        self.done = [self.lab.latch("round1-done"), self.lab.latch("round2-done")]

    def _round(self, n: int) -> CommitStatus:
        if n > 1:
            self.done[n - 2].wait()
        status = self.session.commit(self.session.begin(f"r{n}", f"q{n}"), f"a{n}", "stop")
        if n < 3:
            self.done[n - 1].count_down()
        return status

    @actor
    def round1(self) -> CommitStatus:
        return self._round(1)

    @actor
    def round2(self) -> CommitStatus:
        return self._round(2)

    @actor
    def round3(self) -> CommitStatus:
        return self._round(3)

    def observe(self) -> dict[str, object]:
        return versioned_state(self.session)

    def invariants(self):
        _version, history = self.session.snapshot()
        yield "history is whole pairs", is_whole_pairs(history)
        yield "history starts with a question", bool(history) and history[0].role == "user"
