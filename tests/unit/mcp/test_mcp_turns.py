"""MCP tools in real turns: listed, called, approved, bounded — through the one pipeline."""

from __future__ import annotations

from pathlib import Path

from relavium_lsp.contracts.content import DurableMediaPart, MediaPart, ToolResultPart
from relavium_lsp.export.workflow_yaml import parse_workflow
from relavium_lsp.tools.bounding import MAX_RESULT_LINES
from tests.unit.engine.engine_harness import scripted, text_reply, tool_reply
from tests.unit.mcp.mcp_harness import mcp_engine, probe_table, time_server_table


def _results(messages: list, role: str = "tool") -> list[ToolResultPart]:
    return [
        part
        for message in messages
        if message.role == role
        for part in message.content
        if isinstance(part, ToolResultPart)
    ]


async def test_the_agent_sees_and_calls_a_server_tool_after_approval(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("mcp__probe__add", {"a": 2, "b": 40}, "call-1"), text_reply("It is 42")
    )
    async with mcp_engine(tmp_path, provider, user_toml=probe_table()) as m:
        session = await m.h.start()
        result = await m.h.engine.send(session.id, "add them")
        assert result.stop_reason == "stop", result.error
        offered = {spec.name for spec in provider.requests[0].tools}
        assert {"mcp__probe__echo", "mcp__probe__add", "mcp__probe__crash"} <= offered
        assert "read_tool_output" in offered  # the companion of every tool list
        add_spec = next(s for s in provider.requests[0].tools if s.name == "mcp__probe__add")
        assert add_spec.parameters["required"] == ["a", "b"]
        # asked, as a process-starting action naming the server and the tool
        [asked] = m.h.host.asked
        assert asked.tool_id == "mcp__probe__add"
        assert asked.action == "process"
        assert asked.preview.command == "MCP probe: add"
        messages, _ = await m.h.engine.transcript(session.id)
        [answer] = _results(messages)
        assert answer.result == "42" and not answer.is_error
        [call] = m.h.payloads(session.id, "agent:tool_call")
        assert call.tool_id == "mcp__probe__add" and call.tool_input == {"a": 2, "b": 40}
        [done] = m.h.payloads(session.id, "agent:tool_result")
        assert done.success and done.output_summary == "42"
        types = m.h.types(session.id)
        assert types.index("agent:tool_call") < types.index("agent:approval_requested")
        # the exported workflow step names the server and the tool
        exported = await m.h.engine.render_export(session.id, "workflow")
        [step] = [n for n in parse_workflow(exported.content).nodes if n.type == "agent"]
        assert step.tools == ["mcp:probe/add"]


async def test_a_rejected_call_never_reaches_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "calls"
    provider = scripted(tool_reply("mcp__probe__crash", {}, "call-1"), text_reply("ok, I will not"))
    async with mcp_engine(
        tmp_path, provider, user_toml=probe_table(args=["--marker", str(marker)])
    ) as m:
        m.h.host.decision = "reject"
        session = await m.h.start()
        result = await m.h.engine.send(session.id, "crash it")
        assert result.stop_reason == "stop"
        [done] = m.h.payloads(session.id, "agent:tool_result")
        assert done.error_code == "tool_denied"
        # the server is still the one that started for the listing: crash never ran
        managed = m.source.pool.known()[0]
        assert managed.status().state == "running"
        assert marker.read_text(encoding="utf-8").count("started") == 1


async def test_always_allow_is_remembered_per_tool_for_the_session(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("mcp__probe__add", {"a": 1, "b": 1}, "call-1"),
        tool_reply("mcp__probe__add", {"a": 2, "b": 2}, "call-2"),
        tool_reply("mcp__probe__echo", {"text": "x"}, "call-3"),
        text_reply("done"),
    )
    async with mcp_engine(tmp_path, provider, user_toml=probe_table()) as m:
        m.h.host.decision = "approve_always"
        session = await m.h.start()
        result = await m.h.engine.send(session.id, "go")
        assert result.stop_reason == "stop", result.error
        # once for add (then remembered), once for echo (another tool)
        assert [request.tool_id for request in m.h.host.asked] == [
            "mcp__probe__add",
            "mcp__probe__echo",
        ]


async def test_read_only_hints_run_unasked_only_where_the_user_allowed_it(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("mcp__probe__echo", {"text": "hello"}, "call-1"),
        tool_reply("mcp__probe__add", {"a": 1, "b": 2}, "call-2"),
        text_reply("done"),
    )
    user = probe_table(extra="auto_approve_read_only = true")
    async with mcp_engine(tmp_path, provider, user_toml=user) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        # echo is readOnlyHint: not asked; add is not: asked
        assert [request.tool_id for request in m.h.host.asked] == ["mcp__probe__add"]


