"""Racy: a sets a flag, then stores a key in a shared dict; b, seeing the flag, reads the key as an attribute of a
proxy whose ``__getattr__`` (defined in a module not under test) looks it up in that dict, before the store.

The ``__getattr__`` is code the lab does not rewrite: the read that falls to it is charged with everything the
proxy reaches (the dict), not the proxy alone.
"""

from lab import Scenario, acceptable, actor, forbidden
from tests.soundness._elsewhere import ledger


class GetattrOutside(Scenario):
    source = "soundness suite: a __getattr__ in a module not under test"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the flag but not the key", b="0"),
        acceptable("b read before the flag, or after the store"),
    )

    def setup(self) -> None:
        self.sent = False
        self.base: dict[str, int] = {"a": 0}
        self.proxy = ledger.Proxy(self.base)

    @actor
    def a(self) -> None:
        self.sent = True
        self.base["k"] = 1

    @actor
    def b(self) -> str:
        if self.sent:
            return str(getattr(self.proxy, "k", 0))
        return "early"
