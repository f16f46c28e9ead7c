"""Scenario code compiled ahead (:mod:`lab.scenarios.compiled`): used only for the very text it was compiled from,
never for a file that warns or does not compile, and compiled with the flags the loader always used."""

from __future__ import annotations
import __future__

import warnings
from pathlib import Path

from lab.scenarios import compiled
from lab.scenarios.compiled import compile_ahead
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load

ROOT = Path(__file__).resolve().parent.parent


def test_a_file_compiled_ahead_loads_from_that_code_once(tmp_path: Path) -> None:
    path = tmp_path / "race_two_requests.py"
    path.write_text((ROOT / "scenarios" / "race_two_requests.py").read_text(encoding="utf-8"), encoding="utf-8")
    compile_ahead([path])
    ahead = compiled._AHEAD[(str(path), path.read_text(encoding="utf-8"))]
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario)
    assert (str(path), path.read_text(encoding="utf-8")) not in compiled._AHEAD  # taken: one worker, one load
    assert loaded.cls.__module__ and ahead.co_filename == str(path)
    assert loaded.cls.observe.__code__.co_flags & __future__.annotations.compiler_flag  # as the loader always did


def test_an_edited_file_is_compiled_from_its_new_text(tmp_path: Path) -> None:
    path = tmp_path / "edited.py"
    path.write_text("x = 1\n", encoding="utf-8")
    compile_ahead([path])
    path.write_text("x = 2\n", encoding="utf-8")
    code = compiled.compiled(path.read_text(encoding="utf-8"), path)
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert namespace["x"] == 2
    compiled._AHEAD.clear()


def test_a_file_that_warns_or_does_not_compile_is_left_to_the_worker(tmp_path: Path) -> None:
    warns, broken = tmp_path / "warns.py", tmp_path / "broken.py"
    warns.write_text("assert (1, 'always true')\n", encoding="utf-8")
    broken.write_text("def (:\n", encoding="utf-8")
    compile_ahead([warns, broken, tmp_path / "missing.py"])
    assert not any(key[0] in (str(warns), str(broken)) for key in compiled._AHEAD)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled.compiled(warns.read_text(encoding="utf-8"), warns)
    assert any(issubclass(w.category, SyntaxWarning) for w in caught)  # the worker still sees the warning
    assert isinstance(load(broken), BrokenScenario)
