"""A ledger kept in a one-slot list, read and written by functions the lab does not instrument."""


def read(box: list[int]) -> int:
    """The balance in ``box``."""
    return box[0]


def write(box: list[int], value: int) -> None:
    """Store ``value`` as the balance in ``box``."""
    box[0] = value


class Store:
    """Where a holder keeps its items."""

    def __init__(self) -> None:
        self.items: list[int] = []


class Holder:
    """What a helper is handed: the items it changes lie two attributes deeper."""

    def __init__(self) -> None:
        self.store = Store()

    @property
    def count(self) -> int:
        """How many items the store holds: a getter the lab does not rewrite, reading two attributes deeper."""
        return len(self.store.items)


def add(holder: Holder, item: int) -> None:
    """Append ``item`` to the holder's store: a write the caller's footprint reaches only through what it holds."""
    holder.store.items.append(item)


def stored_count(holder: Holder) -> int:
    """How many items the holder's store holds: a key function the lab does not rewrite."""
    return len(holder.store.items)


class Proxy:
    """Answers every attribute it lacks from the dict it wraps: a ``__getattr__`` the lab does not rewrite."""

    def __init__(self, target: dict[str, int]) -> None:
        self._target = target

    def __getattr__(self, name: str) -> int:
        try:
            return self._target[name]
        except KeyError:
            raise AttributeError(name) from None


def deposit(box: list[int]) -> None:
    """Add one to the balance in ``box``: a read, then a write, inside one call the lab does not instrument."""
    balance = box[0]
    box[0] = balance + 1
