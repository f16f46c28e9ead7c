"""The scaffold behind ``lab new NAME``: a commented scenario that runs as it is."""

from __future__ import annotations

import re
from pathlib import Path

from lab.errors import UsageError

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

TEMPLATE = '''\
"""{title}: replace this line with what the scenario teaches, in one sentence.

Say here which article section it comes from and what a learner should notice in the trace. This template runs as
it is: two requests begin at version 0 (latch `second-began`), a latch makes `first` commit before `second`
(latch `first-done`), and `second` comes back STALE. `lab explore --scenario {name} --out DIR` checks that the
latches leave this one outcome under every interleaving.
Change the latch order, the outcome, or the session, and run it again:

    lab run --scenario {name} --out try-{name}
"""

from lab import CommitStatus, Scenario, VersionedSession, actor, is_whole_pairs, only


class {cls}(Scenario):
    source = "article 003, section 1 (replace with yours)"
    # The one outcome the latches leave: each actor's status, then the final state observe() reports.
    outcomes = only(first="COMMITTED", second="STALE", version=1)

    def setup(self) -> None:
        # The session gets the lab's lock and probe, so every step of it shows in the trace.
        self.session = self.lab.wire(VersionedSession, "s1")
        # A latch nobody counts down is the most common mistake: the run then stops with a deadlock report.
        self.second_began = self.lab.latch("second-began")
        self.first_done = self.lab.latch("first-done")

    # Each @actor method runs on its own thread; actor 0 is the first one defined.
    @actor
    def first(self) -> CommitStatus:
        ticket = self.session.begin("r-first", "first question")
        self.second_began.wait()  # both must hold a version-0 ticket before anyone commits
        status = self.session.commit(ticket, "first answer", "stop")
        self.first_done.count_down()
        return status

    @actor
    def second(self) -> CommitStatus:
        ticket = self.session.begin("r-second", "second question")
        self.second_began.count_down()
        self.first_done.wait()
        return self.session.commit(ticket, "second answer", "stop")

    def observe(self) -> dict[str, object]:
        version, _history = self.session.snapshot()
        return {{"version": version}}

    def invariants(self):
        yield "history is whole pairs", is_whole_pairs(self.session.snapshot()[1])
'''


def check_new_name(name: str) -> None:
    """Refuse a scenario name that is not lower_snake_case (it becomes a file and a folder name)."""
    if not _NAME.match(name):
        raise UsageError(f"scenario name {name!r} must be lower_snake_case (letters, digits, underscores)")


def template_text(name: str) -> str:
    """The text of a new scenario file called ``name`` (a lesson that passes as it is, and explores clean)."""
    check_new_name(name)
    cls = "".join(part.capitalize() for part in name.split("_") if part)
    return TEMPLATE.format(title=name.replace("_", " ").capitalize(), name=name, cls=cls)


def write_template(folder: Path, name: str) -> Path:
    """Write ``folder/NAME.py`` from the template; refuses a bad name or an existing file."""
    return write_new_scenario_file(folder / f"{name}.py", template_text(name))


def write_new_scenario_file(path: Path, text: str) -> Path:
    """Create ``path`` with ``text``; never overwrites (the open is exclusive), so a learner's file is safe."""
    try:
        with path.open("x", encoding="utf-8") as file:
            file.write(text)
    except FileExistsError:
        raise UsageError(f"{path.name} already exists; choose another name (nothing was overwritten)") from None
    return path
