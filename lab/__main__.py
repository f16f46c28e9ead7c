"""``python -m lab``: the lab's command line (:mod:`lab.cli`); ``lab`` is the same, as a console script."""

from __future__ import annotations

import sys

from lab.cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m lab"))
