"""Automatic introspection passes over the real server (issue 23 item 4, seed 002).

Real ``relavium-lsp serve`` processes, real config files, the offline model and loopback
providers. The idle delay is a real (short) delay from the config file: the tests wait for the
checkpoint events it causes, never for time. "Not otherwise" is shown by order, not by time:
passes run one at a time in the order their triggers fired, so when a later pass is recorded,
an earlier one would have been too.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from relavium_lsp.server import methods
from tests.e2e.lsp_harness import (
    EditorClient,
    configure_loopback_provider,
    editor,
    make_git_workspace,
)
from tests.unit.llm.wire_servers import LoopbackServer, openai_stream

MEMO = ["DESCRIPTION: What was done\n", "MEMORY:\n- it was done"]


def project_toml(workspace: Path, text: str) -> None:
    path = workspace / ".relavium" / "project.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def user_toml(home: Path, text: str) -> None:
    """Add to the user's own config.toml: passes more often than the default are theirs to
    allow, not a project's (issue 35)."""
    path = home / ".relavium" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(before + "\n" + text, encoding="utf-8")


def local_agent(workspace: Path) -> None:
    """An agent on a model the catalog does not price, served from a local endpoint: free."""
    agents = workspace / ".relavium" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "local.agent.yaml").write_text(
        "id: local\nname: Local\ndescription: a local model\nmodel: local-llm\nprovider: loop\n"
        'system_prompt: "You help."\ntools: [read_file]\n',
        encoding="utf-8",
    )


async def start(client: EditorClient, agent: str, workspace: Path | None = None) -> str:
    params: dict[str, Any] = {"agentRef": agent}
    if workspace is not None:
        params["context"] = {"workingDir": str(workspace)}
    return str((await client.request(methods.START_SESSION, params))["sessionId"])


async def send(client: EditorClient, session: str, text: str) -> None:
    await client.request(methods.SEND_MESSAGE, {"sessionId": session, "text": text})


