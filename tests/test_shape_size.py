"""Small modules: one idea per module, and a module over 300 lines says on its first line why it is one module.

The reason is a comment, ``# size: <why>``, above the docstring: it is for whoever maintains the module, not
for its readers' documentation, and a reviewer sees it first.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "lab"

SIZE_LIMIT = 300
"""Lines a module under lab/ may have without saying why."""
SIZE_REASON = re.compile(r"# size: \S.{19,}")
"""The form of that reason: the module's first line, a comment ``# size: <why it is one module>``."""


class TestModuleSize:
    def test_long_modules_say_why_on_their_first_line(self) -> None:
        """A module over 300 lines starts with ``# size: <reason>``: one idea per module, or a reason it cannot be."""
        wrong = []
        for path in sorted(LAB.rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            if len(lines) > SIZE_LIMIT and not (lines and SIZE_REASON.fullmatch(lines[0])):
                wrong.append(f"{path.relative_to(ROOT)}: {len(lines)} lines, and no '# size: ...' first line")
        assert wrong == [], "\n".join(sorted(wrong))

    def test_the_reason_form_is_recognized(self) -> None:
        """A real reason passes; a bare or empty one does not."""
        assert SIZE_REASON.fullmatch("# size: the two renderers share one table of columns")
        assert not SIZE_REASON.fullmatch("# size: big")
        assert not SIZE_REASON.fullmatch('"""A docstring."""')
