"""``python -m lab``: the lab's command line (today: ``chat``); all the work is in :mod:`lab.console`."""

from __future__ import annotations

import sys

from lab.console import main

if __name__ == "__main__":
    sys.exit(main())
