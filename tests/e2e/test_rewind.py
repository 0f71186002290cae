"""Checkpoints and rewind over the real server, with the files in a real git workspace.

Three turns change three files (one of them created); the user then edits one the agent
changed. A rewind to before the first turn restores every other file byte for byte through
``workspace/applyEdit``, deletes the created one, and reports the user's file as a conflict
without touching it. Checkpoints are durable: a second server process rewinds a session the
first one recorded, and undoes that rewind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, ScriptedToolCall, openai_stream

APP = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n"
APP_AFTER_1 = APP.replace("a - b", "a + b")
APP_AFTER_2 = APP_AFTER_1.replace("add(2, 3)", "add(2, 4)")
OTHER = "# CHECKPOINT-MARKER-7f3a other module\r\nVALUE = 1\r\n"  # CRLF kept byte for byte
OTHER_AFTER_3 = OTHER.replace("VALUE = 1", "VALUE = 2")
USER_TEXT = OTHER_AFTER_3 + "# the user's own line\r\n"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    (workspace / "other.py").write_bytes(OTHER.encode())
    return workspace, tmp_path / "home"


def _edit(call_id: str, path: str, old: str, new: str) -> Any:
    arguments = json.dumps({"path": path, "edits": [{"old": old, "new": new}]})
    return openai_stream(
        tool_calls=[ScriptedToolCall(id=call_id, name="edit_file", arguments=arguments)]
    )


def _write(call_id: str, path: str, content: str) -> Any:
    arguments = json.dumps({"path": path, "content": content})
    return openai_stream(
        tool_calls=[ScriptedToolCall(id=call_id, name="write_file", arguments=arguments)]
    )


def script_three_turns(model: LoopbackServer) -> None:
    model.script(
        _edit("c1", "app.py", "a - b", "a + b"),
        openai_stream(text=["one"]),
        _write("c2", "new.txt", "created by the agent\n"),
        _edit("c3", "app.py", "add(2, 3)", "add(2, 4)"),
        openai_stream(text=["two"]),
        _edit("c4", "other.py", "VALUE = 1", "VALUE = 2"),
        openai_stream(text=["three"]),
    )


async def run_three_turns(client: EditorClient) -> tuple[str, list[int]]:
    started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
    session = str(started["sessionId"])
    for text in ("first", "second", "third"):
        result = await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": text})
        assert result["stopReason"] == "stop", result
    starts = client.events_of(session, "session:turn_started")
    return session, [int(event["userMessageSequence"]) for event in starts]


async def test_rewind_after_three_turns_restores_every_file_and_reports_the_conflict(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        script_three_turns(model)
        async with editor(workspace, home) as client:
            client.open_document(workspace / "app.py")
            session, users = await run_three_turns(client)
            assert (workspace / "app.py").read_text() == APP_AFTER_2
            assert (workspace / "new.txt").exists()
            # The user changes other.py after the agent did.
            (workspace / "other.py").write_bytes(USER_TEXT.encode())

            listed = await client.request(methods.LIST_CHECKPOINTS, {"sessionId": session})
            assert [
                (turn["userSequence"], [(f["path"], f["created"]) for f in turn["files"]])
                for turn in listed["checkpoints"]
            ] == [
                (users[0], [("app.py", False)]),
                (users[1], [("app.py", False), ("new.txt", True)]),
                (users[2], [("other.py", False)]),
            ]

            edits_before = len(client.edits)
            result = await client.request(
                methods.REWIND, {"sessionId": session, "toSequence": users[0]}
            )
            assert result["restored"] == ["app.py"]
            assert result["deleted"] == ["new.txt"]
            assert [c["path"] for c in result["conflicts"]] == ["other.py"]
            assert "changed after the agent's last change" in result["conflicts"][0]["reason"]
            assert (workspace / "app.py").read_bytes() == APP.encode()
            assert not (workspace / "new.txt").exists()
            assert (workspace / "other.py").read_bytes() == USER_TEXT.encode()
            assert len(client.edits) == edits_before + 2  # through the editor, undoable

            # The conversation continues in a fork that ends before the first message.
            fork = result["sessionId"]
            assert fork != session
            forked = await client.request(methods.GET_TRANSCRIPT, {"sessionId": fork})
            assert forked["messages"] == []
            original = await client.request(methods.GET_TRANSCRIPT, {"sessionId": session})
            assert len(original["messages"]) > 10  # history kept
            [rewound] = client.events_of(session, "session:rewound")
            assert rewound["forkedSessionId"] == fork and rewound["conflicts"] == 1

    # Nothing of a checkpoint is readable without the key.
    for stored in (home / ".relavium").glob("history.db*"):
        assert b"CHECKPOINT-MARKER-7f3a" not in stored.read_bytes()


async def test_rewind_works_after_a_restart_and_can_be_undone(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        script_three_turns(model)
        async with editor(workspace, home) as client:
            session, users = await run_three_turns(client)

        async with editor(workspace, home) as client:
            result = await client.request(
                methods.REWIND, {"sessionId": session, "toSequence": users[1]}
            )
            assert sorted(result["restored"]) == ["app.py", "other.py"]
            assert result["deleted"] == ["new.txt"] and result["conflicts"] == []
            assert (workspace / "app.py").read_bytes() == APP_AFTER_1.encode()
            assert (workspace / "other.py").read_bytes() == OTHER.encode()
            fork = result["sessionId"]
            forked = await client.request(methods.GET_TRANSCRIPT, {"sessionId": fork})
            assert [m["sequenceNumber"] for m in forked["messages"]][-1] == users[1] - 1
            # The fork keeps the first turn's checkpoint: it can rewind further.
            listed = await client.request(methods.LIST_CHECKPOINTS, {"sessionId": fork})
            assert [turn["userSequence"] for turn in listed["checkpoints"]] == [users[0]]

            undone = await client.request(
                methods.UNDO_REWIND, {"sessionId": session, "rewindId": result["rewindId"]}
            )
            assert sorted(undone["restored"]) == ["app.py", "new.txt", "other.py"]
            assert undone["sessionId"] == session
            assert (workspace / "app.py").read_bytes() == APP_AFTER_2.encode()
            assert (workspace / "other.py").read_bytes() == OTHER_AFTER_3.encode()
            assert (workspace / "new.txt").read_text() == "created by the agent\n"

            await client.request(methods.DELETE_SESSION, {"sessionId": session})
            gone = await client.request(methods.LIST_CHECKPOINTS, {"sessionId": fork})
            assert [turn["userSequence"] for turn in gone["checkpoints"]] == [users[0]]


# -- the scope at the moment of writing (issue 35 item 2) ---------------------------------

AGENT_LEFT = "after the agent\n"


def script_two_edits(model: LoopbackServer) -> None:
    model.script(
        _write("s1", "r1.txt", AGENT_LEFT),
        _write("s2", "sub/r2.txt", AGENT_LEFT),
        openai_stream(text=["done"]),
    )


def _link_out(link: Path, target: Path, text: str | None) -> None:
    """Replace ``link`` (a file or a directory) by a symlink to ``target``."""
    if link.is_dir() and not link.is_symlink():
        for child in link.iterdir():
            child.unlink()
        link.rmdir()
    else:
        link.unlink()
    if text is not None:
        target.write_text(text, encoding="utf-8")
    link.symlink_to(target)


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    (workspace / "r1.txt").write_text("before\n", encoding="utf-8")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "r2.txt").write_text("before\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    return workspace, tmp_path / "home", outside


async def test_rewind_refuses_a_file_or_a_parent_replaced_by_a_symlink(
    two_files: tuple[Path, Path, Path],
) -> None:
    workspace, home, outside = two_files
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        script_two_edits(model)
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = str(started["sessionId"])
            sent = await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            assert sent["stopReason"] == "stop", sent
            [turn] = client.events_of(session, "session:turn_started")
            assert (workspace / "r1.txt").read_text() == AGENT_LEFT

            # The file, and the other file's directory, now lead outside the workspace, to
            # files that hold exactly what the agent left (so only the scope can refuse).
            _link_out(workspace / "r1.txt", outside / "victim.txt", AGENT_LEFT)
            (outside / "dir").mkdir()
            (outside / "dir" / "r2.txt").write_text(AGENT_LEFT, encoding="utf-8")
            _link_out(workspace / "sub", outside / "dir", None)

            edits_before = len(client.edits)
            result = await client.request(
                methods.REWIND,
                {"sessionId": session, "toSequence": turn["userMessageSequence"]},
            )
            assert result["restored"] == [] and result["deleted"] == []
            conflicts = {c["path"]: c["reason"] for c in result["conflicts"]}
            assert set(conflicts) == {"r1.txt", "sub/r2.txt"}
            assert all("outside" in reason for reason in conflicts.values()), conflicts
            assert len(client.edits) == edits_before  # nothing was sent to the editor
            assert (outside / "victim.txt").read_text() == AGENT_LEFT
            assert (outside / "dir" / "r2.txt").read_text() == AGENT_LEFT


async def test_undo_rewind_refuses_a_file_replaced_by_a_symlink_meanwhile(
    two_files: tuple[Path, Path, Path],
) -> None:
    workspace, home, outside = two_files
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        script_two_edits(model)
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = str(started["sessionId"])
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "go"})
            [turn] = client.events_of(session, "session:turn_started")
            rewound = await client.request(
                methods.REWIND,
                {"sessionId": session, "toSequence": turn["userMessageSequence"]},
            )
            assert sorted(rewound["restored"]) == ["r1.txt", "sub/r2.txt"]
            # r1.txt now points at another file *inside* the workspace: still not the file
            # the rewind replaced, so the undo must not write through it either.
            (workspace / "inside.txt").write_text("before\n", encoding="utf-8")
            _link_out(workspace / "r1.txt", workspace / "inside.txt", None)
            _link_out(workspace / "sub", outside, None)
            (outside / "r2.txt").write_text("before\n", encoding="utf-8")

            undone = await client.request(
                methods.UNDO_REWIND, {"sessionId": session, "rewindId": rewound["rewindId"]}
            )
            assert undone["restored"] == []
            assert {c["path"] for c in undone["conflicts"]} == {"r1.txt", "sub/r2.txt"}
            assert (workspace / "inside.txt").read_text() == "before\n"
            assert (outside / "r2.txt").read_text() == "before\n"
