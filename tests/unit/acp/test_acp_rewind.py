"""``/rewind`` in ACP: list the checkpoints, put the files back, undo it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.lsp_harness import configure_loopback_provider, make_git_workspace
from tests.unit.acp.acp_client import RecordingClient, connect_in_process
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

ORIGINAL = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"
FIXED = ORIGINAL.replace("a - b", "a + b")


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


async def test_rewind_lists_restores_and_undoes(tmp_path: Path, isolated_home: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo", branch="main")
    app = workspace / "app.py"
    arguments = json.dumps({"path": "app.py", "edits": [{"old": "a - b", "new": "a + b"}]})
    client = RecordingClient()
    with LoopbackServer() as model:
        configure_loopback_provider(isolated_home, workspace, model.url + "/v1")
        model.script(
            openai_stream(
                tool_calls=[ScriptedToolCall(id="e1", name="edit_file", arguments=arguments)]
            ),
            openai_stream(text=["Fixed."]),
        )
        async with connect_in_process(client, fs=False) as (conn, _):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=text("fix add"))
            assert app.read_text(encoding="utf-8") == FIXED
            for command in ("/rewind", "/rewind 1"):
                answer = await conn.prompt(session_id=sid, prompt=text(command))
                assert answer.stop_reason == "end_turn"
            assert app.read_text(encoding="utf-8") == ORIGINAL
            said = client.message_text(sid)
            assert "File checkpoints, newest first:\n  /rewind 1 — app.py" in said
            assert "Rewound the files to before message 1.\nRestored: app.py" in said
            rewind_id = re.findall(r"/rewind undo (\w+)", said)[-1]
            await conn.prompt(session_id=sid, prompt=text(f"/rewind undo {rewind_id}"))
            assert app.read_text(encoding="utf-8") == FIXED
            assert "Undid the rewind.\nRestored: app.py" in client.message_text(sid)
    assert len(model.requests) == 2  # the commands never asked the model
