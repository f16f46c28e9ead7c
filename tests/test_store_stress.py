"""Real processes, real databases: several OS processes commit to one session, 20 times over, on SQLite and
PostgreSQL. Marked ``stress`` (the default run deselects it; ``.ci/run`` runs ``pytest -m stress``).

Each round starts a fresh session and forks ``WORKERS`` processes. Each worker, with its own connection, asks
``REQUESTS`` questions: begin, a short random pause (the model), commit; every fifth COMMITTED request is delivered
again (a retry), which must be DUPLICATE. Afterwards the row must hold exactly what was COMMITTED: the version
equals the number of COMMITTED, the history is whole pairs holding each committed answer once and nothing else, the
receipts are the committed request ids, and no request id was committed twice.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from lab.messages import Role, is_whole_pairs
from lab.sessions.stores import Store, open_store
from lab.sessions.stores.sqlite import SqliteStore
from lab.sessions.versioned import CommitStatus, VersionedSession

ROUNDS = 20
WORKERS = 4
REQUESTS = 30
_BIG = 1_000_000  # keep every pair and every receipt, so that nothing lost can hide behind trimming


def _connect(spec: str) -> Store:
    if spec.startswith("sqlite:"):
        return SqliteStore(spec.removeprefix("sqlite:"), lock_timeout=30.0)
    store = open_store(spec)
    assert store is not None
    return store


def _worker(spec: str, name: str, number: int, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """One worker process: its own connection, REQUESTS requests, retries of some committed ones."""
    rng = random.Random(number)
    session = VersionedSession(name, store=_connect(spec), max_rounds=_BIG, receipt_capacity=_BIG)
    outcomes: list[tuple[str, str, str]] = []
    for i in range(REQUESTS):
        request_id, question, answer = f"w{number}-r{i}", f"q{number}-{i}", f"a{number}-{i}"
        ticket = session.begin(request_id, question)
        time.sleep(rng.random() / 1000)  # the model answers
        status = session.commit(ticket, answer, "stop")
        outcomes.append((request_id, answer, status.value))
        if status is CommitStatus.COMMITTED and i % 5 == 0:
            outcomes.append((request_id, answer, "retry:" + session.commit(ticket, answer, "stop").value))
    results.put(outcomes)


def _round(spec: str, name: str) -> tuple[int, int]:
    """One round; returns (COMMITTED, STALE) counts after checking everything the module docstring promises."""
    context = multiprocessing.get_context("fork")
    results: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
    _connect(spec).close()  # the schema exists before the workers race to open the session
    workers = [context.Process(target=_worker, args=(spec, name, n, results)) for n in range(WORKERS)]
    for worker in workers:
        worker.start()
    outcomes = [row for _ in workers for row in results.get(timeout=120)]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    committed = [(rid, answer) for rid, answer, status in outcomes if status == "COMMITTED"]
    retries = {status for _rid, _answer, status in outcomes if status.startswith("retry:")}
    firsts = Counter(status for _rid, _answer, status in outcomes if not status.startswith("retry:"))
    assert set(firsts) <= {"COMMITTED", "STALE"} and sum(firsts.values()) == WORKERS * REQUESTS
    assert retries <= {"retry:DUPLICATE"}, retries
    session = VersionedSession(name, store=_connect(spec), max_rounds=_BIG, receipt_capacity=_BIG)
    version, history = session.snapshot()
    answers = [m.content for m in history if m.role is Role.ASSISTANT]
    assert version == len(committed) == len(history) // 2
    assert is_whole_pairs(history)
    assert sorted(answers) == sorted(answer for _rid, answer in committed)  # nothing lost, nothing twice
    assert sorted(session.receipt_ids) == sorted(rid for rid, _answer in committed)
    assert len({rid for rid, _answer in committed}) == len(committed)  # no request id committed twice
    return len(committed), firsts["STALE"]


@pytest.mark.stress
@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_processes_commit_to_one_session(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """20 rounds of WORKERS processes x REQUESTS commits on one session: every round whole and consistent."""
    spec = f"sqlite:{tmp_path / 'stress.db'}" if kind == "sqlite" else request.getfixturevalue("postgres_url")
    totals = Counter[str]()
    for number in range(ROUNDS):
        committed, stale = _round(spec, f"stress-{kind}-{number}-{time.time_ns()}")
        totals.update(committed=committed, stale=stale, rounds=1)
        assert committed >= 1
    assert totals["rounds"] == ROUNDS
    assert totals["stale"] > 0, "the workers never raced: the test would prove nothing"
