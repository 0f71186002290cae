"""Registry dispatch: specs, availability, validation, events, bounding, secrets."""

from __future__ import annotations

import json

import pytest

from relavium_lsp.contracts.agent import BUILTIN_TOOL_NAMES
from relavium_lsp.contracts.events import EVENT_PAYLOAD_ADAPTER
from relavium_lsp.errors import ToolError
from relavium_lsp.tools.base import PreparedCall, ToolArgs, ToolDefinition, ToolRun
from relavium_lsp.tools.bounding import MAX_RESULT_BYTES, MAX_RESULT_LINES
from relavium_lsp.tools.registry import READ_TOOL_OUTPUT, ToolRegistry, default_registry

BUILT_INS = set(BUILTIN_TOOL_NAMES)  # the agent config's list: one source of truth


class EchoArgs(ToolArgs):
    text: str


def echo_tool(name: str = "echo", *, explode: Exception | None = None) -> ToolDefinition[EchoArgs]:
    async def prepare(args: EchoArgs, ctx) -> PreparedCall:
        async def run() -> ToolRun:
            if explode is not None:
                raise explode
            return ToolRun(args.text)

        return PreparedCall(run=run)

    return ToolDefinition(
        name=name,
        description="Echo text back.",
        args_model=EchoArgs,
        side_effect="read",
        replay="pure",
        prepare=prepare,
    )


def test_default_registry_has_every_built_in_with_classes() -> None:
    registry = default_registry()
    assert set(registry.names) == BUILT_INS
    classes = {name: registry.get(name).side_effect for name in registry.names}
    assert classes["write_file"] == classes["edit_file"] == "fs_write"
    assert classes["run_command"] == "process" and classes["git_commit"] == "process"
    assert classes["http_request"] == classes["delegate"] == "egress"
    assert classes["read_file"] == classes["git_status"] == "read"
    assert classes["search_files"] == classes["find_files"] == "read"
    assert registry.get("git_commit").always_ask
    assert {registry.get(n).replay for n in ("write_file", "run_command", "http_request")} == {
        "side-effecting"
    }
    assert registry.get("read_file").replay == "read-only"


def test_specs_are_camel_case_strict_and_include_the_companion() -> None:
    registry = default_registry()
    specs = {spec.name: spec for spec in registry.specs(["read_file", "nope", "read_file"])}
    assert set(specs) == {"read_file", READ_TOOL_OUTPUT}
    schema = specs["read_file"].parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"path", "startLine", "endLine"}
    assert schema["required"] == ["path"]
    assert "title" not in schema
    assert registry.specs([]) == []
    command_schema = registry.specs(["run_command"])[0].parameters
    # Config-only parameters never appear in what the model sees.
    assert set(command_schema["properties"]) == {"command", "cwd"}


def test_duplicate_registration_is_refused() -> None:
    registry = ToolRegistry([echo_tool()])
    with pytest.raises(ValueError, match="already registered"):
        registry.register(echo_tool())


async def test_unknown_and_narrowed_tools_are_unavailable(harness) -> None:
    unknown = await harness.call("rm_rf", {"path": "/"})
    assert unknown.error_code == "tool_unavailable" and unknown.is_error
    ctx = harness.context(allowed_tools=frozenset({"read_file"}))
    narrowed = await harness.call("write_file", {"path": "x.txt", "content": "x"}, ctx)
    assert narrowed.error_code == "tool_unavailable"
    assert "read_file" in narrowed.result
    assert not (harness.workspace / "x.txt").exists()
    calls = harness.events_of("agent:tool_call")
    results = harness.events_of("agent:tool_result")
    assert [c.tool_id for c in calls] == ["rm_rf", "write_file"]
    assert [r.error_code for r in results] == ["tool_unavailable", "tool_unavailable"]


async def test_invalid_arguments_are_a_readable_validation_result(harness) -> None:
    missing = await harness.call("read_file", {})
    assert missing.error_code == "validation"
    assert "path" in missing.result and "Field required" in missing.result
    typed = await harness.call("read_file", {"path": "a", "startLine": "first"})
    assert typed.error_code == "validation" and "startLine" in typed.result


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("run_command", {"command": ["ls"], "timeout": 9999}),
        ("run_command", {"command": ["ls"], "env": {"LD_PRELOAD": "x.so"}}),
        ("run_command", {"command": ["ls"], "shell": True}),
        ("http_request", {"url": "https://a.example", "allowedDomains": ["evil"]}),
        ("http_request", {"url": "https://a.example", "maxBytes": 10**12}),
        ("read_file", {"path": "a", "maxBytes": 10**12}),
        ("write_file", {"path": "a", "content": "x", "scope": "full"}),
        ("git_status", {"args": ["-c", "core.pager=sh"]}),
    ],
)
async def test_config_only_parameters_cannot_be_set_by_the_model(harness, tool, args) -> None:
    outcome = await harness.call(tool, args)
    assert outcome.error_code == "validation"
    assert "Extra inputs are not permitted" in outcome.result


async def test_events_are_valid_payloads_with_sanitized_input(harness) -> None:
    content = "line\n" * 5000
    await harness.call("write_file", {"path": "big.txt", "content": content})
    call_event = harness.events_of("agent:tool_call")[0]
    assert call_event.tool_input["path"] == "big.txt"
    assert call_event.tool_input["content"]["length"] == len(content)
    assert len(call_event.tool_input["content"]["head"]) <= 81
    assert call_event.model == "test-model"
    for event in harness.events:
        EVENT_PAYLOAD_ADAPTER.validate_python(event.model_dump())
    approval = harness.events_of("agent:approval_requested")[0]
    assert approval.preview.to_wire() == {"path": "big.txt"}
    result = harness.events_of("agent:tool_result")[0]
    assert result.success and result.duration_ms >= 0 and len(result.output_summary) <= 330


