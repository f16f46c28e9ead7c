"""Race: two worker processes commit to one SQLite session; the compare-and-set lets one answer per version in.

Across processes an in-process lock protects nothing: each worker has its own session object, its own lock and its
own database connection, and only the database is shared. So the version check moves into the write:
`UPDATE ... SET version = version + 1 WHERE key = ? AND version = ?`. Both workers begin on version 0 (a barrier
says so); then nothing orders them, and the explorer tries every interleaving of their reads and writes. When one
commits before the other even reads, the other's check says STALE; when both passed the check on version 0, the
second write finds the version moved, writes nothing, reads again and says STALE. Either way: one COMMITTED, one
STALE, version 1. Over the mutant InProcessLockSession (check, then write without compare-and-set) the explorer
finds the schedule where both are COMMITTED and one answer is lost.
"""

from lab import (
    DURABLE_VARIANTS,
    CommitStatus,
    Reply,
    Scenario,
    SqliteStore,
    acceptable,
    actor,
    forbidden,
    is_whole_pairs,
    scratch_database,
)


class CasCommitTwoWorkers(Scenario):
    source = "article 003, sections 1-2, with the version check moved into the database"
    variants = DURABLE_VARIANTS
    outcomes = (
        acceptable(
            "worker_a committed first; worker_b's answer, built on the same version, is STALE",
            worker_a="COMMITTED",
            worker_b="STALE",
            version=1,
            answers_kept=1,
        ),
        acceptable(
            "worker_b committed first; worker_a's answer, built on the same version, is STALE",
            worker_a="STALE",
            worker_b="COMMITTED",
            version=1,
            answers_kept=1,
        ),
        forbidden(
            "both answers built on version 0 were COMMITTED: the second write replaced the first (a lost update)",
            worker_a="COMMITTED",
            worker_b="COMMITTED",
        ),
    )

    def setup(self) -> None:
        path = scratch_database("cas")
        self.sessions = {
            who: self.lab.wire(self.variant, "s1", store=SqliteStore(path, name="chat.db"), name=who)
            for who in self.actors  # two processes: a connection and a lock each
        }
        self.models = {who: self.lab.transport(f"{who}.model", [Reply(f"{who} answer")]) for who in self.actors}
        self.both_began = self.lab.barrier("both-began", 2)
        self.statuses = {}

    def _request(self, who: str) -> CommitStatus:
        session = self.sessions[who]
        ticket = session.begin(f"r-{who}", f"{who} question")
        self.both_began.wait()
        reply = self.models[who].send(ticket.to_request())
        self.statuses[who] = status = session.commit(ticket, reply.content, reply.finish_reason)
        return status

    @actor
    def worker_a(self) -> CommitStatus:
        return self._request("worker_a")

    @actor
    def worker_b(self) -> CommitStatus:
        return self._request("worker_b")

    def observe(self) -> dict[str, object]:
        version, history = self.sessions["worker_a"].snapshot()
        kept = [m.content for m in history if m.role == "assistant"]
        return {"store": self.sessions["worker_a"].store_name, "version": version, "answers_kept": len(kept)}

    def invariants(self):
        version, history = self.sessions["worker_a"].snapshot()
        committed = [who for who, status in self.statuses.items() if status is CommitStatus.COMMITTED]
        kept = {m.content for m in history if m.role == "assistant"}
        yield "history is whole pairs", is_whole_pairs(history)
        yield "the version counts the COMMITTED answers", version == len(committed)
        yield "every COMMITTED answer is in the history", all(f"{who} answer" in kept for who in committed)
