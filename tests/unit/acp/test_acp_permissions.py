"""Permission options ↔ approval decisions."""

from __future__ import annotations

from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from relavium_lsp.acp.permissions import decision_for, permission_options


def answer(option_id: str | None) -> RequestPermissionResponse:
    if option_id is None:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


def test_each_option_maps_to_its_decision() -> None:
    options = permission_options()
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow-once", "allow_once"),
        ("allow-always", "allow_always"),
        ("reject-once", "reject_once"),
    ]
    assert [decision_for(answer(o.option_id)) for o in options] == [
        "approve",
        "approve_always",
        "reject",
    ]
    assert [o.kind for o in permission_options(offer_always=False)] == [
        "allow_once",
        "reject_once",
    ]


def test_unknown_options_reject_and_cancelled_is_not_a_decision() -> None:
    assert decision_for(answer("allow-everything-forever")) == "reject"
    assert decision_for(answer(None)) is None
