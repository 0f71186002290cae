"""JSONL transcripts: byte-stable export, validated all-or-nothing import."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.errors import ExportError
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.jsonl_import import import_jsonl
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from tests.unit.export.export_scenarios import SCENARIOS, tool_rounds


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    opened = SessionStore.open(tmp_path / "history.db", DbKey(os.urandom(32), "env"))
    yield opened
    opened.close()


def _stored(store: SessionStore, text: str) -> str:
    read = import_jsonl(text)
    record, messages = read.record, read.messages
    store.import_session(record, messages)
    snapshot = store.export_snapshot(record.id)
    assert snapshot is not None
    return export_jsonl(*snapshot)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_export_import_export_is_identical_apart_from_the_session_id(
    store: SessionStore, name: str
) -> None:
    record, messages = SCENARIOS[name]()
    if not record.agent_snapshot:
        # An import must give a session the engine can resume, which needs an agent.
        record = record.model_copy(update={"agent_snapshot": {"id": "helper", "name": "Helper"}})
    first = export_jsonl(record, messages)
    assert export_jsonl(record, messages) == first
    second = _stored(store, first)
    new_id = json.loads(second.splitlines()[0])["session"]["id"]
    assert new_id != record.id
    assert second.replace(new_id, record.id) == first
    # And once more from the imported copy: still stable.
    third = _stored(store, second)
    third_id = json.loads(third.splitlines()[0])["session"]["id"]
    assert third.replace(third_id, record.id) == first


def test_the_same_file_imports_twice_as_two_sessions(store: SessionStore) -> None:
    text = export_jsonl(*tool_rounds())
    read = import_jsonl(text)
    first, _ = read.record, read.messages
    read = import_jsonl(text)
    second, _ = read.record, read.messages
    read = import_jsonl(text)
    store.import_session(read.record, read.messages)
    read = import_jsonl(text)
    store.import_session(read.record, read.messages)
    assert first.id != second.id
    page = store.list_sessions(query="Friday")
    assert len(page.sessions) == 2
    assert {summary.message_count for summary in page.sessions} == {9}
    assert store.check_integrity() == ["ok"]


def test_trailing_tool_calls_become_records_and_come_back_in_place() -> None:
    record, messages = tool_rounds()
    lines = [json.loads(line) for line in export_jsonl(record, messages).splitlines()]
    kinds = [line["record"] for line in lines]
    assert kinds == [
        "session-open",
        "agent-registered",
        "message",
        "message",
        "tool-call",
        "tool-result",
        "message",
        "tool-call",
        "tool-call",
        "tool-result",
        "tool-result",
        "message",
        "message",
        "message",
        "session-close",
    ]
    assert lines[4] == {
        "args": {"path": "notes.txt"},
        "callId": "call-1",
        "name": "read_file",
        "record": "tool-call",
        "sequenceNumber": 2,
    }
    read = import_jsonl(export_jsonl(record, messages))
    _, imported = read.record, read.messages
    assert [m.content for m in imported] == [m.content for m in messages]
    assert [m.sequence_number for m in imported] == [m.sequence_number for m in messages]
    assert [m.timestamp for m in imported] == [m.timestamp for m in messages]
    assert {m.id for m in imported}.isdisjoint({m.id for m in messages})


def test_a_wider_filesystem_scope_is_narrowed_on_import() -> None:
    record, messages = tool_rounds()
    wide = record.model_copy(
        update={"context": SessionContext(working_dir="/", fs_scope_tier="full")}
    )
    read = import_jsonl(export_jsonl(wide, messages))
    imported, _ = read.record, read.messages
    assert imported.context.fs_scope_tier == "sandboxed"
    assert imported.status == "idle" and imported.turn_count == wide.turn_count


def _lines() -> list[str]:
    return export_jsonl(*tool_rounds()).splitlines()


def _edit(line_number: int, change: dict[str, object]) -> str:
    lines = _lines()
    record = json.loads(lines[line_number - 1])
    record.update(change)
    lines[line_number - 1] = json.dumps(record)
    return "\n".join(lines) + "\n"


BAD_FILES = {
    "not json": (lambda: "\n".join([*_lines()[:4], "{oops", *_lines()[5:]]), 5, "not valid JSON"),
    "empty line": (lambda: "\n".join([*_lines()[:2], "", *_lines()[2:]]), 3, "not valid JSON"),
    "unknown field": (lambda: _edit(2, {"extra": 1}), 2, "extra"),
    "unknown record": (lambda: _edit(3, {"record": "no-such-record"}), 3, "record"),
    "wrong type": (lambda: _edit(3, {"sequenceNumber": "1"}), 3, "sequenceNumber"),
    "signature smuggled in": (
        lambda: _edit(3, {"content": [{"type": "reasoning", "text": "x", "signature": "s"}]}),
        3,
        "signature",
    ),
    "inline media": (
        lambda: _edit(
            3,
            {
                "content": [
                    {
                        "type": "media",
                        "mimeType": "image/png",
                        "source": {"kind": "base64", "data": "AA=="},
                    }
                ]
            },
        ),
        3,
        "source",
    ),
    "sequence goes back": (lambda: _edit(6, {"sequenceNumber": 1}), 6, "does not follow"),
    "orphan tool call": (lambda: _edit(5, {"sequenceNumber": 7}), 5, "tool-call record"),
    "tool role as message": (lambda: _edit(3, {"role": "tool"}), 3, "tool-result"),
    "wrong format": (lambda: _edit(1, {"format": "relavium-session/2.0"}), 1, "format"),
    "bad agent snapshot": (
        lambda: _edit(
            1,
            {
                "session": {
                    **json.loads(_lines()[0])["session"],
                    "agentSnapshot": {"id": "NOT KEBAB"},
                }
            },
        ),
        1,
        "agentSnapshot",
    ),
    "no agent snapshot": (
        lambda: _edit(1, {"session": {**json.loads(_lines()[0])["session"], "agentSnapshot": {}}}),
        1,
        "agentSnapshot",
    ),
    "count mismatch": (lambda: _edit(15, {"messageCount": 8}), 15, "messageCount"),
    "truncated": (lambda: "\n".join(_lines()[:-1]) + "\n", 14, "truncated"),
    "starts mid-file": (lambda: "\n".join(_lines()[1:]) + "\n", 1, "session-open"),
    "after the close": (lambda: "\n".join([*_lines(), _lines()[2]]) + "\n", 16, "follow"),
    "duplicate key": (
        lambda: "\n".join([*_lines()[:2], _lines()[2][:-1] + ',"role":"user"}', *_lines()[3:]]),
        3,
        "duplicate key",
    ),
    "NaN": (lambda: _edit(5, {"args": float("nan")}), 5, "NaN"),
    "empty file": (lambda: "", 1, "empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_line_is_named_and_nothing_is_written(store: SessionStore, case: str) -> None:
    build, line, fragment = BAD_FILES[case]
    with pytest.raises(ExportError) as raised:
        read = import_jsonl(build())
        store.import_session(read.record, read.messages)
    assert raised.value.line == line
    assert fragment in raised.value.message
    assert raised.value.message.startswith(f"line {line}: ")
    assert store.list_sessions().sessions == []
