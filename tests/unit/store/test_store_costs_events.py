from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_records import make_record

from relavium_lsp.contracts.events import (
    AgentToken,
    CostUpdated,
    SessionCancelled,
    StampedEvent,
    TokenUsage,
    TurnCompleted,
    TurnError,
)
from relavium_lsp.errors import SessionNotFound, StoreError
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from tests.hypothesis_profiles import examples


def _cost_sum(store: SessionStore, session_id: str) -> int:
    return int(
        store.connection.execute(
            "SELECT COALESCE(SUM(cost_microcents), 0) FROM session_costs WHERE session_id = ?",
            (session_id,),
        ).fetchone()[0]
    )


def test_record_cost_upserts_and_returns_totals(store: SessionStore, session_id: str) -> None:
    totals = store.record_cost(session_id, "gpt-4o", 100, 20, 350, True)
    assert (totals.input_tokens, totals.output_tokens, totals.cost_microcents) == (100, 20, 350)
    store.record_cost(session_id, "gpt-4o", 10, 2, 35, True)
    totals = store.record_cost(session_id, "local/llama", 50, 5, 0, False)
    assert (totals.input_tokens, totals.output_tokens, totals.cost_microcents) == (160, 27, 385)
    costs = {cost.model: cost for cost in store.get_costs(session_id)}
    assert costs["gpt-4o"].call_count == 2 and costs["gpt-4o"].unpriced_calls == 0
    assert costs["gpt-4o"].cost_microcents == 385
    assert costs["local/llama"].unpriced_calls == 1 and costs["local/llama"].cost_microcents == 0
    record = store.get_session(session_id)
    assert record is not None and record.totals == totals


def test_record_cost_rejects_nonsense_and_unknown_sessions(
    store: SessionStore, session_id: str
) -> None:
    with pytest.raises(ValueError):
        store.record_cost(session_id, "m", -1, 0, 0, True)
    with pytest.raises(SessionNotFound):
        store.record_cost("missing", "m", 1, 1, 1, True)
    assert store.get_costs("missing") == []
    assert _cost_sum(store, session_id) == 0


@pytest.fixture(scope="module")
def cost_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionStore]:
    path: Path = tmp_path_factory.mktemp("costs") / "history.db"
    store = SessionStore.open(path, DbKey(os.urandom(32), "env"))
    yield store
    store.close()


@settings(max_examples=examples(40), deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["gpt-4o", "claude", "local", "gpt-4o-mini"]),
            st.integers(0, 10**6),
            st.integers(0, 10**6),
            st.integers(0, 10**9),
            st.booleans(),
        ),
        max_size=25,
    )
)
def test_cost_invariant_holds_after_any_sequence(
    cost_store: SessionStore, calls: list[tuple[str, int, int, int, bool]]
) -> None:
    record = make_record()
    cost_store.create_session(record)
    for model, tokens_in, tokens_out, cost, priced in calls:
        totals = cost_store.record_cost(record.id, model, tokens_in, tokens_out, cost, priced)
        assert totals.cost_microcents == _cost_sum(cost_store, record.id)
    stored = cost_store.get_session(record.id)
    assert stored is not None
    assert stored.totals.cost_microcents == sum(call[3] for call in calls)
    assert stored.totals.input_tokens == sum(call[1] for call in calls)
    costs = cost_store.get_costs(record.id)
    assert sum(cost.call_count for cost in costs) == len(calls)
    assert sum(cost.unpriced_calls for cost in costs) == sum(1 for call in calls if not call[4])


