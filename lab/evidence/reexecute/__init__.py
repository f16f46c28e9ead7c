"""Running scenarios contained: a worker process per scenario file, and an archived folder run again and compared."""
