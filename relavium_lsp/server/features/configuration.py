"""``workspace/didChangeConfiguration``: the editor's relavium settings changed.

A client may send ``{"relavium": {"defaultAgent": …, "approval": …}}``; both apply to sessions
started afterwards, like the same ``initializationOptions``. Settings without a ``relavium``
section (most clients send ``{}`` or their own sections) are nothing to do, not a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pydantic import ValidationError

from relavium_lsp.contracts.base import validate_request
from relavium_lsp.contracts.wire import ConfigurationSettings
from relavium_lsp.rpc_errors import describe_validation_error
from relavium_lsp.server.features.lifecycle import warn

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer

SECTION = "relavium"


def setup(server: RelaviumServer) -> None:
    """Register the configuration notification."""

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_change(ls: RelaviumServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        section = settings.get(SECTION) if isinstance(settings, dict) else None
        if section is None:
            return
        try:
            changed = validate_request(ConfigurationSettings, section)
        except ValidationError as exc:
            warn(ls, describe_validation_error(f"settings.{SECTION}", exc) + "; ignoring them")
            return
        apply_settings(ls, changed)


def apply_settings(ls: RelaviumServer, changed: ConfigurationSettings) -> None:
    """Use the settings the client sent (fields it left out keep their value)."""
    state = ls.state
    updates = {name: getattr(changed, name) for name in changed.model_fields_set}
    state.options = state.options.model_copy(update=updates)
    if "approval" in updates and state.engine is not None:
        state.engine.set_approval_override(changed.approval)
