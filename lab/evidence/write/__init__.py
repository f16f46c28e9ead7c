"""Writing a new evidence folder: the writer, and where the run came from."""
