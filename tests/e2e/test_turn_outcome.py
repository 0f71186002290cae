"""A server process killed between two edits of one turn (issue 38, design §2.2).

The agent edits a file through the editor, then the model is still thinking when the
server is killed with SIGKILL. A new server process resumes the session: the transcript
holds the edit and says the turn was cut short, the checkpoint of that turn is there, the
file on disk is the edited one — the three agree — and a rewind puts the file back.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

BEFORE = {"first.txt": "first before\n", "second.txt": "second before\n"}


def _write(call_id: str, path: str) -> object:
    arguments = json.dumps({"path": path, "content": f"{path} by the agent\n"})
    return openai_stream(
        tool_calls=[ScriptedToolCall(id=call_id, name="write_file", arguments=arguments)]
    )


async def test_kill_9_between_two_edits_leaves_transcript_checkpoints_and_files_agreeing(
    tmp_path: Path,
) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    for name, text in BEFORE.items():
        (workspace / name).write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        model.script(
            _write("c1", "first.txt"),
            openai_stream(text=["Now the second file"], ending="stall"),
        )
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = started["sessionId"]
            turn = asyncio.ensure_future(
                client.request(
                    methods.SEND_MESSAGE, {"sessionId": session, "text": "edit both files"}
                )
            )
            # The second model call is streaming: the first edit is made, the second is not.
            assert await asyncio.to_thread(model.wait_for_requests, 2)
            await client.kill_server()
            failed = await asyncio.gather(turn, return_exceptions=True)
            assert isinstance(failed[0], Exception)  # the request died with the server
        assert (workspace / "first.txt").read_text() == "first.txt by the agent\n"
        assert (workspace / "second.txt").read_text() == BEFORE["second.txt"]

        async with editor(workspace, home) as again:
            resumed = await again.request(methods.RESUME_SESSION, {"sessionId": session})
            messages = resumed["messages"]
            roles = [message["role"] for message in messages]
            assert roles == ["user", "assistant", "tool", "system"]
            call = messages[1]["content"][0]
            assert (call["name"], call["args"]["path"]) == ("write_file", "first.txt")
            assert "interruption" in messages[-1]  # the cut turn is marked
            listed = await again.request(methods.LIST_CHECKPOINTS, {"sessionId": session})
            [checkpoint] = listed["checkpoints"]
            assert checkpoint["userSequence"] == messages[0]["sequenceNumber"]
            assert [f["path"] for f in checkpoint["files"]] == ["first.txt"]

            result = await again.request(
                methods.REWIND, {"sessionId": session, "toSequence": checkpoint["userSequence"]}
            )
            assert result["restored"] == ["first.txt"] and result["conflicts"] == []
            for name, text in BEFORE.items():
                assert (workspace / name).read_text() == text
