"""Changing a session's settings from the client, and keeping both ACP views of them in step.

``session/set_mode``, ``session/set_config_option`` and the ``/model`` command all land here.
A change made through one surface is announced on the other (``config_option_update`` after a
mode change, ``current_mode_update`` after an approval option change), so a client showing
either one stays right; the client profile drops what a client would not understand.
"""

from __future__ import annotations

from collections.abc import Callable

from acp.schema import SessionConfigOptionSelect, SessionModeState

from relavium_lsp.acp.outbox import UpdateOutbox
from relavium_lsp.acp.session_config import (
    APPROVAL_OPTION,
    MODEL_OPTION,
    ApprovalChoices,
    approval_mode,
    config_options,
    mode_state,
    mode_update,
    options_update,
)
from relavium_lsp.acp.session_views import SessionViews
from relavium_lsp.engine.api import Engine, SessionSnapshot, first_choice
from relavium_lsp.errors import InvalidInput


class SessionSettings:
    """The approval mode and model of this connection's sessions."""

    def __init__(
        self, approvals: ApprovalChoices, views: SessionViews, outbox: Callable[[], UpdateOutbox]
    ) -> None:
        self._approvals = approvals
        self._views = views
        self._outbox = outbox

    async def describe(
        self, engine: Engine, session: SessionSnapshot
    ) -> tuple[SessionModeState, list[SessionConfigOptionSelect]]:
        """The ``modes`` and ``configOptions`` of a session response."""
        approval = self._approvals.current(session.id, session.policy)
        models = await engine.model_choices(session.id)
        return mode_state(approval), config_options(models, first_choice(session.chain), approval)

    async def set_mode(self, engine: Engine, session_id: str, mode_id: str) -> None:
        """``session/set_mode``: pick the approval mode."""
        mode = approval_mode(mode_id)
        session = await engine.session(session_id)
        self._approvals.pick(session_id, mode)
        await self._announce_options(engine, session)

    async def set_option(
        self, engine: Engine, session_id: str, config_id: str, value: str | bool
    ) -> list[SessionConfigOptionSelect]:
        """``session/set_config_option``: every option afterwards."""
        if not isinstance(value, str):
            raise InvalidInput(f"config option {config_id[:100]!r} takes one of its values")
        if config_id == APPROVAL_OPTION:
            mode = approval_mode(value)
            session = await engine.session(session_id)
            self._approvals.pick(session_id, mode)
            self._outbox().push(session_id, mode_update(mode))
        elif config_id == MODEL_OPTION:
            session = await engine.set_model(session_id, value)
            self._views.attach(session)
        else:
            known = f"{MODEL_OPTION}, {APPROVAL_OPTION}"
            raise InvalidInput(f"unknown config option {config_id[:100]!r} (known: {known})")
        _, options = await self.describe(engine, session)
        await self._outbox().flush()
        return options

    async def model_changed(self, engine: Engine, session_id: str) -> None:
        """The model changed outside ``set_config_option`` (``/model``): tell the client."""
        session = await engine.session(session_id)
        self._views.attach(session)
        await self._announce_options(engine, session)

    def forget(self, session_id: str) -> None:
        """The session was closed or deleted on this connection."""
        self._approvals.forget(session_id)

    async def _announce_options(self, engine: Engine, session: SessionSnapshot) -> None:
        _, options = await self.describe(engine, session)
        outbox = self._outbox()
        outbox.push(session.id, options_update(options))
        # Sent before the request that caused it is answered.
        await outbox.flush()
