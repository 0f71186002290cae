"""File checkpoints of turns, and rewinding a session to before one of its turns (§6.3).

- :class:`~relavium_lsp.engine.history.checkpoint_journal.TurnJournal` is a turn's
  :class:`~relavium_lsp.tools.base.ChangeJournal`: before a tool first changes a file in the
  turn, the file's current text (the editor's) is stored against the turn's user message;
  after each change, the digest of what the agent left.
- :func:`rewind` puts every file the agent changed since a user message back to what it held
  before that turn, through the editor host (``workspace/applyEdit`` for LSP: undoable,
  unsaved buffers respected; files the agent created are deleted where the editor can). A
  file whose text is not what the agent left — the user changed it afterwards, in or between
  turns — is a conflict: reported, never overwritten. The conversation continues in a fork
  that ends before that message; the original session is kept. The rewind is recorded
  (``session:rewound``) with what it replaced, so :func:`undo_rewind` can put that back.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby, pairwise
from pathlib import Path

from relavium_lsp.contracts.events import SessionRewound
from relavium_lsp.contracts.rewind import (
    CheckpointFile,
    FileProblem,
    RewindResult,
    TurnCheckpoint,
)
from relavium_lsp.contracts.session import AgentSessionRecord
from relavium_lsp.engine.scope import EngineServices
from relavium_lsp.errors import InvalidInput, ToolError
from relavium_lsp.export.documents import fork_record
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows import file_checkpoints as checkpoints
from relavium_lsp.store.rows.file_checkpoints import CheckpointRow, text_digest
from relavium_lsp.store.sessions import SessionStore
from relavium_lsp.tools.file_text import read_file_text
from relavium_lsp.tools.host import EditorHost
from relavium_lsp.tools.jail import ScopeRoots, check_write_target

REWIND_LABEL = "Relavium: rewind"
UNDO_LABEL = "Relavium: undo rewind"


def shown_path(path: str, working_dir: str) -> str:
    """A checkpointed file as answers name it: relative to the workspace, else absolute."""
    resolved, root = Path(path), Path(working_dir)
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else path


def select_paths(
    rows: Sequence[CheckpointRow], paths: Sequence[str] | None, working_dir: str, what: str
) -> list[CheckpointRow]:
    """The rows of the files ``paths`` names (``None``: all); a file not among them is refused."""
    if paths is None:
        return list(rows)
    wanted = set(paths)
    chosen = [
        row for row in rows if row.path in wanted or shown_path(row.path, working_dir) in wanted
    ]
    known = {row.path for row in chosen} | {shown_path(row.path, working_dir) for row in chosen}
    unknown = sorted(wanted - known)
    if unknown:
        raise InvalidInput(f"{what} did not change {', '.join(unknown)}")
    return chosen


async def list_turn_checkpoints(
    store: AsyncSessionStore, record: AgentSessionRecord
) -> list[TurnCheckpoint]:
    """The session's checkpoints grouped by turn, oldest first."""
    rows = await store.run(lambda s: checkpoints.list_checkpoints(s.connection, record.id))
    turns: list[TurnCheckpoint] = []
    for sequence, group in groupby(rows, key=lambda row: row.user_sequence):
        members = list(group)
        turns.append(
            TurnCheckpoint(
                user_sequence=sequence,
                timestamp=min(row.created_at for row in members),
                files=[
                    CheckpointFile(
                        path=shown_path(row.path, record.context.working_dir),
                        created=row.before_digest is None,
                        size=row.size,
                    )
                    for row in members
                ],
            )
        )
    return turns


async def current_text(host: EditorHost, path: Path) -> str | None:
    """The editor's text of ``path`` (its buffer, else the disk); ``None`` when absent.

    The disk is read as the tools read it (:func:`~relavium_lsp.tools.file_text.
    read_file_text`: BOM set aside, line endings kept), so digests compare like for like.
    """
    text = await host.read_open_buffer(path)
    if text is not None:
        return text
    return await asyncio.to_thread(read_file_text, path)


@dataclass(frozen=True)
class _Plan:
    """One file of a rewind: where it goes back to, and what the agent last left there."""

    path: str
    target_digest: str | None  # None: the file must not exist
    expected_digest: str | None  # None: the agent left no file
    chain_broken: bool


