"""A long agent run: one turn of 60 tool rounds over large files in a 16k-token window.

Issue 38, item 6. A scripted agent behind a loopback server (the OpenAI wire format, prompt
tokens reported from the bytes it received) reads twenty large files round after round,
edits a few and thinks out loud; the engine runs over a real encrypted store and a real
filesystem. The turn completes, compacts several times on the way, never sends a request
larger than the window, keeps the user's words and every original row, and its JSONL export
replays. It runs in seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from relavium_lsp.engine.turn.window import SUMMARY_HEADING
from relavium_lsp.export.turns import group_turns
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.testing.scripted_agent import ScriptedAgent, Step
from tests.unit.engine.engine_harness import agent_engine

WINDOW = 16_384
ROUNDS = 60
# Large enough that clearing old results alone keeps a 120-round turn in it.
CLEARING_WINDOW = 65_536
FILES = 20
ASK = "Go through every module, note what each one does, and fix the marked typos."
USER = "[chat]\nmax_tool_turns = 200\n"


def _workspace(tmp_path: Path) -> list[str]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = []
    for number in range(FILES):
        name = f"pkg/module_{number:02}.py"
        lines = [
            f"def handler_{number}_{line}(request):  # recieve (typo) the request {line}\n"
            f"    return dispatch(request, route={line}, module={number})\n"
            for line in range(100)
        ]
        path = workspace / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")  # about 12 KB each
        names.append(name)
    return names


def _plan(names: list[str], rounds: int = ROUNDS) -> list[Step]:
    steps: list[Step] = []
    for round_number in range(rounds):
        name = names[round_number % FILES]
        if round_number % 10 == 9:
            fixed = f"# module {round_number}: typos fixed\n"
            steps.append(
                Step(calls=[("write_file", {"path": f"notes/{round_number}.md", "content": fixed})])
            )
        elif round_number % 3 == 2:
            thought = f"Module {name} dispatches by route; the next one may differ. " * 8
            steps.append(Step(text=thought, calls=[("read_file", {"path": name})]))
        else:
            steps.append(Step(calls=[("read_file", {"path": name})]))
    steps.append(Step(text="All modules read; six notes written."))
    return steps


async def test_a_sixty_round_turn_fits_a_16k_window_and_replays(tmp_path: Path) -> None:
    names = _workspace(tmp_path)
    agent = ScriptedAgent(_plan(names), summary="Read modules so far; each dispatches by route.")
    # More tool rounds than the default is the user's to allow, not a project's (issue 35).
    async with agent_engine(tmp_path, agent, context_window=WINDOW, user_toml=USER) as h:
        session = (await h.start(title="Long run")).record.id
        result = await h.engine.send(session, ASK)
        assert result.stop_reason == "stop", result.error
        assert result.text.strip() == "All modules read; six notes written."

        compacted = h.payloads(session, "session:compacted")
        assert len(compacted) >= 2
        assert any(event.cleared_tool_results for event in compacted)
        assert len(agent.requests) == ROUNDS + 1  # one call per round, and the answer
        for body in agent.requests:
            size = len(json.dumps(body)) // 4
            assert size <= WINDOW, f"a request of about {size} tokens"
            users = [m["content"] for m in body["messages"] if m["role"] == "user"]
            assert users[0] == ASK  # then at most the note of a summary
            assert all(text.startswith(SUMMARY_HEADING) for text in users[1:])
        assert (tmp_path / "workspace" / "notes" / "59.md").exists()

        # The history keeps every original: all sixty rounds, each result in full.
        _record, messages = await h.engine.full_transcript(session)
        tool_rows = [m for m in messages if m.role == "tool"]
        assert len(tool_rows) == ROUNDS
        assert sum("recieve (typo)" in str(m.content) for m in tool_rows) == 54
        markers = [m for m in messages if m.compaction is not None]
        assert len(markers) == len([e for e in compacted if e.boundary_sequence])
        # One logical turn, completed: the markers inside it do not split it.
        turns = group_turns(messages)
        assert len(turns) == 1 and turns[0].completed
        workflow = yaml.safe_load((await h.engine.render_export(session, "workflow")).content)
        agent_nodes = [node for node in workflow["nodes"] if node["type"] == "agent"]
        assert [node["tools"] for node in agent_nodes] == [["read_file", "write_file"]]

        markdown = (await h.engine.render_export(session, "markdown")).content
        assert f"compacted {len(markers)} times during this turn" in markdown

        # The export replays: the same transcript from the recordings alone.
        exported = (await h.engine.render_export(session, "jsonl")).content
        imported = await h.engine.import_jsonl(exported)
        report = await h.engine.replay(imported, mode="recorded")
        assert report.matches, report.differences
        assert report.turns_replayed == 1
        assert report.recorded_tool_calls == ROUNDS


async def _stored_bytes(tmp_path: Path, rounds: int) -> tuple[int, int, int]:
    """(bytes of marker rows, bytes of the other rows, markers) after a turn of ``rounds``.

    Then another engine over the same database continues the session: its first request
    starts with exactly the view the turn ended with, rebuilt from the stored markers.
    """
    tmp_path.mkdir()
    names = _workspace(tmp_path)
    agent = ScriptedAgent([*_plan(names, rounds), Step(text="later")], summary="Read so far.")
    stored = {
        "context_window": CLEARING_WINDOW,
        "user_toml": USER,
        "db_path": tmp_path / "home" / "history.db",
        "key": DbKey(os.urandom(32), "env"),
    }
    async with agent_engine(tmp_path, agent, **stored) as h:
        session = (await h.start(title="Long run")).record.id
        result = await h.engine.send(session, ASK)
        assert result.stop_reason == "stop", result.error
        sizes = await h.store.run(
            lambda s: s.connection.execute(
                "SELECT compaction IS NOT NULL, SUM(LENGTH(content) + COALESCE(LENGTH(compaction),"
                " 0)), COUNT(*) FROM session_messages WHERE session_id = ? GROUP BY 1",
                (session,),
            ).fetchall()
        )
    last = agent.requests[-1]["messages"]
    async with agent_engine(tmp_path, agent, **stored) as again:
        assert (await again.engine.send(session, "thanks")).text.strip() == "later"
        assert not again.payloads(session, "session:compacting")
    sent = agent.requests[-1]["messages"]
    assert sent[: len(last)] == last
    assert [m["role"] for m in sent[len(last) :]] == ["assistant", "user"]
    by_kind = {bool(kind): (size, count) for kind, size, count in sizes}
    return by_kind[True][0], by_kind[False][0], by_kind[True][1]


async def test_marker_storage_grows_linearly_with_the_turn(tmp_path: Path) -> None:
    # A marker holds the whole view so far; clearing alone keeps these turns in the window,
    # so each marker's view starts with the one before's. Stored in full, they grew
    # quadratically (at 120 rounds a third of the original rows, four times the share at 60).
    short_markers, short_rows, short_count = await _stored_bytes(tmp_path / "short", ROUNDS)
    long_markers, long_rows, long_count = await _stored_bytes(tmp_path / "long", 2 * ROUNDS)
    assert short_count >= 2 and long_count > short_count
    # Stored as what each adds, their share of the history stays about the same.
    assert long_markers / long_rows < 1.5 * short_markers / short_rows
    assert long_markers < long_rows / 10
