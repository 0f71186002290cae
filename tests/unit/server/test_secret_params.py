"""A request's ``apiKey`` is a registered secret from the moment the message arrives.

pygls may log what it handles (it logs ``initialize``'s params at INFO, answers and sent
messages at DEBUG); whatever it logs of a ``relavium/setupModel`` — as a request or as the
``relavium.setupModel`` command — must come out redacted. Messages are parsed exactly as the
stdio loop parses them (``server.stdio.dispatch``).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from relavium_lsp.log_secrets import redact
from relavium_lsp.server import methods
from relavium_lsp.server.app import create_server
from relavium_lsp.server.core import RelaviumServer, register_secret_params


def _parsed(server: RelaviumServer, message: dict[str, Any]) -> Any:
    return json.loads(json.dumps(message), object_hook=server.protocol.structure_message)


def _new_key() -> tuple[str, dict[str, str]]:
    key = "sk-" + secrets.token_hex(16)
    params = {"preset": "openai", "model": "gpt-5-mini", "apiKey": key}
    assert key in redact(f"params: {params}")  # not known yet
    return key, params


def test_every_message_is_searched_before_pygls_handles_it() -> None:
    server = create_server()
    key, params = _new_key()
    # A method nobody handles: pygls only logs it, yet the key is known from then on.
    unknown = {"jsonrpc": "2.0", "method": "relavium/noSuchMethod", "params": params}
    server.protocol.handle_message(_parsed(server, unknown))
    assert key not in redact(f"params: {params}")
    assert "[redacted]" in redact(f"params: {params}")


def test_the_request_and_the_command_carry_their_key_where_it_is_found() -> None:
    server = create_server()
    key, params = _new_key()
    request = {"jsonrpc": "2.0", "id": 1, "method": methods.SETUP_MODEL, "params": params}
    register_secret_params(_parsed(server, request).params)
    assert key not in redact(str(params))
    key, params = _new_key()
    command = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "workspace/executeCommand",
        "params": {"command": methods.command_name(methods.SETUP_MODEL), "arguments": [params]},
    }
    register_secret_params(_parsed(server, command).params)
    assert key not in redact(str(params))
