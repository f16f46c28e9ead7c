"""A helper module in the programs' own folder: it mutates shared state it is handed, where no scenario can see it.

Scenarios import it (``from tests.soundness import _shared``), which puts it under test with them.
"""


def bump(tally: dict[str, int], key: str) -> None:
    """Add one to ``tally[key]``: a read, then a write on the next line."""
    n = tally[key]
    tally[key] = n + 1
