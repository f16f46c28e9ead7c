"""The floor every thread-based scheduler is measured against: a raw two-thread threading.Event handoff."""

from __future__ import annotations

import threading
import time


def event_ping_pong(handoffs: int) -> float:
    """Seconds per handoff between two raw threads passing control with two threading.Events."""
    ping, pong = threading.Event(), threading.Event()
    rounds = max(handoffs // 2, 1)

    def other() -> None:
        for _ in range(rounds):
            ping.wait()
            ping.clear()
            pong.set()

    thread = threading.Thread(target=other)
    thread.start()
    begun = time.perf_counter()
    for _ in range(rounds):
        ping.set()
        pong.wait()
        pong.clear()
    elapsed = time.perf_counter() - begun
    thread.join()
    return elapsed / (2 * rounds)
