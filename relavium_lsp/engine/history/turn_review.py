"""Reviewing what a turn changed, file by file (``docs/design.md`` §6.4).

A turn that changed files has a checkpoint of each (§6.3). :func:`turn_changes` lists them
with line counts; :func:`checkpoint_content` gives a file's text before the turn (the left
side of a diff view); :func:`review_changes` keeps files or undoes them. Undo is a rewind of
those files only — the same conflict rules and the same write path through the editor — and
every decision is stored on the checkpoint rows and announced as
``session:changes_reviewed``, so a reload or another window shows it.

A file's counts compare its checkpoint with what the turn left: the text it held before the
next turn that changed it, or — when no later turn did — its text now (the editor's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import groupby, pairwise
from pathlib import Path
from typing import Literal

from relavium_lsp.contracts.events import SessionChangesReviewed
from relavium_lsp.contracts.review import (
    CheckpointContentResult,
    ReviewChangesResult,
    ReviewDecision,
    ReviewState,
    TurnChangedFile,
    TurnChangesResult,
)
from relavium_lsp.contracts.session import AgentSessionRecord
from relavium_lsp.engine.history.rewind import current_text, rewind_files, select_paths, shown_path
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.errors import InvalidInput
from relavium_lsp.store.rows import file_checkpoints as checkpoints
from relavium_lsp.store.rows.file_checkpoints import CheckpointRow
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.tools.host import EditorHost
from relavium_lsp.tools.jail import ScopeRoots
from relavium_lsp.tools.text_edit import file_diff

_STATES: dict[str | None, ReviewState] = {None: "pending", "kept": "kept", "undone": "undone"}


def left_changed(row: CheckpointRow) -> bool:
    """Whether the turn left the file other than it found it.

    A checkpoint is taken before the agent's first change reaches the file; a change refused
    after that (the user typed meanwhile, the editor said no) leaves the digests equal.
    """
    return row.before_digest != row.after_digest


async def _rows(services: EngineServices, session_id: str, start: int = 0) -> list[CheckpointRow]:
    def rows(store: SessionStore) -> list[CheckpointRow]:
        return checkpoints.list_checkpoints(store.connection, session_id, from_sequence=start)

    return await services.store.run(rows)


async def _texts_after(
    services: EngineServices, host: EditorHost, rows: Sequence[CheckpointRow]
) -> dict[tuple[int, str], str | None]:
    """What each checkpointed file held when its turn's changes ended (see the module doc).

    Keyed by ``(user sequence, path)``; ``None``: the file did not exist.
    """
    later: dict[tuple[int, str], str | None] = {}  # the next turn's checkpoint digest
    latest: list[str] = []
    for path, group in groupby(sorted(rows, key=lambda r: (r.path, r.user_sequence)), _path):
        chain = list(group)
        for earlier, following in pairwise(chain):
            later[(earlier.user_sequence, path)] = following.before_digest
        latest.append(path)
    digests = [digest for digest in later.values() if digest is not None]
    blobs = await services.store.run(lambda s: checkpoints.load_blobs(s.connection, digests))
    texts: dict[tuple[int, str], str | None] = {
        key: None if digest is None else blobs.get(digest, "") for key, digest in later.items()
    }
    now = {path: await current_text(host, Path(path)) for path in latest}
    for row in rows:
        texts.setdefault((row.user_sequence, row.path), now[row.path])
    return texts


def _path(row: CheckpointRow) -> str:
    return row.path


def _changed_files(
    rows: Sequence[CheckpointRow],
    befores: dict[str, str],
    afters: dict[tuple[int, str], str | None],
    working_dir: str,
) -> list[TurnChangedFile]:
    files = []
    for row in rows:
        before = None if row.before_digest is None else befores.get(row.before_digest, "")
        shown = shown_path(row.path, working_dir)
        stat = file_diff(shown, before, afters[(row.user_sequence, row.path)]).stat
        files.append(
            TurnChangedFile(
                path=shown,
                created=row.before_digest is None,
                deleted=row.before_digest is not None and row.after_digest is None,
                added=stat.added,
                removed=stat.removed,
                review=_STATES[row.review],
            )
        )
    return files


async def changes_by_turn(
    services: EngineServices,
    record: AgentSessionRecord,
    host: EditorHost,
    *,
    only_turn: int | None = None,
) -> dict[int, list[TurnChangedFile]]:
    """Every turn's changed files (or only those of the turn of ``only_turn``), by turn."""
    rows = await _rows(services, record.id, only_turn or 0)
    if only_turn is not None:
        paths = {row.path for row in rows if row.user_sequence == only_turn}
        rows = [row for row in rows if row.path in paths]
    afters = await _texts_after(services, host, rows)
    mine = [
        row
        for row in rows
        if left_changed(row) and (only_turn is None or row.user_sequence == only_turn)
    ]
    wanted = [row.before_digest for row in mine if row.before_digest is not None]
    befores = await services.store.run(lambda s: checkpoints.load_blobs(s.connection, wanted))
    files = await asyncio.to_thread(
        _changed_files, mine, befores, afters, record.context.working_dir
    )
    by_turn: dict[int, list[TurnChangedFile]] = {}
    for row, changed in zip(mine, files, strict=True):
        by_turn.setdefault(row.user_sequence, []).append(changed)
    return by_turn


