"""``initialize`` states the package and protocol versions; every client carries the same ones.

The server's answer comes from a real ``relavium-lsp serve`` over stdio; the clients' numbers
are the generated constants (``PACKAGE_VERSION`` / ``PROTOCOL_VERSION``) and the extension's
``package.json`` version, which the VSIX is named and checked by.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

from relavium_lsp import __version__
from relavium_lsp.contracts.versions import PROTOCOL_VERSION
from relavium_lsp.contracts.wire import RelaviumServerCapabilities
from relavium_lsp.server.core import relavium_converter

REPO = Path(__file__).resolve().parents[3]
SERVE = [sys.executable, "-m", "relavium_lsp", "serve"]


async def test_initialize_answers_the_server_info_and_the_protocol_version(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
    }
    client = BaseLanguageClient("versions-test", "1", converter_factory=relavium_converter)
    await client.start_io(*SERVE, env=env)
    try:
        result = await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
    assert result.server_info == types.ServerInfo(name="relavium-lsp", version=__version__)
    experimental = result.capabilities.experimental
    assert isinstance(experimental, dict)
    declared = RelaviumServerCapabilities.model_validate(experimental["relavium"])
    assert declared.protocol_version == PROTOCOL_VERSION
    assert isinstance(PROTOCOL_VERSION, int) and PROTOCOL_VERSION >= 1
    # The capabilities pygls computes are still there.
    assert result.capabilities.execute_command_provider is not None


def test_the_extension_has_the_package_version() -> None:
    manifest = json.loads((REPO / "vscode-client" / "package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == __version__
    lock = json.loads((REPO / "vscode-client" / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["version"] == __version__


def test_the_generated_client_modules_carry_both_versions() -> None:
    typescript = (REPO / "vscode-client" / "src" / "protocol.ts").read_text(encoding="utf-8")
    assert f"export const PACKAGE_VERSION = '{__version__}';" in typescript
    assert f"export const PROTOCOL_VERSION = {PROTOCOL_VERSION};" in typescript
    lua_modules = [
        path
        for path in (REPO / "lua" / "relavium" / "protocol.lua",
                     REPO / "editors" / "neovim" / "lua" / "relavium" / "protocol.lua")
        if path.exists()
    ]  # fmt: skip
    assert lua_modules, "the Neovim plugin's protocol module"
    lua = lua_modules[0].read_text(encoding="utf-8")
    assert re.search(rf"^M\.PACKAGE_VERSION = '{re.escape(__version__)}'$", lua, re.M)
    assert re.search(rf"^M\.PROTOCOL_VERSION = {PROTOCOL_VERSION}$", lua, re.M)
