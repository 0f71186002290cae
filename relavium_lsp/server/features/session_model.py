"""The session-model requests (``docs/design.md`` §2.5): details, notes, deleted list, purge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relavium_lsp.contracts.session_ops import UpdateSessionParams, UpdateSessionResult
from relavium_lsp.engine.api import KEEP
from relavium_lsp.server import methods
from relavium_lsp.server.features.lifecycle import get_engine
from relavium_lsp.server.handlers import Result, register_request

if TYPE_CHECKING:
    from relavium_lsp.server.core import RelaviumServer


def setup(server: RelaviumServer) -> None:
    """Register the session-model requests."""
    register_request(server, methods.UPDATE_SESSION, UpdateSessionParams, update_session)


async def update_session(ls: RelaviumServer, params: UpdateSessionParams) -> Result:
    """Set the description and/or metadata the params carry (``null`` clears)."""
    given = params.model_fields_set
    record = await (await get_engine(ls)).update_details(
        params.session_id,
        description=params.description if "description" in given else KEEP,
        metadata=params.metadata if "metadata" in given else KEEP,
    )
    return UpdateSessionResult(session=record)
