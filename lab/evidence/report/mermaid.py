"""A trace as a Mermaid ``sequenceDiagram``, the picture GitHub draws from ``report.md``.

Participants are the actors, then the objects they touch in order of first use (``slow->>s1.lock:
lock.acquire``). Wake-ups (a latch opening, a barrier passing, a hold ending) point back at the actor; notes,
starts, ends and the lab's own events (deadlock, hang, final state) are notes. Runs of probe points one actor
passes on one object fold into one arrow. Participants get short ids (``a0``, ``o1``) so that no name can clash
with a Mermaid keyword, and every text is escaped with Mermaid's entity codes: its lexer ends a message at ``;``
or ``#``, and quotes and angle brackets are HTML to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence

from lab.engine.trace import Json, TraceEvent

MAX_EVENTS = 250
"""Events drawn at most; a longer trace ends with a note pointing at ``trace.jsonl``."""
MAX_TEXT = 160
_WAKE_UPS = frozenset({"latch.open", "barrier.pass", "unhold"})
_ESCAPES = {char: f"#{ord(char)};" for char in '#;"<>&%'}


def sequence_diagram(events: Sequence[TraceEvent], actors: Sequence[str]) -> str:
    """The Mermaid source (without the code fence) for ``events``; ``actors`` fixes the participants' order."""
    ids = _participants(events, actors)
    lines = ["sequenceDiagram"]
    lines += [f"    participant {ident} as {_escape(name)}" for (kind, name), ident in ids.items() if kind == "actor"]
    lines += [f"    participant {ident} as {_escape(name)}" for (kind, name), ident in ids.items() if kind == "object"]
    everyone = [ident for (kind, _), ident in ids.items() if kind == "actor"]
    span = everyone[0] if len(everyone) == 1 else f"{everyone[0]},{everyone[-1]}"
    for group in _fold(events[:MAX_EVENTS]):
        lines.append("    " + _statement(group, ids, span))
    if len(events) > MAX_EVENTS:
        lines.append(f"    Note over {span}: {len(events) - MAX_EVENTS} more events, see trace.jsonl")
    return "\n".join(lines) + "\n"


def _participants(events: Sequence[TraceEvent], actors: Sequence[str]) -> dict[tuple[str, str], str]:
    names = list(dict.fromkeys([*actors, *(e.actor for e in events if e.actor != "lab")]))
    ids = {("actor", name): f"a{index}" for index, name in enumerate(names or ["lab"])}
    objects = dict.fromkeys(e.obj for e in events if e.obj)
    ids.update({("object", name): f"o{index}" for index, name in enumerate(objects)})
    return ids


def _fold(events: Iterable[TraceEvent]) -> Iterator[list[TraceEvent]]:
    group: list[TraceEvent] = []
    for event in events:
        if (
            group
            and event.op == "probe"
            and group[-1].op == "probe"
            and (event.actor, event.obj) == (group[-1].actor, group[-1].obj)
        ):
            group.append(event)
            continue
        if group:
            yield group
        group = [event]
    if group:
        yield group


def _statement(group: list[TraceEvent], ids: Mapping[tuple[str, str], str], span: str) -> str:
    first = group[0]
    if first.actor == "lab" or ("actor", first.actor) not in ids:
        return f"Note over {span}: {_escape(_lab_text(first))}"
    actor = ids[("actor", first.actor)]
    if first.op == "probe":
        points = ", ".join(str(event.detail.get("point", "?")) for event in group)
        return f"{actor}->>{ids[('object', first.obj)]}: {_escape('probe ' + points)}"
    if first.op == "note":
        text = str(first.detail.get("text", ""))
        return f"Note over {actor}: {_escape(_with_detail(text, first.detail, skip='text'))}"
    if first.op == "end":
        return f"Note over {actor}: {_escape('end -> ' + str(first.detail.get('outcome', '?')))}"
    if first.op == "error":
        return f"Note over {actor}: {_escape('raised ' + str(first.detail.get('type', '?')))}"
    text = _escape(_with_detail(first.op, first.detail))
    if not first.obj:
        return f"Note over {actor}: {text}"
    target = ids[("object", first.obj)]
    return f"{target}-->>{actor}: {text}" if first.op in _WAKE_UPS else f"{actor}->>{target}: {text}"


def _lab_text(event: TraceEvent) -> str:
    if event.op == "deadlock":
        blocked = event.detail.get("blocked", [])
        waits = "; ".join(
            f"{pair[0]} waits for {pair[1]}" for pair in blocked if isinstance(pair, list) and len(pair) == 2
        )
        return f"DEADLOCK: {waits}" if waits else "DEADLOCK"
    if event.op == "final":
        return "final state " + _value(dict(event.detail))
    return _with_detail(event.op.upper() if event.op == "hang" else event.op, event.detail)


def _with_detail(text: str, detail: Mapping[str, Json], skip: str = "") -> str:
    extra = ", ".join(f"{key}={_value(value)}" for key, value in sorted(detail.items()) if key != skip)
    return f"{text} ({extra})" if extra else text


def _value(value: Json) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _escape(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 3] + "..."
    return "".join(_ESCAPES.get(char, char) for char in text)
