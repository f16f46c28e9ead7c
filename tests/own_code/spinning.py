"""Spin waits: an actor loops on a flag another actor sets. Real thread schedulers are fair, so the loop ends; the
lab's is too (``lab.engine.core._handoff.FAIR_STREAK``), and a run whose spinner waits for nobody ends HUNG."""

from __future__ import annotations


class Flag:
    def __init__(self) -> None:
        self.ready = 0
        self.data = 0

    def publish(self) -> None:
        self.data = 1
        self.ready = 1

    def publish_too_early(self) -> None:
        self.ready = 1
        self.data = 1

    def consume(self) -> int:
        while self.ready == 0:
            pass
        if self.data != 1:
            raise AssertionError(f"saw the flag before the data: data={self.data}")
        return self.data