def test_a_failed_cost_write_changes_nothing(store: SessionStore, session_id: str) -> None:
    store.record_cost(session_id, "m", 1, 1, 10, True)
    store.connection.execute(
        "CREATE TRIGGER refuse BEFORE UPDATE ON agent_sessions"
        " WHEN NEW.total_cost_microcents > 100 BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(Exception, match="refused"):
        store.record_cost(session_id, "m", 1, 1, 500, True)
    assert _cost_sum(store, session_id) == 10
    assert store.get_costs(session_id)[0].call_count == 1


def _payloads(count: int) -> list[AgentToken]:
    return [AgentToken(token=f"t{index}", model="m") for index in range(count)]


def test_events_are_stamped_gapless_per_session(store: SessionStore, session_id: str) -> None:
    other = make_record()
    store.create_session(other)
    first = store.append_events(session_id, _payloads(3))
    assert [event.sequence_number for event in first] == [1, 2, 3]
    assert len({event.timestamp for event in first}) == 1
    assert first[0].timestamp.endswith("Z")
    assert [e.sequence_number for e in store.append_events(other.id, _payloads(2))] == [1, 2]
    second = store.append_events(
        session_id,
        [
            CostUpdated(
                model="m",
                input_tokens=1,
                output_tokens=2,
                cost_microcents=3,
                cumulative_cost_microcents=3,
                priced=True,
            ),
            TurnCompleted(
                stop_reason="error",
                tokens_used=TokenUsage(input_tokens=1),
                error=TurnError(code="provider_rate_limit", message="slow down", retryable=True),
            ),
            SessionCancelled(),
        ],
    )
    assert [event.sequence_number for event in second] == [4, 5, 6]
    assert store.append_events(session_id, []) == []
    assert store.last_event_sequence(session_id) == 6
    assert store.last_event_sequence("missing") == 0
    backlog = store.events_after(session_id, 0)
    assert backlog == first + second
    assert store.events_after(session_id, 4) == second[1:]
    assert store.events_after(session_id, 0, limit=2) == first[:2]
    # the stored payload is the camelCase wire form and round-trips through the envelope
    raw = store.connection.execute(
        "SELECT payload FROM session_events WHERE session_id = ? AND sequence_number = 5",
        (session_id,),
    ).fetchone()[0]
    assert '"stopReason":"error"' in raw and '"tokensUsed"' in raw
    assert StampedEvent.from_wire(backlog[4].to_wire()) == backlog[4]


def test_events_for_unknown_sessions(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.append_events("missing", _payloads(1))
    assert store.events_after("missing", 0) == []


def test_artifacts_belong_to_their_session(store: SessionStore, session_id: str) -> None:
    other = make_record()
    store.create_session(other)
    artifact = store.save_artifact(session_id, "call-1", "full output " * 1000)
    assert store.load_artifact(session_id, artifact) == "full output " * 1000
    assert store.load_artifact(other.id, artifact) is None
    assert store.load_artifact(session_id, "missing") is None
    with pytest.raises(SessionNotFound):
        store.save_artifact("missing", "c", "x")


def test_session_updates(store: SessionStore, session_id: str) -> None:
    store.set_status(session_id, "streaming")
    store.rename_session(session_id, "Renamed")
    store.set_exported_path(session_id, "/ws/.relavium/exports/x.relavium.yaml")
    assert store.increment_turn_count(session_id) == 1
    assert store.increment_turn_count(session_id) == 2
    record = store.get_session(session_id)
    assert record is not None
    assert (record.status, record.title, record.turn_count) == ("streaming", "Renamed", 2)
    assert record.exported_workflow_path == "/ws/.relavium/exports/x.relavium.yaml"
    for mutate in (
        lambda: store.set_status("missing", "idle"),
        lambda: store.rename_session("missing", "x"),
        lambda: store.soft_delete_session("missing"),
        lambda: store.set_exported_path("missing", "x"),
        lambda: store.increment_turn_count("missing"),
    ):
        with pytest.raises(SessionNotFound):
            mutate()
    with pytest.raises(StoreError, match="already exists"):
        store.create_session(make_record(session_id))


def test_session_record_round_trips(store: SessionStore) -> None:
    record = make_record(title="Round trip").model_copy(
        update={"agent_snapshot": {"id": "x", "tools": ["read_file"], "temperature": 0.2}}
    )
    store.create_session(record)
    assert store.get_session(record.id) == record


def test_event_commits_skip_the_fsync_but_restore_full_durability(
    store: SessionStore, session_id: str
) -> None:
    """The event log commits with synchronous=NORMAL; everything else stays FULL."""
    connection = store.connection
    seen: list[int] = []
    connection.set_trace_callback(
        lambda statement: seen.append(1) if statement == "PRAGMA synchronous=NORMAL" else None
    )
    try:
        store.append_events(session_id, [SessionCancelled()])
    finally:
        connection.set_trace_callback(None)
    assert seen == [1]
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again
    assert [e.sequence_number for e in store.events_after(session_id, 0)] == [1]


def test_checkpoint_folds_the_write_ahead_log(store: SessionStore, session_id: str) -> None:
    from relavium_lsp.store.db.connection import WAL_AUTOCHECKPOINT_PAGES

    connection = store.connection
    assert connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WAL_AUTOCHECKPOINT_PAGES
    store.append_events(session_id, [SessionCancelled()] * 50)
    store.checkpoint()
    busy, logged, folded = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and logged == folded  # nothing was left unfolded by our checkpoint


def test_cache_reads_and_writes_are_kept_per_model(store: SessionStore, session_id: str) -> None:
    store.record_cost(
        session_id, "claude-sonnet-4-5", 1_000, 50, 900, True,
        cache_read_tokens=700, cache_write_tokens=200,
    )  # fmt: skip
    store.record_cost(session_id, "claude-sonnet-4-5", 1_100, 40, 500, True, cache_read_tokens=900)
    (cost,) = store.get_costs(session_id)
    assert (cost.input_tokens, cost.cache_read_tokens, cost.cache_write_tokens) == (
        2_100,
        1_600,
        200,
    )
    with pytest.raises(ValueError, match="parts of the input"):
        store.record_cost(session_id, "m", 10, 0, 0, True, cache_read_tokens=11)
