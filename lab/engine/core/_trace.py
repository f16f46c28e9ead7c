"""Trace events: what the actors did, in the order they did it.

A trace is the lab's product, so it is built to be byte-for-byte repeatable: every field is a plain string or
integer chosen by the scenario or the engine (actor names, object names, operation names), never a clock, a thread
id, an address or the iteration order of a set. Details are written with sorted keys. Timings live elsewhere.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Json = Any  # a value json.dumps accepts: str, int, bool, None, list, dict with str keys


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One step: ``actor`` did ``op`` on ``obj``, with ``detail``."""

    step: int
    actor: str
    op: str
    obj: str = ""
    detail: Mapping[str, Json] = field(default_factory=dict)

    def to_json(self) -> dict[str, Json]:
        """The event as a JSON object with a fixed key order."""
        return {"step": self.step, "actor": self.actor, "op": self.op, "obj": self.obj, "detail": dict(self.detail)}

    def to_line(self) -> str:
        """One JSON Lines line (without the newline)."""
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=False, separators=(",", ":"), default=_refuse)

    def describe(self) -> str:
        """A human line: ``slow  commit:enter  s1``, ``fast  end -> COMMITTED``."""
        text = self.op if not self.obj else f"{self.op} {self.obj}"
        extra = ", ".join(f"{key}={value}" for key, value in sorted(self.detail.items()) if key != "outcome")
        if "outcome" in self.detail:
            text += f" -> {self.detail['outcome']}"
        if extra:
            text += f" ({extra})"
        return text


def _refuse(value: object) -> Json:
    # json.dumps's ``default`` hook signals "not serialisable" with TypeError; callers catch it as json's own.
    raise TypeError(f"trace details must be plain JSON values, not {type(value).__name__}")


def sorted_detail(detail: Mapping[str, Json]) -> dict[str, Json]:
    """``detail`` with its keys in sorted order, so the written line never depends on call-site order."""
    return {key: detail[key] for key in sorted(detail)}


def encode_trace(events: Iterable[TraceEvent]) -> bytes:
    """The trace as JSON Lines bytes: one event per line, each line ending in a newline."""
    return "".join(event.to_line() + "\n" for event in events).encode("utf-8")


def trace_digest(events: Iterable[TraceEvent]) -> str:
    """SHA-256 of the encoded trace: equal digests mean byte-identical traces."""
    return hashlib.sha256(encode_trace(events)).hexdigest()