def _plans(rows: Sequence[CheckpointRow]) -> list[_Plan]:
    plans = []
    for path, group in groupby(sorted(rows, key=lambda r: (r.path, r.user_sequence)), key=_path):
        chain = list(group)
        broken = any(
            later.before_digest != earlier.after_digest for earlier, later in pairwise(chain)
        )
        plans.append(_Plan(path, chain[0].before_digest, chain[-1].after_digest, broken))
    return plans


def _path(row: CheckpointRow) -> str:
    return row.path


@dataclass
class _Applied:
    """What applying a set of file targets did (shared by rewind and its undo)."""

    result: RewindResult
    changed: list[tuple[str, str | None, str | None]]
    replaced: list[str]


async def _apply_targets(
    host: EditorHost,
    targets: Sequence[tuple[str, str | None, str | None, str | None]],
    blobs: dict[str, str],
    working_dir: str,
    roots: ScopeRoots,
    label: str,
    result: RewindResult,
) -> _Applied:
    """Put each ``(path, target digest, expected digest, conflict reason)`` in place.

    Each path is checked against the session's scope right before it is read and written
    (:func:`~relavium_lsp.tools.jail.check_write_target`): a file or a parent replaced by a
    symlink since the agent's change is a conflict, never written through (issue 35).
    """
    applied = _Applied(result, [], [])
    for path, target_digest, expected_digest, conflict in targets:
        shown = shown_path(path, working_dir)
        if conflict is None:
            try:
                check_write_target(Path(path), roots)
                current = await current_text(host, Path(path))
            except ToolError as error:
                conflict = f"{error}; left as it is"
        if conflict is not None:
            result.conflicts.append(FileProblem(path=shown, reason=conflict))
            continue
        current_digest = text_digest(current) if current is not None else None
        if current_digest != expected_digest:
            what = "was deleted" if current is None else "was changed"
            result.conflicts.append(
                FileProblem(
                    path=shown,
                    reason=f"{what} after the agent's last change; left as it is",
                )
            )
            continue
        if current_digest == target_digest:
            result.unchanged.append(shown)
            continue
        if target_digest is None:
            outcome = await host.delete_file(Path(path), label=label)
            done = result.deleted
        else:
            target = blobs.get(target_digest)
            if target is None:
                result.failed.append(FileProblem(path=shown, reason="its checkpoint is missing"))
                continue
            outcome = await host.write_file(Path(path), target, label=label)
            done = result.restored
        if not outcome.applied:
            reason = outcome.reason or "the editor refused the edit"
            result.failed.append(FileProblem(path=shown, reason=reason))
            continue
        done.append(shown)
        applied.changed.append((path, current_digest, target_digest))
        if current is not None:
            applied.replaced.append(current)
    return applied


def _fork_before(store: SessionStore, record: AgentSessionRecord, to_sequence: int) -> str:
    """A fork of the session holding its visible messages before ``to_sequence``."""
    connection = store.connection
    previous = connection.execute(
        "SELECT MAX(sequence_number) FROM session_messages WHERE session_id = ?"
        " AND sequence_number < ? AND rolled_back = 0",
        (record.id, to_sequence),
    ).fetchone()[0]
    fork = fork_record(record)
    if previous is None:
        store.create_session(fork)
    else:
        store.fork_session(record.id, int(previous), fork)
    checkpoints.copy_checkpoints(connection, record.id, fork.id, below_sequence=to_sequence)
    return fork.id


def _check_user_message(store: SessionStore, session_id: str, to_sequence: int) -> None:
    row = store.connection.execute(
        "SELECT role FROM session_messages WHERE session_id = ? AND sequence_number = ?"
        " AND rolled_back = 0",
        (session_id, to_sequence),
    ).fetchone()
    if row is None or row[0] != "user":
        raise InvalidInput(
            f"message {to_sequence} is not a visible user message of session {session_id}; "
            "rewind to the sequence number of one of its user messages"
        )


async def rewind(
    services: EngineServices,
    record: AgentSessionRecord,
    to_sequence: int,
    *,
    files: bool,
    conversation: bool,
    host: EditorHost,
    roots: ScopeRoots,
    paths: Sequence[str] | None = None,
) -> RewindResult:
    """Rewind a session to before the turn of user message ``to_sequence`` (module doc).

    ``paths`` limits the files to those (as :func:`shown_path` names them); ``roots`` is the
    session's scope, which every restored path is checked against.
    """
    session_id = record.id
    await services.store.run(lambda s: _check_user_message(s, session_id, to_sequence))
    return await rewind_files(
        services,
        record,
        to_sequence,
        host=host,
        roots=roots,
        paths=paths,
        files=files,
        conversation=conversation,
    )


