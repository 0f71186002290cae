"""Params and results of the requests behind the chat UI's pickers and code-block Apply.

``relavium/sessionModels`` and ``relavium/setModel`` expose the engine's per-session model
choice (the same one ACP's ``model`` config option uses); ``relavium/applyCode`` writes a code
block from an answer into a file as an agent edit would: through ``write_file``, its approval
and the editor's undoable ``workspace/applyEdit``.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.contracts.base import WireModel

MAX_APPLY_CHARS = 2_000_000


class SessionModelsParams(WireModel):
    """``relavium/sessionModels``."""

    session_id: str = Field(min_length=1, max_length=64)


class ModelChoiceInfo(WireModel):
    """One model a session may ask first: ``id`` is ``<provider>/<model>``."""

    id: str
    provider: str
    model: str


class SessionModelsResult(WireModel):
    """Result of ``relavium/sessionModels``: the current first model and the choices."""

    current: ModelChoiceInfo
    choices: list[ModelChoiceInfo]


class SetModelParams(WireModel):
    """``relavium/setModel``: ask ``model`` (a choice ``id``) first from the next turn on."""

    session_id: str = Field(min_length=1, max_length=64)
    model: str = Field(min_length=1, max_length=300)


class SetModelResult(WireModel):
    """Result of ``relavium/setModel``."""

    current: ModelChoiceInfo


class ApplyCodeParams(WireModel):
    """``relavium/applyCode``: write ``content`` to ``path`` (relative to the workspace)."""

    session_id: str = Field(min_length=1, max_length=64)
    path: str = Field(min_length=1, max_length=4096)
    content: str = Field(max_length=MAX_APPLY_CHARS)


class ApplyCodeResult(WireModel):
    """Result of ``relavium/applyCode``: whether the file was written, and the tool's answer."""

    applied: bool
    call_id: str
    message: str
