"""The fuzzer's grammar: the shared state a program may hold (:data:`PARTS`) and the steps its actors may take on it
(:data:`STEPS`), grouped into the places a program draws from (:data:`PLACES`).

Every access path the recorder knows has steps here: an object's attributes (plain, ``getattr``/``setattr``/
``hasattr``, added and deleted, ``vars``), a dict's items and keys, a list's and a deque's items by index and whole
(``len``, ``sorted``, ``max``, ``sum``, slices, iteration), module globals (rebound and mutated), closure cells
(``nonlocal``), containers nested in objects (two levels down, and the middle rebound), shared generators and a
coroutine (``next``, ``send``, ``throw``, ``close``, ``__next__``), callables (bound methods, ``functools.partial``
made in ``setup()`` and in an actor, ``operator.methodcaller``, a bound built-in method, ``map``, a lambda), helper
functions in a module not under test (:mod:`tests.fuzz.opaque`), class attributes (read through the class and
through an instance, shadowed, a classmethod), C calls (``list.append``, ``dict.setdefault``, ``sorted``, ``len``,
``max``, ...), the standard primitives (``Lock``, ``RLock``, ``Semaphore``, ``Event``, ``Condition``, ``Barrier``)
and ``queue.Queue``, with their own state read through attributes, and ``time.sleep(0)``.

A step is one or a few lines of an actor's body; ``{c}`` is its constant (1-3). An actor keeps ``v``, the last value
it read, and ``seen``, everything it read, which it returns. :data:`POINTS` is how many scheduling points each step
adds at line and at instruction granularity, measured by ``python -m tests.fuzz.calibrate``; the generator keeps a
program's naive count within a budget with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    """One piece of shared state: the module-level code it needs, how ``setup()`` makes it afresh for each
    execution, and what ``observe()`` reports of it once the actors are done."""

    imports: tuple[str, ...] = ()
    defs: str = ""
    setup: tuple[str, ...] = ()
    observe: tuple[tuple[str, str], ...] = ()
    needs: tuple[str, ...] = ()
    globals: tuple[str, ...] = ()


@dataclass(frozen=True)
class StepKind:
    """A kind of step: its lines, the parts it needs, and whether it may block (never put under a guard)."""

    lines: tuple[str, ...]
    needs: tuple[str, ...]
    blocks: bool = False
    guard: str = ""
    """Set on the guards: the primitive a ``with`` around other steps takes (its lines end with the ``with``)."""


_BOX = """
class Box:
    count = 0

    def __init__(self) -> None:
        self.x = 0
        self.y = 0

    def add(self, c: int) -> int:
        v = self.x
        self.x = v + c
        return v

    @classmethod
    def tally(cls, c: int) -> None:
        cls.count = cls.count + c
"""

_HOLDER = """
class Store:
    def __init__(self) -> None:
        self.items: list[int] = []


class Holder:
    def __init__(self) -> None:
        self.store = Store()
"""

_CELL = """
def make_cell() -> tuple[Callable[[int], None], Callable[[], int], Callable[[], None]]:
    n = 0

    def bump(c: int) -> None:
        nonlocal n
        m = n
        n = m + c

    def peek() -> int:
        return n

    def reset() -> None:
        nonlocal n
        n = 0

    return bump, peek, reset


def make_bag() -> tuple[Callable[[int], None], Callable[[int], None], Callable[[], list[int]]]:
    bag: list[int] = []

    def put(c: int) -> None:
        bag.append(c)

    def swap(c: int) -> None:
        nonlocal bag
        bag = [*bag, c]

    def look() -> list[int]:
        return list(bag)

    return put, swap, look
"""

_GENERATORS = """
def numbers() -> Generator[int, int | None, None]:
    n = 0
    while True:
        try:
            got = yield n
        except KeyError:
            got = 10
        n = n + (got or 1)


def watching(box: Box) -> Generator[int, None, None]:
    while True:
        yield box.x
"""

_COROUTINE = """
class Tick:
    def __await__(self) -> Generator[None, None, None]:
        yield


async def pinger(box: Box) -> None:
    while True:
        await Tick()
        box.y = box.y + 1