async def rewind_files(
    services: EngineServices,
    record: AgentSessionRecord,
    to_sequence: int,
    *,
    host: EditorHost,
    roots: ScopeRoots,
    paths: Sequence[str] | None,
    files: bool = True,
    conversation: bool = False,
) -> RewindResult:
    """:func:`rewind` without checking that ``to_sequence`` is a visible user message.

    The review of a turn's changes undoes files of a turn that may have been rolled back
    (aborted after it changed files, §6.4): its checkpoints are what counts.
    """
    store = services.store
    session_id = record.id
    rows: list[CheckpointRow] = []
    if files:
        listed = await store.run(
            lambda s: checkpoints.list_checkpoints(
                s.connection, session_id, from_sequence=to_sequence
            )
        )
        rows = select_paths(
            listed, paths, record.context.working_dir, f"the turns from message {to_sequence} on"
        )
    plans = _plans(rows)
    wanted = [plan.target_digest for plan in plans if plan.target_digest is not None]
    blobs = await store.run(lambda s: checkpoints.load_blobs(s.connection, wanted))
    rewind_id = uuid.uuid4().hex
    result = RewindResult(rewind_id=rewind_id, session_id=session_id)
    targets = [
        (
            plan.path,
            plan.target_digest,
            plan.expected_digest,
            "was changed outside the agent between its turns; left as it is"
            if plan.chain_broken
            else None,
        )
        for plan in plans
    ]
    applied = await _apply_targets(
        host, targets, blobs, record.context.working_dir, roots, REWIND_LABEL, result
    )
    forked: str | None = None
    if conversation:
        forked = await store.run(lambda s: _fork_before(s, record, to_sequence))
        result.session_id = forked
    await store.run(
        lambda s: checkpoints.record_rewind(
            s.connection,
            rewind_id=rewind_id,
            session_id=session_id,
            to_sequence=to_sequence,
            forked_session_id=forked,
            files=applied.changed,
            replaced_texts=applied.replaced,
        )
    )
    services.bus.emit(
        session_id,
        SessionRewound(
            rewind_id=rewind_id,
            to_sequence=to_sequence,
            forked_session_id=forked,
            restored=len(result.restored) + len(result.deleted),
            conflicts=len(result.conflicts),
        ),
    )
    await services.bus.drain(session_id)
    return result


async def undo_rewind(
    services: EngineServices,
    record: AgentSessionRecord,
    rewind_id: str,
    *,
    host: EditorHost,
    roots: ScopeRoots,
) -> RewindResult:
    """Put back what a rewind replaced (files the user changed since are conflicts)."""
    store = services.store
    session_id = record.id
    recorded = await store.run(
        lambda s: checkpoints.load_rewind(s.connection, session_id, rewind_id)
    )
    if recorded is None:
        raise InvalidInput(f"rewind {rewind_id!r} is not a rewind of session {session_id}")
    if recorded.undone_at is not None:
        raise InvalidInput(f"rewind {rewind_id!r} was already undone")
    wanted = [row.before_digest for row in recorded.files if row.before_digest is not None]
    blobs = await store.run(lambda s: checkpoints.load_blobs(s.connection, wanted))
    result = RewindResult(rewind_id=rewind_id, session_id=recorded.session_id)
    targets = [(row.path, row.before_digest, row.after_digest, None) for row in recorded.files]
    await _apply_targets(
        host, targets, blobs, record.context.working_dir, roots, UNDO_LABEL, result
    )
    await store.run(lambda s: checkpoints.mark_rewind_undone(s.connection, rewind_id))
    services.bus.emit(
        recorded.session_id,
        SessionRewound(
            rewind_id=rewind_id,
            to_sequence=recorded.to_sequence,
            forked_session_id=recorded.forked_session_id,
            restored=len(result.restored) + len(result.deleted),
            conflicts=len(result.conflicts),
            undone=True,
        ),
    )
    await services.bus.drain(recorded.session_id)
    return result
