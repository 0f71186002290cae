"""The engine's front door, part 5: exporting and replaying sessions.

Mixed into :class:`~relavium_lsp.engine.api.Engine`.
"""

from __future__ import annotations

from relavium_lsp.engine.api_base import EngineBase
from relavium_lsp.engine.history import exports
from relavium_lsp.engine.history.replay import replay_session
from relavium_lsp.export.documents import UNTITLED, ExportFormat, ExportOutcome
from relavium_lsp.export.replay import ReplayReport


class Exporting(EngineBase):
    """Export and replay (part of :class:`~relavium_lsp.engine.api.Engine`)."""

    # -- export and replay ------------------------------------------------------------------

    async def render_export(self, session_id: str, fmt: ExportFormat = "workflow") -> ExportOutcome:
        """Build an export (workflow scaffold or JSONL) without recording anything."""
        return await exports.render(self._services, session_id, fmt)

    async def announce_export(
        self, session_id: str, fmt: ExportFormat, location: str = UNTITLED
    ) -> None:
        """Record where an export went (a path or ``untitled``) and emit ``session:exported``."""
        await exports.announce(self._services, self._live, session_id, fmt, location)

    async def note_saved_export(self, path: str, text: str) -> str | None:
        """Record a saved ``*.relavium.yaml`` scaffold as its session's export (if it is one)."""
        return await exports.note_saved_export(self._services, self._live, path, text)

    async def replay(self, session_id: str, *, live_tools: bool = False) -> ReplayReport:
        """Re-run a session against its own recordings and compare (the session is untouched)."""
        return await replay_session(self._services, self._live, session_id, live_tools=live_tools)
