"""Attack: MCP over HTTP goes through the egress guard (issue 35 item 6).

``mcp/connection.py`` opened a configured URL without the SSRF check every other outbound
request gets. Now the URL passes ``tools/netguard.py`` (minus the allowlist): loopback,
private, link-local and metadata addresses — as IP literals or behind a name — and plain
``http://`` are refused unless the server's entry sets ``allow_local_endpoint``, and the
connection is pinned to the address that was checked (Host and TLS name the server).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import keyring
import pytest
from keyrings.alt.file import PlaintextKeyring

from relavium_lsp.llm.keys import KEYRING_SERVICE
from relavium_lsp.tools.netguard import EgressGuard
from tests.unit.engine.engine_harness import scripted, text_reply, tool_reply
from tests.unit.mcp.mcp_harness import mcp_engine
from tests.unit.mcp.test_mcp_secrets import SECRET, http_probe, keychain  # noqa: F401

FAKE_NAME = "mcp.pinned.test"


@asynccontextmanager
async def counting_listener() -> AsyncIterator[tuple[int, list[int]]]:
    """A loopback TCP listener that counts connections: (its port, the count)."""
    accepted: list[int] = []

    def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], accepted
    finally:
        server.close()
        await server.wait_closed()


def resolving_to(address: str) -> EgressGuard:
    """A guard whose DNS answers ``address`` for every name."""

    async def resolve(host: str, port: int) -> Sequence[str]:
        return [address]

    return EgressGuard(resolver=resolve)


async def start_error(tmp_path: Path, url: str, *, egress: EgressGuard | None = None) -> str:
    """Start a session whose agent uses a server at ``url``; the server's start error."""
    table = f'[mcp.servers.remote]\nurl = "{url}"\n'
    provider = scripted(text_reply("without it"))
    async with mcp_engine(
        tmp_path, provider, user_toml=table, tools=["mcp:remote"], egress=egress
    ) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        [server] = m.source.pool.known()
        error = server.status().error
        assert error is not None
        assert provider.requests[0].tools == ()  # the model never saw the server's tools
        return error


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1:{port}/mcp", "loopback"),
        ("https://[::1]:{port}/mcp", "loopback"),
        ("http://127.0.0.1:{port}/mcp", "only https://"),
        ("https://localhost:{port}/mcp", "loopback"),
    ],
)
async def test_a_local_url_is_refused_without_the_opt_in_and_never_connected(
    tmp_path: Path, url: str, reason: str
) -> None:
    async with counting_listener() as (port, accepted):
        error = await start_error(tmp_path, url.format(port=port))
        assert reason in error, error
        assert accepted == []


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("169.254.169.254", "metadata"),
        ("10.1.2.3", "private"),
        ("100.64.0.1", "carrier-grade"),
        ("::ffff:127.0.0.1", "loopback"),
    ],
)
async def test_a_name_that_resolves_inside_is_refused(
    tmp_path: Path, address: str, reason: str
) -> None:
    error = await start_error(tmp_path, f"https://{FAKE_NAME}/mcp", egress=resolving_to(address))
    assert FAKE_NAME in error and str(ipaddress.ip_address(address)) in error
    assert reason in error.lower(), error


async def test_a_metadata_ip_literal_is_refused(tmp_path: Path) -> None:
    error = await start_error(tmp_path, "https://169.254.169.254/latest/meta-data/")
    assert "169.254.169.254" in error


async def test_with_the_opt_in_the_connection_is_pinned_to_the_checked_address(
    tmp_path: Path,
    keychain: PlaintextKeyring,  # noqa: F811
) -> None:
    """The name exists only in the guard's resolver, and the server accepts only that name
    as Host: the call works only if the client connected to the checked address and named
    the server in its Host header."""
    keyring.set_password(KEYRING_SERVICE, "mcp-remote", SECRET)
    provider = scripted(
        tool_reply("mcp__remote__echo", {"text": "pinned"}, "c1"), text_reply("done")
    )
    async with http_probe(SECRET, host_name=FAKE_NAME) as url:
        port = url.rsplit(":", 1)[1].split("/", 1)[0]
        table = (
            f'[mcp.servers.remote]\nurl = "http://{FAKE_NAME}:{port}/mcp"\n'
            "allow_local_endpoint = true\n"
            '[mcp.servers.remote.headers]\nAuthorization = { keychain = "mcp-remote", '
            'prefix = "Bearer " }\n'
        )
        async with mcp_engine(
            tmp_path,
            provider,
            user_toml=table,
            tools=["mcp:remote"],
            egress=resolving_to("127.0.0.1"),
        ) as m:
            session = await m.h.start()
            assert (await m.h.engine.send(session.id, "call it")).stop_reason == "stop"
            [done] = m.h.payloads(session.id, "agent:tool_result")
            assert done.success and done.output_summary == "pinned"