async def test_credential_headers_never_reach_events(harness) -> None:
    await harness.call(
        "http_request",
        {
            "url": "https://nowhere.example/",
            "headers": {"Authorization": "Bearer sk-live-123", "X-Api-Key": "k-456"},
            "body": "p" * 1000,
        },
    )
    dumped = json.dumps(harness.events_of("agent:tool_call")[0].to_wire())
    assert "sk-live-123" not in dumped and "k-456" not in dumped
    assert "[redacted]" in dumped


async def test_large_results_are_bounded_and_readable_back(harness) -> None:
    lines = [f"line {number:05d} " + "x" * 40 for number in range(1, 6001)]
    full = "\n".join(lines) + "\n"
    (harness.workspace / "huge.txt").write_text(full)
    outcome = await harness.call("read_file", {"path": "huge.txt"})
    assert len(outcome.result.encode()) <= MAX_RESULT_BYTES
    assert outcome.result.count("\n") + 1 <= MAX_RESULT_LINES
    assert outcome.result.startswith("line 00001")
    assert outcome.result.rstrip("\n").endswith(lines[-1])
    marker = next(line for line in outcome.result.splitlines() if "omitted" in line)
    [(key, saved)] = harness.artifacts.saved.items()
    assert saved == full and key[0] == "session-1"
    artifact_id = key[1]
    assert artifact_id in marker
    offset = int(marker.split('"offset": ')[1].split("}")[0])
    assert full.splitlines()[offset - 1] in outcome.result
    page = await harness.call(
        "read_tool_output", {"artifactId": artifact_id, "offset": offset, "limit": 3}
    )
    assert not page.is_error
    assert lines[offset] in page.result and lines[offset + 2] in page.result
    assert lines[offset + 3] not in page.result
    assert f"continue with offset {offset + 3}" in page.result


async def test_a_single_giant_line_is_cut_too(harness) -> None:
    (harness.workspace / "minified.js").write_text("a" * 300_000)
    outcome = await harness.call("read_file", {"path": "minified.js"})
    assert len(outcome.result.encode()) <= MAX_RESULT_BYTES
    assert "omitted" in outcome.result


async def test_read_tool_output_is_scoped_to_the_session(harness) -> None:
    harness.artifacts.saved[("other-session", "art-x")] = "not yours"
    outcome = await harness.call("read_tool_output", {"artifactId": "art-x"})
    assert outcome.is_error and "not yours" not in outcome.result
    # The companion is allowed even when the agent's list does not name it.
    ctx = harness.context(allowed_tools=frozenset({"read_file"}))
    harness.artifacts.saved[("session-1", "art-y")] = "a\nb\n"
    mine = await harness.call("read_tool_output", {"artifactId": "art-y"}, ctx)
    assert "a\nb\n" in mine.result


async def test_secrets_placeholders_are_never_interpolated(harness, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret-value")
    monkeypatch.setenv("API", "sk-real-secret-value")
    placeholder = "token={{secrets.OPENAI_API_KEY}} {{secrets.API}} {{ctx.workingDir}}"
    written = await harness.call("write_file", {"path": "cfg.txt", "content": placeholder})
    assert not written.is_error
    assert (harness.workspace / "cfg.txt").read_text() == placeholder
    ctx = harness.context(
        allowed_commands=["echo {{secrets.OPENAI_API_KEY}}", "env"], approval="never_ask"
    )
    echoed = await harness.call(
        "run_command", {"command": ["echo", "{{secrets.OPENAI_API_KEY}}"]}, ctx
    )
    assert "{{secrets.OPENAI_API_KEY}}" in echoed.result
    env_dump = await harness.call("run_command", {"command": ["env"]}, ctx)
    assert "OPENAI_API_KEY" not in env_dump.result
    read_back = await harness.call("read_file", {"path": "cfg.txt"})
    assert read_back.result == placeholder
    everything = json.dumps([event.to_wire() for event in harness.events])
    assert "sk-real-secret-value" not in everything
    assert "sk-real-secret-value" not in echoed.result + env_dump.result + read_back.result


async def test_tool_failures_never_raise(harness) -> None:
    registry = ToolRegistry(
        [
            echo_tool("boom", explode=RuntimeError("kaboom")),
            echo_tool("fails", explode=ToolError("it broke")),
            echo_tool("oserror", explode=PermissionError(13, "Permission denied")),
        ]
    )
    harness.registry = registry
    ctx = harness.context(allowed_tools=frozenset(registry.names))
    boom = await harness.call("boom", {"text": "x"}, ctx)
    assert boom.error_code == "internal" and "kaboom" not in boom.result
    fails = await harness.call("fails", {"text": "x"}, ctx)
    assert fails.error_code == "tool_failed" and "it broke" in fails.result
    oserror = await harness.call("oserror", {"text": "x"}, ctx)
    assert oserror.error_code == "tool_failed" and "Permission denied" in oserror.result
    ok = await harness.call("boom", {"text": "x"}, ctx)
    assert ok.is_error


async def test_a_small_result_is_passed_through_unchanged(harness) -> None:
    registry = ToolRegistry([echo_tool()])
    harness.registry = registry
    ctx = harness.context(allowed_tools=frozenset({"echo"}))
    outcome = await harness.call("echo", {"text": "{{secrets.X}} hello"}, ctx)
    assert outcome.result == "{{secrets.X}} hello"
    assert harness.artifacts.saved == {}
