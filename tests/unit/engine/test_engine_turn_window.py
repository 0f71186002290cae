"""Compaction inside a turn: every request fits the model's window (issue 38, design §2.3).

A scripted agent behind a loopback server speaks the OpenAI wire format, reads large files
round after round, and reports prompt tokens from the bytes it received; the engine runs over
a real encrypted store. What the requests held is read from the server's side.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

from relavium_lsp.contracts.content import ToolResultPart
from relavium_lsp.engine.turn.window import SUMMARY_HEADING
from relavium_lsp.store.db.keys import DbKey
from relavium_lsp.testing.scripted_agent import ScriptedAgent, Step
from relavium_lsp.testing.wire_scripts import openai_error, openai_stream
from tests.unit.engine.engine_harness import Harness, agent_engine

WINDOW = 8_192
NOTE = SUMMARY_HEADING.split("]")[0]
ASK = "Read every file in the workspace and tell me what they hold."
FILE_CHARS = 4_000
ARTIFACT = re.compile(r"artifact ([0-9a-f-]{36}): call read_tool_output")
OVERFLOW = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9100 tokens. Please reduce the length of the messages."
)


def _files(workspace: Path, count: int) -> list[str]:
    names = []
    for number in range(count):
        name = f"module_{number}.py"
        lines = [
            f"def function_{number}_{line}(value): return value + {line}" for line in range(90)
        ]
        (workspace / name).write_text("\n".join(lines)[:FILE_CHARS] + "\n", encoding="utf-8")
        names.append(name)
    return names


def _reads(names: list[str], *, text: str = "") -> list[Step]:
    return [Step(calls=[("read_file", {"path": name})], text=text) for name in names]


def _tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _user_texts(body: dict[str, Any]) -> list[str]:
    """What the user wrote, as sent (a summary note of compaction is not the user's)."""
    return [
        m["content"]
        for m in body["messages"]
        if m["role"] == "user" and not m["content"].startswith(NOTE)
    ]


async def _transcript(h: Harness, session_id: str) -> list[Any]:
    return await h.store.run(lambda s: list(s.iter_messages(session_id)))


async def test_old_tool_results_are_cleared_into_artifacts(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 5)
    agent = ScriptedAgent([*_reads(names), Step(text="done")])
    async with agent_engine(tmp_path, agent, context_window=WINDOW) as h:
        session = (await h.start()).record.id
        result = await h.engine.send(session, ASK)
        assert result.stop_reason == "stop" and result.text.strip() == "done"
        compacted = h.payloads(session, "session:compacted")
        assert compacted and all(event.reason == "context_window" for event in compacted)
        assert compacted[0].cleared_tool_results >= 1
        assert compacted[0].summarized_messages == 0
        assert compacted[0].tokens_after < compacted[0].tokens_before
        types = h.types(session)
        assert types.index("session:compacting") < types.index("session:compacted")
        # Every request went out within the trigger, and held the user's words verbatim.
        for body in agent.requests:
            assert _user_texts(body) == [ASK]
        # The first request after compaction: the calls are all still there, the oldest
        # results are notes naming artifacts that hold their text.
        after = next(b for b in agent.requests if any(ARTIFACT.search(t) for t in _tool_texts(b)))
        calls = [
            call["id"]
            for m in after["messages"]
            if m["role"] == "assistant"
            for call in m.get("tool_calls") or []
        ]
        answered = [m["tool_call_id"] for m in after["messages"] if m["role"] == "tool"]
        assert calls == answered and calls[0] == "call-1"
        transcript = await _transcript(h, session)
        originals = {
            part.tool_call_id: part.result
            for message in transcript
            if message.role == "tool"
            for part in message.content
            if isinstance(part, ToolResultPart)
        }
        for message in after["messages"]:
            found = ARTIFACT.search(message.get("content") or "")
            if message["role"] == "tool" and found:
                kept = await h.store.load_artifact(session, found.group(1))
                assert kept == originals[message["tool_call_id"]]
                assert "function_" in kept  # the full text of the file read
        # Nothing was deleted: the history keeps every original result.
        assert all("function_" in text for text in originals.values())
        markers = [m for m in transcript if m.compaction is not None]
        assert markers and markers[0].compaction.mode == "clear"
        assert markers[0].compaction.view is not None


async def test_a_resumed_session_sees_the_view_the_turn_had(tmp_path: Path) -> None:
    key = DbKey(os.urandom(32), "env")
    db_path = tmp_path / "home" / "history.db"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 5)
    agent = ScriptedAgent([*_reads(names), Step(text="done"), Step(text="later")])
    stored = {"context_window": WINDOW, "db_path": db_path, "key": key}
    async with agent_engine(tmp_path, agent, **stored) as h:
        session = (await h.start()).record.id
        assert (await h.engine.send(session, ASK)).text.strip() == "done"
        assert h.payloads(session, "session:compacted")
    last = agent.requests[-1]["messages"]
    # Another engine over the same database: a restart, or another window.
    async with agent_engine(tmp_path, agent, **stored) as again:
        resumed = await again.engine.resume(session)
        assert resumed.messages[0].compaction is not None  # the view is loaded
        assert (await again.engine.send(session, "thanks")).text.strip() == "later"
        assert not again.payloads(session, "session:compacting")
    sent = agent.requests[-1]["messages"]
    assert sent[: len(last)] == last  # exactly the view the turn ended with
    assert [m["role"] for m in sent[len(last) :]] == ["assistant", "user"]
    assert sent[-1]["content"] == "thanks"


