"""Who hears that a session's turn begins and settles, whatever started it (§2.5).

A turn starts from the editor (``Engine.send``), from a delegating parent or from a peer message;
the automatic introspection passes (:mod:`relavium_lsp.engine.memory.introspection_triggers`) must
hear of every one, so the session itself tells its :class:`TurnWatch`.
"""

from __future__ import annotations

from typing import Protocol


class TurnWatch(Protocol):
    """Told around every turn of the sessions a process serves."""

    async def turn_begins(self, session_id: str) -> None:
        """A turn is about to start: returns once nothing else works on the session."""

    def turn_settled(self, session_id: str) -> None:
        """The turn settled (completed, failed or aborted)."""
