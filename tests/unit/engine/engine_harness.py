"""A real engine for tests: encrypted store, event bus, tool registry, scripted models.

Models are scripted with the cassette provider (``match="sequence"``) or a loopback HTTP
server speaking the OpenAI wire format; nothing in the engine is replaced by a mock.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from relavium_lsp.config import WorkspaceConfig
from relavium_lsp.contracts.agent import AgentDefinition
from relavium_lsp.contracts.events import StampedEvent, TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.engine.api import Engine, SessionSnapshot, open_engine
from relavium_lsp.llm.cassette import CASSETTE_FORMAT, CassetteProvider
from relavium_lsp.llm.fallback import ChainEntry
from relavium_lsp.llm.openai_compat import OpenAICompatibleProvider
from relavium_lsp.llm.seam import (
    LlmChunk,
    LlmRequest,
    ProviderCapabilities,
    StopChunk,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
)
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.keys import DbKey
from relavium_lsp.testing.loopback import LoopbackServer
from relavium_lsp.testing.scripted_agent import ScriptedAgent
from relavium_lsp.tools.base import ToolDispatcher
from relavium_lsp.tools.host import ApprovalRequest, FilesystemHost

AGENT_YAML = """\
id: helper
name: Helper
description: test agent
model: {model}
provider: scripted
system_prompt: "You help. Workspace {{{{ctx.workingDir}}}}."
tools: [read_file, write_file, list_directory]
"""


DEADLINE_S = 60.0  # for slow, shared machines; passing tests never get near it


async def until(check: Callable[[], bool], what: str) -> None:
    """Look at ``check`` between turns of the loop until it holds, or fail at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def text_reply(text: str, usage: tuple[int, int] = (10, 5)) -> list[LlmChunk]:
    """A model call that answers with text."""
    pieces = [TextDelta(text=piece) for piece in text.split(" ") for piece in (piece + " ",)]
    return [
        *pieces,
        StopChunk(
            stop_reason="stop", usage=TokenUsage(input_tokens=usage[0], output_tokens=usage[1])
        ),
    ]


def tool_reply(
    name: str, args: dict[str, Any], call_id: str, usage: tuple[int, int] = (10, 5)
) -> list[LlmChunk]:
    """A model call that asks for one tool."""
    return [
        ToolCallStart(index=0, id=call_id, name=name),
        ToolCallEnd(index=0, id=call_id, name=name, args=args),
        StopChunk(
            stop_reason="tool_use", usage=TokenUsage(input_tokens=usage[0], output_tokens=usage[1])
        ),
    ]


class CountingProvider:
    """Wraps a provider and counts the calls that reach it."""

    def __init__(self, inner: CassetteProvider | OpenAICompatibleProvider) -> None:
        self._inner = inner
        self.provider_id = inner.provider_id
        self.capabilities: ProviderCapabilities = inner.capabilities
        self.requests: list[LlmRequest] = []

    def context_window(self, model: str) -> int:
        return self._inner.context_window(model)

    async def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        self.requests.append(request)
        async for chunk in self._inner.stream(request):
            yield chunk


def scripted(*calls: Sequence[LlmChunk], context_window: int | None = None) -> CountingProvider:
    """A provider that replays the given calls in order."""
    document = {
        "format": CASSETTE_FORMAT,
        "calls": [
            {
                "request": {"prompt": "", "tools_called": []},
                "chunks": [chunk.model_dump(mode="json") for chunk in chunks],
            }
            for chunks in calls
        ],
    }
    return CountingProvider(
        CassetteProvider("scripted", document, match="sequence", context_window=context_window)
    )


