"""``audit.json`` re-derived: every field of the self-audit the writer recorded is derived again from the folder.

The self-audit is made by the writer right after writing, with the code that wrote, against the digests it had
just recorded: on an honest folder it found nothing, re-executed every scenario and exploration with that code, and
counted what it checked. So each of its fields follows from the folder: ``ok`` true and no problems, the mode,
the folder the command named, the counts of files, scenarios and explorations, the run's status, no drift (the
archive is a copy of the code that audited), no accepted drift, no signature yet, finished, and a re-execution that
MATCHED with the note :func:`~lab.evidence.reexecute.rerun.matched_note` makes. A forged ``run_status``, note or
count is a problem, not a detail; only ``rerun.seconds`` and ``drift.checkout`` (a clock and a path on the
writer's machine) are taken as written. The note's words are compared only when the lab's machinery is this
checkout's: another version of the lab worded it its own way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lab.commandline import RunRequest
from lab.evidence.records.findings import Problem, RerunStatus
from lab.evidence.records.layout import AUDIT, SIGNATURE, SUMS
from lab.evidence.records.records import same_json
from lab.evidence.records.text import shown
from lab.evidence.reexecute.rerun import CHECKOUT, NOTHING_TO_RERUN, matched_note

NO_RERUN = "re-execution skipped (--no-rerun)"
"""The note of a self-audit that did not re-execute (the auditor's own words for it)."""


def check_self_audit(
    record: Mapping[str, Any] | None,
    *,
    run: Mapping[str, Any] | None,
    request: RunRequest | None,
    listing: Mapping[str, str],
    scenarios: int,
    explorations: int,
    kill_matrix: bool,
    same_machinery: bool,
    problems: list[Problem],
) -> None:
    """Each field of ``audit.json`` (``record``, already read and found ok) against what the folder makes it."""
    if record is None or record.get("ok") is not True or run is None:
        return  # missing, unreadable or not ok: reported by the consistency checks

    def differ(field: str, derived: object) -> None:
        recorded = _get(record, field)
        said, made = shown(recorded, 80), shown(derived, 80)
        problems.append(Problem(AUDIT, f"{field} is {said}, but the folder makes it {made}"))

    files = len([rel for rel in listing if rel not in (AUDIT, SUMS, SIGNATURE)])
    derived: dict[str, object] = {
        "mode": "self-audit",
        "problems": [],
        "files_verified": files,
        "scenarios": scenarios,
        "explorations": explorations,
        "run_status": run.get("status"),
        "accepted_drift": [],
        "signature": "",
        "unfinished": False,
    }
    if request is not None:
        derived["folder"] = str(Path(request.out))
    for field, value in derived.items():
        if field in record and not same_json(record[field], value):
            differ(field, value)
    drift = record.get("drift")
    if "drift" in record and not (
        isinstance(drift, dict) and all(drift.get(key) == [] for key in ("changed", "added", "removed"))
    ):
        differ("drift", "no file changed, added or removed")
    rerun = record["rerun"]
    if _claims_less(rerun, explorations):
        return  # a self-audit that says it re-executed nothing hides nothing: every audit re-executes on its own
    ran = scenarios or explorations or kill_matrix
    wanted: dict[str, object] = {
        "status": str(RerunStatus.MATCHED if ran else RerunStatus.SKIPPED),
        "scenarios": scenarios if ran else 0,
        "explorations": explorations if ran else 0,
    }
    if "code" in rerun:
        wanted["code"] = CHECKOUT if ran else ""
    if same_machinery:
        wanted["note"] = matched_note(scenarios, explorations, kill_matrix, CHECKOUT) if ran else NOTHING_TO_RERUN
    for field, value in wanted.items():
        if not same_json(rerun.get(field), value):
            differ(f"rerun.{field}", value)
    seconds = rerun.get("seconds")
    if not (isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0):
        differ("rerun.seconds", "a number of seconds")


def _claims_less(rerun: Mapping[str, Any], explorations: int) -> bool:
    """The exact record of a self-audit made without re-execution (a writer whose self-audit was told not to
    re-execute, as tests do for speed): SKIPPED, nothing run, the ``--no-rerun`` note."""
    note = NO_RERUN + (": neither the scenarios nor the explorations were run again" if explorations else "")
    claimed = {key: rerun.get(key) for key in ("status", "note", "scenarios", "explorations")}
    return (
        claimed == {"status": "SKIPPED", "note": note, "scenarios": 0, "explorations": 0}
        and rerun.get("code", "") == ""
    )


def _get(record: Mapping[str, Any], field: str) -> object:
    value: object = record
    for part in field.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value
