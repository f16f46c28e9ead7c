"""A scenario folder is a package of its own: the modules beside a scenario import without ``PYTHONPATH``, are code
under test, and are archived with it, so that the self-audit and a later audit re-execute the archived helpers."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from lab.cli import main
from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import LoadedScenario, discover, load
from lab.scenarios.under_test import files_under_test, modules_under_test

ROOT = Path(__file__).resolve().parent.parent

_RACE = '''
"""Two actors bump a counter kept by a helper module beside the scenario: the lost update lives in the helper."""

{imports}

from lab import Scenario, acceptable, actor, forbidden


class {cls}(Scenario):
    source = "tests: scenario helper modules"
    outcomes = (
        acceptable("both bumps counted", total=2),
        forbidden("a bump was lost", total=1),
    )

    def setup(self) -> None:
        self.box = Box()

    @actor
    def a(self) -> None:
        bump(self.box)

    @actor
    def b(self) -> None:
        bump(self.box)

    def observe(self) -> dict[str, int]:
        return {{"total": self.box.total}}
'''

_HELPER = '''
"""A counter whose bump reads, then writes: two bumps can lose one."""


class Box:
    def __init__(self) -> None:
        self.total = 0


def bump(box: Box) -> None:
    seen = box.total
    box.total = seen + 1
'''


def _folder(root: Path, imports: str = "from helpers import Box, bump", name: str = "helper_race") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "helpers.py").write_text(textwrap.dedent(_HELPER), encoding="utf-8")
    cls = "".join(part.title() for part in name.split("_"))
    (root / f"{name}.py").write_text(textwrap.dedent(_RACE).format(imports=imports, cls=cls), encoding="utf-8")
    return root


def _cli(argv: list[str]) -> tuple[int, str]:
    from tests.evidence_checkout import FROZEN

    buffer = io.StringIO()
    code = main(argv, console_out=Console(file=buffer, width=400), root=FROZEN)
    return code, buffer.getvalue()


@pytest.mark.timeout(60)
def test_a_helper_imports_without_pythonpath_is_under_test_and_is_no_scenario(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "sc")
    assert str(folder) not in sys.path
    assert [p.name for p in discover(folder)] == ["helper_race.py"]  # helpers.py is no broken scenario
    loaded = load(folder / "helper_race.py")
    assert isinstance(loaded, LoadedScenario), str(loaded)
    assert "helpers" not in sys.modules  # imported under the scenario's private package, never its bare name
    helper = next(name for name in modules_under_test(loaded.cls) if name.endswith(".helpers"))
    assert helper.startswith("_lab_helpers_of_")
    assert str((folder / "helpers.py").resolve()) in files_under_test(loaded.cls)
    assert explore_scenario(loaded, granularity="line").verdict is ExploreVerdict.FAIL


@pytest.mark.timeout(60)
def test_a_race_in_a_subpackage_helper_is_found_at_line_granularity(tmp_path: Path) -> None:
    folder = tmp_path / "sc"
    (folder / "shapes").mkdir(parents=True)
    (folder / "shapes" / "__init__.py").write_text('"""Shapes."""\n', encoding="utf-8")
    (folder / "shapes" / "box.py").write_text("from .counter import Box, bump\n", encoding="utf-8")
    (folder / "shapes" / "counter.py").write_text(textwrap.dedent(_HELPER), encoding="utf-8")
    path = folder / "nested_race.py"
    path.write_text(textwrap.dedent(_RACE).format(imports="from shapes.box import Box, bump", cls="Nested"), "utf-8")
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), str(loaded)
    assert str((folder / "shapes" / "counter.py").resolve()) in files_under_test(loaded.cls)
    assert explore_scenario(loaded, granularity="line").verdict is ExploreVerdict.FAIL


@pytest.mark.timeout(60)
def test_a_helper_named_like_a_standard_module_shadows_it_for_its_scenario_only(tmp_path: Path) -> None:
    """``json.py`` beside a scenario is the scenario's ``json``; the lab's own ``json`` stays the standard one, and
    two folders' helpers of one name stay two modules."""
    standard = sys.modules["json"]
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, total in ((one, 1), (two, 2)):
        _folder(folder, imports="import json\nfrom helpers import Box, bump", name="shadow")
        (folder / "json.py").write_text(f"MARK = {total}\n", encoding="utf-8")
    first, second = load(one / "shadow.py"), load(two / "shadow.py")
    assert isinstance(first, LoadedScenario) and isinstance(second, LoadedScenario)
    assert sys.modules["json"] is standard and json.dumps([1]) == "[1]"
    first_json = vars(sys.modules[first.cls.__module__])["json"]
    second_json = vars(sys.modules[second.cls.__module__])["json"]
    assert (first_json.MARK, second_json.MARK) == (1, 2)


