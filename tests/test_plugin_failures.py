"""What a failing ``lab_explore`` test shows in pytest: the source lines the actors ran, none of the lab's own
frames, and the failing schedule kept in pytest's cache, replayed first on the next run until the test passes."""

from __future__ import annotations

import re

import pytest

pytest_plugins = ["pytester"]

_BANK = """
class Account:
    def __init__(self):
        self.balance = 0

    def deposit(self, n):
        b = self.balance
        self.balance = b + n
"""

_FIXED = """
import threading

class Account:
    def __init__(self):
        self.balance = 0
        self.lock = threading.Lock()

    def deposit(self, n):
        with self.lock:
            b = self.balance
            self.balance = b + n
"""

_TEST = """
import bank

def test_deposits(lab_explore):
    lab_explore(
        setup=lambda lab: bank.Account(),
        actors={"a": lambda acct: acct.deposit(5), "b": lambda acct: acct.deposit(7)},
        check=lambda acct: {"no deposit lost": acct.balance == 12},
        under_test=[bank],
    )
"""


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_failure_reads_as_source_and_is_replayed_first_next_time(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bank=_BANK, test_bank=_TEST)
    first = pytester.runpytest_subprocess("-p", "no:xdist", "-q")
    first.assert_outcomes(failed=1)
    text = first.stdout.str()
    assert "bank.py:6  b = self.balance" in text and "bank.py:7  self.balance = b + n" in text
    assert "lab/testing/" not in text and "lab/pytest_plugin.py" not in text  # the lab's frames are hidden
    assert "FAIL after" in text
    # one numbering: the racing steps the explanation names are the table's rows of those numbers, by those actors
    raced = re.search(r"(\w+)'s step (\d+) ran before (\w+)'s step (\d+)", text)
    assert raced is not None, text
    for who, number in ((raced[1], raced[2]), (raced[3], raced[4])):
        assert re.search(rf"^E\s+{number} {who}: ", text, re.MULTILINE), (who, number, text)

    again = pytester.runpytest_subprocess("-p", "no:xdist", "-q")
    again.assert_outcomes(failed=1)
    assert "FAIL on the failing schedule saved by an earlier run, replayed before any search" in again.stdout.str()

    ignored = pytester.runpytest_subprocess("-p", "no:xdist", "-q", "--lab-no-saved")
    ignored.assert_outcomes(failed=1)
    assert "FAIL after" in ignored.stdout.str()

    pytester.makepyfile(bank=_FIXED)  # the fix: the saved schedule no longer fails, the search proves it
    fixed = pytester.runpytest_subprocess("-p", "no:xdist", "-q")
    fixed.assert_outcomes(passed=1)
    pytester.makepyfile(bank=_BANK)  # the bug back: nothing saved any more, so the search finds it afresh
    back = pytester.runpytest_subprocess("-p", "no:xdist", "-q")
    back.assert_outcomes(failed=1)
    assert "FAIL after" in back.stdout.str()
