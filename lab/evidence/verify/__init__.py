"""Verifying an evidence folder: integrity, consistency, archived sources, and what the auditor re-derives."""
