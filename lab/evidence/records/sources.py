"""The files that determine a run's behaviour: which they are, their fingerprints, and how two sets differ.

A file's fingerprint is the SHA-256 of its content with line endings normalized to LF (CRLF and lone CR become
LF), so a checkout made with ``core.autocrlf`` fingerprints exactly like the original. The combined digest is the
SHA-256 of the UTF-8 text made of one line ``"<hex>  <path>\\n"`` per file, sorted by path: the same text a
``SHA256SUMS`` of the normalized files would hold.

A run's behaviour files are ``lab/`` and ``scenarios/`` side by side under one root, as in a checkout. An installed
lab with a scenario folder elsewhere gets such a root from :func:`source_root`: a temporary copy of both, so what is
archived, what the self-audit re-executes and what a later audit compares with are laid out exactly as in a checkout.

The modules beside a scenario (``scenarios/helpers.py``, a subpackage ``scenarios/shapes/``) are ``*.py`` files of
``scenarios/`` like the scenarios, so they are archived and fingerprinted with them: the re-execution imports the
archived helpers beside the archived scenario, and an edited helper is drift. :func:`archived_helpers` tells an
audit which of the archived top-level files are helpers rather than scenarios a command selected.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lab.evidence.records.findings import Drift
from lab.evidence.records.layout import SCENARIOS
from lab.evidence.records.safefs import path_problem
from lab.scenarios.helper_modules import helper_stems

PACKAGES = ("lab", "scenarios")
"""Folders whose ``*.py`` files, at any depth, determine behaviour."""
TOP_FILES = ("run.py", "audit.py", "pyproject.toml")
"""Files at the root that determine behaviour."""
NORMALIZATION = "CRLF and CR to LF"


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One behaviour file: its path relative to the root (with ``/``), and its bytes as read."""

    path: str
    data: bytes

    @property
    def digest(self) -> str:
        """The fingerprint: SHA-256 of the content with line endings normalized."""
        return source_digest(self.data)


