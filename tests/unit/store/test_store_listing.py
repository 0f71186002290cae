from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_records import make_record, text

from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.models import InvalidCursorError, encode_cursor
from relavium_lsp.store.rows.listing import fts_match_expression, like_pattern
from relavium_lsp.store.sessions import SessionStore
from tests.hypothesis_profiles import examples


def _stamp(index: int) -> str:
    return f"2025-01-01T00:{index // 60:02d}:{index % 60:02d}.000Z"


def _ids(store: SessionStore, **filters: object) -> list[str]:
    """Every page, following cursors, concatenated."""
    collected: list[str] = []
    cursor = None
    while True:
        page = store.list_sessions(cursor=cursor, **filters)  # type: ignore[arg-type]
        collected.extend(summary.id for summary in page.sessions)
        if page.next_cursor is None:
            return collected
        cursor = page.next_cursor


@pytest.fixture
def populated(store: SessionStore) -> SessionStore:
    for index in range(30):
        record = make_record(
            f"s{index:02d}",
            working_dir="/ws/a" if index % 2 else "/ws/b",
            status="ended" if index % 3 == 0 else "idle",
            title=f"Session number {index}",
            updated_at=_stamp(index // 2),  # pairs share a timestamp: ties break by id
        )
        store.create_session(record)
    return store


def test_newest_first_with_id_tiebreak_and_complete_paging(populated: SessionStore) -> None:
    expected = sorted(
        (f"s{index:02d}" for index in range(30)),
        key=lambda sid: (_stamp(int(sid[1:]) // 2), sid),
        reverse=True,
    )
    assert [s.id for s in populated.list_sessions(limit=100).sessions] == expected
    for limit in (1, 4, 7, 30, 31):
        assert _ids(populated, limit=limit) == expected


def test_filters_combine(populated: SessionStore) -> None:
    ids = _ids(populated, workspace="/ws/a", status="ended", limit=2)
    expected = {f"s{index:02d}" for index in range(30) if index % 2 and index % 3 == 0}
    assert set(ids) == expected and len(ids) == len(expected)
    assert _ids(populated, workspace="/nowhere") == []


def test_deleted_sessions_are_hidden_everywhere(populated: SessionStore) -> None:
    populated.soft_delete_session("s05")
    assert "s05" not in _ids(populated)
    assert populated.get_session("s05") is None
    deleted = populated.get_session("s05", include_deleted=True)
    assert deleted is not None and deleted.deleted_at is not None


def test_activity_moves_a_session_to_the_top(populated: SessionStore) -> None:
    populated.append_message("s00", "user", text("wake up"))
    first = populated.list_sessions(limit=1).sessions[0]
    assert first.id == "s00"
    assert first.preview == "wake up"
    assert first.message_count == 1
    assert first.working_dir == "/ws/b"
    assert first.agent_ref == "relavium-default"


def test_query_matches_titles_and_message_text(populated: SessionStore) -> None:
    populated.append_message("s03", "user", text("Why does the Parser crash on naïve input?"))
    populated.append_message("s04", "assistant", text("parsers are hard"))
    assert _ids(populated, query="parser crash") == ["s03"]
    assert set(_ids(populated, query="parser")) == {"s03", "s04"}  # prefix on the last word
    assert _ids(populated, query="naive") == ["s03"]  # diacritics folded
    assert _ids(populated, query="number 17") == ["s17"]  # title text
    assert _ids(populated, query="  ") == _ids(populated)
    assert _ids(populated, query="parser", workspace="/ws/b") == ["s04"]


def test_query_with_only_punctuation_matches_titles_literally(store: SessionStore) -> None:
    store.create_session(make_record("odd", title="100% (done)"))
    store.create_session(make_record("other", title="1000 done"))
    assert _ids(store, query="%") == ["odd"]
    assert _ids(store, query="_") == []


def test_bad_cursor_is_a_validation_error(store: SessionStore) -> None:
    for cursor in ("", "!!!", "bm90IGpzb24", encode_cursor("x", "y")[:-3] + "###"):
        with pytest.raises(InvalidCursorError) as raised:
            store.list_sessions(cursor=cursor)
        assert raised.value.code == "validation"
    import base64

    wrong_shape = base64.urlsafe_b64encode(b'{"a": 1}').decode()
    with pytest.raises(InvalidCursorError):
        store.list_sessions(cursor=wrong_shape)


def test_fts_expression_quotes_everything() -> None:
    assert fts_match_expression('a "b" NEAR(c) -d:e*') == '"a" "b" "NEAR" "c" "d" "e"*'
    assert fts_match_expression("  ... ") is None
    assert like_pattern("50%_\\") == "%50\\%\\_\\\\%"


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionStore]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "history.db"
    store = SessionStore.open(path, DbKey(os.urandom(32), "env"))
    record = make_record("fuzz", title='weird "title" (NEAR) -x:y*')
    store.create_session(record)
    store.append_message(
        "fuzz", "user", text('say "hello" AND NOT bye OR NEAR(a b) col:val -neg ^x')
    )
    yield store
    store.close()


_NASTY = st.sampled_from(
    [
        '"',
        "'",
        "*",
        "NEAR",
        "NEAR(",
        "AND",
        "OR",
        "NOT",
        "-",
        ":",
        "(",
        ")",
        "^",
        "+",
        "{",
        "}",
        "\\",
        "%",
        "_",
        "\x00",
        "\u0301",
        "é",
        "ß",
        "日本",
        "🙂",
        " ",
        "col:",
        "NEAR/2",
        '""',
        "*",
    ]
)
_QUERY = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(_NASTY, st.text(max_size=4)), max_size=12).map("".join),
)