"""


PARTS: dict[str, Part] = {
    "box": Part(
        defs=_BOX, setup=("Box.count = 0", "self.box = Box()"), observe=(("x", "self.box.x"), ("y", "self.box.y"))
    ),
    "box_vars": Part(observe=(("box", "sorted(vars(self.box))"),), needs=("box",)),
    "count": Part(observe=(("count", "Box.count"),), needs=("box",)),
    "d": Part(setup=('self.d = {"k": 0}',), observe=(("dict", "dict(self.d)"),)),
    "items": Part(setup=("self.items = [0]",), observe=(("items", "list(self.items)"),)),
    "dq": Part(
        imports=("import collections",),
        setup=("self.dq = collections.deque([0])",),
        observe=(("dq", "list(self.dq)"),),
    ),
    "globals": Part(
        defs="G = 0\nREG: list[int] = []\n",
        setup=("global G, REG", "G = 0", "REG = []"),
        observe=(("g", "G"), ("reg", "list(REG)")),
        globals=("G", "REG"),
    ),
    "cell": Part(
        imports=("from collections.abc import Callable",),
        defs=_CELL,
        setup=("self.bump, self.peek, self.reset = make_cell()",),
        observe=(("cell", "self.peek()"),),
    ),
    "bag": Part(
        imports=("from collections.abc import Callable",),
        defs=_CELL,
        setup=("self.put, self.swap, self.look = make_bag()",),
        observe=(("bag", "self.look()"),),
    ),
    "nested": Part(
        setup=("self.box.inner = [0]", "self.box.tags = {}"),
        observe=(("inner", "list(self.box.inner)"), ("tags", "dict(self.box.tags)")),
        needs=("box",),
    ),
    "holder": Part(
        defs=_HOLDER, setup=("self.holder = Holder()",), observe=(("store", "list(self.holder.store.items)"),)
    ),
    "gen": Part(
        imports=("from collections.abc import Generator",),
        defs=_GENERATORS,
        setup=("self.gen = numbers()", "next(self.gen)"),
        needs=("box",),
    ),
    "watch": Part(
        imports=("from collections.abc import Generator",),
        defs=_GENERATORS,
        setup=("self.watch = watching(self.box)",),
        needs=("box",),
    ),
    "coro": Part(
        imports=("from collections.abc import Generator",),
        defs=_COROUTINE,
        setup=("self.coro = pinger(self.box)", "self.coro.send(None)"),
        needs=("box",),
    ),
    "partial": Part(
        imports=("import functools",),
        setup=("self.add_two = functools.partial(self.box.add, 2)",),
        needs=("box",),
    ),
    "push": Part(setup=("self.push = self.items.append",), needs=("items",)),
    "inc": Part(setup=('self.inc = lambda c: setattr(self.box, "x", self.box.x + c)',), needs=("box",)),
    "opaque": Part(
        imports=("from tests.fuzz import opaque",),
        setup=("opaque.LOG.clear()",),
        observe=(("log", "list(opaque.LOG)"),),
    ),
    "lock": Part(setup=("self.lock = threading.Lock()",)),
    "rlock": Part(setup=("self.rlock = threading.RLock()",)),
    "sem": Part(setup=("self.sem = threading.Semaphore(1)",)),
    "sig": Part(setup=("self.sig = threading.Semaphore(0)",), observe=(("sig", "self.sig._value"),)),
    "ev": Part(setup=("self.ev = threading.Event()",), observe=(("ev", "self.ev.is_set()"),)),
    "cond": Part(setup=("self.cond = threading.Condition()", "self.ready = False"), observe=(("ready", "self.ready"),)),
    "bar": Part(setup=("self.bar = threading.Barrier(2)",), observe=(("broken", "self.bar.broken"),)),
    "q": Part(
        imports=("import queue",),
        setup=("self.q = queue.Queue()",),
        observe=(("q", "list(self.q.queue)"), ("unfinished", "self.q.unfinished_tasks")),
    ),
    "time": Part(imports=("import time",)),
    "operator": Part(imports=("import operator",)),
    "functools": Part(imports=("import functools",)),
}
"""The shared state, by name; a program's file holds the parts its steps need (and what those need)."""


def _k(*lines: str, needs: str = "", blocks: bool = False, guard: str = "") -> StepKind:
    return StepKind(tuple(lines), tuple(needs.split()), blocks, guard)


