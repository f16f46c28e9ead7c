"""Read files inside an evidence folder without ever leaving it, however the folder was tampered with.

Every relative path is checked before use (no absolute path, no ``..``, no empty component, no backslash), then
opened from the folder one component at a time, each looked at with ``lstat`` and opened with ``O_NOFOLLOW``
relative to its parent's descriptor: a symbolic link is reported, never followed, so nothing outside the folder is
ever opened, even if the folder changes while it is read. FIFOs, sockets and devices are refused before they are
opened for reading, so an audit cannot hang on them. Reads are bounded: a caller names the most bytes it accepts,
and no file larger than :data:`FILE_CAP` is hashed at all.
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

    def __enter__(self) -> FolderReader:
        if _RELATIVE:
            self._fd = os.open(self.root, os.O_RDONLY | _DIRECTORY)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def read(self, rel: str, cap: int) -> bytes:
        """The whole file, or :class:`Unreadable` when it is larger than ``cap`` bytes (it is not read past that)."""
        fd = self._open(rel)
        try:
            chunks: list[bytes] = []
            size = 0
            while chunk := os.read(fd, min(_CHUNK, cap + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    raise Unreadable(f"larger than {_size(cap)}; not read")
            return b"".join(chunks)
        except OSError as error:
            raise Unreadable(f"cannot be read: {error.strerror}") from None
        finally:
            os.close(fd)

    def sha256(self, rel: str, cap: int = FILE_CAP) -> str:
        """The file's SHA-256, read in chunks; a file larger than ``cap`` bytes is refused before a byte of it is
        hashed (its size is looked at once it is open), so a huge file costs neither memory nor time."""
        fd = self._open(rel)
        digest = hashlib.sha256()
        try:
            if os.fstat(fd).st_size > cap:
                raise Unreadable(f"larger than {_size(cap)}; not hashed")
            size = 0
            while chunk := os.read(fd, _CHUNK):
                size += len(chunk)
                if size > cap:  # it grew while it was read
                    raise Unreadable(f"larger than {_size(cap)}; not hashed")
                digest.update(chunk)
        except OSError as error:
            raise Unreadable(f"cannot be read: {error.strerror}") from None
        finally:
            os.close(fd)
        return digest.hexdigest()

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


def _size(cap: int) -> str:
    return f"{cap // MIB} MiB" if cap >= MIB and cap % MIB == 0 else f"{cap} bytes"
