"""Measure what moving the network call out of the lock buys on one session, over real HTTP on loopback.

A local server answers every chat-completions POST after a fixed delay. N threads then ask at once on *one*
session, twice:

(a) ``TransactionalChat.ask``: the session's lock is held across the request, so the N requests run one after
    another and every one of them commits;
(b) ``VersionedSession``: begin, send outside the lock, commit. The requests overlap, but they all began on the
    same version, so the first commit wins and the others come back STALE.

It prints wall time, commits per second, the ratio, and the share of STALE results. It is a script, not a test: the
numbers depend on the machine. It talks to 127.0.0.1 only and stops by itself (every request has a deadline and
every thread is joined with a timeout).

Run from the repository root: ``python -m bench.bench_live_concurrency`` (or ``.venv/bin/python
bench/bench_live_concurrency.py`` after ``pip install -e .``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lab.sessions.transactional import TransactionalChat
from lab.sessions.versioned import VersionedSession
from lab.transport.contract import TransportFailure
from lab.transport.http import HttpTransport

_KEY = "bench-key-not-secret"
_JOIN_SECONDS = 20.0  # for all threads of one round together


@dataclass(frozen=True)
class Round:
    """One measured run: how long N concurrent asks took and how each ended."""

    seconds: float
    statuses: Counter[str]

    @property
    def commits(self) -> int:
        """How many asks changed the session."""
        return self.statuses["COMMITTED"]

    @property
    def commits_per_second(self) -> float:
        """Committed pairs per second of wall time."""
        return self.commits / self.seconds


class _DelayedServer(ThreadingHTTPServer):
    request_queue_size = 128  # all N connections arrive at once; the default backlog of 5 would add SYN retries
    delay = 0.05


class _Handler(BaseHTTPRequestHandler):
    server: _DelayedServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        question = json.loads(body)["messages"][-1]["content"]
        time.sleep(self.server.delay)  # the model's thinking time, the same for every request
        choice = {"message": {"role": "assistant", "content": f"answer to {question}"}, "finish_reason": "stop"}
        payload = json.dumps({"choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet; the benchmark prints its own numbers."""


def run_transactional(transport: HttpTransport, threads: int) -> Round:
    """N threads call ``ask`` on one TransactionalChat; its lock serializes them."""
    chat = TransactionalChat(transport)
    return _race(threads, lambda index: str(chat.ask(f"question {index}").status))


def run_versioned(transport: HttpTransport, threads: int) -> Round:
    """N threads begin, send outside the lock and commit on one VersionedSession; no one re-requests on STALE."""
    session = VersionedSession("bench")

    def ask(index: int) -> str:
        ticket = session.begin(f"r{index}", f"question {index}")
        try:
            reply = transport.send(ticket.to_request())
        except TransportFailure as failure:
            return str(failure.kind)
        return str(session.commit(ticket, reply.content, reply.finish_reason))

    return _race(threads, ask)


def _race(threads: int, ask: Callable[[int], str]) -> Round:
    """Start ``threads`` asks at the same moment (a barrier) and time them until the last one ends."""
    barrier = threading.Barrier(threads + 1)
    statuses: list[str] = []
    guard = threading.Lock()

    def actor(index: int) -> None:
        barrier.wait()
        status = ask(index)
        with guard:
            statuses.append(status)

    workers = [threading.Thread(target=actor, args=(index,), daemon=True) for index in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    started = time.perf_counter()
    for worker in workers:
        worker.join(timeout=max(0.0, started + _JOIN_SECONDS - time.perf_counter()))
    seconds = time.perf_counter() - started
    if any(worker.is_alive() for worker in workers):
        raise SystemExit(f"a round was still running after {_JOIN_SECONDS:g} s; giving up")
    return Round(seconds, Counter(statuses))


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print the numbers; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--threads", type=int, default=16, help="concurrent asks on one session (default 16)")
    parser.add_argument("--delay-ms", type=int, default=50, help="server delay per request (default 50)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each; the median is reported (default 5)")
    args = parser.parse_args(argv)
    if not (1 <= args.threads <= 64 and 0 <= args.delay_ms <= 1000 and 1 <= args.rounds <= 20):
        parser.error("keep --threads in 1..64, --delay-ms in 0..1000 and --rounds in 1..20")
    serialized = args.threads * args.delay_ms * args.rounds / 1000
    if serialized > 20:
        parser.error(f"the transactional rounds alone would take about {serialized:g} s; keep them under 20 s")

    server = _DelayedServer(("127.0.0.1", 0), _Handler)
    server.delay = args.delay_ms / 1000
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    try:
        transport = HttpTransport(f"http://127.0.0.1:{server.server_address[1]}/v1", _KEY, deadline=5.0)
        run_versioned(transport, 2)  # warm-up: imports, first connection
        transactional = [run_transactional(transport, args.threads) for _ in range(args.rounds)]
        versioned = [run_versioned(transport, args.threads) for _ in range(args.rounds)]
    finally:
        server.shutdown()
        server.server_close()

    print(
        f"{args.threads} concurrent asks on one session, server delay {args.delay_ms} ms, loopback HTTP,"
        f" median of {args.rounds} rounds (Python {sys.version.split()[0]})"
    )
    for name, rounds in (
        ("transactional (lock held across send)", transactional),
        ("versioned (send outside the lock)", versioned),
    ):
        _print(name, rounds)
    wall_ratio = _median(transactional, "seconds") / _median(versioned, "seconds")
    rate_ratio = _median(versioned, "commits_per_second") / _median(transactional, "commits_per_second")
    stale = sum(r.statuses["STALE"] for r in versioned) / (args.threads * args.rounds)
    print(f"wall time ratio transactional/versioned: {wall_ratio:.1f}x")
    print(f"commits/s ratio versioned/transactional: {rate_ratio:.2f}x")
    print(f"STALE share of versioned results: {stale:.0%}")
    return 0


def _print(name: str, rounds: list[Round]) -> None:
    statuses = sum((r.statuses for r in rounds), Counter[str]())
    outcome = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
    print(
        f"  {name:40} wall {_median(rounds, 'seconds') * 1000:7.1f} ms"
        f"  commits {_median(rounds, 'commits'):5.1f}"
        f"  commits/s {_median(rounds, 'commits_per_second'):7.1f}  [{outcome}]"
    )


def _median(rounds: list[Round], field: str) -> float:
    return float(statistics.median(getattr(r, field) for r in rounds))


if __name__ == "__main__":
    sys.exit(main())
