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
one column per actor, and why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lab.scenarios.exploring import ScenarioExploration
from lab.testing import explore_code

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

    def explore(**options: Any) -> ScenarioExploration:
        options.setdefault("granularity", default)
        options.setdefault("name", request.node.name.replace("[", "_").replace("]", "").replace("-", "_"))
        return explore_code(**options)

    return explore