async def test_older_rounds_are_summarised_when_clearing_is_not_enough(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 8)
    # Every round also says a lot: clearing results alone cannot keep up.
    thinking = "I read that file; next I look at the following one. " * 30
    agent = ScriptedAgent(
        [*_reads(names, text=thinking), Step(text="done")], summary="SUMMARY-OF-WORK"
    )
    async with agent_engine(tmp_path, agent, context_window=WINDOW) as h:
        session = (await h.start()).record.id
        result = await h.engine.send(session, ASK)
        assert result.text.strip() == "done"
        summarised = [e for e in h.payloads(session, "session:compacted") if e.summarized_messages]
        assert summarised
        assert agent.summaries, "the model was asked for the summary"
        summary_call = agent.summaries[0]
        assert summary_call["tool_choice"] == "none"
        assert ASK in json.dumps(summary_call["messages"])
        later = agent.requests[-1]["messages"]
        assert _user_texts(agent.requests[-1]) == [ASK]  # the user's words stay verbatim
        assert any(
            m["role"] == "user" and m["content"] == SUMMARY_HEADING + "SUMMARY-OF-WORK"
            for m in later
        )
        transcript = await _transcript(h, session)
        modes = [m.compaction.mode for m in transcript if m.compaction is not None]
        assert "summarize" in modes
        # The summary call was priced like any other.
        assert len(h.payloads(session, "cost:updated")) == len(agent.requests) + len(
            agent.summaries
        )


async def test_an_abort_while_the_summary_is_written_ends_the_compaction_event(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 8)
    thinking = "Reading on. " * 120
    agent = ScriptedAgent(
        [*_reads(names, text=thinking), Step(text="done")],
        summary_response=openai_stream(text=["Half a sum"], ending="stall"),
    )
    async with agent_engine(tmp_path, agent, context_window=WINDOW) as h:
        session = (await h.start()).record.id
        turn = asyncio.create_task(h.engine.send(session, ASK))
        assert await asyncio.to_thread(agent.wait_for_summaries, 1)
        assert await h.engine.abort(session)
        assert (await turn).stop_reason == "aborted"
        compacting = h.payloads(session, "session:compacting")
        compacted = h.payloads(session, "session:compacted")
        assert compacting and len(compacted) == len(compacting)
        ended = compacted[-1]  # the summary's compaction: nothing taken out
        assert ended.boundary_sequence == 0 and ended.tokens_after == ended.tokens_before
        transcript = await _transcript(h, session)
        assert not any(
            m.compaction is not None and m.compaction.mode == "summarize" for m in transcript
        )


async def test_a_failed_summary_call_leaves_a_digest_of_the_calls(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 8)
    thinking = "Reading on. " * 120
    agent = ScriptedAgent(
        [*_reads(names, text=thinking), Step(text="done")],
        summary_response=openai_error(500, "the summariser is down", error_type="server_error"),
    )
    async with agent_engine(tmp_path, agent, context_window=WINDOW) as h:
        session = (await h.start()).record.id
        assert (await h.engine.send(session, ASK)).text.strip() == "done"
        assert agent.summaries
        later = json.dumps(agent.requests[-1]["messages"])
        assert "- called read_file" in later and "module_0.py" in later


