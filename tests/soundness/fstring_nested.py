"""Racy: one actor appends to a list inside a dict, the other formats the dict in an f-string.

Formatting a dict formats its values: ``f"{self.log}"`` reads the inner list, which the other actor appends to.
"""

from lab import Scenario, acceptable, actor, forbidden


class FstringNested(Scenario):
    source = "soundness suite: an f-string of a nested structure"
    line_modules = (__name__,)
    outcomes = (
        acceptable("formatted after the append", text="{'items': ['x']}"),
        forbidden("formatted before the append", text="{'items': []}"),
    )

    def setup(self) -> None:
        self.log: dict[str, list[str]] = {"items": []}
        self.text = ""

    @actor
    def a(self) -> None:
        self.log["items"].append("x")

    @actor
    def b(self) -> None:
        self.text = f"{self.log}"

    def observe(self) -> dict[str, object]:
        return {"text": self.text}
