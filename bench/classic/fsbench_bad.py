"""fsbench_bad (SCTBench CS, from Flanagan and Godefroid's DPOR paper): a file-system block allocator.

Each of 27 threads takes the lock of inode ``tid % NUMINODE`` and, if the inode has no block, scans the 26 blocks
from ``(i * 2) % NUMBLOCKS`` for a free one under each block's lock. Uncertain port: the original thread count
(27, one more than there are blocks) is kept and the scan is bounded to one pass that asserts it found a block, so
the last allocator always fails, as SCTBench's fsbench_bad does in every schedule.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 27
NUMBLOCKS = 26
NUMINODE = 32
NUMTHREADS = 27


class State:
    def __init__(self) -> None:
        self.locki = [threading.Lock() for _ in range(NUMINODE)]
        self.inode = [0] * NUMINODE
        self.lockb = [threading.Lock() for _ in range(NUMBLOCKS)]
        self.busy = [False] * NUMBLOCKS


def setup(lab: object) -> State:
    return State()


def allocate(s: State, tid: int) -> None:
    i = tid % NUMINODE
    with s.locki[i]:
        if s.inode[i] == 0:
            b = (i * 2) % NUMBLOCKS
            for _ in range(NUMBLOCKS):
                with s.lockb[b]:
                    if not s.busy[b]:
                        s.busy[b] = True
                        s.inode[i] = b + 1
                        return
                b = (b + 1) % NUMBLOCKS
            raise AssertionError(f"thread {tid} found no free block")


def _actor(tid: int) -> Callable[[State], object]:
    return lambda s: allocate(s, tid)


ACTORS: dict[str, Callable[[State], object]] = {f"t{tid + 1}": _actor(tid) for tid in range(NUMTHREADS)}


def check(s: State) -> dict[str, bool]:
    return {}
