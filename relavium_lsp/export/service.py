"""Export, import and fork as engine operations: what the LSP server, the CLI and ACP call.

Exporting is two steps so that each surface can put its own act in between:
:func:`render_export` only reads (one consistent snapshot of the row and its messages) and
builds the text off the event loop; :func:`announce_export` then records where the export
went (``exportedWorkflowPath`` for workflows) and emits ``session:exported``.
:func:`export_session` does both for callers that only hand the text back (``untitled``).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Final, Literal

from relavium_lsp.contracts.events import SessionExported
from relavium_lsp.contracts.session import AgentSessionRecord, SessionMessage
from relavium_lsp.contracts.workflow import RELAVIUM_EXPORT_KEY
from relavium_lsp.engine.manager import SessionManager
from relavium_lsp.errors import ExportError, SessionNotFound
from relavium_lsp.export.files import exports_dir
from relavium_lsp.export.jsonl import export_jsonl, import_jsonl
from relavium_lsp.export.workflow_yaml import build_workflow, serialize_workflow
from relavium_lsp.export.yaml_fast_load import load_plain_fast
from relavium_lsp.export.yaml_io import load_yaml
from relavium_lsp.store.models import utc_timestamp

ExportFormat = Literal["workflow", "jsonl"]
UNTITLED: Final = "untitled"
WORKFLOW_SUFFIX: Final = ".relavium.yaml"
JSONL_SUFFIX: Final = ".jsonl"
_SAVED_WORKFLOW_SUFFIXES = (WORKFLOW_SUFFIX, ".relavium.yml")
_MAX_SESSION_ID = 64


@dataclass(frozen=True)
class ExportOutcome:
    """An export's text and where it would naturally be saved."""

    format: ExportFormat
    content: str
    session_id: str
    working_dir: str
    # The suggested file is ``<stem><suffix>`` in the workspace's exports folder.
    stem: str
    suffix: str

    @property
    def file_name(self) -> str:
        """``<workflow id>.relavium.yaml`` or ``<session id>.jsonl``."""
        return f"{self.stem}{self.suffix}"

    @property
    def suggested_path(self) -> str:
        """``<workingDir>/.relavium/exports/<file name>``."""
        return str(exports_dir(self.working_dir) / self.file_name)


async def load_snapshot(
    manager: SessionManager, session_id: str
) -> tuple[AgentSessionRecord, list[SessionMessage]]:
    """A session's row and visible messages, read consistently; unknown ids raise."""
    snapshot = await manager.services.store.run(lambda s: s.export_snapshot(session_id))
    if snapshot is None:
        raise SessionNotFound(f"no session with id {session_id!r}")
    return snapshot


def _render(
    record: AgentSessionRecord, messages: list[SessionMessage], fmt: ExportFormat
) -> ExportOutcome:
    if fmt == "jsonl":
        content = export_jsonl(record, messages)
        stem, suffix = record.id, JSONL_SUFFIX
    else:
        document = build_workflow(record, messages)
        content = serialize_workflow(document)
        stem, suffix = document.id, WORKFLOW_SUFFIX
    return ExportOutcome(
        format=fmt,
        content=content,
        session_id=record.id,
        working_dir=record.context.working_dir,
        stem=stem,
        suffix=suffix,
    )


async def render_export(
    manager: SessionManager, session_id: str, fmt: ExportFormat = "workflow"
) -> ExportOutcome:
    """Build an export without recording anything (the YAML/JSON work runs in a thread)."""
    record, messages = await load_snapshot(manager, session_id)
    return await asyncio.to_thread(_render, record, messages, fmt)


async def announce_export(
    manager: SessionManager, session_id: str, fmt: ExportFormat, path: str = UNTITLED
) -> None:
    """Record where an export went and emit ``session:exported``."""
    services = manager.services
    if fmt == "workflow":
        await services.store.run(lambda s: s.set_exported_path(session_id, path))
        await _refresh_served_record(manager, session_id, path)
    services.bus.emit(session_id, SessionExported(workflow_path=path, format=fmt))
    await services.bus.drain(session_id)


async def _refresh_served_record(manager: SessionManager, session_id: str, path: str) -> None:
    """Keep the in-memory row of a session this process serves in step with the database.

    ``get_record`` hands back the served copy when there is one; only that copy can still
    show an older path, and then ``session`` returns it without loading anything.
    """
    record = await manager.get_record(session_id)
    if record.exported_workflow_path != path:
        served = await manager.session(session_id)
        served.record = served.record.model_copy(update={"exported_workflow_path": path})


async def export_session(
    manager: SessionManager, session_id: str, fmt: ExportFormat = "workflow"
) -> ExportOutcome:
    """Render an export and announce it as ``untitled`` (the text is the deliverable)."""
    outcome = await render_export(manager, session_id, fmt)
    await announce_export(manager, session_id, fmt)
    return outcome


def exported_session_id(text: str) -> str | None:
    """``metadata.relaviumExport.sessionId`` of a workflow file, read leniently.

    A saved scaffold may have been edited far beyond what the strict schema accepts; only
    this one field matters here, so nothing else is validated.
    """
    if RELAVIUM_EXPORT_KEY not in text:
        return None  # cheap refusal for every YAML file that was never an export
    data = load_plain_fast(text)
    if data is None:
        try:
            data = load_yaml(text).data
        except ExportError:
            return None
    for key in ("metadata", RELAVIUM_EXPORT_KEY, "sessionId"):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    if isinstance(data, str) and 0 < len(data) <= _MAX_SESSION_ID:
        return data
    return None


async def record_saved_export(manager: SessionManager, path: str, text: str) -> str | None:
    """Note a saved ``*.relavium.yaml`` as its session's export; returns that session's id.

    ``None`` when the file is not an exported scaffold or names no existing session. An
    unchanged path is not recorded (or announced) again.
    """
    if not path.endswith(_SAVED_WORKFLOW_SUFFIXES):
        return None
    session_id = await asyncio.to_thread(exported_session_id, text)
    if session_id is None:
        return None
    record = await manager.services.store.run(lambda s: s.get_session(session_id))
    if record is None:
        return None
    if record.exported_workflow_path != path:
        await announce_export(manager, session_id, "workflow", path)
    return session_id


async def fork_session(manager: SessionManager, session_id: str, at_sequence: int) -> str:
    """Branch a session at one of its messages; returns the new session's id.

    The fork keeps the agent snapshot, context and source, is titled ``<title> (fork)``, and
    holds copies of the visible messages up to ``at_sequence``; the original is untouched.
    """
    source = await manager.get_record(session_id)
    base = source.title.strip() if source.title and source.title.strip() else None
    now = utc_timestamp()
    fork = AgentSessionRecord(
        id=str(uuid.uuid4()),
        agent_slug=source.agent_slug,
        agent_snapshot=source.agent_snapshot,
        title=f"{base or 'Session ' + source.id[:8]} (fork)",
        model_id=source.model_id,
        context=source.context,
        status="idle",
        source=source.source,
        created_at=now,
        updated_at=now,
    )
    await manager.services.store.run(lambda s: s.fork_session(session_id, at_sequence, fork))
    return fork.id


async def import_session(manager: SessionManager, text: str) -> str:
    """Create a new session from a JSONL transcript (validated first; all or nothing)."""
    record, messages = await asyncio.to_thread(import_jsonl, text)
    await manager.services.store.run(lambda s: s.import_session(record, messages))
    return record.id