STEPS: dict[str, StepKind] = {
    # local computation and a sleep, in every program
    "local": _k("v = v * 2 + {c}"),
    "sleep": _k("time.sleep(0)", needs="time"),
    # an object's attributes
    "read_x": _k("seen += (v := self.box.x,)", needs="box"),
    "write_x": _k("self.box.x = v + {c}", needs="box"),
    "incr_x": _k("self.box.x += {c}", needs="box"),
    "getattr_y": _k('seen += (v := getattr(self.box, "y", -1),)', needs="box"),
    "setattr_y": _k('setattr(self.box, "y", v + {c})', needs="box"),
    "has_z": _k('seen += (hasattr(self.box, "z"),)', needs="box box_vars"),
    "add_z": _k("self.box.z = {c}", needs="box box_vars"),
    "del_z": _k("try:", "    del self.box.z", "except AttributeError:", '    seen += ("no z",)', needs="box box_vars"),
    "vars_box": _k("seen += (sorted(vars(self.box)),)", needs="box box_vars"),
    # a dict's items and keys
    "read_item": _k('seen += (v := self.d["k"],)', needs="d"),
    "write_item": _k('self.d["k"] = v + {c}', needs="d"),
    "get_j": _k('seen += (v := self.d.get("j", -1),)', needs="d"),
    "add_j": _k('self.d["j"] = {c}', needs="d"),
    "setdefault_j": _k('seen += (v := self.d.setdefault("j", {c}),)', needs="d"),
    "pop_j": _k('seen += (self.d.pop("j", None),)', needs="d"),
    "in_j": _k('seen += ("j" in self.d,)', needs="d"),
    "len_d": _k("seen += (len(self.d),)", needs="d"),
    "sorted_d": _k("seen += (sorted(self.d.items()),)", needs="d"),
    "update_d": _k("self.d.update(k={c})", needs="d"),
    "iter_d": _k("for key in self.d:", "    v += len(key)", needs="d"),
    # a list's items, and the list whole
    "read_list": _k("seen += (v := self.items[0],)", needs="items"),
    "write_list": _k("self.items[0] = v + {c}", needs="items"),
    "append": _k("self.items.append({c})", needs="items"),
    "length": _k("seen += (v := len(self.items),)", needs="items"),
    "last": _k("seen += (v := self.items[-1],)", needs="items"),
    "sorted_list": _k("seen += (sorted(self.items),)", needs="items"),
    "max_list": _k("seen += (v := max(self.items),)", needs="items"),
    "sum_list": _k("seen += (v := sum(self.items),)", needs="items"),
    "insert": _k("self.items.insert(0, {c})", needs="items"),
    "pop": _k("seen += (self.items.pop(),)", needs="items"),
    "extend": _k("self.items.extend([{c}, v])", needs="items"),
    "iter_list": _k("for e in self.items:", "    v += e", needs="items"),
    "slice": _k("seen += (self.items[1:],)", needs="items"),
    "sort": _k("self.items.sort(reverse=True)", needs="items"),
    # a deque
    "dq_append": _k("self.dq.append({c})", needs="dq"),
    "dq_appendleft": _k("self.dq.appendleft(v)", needs="dq"),
    "dq_popleft": _k("seen += (v := self.dq.popleft(),)", needs="dq"),
    "dq_first": _k("seen += (v := self.dq[0],)", needs="dq"),
    "dq_len": _k("seen += (len(self.dq),)", needs="dq"),
    "dq_list": _k("seen += (list(self.dq),)", needs="dq"),
    "dq_rotate": _k("self.dq.rotate(1)", needs="dq"),
    "dq_iter": _k("for e in self.dq:", "    v += e", needs="dq"),
    # module globals
    "read_global": _k("seen += (v := G,)", needs="globals"),
    "write_global": _k("G = v + {c}", needs="globals"),
    "incr_global": _k("G += {c}", needs="globals"),
    "reg_append": _k("REG.append({c})", needs="globals"),
    "reg_len": _k("seen += (len(REG),)", needs="globals"),
    "reg_rebind": _k("REG = [*REG, {c}]", needs="globals"),
    # a closure cell
    "cell_bump": _k("self.bump({c})", needs="cell"),
    "cell_peek": _k("seen += (v := self.peek(),)", needs="cell"),
    "cell_reset": _k("self.reset()", needs="cell"),
    "bag_put": _k("self.put({c})", needs="bag"),
    "bag_swap": _k("self.swap({c})", needs="bag"),
    "bag_look": _k("seen += (self.look(),)", needs="bag"),
    # containers nested in objects
    "inner_append": _k("self.box.inner.append({c})", needs="nested"),
    "inner_len": _k("seen += (len(self.box.inner),)", needs="nested"),
    "inner_last": _k("seen += (v := self.box.inner[-1],)", needs="nested"),
    "inner_replace": _k("self.box.inner = [v]", needs="nested"),
    "tags_write": _k('self.box.tags["k"] = {c}', needs="nested"),
    "tags_get": _k('seen += (v := self.box.tags.get("k", -1),)', needs="nested"),
    "store_append": _k("self.holder.store.items.append({c})", needs="holder"),
    "store_len": _k("seen += (len(self.holder.store.items),)", needs="holder"),
    "store_swap": _k("self.holder.store = Store()", needs="holder"),
    # shared generators and a coroutine
    "gen_next": _k("seen += (v := next(self.gen),)", needs="gen"),
    "gen_send": _k("seen += (v := self.gen.send({c}),)", needs="gen"),
    "gen_dunder": _k("seen += (v := self.gen.__next__(),)", needs="gen"),
    "gen_throw": _k("seen += (v := self.gen.throw(KeyError),)", needs="gen"),
    "gen_close": _k("self.gen.close()", needs="gen"),
    "watch_next": _k("seen += (v := next(self.watch),)", needs="watch"),
    "coro_send": _k("self.coro.send(None)", needs="coro"),
    # callables
    "method": _k("seen += (self.box.add({c}),)", needs="box"),
    "partial_setup": _k("seen += (self.add_two(),)", needs="partial"),
    "partial_inline": _k("seen += (functools.partial(self.box.add, {c})(),)", needs="box functools"),
    "methodcaller": _k('operator.methodcaller("append", {c})(self.items)', needs="items operator"),
    "bound_builtin": _k("self.push({c})", needs="push"),
    "map_call": _k("seen += (list(map(self.box.add, [{c}])),)", needs="box"),
    "lambda": _k("self.inc({c})", needs="inc"),
    # a module not under test
    "op_add_to": _k("opaque.add_to(self.items, {c})", needs="opaque items"),
    "op_bump": _k("opaque.bump(self.box, {c})", needs="opaque box"),
    "op_peek": _k("seen += (v := opaque.peek(self.box),)", needs="opaque box"),
    "op_store": _k("opaque.store_deep(self.holder, {c})", needs="opaque holder"),
    "op_record": _k("opaque.record({c})", needs="opaque"),
    "op_logged": _k("seen += (opaque.logged(),)", needs="opaque"),
    "op_total": _k("seen += (v := opaque.total(self.items),)", needs="opaque items"),
    "op_call": _k("seen += (opaque.call(self.box.add, {c}),)", needs="opaque box"),
    # class state
    "cls_read": _k("seen += (v := Box.count,)", needs="count"),
    "cls_write": _k("Box.count = v + {c}", needs="count"),
    "cls_instance": _k("seen += (v := self.box.count,)", needs="count"),
    "cls_incr": _k("type(self.box).count += {c}", needs="count"),
    "cls_shadow": _k("self.box.count = {c}", needs="count"),
    "cls_method": _k("Box.tally({c})", needs="count"),
    # primitives: a guard around other steps, or a step of their own
    "locked": _k("with self.lock:", needs="lock", guard="lock"),
    "rlocked": _k("with self.rlock:", "    with self.rlock:", needs="rlock", guard="rlock"),
    "sem_held": _k("with self.sem:", needs="sem", guard="sem"),
    "cond_held": _k("with self.cond:", needs="cond", guard="cond"),
    "lock_locked": _k("seen += (self.lock.locked(),)", needs="lock"),
    "lock_try": _k(
        "if self.lock.acquire(blocking=False):", '    seen += ("got",)', "    self.lock.release()", needs="lock"
    ),
    "sem_value": _k("seen += (self.sem._value,)", needs="sem"),
    "sig_release": _k("self.sig.release()", needs="sig"),
    "sig_acquire": _k("self.sig.acquire()", needs="sig", blocks=True),
    "sig_try": _k("seen += (self.sig.acquire(blocking=False),)", needs="sig"),
    "set_event": _k("self.ev.set()", needs="ev"),
    "clear_event": _k("self.ev.clear()", needs="ev"),
    "event_is_set": _k("seen += (self.ev.is_set(),)", needs="ev"),
    "wait_event": _k("self.ev.wait()", needs="ev", blocks=True),
    "notify": _k("with self.cond:", "    self.ready = True", "    self.cond.notify_all()", needs="cond"),
    "notify_one": _k("with self.cond:", "    self.ready = True", "    self.cond.notify()", needs="cond"),
    "wait_cond": _k(
        "with self.cond:", "    while not self.ready:", "        self.cond.wait()", needs="cond", blocks=True
    ),
    "wait_for": _k("with self.cond:", "    self.cond.wait_for(lambda: self.ready)", needs="cond", blocks=True),
    "bar_wait": _k("seen += (self.bar.wait(),)", needs="bar", blocks=True),
    "bar_waiting": _k("seen += (self.bar.n_waiting,)", needs="bar"),
    "bar_broken": _k("seen += (self.bar.broken,)", needs="bar"),
    "bar_abort": _k("self.bar.abort()", needs="bar"),
    "q_put": _k("self.q.put({c})", needs="q"),
    "q_get": _k("seen += (v := self.q.get(),)", needs="q", blocks=True),
    "q_size": _k("seen += (self.q.qsize(),)", needs="q"),
    "q_empty": _k("seen += (self.q.empty(),)", needs="q"),
    "q_nowait": _k(
        "try:", "    seen += (v := self.q.get_nowait(),)", "except queue.Empty:", '    seen += ("empty",)', needs="q"
    ),
    "q_done": _k("self.q.task_done()", needs="q"),
    "q_unfinished": _k("seen += (self.q.unfinished_tasks,)", needs="q"),
    "q_items": _k("seen += (list(self.q.queue),)", needs="q"),
}
"""Every kind of step, by name."""


