"""The evidence format is written down once each way, and the copies cannot drift apart.

docs/evidence.md's record tables are the schema a stranger reads; lab/evidence/records/schema.py is the schema the
auditor enforces; lab/evidence/records/layout.py is the one place the lab's code names a path of the folder. These
tests hold the tables to the schema, and the code to the layout. That a freshly written folder holds exactly the
schema's fields, and only the layout's paths, is checked on a real folder in tests/test_evidence_exploration.py
(``TestFormat``), with :func:`field_report` from here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lab.evidence.records import layout
from lab.evidence.records.schema import RECORDS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "evidence.md"
_MARKER = re.compile(r"<!-- schema: (?P<name>[^>]+?) -->")


def documented_tables(text: str) -> dict[str, tuple[set[str], set[str]]]:
    """Each ``<!-- schema: NAME -->`` table of ``text``: its required fields and its optional ones.

    The table right below the marker has the columns ``field | required | meaning``; a field cell names one or
    more fields in backquotes, and ``required`` is ``yes`` or ``no``.
    """
    tables: dict[str, tuple[set[str], set[str]]] = {}
    lines = text.splitlines()
    for index, line in enumerate(lines):
        found = _MARKER.fullmatch(line.strip())
        if found is None:
            continue
        name = found["name"]
        assert name not in tables, f"docs/evidence.md documents {name!r} twice"
        header = [cell.strip() for cell in lines[index + 1].strip("|").split("|")]
        assert header[:2] == ["field", "required"], f"the table of {name!r} has columns {header}"
        required: set[str] = set()
        optional: set[str] = set()
        for row in lines[index + 3 :]:
            if not row.startswith("|"):
                break
            field_cell, required_cell = (cell.strip() for cell in row.strip("|").split("|")[:2])
            names = re.findall(r"`([^`]+)`", field_cell)
            assert names, f"a row of the table of {name!r} names no field: {row}"
            assert required_cell in {"yes", "no"}, f"{names} of {name!r}: required is {required_cell!r}"
            (required if required_cell == "yes" else optional).update(names)
        tables[name] = (required, optional)
    return tables


def field_report(record: Mapping[str, Any], name: str) -> list[str]:
    """What in ``record`` differs from :data:`RECORDS` ``[name]``: a required field missing, a field the schema does
    not know, or a field of the wrong kind. Empty when it holds exactly the schema's fields."""
    required, optional = RECORDS[name]
    reasons = [f"{name} has no field {key!r}" for key in required if key not in record]
    reasons += [f"{name} has an undocumented field {key!r}" for key in record if key not in {*required, *optional}]
    for key, (accepts, words) in {**required, **optional}.items():
        if key in record and not accepts(record[key]):
            reasons.append(f"{name}'s {key!r} is not {words}")
    return reasons


class TestTheDocumentedSchema:
    def test_every_table_names_exactly_the_schema_fields(self) -> None:
        """Each documented record has the schema's required fields as ``yes`` and its optional ones as ``no``."""
        tables = documented_tables(DOC.read_text(encoding="utf-8"))
        assert sorted(tables) == sorted(RECORDS)
        for name, (required, optional) in tables.items():
            fields, maybe = RECORDS[name]
            assert (required, optional) == (set(fields), set(maybe)), name

    def test_a_drifted_table_is_caught(self) -> None:
        """The reader of the tables sees a field the schema lacks, and one it marks optional."""
        text = DOC.read_text(encoding="utf-8")
        drifted = text.replace("| `platform` | yes |", "| `platform`, `hostname` | yes |", 1)
        drifted = drifted.replace("| `problem` | yes |", "| `problem` | no |", 1)
        run, result = documented_tables(drifted)["run.json"], documented_tables(drifted)["result.json"]
        assert "hostname" in run[0] and "problem" in result[1]