async def reasons(client: EditorClient, session: str) -> list[str]:
    listed = await client.request(methods.LIST_INTROSPECTIONS, {"sessionId": session})
    return [checkpoint["reason"] for checkpoint in listed["checkpoints"]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_git_workspace(tmp_path / "repo")


async def test_idle_pass_on_the_offline_model_is_listed_and_exported(
    workspace: Path, tmp_path: Path
) -> None:
    user_toml(tmp_path / "home", "[introspection]\nidle_seconds = 0.05\n")
    async with editor(workspace, tmp_path / "home") as client:
        session = await start(client, "relavium-default")
        await send(client, session, "hello")
        checkpoint = await client.wait_for_event(session, "session:checkpoint")
        assert checkpoint["reason"] == "idle"
        assert await reasons(client, session) == ["idle"]
        exported = await client.request(
            methods.EXPORT_SESSION, {"sessionId": session, "open": False}
        )
        document = YAML(typ="safe").load(exported["content"])
        carried = document["metadata"]["relaviumExport"]["checkpoints"]
        assert [c["reason"] for c in carried] == ["idle"]
        jsonl = await client.request(
            methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl", "open": False}
        )
        records = [json.loads(line) for line in jsonl["content"].splitlines()]
        assert [r["reason"] for r in records if r["record"] == "checkpoint"] == ["idle"]


async def test_idle_is_off_by_default_for_a_paid_model(tmp_path: Path) -> None:
    paid = make_git_workspace(tmp_path / "paid")
    free = make_git_workspace(tmp_path / "free")
    home = tmp_path / "home"
    # The paid session's delay is the shorter one: had its timer been armed (first), it would
    # have fired, and its pass been recorded, before the free session's.
    project_toml(free, "[introspection]\nidle_seconds = 0.1\n")  # rarer: a project may
    with LoopbackServer() as model:
        configure_loopback_provider(
            home, paid, model.url + "/v1", introspection=True
        )  # coder: gpt-4o-mini
        user_toml(home, "[introspection]\nidle_seconds = 0.05\nevery_turns = 0\n")
        local_agent(free)
        model.script(
            openai_stream(text=["paid answer"]),
            openai_stream(text=["free answer"]),
            openai_stream(text=MEMO),
        )
        async with editor(paid, home) as client:
            costly = await start(client, "coder")
            await send(client, costly, "on a paid model")
            local = await start(client, "local", free)
            await send(client, local, "on a local model")
            checkpoint = await client.wait_for_event(local, "session:checkpoint")
            assert checkpoint["reason"] == "idle"
            assert client.events_of(costly, "session:checkpoint") == []
            assert client.events_of(costly, "session:checkpoint_failed") == []
            assert await reasons(client, costly) == []
            assert len(model.requests) == 3
            assert model.unscripted == []


async def test_turn_limit_then_new_session_over_a_loopback_provider(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1", introspection=True)
        user_toml(home, "[introspection]\nevery_turns = 2\n")
        model.script(
            openai_stream(text=["one"]),
            openai_stream(text=["two"]),
            openai_stream(text=MEMO),
            openai_stream(text=["three"]),
            openai_stream(text=MEMO),
        )
        async with editor(workspace, home) as client:
            session = await start(client, "coder")
            await send(client, session, "first")
            await send(client, session, "second")
            first = await client.wait_for_event(session, "session:checkpoint")
            assert first["reason"] == "turn_limit"
            assert first["throughSequence"] == 4
            await send(client, session, "third")  # one turn since: not yet
            newer = await start(client, "coder")
            second = await client.wait_for_event(session, "session:checkpoint", count=2)
            assert second["reason"] == "new_session"
            assert "third" in json.dumps(model.requests[4].json()["messages"])
            assert await reasons(client, session) == ["turn_limit", "new_session"]
            assert await reasons(client, newer) == []
            assert len(model.requests) == 5
            jsonl = await client.request(
                methods.EXPORT_SESSION, {"sessionId": session, "format": "jsonl", "open": False}
            )
            records = [json.loads(line) for line in jsonl["content"].splitlines()]
            assert [r["reason"] for r in records if r["record"] == "checkpoint"] == [
                "turn_limit",
                "new_session",
            ]


async def test_two_windows_introspect_a_session_once_and_shutdown_cancels(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with LoopbackServer() as model:
        configure_loopback_provider(home, workspace, model.url + "/v1", introspection=True)
        # A stalled pass must outlast the test on a loaded machine (the harness uses 10 s).
        config = home / ".relavium" / "config.toml"
        config.write_text(
            config.read_text(encoding="utf-8").replace("timeout_s = 10", "timeout_s = 300"),
            encoding="utf-8",
        )
        model.script(
            openai_stream(text=["S answer"]),
            # Window A's pass of S: it starts, then the model goes silent.
            openai_stream(text=["DESCRIPTION: "], ending="stall", done=False, usage=None),
            openai_stream(text=MEMO),  # window B's pass of R
            openai_stream(text=MEMO),  # window B's pass of S once A is gone
        )
        async with AsyncExitStack() as stack_b:
            async with AsyncExitStack() as stack_a:
                a = await stack_a.enter_async_context(editor(workspace, home))
                b = await stack_b.enter_async_context(editor(workspace, home))
                earlier = await start(a, "coder")  # R: empty for now
                s = await start(a, "coder")
                await send(a, s, "remember S")
                await start(a, "coder")  # window A checkpoints S (R has nothing yet)
                await a.wait_until(lambda: len(model.requests) == 2, "A's pass of S")
                await a.request(
                    methods.APPEND_MESSAGE,
                    {"sessionId": earlier, "role": "user", "text": "note about R"},
                )
                # Window B finds S and R: S first (older activity) — A holds its lease, so B
                # leaves it — then R, which B checkpoints.
                await start(b, "coder")
                await b.wait_for_event(earlier, "session:checkpoint")
                assert len(model.requests) == 3
                assert "note about R" in json.dumps(model.requests[2].json()["messages"])
                assert "remember S" in json.dumps(model.requests[1].json()["messages"])
            # Window A shut down: its pass of S was cancelled (the model call hung up) and
            # its lease released. S is still not introspected, so B's next new session does
            # it — what B left alone before only because A held S.
            assert await model.wait_for_disconnect(1, within_s=60)
            assert await reasons(b, s) == []
            await start(b, "coder")
            checkpoint = await b.wait_for_event(s, "session:checkpoint")
            assert checkpoint["reason"] == "new_session"
            assert await reasons(b, s) == ["new_session"]
            assert await reasons(b, earlier) == ["new_session"]  # nothing new: not again
            assert len(model.requests) == 4
