"""The model a session was switched to, kept in its row (``docs/design.md`` §2.5).

Functions over one connection, run on the store's worker thread. ``agent_sessions.model_choice``
(migration 8) holds the choice as ``<provider id>/<model>`` (NULL: the agent's own model);
``model_id`` names that model too, so session lists show what the session asks now.
"""

from __future__ import annotations

from relavium_lsp.store.db.connection import Connection, write_transaction


def save_model_choice(connection: Connection, session_id: str, choice_id: str, model: str) -> None:
    """Keep ``choice_id`` (asking ``model`` first) as the session's model from now on."""
    with write_transaction(connection):
        connection.execute(
            "UPDATE agent_sessions SET model_choice = ?, model_id = ? WHERE id = ?",
            (choice_id, model, session_id),
        )


def load_model_choice(connection: Connection, session_id: str) -> str | None:
    """The session's stored model choice, or ``None`` (never switched, or no such session)."""
    row = connection.execute(
        "SELECT model_choice FROM agent_sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def copy_model_choice(connection: Connection, source_id: str, target_id: str) -> None:
    """Give a fork the model its source was switched to (inside the fork's transaction)."""
    connection.execute(
        "UPDATE agent_sessions SET model_choice ="
        " (SELECT model_choice FROM agent_sessions WHERE id = ?) WHERE id = ?",
        (source_id, target_id),
    )
