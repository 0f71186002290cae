"""``session/request_permission`` options and what the user's choice means to the engine.

The three answers of ``docs/design.md`` §6 map one-to-one onto ACP option kinds:

============================  ===============  ==================
option (``optionId``)         ACP kind         approval decision
============================  ===============  ==================
``allow-once``                ``allow_once``   ``approve``
``allow-always``              ``allow_always`` ``approve_always``
``reject-once``               ``reject_once``  ``reject``
============================  ===============  ==================

An unknown option id is a rejection. The ``cancelled`` outcome is not a decision: the
client sends it when the prompt turn was cancelled, so the turn must stop (see the host).
Tools that ask every time (``git_commit``) are not offered "always".
"""

from __future__ import annotations

from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse

from relavium_lsp.contracts.wire import ApprovalDecision

ALLOW_ONCE = PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once")
ALLOW_ALWAYS = PermissionOption(
    option_id="allow-always", name="Always allow for this session", kind="allow_always"
)
REJECT_ONCE = PermissionOption(option_id="reject-once", name="Reject", kind="reject_once")
_DECISIONS: dict[str, ApprovalDecision] = {
    ALLOW_ONCE.option_id: "approve",
    ALLOW_ALWAYS.option_id: "approve_always",
    REJECT_ONCE.option_id: "reject",
}


def permission_options(*, offer_always: bool = True) -> list[PermissionOption]:
    """The options shown to the user, "always" only where it can be remembered."""
    if offer_always:
        return [ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE]
    return [ALLOW_ONCE, REJECT_ONCE]


def decision_for(response: RequestPermissionResponse) -> ApprovalDecision | None:
    """The approval decision the user chose; ``None`` when the request was cancelled."""
    outcome = response.outcome
    if isinstance(outcome, DeniedOutcome):
        return None
    if isinstance(outcome, AllowedOutcome):
        return _DECISIONS.get(outcome.option_id, "reject")
    return "reject"
