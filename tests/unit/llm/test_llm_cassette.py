from __future__ import annotations

import json
from importlib import resources

import pytest

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID, OFFLINE_PROVIDER_ID
from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.llm import demo_script as demo
from relavium_lsp.llm.cassette import (
    CASSETTE_FORMAT,
    CassetteError,
    CassetteProvider,
    RecordingProvider,
    load_cassette,
    summarize_request,
)
from relavium_lsp.llm.offline import OFFLINE_EXPLANATION, offline_provider
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmMessage,
    LlmRequest,
    StopChunk,
    ToolCallEnd,
)
from relavium_lsp.testing.record_demo import record
from tests.unit.llm.llm_helpers import (
    API_KEY,
    READ_FILE,
    anthropic,
    collect,
    openai,
    request,
    text_of,
    user,
)
from tests.unit.llm.wire_servers import (
    ScriptedThinking,
    ScriptedToolCall,
    anthropic_stream,
    openai_error,
    openai_stream,
)


def assert_no_secret(text: str) -> None:
    assert API_KEY not in text
    assert API_KEY[-12:] not in text
    assert "authorization" not in text.lower()
    assert "x-api-key" not in text.lower()


async def test_recording_then_replay_is_identical(server, client, tmp_path):
    path = tmp_path / "calls.json"
    server.script(
        openai_stream(text=["Hi ", "there"], usage=(5, 2)),
        openai_stream(tool_calls=[ScriptedToolCall("c1", "read_file", '{"path": "a"}')]),
        openai_error(401, f"Incorrect API key provided: {API_KEY}"),
    )
    recorder = RecordingProvider(openai(server, client), path)
    first = await collect(recorder.stream(request("one", tools=(READ_FILE,))))
    second = await collect(recorder.stream(request("two")))
    third = await collect(recorder.stream(request("three")))
    raw = path.read_text()
    assert_no_secret(raw)
    document = json.loads(raw)
    assert document["format"] == CASSETTE_FORMAT
    assert [call["request"]["prompt"] for call in document["calls"]] == ["one", "two", "three"]
    assert document["calls"][0]["request"]["tools_offered"] == ["read_file"]

    replay = CassetteProvider("openai", path)
    assert await collect(replay.stream(request("two"))) == second
    assert await collect(replay.stream(request("one"))) == first
    assert await collect(replay.stream(request("three"))) == third
    assert isinstance(third[-1], ErrorChunk) and third[-1].error.kind == "auth"


async def test_anthropic_thinking_records_and_replays(server, client, tmp_path):
    path = tmp_path / "anthropic.json"
    server.script(anthropic_stream(thinking=[ScriptedThinking(["deep"], "SIG")], text=["ok"]))
    recorder = RecordingProvider(anthropic(server, client), path)
    recorded = await collect(recorder.stream(request("q", model="claude-sonnet-4-5")))
    assert_no_secret(path.read_text())
    assert await collect(CassetteProvider("anthropic", path).stream(request("q"))) == recorded


def test_summary_keys_on_position_not_on_system_prompt_or_tool_output():
    history = (
        user("Fix it"),
        LlmMessage(role="assistant", content=(ToolCallPart(id="c", name="read_file"),)),
        LlmMessage(role="tool", content=(ToolResultPart(tool_call_id="c", result="v1"),)),
    )
    one = summarize_request(LlmRequest(model="m", system="/home/a", messages=history))
    changed = (
        *history[:2],
        LlmMessage(role="tool", content=(ToolResultPart(tool_call_id="c", result="v2"),)),
    )
    two = summarize_request(LlmRequest(model="m", system="/home/b", messages=changed))
    assert one["key"] == two["key"]
    assert one["tools_called"] == ["read_file"]
    assert summarize_request(LlmRequest(model="m", messages=history[:1]))["key"] != one["key"]


def _document(*calls):
    return {"format": CASSETTE_FORMAT, "calls": list(calls)}


