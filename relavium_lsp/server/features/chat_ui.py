"""What the chat UI's header pickers and code-block buttons ask the server.

- ``relavium/sessionModels``: the models a session may ask first, and the current one;
- ``relavium/setModel``: ask another model first from the next turn on (the engine's
  :meth:`~relavium_lsp.engine.api.Engine.set_model`, as ACP's ``model`` config option);
- ``relavium/applyCode``: write a code block into a file as an agent edit (``write_file``,
  its approval, the editor's undoable edit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.chat_ui import (
    ApplyCodeParams,
    ApplyCodeResult,
    ModelChoiceInfo,
    SessionModelsParams,
    SessionModelsResult,
    SetModelParams,
    SetModelResult,
)
from relavium_lsp.engine.api import ModelChoice
from relavium_lsp.server import methods
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the chat UI requests."""
    register_request(server, methods.SESSION_MODELS, SessionModelsParams, session_models)
    register_request(server, methods.SET_MODEL, SetModelParams, set_model)
    register_request(server, methods.APPLY_CODE, ApplyCodeParams, apply_code)


def _info(choice: ModelChoice) -> ModelChoiceInfo:
    return ModelChoiceInfo(id=choice.id, provider=choice.provider, model=choice.model)


async def session_models(ls: RelaviumServer, params: SessionModelsParams) -> Result:
    """The session's model choices (the configuration's models) and its current first model."""
    engine = await get_engine(ls)
    current = await engine.current_model(params.session_id)
    choices = await engine.model_choices(params.session_id)
    if current not in choices:
        choices = [current, *choices]
    return SessionModelsResult(current=_info(current), choices=[_info(c) for c in choices])


async def set_model(ls: RelaviumServer, params: SetModelParams) -> Result:
    """Switch the model asked first from the next turn on."""
    engine = await get_engine(ls)
    await engine.set_model(params.session_id, params.model)
    return SetModelResult(current=_info(await engine.current_model(params.session_id)))


async def apply_code(ls: RelaviumServer, params: ApplyCodeParams) -> Result:
    """Write the code block through ``write_file`` (approval first, as the policy says)."""
    engine = await get_engine(ls)
    result = await engine.apply_code(params.session_id, params.path, params.content)
    return ApplyCodeResult(
        applied=not result.is_error, call_id=result.tool_call_id, message=result.result
    )
