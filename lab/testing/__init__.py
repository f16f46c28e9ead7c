"""Explore your own code from your own tests: actors, a setup and the checks, with no scenario file to write.

::

    from lab.testing import explore_code

    def test_two_deposits_are_never_lost():
        explore_code(
            setup=lambda lab: Account(),                      # the shared state, built fresh for every schedule
            actors={"alice": lambda acct: acct.deposit(5),    # one thread each
                    "bob": lambda acct: acct.deposit(7)},
            check=lambda acct: {"no deposit lost": acct.balance == 12},
            under_test=[bank],                                # the module(s) that define Account
        )

:func:`explore_code` runs the actors under every interleaving that matters (at line granularity by default, so
code without probes or lab locks is split between its lines) and returns quietly when every check held in every
schedule; otherwise it raises :class:`AssertionError` whose message is readable as it stands: which check broke,
the schedule as a table with one column per actor, and the command-free way to replay it
(:func:`replay_code`). It builds an ordinary :class:`~lab.Scenario` behind the scenes, so everything the explorer
promises holds here too: footprints recorded by identity, INCOMPLETE (never PASS) when a bound, the budget or a
too coarse granularity cut the search. The module that calls it and the modules listed in ``under_test`` are the
code under test.
"""

from __future__ import annotations

from lab.scenarios import acceptable, forbidden, interesting
from lab.testing._explore import DEFAULT_OUTCOMES, DEFAULT_SECONDS, explore_code
from lab.testing._failures import ExplorationFailed, failure_text, replay_code

__all__ = [
    "DEFAULT_OUTCOMES",
    "DEFAULT_SECONDS",
    "ExplorationFailed",
    "acceptable",
    "explore_code",
    "failure_text",
    "forbidden",
    "interesting",
    "replay_code",
]
