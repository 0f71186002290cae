"""Carrying a turn's projection, request JSON and estimates over to the next (issue 25).

One history evolves as sessions do — messages appended (tool calls and results, media,
interruption markers), the oldest dropped from the tail (a budget), compaction markers,
rollbacks (the newest rows replaced by new ones), rows decoded again (equal, new objects), a
blob deleted from the media store — and
after every step the carried results must equal the ones computed from nothing:

- ``project_messages`` (which continues the previous call's projection) equals
  ``project_afresh`` on equal, new message objects;
- ``request_json`` (which continues the previous request's fragments) is byte for byte what
  ``httpx`` sends for ``request_body``, for the history and for the calls of a tool loop that
  append to it — the OpenAI-compatible body and the Anthropic one (with and without cache
  breakpoints), also on any run of seam messages trimmed, rolled back and grown;
- the turn's input estimate equals the plain sum.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relavium_lsp.contracts.content import (
    DurableMediaPart,
    DurableReasoningPart,
    HandleSource,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import CompactionMarker, SessionMessage
from relavium_lsp.llm import anthropic_json, anthropic_wire
from relavium_lsp.llm.anthropic import AnthropicProvider
from relavium_lsp.llm.openai_wire import request_body, request_json
from relavium_lsp.llm.projection import project_afresh, project_messages
from relavium_lsp.llm.run_carry import RunCarry
from relavium_lsp.llm.seam import LlmMessage, LlmRequest, ToolSpec
from relavium_lsp.store.media import MediaStore
from tests.hypothesis_profiles import examples

text = st.text(max_size=8)
calls = st.sampled_from(["c1", "c2", "c3"])
BLOBS = (b"one", b"two")
# A blob (by its index in BLOBS) the history refers to.
content = st.lists(
    st.one_of(
        st.builds(lambda value: TextPart(text=value), text),
        st.builds(lambda value: DurableReasoningPart(text=value), text),
        st.builds(lambda call: ToolCallPart(id=call, name="grep", args={"q": call}), calls),
        st.builds(lambda call, out: ToolResultPart(tool_call_id=call, result=out), calls, text),
        st.builds(lambda blob: ("media", blob), st.sampled_from([0, 1])),
    ),
    max_size=3,
)
steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.lists(
                st.tuples(st.sampled_from(["user", "assistant", "tool"]), content), max_size=4
            ),
        ),
        st.tuples(st.just("trim"), st.integers(1, 4)),
        st.tuples(st.just("rollback"), st.integers(1, 3)),
        st.tuples(st.just("compact"), st.integers(0, 6), text),
        st.tuples(st.just("interrupt"), st.none()),
        st.tuples(st.just("delete_blob"), st.sampled_from([0, 1])),
        st.tuples(st.just("reorder"), st.none()),
        st.tuples(st.just("redecode"), st.integers(0, 6)),  # equal rows, new objects
    ),
    min_size=1,
    max_size=14,
)


class History:
    """Visible rows as the store holds them, and the tail a turn's walk would return."""

    def __init__(self, media: MediaStore) -> None:
        self.media = media
        self.handles = [media.put(blob) for blob in BLOBS]
        self.rows: list[SessionMessage] = []
        self.sequence = 0
        self.first = 0  # the oldest row the tail still holds (a budget's cut)

    def add(self, role: str, parts: list[Any], **fields: Any) -> None:
        self.sequence += 1
        stored = [
            DurableMediaPart(mime_type="image/png", source=HandleSource(handle=self.handles[p[1]]))
            if isinstance(p, tuple)
            else p
            for p in parts
        ]
        self.rows.append(
            SessionMessage(
                id=f"m{self.sequence}",
                session_id="s",
                sequence_number=self.sequence,
                role=role,  # type: ignore[arg-type]
                content=stored,
                timestamp="2026-01-01T00:00:00Z",
                **fields,
            )
        )

    def tail(self) -> list[SessionMessage]:
        """The walk's order: the newest marker first, then the rows after its boundary."""
        marker = next((row for row in reversed(self.rows) if row.compaction is not None), None)
        boundary = marker.compaction.dropped_through_sequence if marker and marker.compaction else 0
        kept = [
            row
            for row in self.rows[self.first :]
            if row.compaction is None and row.sequence_number > boundary
        ]
        return kept if marker is None else [marker, *kept]


