"""Reviewing a turn's changes file by file, over the real server (``docs/design.md`` §6.4).

One turn edits ``app.py``, creates ``new.txt`` and edits ``other.py``. The review lists the
three with line counts; the checkpoint gives each file's text before the turn; keeping
``app.py`` leaves it, undoing ``new.txt`` deletes it through the editor, and undoing
``other.py`` after the user changed it is a conflict that stays pending. The decisions are
announced and stored: a second server process lists them, and the Markdown export carries
the summary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import configure_loopback_provider, editor, make_git_workspace
from tests.e2e.test_rewind import APP, APP_AFTER_1, OTHER, OTHER_AFTER_3, USER_TEXT, _edit, _write
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    workspace = make_git_workspace(tmp_path / "repo")
    (workspace / "other.py").write_bytes(OTHER.encode())
    return workspace, tmp_path / "home"


def script_one_turn(model: LoopbackServer) -> None:
    model.script(
        _edit("c1", "app.py", "a - b", "a + b"),
        _write("c2", "new.txt", "created by the agent\nsecond line\n"),
        _edit("c3", "other.py", "VALUE = 1", "VALUE = 2"),
        openai_stream(text=["done"]),
        openai_stream(text=["nothing to change"]),
    )


async def test_keep_one_file_undo_another_and_a_conflict_stays_pending(
    setup: tuple[Path, Path],
) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        script_one_turn(model)
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = str(started["sessionId"])
            nothing = await client.request(methods.TURN_CHANGES, {"sessionId": session})
            assert nothing == {"files": []}
            result = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "fix it"}
            )
            assert result["stopReason"] == "stop", result
            [turn] = client.events_of(session, "session:turn_started")
            user = int(turn["userMessageSequence"])
            # A later turn that changed nothing leaves "the latest turn that changed files".
            result = await client.request(
                methods.SEND_MESSAGE, {"sessionId": session, "text": "anything else?"}
            )
            assert result["stopReason"] == "stop", result

            changes = await client.request(methods.TURN_CHANGES, {"sessionId": session})
            assert changes["userSequence"] == user
            assert changes["files"] == [
                {"path": "app.py", "created": False, "deleted": False, "added": 1,
                 "removed": 1, "review": "pending"},
                {"path": "new.txt", "created": True, "deleted": False, "added": 2,
                 "removed": 0, "review": "pending"},
                {"path": "other.py", "created": False, "deleted": False, "added": 1,
                 "removed": 1, "review": "pending"},
            ]  # fmt: skip

            before = await client.request(
                methods.CHECKPOINT_CONTENT,
                {"sessionId": session, "userSequence": user, "path": "app.py"},
            )
            assert before == {"existed": True, "content": APP}
            created = await client.request(
                methods.CHECKPOINT_CONTENT,
                {"sessionId": session, "userSequence": user, "path": "new.txt"},
            )
            assert created == {"existed": False}

            kept = await client.request(
                methods.REVIEW_CHANGES,
                {"sessionId": session, "userSequence": user, "decision": "keep",
                 "paths": ["app.py"]},
            )  # fmt: skip
            assert kept["kept"] == ["app.py"] and kept["restored"] == []

            (workspace / "other.py").write_bytes(USER_TEXT.encode())  # the user's own edit
            edits_before = len(client.edits)
            undone = await client.request(
                methods.REVIEW_CHANGES,
                {"sessionId": session, "userSequence": user, "decision": "undo",
                 "paths": ["new.txt", "other.py"]},
            )  # fmt: skip
            assert undone["deleted"] == ["new.txt"]
            assert [c["path"] for c in undone["conflicts"]] == ["other.py"]
            assert undone["kept"] == [] and undone["restored"] == []
            assert len(client.edits) == edits_before + 1  # through the editor
            assert not (workspace / "new.txt").exists()
            assert (workspace / "app.py").read_text() == APP_AFTER_1
            assert (workspace / "other.py").read_bytes() == USER_TEXT.encode()

            reviewed = client.events_of(session, "session:changes_reviewed")
            assert [(e["decision"], e["paths"], e["userSequence"]) for e in reviewed] == [
                ("keep", ["app.py"], user),
                ("undo", ["new.txt"], user),
            ]

    async with editor(workspace, home) as client:
        changes = await client.request(
            methods.TURN_CHANGES, {"sessionId": session, "userSequence": user}
        )
        assert [(f["path"], f["review"]) for f in changes["files"]] == [
            ("app.py", "kept"),
            ("new.txt", "undone"),
            ("other.py", "pending"),
        ]
        # other.py now differs from the checkpoint by the agent's line and the user's.
        [other] = [f for f in changes["files"] if f["path"] == "other.py"]
        assert (other["added"], other["removed"]) == (2, 1)

        exported = await client.request(
            methods.EXPORT_SESSION, {"sessionId": session, "format": "markdown", "open": False}
        )
        text = exported["content"]
        assert exported["format"] == "markdown"
        assert exported["suggestedPath"].endswith(".md")
        assert "### You\n\nfix it" in text
        assert "- Edited `app.py`" in text and "- Wrote `new.txt`" in text
        assert "**3 files changed +3 \N{MINUS SIGN}2**" in text
        assert "`new.txt` (new, undone) +0 \N{MINUS SIGN}0" in text
        assert "2 exchanges" in text


async def test_review_refuses_what_the_turn_did_not_change(setup: tuple[Path, Path]) -> None:
    workspace, home = setup
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1")
        script_one_turn(model)
        async with editor(workspace, home) as client:
            started = await client.request(methods.START_SESSION, {"agentRef": "coder"})
            session = str(started["sessionId"])
            await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": "fix it"})
            user = int(client.events_of(session, "session:turn_started")[0]["userMessageSequence"])
            for params in (
                {"userSequence": user, "decision": "undo", "paths": ["../outside.txt"]},
                {"userSequence": user, "decision": "keep", "paths": ["README.md"]},
                {"userSequence": user + 1, "decision": "keep"},
            ):
                with pytest.raises(Exception, match=r"did not change|changed no files"):
                    await client.request(methods.REVIEW_CHANGES, {"sessionId": session, **params})
            with pytest.raises(Exception, match="did not change"):
                await client.request(
                    methods.CHECKPOINT_CONTENT,
                    {"sessionId": session, "userSequence": user, "path": "/etc/passwd"},
                )
            with pytest.raises(Exception, match="decision"):
                await client.request(
                    methods.REVIEW_CHANGES,
                    {"sessionId": session, "userSequence": user, "decision": "maybe"},
                )
            # Nothing was touched by the refused requests.
            assert (workspace / "app.py").read_text() == APP_AFTER_1
            assert (workspace / "other.py").read_bytes() == OTHER_AFTER_3.encode()
            assert client.events_of(session, "session:changes_reviewed") == []
