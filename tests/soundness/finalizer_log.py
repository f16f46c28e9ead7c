"""Correct twin of finalizer_count: each __del__ appends to a log, and each actor sees its own close at once."""

from lab import Scenario, acceptable, actor, forbidden


class Closing:
    """Logs, from ``__del__``, that it was closed."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log = log
        self.name = name

    def __del__(self) -> None:
        self.log.append(self.name)


class FinalizerLog(Scenario):
    source = "soundness suite: __del__"
    line_modules = (__name__,)
    outcomes = (
        acceptable("each close ran when its last reference died", saw=[True, True], closed=["a", "b"]),
        forbidden("a close had not run yet", saw=[False, False], closed=["a", "b"]),
        forbidden("a close had not run yet", saw=[True, False], closed=["a", "b"]),
        forbidden("a close had not run yet", saw=[False, True], closed=["a", "b"]),
    )

    def setup(self) -> None:
        self.log: list[str] = []
        self.first: Closing | None = Closing(self.log, "a")
        self.second: Closing | None = Closing(self.log, "b")
        self.saw = {"a": False, "b": False}

    @actor
    def a(self) -> None:
        self.first = None
        self.saw["a"] = "a" in self.log

    @actor
    def b(self) -> None:
        self.second = None
        self.saw["b"] = "b" in self.log

    def observe(self) -> dict[str, object]:
        return {"saw": [self.saw["a"], self.saw["b"]], "closed": sorted(self.log)}
