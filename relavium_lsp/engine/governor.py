"""Money: pricing every provider call and enforcing the pre-egress cost cap.

Every call — a turn's, a fallback attempt, a compaction summary, an introspection pass, a
delegated child's — goes through ``engine/model_calls.py``, which asks
:meth:`CostGovernor.check_before_call` before the request is sent and :meth:`CostGovernor.record`
after: each call is priced and recorded through one store transaction (``session_costs`` row
+ session totals, so their sums always agree) and announced with ``cost:updated``. The check
compares what was already spent plus the estimated input cost of the call about to be made
with the cap. With ``on_exceed = "pause_for_approval"`` the user is asked through the session
scope's ``ask_user``, like any tool approval; "always" is remembered in the session's approval
memory under the ``cost_cap`` id.

A delegated child running a task for a session of this process has that session's governor
as its ``parent`` (§2.5): what the child spends counts toward the parent's cap the moment it
is recorded, and the child's calls are checked against the cap and ``on_exceed`` of the
top-most session, as if the parent made them.
"""

from __future__ import annotations

import uuid

from relavium_lsp.contracts.config import EffectiveChatPolicy
from relavium_lsp.contracts.events import (
    ApprovalPreview,
    BudgetWarning,
    CostUpdated,
    TokenUsage,
    TurnError,
)
from relavium_lsp.contracts.session import SessionTotals
from relavium_lsp.engine.scope import SessionScope
from relavium_lsp.llm.pricing import price_call
from relavium_lsp.llm.seam import LlmRequest
from relavium_lsp.tools.host import ApprovalRequest

COST_CAP_TOOL_ID = "cost_cap"
# The cost cap is one decision per session, whatever the provider: one scope key.
COST_CAP_SCOPE = "session"


class CostGovernor:
    """Records spend and guards the cap for one session."""

    def __init__(
        self, scope: SessionScope, *, policy: EffectiveChatPolicy, totals: SessionTotals
    ) -> None:
        self._scope = scope
        self._policy = policy
        self.totals = totals
        # What the sessions this one delegated to spent: it counts toward this cap (§2.5).
        self.children_microcents = 0
        # The governor of the session this one runs a delegated task for (None: none).
        self.parent: CostGovernor | None = None
        self._warned = False

    async def record(self, model: str, usage: TokenUsage) -> int:
        """Price and persist one provider call, emit ``cost:updated``; returns its cost."""
        priced = price_call(model, usage)
        session_id = self._scope.session_id
        self.totals = await self._scope.store.run(
            lambda s: s.record_cost(
                session_id,
                model,
                usage.input_tokens,
                usage.output_tokens,
                priced.cost_microcents,
                priced.priced,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
            )
        )
        self._scope.emit(
            CostUpdated(
                model=model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost_microcents=priced.cost_microcents,
                cumulative_cost_microcents=self.totals.cost_microcents,
                priced=priced.priced,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
            ),
        )
        if self.parent is not None:
            self.parent.add_descendant_spend(priced.cost_microcents)
        return priced.cost_microcents

    def add_descendant_spend(self, cost_microcents: int) -> None:
        """A delegated session below this one spent ``cost_microcents`` (counted up the tree)."""
        self.children_microcents += cost_microcents
        if self.parent is not None:
            self.parent.add_descendant_spend(cost_microcents)

    def remaining_microcents(self) -> int | None:
        """What is left under the cap (``None``: no cap); a child session gets no more."""
        cap = self._policy.max_cost_microcents
        if cap is None:
            return None
        return max(0, cap - self.totals.cost_microcents - self.children_microcents)

    async def check_before_call(self, request: LlmRequest, *, provider_id: str) -> TurnError | None:
        """``None`` when ``request`` may go out; otherwise the error that ends the turn.

        Its input is estimated (``LlmRequest.estimated_input_tokens``) and priced for its
        model only when a cap applies.

        A delegated child's call is decided by the top-most session's cap and ``on_exceed``
        (its question, if any, is asked in the child session, where the call is made).
        """
        governor = self
        while governor.parent is not None:
            governor = governor.parent
        return await governor._check(self._scope, request, provider_id)

    async def _check(
        self, asking: SessionScope, request: LlmRequest, provider_id: str
    ) -> TurnError | None:
        cap = self._policy.max_cost_microcents
        if cap is None or self._scope.approvals.allows(COST_CAP_TOOL_ID, COST_CAP_SCOPE):
            return None
        estimated = TokenUsage(input_tokens=request.estimated_input_tokens())
        estimate = price_call(request.model, estimated).cost_microcents
        spent = self.totals.cost_microcents + self.children_microcents
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
                self._scope.emit(
                    BudgetWarning(on_exceed="warn", limit_microcents=cap, spent_microcents=spent)
                )
            return None
        return await self._pause_for_approval(asking, cap, spent, provider_id, exceeded)

    async def _pause_for_approval(
        self, asking: SessionScope, cap: int, spent: int, provider_id: str, exceeded: TurnError
    ) -> TurnError | None:
        asking.emit(
            BudgetWarning(
                on_exceed="pause_for_approval", limit_microcents=cap, spent_microcents=spent
            )
        )
        request = ApprovalRequest(
            session_id=asking.session_id,
            call_id=f"budget-{uuid.uuid4().hex[:12]}",
            tool_id=COST_CAP_TOOL_ID,
            action="egress",
            preview=ApprovalPreview(host=provider_id),
        )
        try:
            decision = await asking.ask_user(request)
        except TimeoutError:
            decision = "reject"
        if decision == "reject":
            return exceeded
        if decision == "approve_always":
            self._scope.approvals.remember(COST_CAP_TOOL_ID, COST_CAP_SCOPE)
        return None
