"""Tiny racy programs and their correct twins: the proof that the explorer's reduction loses no outcome.

Each file (except the helpers, whose names start with ``_``) is a scenario in the lab's format, small enough that a
naive enumeration of every schedule stays cheap; ``tests/test_soundness.py`` explores each one with and without
reduction and at every granularity. ``_shared.py`` is a helper module in this folder (so it is under test with the
scenarios that import it); ``_elsewhere/`` holds a helper the lab does not instrument.
"""