PLACES: dict[str, tuple[str, ...]] = {
    "attribute": ("read_x", "write_x", "incr_x", "method"),
    "attributes by name": ("getattr_y", "setattr_y", "has_z", "add_z", "del_z", "vars_box", "read_x"),
    "dict item": ("read_item", "write_item", "update_d", "sorted_d"),
    "dict keys": ("get_j", "add_j", "setdefault_j", "pop_j", "in_j", "len_d", "iter_d"),
    "list items": ("read_list", "write_list", "last", "slice", "insert", "pop"),
    "list whole": ("append", "length", "sorted_list", "max_list", "sum_list", "extend", "iter_list", "sort"),
    "deque": ("dq_append", "dq_appendleft", "dq_popleft", "dq_first", "dq_len", "dq_list", "dq_rotate", "dq_iter"),
    "global": ("read_global", "write_global", "incr_global"),
    "global list": ("reg_append", "reg_len", "reg_rebind", "read_global"),
    "cell": ("cell_bump", "cell_peek", "cell_reset"),
    "cell holding a list": ("bag_put", "bag_swap", "bag_look"),
    "nested": ("inner_append", "inner_len", "inner_last", "inner_replace", "tags_write", "tags_get", "read_x"),
    "nested deep": ("store_append", "store_len", "store_swap"),
    "generator": ("gen_next", "gen_send", "gen_dunder", "gen_throw", "gen_close"),
    "generator reading": ("watch_next", "write_x", "incr_x", "coro_send", "getattr_y"),
    "callables": ("method", "partial_setup", "partial_inline", "map_call", "lambda", "read_x", "write_x"),
    "built-in callables": ("methodcaller", "bound_builtin", "length", "last"),
    "module not under test": ("op_bump", "op_peek", "op_call", "read_x", "write_x"),
    "module not under test, containers": ("op_add_to", "op_total", "op_store", "store_len", "length", "append"),
    "module not under test, its globals": ("op_record", "op_logged"),
    "class state": ("cls_read", "cls_write", "cls_instance", "cls_incr", "cls_shadow", "cls_method"),
    "lock": ("lock_locked", "lock_try"),
    "semaphore": ("sem_value", "sig_release", "sig_acquire", "sig_try"),
    "event": ("set_event", "clear_event", "event_is_set", "wait_event"),
    "condition": ("notify", "notify_one", "wait_cond", "wait_for"),
    "barrier": ("bar_wait", "bar_waiting", "bar_broken", "bar_abort"),
    "queue": ("q_put", "q_get", "q_size", "q_empty", "q_nowait", "q_done", "q_unfinished", "q_items"),
}
"""The places a program's steps meet at, each with its steps: a program draws one to three, so its actors share
state; ``local`` and ``sleep`` are open to every program, and so is one guard (:data:`GUARDS`)."""


