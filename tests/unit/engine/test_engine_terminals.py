"""Background terminals die with their session: on cancel, and when the engine closes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.unit.engine.engine_harness import AGENT_YAML, engine, scripted, text_reply, tool_reply
from tests.unit.tools.test_tools_commands import _alive, _readable

SCRIPT = "echo $$ > ready; exec sleep 100"


def _terminal_agent(workspace: Path) -> None:
    text = AGENT_YAML.format(model="gpt-4o-mini").replace(
        "tools: [read_file, write_file, list_directory]", "tools: [terminal_start]"
    )
    (workspace / ".relavium" / "agents" / "helper.agent.yaml").write_text(text)


async def _start_job(h, call_id: str) -> tuple[str, int]:
    _terminal_agent(h.workspace)
    ready = h.workspace / "ready"
    os.mkfifo(ready)  # the job's write waits for this reader: no polling
    session = await h.start()
    await h.engine.send(session.id, "start the server")
    [result] = h.payloads(session.id, "agent:tool_result")
    assert result.success, result.output_summary
    pid = int(await asyncio.to_thread(ready.read_text))
    return session.id, pid


async def test_cancelling_a_session_kills_its_background_terminals(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("terminal_start", {"command": ["sh", "-c", SCRIPT]}, "call-t"),
        text_reply("started"),
    )
    toml = f"[chat]\nallowed_commands = [\"sh -c '{SCRIPT}'\"]\n"
    async with engine(tmp_path, provider, user_toml=toml) as h:
        session_id, pid = await _start_job(h, "call-t")
        exited = os.pidfd_open(pid)
        try:
            assert _alive(pid)
            await h.engine.cancel(session_id)
            await asyncio.wait_for(_readable(exited), 30)
        finally:
            os.close(exited)
        assert not _alive(pid)


async def test_closing_the_engine_kills_every_background_terminal(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("terminal_start", {"command": ["sh", "-c", SCRIPT]}, "call-t"),
        text_reply("started"),
    )
    toml = f"[chat]\nallowed_commands = [\"sh -c '{SCRIPT}'\"]\n"
    async with engine(tmp_path, provider, user_toml=toml) as h:
        _, pid = await _start_job(h, "call-t")
        exited = os.pidfd_open(pid)
    try:
        await asyncio.wait_for(_readable(exited), 30)
    finally:
        os.close(exited)
    assert not _alive(pid)