def copied(messages: list[SessionMessage]) -> list[SessionMessage]:
    return [SessionMessage.model_validate(message.model_dump()) for message in messages]


def httpx_bytes(request: LlmRequest) -> bytes:
    body = request_body(request, official=True)
    return httpx.Request("POST", "http://loop/v1/chat/completions", json=body).content


def anthropic_bytes(request: LlmRequest, prompt_caching: bool) -> bytes:
    body = anthropic_wire.request_body(request, prompt_caching=prompt_caching)
    return httpx.Request("POST", "http://loop/v1/messages", json=body).content


def check(request: LlmRequest) -> None:
    assert request_json(request, official=True) == httpx_bytes(request)
    for caching in (True, False):
        carried = anthropic_json.request_json(request, prompt_caching=caching)
        assert carried == anthropic_bytes(request, caching)


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps)
def test_carried_results_equal_fresh_ones(tmp_path: Path, plan: list[Any]) -> None:
    media = MediaStore(tmp_path / "media")
    history = History(media)
    for step in plan:
        kind, argument = step[0], step[1]
        if kind == "append":
            for role, parts in argument:
                history.add(role, parts)
        elif kind == "trim":
            history.first = min(len(history.rows), history.first + argument)
        elif kind == "rollback":
            del history.rows[max(history.first, len(history.rows) - argument) :]
        elif kind == "compact":
            boundary = max(0, history.sequence - argument)
            history.add(
                "system",
                [TextPart(text=step[2])],
                compaction=CompactionMarker(dropped_through_sequence=boundary),
            )
        elif kind == "interrupt":
            history.add("system", [])
        elif kind == "redecode":
            cut = max(0, len(history.rows) - argument)
            history.rows[cut:] = copied(history.rows[cut:])
        elif kind == "delete_blob":
            media.delete(history.handles[argument])
        tail = history.tail()
        if kind == "reorder":
            tail = tail[::-1]  # any order is still projected right (afresh)
        projected = project_messages(tail, media)
        assert projected == project_afresh(copied(tail), media)
        request = LlmRequest(model="m", system="be brief", messages=projected)
        check(request)
        # A tool loop within the turn appends to what it sends.
        looped = request.model_copy(
            update={
                "messages": (
                    *projected,
                    LlmMessage(
                        role="assistant",
                        content=(ToolCallPart(id="c9", name="grep", args={}),),
                    ),
                    LlmMessage(
                        role="tool", content=(ToolResultPart(tool_call_id="c9", result="x"),)
                    ),
                )
            }
        )
        check(looped)


def test_a_run_carry_derives_only_what_is_new() -> None:
    carry = RunCarry(max_runs=2)
    objects = [object() for _ in range(8)]
    derived: list[object] = []

    def derive(item: object) -> str:
        derived.append(item)
        index = objects.index(item)
        return "" if index == 3 else str(index)  # one object sends nothing

    assert carry.join(objects[:5], derive) == "0,1,2,4"
    derived.clear()
    assert carry.join(objects[1:7], derive) == "1,2,4,5,6"  # dropped one, appended two
    assert derived == objects[5:7]
    derived.clear()
    assert carry.join([objects[2], objects[7], objects[0]], derive) == "2,7,0"
    assert derived == [objects[7], objects[0]]  # diverged after the first: derived again
    assert carry.join([objects[3]], derive) == ""
    assert carry.total([objects[1], objects[2]], objects.index) == 3
    assert carry.total([objects[2], objects[5]], objects.index) == 7
    for _ in range(3):
        carry.total([object()], lambda item: 0)
    assert len(carry) == 2  # bounded