def normalize(data: bytes) -> bytes:
    """``data`` with CRLF and lone CR turned into LF."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def source_digest(data: bytes) -> str:
    """SHA-256 of ``data`` after line-ending normalization."""
    return hashlib.sha256(normalize(data)).hexdigest()


def combined_digest(digests: Mapping[str, str]) -> str:
    """SHA-256 over the lines ``"<hex>  <path>\\n"``, sorted by path, encoded as UTF-8."""
    text = "".join(f"{digests[path]}  {path}\n" for path in sorted(digests))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def collect(root: Path) -> list[SourceFile]:
    """Read every behaviour file under ``root``, sorted by path; ``__pycache__`` folders are skipped.

    Names that cannot be a module or a safe archive path (control characters, backslashes) are skipped too: Python
    could not import them, and an archive must not hold them.
    """
    return [SourceFile(path, data) for path, data in _read(root, behaviour_paths(root))]


def behaviour_paths(root: Path) -> list[str]:
    """The relative paths of the behaviour files under ``root``, sorted."""
    found = [name for name in TOP_FILES if (root / name).is_file()]
    # Strings and directory entries, not a Path per file: a run lists its checkout twice and its self-audit once.
    # A stack, not recursion: a checkout may be deep. Links to folders are listed as os.walk lists them, not entered.
    base = str(root)
    todo = list(PACKAGES)
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(os.path.join(base, rel)) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            try:
                if entry.is_dir():
                    if entry.name != "__pycache__" and not entry.is_symlink():
                        todo.append(f"{rel}/{entry.name}")
                elif entry.name.endswith(".py") and entry.is_file():
                    found.append(f"{rel}/{entry.name}")
            except OSError:
                continue
    return sorted(path for path in found if not path_problem(path))


def digests(files: Iterable[SourceFile]) -> dict[str, str]:
    """Fingerprint by path."""
    return {file.path: file.digest for file in files}


def document(files: Iterable[SourceFile]) -> dict[str, object]:
    """The content of ``sources.json``."""
    by_path = digests(files)
    return {
        "normalization": NORMALIZATION,
        "combined_sha256": combined_digest(by_path),
        "files": [{"path": path, "sha256": by_path[path]} for path in sorted(by_path)],
    }


def drift(archived: Mapping[str, str], checkout: Path) -> Drift:
    """How the checkout at ``checkout`` differs from the archived fingerprints."""
    current = {path: source_digest(data) for path, data in _read(checkout, behaviour_paths(checkout))}
    return Drift(
        checkout=str(checkout),
        changed=tuple(sorted(p for p in archived.keys() & current.keys() if archived[p] != current[p])),
        added=tuple(sorted(current.keys() - archived.keys())),
        removed=tuple(sorted(archived.keys() - current.keys())),
    )


def archived_helpers(paths: Iterable[str], read: Callable[[str], bytes | None]) -> set[str]:
    """The stems of the archived ``scenarios/*.py`` (among ``paths``, relative to the root) that are helper modules,
    not scenarios, by the rule the run's own listing used (:func:`lab.scenarios.helper_stems`), decided from
    the archived bytes (``read(path)``, ``None`` when unreadable: such a file counts as a scenario)."""
    texts: dict[str, bytes] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        if folder != "scenarios" or not name.endswith(".py") or name.startswith("_"):
            continue
        data = read(path)
        if data is not None:
            texts[name[: -len(".py")]] = data
    key = tuple(sorted(texts.items()))
    if key not in _HELPERS_OF:  # a run asks once for its listing, and its self-audit again of the same bytes
        _HELPERS_OF.clear()
        _HELPERS_OF[key] = frozenset(helper_stems(texts))
    return set(_HELPERS_OF[key])


_HELPERS_OF: dict[tuple[tuple[str, bytes], ...], frozenset[str]] = {}
"""The last answer of :func:`archived_helpers`, by the bytes it was made from (parsing every file is its cost)."""


def scenario_files(archived: Iterable[str], helpers: Collection[str] = frozenset()) -> list[str]:
    """The scenarios an archived scenario folder holds (among ``archived``, paths relative to the root), by name,
    sorted: its ``.py`` files but the private ones (``_x.py``) and the helper modules beside them
    (:func:`archived_helpers`). What a run listed, an audit derives from the archive alone."""
    return sorted(
        path[len(SCENARIOS) : -len(".py")]
        for path in archived
        if path.startswith(SCENARIOS)
        and path.count("/") == 1
        and path.endswith(".py")
        and not path.startswith(SCENARIOS + "_")
        and path[len(SCENARIOS) : -len(".py")] not in helpers
    )


@contextlib.contextmanager
def snapshot(files: Sequence[SourceFile], package: str = "scenarios") -> Iterator[Path]:
    """A private folder holding the files of ``package`` among ``files`` (its ``*.py``, at any depth), with the
    bytes as they were read, for as long as the ``with`` block lasts: what a run's workers load, so that the
    archived copy is what ran, whatever happens to the checkout meanwhile (see :func:`changed_during`)."""
    with tempfile.TemporaryDirectory(prefix="lab-run-") as scratch:
        root = Path(scratch)
        (root / package).mkdir()
        for file in files:
            if file.path.startswith(package + "/"):
                target = root / file.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(file.data)
        yield root


def changed_during(files: Sequence[SourceFile], root: Path, copy: Path | None = None) -> list[str]:
    """How the behaviour files differ from ``files`` (read when the run began): those of ``root`` now, changed,
    added or removed, and those of the run's own ``copy`` (:func:`snapshot`) changed; one line each, sorted."""
    then = digests(files)
    now = {path: source_digest(data) for path, data in _read(root, behaviour_paths(root))}
    found = [f"{path} changed in the checkout" for path in then.keys() & now.keys() if then[path] != now[path]]
    found += [f"{path} was added to the checkout" for path in now.keys() - then.keys()]
    found += [f"{path} was removed from the checkout" for path in then.keys() - now.keys()]
    if copy is not None:
        ran = {path: source_digest(data) for path, data in _read(copy, behaviour_paths(copy))}
        kept = {path: digest for path, digest in then.items() if path.startswith(SCENARIOS)}
        found += [
            f"{path} changed in the run's own copy, which the scenarios ran from"
            for path in kept.keys() | ran.keys()
            if kept.get(path) != ran.get(path)
        ]
    return sorted(found)


def is_checkout(root: Path) -> bool:
    """True when ``root`` is a source checkout of the lab (``lab/`` beside ``pyproject.toml``), not, say, the
    ``site-packages`` folder an installed lab sits in."""
    return (root / "lab" / "__init__.py").is_file() and (root / "pyproject.toml").is_file()


@contextlib.contextmanager
def source_root(lab_root: Path, scenarios: Path) -> Iterator[Path]:
    """A root holding ``lab/`` (from ``lab_root``) and ``scenarios/`` (the folder ``scenarios``), for as long as the
    ``with`` block lasts.

    When ``scenarios`` is ``lab_root``'s own ``scenarios/`` folder, that is ``lab_root`` itself. Otherwise (an
    installed lab, or a scenario folder outside the checkout) it is a temporary copy of the ``lab`` package, the
    scenario files and, from a checkout, its top files (:data:`TOP_FILES`): a run records, and an audit compares
    with and re-executes, one tree in the layout of a checkout, wherever its parts live. ``__pycache__`` is never
    copied. A missing ``scenarios`` folder is copied as an empty one (an audit then names the files it lacks).
    """
    if (lab_root / "scenarios").resolve() == scenarios.resolve():
        yield lab_root
        return
    with tempfile.TemporaryDirectory(prefix="lab-sources-") as scratch:
        root = Path(scratch)
        skip = shutil.ignore_patterns("__pycache__")
        shutil.copytree(lab_root / "lab", root / "lab", ignore=skip)
        if scenarios.is_dir():
            shutil.copytree(scenarios, root / "scenarios", ignore=skip)
        else:
            (root / "scenarios").mkdir()
        if is_checkout(lab_root):
            for name in TOP_FILES:
                if (lab_root / name).is_file():
                    shutil.copy2(lab_root / name, root / name)
        yield root


def _read(root: Path, paths: Iterable[str]) -> Iterable[tuple[str, bytes]]:
    base = str(root)
    for path in paths:
        try:
            with open(os.path.join(base, path), "rb") as handle:
                yield path, handle.read()
        except FileNotFoundError:  # removed between listing and reading, by someone editing the checkout
            continue
