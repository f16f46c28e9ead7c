# size: the one reader of a folder: its path checks, its bounds, and the bytes it holds, read once each
"""Read files inside an evidence folder without ever leaving it, however the folder was tampered with.

Every relative path is checked before use (no absolute path, no ``..``, no empty component, no backslash), then
opened from the folder one component at a time, each looked at with ``lstat`` and opened with ``O_NOFOLLOW``
relative to its parent's descriptor: a symbolic link is reported, never followed, so nothing outside the folder is
ever opened, even if the folder changes while it is read. FIFOs, sockets and devices are refused before they are
opened for reading, so an audit cannot hang on them. Reads are bounded: a caller names the most bytes it accepts,
and no file larger than :data:`FILE_CAP` is hashed at all.

Each file is opened and read once: its bytes are held, and every later read or hash of it is served from them, so
what a check parses is exactly what was hashed, and a file swapped after its hash was checked is never seen (an
audit raced by a writer judges one set of bytes; :meth:`FolderReader.changed` then names what moved on disk).
The bytes held are bounded too (:data:`HELD_CAP`), so a hostile folder cannot exhaust memory.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from types import TracebackType

from lab.errors import EvidenceError

MIB = 1 << 20
FILE_CAP = 64 * MIB
"""The largest file an evidence folder may hold (the cap on a JSON Lines record); anything larger is refused
before it is hashed."""
HELD_CAP = 512 * MIB
"""The most bytes one reader holds: past it, a file is refused unread (an honest folder holds a few MiB)."""
MAX_ENTRIES = 100_000
MAX_DEPTH = 32
_CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# Descriptor-relative opening closes the race between checking a component and opening it; where the platform
# lacks it, components are still checked with lstat one by one, on full paths.
_RELATIVE = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and os.scandir in os.supports_fd


class Unreadable(EvidenceError):
    """Raised for a path inside the folder that cannot be read safely; ``str()`` is the one-line reason."""


class _TooLarge(Unreadable):
    """A file larger than what was asked: each caller says so in its own words (not read, not hashed)."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"larger than {_size(cap)}")
        self.cap = cap


def path_problem(rel: str) -> str:
    """Why ``rel`` is not a plain relative path inside a folder, or ``""`` when it is one."""
    if not rel:
        return "an empty path"
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
        return "an absolute path"
    if "\\" in rel:
        return "a path with a backslash"
    if any(not char.isprintable() for char in rel):
        return "a path with a control character"
    parts = rel.split("/")
    if ".." in parts:
        return "a path that leaves the folder (..)"
    if any(part in {"", "."} for part in parts):
        return "a path with an empty or '.' component"
    return ""


