"""The lab's pytest plugin: a ``lab_explore`` fixture for exploring your own code from your own tests.

Installed with the lab (entry point ``pytest11``), so any test can ask for it::

    def test_deposits(lab_explore):
        lab_explore(setup=lambda lab: Account(), actors={"a": deposit_5, "b": deposit_7},
                    check=lambda acct: {"no deposit lost": acct.balance == 12}, under_test=[bank])

``pytest --lab-granularity instruction`` changes the default granularity for every such test (``line`` otherwise).
``pytest --lab-explore`` asks tests that run scenarios (the lab's own ``tests/test_scenarios.py`` does) to explore
each one at probe and line granularity instead of running one schedule; the ``lab_explores`` fixture says whether
it was given.
A failure reads as :func:`lab.testing.explore_code` writes it: the check that broke, the schedule as a table with
one column per actor, and why; the lab's own frames are hidden from the traceback. A failing test's schedule is
kept in pytest's cache and replayed first the next time the test runs (``--lab-no-saved`` turns that off).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from lab.scenarios.exploring import ScenarioExploration
from lab.testing import ExplorationFailed, explore_code

_GRANULARITIES = ("probe", "line", "instruction")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--lab-granularity``: the default granularity of the ``lab_explore`` fixture."""
    group = parser.getgroup("lab", "concurrency lab")
    group.addoption(
        "--lab-granularity",
        choices=_GRANULARITIES,
        default="line",
        help="granularity lab_explore explores at unless a test says otherwise (default: line)",
    )
    group.addoption(
        "--lab-no-saved",
        action="store_true",
        default=False,
        help="do not replay the schedules earlier lab_explore failures saved (in pytest's cache) before searching",
    )
    group.addoption(
        "--lab-explore",
        action="store_true",
        default=False,
        help="explore scenarios under every interleaving instead of running one schedule",
    )


@pytest.fixture
def lab_explores(request: pytest.FixtureRequest) -> bool:
    """True when ``--lab-explore`` was given: a test that runs a scenario should explore it instead."""
    return bool(request.config.getoption("--lab-explore"))


@pytest.fixture
def lab_explore(request: pytest.FixtureRequest) -> Callable[..., ScenarioExploration]:
    """:func:`lab.testing.explore_code`, with the granularity from the command line as its default."""
    default = request.config.getoption("--lab-granularity")

    saved = _SavedFailures(request)

    def explore(**options: Any) -> ScenarioExploration:
        __tracebackhide__ = True
        options.setdefault("granularity", default)
        options.setdefault("name", request.node.name.replace("[", "_").replace("]", "").replace("-", "_"))
        options.setdefault("replay_first", saved.schedule(options["granularity"]))
        try:
            found = explore_code(**options)
        except ExplorationFailed as failure:
            saved.keep(failure.schedule, options["granularity"])
            raise
        saved.forget()
        return found

    return explore


class _SavedFailures:
    """Each failing ``lab_explore`` test's schedule, kept in pytest's cache (``.pytest_cache``, under the project)
    and replayed first on the next run, as Hypothesis keeps the examples that failed: a bug found once by a
    sampler is found again at once, whatever the search would draw. A test that passes forgets its schedule;
    ``--lab-no-saved`` (or ``-p no:cacheprovider``) leaves the cache alone."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        cache = getattr(request.config, "cache", None)
        self._cache = None if request.config.getoption("--lab-no-saved") else cache
        self._key = "lab/failing/" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
        self._test = request.node.nodeid

    def schedule(self, granularity: str) -> str:
        if self._cache is None:
            return ""
        kept = self._cache.get(self._key, None)
        if not isinstance(kept, dict) or kept.get("test") != self._test or kept.get("granularity") != granularity:
            return ""
        return str(kept.get("schedule", ""))

    def keep(self, schedule: str, granularity: str) -> None:
        if self._cache is not None and schedule:
            self._cache.set(self._key, {"test": self._test, "granularity": granularity, "schedule": schedule})

    def forget(self) -> None:
        if self._cache is not None and self._cache.get(self._key, None) is not None:
            self._cache.set(self._key, None)
