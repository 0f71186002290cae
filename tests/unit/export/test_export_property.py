"""Property tests: any valid transcript exports, parses and re-serializes identically."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relavium_lsp.contracts.agent import DEFAULT_AGENT
from relavium_lsp.contracts.content import (
    DurableContentPart,
    DurableMediaPart,
    DurableReasoningPart,
    HandleSource,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import (
    CompactionMarker,
    InterruptionMarker,
    MessageRole,
    SessionMessage,
)
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.jsonl_import import import_jsonl
from relavium_lsp.export.turns import completed_turns
from relavium_lsp.export.workflow_yaml import (
    export_workflow_yaml,
    neutralise_template,
    parse_workflow,
    restore_template,
    serialize_workflow,
    slugify,
)
from tests.hypothesis_profiles import examples
from tests.unit.export.export_support import SESSION_ID, make_record

# Every character except lone surrogates (which no UTF-8 file can hold).
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
short_id = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12)
json_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)
handle = st.from_regex(r"\Amedia://sha256-[0-9a-f]{64}\Z")
# Wire models take camelCase aliases in their signatures, so build them through lambdas.
part: st.SearchStrategy[DurableContentPart] = st.one_of(
    st.builds(lambda value: TextPart(text=value), text),
    st.builds(
        lambda value, redacted: DurableReasoningPart(text=value, redacted=redacted),
        text,
        st.booleans(),
    ),
    st.builds(
        lambda call_id, name, args: ToolCallPart(id=call_id, name=name, args=args),
        short_id,
        short_id,
        st.dictionaries(text, json_value, max_size=3),
    ),
    st.builds(
        lambda call_id, result, failed: ToolResultPart(
            tool_call_id=call_id, result=result, is_error=failed
        ),
        short_id,
        text,
        st.booleans(),
    ),
    st.builds(
        lambda mime, digest, name: DurableMediaPart(
            mime_type=mime, source=HandleSource(handle=digest), name=name
        ),
        short_id,
        handle,
        st.none() | text,
    ),
)
role: st.SearchStrategy[MessageRole] = st.sampled_from(["user", "assistant", "tool", "system"])


@st.composite
def transcripts(draw: st.DrawFn) -> list[SessionMessage]:
    count = draw(st.integers(0, 10))
    sequence = 0
    messages = []
    for index in range(count):
        sequence += draw(st.integers(1, 3))
        message_role = draw(role)
        marker: dict[str, Any] = {}
        if message_role == "system" and draw(st.booleans()):
            marker["compaction"] = CompactionMarker(
                dropped_through_sequence=max(0, sequence - 1),
                mode=draw(st.sampled_from(["summarize", "trim"])),
            )
        elif message_role == "system" and draw(st.booleans()):
            marker["interruption"] = InterruptionMarker(interrupted_after_sequence=sequence - 1)
        messages.append(
            SessionMessage(
                id=f"m{index}",
                session_id=SESSION_ID,
                sequence_number=sequence,
                role=message_role,
                content=draw(st.lists(part, max_size=4)),
                model_id=draw(st.none() | short_id),
                timestamp=draw(text.filter(bool)),
                **marker,
            )
        )
    return messages


snapshots = st.sampled_from([{}, DEFAULT_AGENT.model_dump(mode="json"), {"id": "a", "name": "A"}])
SETTINGS = settings(
    max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(messages=transcripts(), title=st.none() | text, snapshot=snapshots)
def test_workflow_round_trips_byte_for_byte(
    messages: list[SessionMessage], title: str | None, snapshot: dict[str, Any]
) -> None:
    record = make_record(title=title, snapshot=snapshot)
    exported = export_workflow_yaml(record, messages)
    document = parse_workflow(exported)
    assert serialize_workflow(document) == exported
    assert document.metadata is not None and document.metadata.relavium_export is not None
    assert document.metadata.relavium_export.messages == messages
    assert len(document.nodes) == len(completed_turns(messages)) + 2
    assert export_workflow_yaml(record, messages) == exported


@SETTINGS
@given(messages=transcripts(), title=st.none() | text)
def test_jsonl_round_trips_apart_from_the_session_id(
    messages: list[SessionMessage], title: str | None
) -> None:
    record = make_record(title=title, turn_count=len(messages))
    exported = export_jsonl(record, messages)
    read = import_jsonl(exported)
    imported, imported_messages = read.record, read.messages
    assert imported.id != record.id
    assert [m.content for m in imported_messages] == [m.content for m in messages]
    again = export_jsonl(imported, imported_messages)
    assert again.replace(imported.id, record.id) == exported


@given(text=text)
def test_neutralising_removes_every_opener_and_is_reversible(text: str) -> None:
    neutral = neutralise_template(text)
    assert "{{" not in neutral
    assert restore_template(neutral) == text


@given(title=st.none() | text)
def test_slugs_are_ascii_kebab_ids(title: str | None) -> None:
    slug = slugify(title)
    assert slug.isascii() and 0 < len(slug) <= 64
    assert all(piece and piece.isalnum() and piece == piece.lower() for piece in slug.split("-"))
