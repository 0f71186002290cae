"""Benchmarks: runnable modules (``python -m bench.<name>``) that print numbers and ratios."""
