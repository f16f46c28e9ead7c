"""Racy: two loggers, each with a handler of its own, count records in one shared tally; a count is lost.

A handler's ``emit`` runs under that handler's lock, so two handlers do not exclude each other: the read and the
write of the tally race. logging's own locks (the module's and each handler's) must be ones the scheduler sees.
"""

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


class LoggingHandlers(Scenario):
    source = "soundness suite: a logging handler"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both records counted", records=2),
        forbidden("a record was lost", records=1),
    )

    def setup(self) -> None:
        self.tally = Tally()
        self.first = _logger("first", CountingHandler(self.tally))
        self.second = _logger("second", CountingHandler(self.tally))

    @actor
    def a(self) -> None:
        self.first.warning("from a")

    @actor
    def b(self) -> None:
        self.second.warning("from b")

    def observe(self) -> dict[str, int]:
        return {"records": self.tally.records}
