"""Money: pricing every provider call and enforcing the pre-egress cost cap.

Every call — successful, failed, fallback attempt or compaction summary — is priced and
recorded through one store transaction (``session_costs`` row + session totals, so their sums
always agree) and announced with ``cost:updated``. Before each call the cap is checked
against what was already spent plus the estimated input cost of the call about to be made.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.events import (
    AgentApprovalRequested,
    ApprovalPreview,
    BudgetWarning,
    CostUpdated,
    TokenUsage,
    TurnError,
)
from relavium_lsp.contracts.session import SessionStatus, SessionTotals
from relavium_lsp.engine.bus import EventBus
from relavium_lsp.llm.pricing import price_call
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.tools.host import ApprovalRequest, EditorHost

StatusSetter = Callable[[SessionStatus], Awaitable[None]]
COST_CAP_TOOL_ID = "cost_cap"


class CostGovernor:
    """Records spend and guards the cap for one session."""

    def __init__(
        self,
        *,
        session_id: str,
        store: AsyncSessionStore,
        bus: EventBus,
        host: EditorHost,
        policy: EffectiveChatPolicy,
        totals: SessionTotals,
        set_status: StatusSetter,
    ) -> None:
        self._session_id = session_id
        self._store = store
        self._bus = bus
        self._host = host
        self._policy = policy
        self._set_status = set_status
        self.totals = totals
        self._warned = False
        self._always_approved = False

    async def record(self, model: str, usage: TokenUsage) -> None:
        """Price and persist one provider call, then emit ``cost:updated``."""
        priced = price_call(model, usage)
        self.totals = await self._store.run(
            lambda s: s.record_cost(
                self._session_id,
                model,
                usage.input_tokens,
                usage.output_tokens,
                priced.cost_microcents,
                priced.priced,
            )
        )
        self._bus.emit(
            self._session_id,
            CostUpdated(
                model=model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost_microcents=priced.cost_microcents,
                cumulative_cost_microcents=self.totals.cost_microcents,
                priced=priced.priced,
            ),
        )

    async def check_before_call(
        self, *, model: str, provider_id: str, estimated_input_tokens: int
    ) -> TurnError | None:
        """``None`` when the call may go out; otherwise the error that ends the turn."""
        cap = self._policy.max_cost_microcents
        if cap is None or self._always_approved:
            return None
        estimate = price_call(
            model, TokenUsage(input_tokens=estimated_input_tokens)
        ).cost_microcents
        spent = self.totals.cost_microcents
        if spent + estimate <= cap:
            return None
        exceeded = TurnError(
            code="budget_exceeded",
            message=(
                f"The session's cost cap of {cap} micro-cents would be exceeded "
                f"(spent {spent}, next call estimated at {estimate}); nothing was sent."
            ),
        )
        if self._policy.on_exceed == "fail":
            return exceeded
        if self._policy.on_exceed == "warn":
            if not self._warned:
                self._warned = True
                self._bus.emit(
                    self._session_id,
                    BudgetWarning(on_exceed="warn", limit_microcents=cap, spent_microcents=spent),
                )
            return None
        return await self._pause_for_approval(cap, spent, provider_id, exceeded)

    async def _pause_for_approval(
        self, cap: int, spent: int, provider_id: str, exceeded: TurnError
    ) -> TurnError | None:
        call_id = f"budget-{uuid.uuid4().hex[:12]}"
        preview = ApprovalPreview(host=provider_id)
        self._bus.emit(
            self._session_id,
            BudgetWarning(
                on_exceed="pause_for_approval", limit_microcents=cap, spent_microcents=spent
            ),
        )
        self._bus.emit(
            self._session_id,
            AgentApprovalRequested(
                tool_id=COST_CAP_TOOL_ID, call_id=call_id, action="egress", preview=preview
            ),
        )
        await self._bus.drain(self._session_id)  # the editor sees why before it is asked
        await self._set_status("awaiting_approval")
        try:
            decision = await asyncio.wait_for(
                self._host.request_approval(
                    ApprovalRequest(
                        session_id=self._session_id,
                        call_id=call_id,
                        tool_id=COST_CAP_TOOL_ID,
                        action="egress",
                        preview=preview,
                    )
                ),
                timeout=self._policy.approval_timeout_s,
            )
        except TimeoutError:
            decision = "reject"
        finally:
            await self._set_status("streaming")
        if decision == "reject":
            return exceeded
        if decision == "approve_always":
            self._always_approved = True
        return None
