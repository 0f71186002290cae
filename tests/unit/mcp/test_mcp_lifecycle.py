"""Server lifecycle: lazy start, sharing, crash and restart, deadlines, abort, shutdown."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from relavium_lsp.config.mcp_servers import ServerDefinition
from relavium_lsp.contracts.content import ToolResultPart
from relavium_lsp.contracts.mcp import McpServerConfig
from relavium_lsp.errors import ToolError
from relavium_lsp.mcp.pool import McpServerPool, McpUnavailable, backoff_s
from tests.unit.engine.engine_harness import scripted, text_reply, tool_reply
from tests.unit.mcp.mcp_harness import PROBE_SERVER, mcp_engine, probe_table, process_exists


def probe(name: str = "probe", **config: object) -> ServerDefinition:
    return ServerDefinition(
        name=name,
        origin="user",
        config=McpServerConfig.model_validate(
            {"command": sys.executable, "args": [str(PROBE_SERVER)], **config}
        ),
    )


async def test_servers_start_lazily_and_are_shared(tmp_path: Path) -> None:
    pool = McpServerPool()
    try:
        first = pool.server(probe(), str(tmp_path))
        assert first.status().state == "idle"  # nothing runs until something needs it
        assert pool.server(probe(), str(tmp_path)) is first  # same definition, same server
        pid = (await first.call("pid", {})).text
        again = pool.server(probe(), str(tmp_path))
        assert (await again.call("pid", {})).text == pid
        assert first.status().state == "running"
        other = pool.server(probe(timeout_s=5), str(tmp_path))  # another definition
        assert other is not first and other.status().state == "idle"
    finally:
        await pool.close()
    assert not process_exists(int(pid))  # stopped with the pool


async def test_a_crash_fails_the_call_clearly_and_the_server_restarts(tmp_path: Path) -> None:
    pool = McpServerPool()
    try:
        server = pool.server(probe(), str(tmp_path))
        before = int((await server.call("pid", {})).text)
        with pytest.raises(ToolError) as crashed:
            await server.call("crash", {})
        assert crashed.value.message == (
            "the MCP server 'probe' stopped while running crash; it will be restarted the next "
            "time it is needed"
        )
        assert server.status().state == "crashed"
        after = int((await server.call("pid", {})).text)
        assert after != before
        assert server.status().state == "running"
        assert server.status().failures == 0  # a good call resets the count
    finally:
        await pool.close()


async def test_repeated_failures_back_off(tmp_path: Path) -> None:
    now = [1_000.0]
    pool = McpServerPool(clock=lambda: now[0])
    broken = ServerDefinition(
        name="broken",
        origin="user",
        config=McpServerConfig(command=str(tmp_path / "no-such-server")),
    )
    try:
        server = pool.server(broken, str(tmp_path))
        with pytest.raises(McpUnavailable, match="the command was not found"):
            await server.tools()
        with pytest.raises(McpUnavailable, match="could not start"):
            await server.tools()  # the first retry is immediate
        assert server.status().failures == 2
        with pytest.raises(McpUnavailable, match="the next start is tried in 1 s"):
            await server.tools()
        now[0] += backoff_s(2)
        with pytest.raises(McpUnavailable, match="could not start"):
            await server.tools()
        assert server.status().state == "failed"
        assert [backoff_s(n) for n in range(1, 9)] == [0, 1, 2, 4, 8, 16, 30, 30]
    finally:
        await pool.close()


async def test_a_hanging_call_times_out_is_cancelled_and_the_turn_goes_on(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("mcp__probe__hang", {}, "call-1"),
        tool_reply("mcp__probe__cancellations", {}, "call-2"),
        text_reply("moving on"),
    )
    user = probe_table(extra="timeout_s = 1\nauto_approve_read_only = true")
    async with mcp_engine(tmp_path, provider, user_toml=user) as m:
        session = await m.h.start()
        result = await m.h.engine.send(session.id, "wait for it")
        assert result.stop_reason == "stop" and result.text == "moving on "
        messages, _ = await m.h.engine.transcript(session.id)
        hung, cancelled = [
            part for msg in messages for part in msg.content if isinstance(part, ToolResultPart)
        ]
        assert hung.is_error
        assert hung.result == (
            "Error: the MCP server 'probe' did not finish hang within 1 s; the request was "
            "cancelled"
        )
        # the server saw the cancellation (the probe records it), on the same connection
        assert cancelled.result == "true"


async def test_abort_cancels_the_mcp_request(tmp_path: Path) -> None:
    provider = scripted(tool_reply("mcp__probe__hang", {}, "call-1"))
    async with mcp_engine(tmp_path, provider, user_toml=probe_table()) as m:
        session = await m.h.start()
        turn = asyncio.create_task(m.h.engine.send(session.id, "hang"))
        await asyncio.wait_for(m.h.host.asked_event.wait(), 60)
        [server] = m.source.pool.known()
        # a second request on the same connection returns once the hang call runs there
        assert (await server.call("hang_started", {})).text == "true"
        assert await m.h.engine.abort(session.id)
        result = await turn
        assert result.stop_reason == "aborted"
        [done] = m.h.payloads(session.id, "agent:tool_result")
        assert done.error_code == "cancelled"
        # the server got notifications/cancelled for the hanging request
        assert (await server.call("cancellations", {})).text == "true"


async def test_server_stderr_goes_to_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pool = McpServerPool()
    caplog.set_level(logging.INFO, logger="relavium_lsp.mcp.stderr")
    try:
        server = pool.server(probe(), str(tmp_path))
        await server.tools()
        with pytest.raises(ToolError):
            await server.call("crash", {})
    finally:
        await pool.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "relavium_lsp.mcp.stderr"]
    assert "[probe] probe: ready" in lines
    assert "[probe] probe: crashing on request" in lines


async def test_a_server_inherits_no_secrets_from_our_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-servers")
    monkeypatch.setenv("RELAVIUM_DB_KEY", "00" * 32)
    pool = McpServerPool()
    try:
        server = pool.server(probe(env={"GREETING": "hi"}), str(tmp_path))
        names = (await server.call("env_names", {})).text.split("\n")
    finally:
        await pool.close()
    assert "GREETING" in names and "PATH" in names
    assert "OPENAI_API_KEY" not in names and "RELAVIUM_DB_KEY" not in names


async def test_a_server_that_cannot_start_leaves_the_turn_to_the_other_tools(
    tmp_path: Path,
) -> None:
    provider = scripted(text_reply("fine without it"))
    user = f'[mcp.servers.broken]\ncommand = "{tmp_path / "missing"}"\n'
    async with mcp_engine(
        tmp_path, provider, user_toml=user, tools=["read_file", "mcp:broken"]
    ) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        offered = sorted(spec.name for spec in provider.requests[0].tools)
        assert offered == ["read_file", "read_tool_output"]
        [server] = m.source.pool.known()
        status = server.status()
        assert status.state == "failed" and "the command was not found" in (status.error or "")
