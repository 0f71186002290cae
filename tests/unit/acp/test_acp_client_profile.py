"""Which update kinds a client gets, decided from its initialize request as sent on the wire."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import InitializeRequest

from relavium_lsp.acp.client_profile import (
    EARLY_CLIENT,
    EARLY_V1_UPDATES,
    LATER_V1_UPDATES,
    ClientProfile,
    client_profile,
)


def profile_of(params: dict[str, Any]) -> ClientProfile:
    request = InitializeRequest.model_validate({"protocolVersion": 1, **params})
    return client_profile(request.client_capabilities, request.client_info)


@pytest.mark.parametrize(
    "params",
    [
        {},  # what a bare client sends
        {"clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}},
        {"clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True}},
    ],
)
def test_a_client_shaped_like_the_early_schema_gets_only_the_early_kinds(
    params: dict[str, Any],
) -> None:
    profile = profile_of(params)
    assert profile.updates == EARLY_V1_UPDATES
    assert not profile.knows("session_info_update") and not profile.knows("usage_update")
    assert profile.knows("available_commands_update") and profile.knows("current_mode_update")


@pytest.mark.parametrize(
    "params",
    [
        {"clientInfo": {"name": "zed", "version": "0.200.0"}},
        {"clientCapabilities": {"auth": {"terminal": False}}},
        {"clientCapabilities": {"session": {}}},
        {"clientCapabilities": {"elicitation": {}}},
    ],
)
def test_a_client_showing_a_later_schema_gets_the_later_stable_kinds(
    params: dict[str, Any],
) -> None:
    profile = profile_of(params)
    assert profile.knows_later_updates
    assert LATER_V1_UPDATES <= profile.updates
    # Capability-gated kinds are never sent: this agent produces none.
    assert not profile.knows("notice") and not profile.knows("compaction_update")


def test_before_initialize_nothing_beyond_the_early_kinds_goes_out() -> None:
    assert EARLY_CLIENT.updates == EARLY_V1_UPDATES
