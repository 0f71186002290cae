"""Everything the server remembers about its client and editor, in one object."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Only for annotations: importing the contracts (and pydantic) is deferred past
    # ``initialize`` (see relavium_lsp.server.app); the defaults below load them on first use.
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
