"""The session repository, costs part: per-model spend and session totals.

Mixed into ``SessionStore``.
"""

from __future__ import annotations

from relavium_lsp.contracts.session import SessionTotals
from relavium_lsp.store.db.connection import write_transaction
from relavium_lsp.store.models import SessionCost
from relavium_lsp.store.repo_base import RepositoryBase
from relavium_lsp.store.rows import messages


class CostRows(RepositoryBase):
    """Spend (part of ``SessionStore``)."""

    # -- costs ------------------------------------------------------------------------------

    def record_cost(
        self,
        session_id: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cost_microcents: int,
        priced: bool,
        *,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> SessionTotals:
        """Add one provider call's spend to ``session_costs`` and the session totals atomically."""
        counts = (
            input_tokens,
            output_tokens,
            cost_microcents,
            cache_read_tokens,
            cache_write_tokens,
        )
        if min(counts) < 0:
            raise ValueError("token counts and costs cannot be negative")
        if cache_read_tokens + cache_write_tokens > input_tokens:
            raise ValueError("cache reads and writes are parts of the input tokens")
        unpriced = 0 if priced else 1
        with write_transaction(self._connection):
            messages.require_session(self._connection, session_id)
            self._connection.execute(
                "INSERT INTO session_costs (session_id, model, input_tokens, output_tokens,"
                " cost_microcents, call_count, unpriced_calls, cache_read_tokens,"
                " cache_write_tokens) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)"
                " ON CONFLICT (session_id, model) DO UPDATE SET"
                " input_tokens = input_tokens + excluded.input_tokens,"
                " output_tokens = output_tokens + excluded.output_tokens,"
                " cost_microcents = cost_microcents + excluded.cost_microcents,"
                " call_count = call_count + 1,"
                " unpriced_calls = unpriced_calls + excluded.unpriced_calls,"
                " cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,"
                " cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens",
                (
                    session_id,
                    model,
                    input_tokens,
                    output_tokens,
                    cost_microcents,
                    unpriced,
                    cache_read_tokens,
                    cache_write_tokens,
                ),
            )
            row = self._connection.execute(
                "UPDATE agent_sessions SET total_input_tokens = total_input_tokens + ?,"
                " total_output_tokens = total_output_tokens + ?,"
                " total_cost_microcents = total_cost_microcents + ? WHERE id = ?"
                " RETURNING total_input_tokens, total_output_tokens, total_cost_microcents",
                (input_tokens, output_tokens, cost_microcents, session_id),
            ).fetchone()
        return SessionTotals(input_tokens=row[0], output_tokens=row[1], cost_microcents=row[2])

    def get_costs(self, session_id: str) -> list[SessionCost]:
        """Per-model spend of a session, ordered by model."""
        rows = self._connection.execute(
            "SELECT model, input_tokens, output_tokens, cost_microcents, call_count,"
            " unpriced_calls, cache_read_tokens, cache_write_tokens FROM session_costs"
            " WHERE session_id = ? ORDER BY model",
            (session_id,),
        ).fetchall()
        return [
            SessionCost(
                model=row[0],
                input_tokens=row[1],
                output_tokens=row[2],
                cost_microcents=row[3],
                call_count=row[4],
                unpriced_calls=row[5],
                cache_read_tokens=row[6],
                cache_write_tokens=row[7],
            )
            for row in rows
        ]