class TestFieldReport:
    def test_an_undocumented_field_and_a_missing_one_are_named(self) -> None:
        record = {"format": "concurrency-lab-evidence/1", "host": "x"}
        assert field_report(record, "started.json") == [
            "started.json has no field 'started'",
            "started.json has an undocumented field 'host'",
        ]

    def test_an_optional_field_of_the_wrong_kind_is_named(self) -> None:
        required, _ = RECORDS["check"]
        record = {key: "" for key in required} | {"passed": True, "kind": 3}
        assert field_report(record, "check") == ["check's 'kind' is not a string"]


_FILES = {
    layout.RUN,
    layout.STARTED,
    layout.SOURCES_JSON,
    layout.REPORT_MD,
    layout.REPORT_HTML,
    layout.AUDIT,
    layout.SUMS,
    layout.SIGNATURE,
    layout.RESULT,
    layout.TRACE,
    layout.REQUESTS,
    layout.KILL_MATRIX,
}


def _spelt_paths(source: str) -> list[tuple[int, str]]:
    """String constants of ``source`` (docstrings aside) that spell a path of the folder: a file name of the
    layout, a path under ``explore/``, or a scenario's file under its folder."""
    tree = ast.parse(source)
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docs:
            continue
        text = node.value
        in_folder = " " not in text and any(f"/{name}" in text for name in layout.SCENARIO_FILES)
        if text in _FILES or text.startswith(layout.EXPLORE) or in_folder:
            found.append((node.lineno, text))
    return found


class TestOnePlaceForPaths:
    @pytest.mark.slow
    def test_the_lab_spells_no_folder_path_outside_the_layout(self) -> None:
        """Writer, auditor, re-execution, report and commands take every path from layout.py."""
        files = [*ROOT.glob("lab/**/*.py"), ROOT / "run.py", ROOT / "audit.py"]
        spelt = [
            f"{path.relative_to(ROOT)}:{line}: {text!r}"
            for path in files
            if path != ROOT / "lab" / "evidence" / "records" / "layout.py"
            for line, text in _spelt_paths(path.read_text(encoding="utf-8"))
        ]
        assert spelt == []

    @pytest.mark.parametrize(
        "code",
        [
            'out.write("run.json", data)',
            'rel = f"scenarios/{name}/trace.jsonl"',
            'KILL = "explore/kill-matrix.json"',
            'reader.read(f"{base}/result.json", CAP)',
        ],
    )
    def test_a_spelt_path_is_found(self, code: str) -> None:
        assert _spelt_paths(code)

    def test_prose_naming_a_file_is_not_a_path(self) -> None:
        assert _spelt_paths('problem = "is not listed in run.json"') == []

    def test_the_documented_tree_is_the_layout(self) -> None:
        """docs/evidence.md's Layout block draws exactly the paths layout.py names."""
        text = DOC.read_text(encoding="utf-8")
        block = text.split("## Layout", 1)[1].split("```", 2)[1]
        drawn = {line.split()[0] for line in block.splitlines()[2:] if line.strip()}
        exploration = layout.exploration_path("<name>", "<granularity>", "").replace(".json", "[.<variant>].json")
        named = {
            *layout.TOP_FILES,
            *layout.OPTIONAL_FILES,
            layout.SOURCES,
            *(f"{layout.scenario_dir('<name>')}/{name}" for name in layout.SCENARIO_FILES),
            exploration,
            layout.KILL_MATRIX,
            layout.cross_check_path("<name>", "<granularity>", "").replace(".json", "[.<variant>].json"),
        }
        assert drawn == named

    def test_the_layout_names_each_scenario_file_and_exploration(self) -> None:
        assert layout.result_path("a") == "scenarios/a/result.json"
        assert layout.parse_scenario_path(layout.trace_path("a")) == ("a", "trace.jsonl")
        assert layout.parse_scenario_path("scenarios/A/trace.jsonl") is None
        path = layout.exploration_path("race", "line", "Mutant")
        assert path == "explore/race/line.Mutant.json"
        assert layout.parse_exploration_path(path, ("probe", "line")) == ("race", "line", "Mutant")
        assert layout.parse_exploration_path(path, ("probe",)) is None
