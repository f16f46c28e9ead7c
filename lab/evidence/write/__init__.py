"""Writing a new evidence folder: the writer, where the run came from, and one isolated worker per scenario."""
