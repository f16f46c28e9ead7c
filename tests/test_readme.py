"""The README's commands and CI stay in step."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from lab.cli import main
from lab.cli.app import parser

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

    def test_every_lab_command_the_readme_shows_parses(self) -> None:
        """Each ``lab`` line of the README is a real command with real flags; together they show every command."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        lines = [line.split("#")[0].split() for line in readme.splitlines() if line.startswith(".venv/bin/lab ")]
        assert {words[1] for words in lines} == {"audit", "explore", "list", "new", "run", "replay", "chat"}
        for words in lines:
            if words[1] != "chat":  # its flags are the console's own
                parser().parse_args(words[1:])

    def test_the_readme_replay_replays_to_its_end(self) -> None:
        """The replay example is a whole schedule: it replays to the end, exit 0 (a cut one would diverge)."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        words = next(
            line.split("#")[0].split() for line in readme.splitlines() if line.startswith(".venv/bin/lab replay")
        )
        assert main(words[1:], console_out=Console(file=io.StringIO())) == 0
