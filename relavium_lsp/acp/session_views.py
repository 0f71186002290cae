"""Which sessions this connection follows, and how their stored history is replayed.

Engine events are forwarded to the client only for sessions it opened, loaded, resumed or
prompted through this connection. For those, the view keeps what the update mapping needs
synchronously (the model's context window for ``usage_update``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from relavium_lsp.acp.outbox import SessionUpdate
from relavium_lsp.acp.replay import replay_updates
from relavium_lsp.acp.tool_calls import CallDescription, describe_call
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.contracts.wire import MAX_PAGE
from relavium_lsp.engine.api import Engine, SessionSnapshot
from relavium_lsp.tools.bounding import sanitize_input
from relavium_lsp.tools.registry import ToolRegistry


async def visible_history(engine: Engine, session_id: str) -> list[SessionMessage]:
    """Every visible message of a session, oldest first (paged from the newest back)."""
    pages: list[list[SessionMessage]] = []
    before: int | None = None
    while True:
        page, has_more = await engine.transcript(session_id, before_sequence=before, limit=MAX_PAGE)
        if page:
            pages.append(page)
        if not has_more or not page:
            break
        before = page[0].sequence_number
    return [message for page in reversed(pages) for message in page]


class SessionViews:
    """The sessions a connection follows."""

    def __init__(self) -> None:
        self._windows: dict[str, int] = {}
        self._registry: ToolRegistry | None = None

    def bind(self, registry: ToolRegistry) -> None:
        """Remember the tool registry once the engine is open."""
        self._registry = registry

    def attach(self, session: SessionSnapshot) -> None:
        """Follow a session's events from now on."""
        self._windows[session.id] = session.context_window

    def detach(self, session_id: str) -> None:
        """Stop following a session."""
        self._windows.pop(session_id, None)

    def is_attached(self, session_id: str) -> bool:
        """Whether the session's events go to this client."""
        return session_id in self._windows

    def context_window(self, session_id: str) -> int | None:
        """The followed session's context window in tokens."""
        return self._windows.get(session_id)

    async def replay(self, engine: Engine, session: SessionSnapshot) -> list[SessionUpdate]:
        """The updates that rebuild the session's visible history on the client."""
        messages = await visible_history(engine, session.id)
        registry = self._registry
        roots = await engine.tool_roots(session.id)

        def describe(tool: str, args: dict[str, Any]) -> CallDescription:
            return describe_call(tool, args, roots)

        def sanitize(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            definition = registry.get(tool) if registry is not None else None
            if definition is None:
                return sanitize_input(args)
            return sanitize_input(
                args,
                summarized=definition.summarized_fields,
                redacted=definition.redacted_fields,
            )

        # Resolving locations touches the filesystem: keep it off the event loop.
        return await asyncio.to_thread(
            replay_updates, messages, describe=describe, sanitize=sanitize
        )
