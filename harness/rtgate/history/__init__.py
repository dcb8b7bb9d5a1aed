"""Latency history across kernel releases: a SQLite store, and noise-robust comparisons."""
