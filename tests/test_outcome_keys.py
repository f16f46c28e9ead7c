"""An outcome table's keys are checked where they are written: a misspelt actor or a method left without ``@actor``
is a broken scenario naming the fix, never a state key compared as ``<not observed>`` while the actor goes
unchecked."""

from __future__ import annotations

from pathlib import Path

from lab.scenarios.loader import BrokenScenario, LoadedScenario, load

_HEAD = '"""x"""\nfrom lab import Scenario, acceptable, actor, only\nclass A(Scenario):\n    source = "s"\n'


def _load(tmp_path: Path, body: str) -> LoadedScenario | BrokenScenario:
    path = tmp_path / "keys.py"
    path.write_text(_HEAD + body)
    return load(path)


_ACTORS = "    @actor\n    def first(self): return 1\n    @actor\n    def middle(self): return 2\n"


def test_a_misspelt_actor_is_named_with_the_fix(tmp_path: Path) -> None:
    item = _load(tmp_path, "    outcomes = only(first=1, midle=2)\n" + _ACTORS)
    assert isinstance(item, BrokenScenario)
    assert item.problem == (
        "outcomes names 'midle', which is neither an actor nor a key observe() returns; did you mean 'middle'?"
    )


def test_a_misspelt_actor_in_a_race_table_too(tmp_path: Path) -> None:
    item = _load(tmp_path, "    outcomes = (acceptable('r', first=1, middl=2),)\n" + _ACTORS)
    assert isinstance(item, BrokenScenario) and "did you mean 'middle'?" in item.problem


def test_a_method_without_actor_says_to_decorate_it(tmp_path: Path) -> None:
    body = "    outcomes = only(first=1, last=3)\n" + _ACTORS + "    def last(self): return 3\n"
    item = _load(tmp_path, body)
    assert isinstance(item, BrokenScenario)
    assert item.problem == "outcomes names 'last', a method that is not an actor: decorate last() with @actor"


def test_an_observed_key_close_to_an_actor_name_is_not_a_mistake(tmp_path: Path) -> None:
    """``firsts`` is close to ``first``, but ``observe()`` spells it: it is state, and the scenario loads."""
    body = (
        "    outcomes = only(first=1, middle=2, firsts=0)\n" + _ACTORS + "    def observe(self): return {'firsts': 0}\n"
    )
    assert isinstance(_load(tmp_path, body), LoadedScenario)


def test_an_ordinary_state_key_is_left_to_the_run(tmp_path: Path) -> None:
    """A key far from every actor name may be one ``observe()`` builds: only a run can tell."""
    body = "    outcomes = only(first=1, middle=2, version=3)\n" + _ACTORS
    assert isinstance(_load(tmp_path, body), LoadedScenario)
