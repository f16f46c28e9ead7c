"""The files of an evidence folder as they are written: each created once, never overwritten, its digest kept;
and a folder written as the run goes, its sources before any scenario runs and each result as its scenario ends.

Writing as the run goes is what makes a killed run leave evidence: the folder then holds ``started.json``, the
sources that ran and every result that finished, without ``SHA256SUMS``, which an audit calls unfinished. Each
scenario's ``result.json`` is written after its trace and requests, so its presence says they are complete.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lab.engine.core import encode_trace
from lab.errors import EvidenceError, UsageError
from lab.evidence.records import sources as source_files
from lab.evidence.records.layout import (
    SOURCES_JSON,
    is_scenario_name,
    requests_path,
    result_path,
    source_path,
    trace_path,
)
from lab.evidence.records.loading import JSON_CAP
from lab.evidence.records.records import dump_json, request_lines, result_record, sha256
from lab.scenarios.runner import ScenarioResult


class WriteError(EvidenceError):
    """Raised when the evidence cannot be written (a full disk, a file that appeared in the folder during the run,
    a permission): ``str()`` is one line naming the file; the folder is left without ``SHA256SUMS``, so every
    audit calls it a run that did not finish."""


class Files:
    """Creates files under one folder, never overwriting, and remembers each file's SHA-256.

    Any failure to write is a :class:`WriteError` naming the file, in one line.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._made: set[str] = set()
        self.digests: dict[str, str] = {}

    def write(self, rel: str, data: bytes, *, record: bool = True) -> None:
        parts = rel.split("/")
        try:
            for depth in range(1, len(parts)):
                sub = "/".join(parts[:depth])
                if sub not in self._made:
                    os.mkdir(self._folder / sub)
                    self._made.add(sub)
            with open(self._folder / rel, "xb") as handle:
                handle.write(data)
        except FileExistsError:
            raise WriteError(
                f"cannot write {self._folder / rel}: it already exists, though this run did not write "
                f"it (something else wrote into the folder during the run)"
            ) from None
        except OSError as error:
            raise WriteError(f"cannot write {self._folder / rel}: {error.strerror or error}") from None
        if record:
            self.digests[rel] = sha256(data)

    def kept(self, rel: str, data: bytes) -> None:
        """Record ``rel`` as written with ``data`` by an earlier run of this folder (``--resume``): its digest, and
        its folders as made."""
        parts = rel.split("/")
        self._made.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
        self.digests[rel] = sha256(data)

    def adopt(self, rel: str, make: Callable[[], bytes]) -> None:
        """Record the digest of ``rel``, written before this object existed, or write it now with ``make()``."""
        try:
            with open(self._folder / rel, "rb") as handle:
                data = handle.read(JSON_CAP + 1)
        except FileNotFoundError:
            self.write(rel, make())
            return
        except OSError as error:
            raise WriteError(f"cannot read {self._folder / rel}: {error.strerror or error}") from None
        self.digests[rel] = sha256(data)


class OpenFolder:
    """An evidence folder being written while its run goes on: :meth:`sources` before any scenario runs, then
    :meth:`result` for each scenario as it finishes; :func:`~lab.evidence.write.writer.write_evidence` finishes it
    (``opened=``), writing only what is not there yet."""

    def __init__(self, folder: Path, root: Path) -> None:
        self.folder, self.root = folder, root
        self.files = Files(folder)
        self.archived: list[source_files.SourceFile] | None = None
        self.results: set[str] = set()
        """The scenarios whose records are written."""
        self.written: dict[str, tuple[bytes, bytes, Any]] = {}
        """Each written scenario's trace and requests as written and its ``result.json`` record, by name: the
        writer's end needs them again (its self-audit's re-execution is asked from them), and need not make them
        twice."""

    def sources(self, archived: Sequence[source_files.SourceFile]) -> None:
        """Write ``sources/`` and ``sources.json``: the files as the run read them, once, before it ran any."""
        for file in archived:
            self.files.write(source_path(file.path), file.data)
        self.files.write(SOURCES_JSON, dump_json(source_files.document(archived)))
        self.archived = list(archived)

    def result(self, result: ScenarioResult) -> None:
        """Write one scenario's trace, requests and, last, ``result.json``."""
        if not is_scenario_name(result.name) or result.name in self.results:
            raise UsageError(f"scenario name {result.name!r} cannot be recorded (twice, or not as a folder name)")
        trace, requests = encode_trace(result.trace), request_lines(result.requests)
        self.files.write(trace_path(result.name), trace)
        if result.requests:
            self.files.write(requests_path(result.name), requests)
        record = result_record(result, trace, requests, root=self.root)
        self.files.write(result_path(result.name), dump_json(record))
        self.results.add(result.name)
        self.written[result.name] = (trace, requests, record)
