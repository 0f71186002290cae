"""Building the fixed inputs of a turn: prompt, history within budget, tools, tool context."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from relavium_lsp.contracts.session import SessionStatus
from relavium_lsp.contracts.wire import ApprovalDecision
from relavium_lsp.engine.prompt import render_prompt, selection_excerpt
from relavium_lsp.engine.turn import TurnPlan
from relavium_lsp.llm.projection import project_messages
from relavium_lsp.tools.base import ToolCallContext
from relavium_lsp.tools.host import ApprovalRequest, EditorHost, WriteOutcome

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from relavium_lsp.engine.session import AgentSession, EngineServices

# Room kept free in the context window for the answer when the agent sets no max_tokens.
DEFAULT_OUTPUT_RESERVE = 4_096
MAX_SELECTION_BYTES = 512 * 1024


class StatusTrackingHost:
    """Wraps the editor host for one session's approvals.

    The session shows ``awaiting_approval`` while the user decides, and every event emitted
    so far (the ``agent:tool_call`` and ``agent:approval_requested`` that explain the
    question) reaches the editor before the question itself does.
    """

    def __init__(
        self,
        inner: EditorHost,
        set_status: Callable[[SessionStatus], Awaitable[None]],
        flush_events: Callable[[], Awaitable[None]],
    ) -> None:
        self._inner = inner
        self._set_status = set_status
        self._flush_events = flush_events

    async def read_open_buffer(self, path: Path) -> str | None:
        """Delegate to the editor."""
        return await self._inner.read_open_buffer(path)

    def write_refusal(self, *, creating: bool) -> str | None:
        """Delegate to the editor."""
        return self._inner.write_refusal(creating=creating)

    async def write_file(self, path: Path, text: str, *, label: str) -> WriteOutcome:
        """Delegate to the editor."""
        return await self._inner.write_file(path, text, label=label)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the editor, with the session marked as waiting meanwhile."""
        await self._flush_events()
        await self._set_status("awaiting_approval")
        try:
            return await self._inner.request_approval(request)
        finally:
            await self._set_status("streaming")


class TurnPlanner:
    """Derives each turn's :class:`TurnPlan` from the session's current state."""

    def __init__(
        self,
        session: AgentSession,
        services: EngineServices,
        always_allowed: set[tuple[str, str]],
    ) -> None:
        self._session = session
        self._services = services
        self._always_allowed = always_allowed
        self._host = StatusTrackingHost(
            services.host, session.set_status, lambda: services.bus.drain(session.id)
        )

    def context_window(self) -> int:
        """The first model's context window."""
        entry = self._session.chain[0]
        return entry.provider.context_window(entry.model)

    async def plan(self) -> TurnPlan:
        """Build the plan for a turn whose user message is already persisted."""
        session = self._session
        agent = session.agent
        tools = self._services.tools.specs(agent.tools)
        system = await self.system_prompt()
        reserve = agent.max_tokens or DEFAULT_OUTPUT_RESERVE
        overhead = len(system) // 4 + sum(len(str(spec.parameters)) // 4 for spec in tools)
        budget = max(1_024, self.context_window() - reserve - overhead)
        history = await self._services.store.run(
            lambda s: s.load_tail_within_budget(session.id, budget)
        )
        return TurnPlan(
            session_id=session.id,
            chain=session.chain,
            system=system,
            history=project_messages(history, self._services.media),
            tools=tools,
            temperature=agent.temperature,
            max_tokens=agent.max_tokens,
            max_tool_turns=session.policy.max_tool_turns,
            tool_context=ToolCallContext(
                session_id=session.id,
                context=session.record.context,
                policy=session.policy,
                host=self._host,
                emit=session.emit,
                artifacts=self._services.store,
                model=session.model,
                allowed_tools=frozenset(agent.tools),
                temp_dir=self._services.temp_dir,
                always_allowed=self._always_allowed,
                session_title=session.record.title,
                protected_paths=self._services.protected_paths,
            ),
        )

    async def system_prompt(self) -> str:
        """The agent's prompt for this session, plus the selected lines when there are any."""
        context = self._session.record.context
        prompt = render_prompt(self._session.agent.system_prompt, context)
        selection = context.selection
        if selection is None:
            return prompt
        text = await self._selected_file_text(selection.file)
        if text is None:
            return prompt
        excerpt = selection_excerpt(text, selection.start_line, selection.end_line)
        return (
            f"{prompt}\n\nThe user selected lines {selection.start_line}-{selection.end_line} "
            f"of {selection.file}:\n```\n{excerpt}\n```"
        )

    async def _selected_file_text(self, file: str) -> str | None:
        """The selected file's text (open buffer first), only if it lies in the workspace."""
        root = os.path.realpath(self._session.record.context.working_dir)
        path = Path(os.path.realpath(Path(root, file)))
        if not path.is_relative_to(root):
            return None
        buffer = await self._host.read_open_buffer(path)
        if buffer is not None:
            return buffer
        return await asyncio.to_thread(_read_small_text, path)


def _read_small_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_SELECTION_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