async def test_a_project_cannot_switch_approvals_off(tmp_path: Path) -> None:
    provider = scripted(tool_reply("mcp__probe__echo", {"text": "hi"}, "call-1"), text_reply("ok"))
    project = probe_table(extra="auto_approve_read_only = true")
    async with mcp_engine(tmp_path, provider, project_toml=project) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        # first the trust question, then the call itself — the hint did not lower it
        assert [request.tool_id for request in m.h.host.asked] == ["mcp:probe", "mcp__probe__echo"]


async def test_arguments_are_checked_against_the_servers_schema(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("mcp__probe__add", {"a": "two", "c": 1}, "call-1"), text_reply("sorry")
    )
    async with mcp_engine(tmp_path, provider, user_toml=probe_table()) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        [done] = m.h.payloads(session.id, "agent:tool_result")
        assert done.error_code == "validation"
        messages, _ = await m.h.engine.transcript(session.id)
        [answer] = _results(messages)
        assert answer.is_error
        assert "invalid arguments for mcp__probe__add" in answer.result
        assert "- a: 'two' is not of type 'integer'" in answer.result
        assert "'b' is a required property" in answer.result
        assert m.h.host.asked == []  # invalid calls are refused before anyone is asked


async def test_a_single_tool_selector_offers_only_that_tool(tmp_path: Path) -> None:
    provider = scripted(text_reply("hi"))
    async with mcp_engine(
        tmp_path, provider, user_toml=probe_table(), tools=["read_file", "mcp:probe/echo"]
    ) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        offered = sorted(spec.name for spec in provider.requests[0].tools)
        assert offered == ["mcp__probe__echo", "read_file", "read_tool_output"]


async def test_a_call_to_an_unselected_server_tool_is_unavailable(tmp_path: Path) -> None:
    provider = scripted(tool_reply("mcp__probe__add", {"a": 1, "b": 1}, "c1"), text_reply("ok"))
    async with mcp_engine(
        tmp_path, provider, user_toml=probe_table(), tools=["mcp:probe/echo"]
    ) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        [done] = m.h.payloads(session.id, "agent:tool_result")
        assert done.error_code == "tool_unavailable"
        assert m.h.host.asked == []


async def test_images_and_resources_become_media_and_text_parts(tmp_path: Path) -> None:
    provider = scripted(tool_reply("mcp__probe__picture", {}, "call-1"), text_reply("nice"))
    async with mcp_engine(tmp_path, provider, user_toml=probe_table()) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "show me")).stop_reason == "stop"
        messages, _ = await m.h.engine.transcript(session.id)
        tool_message = next(message for message in messages if message.role == "tool")
        result, media = tool_message.content
        assert isinstance(result, ToolResultPart)
        assert "[image image/png, 68 bytes: attached]" in result.result
        assert "[resource memo://note]\na note about the picture" in result.result
        assert isinstance(media, DurableMediaPart) and media.mime_type == "image/png"
        # the model's next call carries the picture right after the result
        follow_up = provider.requests[1].messages[-1]
        assert follow_up.role == "tool"
        assert isinstance(follow_up.content[0], ToolResultPart)
        assert isinstance(follow_up.content[1], MediaPart)


async def test_a_long_result_is_bounded_with_an_artifact(tmp_path: Path) -> None:
    lines = MAX_RESULT_LINES * 2
    provider = scripted(tool_reply("mcp__probe__big", {"lines": lines}, "c1"), text_reply("ok"))
    user = probe_table(extra="auto_approve_read_only = true")
    async with mcp_engine(tmp_path, provider, user_toml=user) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "go")).stop_reason == "stop"
        messages, _ = await m.h.engine.transcript(session.id)
        [answer] = _results(messages)
        assert "read_tool_output" in answer.result and f"line {lines - 1}" in answer.result
        assert "line 3000\n" not in answer.result


async def test_the_published_time_server(tmp_path: Path) -> None:
    provider = scripted(
        tool_reply("mcp__time__get_current_time", {"timezone": "Europe/Paris"}, "c1"),
        text_reply("done"),
    )
    async with mcp_engine(
        tmp_path, provider, user_toml=time_server_table(), tools=["mcp:time"]
    ) as m:
        session = await m.h.start()
        assert (
            await m.h.engine.send(session.id, "what time is it in Paris?")
        ).stop_reason == "stop"
        offered = {spec.name for spec in provider.requests[0].tools}
        assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= offered
        messages, _ = await m.h.engine.transcript(session.id)
        [answer] = _results(messages)
        assert not answer.is_error
        assert '"timezone": "Europe/Paris"' in answer.result
