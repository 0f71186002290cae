"""Attack: what an MCP server writes (issue 35 item 8), against the real probe server.

- terminal codes and junk a server writes (the SDK's server side sends a tool's stray
  stdout to stderr) reach our log escaped, never raw — no forged log lines, no escape
  sequences; junk on the protocol's own stdout is ``test_mcp_stdout_guard.py``'s;
- a result past the message cap is read past, never held: the call fails at once, saying
  why, nothing of it is stored, and the server keeps working;
- a flood of stderr lines is logged a bounded number of times.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from relavium_lsp.mcp.connection import MAX_MESSAGE_BYTES, STDERR_LINES_PER_MINUTE
from tests.unit.engine.engine_harness import scripted, text_reply, tool_reply
from tests.unit.mcp.mcp_harness import mcp_engine, probe_table

AUTO = "auto_approve_read_only = true"


async def test_junk_on_stdout_and_terminal_codes_on_stderr_stay_out_of_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider = scripted(
        tool_reply("mcp__probe__garbage", {}, "c1"),
        tool_reply("mcp__probe__echo", {"text": "still fine"}, "c2"),
        text_reply("done"),
    )
    async with mcp_engine(tmp_path, provider, user_toml=probe_table(extra=AUTO)) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        results = m.h.payloads(session.id, "agent:tool_result")
        assert [r.success for r in results] == [True, True]
        assert results[0].output_summary == "after the junk"
    logged = [record.getMessage() for record in caplog.records]
    assert all("\x1b" not in line and "\r" not in line and "\x07" not in line for line in logged)
    assert not any(line.startswith("FAKE") for text in logged for line in text.splitlines())
    assert not any("Failed to parse JSONRPC" in line for line in logged)
    assert any("\\x1b[2Jcleared\\rFAKE" in line for line in logged), logged


async def test_a_result_past_the_cap_fails_the_call_and_is_never_kept(tmp_path: Path) -> None:
    megabytes = MAX_MESSAGE_BYTES // (1024 * 1024) * 3  # three times the cap
    provider = scripted(
        tool_reply("mcp__probe__huge", {"megabytes": megabytes}, "c1"),
        tool_reply("mcp__probe__echo", {"text": "after it"}, "c2"),
        text_reply("done"),
    )
    async with mcp_engine(tmp_path, provider, user_toml=probe_table(extra=AUTO)) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        huge, after = m.h.payloads(session.id, "agent:tool_result")
        assert not huge.success
        assert f"larger than {MAX_MESSAGE_BYTES:,} bytes" in huge.output_summary
        assert after.success and after.output_summary == "after it"
        artifacts = await m.h.engine.list_artifacts(session.id)
        assert all(a.chars < 1024 * 1024 for a in artifacts)
    database = (tmp_path / "home" / "history.db").stat().st_size
    assert database < MAX_MESSAGE_BYTES  # nothing of the result was stored


async def test_a_flood_of_stderr_is_logged_a_bounded_number_of_times(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="relavium_lsp.mcp.stderr")
    provider = scripted(tool_reply("mcp__probe__noisy", {"lines": 5000}, "c1"), text_reply("ok"))
    async with mcp_engine(tmp_path, provider, user_toml=probe_table(extra=AUTO)) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
    noise = [r for r in caplog.records if "noise" in r.getMessage()]
    assert 1 <= len(noise) <= STDERR_LINES_PER_MINUTE
