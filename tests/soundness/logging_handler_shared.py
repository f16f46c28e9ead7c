"""Correct twin of logging_handlers: both loggers share one handler, whose lock holds emit's read and write together."""

import logging

from lab import Scenario, acceptable, actor, forbidden


class Tally:
    def __init__(self) -> None:
        self.records = 0


class CountingHandler(logging.Handler):
    """Counts the records it is handed in a tally it may share with other handlers."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def emit(self, record: logging.LogRecord) -> None:
        n = self.tally.records
        self.tally.records = n + 1


def _logger(name: str, handler: logging.Handler) -> logging.Logger:
    logger = logging.Logger(name)  # not registered with logging's manager: nothing outlives the run
    logger.propagate = False
    logger.addHandler(handler)
    return logger


class LoggingHandlerShared(Scenario):
    source = "soundness suite: a logging handler"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both records counted", records=2),
        forbidden("a record was lost", records=1),
    )

    def setup(self) -> None:
        self.tally = Tally()
        handler = CountingHandler(self.tally)
        self.first = _logger("first", handler)
        self.second = _logger("second", handler)

    @actor
    def a(self) -> None:
        self.first.warning("from a")

    @actor
    def b(self) -> None:
        self.second.warning("from b")

    def observe(self) -> dict[str, int]:
        return {"records": self.tally.records}
