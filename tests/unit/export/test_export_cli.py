"""``relavium-lsp sessions …`` as real subprocesses against a real encrypted database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.contracts.session import SessionContext
from relavium_lsp.export.jsonl import export_jsonl
from relavium_lsp.export.workflow_yaml import export_workflow_yaml
from relavium_lsp.llm.seam import StopChunk, TextDelta, ToolCallEnd
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.store.sessions import SessionStore
from tests.unit.export.export_support import open_rig

REPO = Path(__file__).resolve().parents[3]


@dataclass
class Seeded:
    home: Path
    workspace: Path
    key: DbKey
    counting: str
    tools: str

    def run(
        self, *arguments: str, stdin: str | None = None, key: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "RELAVIUM_HOME": str(self.home / ".relavium"),
            "RELAVIUM_DB_KEY": key or self.key.raw.hex(),
            "PYTHONPATH": str(REPO),
            "LC_ALL": "C.UTF-8",
        }
        return subprocess.run(
            [sys.executable, "-m", "relavium_lsp", "sessions", *arguments],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            cwd=self.workspace,
            timeout=60,
            check=False,
        )

    def snapshot(self, session_id: str) -> tuple[object, object] | None:
        store = SessionStore.open(self.home / ".relavium" / "history.db", self.key)
        try:
            return store.export_snapshot(session_id)
        finally:
            store.close()


def _answer(text: str) -> list[object]:
    return [TextDelta(text=text), StopChunk(stop_reason="stop", usage=TokenUsage())]


@pytest.fixture
async def seeded(tmp_path: Path) -> Seeded:
    home = tmp_path / "user"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("ship on Friday\n", encoding="utf-8")
    calls = [
        _answer("One."),
        _answer("Two."),
        [
            ToolCallEnd(index=0, id="c1", name="read_file", args={"path": "notes.txt"}),
            StopChunk(stop_reason="tool_use", usage=TokenUsage()),
        ],
        _answer("The notes say ship on Friday."),
    ]
    rig = await open_rig(home / ".relavium", calls)
    try:
        context = SessionContext(working_dir=str(workspace))
        counting = await rig.engine.start(context=context, title="Counting")
        await rig.engine.send(counting.id, "First?")
        await rig.engine.send(counting.id, "Second?")
        tools = await rig.engine.start(context=context, title="Read notes")
        await rig.engine.send(tools.id, "What do the notes say?")
    finally:
        await rig.close()
    return Seeded(home, workspace, rig.key, counting.id, tools.id)


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def _fails(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith("error: ") and fragment in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_list_and_show(seeded: Seeded) -> None:
    listed = _ok(seeded.run("list"))
    assert seeded.counting in listed and "Counting" in listed and "Read notes" in listed
    data = json.loads(_ok(seeded.run("list", "--json", "--query", "Friday")))
    assert [entry["id"] for entry in data["sessions"]] == [seeded.tools]
    assert json.loads(_ok(seeded.run("list", "--json", "--workspace", "/elsewhere"))) == {
        "sessions": []
    }
    shown = _ok(seeded.run("show", seeded.tools))
    assert "-> read_file" in shown and "<- c1: ship on Friday" in shown
    assert "The notes say ship on Friday." in shown
    full = json.loads(_ok(seeded.run("show", seeded.counting, "--json")))
    assert full["session"]["title"] == "Counting"
    assert [m["role"] for m in full["messages"]] == ["user", "assistant", "user", "assistant"]


def test_export_to_stdout_and_to_a_file(seeded: Seeded, tmp_path: Path) -> None:
    snapshot = seeded.snapshot(seeded.counting)
    assert snapshot is not None
    expected = export_workflow_yaml(*snapshot)  # type: ignore[arg-type]
    assert _ok(seeded.run("export", seeded.counting)) == expected
    target = tmp_path / "out" / "counting.jsonl"
    result = seeded.run("export", seeded.tools, "--format", "jsonl", "--output", str(target))
    _ok(result)
    tools_snapshot = seeded.snapshot(seeded.tools)
    assert target.read_text(encoding="utf-8") == export_jsonl(*tools_snapshot)  # type: ignore[arg-type]
    workflow_file = tmp_path / "scaffold.relavium.yaml"
    _ok(seeded.run("export", seeded.counting, "--output", str(workflow_file)))
    record = seeded.snapshot(seeded.counting)[0]  # type: ignore[index]
    assert record.exported_workflow_path == str(workflow_file)  # type: ignore[attr-defined]


def test_import_fork_replay_delete(seeded: Seeded, tmp_path: Path) -> None:
    transcript = tmp_path / "tools.jsonl"
    _ok(seeded.run("export", seeded.tools, "--format", "jsonl", "--output", str(transcript)))
    imported = json.loads(_ok(seeded.run("import", str(transcript), "--json")))["sessionId"]
    assert imported != seeded.tools
    again = _ok(seeded.run("export", imported, "--format", "jsonl"))
    assert again.replace(imported, seeded.tools) == transcript.read_text(encoding="utf-8")
    from_stdin = _ok(seeded.run("import", "-", stdin=transcript.read_text(encoding="utf-8")))
    assert from_stdin.startswith("Imported as session ")

    before = seeded.snapshot(seeded.counting)
    forked = json.loads(_ok(seeded.run("fork", seeded.counting, "--at", "2", "--json")))
    fork_id = forked["sessionId"]
    fork = json.loads(_ok(seeded.run("show", fork_id, "--json")))
    assert fork["session"]["title"] == "Counting (fork)"
    assert [m["sequenceNumber"] for m in fork["messages"]] == [1, 2]
    assert seeded.snapshot(seeded.counting) == before

    # The export wrote the tool cassette beside the transcript and kept it for replays.
    cassette = tmp_path / "tools.tool-cassette.jsonl"
    assert cassette.read_text(encoding="utf-8").startswith('{"format":"relavium-tool-cassette/1.0"')
    replayed = _ok(seeded.run("replay", seeded.tools, "--tool-replay-mode", "recorded"))
    assert "identical to the original" in replayed
    assert "1 from the stored tool cassette, 0 re-run live" in replayed
    auto = _ok(seeded.run("replay", seeded.tools))
    assert "0 from the stored tool cassette, 1 re-run live" in auto
    report = json.loads(_ok(seeded.run("replay", seeded.counting, "--json", "--live-tools")))
    assert report["matches"] is True and report["turnsReplayed"] == 2

    assert "Deleted session" in _ok(seeded.run("delete", fork_id))
    _fails(seeded.run("show", fork_id), f"no session with id {fork_id!r}")


def test_errors_are_one_line_and_change_nothing(seeded: Seeded, tmp_path: Path) -> None:
    _fails(seeded.run("show", "no-such-session"), "no session with id 'no-such-session'")
    _fails(seeded.run("export", "no-such-session"), "no session")
    _fails(seeded.run("fork", seeded.counting, "--at", "99"), "message 99 is not a visible")
    bad = tmp_path / "bad.jsonl"
    lines = export_jsonl(*seeded.snapshot(seeded.counting)).splitlines()  # type: ignore[misc]
    bad.write_text("\n".join([*lines[:3], '{"record":"message"}', *lines[3:]]) + "\n")
    _fails(seeded.run("import", str(bad)), "line 4: ")
    _fails(seeded.run("import", str(tmp_path / "missing.jsonl")), "missing.jsonl")
    assert len(json.loads(_ok(seeded.run("list", "--json")))["sessions"]) == 2
    _fails(seeded.run("list", key="ab" * 32), "key")
    usage = seeded.run("list", "--limit", "0")
    assert usage.returncode == 2 and "--limit" in usage.stderr
