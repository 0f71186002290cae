"""The context window a provider's refusal showed a session's model has (``docs/design.md`` §2.3).

Functions over one connection, run on the store's worker thread.
``agent_sessions.learned_context_window`` (migration 13) holds ``{"model", "tokens"}``: the
window is the model's, so a session switched to another model does not use it.
"""

from __future__ import annotations

import json

from relavium_lsp.store.db.connection import Connection, write_transaction


def save_learned_window(connection: Connection, session_id: str, model: str, tokens: int) -> None:
    """Keep ``tokens`` as the window of ``model`` for the session."""
    value = json.dumps({"model": model, "tokens": tokens}, separators=(",", ":"))
    with write_transaction(connection):
        connection.execute(
            "UPDATE agent_sessions SET learned_context_window = ? WHERE id = ?",
            (value, session_id),
        )


def load_learned_window(connection: Connection, session_id: str, model: str) -> int | None:
    """The window learnt for ``model`` in the session, or ``None`` (none, or another model's)."""
    row = connection.execute(
        "SELECT learned_context_window FROM agent_sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return None
    stored = json.loads(str(row[0]))
    if not isinstance(stored, dict) or stored.get("model") != model:
        return None
    tokens = stored.get("tokens")
    return tokens if isinstance(tokens, int) and tokens > 0 else None
