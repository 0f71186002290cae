"""Compaction markers that hold a view, stored as what they add (``docs/design.md`` §2.3).

A marker written inside a turn holds the model's whole view of everything at or before its
boundary (``CompactionMarker.view``). The next one of the same turn starts with that view
again — the same messages, then the rounds since, some of their results cleared — so storing
each in full grows the history quadratically with the markers of a run. The store therefore
keeps a view marker as an *extension* of the newest view marker before it: the number of
that view's leading messages it keeps unchanged, then only its own messages. The row's
``token_estimate`` is still the whole view's, so the budget walk and the token totals read
it as before.

Every reader gets the whole view back (:func:`resolve`): it follows the chain of extensions
down to a marker stored in full — the form every marker had before, still read as it is — and
rebuilds the content and layout from there. Nothing outside the store sees an extension.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field, ValidationError

from relavium_lsp.contracts.base import WireModel, compact_json
from relavium_lsp.contracts.content import DurableContentPart
from relavium_lsp.contracts.session import CompactionMarker, SessionMessage, ViewMessage
from relavium_lsp.errors import StoreError
from relavium_lsp.store.db.connection import Connection
from relavium_lsp.store.models import MESSAGE_COLUMNS

EXTENDS = "extends"
# Positions in a MESSAGE_COLUMNS row.
_SESSION, _SEQUENCE, _COMPACTION = 1, 2, 6
_SELECT_MARKER = (
    f"SELECT {MESSAGE_COLUMNS} FROM session_messages"  # noqa: S608 - constant columns
    " WHERE session_id = ? AND sequence_number = ? AND compaction IS NOT NULL"
)
_SELECT_NEWEST_MARKER = (
    f"SELECT {MESSAGE_COLUMNS} FROM session_messages"  # noqa: S608 - constant columns
    " WHERE session_id = ? AND compaction IS NOT NULL AND rolled_back = 0"
    " ORDER BY sequence_number DESC LIMIT 1"
)

Decode = Callable[[Sequence[Any]], SessionMessage]


class ViewExtension(WireModel):
    """The stored ``extends`` of a view marker: the marker it continues, and how much of it."""

    sequence_number: int = Field(ge=1)
    kept_messages: int = Field(ge=1)


def stored_form(
    connection: Connection,
    session_id: str,
    marker: CompactionMarker,
    parts: Sequence[DurableContentPart],
    decode: Decode,
) -> tuple[dict[str, Any], Sequence[DurableContentPart]]:
    """The compaction column (as JSON data) and the content to store for a new marker.

    A view marker whose view starts with messages of the newest visible view marker's is
    stored as an extension of it; any other marker in full.
    """
    whole = marker.model_dump(mode="json", by_alias=True)
    if marker.view is None:
        return whole, parts
    row = connection.execute(_SELECT_NEWEST_MARKER, (session_id,)).fetchone()
    if row is None:
        return whole, parts
    base = resolve(connection, row, decode)
    if base.compaction is None or base.compaction.view is None:
        return whole, parts
    kept, kept_parts = _common_prefix(base.compaction.view, base.content, marker.view, parts)
    if kept == 0:
        return whole, parts
    extension = ViewExtension(sequence_number=base.sequence_number, kept_messages=kept)
    own = {**whole, "view": whole["view"][kept:], EXTENDS: extension.to_wire()}
    return own, parts[kept_parts:]


def _common_prefix(
    base_view: Sequence[ViewMessage],
    base_parts: Sequence[DurableContentPart],
    view: Sequence[ViewMessage],
    parts: Sequence[DurableContentPart],
) -> tuple[int, int]:
    """(leading messages both views hold unchanged, how many parts those are)."""
    messages = offset = 0
    for ours, theirs in zip(view, base_view, strict=False):
        end = offset + ours.parts
        if ours != theirs or parts[offset:end] != base_parts[offset:end]:
            break
        messages, offset = messages + 1, end
    return messages, offset


def _is_extension(compaction: str | None) -> bool:
    """Whether a compaction column holds an extension (cheap: no JSON parse of the view)."""
    return compaction is not None and f'"{EXTENDS}":' in compaction


def resolve(
    connection: Connection,
    row: Sequence[Any],
    decode: Decode,
    known: Mapping[int, SessionMessage] | None = None,
) -> SessionMessage:
    """The message of ``row``, a view marker stored as an extension rebuilt in full.

    ``known`` (sequence → whole marker) spares re-reading a chain a reader already rebuilt,
    e.g. an export reading every marker in order.
    """
    if not _is_extension(row[_COMPACTION]):
        return decode(row)
    session_id = row[_SESSION]
    chain: list[tuple[SessionMessage, ViewExtension]] = []
    current = row
    while True:
        if not _is_extension(current[_COMPACTION]):
            whole = decode(current)
            break
        own, extension = _own(current, decode)
        chain.append((own, extension))
        base = extension.sequence_number
        if known is not None and base in known:
            whole = known[base]
            break
        # Bases only ever go back in the history, so the walk ends.
        found = None
        if base < own.sequence_number:
            found = connection.execute(_SELECT_MARKER, (session_id, base)).fetchone()
        if found is None:
            raise StoreError(
                f"message {own.sequence_number} of session {session_id} is unreadable:"
                " the compaction view it extends is missing"
            )
        current = found
    for own, extension in reversed(chain):
        whole = _extended(whole, own, extension)
    return whole


def _own(row: Sequence[Any], decode: Decode) -> tuple[SessionMessage, ViewExtension]:
    """An extension row as a message of its own messages only, and what it extends."""
    try:
        column = json.loads(row[_COMPACTION])
        extension = ViewExtension.model_validate(column.pop(EXTENDS))
    except (ValidationError, ValueError, KeyError):
        raise StoreError(
            f"message {row[_SEQUENCE]} of session {row[_SESSION]} is unreadable:"
            " its compaction view extension is malformed"
        ) from None
    plain = (*row[:_COMPACTION], compact_json(column), *row[_COMPACTION + 1 :])
    return decode(plain), extension


def _extended(
    base: SessionMessage, own: SessionMessage, extension: ViewExtension
) -> SessionMessage:
    """``own`` with the kept leading messages of ``base``'s whole view before its own."""
    base_marker, own_marker = base.compaction, own.compaction
    if (
        base_marker is None
        or base_marker.view is None
        or own_marker is None
        or len(base_marker.view) < extension.kept_messages
    ):
        raise StoreError(
            f"message {own.sequence_number} of session {own.session_id} is unreadable:"
            " it extends a compaction view that does not hold what it keeps"
        )
    kept = base_marker.view[: extension.kept_messages]
    kept_parts = sum(message.parts for message in kept)
    view = [*kept, *(own_marker.view or [])]
    marker = own_marker.model_copy(update={"view": view})
    content = [*base.content[:kept_parts], *own.content]
    return own.model_copy(update={"compaction": marker, "content": content})