async def test_a_context_length_refusal_compacts_and_retries_once(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 3)
    refusal = openai_error(400, OVERFLOW, code="context_length_exceeded")
    agent = ScriptedAgent([*_reads(names), Step(response=refusal), Step(text="done")])
    # A window far larger than the model's real one: only the refusal tells the truth.
    async with agent_engine(tmp_path, agent, context_window=64_000) as h:
        session = (await h.start()).record.id
        result = await h.engine.send(session, ASK)
        assert result.stop_reason == "stop" and result.error is None
        assert result.text.strip() == "done"
        refused, retried = agent.requests[-2], agent.requests[-1]
        assert len(json.dumps(retried)) < len(json.dumps(refused))
        # The refusal named 9,100 tokens: the retry was compacted well below that.
        compacted = h.payloads(session, "session:compacted")
        assert len(compacted) == 1 and compacted[0].tokens_before >= 9_100
        assert compacted[0].tokens_after < 9_100 * 0.6
        # Later turns plan for the window the provider showed, not the configured one.
        assert (await h.engine.session(session)).context_window == 9_100


async def test_the_window_a_refusal_showed_is_kept_across_a_restart(tmp_path: Path) -> None:
    key = DbKey(os.urandom(32), "env")
    stored = {"context_window": 64_000, "db_path": tmp_path / "home" / "history.db", "key": key}
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 3)
    refusal = openai_error(400, OVERFLOW, code="context_length_exceeded")
    agent = ScriptedAgent([*_reads(names), Step(response=refusal), Step(text="done")])
    async with agent_engine(tmp_path, agent, **stored) as h:
        session = (await h.start()).record.id
        assert (await h.engine.send(session, ASK)).text.strip() == "done"
    # Another engine over the same database: a restart plans for the window the provider
    # showed, not the configured 64,000 that was refused.
    async with agent_engine(tmp_path, agent, **stored) as again:
        snapshot = await again.engine.session(session)
        assert snapshot.context_window == 9_100 and snapshot.context_window_known


async def test_a_second_refusal_ends_the_turn_with_a_clear_error(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 2)
    refusal = openai_error(400, OVERFLOW, code="context_length_exceeded")
    agent = ScriptedAgent([*_reads(names), Step(response=refusal), Step(response=refusal)])
    async with agent_engine(tmp_path, agent, context_window=64_000) as h:
        session = (await h.start()).record.id
        result = await h.engine.send(session, ASK)
        assert result.stop_reason == "error" and result.error is not None
        assert result.error.code == "validation"
        assert "does not fit the model's context window" in result.error.message
        assert len(agent.requests) == 4  # two reads, the refused call and its one retry


async def test_a_trim_after_a_compacted_turn_hands_on_the_users_words(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 12)
    agent = ScriptedAgent([*_reads(names), Step(text="done"), Step(text="ok"), Step(text="ok")])
    async with agent_engine(tmp_path, agent, context_window=WINDOW) as h:
        session = (await h.start()).record.id
        assert (await h.engine.send(session, ASK)).text.strip() == "done"
        for follow_up in ("and then?", "thanks"):
            assert (await h.engine.send(session, follow_up)).text.strip() == "ok"
        trimmed = await h.engine.compact(session, mode="trim")
        assert trimmed.type == "session:trimmed"
        transcript = await _transcript(h, session)
        marker = transcript[-1]
        assert marker.compaction is not None and marker.compaction.mode == "trim"
        text = marker.content[0].text  # type: ignore[union-attr]
        assert ASK in text  # the user's request is handed on
        assert "was cleared from view" not in text  # the cleared outputs' notes are not


async def test_an_unknown_window_is_learnt_from_the_refusal_not_guessed(tmp_path: Path) -> None:
    """A model the catalog does not know, with no configured window: no compaction ahead of
    time against a guess — the provider's refusal tells the window, then the turn compacts."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    names = _files(workspace, 6)
    refusal = openai_error(400, OVERFLOW, code="context_length_exceeded")
    agent = ScriptedAgent([*_reads(names), Step(response=refusal), Step(text="done")])
    async with agent_engine(tmp_path, agent, model="local-model-x") as h:
        session = (await h.start()).record.id
        assert not (await h.engine.session(session)).context_window_known
        result = await h.engine.send(session, ASK)
        assert result.text.strip() == "done"
        # Six large reads went out whole (far over the 8,192 the catalog guesses) ...
        assert all(ARTIFACT.search(t) is None for b in agent.requests[:-1] for t in _tool_texts(b))
        # ... until the refusal named the size: then one compaction, and the window is known.
        assert len(h.payloads(session, "session:compacted")) == 1
        snapshot = await h.engine.session(session)
        assert snapshot.context_window_known and snapshot.context_window == 9_100