@pytest.mark.timeout(60)
def test_an_edited_helper_is_executed_afresh_and_a_broken_one_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "sc")
    first = load(folder / "helper_race.py")
    assert isinstance(first, LoadedScenario)
    again = load(folder / "helper_race.py")
    assert isinstance(again, LoadedScenario) and again.cls is first.cls  # unchanged: the module instrumented once
    (folder / "helpers.py").write_text(textwrap.dedent(_HELPER) + "\nEDITED = True\n", encoding="utf-8")
    second = load(folder / "helper_race.py")
    assert isinstance(second, LoadedScenario) and second.cls is not first.cls
    helper = next(name for name in modules_under_test(second.cls) if name.endswith(".helpers"))
    assert sys.modules[helper].EDITED is True
    (folder / "helpers.py").write_text("raise RuntimeError('no helper today')\n", encoding="utf-8")
    broken = load(folder / "helper_race.py")
    assert "raised RuntimeError on import: no helper today" in str(broken)
    assert not [name for name in sys.modules if name.startswith(helper.rpartition(".")[0])]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_run_archives_the_helper_and_audits_ok_until_the_helper_changes(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "sc", name="helper_race")
    out = tmp_path / "ev"
    code, text = _cli(["run", "--scenarios", str(folder), "--out", str(out)])
    assert code == 0 and "self-audit ok" in text, text
    archived = out / "sources" / "scenarios" / "helpers.py"
    assert archived.read_bytes() == (folder / "helpers.py").read_bytes()
    listed = {entry["path"] for entry in json.loads((out / "sources.json").read_text(encoding="utf-8"))["files"]}
    assert "scenarios/helpers.py" in listed
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["scenarios"] == ["helper_race"]

    code, text = _cli(["audit", str(out), "--scenarios", str(folder)])
    assert code == 0 and "MATCHED" in text, text

    (folder / "helpers.py").write_text(textwrap.dedent(_HELPER) + "\n# edited after the run\n", encoding="utf-8")
    code, text = _cli(["audit", str(out), "--scenarios", str(folder)])
    assert code != 0 and "scenarios/helpers.py (changed)" in text, text

    (folder / "helpers.py").write_text(textwrap.dedent(_HELPER), encoding="utf-8")
    archived.write_text(textwrap.dedent(_HELPER).replace("seen + 1", "seen + 2"), encoding="utf-8")
    code, text = _cli(["audit", str(out), "--scenarios", str(folder)])
    assert code != 0 and "sources/scenarios/helpers.py" in text, text


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_an_exploration_fails_on_the_helpers_race_and_its_self_audit_re_explores_the_archive(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "sc")
    out = tmp_path / "ev"
    code, text = _cli(["explore", "--scenarios", str(folder), "--out", str(out), "--granularity", "line"])
    assert code == 1, text
    assert "counterexample in helper_race" in text and "helpers.py:" in text, text
    assert "self-audit ok" in text, text
    code, text = _cli(["audit", str(out), "--scenarios", str(folder)])
    assert code == 0, text


def _every_file_parsed(files: dict[str, bytes]) -> set[str]:
    """helper_stems' rule with no shortcut: every file parsed, every import counted."""
    import ast

    from lab.scenarios.helper_modules import _declares_scenario, _imported_names

    trees = {}
    for stem, data in files.items():
        try:
            trees[stem] = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
    imported = set().union(*(_imported_names(tree) - {stem} for stem, tree in trees.items()))
    return {stem for stem, tree in trees.items() if stem in imported and not _declares_scenario(tree)}


@pytest.mark.parametrize(
    "importer",
    [
        b"import helpers\n",
        b"from helpers import x\n",
        "import ｈelpers  # written in letters that normalize to ASCII\n".encode(),
        "'''一个场景'''\nfrom helpers.inner import x\n".encode(),
        b"x = 'helpers'  # spelt, not imported\n",
        b"import helpers(\n",  # does not parse: its import counts for nothing
    ],
)
def test_only_files_that_spell_a_stem_are_parsed_and_the_helpers_are_the_same(importer: bytes) -> None:
    """Listing a folder parses only the files that spell another file's stem (most of a run's listing cost); the
    helpers found are those the full rule finds, the scenario folder's own included."""
    from lab.scenarios.helper_modules import helper_stems

    folder = {path.stem: path.read_bytes() for path in (ROOT / "scenarios").glob("*.py")}
    files = {**folder, "helpers": b"X = 1\n", "uses_it": importer, "declares": b"class A(Scenario): pass\n"}
    assert helper_stems(files) == _every_file_parsed(files)
    assert helper_stems(folder) == _every_file_parsed(folder)
