"""The README's commands and CI stay in step."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class TestReadme:
    def test_ci_runs_the_readme_test_command_verbatim(self) -> None:
        """.ci/run contains the README's test command, character for character."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        commands = re.findall(r"```sh\n(.+?)\n```", readme)
        test_command = next(c for c in commands if "pytest" in c)
        assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()

    def test_readme_main_command_writes_a_new_evidence_folder(self) -> None:
        """The first command runs run.py into a folder under evidence/."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        first = re.findall(r"```sh\n(.+?)\n```", readme)[0]
        assert re.search(r"run\.py --out evidence/\S+$", first)
