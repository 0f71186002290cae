"""Stored history as engine operations: export, import, fork, replay, checkpoints, rewind."""