GUARDS = ("locked", "rlocked", "sem_held", "cond_held")
"""The steps that take a primitive around one or two other steps (never around a step that blocks or takes a
primitive itself)."""


def points(kind: str, granularity: str) -> int:
    """The scheduling points ``kind`` adds at ``granularity`` (:data:`POINTS`, measured), or 2 if not measured."""
    measured = POINTS.get(kind)
    if measured is None:
        return 2
    return measured[0] if granularity == "line" else measured[1]


POINTS: dict[str, tuple[int, int]] = {
    "local": (0, 0),
    "sleep": (2, 2),
    "read_x": (1, 2),
    "write_x": (1, 2),
    "incr_x": (1, 3),
    "getattr_y": (1, 2),
    "setattr_y": (1, 2),
    "has_z": (1, 2),
    "add_z": (1, 2),
    "del_z": (1, 2),
    "vars_box": (1, 3),
    "read_item": (1, 2),
    "write_item": (1, 2),
    "get_j": (1, 2),
    "add_j": (1, 2),
    "setdefault_j": (1, 2),
    "pop_j": (1, 2),
    "in_j": (1, 2),
    "len_d": (1, 2),
    "sorted_d": (1, 5),
    "update_d": (1, 2),
    "iter_d": (2, 3),
    "read_list": (1, 2),
    "write_list": (1, 2),
    "append": (1, 2),
    "length": (1, 2),
    "last": (1, 2),
    "sorted_list": (1, 3),
    "max_list": (1, 3),
    "sum_list": (1, 3),
    "insert": (1, 2),
    "pop": (1, 2),
    "extend": (1, 3),
    "iter_list": (2, 3),
    "slice": (1, 2),
    "sort": (1, 3),
    "dq_append": (1, 2),
    "dq_appendleft": (1, 2),
    "dq_popleft": (1, 2),
    "dq_first": (1, 2),
    "dq_len": (1, 2),
    "dq_list": (1, 2),
    "dq_rotate": (1, 2),
    "dq_iter": (2, 3),
    "read_global": (1, 1),
    "write_global": (1, 1),
    "incr_global": (1, 2),
    "reg_append": (1, 2),
    "reg_len": (1, 2),
    "reg_rebind": (1, 3),
    "cell_bump": (3, 3),
    "cell_peek": (2, 2),
    "cell_reset": (2, 2),
    "bag_put": (2, 3),
    "bag_swap": (2, 4),
    "bag_look": (2, 3),
    "inner_append": (1, 3),
    "inner_len": (1, 3),
    "inner_last": (1, 3),
    "inner_replace": (1, 2),
    "tags_write": (1, 3),
    "tags_get": (1, 3),
    "store_append": (1, 4),
    "store_len": (1, 4),
    "store_swap": (1, 3),
    "gen_next": (5, 2),
    "gen_send": (1, 2),
    "gen_dunder": (1, 2),
    "gen_throw": (1, 3),
    "gen_close": (1, 2),
    "watch_next": (3, 3),
    "coro_send": (2, 4),
    "method": (3, 3),
    "partial_setup": (3, 3),
    "partial_inline": (3, 4),
    "methodcaller": (1, 3),
    "bound_builtin": (1, 2),
    "map_call": (4, 6),
    "lambda": (2, 5),
    "op_add_to": (1, 3),
    "op_bump": (1, 3),
    "op_peek": (1, 3),
    "op_store": (1, 3),
    "op_record": (1, 2),
    "op_logged": (1, 2),
    "op_total": (1, 3),
    "op_call": (4, 5),
    "cls_read": (1, 1),
    "cls_write": (1, 1),
    "cls_instance": (1, 2),
    "cls_incr": (1, 4),
    "cls_shadow": (1, 2),
    "cls_method": (2, 3),
    "locked": (4, 3),
    "rlocked": (8, 6),
    "sem_held": (4, 3),
    "cond_held": (4, 3),
    "lock_locked": (1, 1),
    "lock_try": (4, 4),
    "sem_value": (1, 2),
    "sig_release": (2, 2),
    "sig_acquire": (1, 2),
    "sig_try": (2, 2),
    "set_event": (2, 2),
    "clear_event": (2, 2),
    "event_is_set": (1, 1),
    "wait_event": (1, 2),
    "notify": (7, 6),
    "notify_one": (7, 6),
    "wait_cond": (4, 5),
    "wait_for": (4, 5),
    "bar_wait": (1, 2),
    "bar_waiting": (1, 2),
    "bar_broken": (1, 2),
    "bar_abort": (2, 2),
    "q_put": (2, 2),
    "q_get": (1, 2),
    "q_size": (1, 1),
    "q_empty": (1, 1),
    "q_nowait": (3, 4),
    "q_done": (1, 2),
    "q_unfinished": (1, 2),
    "q_items": (1, 3),
}
"""Measured by ``python -m tests.fuzz.calibrate``: per step, its points at line and at instruction granularity
(a guard's are its own, without its body's)."""
