"""Reasoning state goes back to the provider within a turn and across turns, never out.

A real engine and store against a loopback Responses server: the reasoning item of one call
must open the next request's input before the call it led to (inside a tool round), and
again on the next turn (from the encrypted store, since the durable content cannot hold
it). It must never reach a transcript, an event or an export.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from relavium_lsp.llm.responses.provider import OpenAIResponsesProvider
from relavium_lsp.testing.cloud_scripts import ScriptedReasoning, responses_stream
from relavium_lsp.testing.loopback import LoopbackServer
from relavium_lsp.testing.wire_scripts import ScriptedToolCall
from tests.unit.engine.engine_harness import CountingProvider, engine

ENCRYPTED = "gAAAAB-opaque-reasoning-state-0123456789"


def _reasoning_items(body: dict) -> list[dict]:
    return [item for item in body["input"] if item.get("type") == "reasoning"]


async def test_reasoning_items_come_back_within_the_turn_and_on_the_next_one(tmp_path: Path):
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "notes.txt").write_text("remember me", encoding="utf-8")
    with LoopbackServer() as server:
        server.script(
            responses_stream(
                reasoning=[
                    ScriptedReasoning(
                        summary=["Read the notes."], encrypted_content=ENCRYPTED, id="rs_a"
                    )
                ],
                tool_calls=[ScriptedToolCall("call_1", "read_file", '{"path": "notes.txt"}')],
            ),
            responses_stream(text=["The notes say: remember me."]),
            responses_stream(text=["Still here."]),
        )
        async with httpx.AsyncClient() as client:
            adapter = OpenAIResponsesProvider(
                "scripted",
                base_url=f"{server.url}/v1",
                api_key="sk-test",
                client=client,
                timeout_s=5,
            )
            async with engine(tmp_path, CountingProvider(adapter), model="gpt-5") as h:
                session = await h.start()
                first = await h.engine.send(session.id, "What do my notes say?")
                assert first.stop_reason == "stop", first
                second = await h.engine.send(session.id, "Thanks")
                assert second.stop_reason == "stop", second
                transcript = await h.engine.full_transcript(session.id)
                exported = await h.engine.render_export(session.id, "jsonl")
                events = [e.model_dump_json() for e in h.events]
    bodies = [request.json() for request in server.requests]
    within = bodies[1]["input"]
    kinds = [item.get("type") for item in within]
    assert (
        kinds.index("reasoning")
        < kinds.index("function_call")
        < kinds.index("function_call_output")
    )
    assert _reasoning_items(bodies[1]) == [
        {
            "type": "reasoning",
            "id": "rs_a",
            "summary": [{"type": "summary_text", "text": "Read the notes."}],
            "encrypted_content": ENCRYPTED,
        }
    ]
    assert _reasoning_items(bodies[2]) == _reasoning_items(
        bodies[1]
    )  # across turns, from the store
    shown = repr(transcript)
    assert "Read the notes." in shown  # the summary is shown as reasoning
    assert ENCRYPTED not in shown
    assert ENCRYPTED not in str(exported)
    assert not any(ENCRYPTED in event for event in events)
