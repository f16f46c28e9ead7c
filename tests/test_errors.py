"""One error tree: every exception class the lab defines derives from LabError, except a named few."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable

import pytest

import lab
from lab.engine import Latch, Scheduler
from lab.engine.search import Subtree
from lab.errors import ArgumentTypeError, LabError, UsageError
from lab.hooks import note_shared_access
from lab.messages import Message
from lab.sessions.transactional import TransactionalChat
from lab.transport.offline import OfflineTransport

ALLOWED = {
    "lab.engine.search._choices._Pruned": "control flow inside the explorer: raised and caught there, never escapes",
    "lab.engine.search._work_worker._Cancel": "control flow inside an exploring worker process: raised, caught there",
    "lab.engine.search._work_worker._Quit": "control flow inside an exploring worker process: raised and caught there",
    "lab.engine.core._actor._Aborted": (
        "a BaseException on purpose: it unwinds a stopped actor through the code under test, whose "
        "`except Exception` must not swallow it; caught by the scheduler"
    ),
    "lab.scenarios.explaining._SwapImpossible": "control flow inside the explainer: raised and caught there",
}
"""Exception classes outside the tree, each with the reason it may be."""


def _lab_modules() -> list[str]:
    """Every module of the lab package, the command entry point excluded (importing it must not run anything)."""
    found = [info.name for info in pkgutil.walk_packages(lab.__path__, "lab.")]
    return sorted(name for name in found if not name.endswith("__main__"))


def _exception_classes() -> dict[str, type[BaseException]]:
    classes: dict[str, type[BaseException]] = {}
    for name in _lab_modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == name:
                classes[f"{name}.{value.__qualname__}"] = value
    return classes


class TestErrorTree:
    def test_every_exception_class_is_a_lab_error(self) -> None:
        """Each exception class defined in lab/ derives from LabError unless the allow-list says why not."""
        outside = sorted(name for name, cls in _exception_classes().items() if not issubclass(cls, LabError))
        assert outside == sorted(ALLOWED)

    def test_the_allow_list_names_real_classes(self) -> None:
        """An allow-list entry whose class is gone or joined the tree is removed, not kept as a loophole."""
        classes = _exception_classes()
        assert [name for name in ALLOWED if name not in classes or issubclass(classes[name], LabError)] == []

    def test_the_walk_finds_the_tree_itself(self) -> None:
        """The module walk sees lab.errors and the subclasses defined in other packages (it is not vacuous)."""
        classes = _exception_classes()
        assert classes["lab.errors.LabError"] is LabError
        assert {"lab.transport.contract.TransportFailure", "lab.evidence.records.safefs.Unreadable"} <= set(classes)

    def test_a_wrong_type_is_both_a_usage_error_and_a_type_error(self) -> None:
        """ArgumentTypeError is caught by `except TypeError` in Python code and by `except LabError` in commands."""
        error = ArgumentTypeError.naming("commit()", "ticket", "a Ticket", None)
        assert isinstance(error, UsageError) and isinstance(error, TypeError)
        assert str(error) == "commit() needs ticket to be a Ticket, not None"

    @pytest.mark.parametrize("name", sorted(ALLOWED))
    def test_allowed_classes_are_private_or_unwind(self, name: str) -> None:
        """Only private classes (never seen by a caller) stand outside the tree."""
        assert name.rsplit(".", 1)[1].startswith("_")


def _two_actors_of_one_name() -> None:
    scheduler = Scheduler()
    scheduler.add_actor("a", lambda: None)
    scheduler.add_actor("a", lambda: None)


def _a_second_run() -> None:
    scheduler = Scheduler()
    scheduler.add_actor("a", lambda: None)
    scheduler.run()
    scheduler.run()


MISTAKES: dict[str, Callable[[], object]] = {
    "two actors of one name": _two_actors_of_one_name,
    "a scheduler run twice": _a_second_run,
    "a latch counting below zero": lambda: Latch(Scheduler(), "go", -1),
    "a message of an unknown role": lambda: Message("tool", "x"),
    "a shared access neither read nor write": lambda: note_shared_access("db", mode="x"),
    "a subtree line that is not JSON": lambda: Subtree.from_text("not json"),
    "a chat keeping fewer than no pairs": lambda: TransactionalChat(OfflineTransport(), max_pairs=-1),
}


class TestCallerMistakes:
    @pytest.mark.timeout(10)
    @pytest.mark.parametrize("mistake", sorted(MISTAKES))
    def test_a_callers_mistake_is_a_usage_error(self, mistake: str) -> None:
        """What a caller got wrong raises UsageError (a command prints it as one line), not a bare ValueError."""
        with pytest.raises(UsageError):
            MISTAKES[mistake]()
