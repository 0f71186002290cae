"""Session → ``.relavium.yaml`` workflow scaffold, and back to a validated document.

The mapping (``docs/design.md`` §9), deterministic — no clock, no randomness:

- ``nodes``: ``input``, then one ``agent`` node per *completed* logical turn
  (:mod:`relavium_lsp.export.turns`) named ``turn-1``, ``turn-2``…, then ``output``. Each
  agent node has ``agent_ref`` (the session's agent slug), ``prompt_template`` (the turn's
  user text, neutralised; omitted when empty) and ``tools`` (deduped, first use first;
  omitted when none). An MCP call (``mcp__SERVER__TOOL``) is listed as the agent entry
  that selects it, ``mcp:SERVER/TOOL``, so the step names the server and the tool.
  Interrupted or unanswered turns get no node: they stay in metadata.
- ``edges``: the linear chain ``input → turn-1 → … → output`` (``input → output`` when no
  turn completed).
- ``id``: the title as an ASCII kebab slug (:func:`slugify`), else ``exported-session``;
  ``name``: the title, else ``Exported session``; ``description``: a one-line summary;
  ``version``: ``1``.
- ``agents``: the frozen agent snapshot, the only entry (omitted when there is none).
- ``metadata.relaviumExport``: ``{source: session, sessionId, agentSlug, title?, createdAt,
  updatedAt, messages}`` with every visible message as its durable wire object. ``updatedAt``
  is the newest message's timestamp (``createdAt`` when there is none) rather than the row's
  ``updated_at``, which also moves on bookkeeping (a status change, recording this very
  export) and would make two exports of an unchanged conversation differ.

Neutralising ``{{``: a ``{`` followed by ``{`` or by a space gets one space inserted after it,
so ``{{ctx.x}}`` becomes ``{ {ctx.x}}`` and an existing ``{ `` becomes ``{  ``. No ``{{``
survives, and :func:`restore_template` (delete the space after every ``{ ``) undoes it exactly.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError
from slugify import slugify as _slugify

from relavium_lsp.contracts.agent import MCP_SELECTOR_PREFIX, AgentDefinition
from relavium_lsp.contracts.events import SessionCheckpoint
from relavium_lsp.contracts.mcp import split_exposed_name
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import AgentSessionRecord, RolledBackTurn, SessionMessage
from relavium_lsp.contracts.workflow import (
    WORKFLOW_VERSION,
    AgentNode,
    ChildSessionExport,
    InputNode,
    OutputNode,
    RelaviumExport,
    WorkflowDocument,
    WorkflowEdge,
    WorkflowMetadata,
    WorkflowNode,
)
from relavium_lsp.errors import ExportError
from relavium_lsp.export.turns import completed_turns
from relavium_lsp.export.yaml_fast_load import load_plain_fast
from relavium_lsp.export.yaml_io import dump_yaml, load_yaml

FALLBACK_WORKFLOW_ID = "exported-session"
FALLBACK_NAME = "Exported session"
MAX_SLUG_LENGTH = 64
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_OPENER = re.compile(r"\{(?=[{ ])")


def slugify(title: str | None) -> str:
    """An ASCII kebab-case id for ``title``, transliterated by a real slug library.

    ``python-slugify`` transliterates whole scripts (``Straße`` → ``strasse``, ``Привет`` →
    ``privet``, ``Æsir`` → ``aesir``) where stripping combining marks alone lost letters or
    whole titles; the id must stay ASCII (the workflow schema's kebab id).
    """
    if not title:
        return FALLBACK_WORKFLOW_ID
    slug = _slugify(title, max_length=MAX_SLUG_LENGTH, word_boundary=False)
    slug = _NOT_ALPHANUMERIC.sub("-", slug).strip("-")  # what the kebab id allows, exactly
    return slug or FALLBACK_WORKFLOW_ID


def neutralise_template(text: str) -> str:
    """Make ``text`` safe as a template: no ``{{`` remains (reversible, see module doc)."""
    return _OPENER.sub("{ ", text)


def restore_template(text: str) -> str:
    """Undo :func:`neutralise_template`."""
    return text.replace("{ ", "{")


def build_workflow(
    record: AgentSessionRecord,
    messages: Sequence[SessionMessage],
    plan: Sequence[PlanEntry] | None = None,
    *,
    rolled_back: Sequence[RolledBackTurn] = (),
    children: Sequence[ChildExport] = (),
    checkpoints: Sequence[SessionCheckpoint] = (),
    peer_messages: Sequence[PeerMessage] = (),
) -> WorkflowDocument:
    """The workflow scaffold for a session and its visible messages (in sequence order).

    ``plan`` (the agent's current plan) goes into ``metadata.relaviumExport.plan``.
    ``rolled_back`` turns (failed or aborted) get no node; they are kept in the metadata.
    Each delegated child of a completed turn is a step right after that turn's node
    (``turn-N-delegate-K``: the child's agent with the task as its prompt).
    """
    nodes: list[WorkflowNode] = [InputNode(id="input", type="input")]
    child_agents: dict[str, AgentDefinition] = {}
    for number, turn in enumerate(completed_turns(messages), start=1):
        prompt = neutralise_template(turn.prompt_text())
        tools = list(dict.fromkeys(workflow_tool(name) for name in turn.tool_names()))
        nodes.append(
            AgentNode(
                id=f"turn-{number}",
                type="agent",
                agent_ref=record.agent_slug,
                prompt_template=prompt or None,
                tools=tools or None,
            )
        )
        asked = {message.sequence_number for message in turn.answers}
        steps = [child for child in children if child.export.sequence_number in asked]
        for index, child in enumerate(steps, start=1):
            task = neutralise_template(child.task)
            nodes.append(
                AgentNode(
                    id=f"turn-{number}-delegate-{index}",
                    type="agent",
                    agent_ref=child.export.agent_slug,
                    prompt_template=task or None,
                )
            )
            if child.agent is not None:
                child_agents.setdefault(child.agent.id, child.agent)
    nodes.append(OutputNode(id="output", type="output"))
    edges = [
        WorkflowEdge(from_=before.id, to=after.id) for before, after in itertools.pairwise(nodes)
    ]
    title = record.title if record.title and record.title.strip() else None
    completed = len(nodes) - 2
    return WorkflowDocument(
        version=WORKFLOW_VERSION,
        id=slugify(title),
        name=title or FALLBACK_NAME,
        description=(
            f"Exported from a Relavium chat session with agent {record.agent_slug}: "
            f"{completed} completed turn{'' if completed == 1 else 's'} as a linear chain. "
            "Review it before use."
        ),
        nodes=nodes,
        edges=edges,
        agents=_with_children(_agents(record), child_agents),
        metadata=WorkflowMetadata(
            relavium_export=RelaviumExport(
                source="session",
                session_id=record.id,
                agent_slug=record.agent_slug,
                title=record.title,
                created_at=record.created_at,
                updated_at=messages[-1].timestamp if messages else record.created_at,
                messages=list(messages),
                plan=list(plan) if plan else None,
                rolled_back_turns=list(rolled_back) or None,
                children=[child.export for child in children] or None,
                checkpoints=list(checkpoints) or None,
                peer_messages=list(peer_messages) or None,
            )
        ),
    )


@dataclass(frozen=True)
class ChildExport:
    """A delegated child as the exporter needs it: its export entry, task and agent."""

    export: ChildSessionExport
    task: str
    agent: AgentDefinition | None


def _with_children(
    agents: list[AgentDefinition] | None, children: dict[str, AgentDefinition]
) -> list[AgentDefinition] | None:
    known = {agent.id for agent in agents or []}
    extra = [agent for agent_id, agent in children.items() if agent_id not in known]
    if not extra:
        return agents
    return [*(agents or []), *extra]


def _agents(record: AgentSessionRecord) -> list[AgentDefinition] | None:
    if not record.agent_snapshot:
        return None
    try:
        return [AgentDefinition.model_validate(record.agent_snapshot)]
    except ValidationError as error:
        raise ExportError(
            f"the session's agent snapshot is not a valid agent ({error.error_count()} "
            "problem(s)); it cannot be exported"
        ) from None


def workflow_tool(name: str) -> str:
    """A called tool as an agent ``tools`` entry: MCP calls name their server and tool."""
    mcp = split_exposed_name(name)
    return f"{MCP_SELECTOR_PREFIX}{mcp[0]}/{mcp[1]}" if mcp is not None else name


def serialize_workflow(document: WorkflowDocument) -> str:
    """The document as deterministic YAML (sorted keys, stable formatting)."""
    return dump_yaml(document.to_document())


def export_workflow_yaml(record: AgentSessionRecord, messages: Sequence[SessionMessage]) -> str:
    """Build and serialize the scaffold in one step."""
    return serialize_workflow(build_workflow(record, messages))


def parse_workflow(text: str) -> WorkflowDocument:
    """Parse and strictly validate a ``.relavium.yaml`` document.

    Every problem is an :class:`ExportError` naming the line of the offending key (the first
    problem when there are several). A valid document is read through libyaml when it can
    be (:mod:`.yaml_fast_load`); problems are always reported by ruamel's reader, with lines.
    """
    data = load_plain_fast(text)
    if isinstance(data, dict):
        try:
            return WorkflowDocument.model_validate(data, strict=True, by_alias=True, by_name=False)
        except ValidationError:
            pass  # report it the reference way below, which knows every key's line
    loaded = load_yaml(text)
    if not isinstance(loaded.data, dict):
        raise ExportError("a workflow document must be a mapping", line=1)
    try:
        return WorkflowDocument.model_validate(
            loaded.data, strict=True, by_alias=True, by_name=False
        )
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        location = [step for step in first["loc"] if isinstance(step, str | int)]
        if first["type"] == "union_tag_invalid":
            location.append("type")  # point at the node's wrong ``type``, not its first key
        where = ".".join(str(step) for step in location) or "document"
        more = error.error_count() - 1
        suffix = f" (and {more} more problem{'' if more == 1 else 's'})" if more else ""
        raise ExportError(
            f"{where}: {first['msg']}{suffix}", line=loaded.line_of(location)
        ) from None
