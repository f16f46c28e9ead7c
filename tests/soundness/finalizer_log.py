"""Correct twin of finalizer_count: each __del__ logs to its own actor's log, and each actor sees its close at once."""

from lab import Scenario, acceptable, actor, forbidden


class Closing:
    """Logs, from ``__del__``, that it was closed."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def __del__(self) -> None:
        self.log.append("closed")


class FinalizerLog(Scenario):
    source = "soundness suite: __del__"
    line_modules = (__name__,)
    outcomes = (
        acceptable("each close ran when its last reference died", saw=[True, True]),
        forbidden("a close had not run yet", saw=[False, False]),
        forbidden("a close had not run yet", saw=[True, False]),
        forbidden("a close had not run yet", saw=[False, True]),
    )

    def setup(self) -> None:
        self.log_a: list[str] = []
        self.log_b: list[str] = []
        self.first: Closing | None = Closing(self.log_a)
        self.second: Closing | None = Closing(self.log_b)
        self.saw = {"a": False, "b": False}

    @actor
    def a(self) -> None:
        self.first = None
        self.saw["a"] = self.log_a == ["closed"]

    @actor
    def b(self) -> None:
        self.second = None
        self.saw["b"] = self.log_b == ["closed"]

    def observe(self) -> dict[str, object]:
        return {"saw": [self.saw["a"], self.saw["b"]]}
