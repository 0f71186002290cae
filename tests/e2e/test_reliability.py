"""The server process killed mid-turn, and the TCP transport."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream


async def test_kill_9_mid_stream_loses_nothing_committed(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            openai_stream(text=["first ", "answer"]),
            openai_stream(text=["never ", "finished"], ending="stall"),
            openai_stream(text=["after ", "the ", "crash"]),
        )
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = started["sessionId"]
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "one"})
            tokens_of_turn_one = len(client.events_of(session, "agent:token"))
            turn = asyncio.ensure_future(
                client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "two"})
            )
            await client.wait_for_event(session, "agent:token", count=tokens_of_turn_one + 1)
            await client.kill_server()
            failed = await asyncio.gather(turn, return_exceptions=True)
            assert isinstance(failed[0], Exception)  # the request died with the server
        async with editor(workspace, home) as again:
            resumed = await again.request(methods.RESUME_SESSION, {"sessionId": session})
            messages = resumed["messages"]
            texts = [_text(m) for m in messages]
            # everything committed before the kill is there, in order; the cut turn is marked
            assert texts[:3] == ["one", "first answer", "two"]
            assert messages[-1]["role"] == "system" and "interruption" in messages[-1]
            assert resumed["session"]["status"] == "idle"
            result = await again.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "three"}
            )
            assert result["text"] == "after the crash"


def _text(message: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in message["content"])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _rpc(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, message: dict[str, Any]
) -> dict[str, Any]:
    body = json.dumps(message).encode()
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    while True:
        header = await reader.readuntil(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        reply = json.loads(await reader.readexactly(length))
        if reply.get("id") == message.get("id"):
            return dict(reply)


async def test_serve_over_tcp(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "RELAVIUM_HOME": str(tmp_path / ".relavium"),
    }
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "relavium_lsp",
        "serve",
        "--tcp",
        f"127.0.0.1:{port}",
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        while b"Serving on" not in (line := await server.stderr.readline()):
            assert line, "the server exited before listening"
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        reply = await _rpc(
            reader,
            writer,
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        )
        assert reply["result"]["serverInfo"]["name"] == "relavium-lsp"
        bad = await _rpc(
            reader,
            writer,
            {"jsonrpc": "2.0", "id": 2, "method": methods.GET_TRANSCRIPT, "params": {}},
        )
        assert bad["error"]["code"] == -32602
        writer.close()
    finally:
        server.terminate()
        await server.wait()
