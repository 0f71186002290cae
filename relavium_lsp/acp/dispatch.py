"""The tool dispatcher of an ACP agent: the registry, plus per-call bookkeeping.

Every call still runs through :class:`~relavium_lsp.tools.registry.ToolRegistry` unchanged
(validation, the scope jail, the approval gate, bounding, events). Around it, this wrapper
records the call in the :class:`~relavium_lsp.acp.tool_calls.CallBook` — full arguments in
memory, jail-checked locations — gives the call a host bound to its session, which the
client's ``fs/*`` methods need, and applies the approval mode the client picked for the
session (:mod:`~relavium_lsp.acp.session_config`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from relavium_lsp.acp.host import CallScopedHost, ClientLink
from relavium_lsp.acp.session_config import ApprovalChoices
from relavium_lsp.acp.tool_calls import CallRecord, describe_call
from relavium_lsp.contracts.content import ToolCallPart
from relavium_lsp.llm.seam import ToolSpec
from relavium_lsp.tools.base import ToolAnswer, ToolCallContext, ToolSelection
from relavium_lsp.tools.registry import ToolRegistry


class AcpToolDispatcher:
    """A :class:`~relavium_lsp.tools.base.ToolDispatcher` that tells the ACP layer about calls."""

    def __init__(
        self, registry: ToolRegistry, link: ClientLink, approvals: ApprovalChoices
    ) -> None:
        self.registry = registry
        self._link = link
        self._approvals = approvals

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """The registry's specs."""
        return self.registry.specs(names)

    async def select(self, entries: Sequence[str], ctx: ToolCallContext) -> ToolSelection:
        """The registry's selection (built-ins and the session's MCP tools)."""
        return await self.registry.select(entries, ctx)

    async def release_session(self, session_id: str) -> None:
        """The session ended: the registry stops its background terminals."""
        await self.registry.release_session(session_id)

    async def close_resources(self) -> None:
        """Shutdown: the registry stops every background terminal."""
        await self.registry.close_resources()

    async def dispatch(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolAnswer:
        """Record the call, then run it through the registry with a session-bound host."""
        roots = ctx.scope_roots()
        definition = self.registry.get(call.name) or ctx.turn_tools.get(call.name)
        record = CallRecord(
            session_id=ctx.session_id,
            call_id=call.id,
            tool=call.name,
            args=call.args,
            description=describe_call(call.name, call.args, roots),
            roots=roots,
            offer_always=not (definition is not None and definition.always_ask),
        )
        self._link.book.open(record)
        scoped = dataclasses.replace(
            ctx,
            host=CallScopedHost(ctx.host, self._link, record),
            policy=self._approvals.policy_for(ctx.session_id, ctx.policy),
        )
        return await self.registry.dispatch(call, scoped)