def test_positions_survive_a_long_chain_of_runs() -> None:
    carry = RunCarry()
    objects = [object() for _ in range(400)]
    # A window sliding over the objects, one step at a time: a chain of continued runs
    # whose index drops entries behind it and is rebuilt when they pile up.
    for start in range(0, 390):
        window = objects[start : start + 10]
        assert carry.total(window, objects.index) == sum(range(start, start + 10))
    assert len(carry) == 1


def test_units_with_media_resolve_on_every_call(tmp_path: Path) -> None:
    media = MediaStore(tmp_path / "media")
    history = History(media)
    history.add("user", [("media", 0)])
    history.add("assistant", [TextPart(text="seen")])
    first = project_messages(history.tail(), media)
    assert first[0].content[0].type == "media"
    media.delete(history.handles[0])
    history.add("user", [TextPart(text="and now?")])
    again = project_messages(history.tail(), media)
    assert again[0].content[0] == TextPart(text="[attachment image/png is no longer available]")
    assert again[1] is first[1]  # the unit without media is carried over as it was


seam_parts = st.one_of(
    st.builds(lambda value: TextPart(text=value), st.sampled_from(["", " ", "hi", "é\u2028"])),
    st.builds(
        lambda value, signature: ReasoningPart(text=value, signature=signature),
        text,
        st.none() | st.just("sig"),
    ),
    st.builds(lambda call: ToolCallPart(id=call, name="grep", args={"q": call}), calls),
    st.builds(
        lambda call, out, error: ToolResultPart(tool_call_id=call, result=out, is_error=error),
        calls,
        text,
        st.booleans(),
    ),
)
seam_messages = st.builds(
    lambda role, parts: LlmMessage(role=role, content=tuple(parts)),
    st.sampled_from(["user", "assistant", "tool"]),
    st.lists(seam_parts, max_size=3),
)
windows = st.lists(
    st.tuples(
        st.integers(0, 3),  # dropped at the front
        st.lists(seam_messages, max_size=4),  # appended
        st.integers(0, 2),  # the newest ones replaced first (a rollback, a tool loop's end)
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=examples(200), deadline=None)
@given(windows, st.booleans(), st.none() | st.floats(0, 1))
def test_carried_request_bodies_equal_fresh_ones_on_any_messages(
    steps: list[tuple[int, list[LlmMessage], int]], tools: bool, temperature: float | None
) -> None:
    sent: list[LlmMessage] = []
    for dropped, appended, replaced in steps:
        del sent[:dropped]
        del sent[max(0, len(sent) - replaced) :]
        sent.extend(appended)
        request = LlmRequest(
            model="claude-sonnet-4-5",
            system="be brief",
            messages=tuple(sent),
            tools=(ToolSpec(name="grep", description="d", parameters={"type": "object"}),)
            if tools
            else (),
            temperature=temperature,
            stop_sequences=("END",),
        )
        check(request)


async def test_the_anthropic_adapter_sends_exactly_those_bytes() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")

    call = LlmRequest(
        model="claude-sonnet-4-5",
        system="be brief",
        messages=(
            LlmMessage(role="assistant", content=(TextPart(text="earlier"),)),
            LlmMessage(role="user", content=(TextPart(text="héllo \u2028"),)),
        ),
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        provider = AnthropicProvider(
            "anthropic", base_url="http://loop", api_key=None, client=client, timeout_s=5
        )
        async for _ in provider.stream(call):
            pass
    (sent,) = seen
    assert sent.content == anthropic_bytes(call, True)
    assert sent.headers["content-type"] == "application/json"


def test_a_run_carry_is_bounded_by_the_text_it_keeps() -> None:
    carry = RunCarry(max_chars=40)
    small = [object(), object()]
    assert carry.join(small, lambda item: "x" * 5) == "xxxxx,xxxxx"
    assert len(carry) == 1
    assert carry.join([object()], lambda item: "y" * 30) == "y" * 30  # over half: not kept
    assert len(carry) == 1
    for _ in range(3):
        carry.join([object()], lambda item: "z" * 15)
    assert len(carry) == 2  # 16 characters each: a third would pass 40
