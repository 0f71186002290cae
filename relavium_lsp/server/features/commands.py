"""The session requests as ``workspace/executeCommand`` commands.

For clients that only have a command palette: ``relavium.startSession`` takes the same params
object as ``relavium/startSession`` as its single argument (or none), and so on. Every name in
:data:`methods.COMMANDS` is registered at start-up, because the ``executeCommandProvider``
capability listing them is computed at ``initialize`` — before the session features (and
their handlers) are loaded. Each command finds its handler when it runs: the one a feature
registered for it with :func:`register_command` (``relavium.sendMessage`` does not wait for
the turn; the code actions' commands), else the request of the same name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

# Imported at runtime, not only for type checking: pygls resolves a command handler's
# annotations with typing.get_type_hints when it prepares the command's arguments.
from relavium_lsp.server.core import RelaviumServer
from relavium_lsp.server.methods import COMMANDS, request_of_command

if TYPE_CHECKING:
    from relavium_lsp.server.core import RawHandler
    from relavium_lsp.server.handlers import ParamsT, Result


def setup(server: RelaviumServer) -> None:
    """Register every command name; each resolves its handler when it runs."""
    for name in COMMANDS:
        _register(server, name)


def register_command(
    server: RelaviumServer,
    name: str,
    params_model: type[ParamsT],
    implementation: Callable[[RelaviumServer, ParamsT], Awaitable[Result]],
) -> None:
    """Give the command ``name`` its own implementation, params validated like a request's."""
    from relavium_lsp.server.handlers import validated_handler

    if name not in COMMANDS:
        raise ValueError(f"{name} is not in methods.COMMANDS (the capability would not list it)")
    server.command_handlers[name] = validated_handler(name, params_model, implementation)


def _register(server: RelaviumServer, name: str) -> None:
    async def run_command(ls: RelaviumServer, *arguments: Any) -> Any:
        if len(arguments) > 1:
            raise JsonRpcInvalidParams(f"{name} takes at most one argument (the params object)")
        ls.load_deferred_features()
        handler: RawHandler | None = ls.command_handlers.get(name)
        if handler is None:
            handler = ls.request_handlers[request_of_command(name)]
        return await handler(ls, arguments[0] if arguments else None)

    server.command(name)(run_command)
