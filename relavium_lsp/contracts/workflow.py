"""The ``.relavium.yaml`` workflow document a session exports to (``docs/design.md`` §9).

It is an authored file (snake_case keys, unknown keys rejected, no type coercion) with two
camelCase islands that are wire data rather than authoring: ``edges[].from`` (``from`` is a
Python keyword, hence the alias) and ``metadata.relaviumExport``, whose ``messages`` are the
durable :class:`~relavium_lsp.contracts.session.SessionMessage` wire objects verbatim.

Top-level fields, in the order the emitter writes them (keys are sorted):

- ``agents`` — inline agent definitions (the session's frozen agent snapshot), optional;
- ``description`` — a one-line human summary, optional;
- ``edges`` — ``{from, to}`` pairs between node ids;
- ``id`` — kebab-case workflow id;
- ``metadata`` — free-form record; the reserved key ``relaviumExport`` is validated;
- ``name`` — display name (the session title);
- ``nodes`` — ``input`` / ``agent`` / ``output`` nodes;
- ``version`` — the document format version, currently ``1``.

Agent nodes also accept ``model``, ``temperature`` and ``max_tokens``: authoring fields a
person adds while reviewing the scaffold. The exporter never writes them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from relavium_lsp.contracts.agent import KEBAB_ID_PATTERN, AgentDefinition
from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.events import SessionCheckpoint
from relavium_lsp.contracts.peers import PeerMessage
from relavium_lsp.contracts.plan import PlanEntry
from relavium_lsp.contracts.session import RolledBackTurn, SessionMessage

WORKFLOW_VERSION: Final = 1
RELAVIUM_EXPORT_KEY = "relaviumExport"
NodeId = Annotated[str, Field(pattern=KEBAB_ID_PATTERN, max_length=64)]


class WorkflowModel(BaseModel):
    """Strict authored model: unknown keys are errors and values are never coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_by_name=True)


class InputNode(WorkflowModel):
    """Where a run starts."""

    id: NodeId
    type: Literal["input"]


class OutputNode(WorkflowModel):
    """Where a run ends."""

    id: NodeId
    type: Literal["output"]


class AgentNode(WorkflowModel):
    """One agent step; an exported session turn becomes one of these."""

    id: NodeId
    type: Literal["agent"]
    agent_ref: str = Field(min_length=1, max_length=200)
    prompt_template: str | None = Field(default=None, min_length=1)
    tools: list[str] | None = Field(default=None, min_length=1)
    model: str | None = Field(default=None, min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _distinct_tools(self) -> AgentNode:
        if self.tools is not None and len(set(self.tools)) != len(self.tools):
            raise ValueError("tools must not repeat a name")
        return self


WorkflowNode = Annotated[InputNode | AgentNode | OutputNode, Field(discriminator="type")]


class WorkflowEdge(WorkflowModel):
    """A directed edge between two node ids."""

    from_: NodeId = Field(alias="from")
    to: NodeId


class ChildSessionExport(WireModel):
    """A session this one delegated to (§2.5): the handoff and the child's visible messages."""

    session_id: str
    agent_slug: str
    from_agent: str
    reason: str
    # The parent's assistant message that asked for it.
    sequence_number: int
    call_id: str | None = None
    messages: list[SessionMessage]


class RelaviumExport(WireModel):
    """``metadata.relaviumExport``: where the scaffold came from, with the full transcript."""

    model_config = ConfigDict(strict=True)

    source: Literal["session"]
    session_id: str = Field(min_length=1)
    agent_slug: str = Field(min_length=1)
    title: str | None = None
    created_at: str
    updated_at: str
    messages: list[SessionMessage]
    # Turns that failed or were aborted (rolled out of the transcript, rows kept); absent
    # when there were none, so an export without them is unchanged.
    rolled_back_turns: list[RolledBackTurn] | None = None
    # Delegated child sessions, in handoff order; absent when there were none.
    children: list[ChildSessionExport] | None = None
    # Introspection checkpoints (``session:checkpoint`` events), oldest first; absent if none.
    checkpoints: list[SessionCheckpoint] | None = None
    # Peer messages the session sent or received, with their deliveries (§2.5), oldest
    # first; absent when there were none.
    peer_messages: list[PeerMessage] | None = None
    # The agent's plan when the session was exported (absent when it never made one).
    plan: list[PlanEntry] | None = None


class WorkflowMetadata(WorkflowModel):
    """Free-form metadata; only the reserved ``relaviumExport`` key has a schema."""

    model_config = ConfigDict(extra="allow")

    relavium_export: RelaviumExport | None = Field(default=None, alias=RELAVIUM_EXPORT_KEY)


class WorkflowDocument(WorkflowModel):
    """A whole ``.relavium.yaml`` file."""

    version: Literal[1]
    id: NodeId
    name: str = Field(min_length=1)
    description: str | None = None
    nodes: list[WorkflowNode] = Field(min_length=1)
    edges: list[WorkflowEdge] = Field(default_factory=list)
    agents: list[AgentDefinition] | None = None
    metadata: WorkflowMetadata | None = None

    @model_validator(mode="after")
    def _consistent_graph(self) -> WorkflowDocument:
        ids = [node.id for node in self.nodes]
        seen: set[str] = set()
        for node_id in ids:
            if node_id in seen:
                raise ValueError(f"node id {node_id!r} is used twice")
            seen.add(node_id)
        for edge in self.edges:
            for end in (edge.from_, edge.to):
                if end not in seen:
                    raise ValueError(f"edge {edge.from_} -> {edge.to} names unknown node {end!r}")
        if self.agents is not None:
            agent_ids = [agent.id for agent in self.agents]
            if len(set(agent_ids)) != len(agent_ids):
                raise ValueError("agents must not repeat an id")
        return self

    def to_document(self) -> dict[str, Any]:
        """The plain data the YAML file holds (aliases applied, absent fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