@dataclass
class RecordingHost(FilesystemHost):
    """A filesystem host whose approvals are answered by the test."""

    decision: ApprovalDecision = "approve"
    asked: list[ApprovalRequest] = field(default_factory=list)
    hold: asyncio.Event | None = None
    asked_event: asyncio.Event = field(default_factory=asyncio.Event)
    # When set, reading an open buffer waits for it (reading_event tells the test it began).
    read_gate: asyncio.Event | None = None
    reading_event: asyncio.Event = field(default_factory=asyncio.Event)

    async def read_open_buffer(self, path: Path) -> str | None:
        self.reading_event.set()
        if self.read_gate is not None:
            await self.read_gate.wait()
        return None

    def __post_init__(self) -> None:
        super().__init__(self._answer)

    async def _answer(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        self.asked_event.set()
        if self.hold is not None:
            await self.hold.wait()
        return self.decision


@dataclass
class Harness:
    """An engine over a real encrypted database in a temp dir.

    ``store`` is a second connection to the same database (as another process would have),
    for reading what the engine committed and for planting rows a crash would leave.
    """

    engine: Engine
    store: AsyncSessionStore
    workspace: Path
    host: RecordingHost
    chain: list[ChainEntry]
    events: list[StampedEvent] = field(default_factory=list)

    async def start(self, **kwargs: Any) -> SessionSnapshot:
        context = SessionContext(working_dir=str(self.workspace))
        return await self.engine.start(context=context, agent_ref="helper", **kwargs)

    async def status(self, session_id: str) -> str:
        """The session's status as the engine holds it."""
        return (await self.engine.record(session_id)).status

    def types(self, session_id: str) -> list[str]:
        return [event.type for event in self.events if event.session_id == session_id]

    def payloads(self, session_id: str, event_type: str) -> list[Any]:
        return [
            e.payload for e in self.events if e.session_id == session_id and e.type == event_type
        ]

    async def assert_books_balance(self, session_id: str) -> None:
        """session_costs sums equal the session totals; transcript count equals the row."""
        record = await self.store.run(lambda s: s.get_session(session_id))
        costs = await self.store.run(lambda s: s.get_costs(session_id))
        assert record is not None
        assert sum(cost.cost_microcents for cost in costs) == record.totals.cost_microcents
        assert sum(cost.input_tokens for cost in costs) == record.totals.input_tokens
        assert sum(cost.output_tokens for cost in costs) == record.totals.output_tokens
        messages = await self.store.run(lambda s: list(s.iter_messages(session_id)))
        assert record.message_count == len(messages)


def write_workspace(workspace: Path, *, model: str, project_toml: str = "") -> None:
    """A workspace with one agent (provider ``scripted``) and an optional project.toml."""
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "helper.agent.yaml").write_text(AGENT_YAML.format(model=model), encoding="utf-8")
    if project_toml:
        (workspace / ".relavium" / "project.toml").write_text(project_toml, encoding="utf-8")


@asynccontextmanager
async def engine(
    tmp_path: Path,
    *providers: CountingProvider,
    model: str = "gpt-4o-mini",
    models: Sequence[str] = (),
    project_toml: str = "",
    db_path: Path | None = None,
    key: DbKey | None = None,
    tools: ToolDispatcher | None = None,
    **options: Any,
) -> AsyncIterator[Harness]:
    """Build an engine whose agent's chain is ``providers`` (first is primary).

    ``models`` names each provider's model (default: ``model`` for all). ``options`` go to
    ``open_engine`` as they are (e.g. ``auto_introspection``, ``timers``).
    """
    workspace = tmp_path / "workspace"
    write_workspace(workspace, model=model, project_toml=project_toml)
    path = db_path or tmp_path / "home" / "history.db"
    key = key or DbKey(os.urandom(32), "env")
    names = list(models) or [model] * len(providers)
    chain = [ChainEntry(provider=p, model=name) for p, name in zip(providers, names, strict=True)]

    def resolve(agent: AgentDefinition, config: WorkspaceConfig) -> list[ChainEntry]:
        return chain

    host = RecordingHost()
    opened = await open_engine(
        host, history_path=path, db_key=key, providers=resolve, tools=tools, **options
    )
    store = await AsyncSessionStore.open(path, key)
    harness = Harness(engine=opened, store=store, workspace=workspace, host=host, chain=chain)
    await opened.subscribe(harness.events.append)
    try:
        yield harness
    finally:
        await opened.close()
        await store.close()


def openai_provider(
    base_url: str,
    client: httpx.AsyncClient,
    timeout_s: float = 5.0,
    *,
    context_window: int | None = None,
) -> CountingProvider:
    """The real OpenAI-compatible adapter pointed at a loopback server."""
    return CountingProvider(
        OpenAICompatibleProvider(
            "scripted",
            base_url=base_url,
            api_key="sk-test-not-a-real-key",
            client=client,
            timeout_s=timeout_s,
            context_window=context_window,
        )
    )


@asynccontextmanager
async def agent_engine(
    tmp_path: Path, agent: ScriptedAgent, *, context_window: int | None = None, **options: Any
) -> AsyncIterator[Harness]:
    """An engine whose model is ``agent`` behind a loopback server (the OpenAI wire format).

    ``options`` go to :func:`engine` (``project_toml``, ``db_path``, ``key``, ...). The same
    agent may serve several engines in turn (a restart): it keeps its place in the plan.
    """
    with LoopbackServer(agent) as server:
        async with httpx.AsyncClient() as client:
            provider = openai_provider(server.url + "/v1", client, context_window=context_window)
            async with engine(tmp_path, provider, **options) as harness:
                yield harness


def delegating_agents(h: Harness) -> None:
    """Two agents of the scripted provider, ``boss`` and ``worker``, that may delegate."""
    agents = h.workspace / ".relavium" / "agents"
    for agent_id in ("boss", "worker"):
        (agents / f"{agent_id}.agent.yaml").write_text(
            f"id: {agent_id}\nname: {agent_id}\nmodel: gpt-4o-mini\nprovider: scripted\n"
            "tools: [delegate]\n",
            encoding="utf-8",
        )
