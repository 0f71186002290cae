"""A session's settings as ACP shows them: the approval mode and the model.

Two stable ACP surfaces carry them, and both are offered so every v1 client has one:

- **config options** (``configOptions`` in the session responses, ``session/set_config_option``,
  ``config_option_update``): ``model`` (category ``model``; the choices of
  ``Engine.model_choices``) and ``approval`` (category ``mode``);
- **session modes** (``modes``, ``session/set_mode``, ``current_mode_update``): the approval
  mode alone, for clients built before config options existed.

The approval mode a client picks applies to this connection's tool calls in that session
(``ask`` / ``auto_edits`` / ``never_ask``, as ``[chat].approval``); until it picks one the
workspace policy decides. Like the editor setting of the LSP surface, it is the user's own
choice, so it may be looser than a project file's. The model choice is the engine's
(:meth:`~relavium_lsp.engine.api.Engine.set_model`).
"""

from __future__ import annotations

from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from relavium_lsp.contracts.config import ApprovalMode, EffectiveChatPolicy
from relavium_lsp.engine.api import ModelChoice
from relavium_lsp.errors import InvalidInput

MODEL_OPTION = "model"
APPROVAL_OPTION = "approval"
APPROVAL_MODES: dict[ApprovalMode, tuple[str, str]] = {
    "ask": ("Ask", "Ask before every file write, command and web request."),
    "auto_edits": (
        "Auto-approve edits",
        "Write files inside the workspace without asking; ask for everything else.",
    ),
    "never_ask": (
        "Never ask",
        "Run every allowed tool without asking (git commits still ask).",
    ),
}


def approval_mode(value: str) -> ApprovalMode:
    """``value`` as an approval mode, or a useful error."""
    for mode in APPROVAL_MODES:
        if mode == value:
            return mode
    known = ", ".join(APPROVAL_MODES)
    raise InvalidInput(f"unknown approval mode {value[:100]!r} (known: {known})")


class ApprovalChoices:
    """The approval modes this connection's client picked, per session."""

    def __init__(self) -> None:
        self._picked: dict[str, ApprovalMode] = {}

    def pick(self, session_id: str, mode: ApprovalMode) -> None:
        """Remember the client's choice for a session."""
        self._picked[session_id] = mode

    def current(self, session_id: str, policy: EffectiveChatPolicy) -> ApprovalMode:
        """The mode in force: the client's choice, else the workspace policy's."""
        return self._picked.get(session_id, policy.approval)

    def policy_for(self, session_id: str, policy: EffectiveChatPolicy) -> EffectiveChatPolicy:
        """``policy`` with the client's choice of approval mode applied."""
        picked = self._picked.get(session_id)
        if picked is None or picked == policy.approval:
            return policy
        return policy.model_copy(update={"approval": picked})

    def forget(self, session_id: str) -> None:
        """Drop a session's choice (it was closed or deleted)."""
        self._picked.pop(session_id, None)


def mode_state(current: ApprovalMode) -> SessionModeState:
    """The ``modes`` of a session response."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode, name=name, description=description)
            for mode, (name, description) in APPROVAL_MODES.items()
        ],
    )


def model_menu(models: list[ModelChoice], current: ModelChoice) -> list[ModelChoice]:
    """The choices to show: the configured ones, and the current one if it is not among them."""
    return models if current in models else [current, *models]


def config_options(
    models: list[ModelChoice], current_model: ModelChoice, approval: ApprovalMode
) -> list[SessionConfigOptionSelect]:
    """The ``configOptions`` of a session: the model, then the approval mode."""
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODEL_OPTION,
            name="Model",
            description="The model asked first; the agent's fallback chain follows it.",
            category="model",
            current_value=current_model.id,
            options=[
                SessionConfigSelectOption(
                    value=choice.id, name=choice.model, description=f"on {choice.provider}"
                )
                for choice in model_menu(models, current_model)
            ],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=APPROVAL_OPTION,
            name="Approval",
            description="When a tool call needs the user's approval.",
            category="mode",
            current_value=approval,
            options=[
                SessionConfigSelectOption(value=mode, name=name, description=description)
                for mode, (name, description) in APPROVAL_MODES.items()
            ],
        ),
    ]


def mode_update(current: ApprovalMode) -> CurrentModeUpdate:
    """A ``current_mode_update``."""
    return CurrentModeUpdate(session_update="current_mode_update", current_mode_id=current)


def options_update(options: list[SessionConfigOptionSelect]) -> ConfigOptionUpdate:
    """A ``config_option_update`` carrying every option."""
    return ConfigOptionUpdate(session_update="config_option_update", config_options=list(options))
