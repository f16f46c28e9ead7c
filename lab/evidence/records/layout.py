"""Every path of an evidence folder, named once: the writer, the auditor, the re-execution and the report use these.

A folder's format is a contract with readers the lab does not control (``sha256sum -c``, a stranger's script, an
auditor of a later version), so a path spelt twice is a path that can drift. This module imports nothing of the
lab, so any layer can use it, and the re-execution child can too. ``docs/evidence.md`` ("Layout") draws the same
tree; ``tests/test_evidence_layout.py`` checks that a written folder holds only paths named here.
"""

from __future__ import annotations

import re

STARTED = "started.json"
"""The first file of every folder, written as it is created: a folder holding it is evidence, finished or not."""
RUN = "run.json"
"""The run: what, where, when, totals, status."""
SOURCES_JSON = "sources.json"
"""The fingerprints of the files that determine behaviour."""
SOURCES = "sources/"
"""The folder holding a copy of exactly those files, as they were read."""
REPORT_MD = "report.md"
"""The human summary, with a sequence diagram per scenario."""
REPORT_HTML = "report.html"
"""The same summary as one self-contained HTML page."""
AUDIT = "audit.json"
"""The self-audit the writer made right after writing."""
SUMS = "SHA256SUMS"
"""The manifest, written last but for the signature: it covers every other file."""
SIGNATURE = "SHA256SUMS.sig"
"""The SSH signature of ``SHA256SUMS`` (``run.py --sign``); not listed in the manifest it signs."""

SCENARIOS = "scenarios/"
"""The folder holding one folder per scenario."""
RESULT = "result.json"
TRACE = "trace.jsonl"
REQUESTS = "requests.jsonl"
SCENARIO_FILES = (RESULT, TRACE, REQUESTS)
"""The files a scenario's folder may hold (``requests.jsonl`` only when the scenario sent requests)."""

EXPLORE = "explore/"
"""The folder holding the explorations (``run.py --explore``), one folder per scenario, and the kill matrix."""
KILL_MATRIX = EXPLORE + "kill-matrix.json"
"""The mutant kill matrix, when race scenarios were explored."""

CROSS_CHECK = "cross-check/"
"""The folder holding what real threads reached (``--cross-check N``): one file per exploration, beside ``explore/``
and not in it, since real runs are not deterministic and the audit replays nothing of them."""

TOP_FILES = (RUN, SOURCES_JSON, REPORT_MD, AUDIT, SUMS)
"""Top-level files every finished folder holds."""
OPTIONAL_FILES = (STARTED, SIGNATURE, REPORT_HTML)
"""Top-level files a finished folder may lack: older folders (no ``started.json``, no ``report.html``), and
unsigned ones."""

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_EXPLORATION_FILE = re.compile(r"(?P<granularity>[a-z]+)(?:\.(?P<variant>[A-Za-z_][A-Za-z0-9_]*))?\.json")


def is_scenario_name(value: object) -> bool:
    """True for a scenario name: lower_snake_case, so it is a safe folder name under ``scenarios/``."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def scenario_dir(scenario: str) -> str:
    """``scenarios/<scenario>``: where one scenario's files are (no trailing slash, as problems name it)."""
    return f"{SCENARIOS}{scenario}"


def result_path(scenario: str) -> str:
    """``scenarios/<scenario>/result.json``."""
    return f"{scenario_dir(scenario)}/{RESULT}"


def trace_path(scenario: str) -> str:
    """``scenarios/<scenario>/trace.jsonl``."""
    return f"{scenario_dir(scenario)}/{TRACE}"


def requests_path(scenario: str) -> str:
    """``scenarios/<scenario>/requests.jsonl``."""
    return f"{scenario_dir(scenario)}/{REQUESTS}"


def parse_scenario_path(rel: str) -> tuple[str, str] | None:
    """``(scenario, file)`` of a path one of :data:`SCENARIO_FILES` under a well-named scenario, else ``None``."""
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] + "/" != SCENARIOS or not is_scenario_name(parts[1]):
        return None
    return (parts[1], parts[2]) if parts[2] in SCENARIO_FILES else None


def source_path(path: str) -> str:
    """``sources/<path>``: the archived copy of the checkout's file ``path`` (relative, with ``/``)."""
    return f"{SOURCES}{path}"


def scenario_source_path(scenario: str) -> str:
    """``sources/scenarios/<scenario>.py``: the archived copy of a scenario's file."""
    return source_path(f"{SCENARIOS}{scenario}.py")


def exploration_path(name: str, granularity: str, variant: str) -> str:
    """``explore/<scenario>/<granularity>[.<variant>].json``: a variant only for race scenarios, which have them."""
    return f"{EXPLORE}{name}/{granularity}{'.' + variant if variant else ''}.json"


def parse_exploration_path(rel: str, granularities: tuple[str, ...]) -> tuple[str, str, str] | None:
    """``(scenario, granularity, variant)`` of an exploration file's path, or ``None`` if it is not one.

    ``granularities``: the names a path may carry (the runner's), so this module needs none of the engine.
    """
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] + "/" != EXPLORE or not is_scenario_name(parts[1]):
        return None
    match = _EXPLORATION_FILE.fullmatch(parts[2])
    if match is None or match["granularity"] not in granularities:
        return None
    return parts[1], match["granularity"], match["variant"] or ""


def cross_check_path(name: str, granularity: str, variant: str) -> str:
    """``cross-check/<scenario>/<granularity>[.<variant>].json``: real threads' check of the exploration at the same
    place under ``explore/``."""
    return CROSS_CHECK + exploration_path(name, granularity, variant)[len(EXPLORE) :]


def parse_cross_check_path(rel: str, granularities: tuple[str, ...]) -> tuple[str, str, str] | None:
    """``(scenario, granularity, variant)`` of a cross-check file's path, or ``None`` if it is not one."""
    if not rel.startswith(CROSS_CHECK):
        return None
    return parse_exploration_path(EXPLORE + rel[len(CROSS_CHECK) :], granularities)
