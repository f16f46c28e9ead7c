"""The lab's knowledge of built-ins: which C functions only read their arguments, which methods of built-in types
only read their receiver, and what resumes a generator. One table, each entry of it checked by
``tests/test_builtin_footprints.py`` against what the call really does (a wrong entry fails a test there); a callee
no table names is charged as code the lab cannot see (:mod:`lab.engine.record._calls`).
"""

from __future__ import annotations

import _pickle
import builtins
import collections
import copy
import json
import marshal
import types

READING_FUNCTIONS: frozenset[object] = frozenset(
    {
        *(builtins.abs, builtins.all, builtins.any, builtins.ascii, builtins.bin, builtins.callable, builtins.chr),
        *(builtins.divmod, builtins.format, builtins.hash, builtins.hex, builtins.id, builtins.isinstance),
        *(builtins.issubclass, builtins.iter, builtins.len, builtins.max, builtins.min, builtins.oct, builtins.ord),
        *(builtins.pow, builtins.repr, builtins.round, builtins.sorted, builtins.sum, builtins.print),
        *(_pickle.dumps, _pickle.loads, marshal.dumps, marshal.loads),
        *(json.dumps, json.loads, copy.copy, copy.deepcopy),
    }
)
"""Functions (by identity) that read their arguments and change none of them: C functions of ``builtins``,
``_pickle`` and ``marshal``, and the standard library's ``json.dumps``, ``json.loads``, ``copy.copy`` and
``copy.deepcopy`` (which the lab's sessions call; ``print`` writes only to the terminal). Those that read what their
arguments hold, not only the arguments, are :data:`lab.engine.record._deep.DEEP_READERS` too. A generator handed to
any of them is resumed, which writes it (see :data:`RESUMING`)."""


KNOWN_RECEIVERS: tuple[type, ...] = (
    *(list, dict, set, frozenset, tuple, str, bytes, bytearray, int, float, complex, range),
    *(collections.deque, collections.OrderedDict, collections.defaultdict),
)
"""The built-in types whose C methods the table knows (and their subclasses' objects): each method reads its
receiver when :data:`READ_ONLY_METHODS` names it, else writes it, and reads its arguments. A C method of any other
type (``sqlite3.Connection.execute``, ``io.StringIO.write``, ``random.Random.random``) is code the lab cannot see."""


READ_ONLY_METHODS = frozenset(
    {
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "count",
        "index",
        "locked",
        "is_set",
        "__len__",
        "__contains__",
        "__getitem__",
        "__iter__",
        "startswith",
        "endswith",
        "join",
        "split",
        "strip",
        "format",
        "encode",
        "decode",
        "issubset",
        "issuperset",
        "isdisjoint",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__repr__",
        "__str__",
        "__format__",
    }
)
"""Methods of built-in types that only read their receiver."""


async def _coroutine() -> None:
    """Only for its types: a coroutine, and the wrapper its ``__await__`` returns."""


def _generator_types() -> frozenset[type]:
    coroutine = _coroutine()
    wrapper = coroutine.__await__()
    found: frozenset[type] = frozenset(
        {types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, type(wrapper)}
    )
    coroutine.close()
    return found


GENERATOR_TYPES = _generator_types()
"""Objects with a frame of their own that a call resumes: generators, coroutines (and what ``__await__`` returns)."""


RESUMING = frozenset({"send", "throw", "close", "__next__"})
"""What resumes a generator or coroutine: while it runs, the generator is being executed, and another actor resuming
it meanwhile raises ValueError ("generator already executing"). Each such call writes the generator object, and
holds that write open for every step its body takes."""
