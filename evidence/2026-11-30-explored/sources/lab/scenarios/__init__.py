"""Scenarios: the lesson format (``Scenario``, ``Lab``), the loader, and the runner that grades one run."""
