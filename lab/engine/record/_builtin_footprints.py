"""The lab's knowledge of built-ins: which C functions only read their arguments, which methods of built-in types
only read their receiver, and what resumes a generator. One table, each entry of it checked by
``tests/test_builtin_footprints.py`` against what the call really does (a wrong entry fails a test there); a callee
no table names is charged as code the lab cannot see (:mod:`lab.engine.record._calls`).
"""

from __future__ import annotations

import types

PURE_BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "bool",
        "callable",
        "chr",
        "divmod",
        "enumerate",
        "filter",
        "format",
        "frozenset",
        "hash",
        "hex",
        "id",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "map",
        "max",
        "min",
        "oct",
        "ord",
        "pow",
        "repr",
        "reversed",
        "round",
        "sorted",
        "sum",
        "zip",
        "type",
        "str",
        "int",
        "float",
        "tuple",
        "list",
        "dict",
        "set",
        "bytes",
        "print",
        "dumps",
        "loads",
        "deepcopy",
        "copy",
    }
)
"""C functions that read their arguments and change none of them (``print`` writes only to the terminal)."""


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
