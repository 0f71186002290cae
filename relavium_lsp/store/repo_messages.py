"""The session repository, messages part: appending, rolling back and reading messages.

Writes are fenced by the turn's lease (``RepositoryBase._check_fence``). Mixed into
``SessionStore``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from relavium_lsp.contracts.content import DurableContentPart
from relavium_lsp.contracts.session import (
    CompactionMarker,
    InterruptionMarker,
    MessageRole,
    SessionMessage,
)
from relavium_lsp.contracts.usage import TokenUsage
from relavium_lsp.store import messages, reasoning_signatures
from relavium_lsp.store.db import write_transaction
from relavium_lsp.store.repo_base import RepositoryBase
from relavium_lsp.store.tail_walk import TailWalk

# Sessions whose last tail walk this connection keeps to continue from (the newest used).
KNOWN_WALKS = 16


class MessageRows(RepositoryBase):
    """Transcript messages (part of ``SessionStore``)."""

    # -- messages ---------------------------------------------------------------------------

    def append_message(
        self,
        session_id: str,
        role: MessageRole,
        content: Sequence[DurableContentPart],
        *,
        model_id: str | None = None,
        compaction: CompactionMarker | None = None,
        interruption: InterruptionMarker | None = None,
        token_usage: TokenUsage | None = None,
        cost_microcents: int | None = None,
        parent_message_id: str | None = None,
        agent_slug: str | None = None,
    ) -> SessionMessage:
        """Append one durable message with the next sequence number (one transaction)."""
        with write_transaction(self._connection):
            self._check_fence(session_id)
            return messages.append_message(
                self._connection,
                session_id,
                role,
                content,
                model_id=model_id,
                compaction=compaction,
                interruption=interruption,
                token_usage=token_usage,
                cost_microcents=cost_microcents,
                parent_message_id=parent_message_id,
                agent_slug=agent_slug,
            )

    def keep_reasoning_signatures(self, message_id: str, signatures: list[str | None]) -> None:
        """Keep a message's reasoning signatures (``store/reasoning_signatures.py``)."""
        with write_transaction(self._connection):
            reasoning_signatures.keep_signatures(self._connection, message_id, signatures)

    def reasoning_signatures(self, message_ids: Sequence[str]) -> dict[str, list[str | None]]:
        """The kept reasoning signatures of those messages that have any."""
        return reasoning_signatures.signatures_of(self._connection, message_ids)

    def roll_back_from(self, session_id: str, from_sequence: int) -> int:
        """Hide messages ``>= from_sequence`` (an aborted or failed turn); returns the count."""
        with write_transaction(self._connection):
            self._check_fence(session_id)
            return messages.roll_back_from(self._connection, session_id, from_sequence)

    def load_tail_within_budget(self, session_id: str, token_budget: int) -> list[SessionMessage]:
        """The newest visible messages that fit ``token_budget``, oldest first."""
        return messages.load_tail_within_budget(
            self._connection, session_id, token_budget, self._decoded.decode
        )

    def walk_tail(self, session_id: str, token_budget: int) -> TailWalk:
        """The rows the tail rule visits for ``token_budget``: the tail for any smaller one.

        Continues from this connection's last walk of the session when no other connection
        has committed since (``PRAGMA data_version``, read before the walk so that a commit
        racing it only makes the next walk a full one): then only newer rows are read.
        """
        version = int(self._connection.execute("PRAGMA data_version").fetchone()[0])
        known = self._walks.pop(session_id, None)
        if known is not None and known.data_version != version:
            known = None
        walk = messages.walk_tail(
            self._connection, session_id, token_budget, self._decoded.decode, known
        )
        walk = dataclasses.replace(walk, data_version=version)
        self._walks[session_id] = walk
        while len(self._walks) > KNOWN_WALKS:
            del self._walks[next(iter(self._walks))]
        return walk

    def get_transcript(
        self, session_id: str, *, before_sequence: int | None = None, limit: int = 100
    ) -> tuple[list[SessionMessage], bool]:
        """A page of visible messages before ``before_sequence`` (oldest first) and has_more."""
        return messages.get_transcript(
            self._connection, session_id, before_sequence=before_sequence, limit=limit
        )

    def iter_messages(self, session_id: str) -> Iterator[SessionMessage]:
        """All visible messages in order (consume it on the store's thread)."""
        return messages.iter_messages(self._connection, session_id)

    def last_message(self, session_id: str) -> SessionMessage | None:
        """The newest visible message."""
        return messages.last_message(self._connection, session_id)

    def count_tokens_since_boundary(self, session_id: str) -> tuple[int, int]:
        """(messages, estimated tokens) after the newest compaction marker."""
        return messages.count_tokens_since_boundary(self._connection, session_id)

    def newest_marker_holds_view(self, session_id: str) -> bool:
        """Whether the newest compaction marker holds a view a turn compacted into (§2.3)."""
        return messages.newest_marker_holds_view(self._connection, session_id)