def _call(prompt, text, tools_called=()):
    return {
        "request": {"prompt": prompt, "tools_called": list(tools_called)},
        "chunks": [
            {"type": "text_delta", "text": text},
            {
                "type": "stop",
                "stop_reason": "stop",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        ],
    }


async def test_matching_rules_repeats_containment_and_unmatched():
    cassette = CassetteProvider(
        "c",
        _document(
            _call("Hello", "first"), _call("hello", "second"), _call("Explain this", "explained")
        ),
    )

    async def answer(prompt: str) -> list:
        return await collect(cassette.stream(request(prompt)))

    assert text_of(await answer("  HELLO ")) == "first"
    assert text_of(await answer("hello")) == "second"
    assert text_of(await answer("hello")) == "second"  # then the last one again
    # An engine may append context to the user's words.
    assert text_of(await answer("Explain this\n\nSelected lines 1-2 of a.py")) == "explained"
    unmatched = await answer("something else")
    assert len(unmatched) == 1 and isinstance(unmatched[0], ErrorChunk)
    assert unmatched[0].error.kind == "bad_request"


async def test_sequence_mode_ignores_the_request():
    cassette = CassetteProvider("c", _document(_call("a", "1"), _call("b", "2")), match="sequence")
    assert text_of(await collect(cassette.stream(request("zzz")))) == "1"
    assert text_of(await collect(cassette.stream(request("a")))) == "2"
    assert isinstance((await collect(cassette.stream(request("a"))))[0], ErrorChunk)


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ("not json at all", "malformed"),
        ([], "JSON object"),
        ({"format": "other/9", "calls": []}, "unsupported format"),
        ({"format": CASSETTE_FORMAT}, "'calls' must be a list"),
        (_document({"request": {"prompt": "x", "tools_called": []}, "chunks": []}), "exactly one"),
        (
            _document(
                {"request": {"prompt": "x", "tools_called": []}, "chunks": [{"type": "nope"}]}
            ),
            "calls[0].chunks",
        ),
        (_document({"chunks": []}), "calls[0].request"),
        (
            _document(
                {
                    "request": {"prompt": "x", "tools_called": []},
                    "chunks": [
                        {"type": "stop", "stop_reason": "stop", "usage": {}},
                        {"type": "text_delta", "text": "late"},
                    ],
                }
            ),
            "end with exactly one",
        ),
    ],
)
def test_malformed_cassettes_are_clear_errors(tmp_path, document, reason):
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert "bad.json" in str(caught.value)
    assert reason in str(caught.value)


def test_missing_cassette_file(tmp_path):
    with pytest.raises(CassetteError, match="cannot be read"):
        CassetteProvider("c", tmp_path / "absent.json")


async def test_offline_demo_conversation_replays():
    provider = offline_provider()
    assert provider.provider_id == OFFLINE_PROVIDER_ID
    answer = await collect(
        provider.stream(request(demo.ASK_ABOUT_SELECTION, model=OFFLINE_MODEL_ID))
    )
    assert text_of(answer) == demo.SELECTION_ANSWER

    history = [
        user(demo.ASK_ABOUT_SELECTION),
        LlmMessage(role="assistant", content=(TextPart(text="…"),)),
        user(demo.ASK_FOR_CHANGE),
    ]

    async def step(expected: list[str]) -> tuple[list[ToolCallEnd], list]:
        chunks = await collect(
            provider.stream(LlmRequest(model=OFFLINE_MODEL_ID, messages=tuple(history)))
        )
        calls = [c for c in chunks if isinstance(c, ToolCallEnd)]
        assert [call.name for call in calls] == expected
        assert chunks[-1].stop_reason == "tool_use"
        history.append(
            LlmMessage(
                role="assistant",
                content=tuple(ToolCallPart(id=c.id, name=c.name, args=c.args) for c in calls),
            )
        )
        for call in calls:
            result = ToolResultPart(tool_call_id=call.id, result="whatever the tool said")
            history.append(LlmMessage(role="tool", content=(result,)))
        return calls, chunks

    (plan_call, search_call), first = await step(["update_plan", "search_files"])
    assert plan_call.args == {"plan": demo.plan_entries(0)}
    assert search_call.args["pattern"] == demo.SEARCH_PATTERN
    assert text_of(first) == demo.PLAN_PREAMBLE
    (read_call,), _ = await step(["read_file"])
    assert read_call.args == {"path": demo.DEMO_SOURCE_PATH}
    (edit_call,), edit = await step(["edit_file"])
    assert edit_call.args == {"path": demo.DEMO_SOURCE_PATH, "edits": [demo.DEMO_EDIT]}
    assert text_of(edit) == demo.CHANGE_PREAMBLE
    (done_call,), _ = await step(["update_plan"])
    assert done_call.args == {"plan": demo.plan_entries(len(demo.PLAN_STEPS))}
    final = await collect(
        provider.stream(LlmRequest(model=OFFLINE_MODEL_ID, messages=tuple(history)))
    )
    assert text_of(final) == demo.CHANGE_SUMMARY
    assert isinstance(final[-1], StopChunk) and final[-1].stop_reason == "stop"


async def test_offline_model_explains_itself_for_anything_else():
    chunks = await collect(offline_provider().stream(request("What is the meaning of life?")))
    assert text_of(chunks) == OFFLINE_EXPLANATION
    assert "relavium-lsp keys set anthropic" in OFFLINE_EXPLANATION
    assert "allow_local_endpoint" in OFFLINE_EXPLANATION
    assert isinstance(chunks[-1], StopChunk) and chunks[-1].stop_reason == "stop"


async def test_bundled_cassette_regenerates_byte_identical(tmp_path):
    path = tmp_path / "offline.json"
    assert await record(path) == 6
    bundled = resources.files("relavium_lsp.llm").joinpath("cassettes", "offline.json").read_text()
    assert path.read_text() == bundled
