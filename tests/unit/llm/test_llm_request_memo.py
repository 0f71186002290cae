"""The kept projections and request JSON (issue 25) change nothing a provider receives.

- ``request_json`` is byte for byte what ``httpx`` sends for ``request_body`` as ``json=``,
  with its per-message memo cold or warm, on random requests;
- ``project_messages`` answers the same with its per-unit memo warm as a fresh projection
  of equal (but new) message objects, on random histories;
- a message that changed (a new object with the same id) is projected afresh;
- the OpenAI-compatible adapter puts exactly those bytes on the wire.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relavium_lsp.contracts.content import (
    Base64Source,
    ContentPart,
    DurableReasoningPart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UrlSource,
)
from relavium_lsp.contracts.session import CompactionMarker, SessionMessage
from relavium_lsp.llm.identity_memo import IdentityMemo
from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider
from relavium_lsp.llm.openai_wire import request_body, request_json
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolSpec
from relavium_lsp.store.media import MediaStore

text = st.text(max_size=12)  # any code point: non-ASCII, escapes, lone surrogates
ids = st.sampled_from(["c1", "c2", "c3"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
parts: st.SearchStrategy[ContentPart] = st.one_of(
    st.builds(lambda value: TextPart(text=value), text),
    st.builds(lambda value: ReasoningPart(text=value), text),
    st.builds(
        lambda call, name, args: ToolCallPart(id=call, name=name, args=args),
        ids,
        st.sampled_from(["read_file", "grep"]),
        st.dictionaries(text, json_values, max_size=3),
    ),
    st.builds(
        lambda call, result, error: ToolResultPart(
            tool_call_id=call, result=result, is_error=error
        ),
        ids,
        text,
        st.booleans(),
    ),
    st.builds(
        lambda mime, data: MediaPart(mime_type=mime, source=Base64Source(data=data)),
        st.sampled_from(["image/png", "application/pdf"]),
        st.text("abc=", max_size=8),
    ),
    st.builds(
        lambda url, name: MediaPart(mime_type="image/jpeg", source=UrlSource(url=url), name=name),
        st.just("https://example.com/a.jpg"),
        st.none() | text,
    ),
)
messages = st.builds(
    lambda role, content: LlmMessage(role=role, content=tuple(content)),
    st.sampled_from(["user", "assistant", "tool"]),
    st.lists(parts, max_size=4),
)
requests = st.builds(
    lambda model, system, sent, tools, temperature, max_tokens, stop: LlmRequest(
        model=model,
        system=system,
        messages=tuple(sent),
        tools=tools,
        temperature=temperature,
        max_tokens=max_tokens,
        stop_sequences=stop,
    ),
    text,
    text,
    st.lists(messages, max_size=6),
    st.lists(
        st.builds(
            lambda name: ToolSpec(name=name, description="d", parameters={"type": "object"}),
            st.sampled_from(["read_file", "grep"]),
        ),
        max_size=2,
    ).map(tuple),
    st.none() | st.floats(0, 2),
    st.none() | st.integers(1, 10_000),
    st.lists(text, max_size=2).map(tuple),
)


def httpx_bytes(body: dict[str, Any]) -> bytes:
    """What ``httpx`` sends for ``json=body`` (the path every other adapter still takes)."""
    return httpx.Request("POST", "http://loop/v1/chat/completions", json=body).content


@settings(max_examples=200, deadline=None)
@given(requests, st.booleans())
def test_request_json_is_the_bytes_httpx_sends(request: LlmRequest, official: bool) -> None:
    expected = httpx_bytes(request_body(request, official=official))
    assert request_json(request, official=official) == expected  # memo cold
    assert request_json(request, official=official) == expected  # memo warm
    # The same message objects in another request (the next turn re-sends the history).
    later = request.model_copy(update={"messages": (*request.messages[::-1], *request.messages)})
    assert request_json(later, official=official) == httpx_bytes(
        request_body(later, official=official)
    )


def test_a_value_json_cannot_carry_fails_as_before() -> None:
    request = LlmRequest(
        model="m",
        messages=(LlmMessage(role="user", content=(TextPart(text="hi"),)),),
        temperature=float("nan"),
    )
    for encode in (
        lambda: request_json(request, official=False),
        lambda: httpx_bytes(request_body(request, official=False)),
    ):
        with pytest.raises(ValueError, match="JSON compliant"):
            encode()


def stored(sequence: int, role: str, content: list[Any], **fields: Any) -> SessionMessage:
    return SessionMessage(
        id=f"m{sequence}",
        session_id="s",
        sequence_number=sequence,
        role=role,  # type: ignore[arg-type]
        content=content,
        timestamp="2026-01-01T00:00:00Z",
        **fields,
    )


durable_parts = st.one_of(
    st.builds(lambda value: TextPart(text=value), text),
    st.builds(lambda value: DurableReasoningPart(text=value), text),
    st.builds(lambda call: ToolCallPart(id=call, name="read_file", args={"p": call}), ids),
    st.builds(lambda call, result: ToolResultPart(tool_call_id=call, result=result), ids, text),
)
histories = st.lists(
    st.tuples(st.sampled_from(["user", "assistant", "tool", "system"]), st.lists(durable_parts)),
    max_size=12,
)


def build(history: list[tuple[str, list[Any]]]) -> list[SessionMessage]:
    built = []
    for sequence, (role, content) in enumerate(history, start=1):
        if role == "system":
            marker = CompactionMarker(dropped_through_sequence=sequence // 2)
            built.append(stored(sequence, role, content, compaction=marker))
        else:
            built.append(stored(sequence, role, content))
    return built


def copied(history: list[SessionMessage]) -> list[SessionMessage]:
    """Equal messages that are new objects: the memo cannot know them."""
    return [SessionMessage.model_validate(message.model_dump()) for message in history]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(histories, st.integers(0, 12))
def test_projection_with_kept_units_equals_a_fresh_one(
    tmp_path: Path, history: list[tuple[str, list[Any]]], cut: int
) -> None:
    media = MediaStore(tmp_path / "media")
    full = build(history)
    first = project_messages(full[:cut], media)  # an earlier turn saw a prefix
    assert first == project_messages(copied(full[:cut]), media)
    again = project_messages(full, media)  # this turn: the same objects plus new ones
    assert again == project_messages(copied(full), media)
    assert project_messages(full, media) == again  # fully warm


def test_a_changed_message_is_projected_afresh(tmp_path: Path) -> None:
    media = MediaStore(tmp_path / "media")
    history = [stored(1, "user", [TextPart(text="before")])]
    assert project_messages(history, media)[0].content == (TextPart(text="before"),)
    edited = [stored(1, "user", [TextPart(text="after")])]  # same id, another row
    assert project_messages(edited, media)[0].content == (TextPart(text="after"),)


def test_unchanged_units_keep_their_projected_objects(tmp_path: Path) -> None:
    media = MediaStore(tmp_path / "media")
    history = [
        stored(1, "user", [TextPart(text="hi")]),
        stored(2, "assistant", [ToolCallPart(id="c1", name="read_file", args={})]),
        stored(3, "tool", [ToolResultPart(tool_call_id="c1", result="text")]),
    ]
    first = project_messages(history, media)
    second = project_messages([*history, stored(4, "assistant", [TextPart(text="ok")])], media)
    assert all(a is b for a, b in zip(first, second[:3], strict=True))


def test_the_memo_is_bounded_and_holds_its_objects() -> None:
    memo: IdentityMemo[str] = IdentityMemo(max_entries=2, weigh=len, max_weight=80)
    keys = [object() for _ in range(3)]
    for index, key in enumerate(keys):
        memo.put((key,), str(index))
    assert len(memo) == 2
    assert memo.get((keys[0],)) is None
    assert memo.get((keys[2],)) == "2"
    memo.put((keys[1],), "x" * 11)  # over an eighth of the weight bound: not kept
    assert memo.get((keys[1],)) == "1"


async def test_the_adapter_sends_exactly_those_bytes() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=b"data: [DONE]\n\n"
        )

    call = LlmRequest(
        model="m",
        system="be brief",
        messages=(LlmMessage(role="user", content=(TextPart(text="héllo \u2028"),)),),
        max_tokens=5,
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        provider = OpenAICompatibleProvider(
            "loop", base_url="http://loop/v1", api_key=None, client=client, timeout_s=5
        )
        async for _ in provider.stream(call):
            pass
    (sent,) = seen
    assert sent.content == httpx_bytes(request_body(call, official=False))
    assert sent.headers["content-type"] == "application/json"
    assert json.loads(sent.content)["max_tokens"] == 5
