"""Commands the lab prints for a person to paste: spelt as they ran the lab, with what selected the scenario.

A replay line printed after ``lab explore`` must run when pasted into the same shell: the same program (``lab``,
``python -m lab`` or ``python run.py``, whose replay is a flag, ``--replay``), the scenario folder when one was
named (``--scenarios DIR``; without it the replay would look in the default folder and say "unknown scenario"),
the granularity and the variant, each word quoted for a POSIX shell. Records keep one canonical spelling
(``python -m lab replay ...``, see :func:`lab.scenarios.explaining.replay_command`); only what is printed follows
the invocation.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from lab.engine.core import Granularity


@dataclass(frozen=True, slots=True)
class Invocation:
    """How the person started the lab: ``program`` as they type it, and ``scenarios``, the folder they named
    (``None``: the default one, which a pasted command finds again by itself)."""

    program: str = "lab"
    scenarios: str | None = None

    @classmethod
    def of(cls, prog: str, scenarios: object = None, argv0: str | None = None) -> Invocation:
        """The invocation of this process's command line, whose parser is called ``prog`` (``lab``, ``python -m
        lab`` or ``run.py``), with its ``--scenarios`` value: each program spelt so that it runs from this shell
        (``lab`` when the ``lab`` on the PATH is this one, else its full path; ``python`` likewise)."""
        argv0 = sys.argv[0] if argv0 is None else argv0
        if prog == "run.py":
            program = f"{_python()} {shlex.quote(argv0)}"
        elif prog == "python -m lab":
            program = f"{_python()} -m lab"
        else:
            program = _on_path("lab", argv0) if argv0 and Path(argv0).name == "lab" else prog
        return cls(program, None if scenarios is None else str(scenarios))

    def replay(self, name: str, schedule: str, granularity: str, variant: str) -> str:
        """The command that replays ``schedule`` of scenario ``name``, ready to paste."""
        target = f"{name}:{schedule}"
        words = ["--replay", target] if self._legacy else ["replay", target]
        return self._line(words, granularity=granularity, variant=variant)

    def run(self, name: str, out: str) -> str:
        """The command that runs scenario ``name`` into a new evidence folder ``out``."""
        words = ["--scenario", name, "--out", out]
        return self._line(words if self._legacy else ["run", *words])

    @property
    def _legacy(self) -> bool:
        """``run.py`` takes flags, not subcommands (``--replay NAME:SCHEDULE``)."""
        return self.program.endswith("run.py")

    def _line(self, words: list[str], *, granularity: str = Granularity.PROBE, variant: str = "") -> str:
        if self.scenarios is not None and not self._legacy:  # run.py always reads its own checkout's folder
            words += ["--scenarios", self.scenarios]
        if granularity != Granularity.PROBE:
            words += ["--granularity", granularity]
        if variant:
            words += ["--variant", variant]
        return " ".join([self.program, *(shlex.quote(word) for word in words)])


def _python() -> str:
    """``python`` when that is this interpreter on the PATH, else this interpreter's path."""
    return _on_path("python", sys.executable)


def _on_path(name: str, actual: str) -> str:
    """``name`` when the PATH finds ``actual`` under it, else ``actual`` (quoted): what runs this same program."""
    found = shutil.which(name)
    if found and actual and os.path.realpath(found) == os.path.realpath(actual):
        return name
    return shlex.quote(actual) if actual else name
