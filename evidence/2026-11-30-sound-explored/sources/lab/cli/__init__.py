"""The lab's command line: ``lab`` or ``python -m lab``, one module per subcommand (:mod:`lab.cli.app`)."""

from __future__ import annotations

from lab.cli.app import main

__all__ = ["main"]
