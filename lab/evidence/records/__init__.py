"""The evidence folder's format: its paths, the records and their schema, the manifest and signatures, and safe reading."""
