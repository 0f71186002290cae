"""The store keeps decoded messages for the next turn's history tail, never a stale one."""

from __future__ import annotations

from store_records import text

from relavium_lsp.store.models import MESSAGE_COLUMNS, message_from_row
from relavium_lsp.store.rows.messages import DecodedMessages
from relavium_lsp.store.sessions import SessionStore


def _rows(store: SessionStore, session_id: str) -> list[tuple[object, ...]]:
    return list(
        store._connection.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM session_messages"
            " WHERE session_id = ? ORDER BY sequence_number",
            (session_id,),
        ).fetchall()
    )


def test_the_next_tail_reuses_what_the_last_one_decoded(
    store: SessionStore, session_id: str
) -> None:
    for n in range(6):
        store.append_message(session_id, "user" if n % 2 == 0 else "assistant", text(f"m{n}"))
    first = store.load_tail_within_budget(session_id, 10_000)
    store.append_message(session_id, "user", text("one more"))
    second = store.load_tail_within_budget(session_id, 10_000)
    assert [m.sequence_number for m in second] == list(range(1, 8))
    assert all(old is new for old, new in zip(first, second[:6], strict=True))
    # Equal to what decoding the rows afresh gives, the new message included.
    assert second == [message_from_row(row) for row in _rows(store, session_id)]


def test_a_row_that_changed_in_any_column_is_decoded_afresh(
    store: SessionStore, session_id: str
) -> None:
    store.append_message(session_id, "user", text("before"))
    (cached,) = store.load_tail_within_budget(session_id, 10_000)
    # Another process (or a repair) rewrote the row: the cache must not answer for it.
    with store._connection:
        store._connection.execute(
            "UPDATE session_messages SET content = ? WHERE session_id = ?",
            ('[{"type": "text", "text": "after"}]', session_id),
        )
    (fresh,) = store.load_tail_within_budget(session_id, 10_000)
    assert fresh is not cached
    assert fresh.content[0].text == "after"  # type: ignore[union-attr]


def test_the_cache_is_bounded_by_the_rows_text(store: SessionStore, session_id: str) -> None:
    for n in range(40):
        store.append_message(session_id, "user", text(f"message {n} " + "x" * 200))
    rows = _rows(store, session_id)
    cache = DecodedMessages(max_bytes=4_000)  # about 11 rows (one may take an eighth)
    for row in rows:
        assert cache.decode(row) == message_from_row(row)
    assert 0 < len(cache) < len(rows)
    newest = cache.decode(rows[-1])
    assert cache.decode(rows[-1]) is newest  # the most recent stay
    oldest = cache.decode(rows[0])
    assert cache.decode(rows[0]) is oldest
    too_big = DecodedMessages(max_bytes=8)  # no single row fits: nothing is kept
    too_big.decode(rows[0])
    assert len(too_big) == 0
