"""Export documents: a session rendered as a workflow scaffold or a JSONL transcript.

Pure functions over a session's row and messages — no store, no events. The engine reads one
consistent snapshot, calls :func:`render_export` off the event loop, and records where the document
went (see ``relavium_lsp.engine.history.exports``). :func:`exported_session_id` recognises a saved
scaffold again, and :func:`fork_record` is the row a fork of a session starts from.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from relavium_lsp.contracts.events import ExportFormat as ExportFormat  # its old home
from relavium_lsp.contracts.events import SessionCheckpoint, StampedEvent
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.review import TurnChangedFile
from relavium_lsp.contracts.session import (
    AgentSessionRecord,
    HandoffRecord,
    RolledBackTurn,
    SessionMessage,
)
from relavium_lsp.contracts.workflow import RELAVIUM_EXPORT_KEY
from relavium_lsp.errors import ExportError
from relavium_lsp.export.files import exports_dir
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.markdown import markdown_transcript
from relavium_lsp.export.tool_cassette import (
    ToolCassette,
    record_tool_cassette,
    render_tool_cassette,
)
from relavium_lsp.export.workflow_yaml import (
    ChildExport,
    build_workflow,
    serialize_workflow,
    slugify,
)
from relavium_lsp.export.yaml_fast_load import load_plain_fast
from relavium_lsp.export.yaml_io import load_yaml
from relavium_lsp.store.models import utc_timestamp

UNTITLED: Final = "untitled"
WORKFLOW_SUFFIX: Final = ".relavium.yaml"
JSONL_SUFFIX: Final = ".jsonl"
MARKDOWN_SUFFIX: Final = ".md"
SAVED_WORKFLOW_SUFFIXES: Final = (WORKFLOW_SUFFIX, ".relavium.yml")
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
    # A JSONL export's companion: every tool call's input, output and time (seed 004).
    tool_cassette: ToolCassette | None = None

    def tool_cassette_text(self) -> str | None:
        """The companion cassette as ``relavium-tool-cassette/1.0`` text (JSONL exports)."""
        return None if self.tool_cassette is None else render_tool_cassette(self.tool_cassette)

    @property
    def file_name(self) -> str:
        """``<workflow id>.relavium.yaml`` or ``<session id>.jsonl``."""
        return f"{self.stem}{self.suffix}"

    @property
    def suggested_path(self) -> str:
        """``<workingDir>/.relavium/exports/<file name>``."""
        return str(exports_dir(self.working_dir) / self.file_name)


def render_export(
    record: AgentSessionRecord,
    messages: list[SessionMessage],
    fmt: ExportFormat,
    plan: Sequence[PlanEntry] | None = None,
    *,
    rolled_back: Sequence[RolledBackTurn] = (),
    children: Sequence[ChildExport] = (),
    handoffs: Sequence[HandoffRecord] = (),
    timeline: Sequence[StampedEvent] = (),
    peer_messages: Sequence[PeerMessage] = (),
    changes: Mapping[int, Sequence[TurnChangedFile]] | None = None,
    tool_durations: Mapping[str, int] | None = None,
) -> ExportOutcome:
    """The export document of a session in ``fmt`` (CPU work: call it off the event loop).

    ``timeline``: the session's checkpoint and plan events as logged (their times place them
    in the JSONL transcript; the scaffold carries the checkpoints). ``changes``: the files
    each turn changed, by its user message (the Markdown summary). A JSONL export comes
    with its tool cassette, timed by ``tool_durations`` (call id → milliseconds).
    """
    cassette = None
    checkpoints = [e.payload for e in timeline if isinstance(e.payload, SessionCheckpoint)]
    if fmt == "markdown":
        content = markdown_transcript(
            record, messages, plan, rolled_back=rolled_back, changes=changes
        )
        stem, suffix = slugify(record.title) if record.title else record.id, MARKDOWN_SUFFIX
    elif fmt == "jsonl":
        content = export_jsonl(
            record,
            messages,
            plan,
            rolled_back=rolled_back,
            handoffs=handoffs,
            timeline=timeline,
            peer_messages=peer_messages,
        )
        stem, suffix = record.id, JSONL_SUFFIX
        cassette = record_tool_cassette(record.id, messages, tool_durations or {})
    else:
        document = build_workflow(
            record,
            messages,
            plan,
            rolled_back=rolled_back,
            children=children,
            checkpoints=checkpoints,
            peer_messages=peer_messages,
        )
        content = serialize_workflow(document)
        stem, suffix = document.id, WORKFLOW_SUFFIX
    return ExportOutcome(
        format=fmt,
        content=content,
        session_id=record.id,
        working_dir=record.context.working_dir,
        stem=stem,
        suffix=suffix,
        tool_cassette=cassette,
    )


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


def fork_record(source: AgentSessionRecord) -> AgentSessionRecord:
    """The row of a new fork of ``source``: same agent snapshot, context and source.

    Titled ``<title> (fork)`` (or ``Session <id> (fork)``), idle, with a fresh id and clock.
    """
    base = source.title.strip() if source.title and source.title.strip() else None
    now = utc_timestamp()
    return AgentSessionRecord(
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
        description=source.description,
        description_source=source.description_source,
        metadata=source.metadata,
    )
