"""The probe points that the code under test announces, read from its source without running it.

``self.lab.hold("slow", at="commit:chekced", until=latch)`` names a point no session ever reaches, so the hold
would never fire and the scenario would quietly teach the wrong order. A run cannot tell a misspelt point from a
point this schedule happens not to reach, so the check is static: every string literal passed to a probe call
(``self._probe("commit:enter")``, ``probe("x")``) in the files under test is a known point, and ``hold()`` or
``signal()`` at any other name is a :class:`~lab.errors.ScenarioError` that lists the known ones.

The files read are those of :func:`lab.scenarios.runner.line_files` (the sessions, the mutants, the scenario's own
file and its neighbours, ``line_modules``), the scripted transport, and the file of every scenario class in the
scenario's ancestry (the race file behind a pinned scenario), less the lab's own machinery (``lab/scenarios``,
``lab/engine``, ``lab/evidence``), which makes probe hooks but announces no point. A probe call whose argument is
not a literal (``self._probe(point)``) makes its file's points unknowable; then nothing is rejected, because a
false alarm on a correct scenario would be worse than the silence this check exists to end.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import os
import re
import sys
import weakref
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lab.errors import ScenarioError

TRANSPORT_MODULES = ("lab.transport.scripted",)
"""Modules outside the sessions that announce probe points of their own (``transport:send``)."""

_LAB = Path(os.path.realpath(__file__)).parent.parent
_MACHINERY = ("scenarios", "engine", "evidence")
"""The lab's own machinery is never code under test: ``Lab.transport`` calls ``self.probe(name)`` to make a hook,
which is no announcement, and the sessions' points are announced in ``lab/sessions``, ``lab/mutants.py`` and
``lab/transport``."""

_BY_CLASS: weakref.WeakKeyDictionary[type, KnownPoints] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class KnownPoints:
    """The probe points some files announce: exact names, f-string patterns, and whether anything was unreadable."""

    names: frozenset[str]
    patterns: tuple[str, ...] = ()
    open: bool = False

    def allows(self, point: str) -> bool:
        """True when ``point`` may be announced by the code these points were read from."""
        return self.open or point in self.names or any(re.fullmatch(p, point) for p in self.patterns)

    def __or__(self, other: KnownPoints) -> KnownPoints:
        return KnownPoints(
            self.names | other.names, tuple(dict.fromkeys((*self.patterns, *other.patterns))), self.open or other.open
        )


def points_in_source(text: str) -> KnownPoints:
    """The probe points announced in Python source ``text`` (see the module docstring for what counts)."""
    if text.isascii() and "probe" not in text.lower():
        # No name in it can end in "probe" (non-ASCII identifiers are normalized, so those files are parsed):
        # no probe call, nothing to parse. Most scenario files, read by every worker that holds or signals.
        return KnownPoints(frozenset())
    names: set[str] = set()
    patterns: list[str] = []
    unreadable = False
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call) or not node.args or not _is_probe_call(node.func):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            names.add(arg.value)
        elif isinstance(arg, ast.JoinedStr):
            patterns.append(_pattern(arg))
        else:
            unreadable = True
    return KnownPoints(frozenset(names), tuple(patterns), unreadable)


def points_in_file(path: str | Path) -> KnownPoints:
    """The probe points announced in the file ``path``; a file that cannot be read or parsed counts as open."""
    file = Path(path)
    try:
        stat = file.stat()
    except OSError:
        return KnownPoints(frozenset(), (), True)
    return _points_cached(str(file), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _points_cached(path: str, _mtime_ns: int, _size: int) -> KnownPoints:
    """Parsed once per file version: an exploration runs ``setup()`` (and so every hold) thousands of times."""
    try:
        return points_in_source(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return KnownPoints(frozenset(), (), True)


def scenario_files(cls: type) -> list[str]:
    """The files whose probe calls count for scenario class ``cls``: the files under test and its own ancestry."""
    from lab.scenarios.runner import line_files  # runner imports base, which calls this module: import late

    files = list(line_files(cls))
    for module in TRANSPORT_MODULES:
        origin = getattr(sys.modules.get(module), "__file__", None)
        if origin:
            files.append(os.path.realpath(origin))
    for klass in cls.__mro__:
        if klass.__module__.startswith("lab.") or klass is object:
            continue
        try:
            files.append(os.path.realpath(inspect.getfile(klass)))
        except (TypeError, OSError):
            continue
    machinery = [str(_LAB / part) + os.sep for part in _MACHINERY]
    return [file for file in dict.fromkeys(files) if not any(file.startswith(m) for m in machinery)]


def known_points(cls: type) -> KnownPoints:
    """Every probe point that code under test for scenario class ``cls`` may announce.

    Kept per class: the code that runs is the code imported once, and an edited scenario file loads as a new
    class, so the answer cannot go stale, and an exploration's thousands of ``setup()`` calls read nothing again.
    """
    found = _BY_CLASS.get(cls)
    if found is None:
        found = KnownPoints(frozenset())
        for file in scenario_files(cls):
            found = found | points_in_file(file)
        _BY_CLASS[cls] = found
    return found


def check_point(what: str, actor: str, point: str, cls: type) -> None:
    """Raise a one-line :class:`ScenarioError` if no code under test for ``cls`` announces ``point``."""
    known = known_points(cls)
    if known.allows(point):
        return
    listed = sorted(known.names)
    close = difflib.get_close_matches(point, listed, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ScenarioError(
        f"{what}({actor!r}, at={point!r}): no code under test announces probe point {point!r}; {hint}"
        f"known points: {', '.join(listed) or 'none'} (a session of your own: list its module in line_modules)"
    )


def _is_probe_call(func: ast.expr) -> bool:
    """``probe(...)``, ``self._probe(...)``, ``hook(...)`` named like a probe, but not ``lab.probe(obj)``.

    ``self.lab.probe("s1")`` makes a hook for the object ``s1``; its argument is an object name, not a point.
    """
    if isinstance(func, ast.Name):
        return func.id.lower().endswith("probe")
    if isinstance(func, ast.Attribute):
        owner = func.value
        is_lab = (isinstance(owner, ast.Name) and owner.id == "lab") or (
            isinstance(owner, ast.Attribute) and owner.attr == "lab"
        )
        return func.attr.lower().endswith("probe") and not is_lab
    if isinstance(func, ast.Call):  # self.lab.probe("obj")("point"): the hook called at once
        inner = func.func
        return isinstance(inner, ast.Attribute) and inner.attr == "probe"
    return False


def _pattern(node: ast.JoinedStr) -> str:
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(re.escape(value.value))
        else:
            parts.append(".+")
    return "".join(parts)
