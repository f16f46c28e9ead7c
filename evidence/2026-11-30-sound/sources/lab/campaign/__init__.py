"""A campaign: the scenarios of one folder, listed, run, explored, replayed, and a run's evidence written.

The commands (:mod:`lab.cli`) only parse arguments, call this, print what it reports and set the exit code; what a
run does and decides is here: which scenario files run, in which order, what is explored, the checks made before
anything is written, and the run's status, decided once, by the record (``run.json``, as its self-audit read it).
The scenario folder may be anywhere: with an installed lab, :func:`~lab.evidence.records.sources.source_root` lays
``lab/`` and the folder out as a checkout, so the evidence and its audit look exactly like a checkout's.
"""

from __future__ import annotations

from lab.campaign.campaign import Campaign
from lab.campaign.interface import (
    DEFAULT_WATCHDOG,
    WATCHDOG_RANGE,
    ExploreSettings,
    Listener,
    Replayed,
    RunOutcome,
    check_watchdog,
    default_scenarios,
    lab_root,
)

__all__ = [
    "DEFAULT_WATCHDOG",
    "WATCHDOG_RANGE",
    "Campaign",
    "ExploreSettings",
    "Listener",
    "Replayed",
    "RunOutcome",
    "check_watchdog",
    "default_scenarios",
    "lab_root",
]
