"""Run the lab's scenarios into a new evidence folder (not written yet: the scheduler comes first)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    print("no scenarios yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
