"""MUTANT: two worker processes, each with its own lock, both pass the version check and both write: a lost update.

Article 003 checks the version and writes the history under one lock, and within one process that is enough. Run
two worker processes over one SQLite session and each has its own lock: the locks order nobody's writes but their
own. InProcessLockSession reads the row, checks the version under its lock, then writes what it decided without a
compare-and-set. Here both workers pass the check on version 0 (each is held right after its check until the
other has checked too), then both write `version = 1` and their own history. Both are told COMMITTED; the history
keeps only the answer written last; the version says one commit. cas_commit_two_workers shows the fix, and the
explorer finding this schedule.
"""

from lab import CommitStatus, InProcessLockSession, Reply, Scenario, SqliteStore, actor, only, scratch_database


class TwoWorkersInProcessLock(Scenario):
    source = "article 003, section 2 (the check and the write under one lock), across processes"
    mutant = True
    outcomes = only(worker_a="COMMITTED", worker_b="COMMITTED", store="sqlite:chat.db", version=1, answers_kept=1)
    expect_broken = ("the version counts the COMMITTED answers", "every COMMITTED answer is in the history")

    def setup(self) -> None:
        path = scratch_database("in-process-lock")
        self.sessions = {
            who: self.lab.wire(InProcessLockSession, "s1", store=SqliteStore(path, name="chat.db"), name=who)
            for who in self.actors  # two processes: a connection and a lock each
        }
        self.models = {who: self.lab.transport(f"{who}.model", [Reply(f"{who} answer")]) for who in self.actors}
        both_checked = self.lab.latch("both-checked", 2)
        for who in self.actors:  # each passes the check on version 0, then waits until the other has passed it too
            self.lab.signal(who, at="commit:checked", latch=both_checked)
            self.lab.hold(who, at="commit:checked", until=both_checked)
        self.statuses = {}

    def _request(self, who: str) -> CommitStatus:
        session = self.sessions[who]
        ticket = session.begin(f"r-{who}", f"{who} question")
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
        yield "the version counts the COMMITTED answers", version == len(committed)
        yield "every COMMITTED answer is in the history", all(f"{who} answer" in kept for who in committed)
