"""Re-verify an archived evidence folder (not written yet: evidence comes with the scheduler)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    print("no evidence format yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
