"""Streamable HTTP servers: headers come from the keychain and never leak anywhere."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import keyring
import pytest
from keyrings.alt.file import PlaintextKeyring

from relavium_lsp.config import load_workspace_config
from relavium_lsp.errors import ConfigError
from relavium_lsp.llm.keys import KEYRING_SERVICE
from tests.unit.engine.engine_harness import scripted, text_reply, tool_reply
from tests.unit.mcp.mcp_harness import PROBE_SERVER, mcp_engine, write_user_config

SECRET = "mcp-header-secret-0123456789abcdef"


@pytest.fixture
def keychain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PlaintextKeyring]:
    previous = keyring.get_keyring()
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring" / "keyring_pass.cfg")
    keyring.set_keyring(backend)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    yield backend
    keyring.set_keyring(previous)


@asynccontextmanager
async def http_probe(token: str, *, host_name: str | None = None) -> AsyncIterator[str]:
    """The probe server over Streamable HTTP, requiring ``Bearer <token>``; yields its URL.

    With ``host_name`` it answers only requests whose Host header is that name.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PROBE_SERVER),
        "--http",
        "--token",
        token,
        *(("--host-name", host_name) if host_name else ()),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        port = int(line.decode().removeprefix("PORT "))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        await process.wait()


def remote_table(url: str) -> str:
    """A user-config table for the probe over HTTP on this machine (opted in: it is local)."""
    return (
        f'[mcp.servers.remote]\nurl = "{url}"\nallow_local_endpoint = true\n'
        '[mcp.servers.remote.headers]\nAuthorization = { keychain = "mcp-remote", '
        'prefix = "Bearer " }\n'
    )


async def test_the_header_comes_from_the_keychain_and_never_leaks(
    tmp_path: Path, keychain: PlaintextKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    keyring.set_password(KEYRING_SERVICE, "mcp-remote", SECRET)
    provider = scripted(
        tool_reply("mcp__remote__echo", {"text": "through http"}, "c1"), text_reply("done")
    )
    async with http_probe(SECRET) as url:
        async with mcp_engine(
            tmp_path, provider, user_toml=remote_table(url), tools=["mcp:remote"]
        ) as m:
            session = await m.h.start()
            assert (await m.h.engine.send(session.id, "call it")).stop_reason == "stop"
            [asked] = m.h.host.asked
            assert asked.action == "egress" and asked.preview.host.startswith("127.0.0.1:")
            [done] = m.h.payloads(session.id, "agent:tool_result")
            assert done.success and done.output_summary == "through http"
            # nowhere: events, the database, exports
            events = json.dumps([event.to_wire() for event in m.h.events])
            assert SECRET not in events
            database = await m.h.store.run(lambda s: _dump(s.connection))
            assert SECRET not in database
            for fmt in ("jsonl", "workflow"):
                exported = await m.h.engine.render_export(session.id, fmt)
                assert SECRET not in exported.content
    assert SECRET not in (tmp_path / "home" / "history.db").read_bytes().decode("latin-1")
    assert all(SECRET not in record.getMessage() for record in caplog.records)


async def test_a_wrong_or_missing_secret_leaves_the_server_out(
    tmp_path: Path, keychain: PlaintextKeyring
) -> None:
    provider = scripted(text_reply("without it"), text_reply("still without"))
    async with http_probe(SECRET) as url:
        async with mcp_engine(
            tmp_path, provider, user_toml=remote_table(url), tools=["mcp:remote"]
        ) as m:
            session = await m.h.start()
            assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
            [server] = m.source.pool.known()
            assert server.status().error == (
                "the keychain has no entry 'mcp-remote' (store it with `relavium-lsp keys set "
                "mcp-remote`)"
            )
            assert provider.requests[0].tools == ()


def test_a_literal_header_in_a_config_file_is_refused(tmp_path: Path) -> None:
    path = write_user_config(
        '[mcp.servers.remote]\nurl = "https://mcp.example.com/mcp"\n'
        f'headers = {{ Authorization = "Bearer {SECRET}" }}\n'
    )
    with pytest.raises(ConfigError) as refused:
        load_workspace_config(None)
    assert refused.value.file == str(path) and refused.value.line == 3
    assert "must be a keychain reference" in refused.value.message
    assert SECRET not in refused.value.message


def _dump(connection: object) -> str:
    """Every row of every table, as text."""
    rows: list[str] = []
    tables = [
        name
        for (name,) in connection.execute(  # type: ignore[attr-defined]
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        )
    ]
    for table in tables:
        for row in connection.execute(f'SELECT * FROM "{table}"'):  # type: ignore[attr-defined]
            rows.append(repr(row))
    return "\n".join(rows)
