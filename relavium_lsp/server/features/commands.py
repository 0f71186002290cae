"""The session requests as ``workspace/executeCommand`` commands.

For clients that only have a command palette: ``relavium.startSession`` takes the same params
object as ``relavium/startSession`` as its single argument (or none), and so on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

# Imported at runtime, not only for type checking: pygls resolves a command handler's
# annotations with typing.get_type_hints when it prepares the command's arguments.
from relavium_lsp.server.core import RelaviumServer
from relavium_lsp.server.methods import REQUESTS, command_name

if TYPE_CHECKING:
    from relavium_lsp.server.handlers import RawHandler


def setup(server: RelaviumServer) -> None:
    """Register one command per custom request.

    The names come from :data:`methods.REQUESTS` because the capabilities listing them are
    computed at ``initialize``, before the request handlers are loaded; each command finds its
    handler when it runs.
    """
    for method in REQUESTS:
        _register(server, method)


def _register(server: RelaviumServer, method: str) -> None:
    async def run_command(ls: RelaviumServer, *arguments: Any) -> Any:
        if len(arguments) > 1:
            raise JsonRpcInvalidParams(
                f"{command_name(method)} takes at most one argument (the params object)"
            )
        ls.load_deferred_features()
        handler: RawHandler = ls.request_handlers[method]
        return await handler(ls, arguments[0] if arguments else None)

    server.command(command_name(method))(run_command)
