"""A ledger kept in a one-slot list, read and written by functions the lab does not instrument."""


def read(box: list[int]) -> int:
    """The balance in ``box``."""
    return box[0]


def write(box: list[int], value: int) -> None:
    """Store ``value`` as the balance in ``box``."""
    box[0] = value