def printable(text: str) -> str:
    """``text`` safe to print on one line: control characters and undecodable bytes escaped."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class FolderReader:
    """Opens files by relative path inside one folder, and lists the folder, never following a link.

    >>> import tempfile
    >>> scratch = tempfile.TemporaryDirectory()
    >>> folder = Path(scratch.name)
    >>> _ = (folder / "run.json").write_text("{}")
    >>> (folder / "link").symlink_to("run.json")
    >>> with FolderReader(folder) as reader:
    ...     reader.read("run.json", 16 * MIB), reader.listing()
    (b'{}', {'link': 'symlink', 'run.json': 'file'})
    >>> with FolderReader(folder) as reader:
    ...     reader.read("link", 16 * MIB)
    Traceback (most recent call last):
    lab.evidence.records.safefs.Unreadable: ...
    >>> scratch.cleanup()
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd = -1
        self._held: dict[str, bytes | Unreadable] = {}
        """Each file read, by relative path: its bytes, or why it could not be read (never tried twice)."""
        self._identity: dict[str, tuple[int, ...]] = {}
        """Each file read, by relative path: what its descriptor's ``fstat`` said, to tell later if it moved."""
        self._size = 0

    def __enter__(self) -> FolderReader:
        if _RELATIVE:
            self._fd = os.open(self.root, os.O_RDONLY | _DIRECTORY)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def read(self, rel: str, cap: int) -> bytes:
        """The whole file, or :class:`Unreadable` when it is larger than ``cap`` bytes (it is not read past that).

        The first read of ``rel`` (or its hash) opens it; every later one gets the same bytes, or the same reason."""
        try:
            data = self._bytes(rel, cap)
        except _TooLarge as error:
            raise Unreadable(f"larger than {_size(min(cap, error.cap))}; not read") from None
        if len(data) > cap:
            raise Unreadable(f"larger than {_size(cap)}; not read")
        return data

    def sha256(self, rel: str, cap: int = FILE_CAP) -> str:
        """The file's SHA-256; a file larger than ``cap`` bytes is refused before a byte of it is read (its size is
        looked at once it is open). The bytes hashed are held: a later :meth:`read` of ``rel`` returns them."""
        try:
            data = self._bytes(rel, cap)
        except _TooLarge as error:
            raise Unreadable(f"larger than {_size(min(cap, error.cap))}; not hashed") from None
        if len(data) > cap:
            raise Unreadable(f"larger than {_size(cap)}; not hashed")
        return hashlib.sha256(data).hexdigest()

    def held(self) -> frozenset[str]:
        """The files opened so far, read or refused, by relative path."""
        return frozenset(self._held)

    def changed(self) -> list[str]:
        """The files read whose entry on disk is no longer the one read (replaced, rewritten, removed), by an
        ``lstat`` of each: nothing is opened again. An audit that ran for a while names them, since the folder on
        disk is then not the one it judged."""
        moved = []
        for rel, before in sorted(self._identity.items()):
            try:
                if self._fd >= 0:
                    info = os.stat(rel, dir_fd=self._fd, follow_symlinks=False)
                else:  # the reader is closed, or the platform has no descriptor-relative stat
                    info = os.lstat(self.root / rel)
            except OSError:
                moved.append(rel)
                continue
            if _identity(info) != before:
                moved.append(rel)
        return moved

    def _bytes(self, rel: str, cap: int) -> bytes:
        """``rel``'s bytes, read at most once (up to :data:`FILE_CAP`, or ``cap`` if larger: a file larger than
        either is not read at all); what could not be read raises the same :class:`Unreadable` every time."""
        held = self._held.get(rel)
        if held is None:
            try:
                held = self._read_once(rel, max(cap, FILE_CAP))
            except Unreadable as error:
                held = error
            self._held[rel] = held
        if isinstance(held, _TooLarge):
            raise _TooLarge(held.cap)
        if isinstance(held, Unreadable):
            raise Unreadable(str(held))
        return held

    def _read_once(self, rel: str, cap: int) -> bytes:
        fd = self._open(rel)
        try:
            info = os.fstat(fd)
            if info.st_size > cap:
                raise _TooLarge(cap)
            if self._size + info.st_size > HELD_CAP:
                raise Unreadable(f"past the {_size(HELD_CAP)} an audit reads of one folder; not read")
            chunks: list[bytes] = []
            size = 0
            while chunk := os.read(fd, min(_CHUNK, cap + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:  # it grew while it was read
                    raise _TooLarge(cap)
            self._size += size
            self._identity[rel] = _identity(info)
            return b"".join(chunks)
        except OSError as error:
            raise Unreadable(f"cannot be read: {error.strerror}") from None
        finally:
            os.close(fd)

    def listing(self) -> dict[str, str]:
        """Every entry below the folder, by relative path, as ``file``, ``symlink`` or ``other``; folders are walked.

        Symbolic links to folders are listed, not entered. Raises :class:`Unreadable` past ``MAX_ENTRIES`` entries
        or ``MAX_DEPTH`` levels, so a hostile folder cannot make the audit run forever.
        """
        found: dict[str, str] = {}
        self._scan(self._fd if _RELATIVE else str(self.root), "", found, 0)
        return dict(sorted(found.items()))

    def _scan(self, handle: int | str, prefix: str, found: dict[str, str], depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Unreadable(f"folders nested deeper than {MAX_DEPTH} levels at {printable(prefix)}; not listed")
        try:
            with os.scandir(handle) as entries:
                items = sorted(
                    (
                        entry.name,
                        entry.is_symlink(),
                        entry.is_dir(follow_symlinks=False),
                        entry.is_file(follow_symlinks=False),
                    )
                    for entry in entries
                )
        except OSError as error:
            raise Unreadable(f"{printable(prefix) or 'the folder'} cannot be listed: {error.strerror}") from None
        for name, link, folder, regular in items:
            rel = prefix + name
            if len(found) >= MAX_ENTRIES:
                raise Unreadable(f"more than {MAX_ENTRIES} entries; not listed further")
            if link:
                found[rel] = "symlink"
            elif folder:
                self._scan_folder(handle, name, rel + "/", found, depth + 1)
            else:
                found[rel] = "file" if regular else "other"

    def _scan_folder(self, handle: int | str, name: str, prefix: str, found: dict[str, str], depth: int) -> None:
        if isinstance(handle, str):
            self._scan(os.path.join(handle, name), prefix, found, depth)
            return
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=handle)
        except OSError as error:
            raise Unreadable(f"{printable(prefix)} cannot be opened: {error.strerror}") from None
        try:
            self._scan(fd, prefix, found, depth)
        finally:
            os.close(fd)

    def _open(self, rel: str) -> int:
        reason = path_problem(rel)
        if reason:
            raise Unreadable(f"{reason}; not opened")
        parts = rel.split("/")
        opened: list[int] = []
        parent = self._fd
        try:
            for index, part in enumerate(parts):
                so_far = "/".join(parts[: index + 1])
                name, where = (part, parent) if _RELATIVE else (os.path.join(self.root, so_far), None)
                info = _lstat(name, where, so_far, last=index == len(parts) - 1)
                if index < len(parts) - 1:
                    if _RELATIVE:
                        parent = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=where)
                        opened.append(parent)
                    continue
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY, dir_fd=where)
                now = os.fstat(fd)
                if not stat.S_ISREG(now.st_mode) or (now.st_ino, now.st_dev) != (info.st_ino, info.st_dev):
                    os.close(fd)
                    raise Unreadable("changed while it was being opened; not read")
                return fd
            raise Unreadable("an empty path; not opened")  # unreachable: split() gives at least one part
        except OSError as error:
            raise Unreadable(f"cannot be opened: {error.strerror}") from None
        finally:
            for fd in opened:
                os.close(fd)


