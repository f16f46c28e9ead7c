"""Racy: ``setup()`` puts one fresh list under two keys of a module-level dict; each actor checks, then appends.

The module's dict outlives runs, so the lab walks it once and reuses what it found while the module holds the same
objects. Here the dict is the same object every run but its contents are new: a reused walk would not know the list,
each run would name it after whichever key reached it first, and the reduction, comparing names across runs, would
take the two actors' steps for independent."""

from lab import Scenario, acceptable, actor, forbidden

REGISTRY: dict[str, list[str]] = {}


class RegistrySetUp(Scenario):
    source = "soundness suite: module state set up afresh each run"
    line_modules = (__name__,)
    outcomes = (
        acceptable("a was first", items=["a"]),
        acceptable("b was first", items=["b"]),
        forbidden("both saw an empty list and appended", items=["a", "b"]),
        forbidden("both saw an empty list and appended", items=["b", "a"]),
    )

    def setup(self) -> None:
        shared: list[str] = []
        REGISTRY["seen by a"] = shared
        REGISTRY["seen by b"] = shared

    @actor
    def a(self) -> None:
        items = REGISTRY["seen by a"]
        if not items:
            items.append("a")

    @actor
    def b(self) -> None:
        items = REGISTRY["seen by b"]
        if not items:
            items.append("b")

    def observe(self) -> dict[str, list[str]]:
        return {"items": list(REGISTRY["seen by a"])}
