"""Correct twin of fstring_nested: the formatting waits for the append (the actors hand over through a latch)."""

from lab import Scenario, acceptable, actor, forbidden


class FstringNestedLocked(Scenario):
    source = "soundness suite: an f-string of a nested structure"
    line_modules = (__name__,)
    outcomes = (
        acceptable("formatted after the append", text="{'items': ['x']}"),
        forbidden("formatted before the append", text="{'items': []}"),
    )

    def setup(self) -> None:
        self.log: dict[str, list[str]] = {"items": []}
        self.text = ""
        self.appended = self.lab.latch("appended")

    @actor
    def a(self) -> None:
        self.log["items"].append("x")
        self.appended.count_down()

    @actor
    def b(self) -> None:
        self.appended.wait()
        self.text = f"{self.log}"

    def observe(self) -> dict[str, object]:
        return {"text": self.text}
