"""Everything the server remembers about its client and editor, in one object."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Only for annotations: importing the contracts (and pydantic) is deferred past
    # ``initialize`` (see relavium_lsp.server.app); the defaults below load them on first use.
    from relavium_lsp.contracts.events import StampedEvent
    from relavium_lsp.contracts.wire import (
        InitializationOptions,
        LspRange,
        RelaviumClientCapabilities,
    )
    from relavium_lsp.engine.api import Engine


@dataclass
class EditorFocus:
    """The client's most recent active document and selection."""

    uri: str | None = None
    selection: LspRange | None = None
    # Most recently opened or changed document, for clients that never send editor state.
    last_touched_uri: str | None = None


EventTap = Callable[["StampedEvent"], None]


class SessionEventTaps:
    """Server-side listeners on one session's events, called after the client was notified.

    Turn progress and accepted turns watch their session here instead of subscribing to the
    engine one by one.
    """

    def __init__(self) -> None:
        self._taps: dict[str, list[EventTap]] = {}

    def add(self, session_id: str, tap: EventTap) -> Callable[[], None]:
        """Call ``tap`` with each later event of the session; returns the removal."""
        self._taps.setdefault(session_id, []).append(tap)

        def remove() -> None:
            taps = self._taps.get(session_id, [])
            if tap in taps:
                taps.remove(tap)
            if not taps:
                self._taps.pop(session_id, None)

        return remove

    def deliver(self, event: StampedEvent) -> None:
        """Hand ``event`` to its session's taps."""
        for tap in list(self._taps.get(event.session_id, ())):
            tap(event)


@dataclass
class ServerState:
    """Per-connection state. Tests can build one and hand it to ``create_server``.

    ``initialize`` stores the client's raw ``initializationOptions`` and
    ``experimental.relavium`` here; ``lifecycle.settle_initialization`` validates them into
    :attr:`options` and :attr:`client` once pydantic is loaded. Until then (or if nothing was
    sent) both read as their defaults.
    """

    focus: EditorFocus = field(default_factory=EditorFocus)
    client_info_name: str | None = None
    engine: Engine | None = None
    engine_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Set by the ``shutdown`` request: the engine is closed then and must not open again.
    shutting_down: bool = False
    raw_options: Any = None
    raw_client: Any = None
    _options: InitializationOptions | None = field(default=None, repr=False)
    _client: RelaviumClientCapabilities | None = field(default=None, repr=False)
    taps: SessionEventTaps = field(default_factory=SessionEventTaps)
    # Turns answered before they settled (sendMessage with wait: false), held until they do.
    background_turns: set[asyncio.Task[None]] = field(default_factory=set)
    # The chat that the code actions on a selection talk to (started on first use).
    code_action_session: str | None = None

    @property
    def options(self) -> InitializationOptions:
        """The validated initialization options (defaults until settled)."""
        if self._options is None:
            from relavium_lsp.contracts.wire import InitializationOptions

            self._options = InitializationOptions()
        return self._options

    @options.setter
    def options(self, value: InitializationOptions) -> None:
        self._options = value

    @property
    def client(self) -> RelaviumClientCapabilities:
        """The client's declared relavium capabilities (defaults until settled)."""
        if self._client is None:
            from relavium_lsp.contracts.wire import RelaviumClientCapabilities

            self._client = RelaviumClientCapabilities()
        return self._client

    @client.setter
    def client(self, value: RelaviumClientCapabilities) -> None:
        self._client = value

    @property
    def plain_client(self) -> bool:
        """Whether the client implements none of the relavium extensions (shows no events)."""
        client = self.client
        return not (client.approvals or client.open_untitled or client.editor_state)
