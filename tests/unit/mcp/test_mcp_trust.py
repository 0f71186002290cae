"""Project-declared servers: never started until trusted, trust remembered by content hash."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from relavium_lsp.mcp.trust import TRUST_FILE_NAME
from relavium_lsp.paths import relavium_home
from tests.unit.engine.engine_harness import scripted, text_reply, tool_reply
from tests.unit.mcp.mcp_harness import mcp_engine, probe_table


def _trust_file() -> Path:
    return relavium_home() / TRUST_FILE_NAME


async def test_an_untrusted_project_server_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    provider = scripted(text_reply("no tools then"), text_reply("still none"))
    project = probe_table(args=["--marker", str(marker)])
    async with mcp_engine(tmp_path, provider, project_toml=project) as m:
        m.h.host.decision = "reject"
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        [asked] = m.h.host.asked
        assert asked.tool_id == "mcp:probe" and asked.action == "process"
        assert asked.preview.command is not None and "probe_server.py" in asked.preview.command
        # shown as an ordinary card: the question, then its outcome
        [card] = m.h.payloads(session.id, "agent:tool_call")
        assert card.tool_id == "mcp:probe" and card.tool_input["trust"] == "probe"
        [outcome] = m.h.payloads(session.id, "agent:tool_result")
        assert outcome.call_id == card.call_id and outcome.error_code == "tool_denied"
        assert provider.requests[0].tools == ()
        # declined once: not asked again in this session
        assert (await m.h.engine.send(session.id, "again")).stop_reason == "stop"
        assert len(m.h.host.asked) == 1
        assert m.source.pool.known() == []
    assert not marker.exists()  # the command never ran
    assert not _trust_file().exists()


async def test_trust_is_remembered_per_definition_and_workspace(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    project = probe_table(args=["--marker", str(marker)])
    provider = scripted(tool_reply("mcp__probe__echo", {"text": "hi"}, "c1"), text_reply("ok"))
    async with mcp_engine(tmp_path, provider, project_toml=project) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        assert [r.tool_id for r in m.h.host.asked] == ["mcp:probe", "mcp__probe__echo"]
        assert marker.read_text(encoding="utf-8").startswith("started")
        workspace = str(m.h.workspace.resolve())
    trust = _trust_file()
    assert stat.S_IMODE(trust.stat().st_mode) == 0o600
    recorded = json.loads(trust.read_text(encoding="utf-8"))["workspaces"][workspace]
    assert list(recorded) == ["probe"] and len(recorded["probe"]) == 64
    # nothing was written into the repository
    assert sorted(p.name for p in (tmp_path / "workspace" / ".relavium").iterdir()) == [
        "agents",
        "project.toml",
    ]

    # another process, same definition: no question
    again = scripted(text_reply("hello"))
    async with mcp_engine(
        tmp_path, again, project_toml=project, db_path=tmp_path / "second" / "history.db"
    ) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        assert m.h.host.asked == []
        assert "mcp__probe__echo" in {spec.name for spec in again.requests[0].tools}

    # a changed definition is a new question
    changed = probe_table(args=["--marker", str(marker), "--token", "other"])
    asked_again = scripted(text_reply("hello"))
    async with mcp_engine(
        tmp_path, asked_again, project_toml=changed, db_path=tmp_path / "third" / "history.db"
    ) as m:
        m.h.host.decision = "reject"
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        assert [r.tool_id for r in m.h.host.asked] == ["mcp:probe"]
        assert asked_again.requests[0].tools == ()


async def test_a_user_server_of_the_same_name_wins_and_needs_no_trust(tmp_path: Path) -> None:
    marker = tmp_path / "project-ran"
    provider = scripted(text_reply("hello"))
    async with mcp_engine(
        tmp_path,
        provider,
        user_toml=probe_table(),
        project_toml=probe_table(args=["--marker", str(marker)]),
    ) as m:
        session = await m.h.start()
        assert (await m.h.engine.send(session.id, "hi")).stop_reason == "stop"
        assert m.h.host.asked == []
        assert "mcp__probe__echo" in {spec.name for spec in provider.requests[0].tools}
    assert not marker.exists()
