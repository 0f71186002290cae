"""Shared fixtures for the tools tests: a real workspace, real hosts, an in-memory store."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.contracts.events import (
    AgentToolResult,
    ErrorCode,
    EventPayload,
)
from relavium_lsp.contracts.session import FsScopeTier, SessionContext
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.host import (
    ApprovalRequest,
    Approver,
    EditorHost,
    FilesystemHost,
    WriteOutcome,
)
from relavium_lsp.tools.registry import ToolRegistry, default_registry


class MemoryArtifacts:
    """An ArtifactStore kept in a dict, per session."""

    def __init__(self) -> None:
        self.saved: dict[tuple[str, str], str] = {}
        self._ids = itertools.count(1)

    async def save_artifact(self, session_id: str, call_id: str, text: str) -> str:
        artifact_id = f"art-{call_id}-{next(self._ids)}"
        self.saved[(session_id, artifact_id)] = text
        return artifact_id

    async def load_artifact(self, session_id: str, artifact_id: str) -> str | None:
        return self.saved.get((session_id, artifact_id))


class ScriptedHost:
    """An EditorHost with open buffers, a refusable write and scripted approval answers.

    ``approvals`` is consumed in order; when empty the host answers ``default``. With
    ``hold=True`` approvals wait until ``release`` (or forever), for timeout/abort tests.
    """

    def __init__(
        self,
        *,
        approvals: list[ApprovalDecision] | None = None,
        default: ApprovalDecision = "approve",
        refuse_writes: bool = False,
        hold: bool = False,
    ) -> None:
        self.approvals = list(approvals or [])
        self.default = default
        self.refuse_writes = refuse_writes
        self.hold = hold
        self.buffers: dict[Path, str] = {}
        self.creation_refusal: str | None = None
        self.requests: list[ApprovalRequest] = []
        self.writes: list[tuple[Path, str, str]] = []
        self.asked = asyncio.Event()
        self.release: asyncio.Future[ApprovalDecision] | None = None
        self._disk = FilesystemHost()

    async def read_open_buffer(self, path: Path) -> str | None:
        return self.buffers.get(path)

    def write_refusal(self, *, creating: bool) -> str | None:
        return self.creation_refusal if creating else None

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        self.writes.append((path, text, label))
        if self.refuse_writes:
            return WriteOutcome(applied=False, reason="the user declined the edit")
        return await self._disk.write_file(path, text, label=label)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        self.asked.set()
        if self.hold:
            self.release = asyncio.get_running_loop().create_future()
            return await self.release
        if self.approvals:
            return self.approvals.pop(0)
        return self.default


@dataclass(frozen=True)
class Outcome:
    """One dispatched call: the tool result the model reads, and its ``agent:tool_result``."""

    result: str
    is_error: bool
    error_code: ErrorCode | None
    duration_ms: int


class Harness:
    """A workspace, a context factory and a registry, with every emitted event recorded."""

    def __init__(self, root: Path, registry: ToolRegistry) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.temp_dir = root / "server-tmp"
        self.outside = root / "outside"
        for directory in (self.workspace, self.temp_dir, self.outside):
            directory.mkdir()
        self.registry = registry
        self.events: list[EventPayload] = []
        self.artifacts = MemoryArtifacts()
        self.host = ScriptedHost()
        self._calls = itertools.count(1)

    def context(
        self,
        *,
        tier: FsScopeTier = "sandboxed",
        host: Any = None,
        allowed_tools: frozenset[str] | None = None,
        session_title: str | None = None,
        **policy: Any,
    ) -> ToolCallContext:
        chat_policy = EffectiveChatPolicy(**policy)
        editor = host or self.host
        return ToolCallContext(
            session_id="session-1",
            context=SessionContext(working_dir=str(self.workspace), fs_scope_tier=tier),
            policy=chat_policy,
            host=editor,
            emit=self.events.append,
            ask_user=self._asker(editor, chat_policy.approval_timeout_s),
            artifacts=self.artifacts,
            model="test-model",
            allowed_tools=allowed_tools
            if allowed_tools is not None
            else frozenset(self.registry.names),
            temp_dir=self.temp_dir,
            session_title=session_title,
        )

    def _asker(self, host: EditorHost, timeout_s: float) -> Approver:
        """What the engine's session scope does when a tool asks: announce, then ask in time."""

        async def ask_user(request: ApprovalRequest) -> ApprovalDecision:
            self.events.append(request.event())
            return await asyncio.wait_for(host.request_approval(request), timeout_s)

        return ask_user

    async def call(
        self, name: str, args: dict[str, Any], ctx: ToolCallContext | None = None
    ) -> Outcome:
        call = ToolCallPart(id=f"call-{next(self._calls)}", name=name, args=args)
        part = (await self.registry.dispatch(call, ctx or self.context())).result
        assert part.tool_call_id == call.id
        [event] = [
            event
            for event in self.events
            if isinstance(event, AgentToolResult) and event.call_id == call.id
        ]
        assert event.success is not part.is_error
        return Outcome(part.result, part.is_error, event.error_code, event.duration_ms)

    def events_of(self, event_type: str) -> list[Any]:
        return [event for event in self.events if event.type == event_type]


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path, default_registry())


@pytest.fixture
def make_host() -> Callable[..., ScriptedHost]:
    return ScriptedHost
