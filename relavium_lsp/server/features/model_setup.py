"""``relavium/listProviderPresets`` and ``relavium/setupModel``: set up a model from the editor.

Thin: the engine's ``provider_presets`` and ``setup_model`` (``engine/model_setup.py``) do
the work (keychain, user config, provider check). Neither needs the history database, so both
answer even when the engine could not open. The API key in ``setupModel``'s params was
registered as a secret when the message arrived (``core.RelaviumProtocol``), before pygls or
a handler could log anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from relavium_lsp.contracts.model_setup import ListProviderPresetsResult, SetupModelParams
from relavium_lsp.contracts.wire import EmptyParams
from relavium_lsp.engine.api import provider_presets, setup_model
from relavium_lsp.paths import relavium_home
from relavium_lsp.server import methods
from relavium_lsp.server.features.context import detect_context
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the two model-setup requests."""
    register_request(server, methods.LIST_PROVIDER_PRESETS, EmptyParams, list_provider_presets)
    register_request(server, methods.SETUP_MODEL, SetupModelParams, setup_model_request)


async def list_provider_presets(ls: RelaviumServer, params: EmptyParams) -> Result:
    """Every provider a setup picker offers."""
    return ListProviderPresetsResult(presets=provider_presets())


async def setup_model_request(ls: RelaviumServer, params: SetupModelParams) -> Result:
    """Store the key, write the user config, check the provider (for the active workspace)."""
    context = await detect_context(ls)
    return await setup_model(params, workspace=Path(context.working_dir), home=relavium_home())
