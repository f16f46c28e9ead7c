"""A scenario file's code: compiled with the one set of flags the loader always used, and, in a contained process
about to fork the workers that load them, compiled ahead once for all of them.

The flags are explicit: a scenario file is compiled with ``from __future__ import annotations`` in force (the
loader's own future statement was inherited by its ``compile`` call before this module existed; it is kept).
"""

from __future__ import annotations
import __future__

import warnings
from collections.abc import Iterable
from pathlib import Path
from types import CodeType

FLAGS = __future__.annotations.compiler_flag
"""The compiler flags of every scenario file."""
_AHEAD: dict[tuple[str, str], CodeType] = {}
"""Code compiled by :func:`compile_ahead`, by the path and the very text it was compiled from."""
_AHEAD_CAP = 1 << 18
"""The largest file compiled ahead; a larger one is compiled by the worker that loads it."""


def compiled(source: str, path: Path) -> CodeType:
    """The code of scenario file ``path`` whose text is ``source``: compiled ahead if it was, from this very text
    (each worker loads its file once), else now. Raises what ``compile`` raises."""
    code = _AHEAD.pop((str(path), source), None)
    return code if code is not None else compile(source, str(path), "exec", flags=FLAGS, dont_inherit=True)


def compile_ahead(paths: Iterable[Path]) -> None:
    """Compile the scenario files ``paths`` now, once, for the workers this process is about to fork: a worker that
    then loads one finds its code made (compiling is a fifth of a small scenario's load) if the file still holds
    the text compiled; otherwise, or for a file that did not compile cleanly, the worker compiles it as ever.

    Compiling runs none of a file's code, but a hostile file can still make the compiler work hard or fail, so
    only a contained process calls this: the re-execution child (:mod:`lab.evidence.reexecute.rerun`), never a
    run's parent, which no scenario may harm. A compile that warns (``SyntaxWarning``) is left to the worker, so
    the warning is printed where it always was."""
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
            if len(source) > _AHEAD_CAP:
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                code = compile(source, str(path), "exec", flags=FLAGS, dont_inherit=True)
        except Exception:  # the worker meets the same problem, and reports it as the scenario's
            continue
        if not caught:
            _AHEAD[(str(path), source)] = code


__all__ = ["FLAGS", "compile_ahead", "compiled"]
