"""The session requests as ``workspace/executeCommand`` commands.

For clients that only have a command palette: ``relavium.startSession`` takes the same params
object as ``relavium/startSession`` as its single argument (or none), and so on. A feature
can register its own command for a request first (``relavium.sendMessage`` does not wait for
the turn); :func:`setup` then leaves that command alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

# Imported at runtime, not only for type checking: pygls resolves a command handler's
# annotations with typing.get_type_hints when it prepares the command's arguments.
from relavium_lsp.server.core import RelaviumServer
from relavium_lsp.server.handlers import ParamsT, Result, validated_handler
from relavium_lsp.server.methods import command_name

if TYPE_CHECKING:
    from relavium_lsp.server.handlers import RawHandler


def setup(server: RelaviumServer) -> None:
    """Register one command per custom request (call last: every request must exist)."""
    for method, handler in list(server.request_handlers.items()):
        name = command_name(method)
        if name not in server.protocol.fm.commands:
            _register(server, name, handler)


def register_command(
    server: RelaviumServer,
    name: str,
    params_model: type[ParamsT],
    implementation: Callable[[RelaviumServer, ParamsT], Awaitable[Result]],
) -> None:
    """A command taking one params object, validated like a request's params."""
    _register(server, name, validated_handler(name, params_model, implementation))


def _register(server: RelaviumServer, name: str, handler: RawHandler) -> None:
    async def run_command(ls: RelaviumServer, *arguments: Any) -> Any:
        if len(arguments) > 1:
            raise JsonRpcInvalidParams(f"{name} takes at most one argument (the params object)")
        return await handler(ls, arguments[0] if arguments else None)

    server.command(name)(run_command)
