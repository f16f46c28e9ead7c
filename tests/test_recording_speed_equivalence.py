"""The recording's shortcuts change its cost, never what it records.

The functions the rewritten code calls record most accesses inline (no call of :meth:`Recording.access` or
:meth:`Recording.note`: at line granularity on 3.11 every Python call is a trace event), and
:meth:`Recording.name_roots` copies the labels of the modules' walk that it worked out in an earlier run. These
tests hold each shortcut to the answer without it: the same accesses (step, actor, entry, where, locks), in the same
order, with every access sent through ``access``/``note``, and the same labels with the walk's labels made afresh.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import lab.engine.record._active as active
import lab.scenarios.world as runner
from lab.engine.core import Entry, Scheduler
from lab.engine.record import InstrumentedModule, Recording, instrument_module
from tests.test_accesses import _record
from tests.test_atomicity_speed_equivalence import _runs

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the programs import their helpers as tests.soundness._shared

_SOURCE = """
import contextlib
import random
from collections import defaultdict

TOTAL = 0
SHARED = {"a": [1, 2], 3: "x"}


class Plain:
    level = 1

    def __init__(self):
        self.items = []
        self.count = 0

    @property
    def twice(self):
        return self.count * 2


class Seat:
    __slots__ = ("taken",)

    def __init__(self):
        self.taken = []


MODULE_PLAIN = Plain()


def everything(box, seat):
    global TOTAL
    TOTAL = TOTAL + 1
    box.count = box.count + box.level + box.twice
    box.items.append(len(box.items))
    box.items += [isinstance(box, Plain), sorted(box.items, reverse=True)]
    seat.taken.extend(box.items)
    table = {"k": box.items, 2: seat}
    table["j"] = list(table)
    extra = defaultdict(list)
    extra["z"].append(table.get("k"))
    vars(box)["count"] = getattr(box, "count") + 1
    setattr(box, "flag", hasattr(seat, "taken"))
    fresh = [table, extra]
    for part in fresh:
        if part:
            TOTAL += len(part)
    put = table.__setitem__
    put("w", dict(inner=fresh))
    size = table.__len__
    size()
    SHARED["a"].append(random.random() < 2)
    MODULE_PLAIN.items.append(SHARED[3].strip())
    with contextlib.nullcontext(box):
        pass

    def bump():
        nonlocal fresh
        fresh = fresh + [box]
        return fresh

    bump()
    return str(TOTAL) + repr(box.items)
"""


class _NoPoints:
    """A scheduler seen through a recording that sends every access through ``access``: an opaque call's writes are
    recorded without the scheduling point ``schedules`` would ask for."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def access_all(
        self, entries: list[Entry], where: tuple[str, int], *, schedule: bool, one_operation: bool = True
    ) -> None:
        self._scheduler.access_all(entries, where, schedule=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._scheduler, name)


class _Plain(Recording):
    """A recording without the inline paths: ``schedules`` is set, so that every function of the runtime steps
    aside to :meth:`access` and :meth:`note`, which record as the inline paths do and schedule nothing."""

    def __init__(self, scheduler: Scheduler, **options: Any) -> None:
        super().__init__(scheduler, **options)
        assert not self.schedules, "the plain recording stands for probe and line granularity only"
        self.schedules = True
        self.scheduler = _NoPoints(scheduler)  # type: ignore[assignment]

    def access(self, obj: object, key: str, mode: str, where: tuple[str, int], hint: str = "") -> None:
        thing = self._things.get(id(obj))
        if thing is None:
            thing = "obj:" + self.label(obj, hint)
        self._steps.accessed((thing, key, mode), where)

    def note(self, entry: Entry, where: tuple[str, int], *, schedule: bool = True) -> None:
        self._steps.accessed(entry, where)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, InstrumentedModule]]:
    folder = tmp_path_factory.mktemp("program")
    (folder / "recording_speed_program.py").write_text(textwrap.dedent(_SOURCE), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("recording_speed_program")
        yield module, instrument_module("recording_speed_program")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("recording_speed_program", None)


@pytest.mark.timeout(30)
def test_the_inline_paths_record_what_access_and_note_record(program: tuple[ModuleType, InstrumentedModule]) -> None:
    module, _ = program
    fast = _record(program, lambda: module.everything(module.Plain(), module.Seat()))
    vars(module)["TOTAL"] = 0  # the program's global, as the first run found it
    plain = _record(program, lambda: module.everything(module.Plain(), module.Seat()), _Plain)
    assert len(fast) > 40
    assert fast == plain


@pytest.mark.timeout(30)
def test_the_modules_labels_copied_are_the_labels_made_afresh(
    program: tuple[ModuleType, InstrumentedModule], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copied while every object the modules' walk found keeps its instance dict; made afresh once one does not."""
    module, _ = program
    root = module.Plain()  # one scenario state for every walk: labels are by identity

    def labels(shortcut: bool) -> tuple[dict[int, str], dict[int, str], set[int], list[int]]:
        recording = Recording(Scheduler(watchdog_seconds=5), every_access_schedules=False, instrumented=set())
        with monkeypatch.context() as patch:
            if not shortcut:
                patch.setattr(Recording, "_keep_kept", lambda self, cached: False)
            recording.name_roots({"self": root}, modules=(module,))
        made = (dict(recording._labels), dict(recording._things), set(recording._instance_dicts))
        # kept alive (the copy keeps the modules' walk strongly, as its cache does) or followed by weak reference
        # (made afresh): either way the identity is this object's for as long as it lives
        followed = set(recording._weak or {}) | {id(owned) for owned in recording._owned.values()}
        alive = sorted({id(obj) for obj in (*recording._alive, *recording._kept)} | followed)
        recording.close()
        return (*made, alive)

    for _ in range(2):  # the first works the copy out, the second copies it
        assert labels(True) == labels(False)
    assert any(name.startswith("recording_speed_program.MODULE_PLAIN") for name in labels(True)[0].values())
    module.MODULE_PLAIN.__dict__ = {"items": [], "count": 1}  # a new instance dict: the copy no longer holds
    assert labels(True) == labels(False)


PROGRAMS = [
    ROOT / "scenarios" / "race_two_requests.py",
    ROOT / "scenarios" / "race_duplicate_delivery.py",
    ROOT / "tests" / "soundness" / "getattr_setattr.py",
    ROOT / "tests" / "soundness" / "slots_seat.py",
    ROOT / "tests" / "soundness" / "nonlocal_counter.py",
    ROOT / "tests" / "soundness" / "helper_outside.py",
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("granularity", ["probe", "line"])
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda path: path.stem)
def test_explorations_record_the_same_without_the_shortcuts(
    path: Path, granularity: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _runs(path, granularity, monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(runner, "Recording", _Plain)
        patch.setattr(Recording, "_keep_kept", lambda self, cached: False)
        plain = _runs(path, granularity, monkeypatch)
    assert [run.accesses for run in fast] == [run.accesses for run in plain]
    assert [run.step_footprints for run in fast] == [run.step_footprints for run in plain]
    assert [run.decisions for run in fast] == [run.decisions for run in plain]
    assert active.recording is None