def _lstat(name: str, where: int | None, so_far: str, *, last: bool) -> os.stat_result:
    try:
        info = os.stat(name, dir_fd=where, follow_symlinks=False)
    except FileNotFoundError:
        raise Unreadable("missing" if last else f"missing (there is no folder {printable(so_far)})") from None
    except NotADirectoryError:
        raise Unreadable(f"missing (a part of {printable(so_far)} is not a folder)") from None
    if stat.S_ISLNK(info.st_mode):
        raise Unreadable(
            "is a symbolic link; not followed"
            if last
            else f"passes through the symbolic link {printable(so_far)}; not followed"
        )
    if not last and not stat.S_ISDIR(info.st_mode):
        raise Unreadable(f"passes through {printable(so_far)}, which is not a folder")
    if last and stat.S_ISDIR(info.st_mode):
        raise Unreadable("is a folder, not a file")
    if last and not stat.S_ISREG(info.st_mode):
        raise Unreadable("is not a regular file (a FIFO, socket or device); not opened")
    return info


def _identity(info: os.stat_result) -> tuple[int, ...]:
    """What tells one file version from another without reading it: inode, size, and modification and change
    times (the change time cannot be set back by the file's owner)."""
    return (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _size(cap: int) -> str:
    return f"{cap // MIB} MiB" if cap >= MIB and cap % MIB == 0 else f"{cap} bytes"
