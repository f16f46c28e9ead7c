"""Race: the same reply delivered twice, in any order. The second delivery must be a DUPLICATE, never STALE.

Article 003, section 3. One request is begun in setup; `first` and `retry` both deliver its answer, with nothing
ordering them. Whichever commits first is COMMITTED; the other finds the receipt and is a DUPLICATE. A session
that compares versions before it looks at receipts calls the second delivery STALE, and a caller told "your answer
is out of date" may ask the model again for an answer that is already in the history: FORBIDDEN.
"""

from lab import VERSIONED_VARIANTS, CommitStatus, Scenario, acceptable, actor, forbidden


class RaceDuplicateDelivery(Scenario):
    source = "article 003, section 3"
    variants = VERSIONED_VARIANTS
    outcomes = (
        acceptable(
            "first delivery committed, the retry found its receipt", first="COMMITTED", retry="DUPLICATE", version=1
        ),
        acceptable(
            "the retry happened to arrive first; the other delivery is the duplicate",
            first="DUPLICATE",
            retry="COMMITTED",
            version=1,
        ),
        forbidden("a delivery of an already committed request was called STALE", first="STALE"),
        forbidden("a delivery of an already committed request was called STALE", retry="STALE"),
    )

    def setup(self) -> None:
        self.session = self.lab.wire(self.variant, "s1")
        self.ticket = self.session.begin("r1", "question")

    @actor
    def first(self) -> CommitStatus:
        return self.session.commit(self.ticket, "answer", "stop")

    @actor
    def retry(self) -> CommitStatus:
        return self.session.commit(self.ticket, "answer", "stop")

    def observe(self) -> dict[str, object]:
        return {"version": self.session.version}
