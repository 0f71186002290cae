"""Initialize / initialized / shutdown, and opening the engine behind the server.

The engine (encrypted store, keychain, providers) opens in the background right after
``initialized`` so that ``initialize`` answers fast; the first request that needs it waits
for it. A failure to open (say, a wrong database key) is shown to the user once and returned
as a clear error by every request — the server itself stays up.
"""

from __future__ import annotations

import gc
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from relavium_lsp.server.methods import SESSION_EVENT, SESSIONS_CHANGED, WORKSPACE_MEMORY_CHANGED

if TYPE_CHECKING:
    from relavium_lsp.contracts.events import StampedEvent
    from relavium_lsp.contracts.memory import WorkspaceMemoryChangedParams
    from relavium_lsp.contracts.wire import SessionListChange
    from relavium_lsp.engine.api import Engine
    from relavium_lsp.server.core import RelaviumServer

_log = logging.getLogger(__name__)


def setup(server: RelaviumServer) -> None:
    """Register the lifecycle handlers."""

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: RelaviumServer, params: types.InitializeParams) -> None:
        # Only stored here: validating needs pydantic, which is not loaded yet (cold start,
        # see relavium_lsp.server.app); settle_initialization validates them right after.
        state = ls.state
        state.client_info_name = params.client_info.name if params.client_info else None
        state.raw_options = params.initialization_options
        experimental = params.capabilities.experimental
        state.raw_client = experimental.get("relavium") if isinstance(experimental, dict) else None

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: RelaviumServer, params: types.InitializedParams) -> None:
        from relavium_lsp.errors import RelaviumError

        ls.load_deferred_features()
        try:
            await get_engine(ls)
        except RelaviumError as exc:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=exc.message)
            )

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: RelaviumServer, params: Any) -> None:
        state = ls.state
        state.shutting_down = True
        async with state.engine_lock:
            if state.engine is not None:
                await state.engine.close()
                state.engine = None


def settle_initialization(ls: RelaviumServer) -> None:
    """Validate what ``initialize`` stored; warn about (and drop) anything invalid."""
    from pydantic import ValidationError

    from relavium_lsp.contracts.wire import InitializationOptions, RelaviumClientCapabilities
    from relavium_lsp.rpc_errors import describe_validation_error

    state = ls.state
    try:
        state.options = InitializationOptions.model_validate(state.raw_options or {})
    except ValidationError as exc:
        warn(ls, describe_validation_error("initializationOptions", exc) + "; using defaults")
    try:
        state.client = RelaviumClientCapabilities.model_validate(state.raw_client or {})
    except ValidationError as exc:
        warn(ls, describe_validation_error("experimental.relavium", exc) + "; ignoring it")


async def get_engine(ls: RelaviumServer) -> Engine:
    """The engine, opened on first use; raises a clear :class:`StoreError` if it cannot be."""
    # Imported here, not at module load: answering `initialize` fast matters more than
    # having the engine's dependencies (store, providers, tools) loaded before it is needed.
    from relavium_lsp.engine.api import open_engine
    from relavium_lsp.errors import StoreError
    from relavium_lsp.server.features.editor_host import LspEditorHost

    state = ls.state
    async with state.engine_lock:
        if state.engine is None:
            if state.shutting_down:
                raise StoreError("the server is shutting down")
            opened = await open_engine(
                LspEditorHost(ls),
                history_path=state.options.history_path,
                approval_override=state.options.approval,
                auto_introspection=True,
            )
            await opened.subscribe(lambda event: _forward(ls, event))
            # Every window hears about list changes, whichever window made them (§3.1).
            opened.watch_sessions(lambda changes: _announce_changes(ls, changes))
            await opened.watch_memory(lambda change: _announce_memory(ls, change))
            state.engine = opened
            # Everything the server keeps for its lifetime is loaded now (pygls, pydantic
            # schemas, the engine): freeze it out of the cyclic GC, whose full collections
            # would otherwise walk it all again, pausing a token stream (issue 25).
            gc.collect()
            gc.freeze()
        return state.engine


def _forward(ls: RelaviumServer, event: StampedEvent) -> None:
    """Send an engine event to the client, then to the server's own taps on its session."""
    # Once per streamed token: skip pygls's converter pass over a dict that is JSON already.
    ls.protocol.notify_json(SESSION_EVENT, event.to_wire())
    ls.state.taps.deliver(event)


def _announce_changes(ls: RelaviumServer, changes: list[SessionListChange]) -> None:
    """Tell the client the session list changed (``relavium/sessionsChanged``)."""
    from relavium_lsp.contracts.wire import SessionsChangedParams

    ls.protocol.notify(SESSIONS_CHANGED, SessionsChangedParams(changes=changes).to_wire())


def _announce_memory(ls: RelaviumServer, change: WorkspaceMemoryChangedParams) -> None:
    """Tell the client a workspace memory has a new revision (any window wrote it)."""
    ls.protocol.notify(WORKSPACE_MEMORY_CHANGED, change.to_wire())


def warn(ls: RelaviumServer, message: str) -> None:
    """Tell the user about a recoverable problem (and log it)."""
    _log.warning("%s", message)
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
