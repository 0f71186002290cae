"""Cold start: what ``initialize`` needs is all that loads before it (issue 25).

The session and export features, pydantic and the contracts load after ``initialize`` (see
``relavium_lsp.server.app``). These tests pin that the deferral happens *and* that it can
never cost a request its handler.
"""

from __future__ import annotations

import subprocess
import sys

from lsprotocol import types

from relavium_lsp.server import methods
from relavium_lsp.server.app import create_server

HEAVY = ("pydantic", "relavium_lsp.contracts.wire", "sqlcipher3", "httpx", "ruamel.yaml")


def test_building_the_server_loads_none_of_the_heavy_modules() -> None:
    probe = (
        "import sys\n"
        "from relavium_lsp.cli import main\n"
        "from relavium_lsp.commands import serve\n"
        "from relavium_lsp.server.app import create_server\n"
        "create_server()\n"
        f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


def test_capabilities_list_every_command_before_the_requests_load() -> None:
    server = create_server()
    assert server.request_handlers == {}
    commands = set(server.protocol.fm.commands)
    assert commands == set(methods.COMMANDS)
    assert {methods.command_name(method) for method in methods.REQUESTS} <= commands


def test_the_first_message_for_a_deferred_feature_loads_it() -> None:
    server = create_server()
    assert not server.protocol.has_handler(methods.LIST_SESSIONS)
    assert server.protocol.ensure_handler(methods.LIST_SESSIONS)  # what dispatching asks first
    assert set(server.request_handlers) == set(methods.REQUESTS)
    assert server.protocol.has_handler(methods.EDITOR_STATE)


def test_unknown_methods_are_still_unknown() -> None:
    server = create_server()
    assert not server.protocol.ensure_handler("relavium/noSuchMethod")
    assert set(server.request_handlers) == set(methods.REQUESTS)  # loaded while looking


def test_initialize_only_stores_options_and_loading_validates_them() -> None:
    server = create_server()
    server.state.raw_options = {"defaultAgent": "reviewer", "clientName": "probe"}
    server.state.raw_client = {"openUntitled": True}
    assert server.state.options.default_agent is None  # defaults until settled
    warnings: list[str] = []
    server.window_show_message = lambda params: warnings.append(params.message)  # type: ignore[method-assign]
    server.load_deferred_features()
    assert server.state.options.default_agent == "reviewer"
    assert server.state.client.open_untitled is True
    assert warnings == []


def test_invalid_options_warn_when_settled() -> None:
    server = create_server()
    server.state.raw_options = {"approval": "sometimes"}
    shown: list[types.ShowMessageParams] = []
    server.window_show_message = shown.append  # type: ignore[method-assign]
    server.load_deferred_features()
    assert shown and "initializationOptions" in shown[0].message
    assert server.state.options.approval is None