async def turn_changes(
    services: EngineServices,
    record: AgentSessionRecord,
    host: EditorHost,
    user_sequence: int | None,
) -> TurnChangesResult:
    """The files the turn of ``user_sequence`` changed (default: the latest turn that did)."""
    if user_sequence is None:
        user_sequence = await services.store.run(
            lambda s: checkpoints.latest_changed_turn(s.connection, record.id)
        )
        if user_sequence is None:
            return TurnChangesResult(files=[])
    by_turn = await changes_by_turn(services, record, host, only_turn=user_sequence)
    return TurnChangesResult(user_sequence=user_sequence, files=by_turn.get(user_sequence, []))


async def _turn_rows(
    services: EngineServices, record: AgentSessionRecord, user_sequence: int
) -> tuple[list[CheckpointRow], list[CheckpointRow]]:
    """The rows of the turn of ``user_sequence`` and of every later turn (refused: none)."""
    rows = await _rows(services, record.id, user_sequence)
    turn = [row for row in rows if row.user_sequence == user_sequence and left_changed(row)]
    if not turn:
        raise InvalidInput(
            f"the turn of message {user_sequence} of session {record.id} changed no files"
        )
    return turn, rows


async def checkpoint_content(
    services: EngineServices, record: AgentSessionRecord, user_sequence: int, path: str
) -> CheckpointContentResult:
    """What ``path`` held before the turn of ``user_sequence`` changed it."""
    turn, _ = await _turn_rows(services, record, user_sequence)
    [row] = select_paths(
        turn, [path], record.context.working_dir, f"the turn of message {user_sequence}"
    )
    digest = row.before_digest
    if digest is None:
        return CheckpointContentResult(existed=False)
    blobs = await services.store.run(lambda s: checkpoints.load_blobs(s.connection, [digest]))
    if digest not in blobs:
        raise InvalidInput(f"the checkpoint of {path} is missing")
    return CheckpointContentResult(existed=True, content=blobs[digest])


async def review_changes(
    services: EngineServices,
    record: AgentSessionRecord,
    host: EditorHost,
    user_sequence: int,
    decision: ReviewDecision,
    paths: Sequence[str] | None,
    roots: ScopeRoots,
) -> ReviewChangesResult:
    """Keep or undo files of a turn (module doc); conflicts and failures stay pending.

    ``roots`` is the session's scope: an undo checks every path against it as it writes.
    """
    turn, rows = await _turn_rows(services, record, user_sequence)
    working_dir = record.context.working_dir
    chosen = select_paths(turn, paths, working_dir, f"the turn of message {user_sequence}")
    result = ReviewChangesResult()
    review: Literal["kept", "undone"]
    if decision == "keep":
        result.kept = [shown_path(row.path, working_dir) for row in chosen]
        decided, review, through = chosen, "kept", user_sequence
    else:
        shown = [shown_path(row.path, working_dir) for row in chosen]
        rewound = await rewind_files(
            services, record, user_sequence, host=host, roots=roots, paths=shown
        )
        result.restored, result.deleted = rewound.restored, rewound.deleted
        result.unchanged = rewound.unchanged
        result.conflicts, result.failed = rewound.conflicts, rewound.failed
        back = {*rewound.restored, *rewound.deleted, *rewound.unchanged}
        decided = [row for row in chosen if shown_path(row.path, working_dir) in back]
        # The file is as before this turn, so a later turn's change to it is undone too.
        review, through = "undone", max(row.user_sequence for row in rows)
    if decided:
        stored = [row.path for row in decided]
        await services.store.run(
            lambda s: checkpoints.set_review(
                s.connection,
                record.id,
                stored,
                review,
                from_sequence=user_sequence,
                through_sequence=through,
            )
        )
        services.bus.emit(
            record.id,
            SessionChangesReviewed(
                user_sequence=user_sequence,
                decision=decision,
                paths=[shown_path(row.path, working_dir) for row in decided],
            ),
        )
        await services.bus.drain(record.id)
    return result
