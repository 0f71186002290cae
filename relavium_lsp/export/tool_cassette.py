"""The tool cassette (``relavium-tool-cassette/1.0``): every tool call's input, output and time.

A JSONL companion of a session's export (seed 004's ``recordToolCassette``): compact JSON with
sorted keys, one record per line, deterministic for the same session, so a replay can serve
each recorded call exactly as it was even when the tools would now answer otherwise.

- ``cassette-open`` (first line): ``format`` and ``sessionId`` (the session recorded);
- ``tool-call``: ``callId``, ``sequenceNumber`` (the assistant message that made the call),
  ``tool``, ``input`` (its arguments), ``output`` (``result``, ``isError`` and any ``media``
  handles beside it) and ``durationMs`` (from its ``agent:tool_result`` event; absent when the
  log has none, e.g. an imported session);
- ``cassette-close`` (last line): ``calls``, how many ``tool-call`` lines there are.

Only the visible history is recorded (what a replay sends again); a call whose result never
arrived is left out. The export writes the cassette into the history (encrypted, one per
session, replaced by the next export) and beside a JSONL file written to disk; a replay reads
the stored one back (``engine/history/replay.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.content import (
    DurableMediaPart,
    MediaPart,
    ToolCallPart,
    ToolResultPart,
)
from relavium_lsp.contracts.session import SessionMessage
from relavium_lsp.errors import ExportError
from relavium_lsp.export.json_lines import dump_line, parse_line, split_lines

TOOL_CASSETTE_FORMAT: Final = "relavium-tool-cassette/1.0"
TOOL_CASSETTE_SUFFIX: Final = ".tool-cassette.jsonl"


class _Line(WireModel):
    model_config = ConfigDict(strict=True)


class CassetteOpen(_Line):
    """First line."""

    record: Literal["cassette-open"] = "cassette-open"
    format: Literal["relavium-tool-cassette/1.0"] = TOOL_CASSETTE_FORMAT
    session_id: str = Field(min_length=1, max_length=64)


class CassetteOutput(_Line):
    """What the tool answered: the result the model saw, and media kept beside it."""

    result: str
    is_error: bool = False
    media: list[DurableMediaPart] | None = None


class CassetteCall(_Line):
    """One recorded tool call."""

    record: Literal["tool-call"] = "tool-call"
    call_id: str = Field(min_length=1, max_length=200)
    sequence_number: int = Field(ge=1)
    tool: str = Field(min_length=1, max_length=200)
    input: dict[str, Any]
    output: CassetteOutput
    duration_ms: int | None = Field(default=None, ge=0)

    def answer(self) -> tuple[ToolResultPart, tuple[MediaPart, ...]]:
        """The result part and media a replay hands back for this call."""
        part = ToolResultPart(
            tool_call_id=self.call_id, result=self.output.result, is_error=self.output.is_error
        )
        media = tuple(
            MediaPart(mime_type=item.mime_type, source=item.source, name=item.name)
            for item in self.output.media or ()
        )
        return part, media


class CassetteClose(_Line):
    """Last line."""

    record: Literal["cassette-close"] = "cassette-close"
    calls: int = Field(ge=0)


_LINE_ADAPTER: TypeAdapter[CassetteOpen | CassetteCall | CassetteClose] = TypeAdapter(
    Annotated[CassetteOpen | CassetteCall | CassetteClose, Field(discriminator="record")]
)


@dataclass(frozen=True)
class ToolCassette:
    """A session's recorded tool calls, by call id."""

    session_id: str
    calls: dict[str, CassetteCall]


def record_tool_cassette(
    session_id: str, messages: Iterable[SessionMessage], durations: Mapping[str, int]
) -> ToolCassette:
    """The cassette of a transcript: each answered call, with its time from ``durations``."""
    asked: dict[str, tuple[int, ToolCallPart]] = {}
    calls: dict[str, CassetteCall] = {}
    for message in messages:
        for part in message.content:
            if isinstance(part, ToolCallPart):
                asked[part.id] = (message.sequence_number, part)
        if message.role != "tool":
            continue
        media = [part for part in message.content if isinstance(part, DurableMediaPart)]
        for part in message.content:
            if isinstance(part, ToolResultPart) and part.tool_call_id in asked:
                sequence, call = asked[part.tool_call_id]
                calls[call.id] = CassetteCall(
                    call_id=call.id,
                    sequence_number=sequence,
                    tool=call.name,
                    input=call.args,
                    output=CassetteOutput(
                        result=part.result, is_error=bool(part.is_error), media=media or None
                    ),
                    duration_ms=durations.get(call.id),
                )
    return ToolCassette(session_id=session_id, calls=calls)


def render_tool_cassette(cassette: ToolCassette) -> str:
    """The cassette as ``relavium-tool-cassette/1.0`` text (calls in the order they were made)."""
    lines = [dump_line(CassetteOpen(session_id=cassette.session_id))]
    lines += [dump_line(call) for call in cassette.calls.values()]
    lines.append(dump_line(CassetteClose(calls=len(cassette.calls))))
    return "".join(line + "\n" for line in lines)


def parse_tool_cassette(text: str) -> ToolCassette:
    """Validate a whole cassette file; :class:`ExportError` names the line that is wrong."""
    lines = split_lines(text)
    records = [parse_line(_LINE_ADAPTER, n, line) for n, line in enumerate(lines, start=1)]
    if not records or not isinstance(records[0], CassetteOpen):
        raise ExportError("the first record must be 'cassette-open'", line=1)
    if not isinstance(records[-1], CassetteClose) or len(records) < 2:
        raise ExportError("the file ends without 'cassette-close' (truncated)", line=len(lines))
    calls: dict[str, CassetteCall] = {}
    for number, record in enumerate(records[1:-1], start=2):
        if not isinstance(record, CassetteCall):
            raise ExportError("only 'tool-call' records may stand here", line=number)
        if record.call_id in calls:
            raise ExportError(f"callId {record.call_id[:64]!r} is recorded twice", line=number)
        calls[record.call_id] = record
    if records[-1].calls != len(calls):
        raise ExportError(
            f"calls is {records[-1].calls} but the file holds {len(calls)}", line=len(lines)
        )
    return ToolCassette(session_id=records[0].session_id, calls=calls)
