"""Attack: scope narrowing (issue 16 item 7) through ``relavium/startSession`` on a real server.

The user's configuration allows ``project``; a client's explicit ``fsScopeTier`` may narrow
that (``sandboxed`` must stay ``sandboxed``) but never widen it (``full`` becomes ``project``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.contracts.session import PartialSessionContext, SessionContext
from relavium_lsp.engine.sessions.live import effective_scope_tier
from relavium_lsp.server import methods
from tests.unit.attack.raw_server import RawServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    home = tmp_path_factory.mktemp("scope-home")
    (home / ".relavium").mkdir(mode=0o700)
    (home / ".relavium" / "config.toml").write_text('[chat]\nfs_scope = "project"\n')
    workspace = tmp_path_factory.mktemp("scope-workspace")
    running = RawServer.start(home, workspace)
    yield running, workspace
    running.stop()


def _started_tier(server: RawServer, workspace: Path, context: dict[str, Any]) -> str:
    answer = server.call(
        methods.START_SESSION, {"context": {"workingDir": str(workspace), **context}}
    )
    assert "result" in answer, answer
    tier: str = answer["result"]["context"]["fsScopeTier"]
    return tier


@pytest.mark.parametrize(
    ("requested", "expected"),
    [(None, "project"), ("sandboxed", "sandboxed"), ("project", "project"), ("full", "project")],
)
def test_an_explicit_scope_tier_only_narrows(
    server: tuple[RawServer, Path], requested: str | None, expected: str
) -> None:
    running, workspace = server
    context = {} if requested is None else {"fsScopeTier": requested}
    assert _started_tier(running, workspace, context) == expected


def test_explicitness_survives_the_overlay_on_a_detected_context() -> None:
    detected = SessionContext(working_dir="/w")
    unset = PartialSessionContext(active_file="a.py").apply_to(detected)
    explicit = PartialSessionContext(fs_scope_tier="sandboxed").apply_to(detected)
    assert effective_scope_tier(unset, "full") == "full"
    assert effective_scope_tier(explicit, "full") == "sandboxed"
    assert effective_scope_tier(explicit, "project") == "sandboxed"
