"""N requests race on one versioned session: no two answers may be committed on the same version.

Each requester begins, asks its scripted model and commits, with nothing ordering them (race_two_requests with up to
four requesters). Used by ``bench/bench_reduction.py`` to see how exploration grows with the number of actors; not a
lesson of its own.
"""

from lab import CommitStatus, Reply, Scenario, VersionedSession, acceptable, actor, forbidden


class ManyRequests(Scenario):
    source = "article 003, sections 1-2, with more requesters"
    outcomes = (
        acceptable("every committed answer was built on the version it replaced", same_version=False),
        forbidden("two answers built on one version were both committed", same_version=True),
    )

    def setup(self) -> None:
        self.session = VersionedSession("s1", lock=self.lab.lock("s1.lock"), probe=self.lab.probe("s1"))
        self.models = {
            name: self.lab.transport(f"{name}_model", [Reply(f"{name} answer")]) for name in ("r1", "r2", "r3", "r4")
        }
        self.committed: dict[str, int] = {}

    def _request(self, who: str) -> CommitStatus:
        ticket = self.session.begin(f"id-{who}", f"{who} question")
        reply = self.models[who].send(ticket.to_request())
        status = self.session.commit(ticket, reply.content, reply.finish_reason)
        if status is CommitStatus.COMMITTED:
            self.committed[who] = ticket.version
        return status

    @actor
    def r1(self) -> CommitStatus:
        return self._request("r1")

    @actor
    def r2(self) -> CommitStatus:
        return self._request("r2")

    def r3(self) -> CommitStatus:
        return self._request("r3")

    def r4(self) -> CommitStatus:
        return self._request("r4")

    def observe(self) -> dict[str, object]:
        versions = list(self.committed.values())
        return {"same_version": len(versions) != len(set(versions))}