@settings(max_examples=examples(300), deadline=None)
@given(query=_QUERY)
def test_no_user_query_can_break_the_search(fuzz_store: SessionStore, query: str) -> None:
    page = fuzz_store.list_sessions(query=query)
    assert all(summary.id == "fuzz" for summary in page.sessions)


@pytest.mark.parametrize(
    "query", ['hello"', "NEAR(a b)", "-neg", "col:val", "say AND", "(NEAR)", '"hello"', "^x"]
)
def test_fts_syntax_in_user_text_is_just_text(fuzz_store: SessionStore, query: str) -> None:
    assert [s.id for s in fuzz_store.list_sessions(query=query).sessions] == ["fuzz"]


def test_only_settled_sessions_untouched_since_the_cutoff_become_inactive(
    store: SessionStore,
) -> None:
    old, new = _stamp(1), _stamp(50)
    for session_id, status, updated_at in (
        ("idle-old", "idle", old),
        ("ended-old", "ended", old),
        ("failed-old", "failed", old),
        ("streaming-old", "streaming", old),
        ("awaiting-old", "awaiting_approval", old),
        ("peer-old", "awaiting_peer", old),
        ("idle-new", "idle", new),
        ("deleted-old", "idle", old),
    ):
        store.create_session(make_record(session_id, status=status, updated_at=updated_at))
    store.soft_delete_session("deleted-old")
    store.connection.execute(
        "UPDATE agent_sessions SET updated_at = ? WHERE id = 'deleted-old'", (old,)
    )
    marked = store.mark_inactive(_stamp(10))
    assert sorted(marked) == ["ended-old", "failed-old", "idle-old"]
    assert store.mark_inactive(_stamp(10)) == []  # nothing left to mark: no write
    statuses = {s.id: s.status for s in store.list_sessions(limit=50).sessions}
    assert statuses == {
        "idle-old": "inactive",
        "ended-old": "inactive",
        "failed-old": "inactive",
        "streaming-old": "streaming",
        "awaiting-old": "awaiting_approval",
        "peer-old": "awaiting_peer",
        "idle-new": "idle",
    }
    kept = store.get_session("idle-old")
    assert kept is not None and kept.updated_at == old  # still when it was last touched
