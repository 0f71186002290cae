"""Everything the server remembers about its client and editor, in one object."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from relavium_lsp.contracts.wire import (
    InitializationOptions,
    LspRange,
    RelaviumClientCapabilities,
)

if TYPE_CHECKING:
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
    """Per-connection state. Tests can build one and hand it to ``create_server``."""

    options: InitializationOptions = field(default_factory=InitializationOptions)
    client: RelaviumClientCapabilities = field(default_factory=RelaviumClientCapabilities)
    focus: EditorFocus = field(default_factory=EditorFocus)
    client_info_name: str | None = None
    engine: Engine | None = None
    engine_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Set by the ``shutdown`` request: the engine is closed then and must not open again.
    shutting_down: bool = False
