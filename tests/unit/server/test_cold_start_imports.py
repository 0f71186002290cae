"""Cold start over a real client: answering ``initialize`` loads none of the heavy modules.

A behaviour test, not a timing one (issue 25): the real ``relavium-lsp serve`` process runs
under ``python -X importtime``, which writes one stderr line per module it imports, and a
real pygls client drives it. A server that only ever answered ``initialize`` (then
``shutdown`` and ``exit``) must have imported nothing on :data:`HEAVY` — pydantic and the
contracts, the store's SQLCipher, the HTTP client, YAML, MCP, the engine. The control run
sends ``initialized`` and one session request, and the same parse must then find them, so a
broken parse cannot pass the first test.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

from relavium_lsp.server import methods
from relavium_lsp.server.core import relavium_converter

SERVE = [sys.executable, "-X", "importtime", "-m", "relavium_lsp", "serve"]
EXIT_DEADLINE_S = 60.0  # a loaded, shared machine; a passing run is far below it

# Top-level packages and our own subpackages that ``initialize`` must not need.
HEAVY = (
    "pydantic",
    "pydantic_core",
    "sqlcipher3",
    "httpx",
    "httpcore",
    "ruamel",
    "yaml",
    "keyring",
    "mcp",
    "acp",
    "jsonschema",
    "msgspec",
    "orjson",
    "markdown_it",
    "relavium_lsp.contracts",
    "relavium_lsp.engine",
    "relavium_lsp.store",
    "relavium_lsp.llm",
    "relavium_lsp.tools",
    "relavium_lsp.export",
    "relavium_lsp.config",
    "relavium_lsp.mcp",
    "relavium_lsp.acp",
    "relavium_lsp.server.features.sessions",
)


def imported_modules(stderr: str) -> set[str]:
    """The module names in ``-X importtime`` output (``import time: self | total | name``)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the header line
                names.add(name)
    return names


# Inside a heavy package but free of imports: the protocol version ``initialize`` answers.
LIGHT = ("relavium_lsp.contracts", "relavium_lsp.contracts.versions")


def heavy_among(modules: set[str]) -> set[str]:
    """The modules on :data:`HEAVY` (a package or anything inside it) but not on :data:`LIGHT`."""
    return {
        name
        for name in modules
        if name not in LIGHT
        and any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY)
    }


@asynccontextmanager
async def importtime_server(root: Path) -> AsyncIterator[tuple[BaseLanguageClient, list[bytes]]]:
    """Start the real server under ``-X importtime``; its stderr collects in the list."""
    home = root / "home"
    (home / ".relavium").mkdir(parents=True, exist_ok=True)  # a second start: the same home
    workspace = root / "ws"
    workspace.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
    }
    client = BaseLanguageClient("cold-start-test", "1", converter_factory=relavium_converter)
    await client.start_io(*SERVE, env=env)
    process = client._server
    assert process is not None and process.stderr is not None
    stderr = process.stderr
    chunks: list[bytes] = []

    async def drain() -> None:
        # Read all along: a full pipe would block the server in the middle of an import.
        while chunk := await stderr.read(65536):
            chunks.append(chunk)

    draining = asyncio.create_task(drain())
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            )
        )
        yield client, chunks
        await client.shutdown_async(None)
        client.exit(None)
        await asyncio.wait_for(process.wait(), EXIT_DEADLINE_S)
        await asyncio.wait_for(draining, EXIT_DEADLINE_S)
    finally:
        if process.returncode is None:
            process.kill()
        await client.stop()
        draining.cancel()


async def test_a_server_that_only_answered_initialize_imported_nothing_heavy(
    tmp_path: Path,
) -> None:
    async with importtime_server(tmp_path) as (_, chunks):
        pass  # initialize answered; the server then shuts down and exits
    modules = imported_modules(b"".join(chunks).decode())
    assert "pygls.lsp.server" in modules  # the parse found the server's imports
    assert "relavium_lsp.server.features.lifecycle" in modules
    assert heavy_among(modules) == set()


async def test_the_session_features_load_the_heavy_modules_after_initialized(
    tmp_path: Path,
) -> None:
    async with importtime_server(tmp_path) as (client, chunks):
        client.initialized(types.InitializedParams())
        listed = await client.protocol.send_request_async(methods.LIST_SESSIONS, {})
        assert "sessions" in listed
    heavy = heavy_among(imported_modules(b"".join(chunks).decode()))
    assert {"pydantic", "sqlcipher3", "httpx", "relavium_lsp.engine.api"} <= heavy
