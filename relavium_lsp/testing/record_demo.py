"""Re-record the bundled offline cassette: ``python -m relavium_lsp.testing.record_demo``.

The demo conversation (:mod:`relavium_lsp.llm.demo_script`) is played through the real
OpenAI-compatible adapter against a loopback server that answers in the real Chat
Completions streaming format, wrapped in a :class:`RecordingProvider`. So the cassette holds
exactly the chunks the adapter produces from real wire bytes — not hand-written chunks.
Running it twice produces the same file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import httpx

from relavium_lsp.contracts.agent import OFFLINE_MODEL_ID
from relavium_lsp.contracts.content import TextPart, ToolCallPart, ToolResultPart
from relavium_lsp.llm import demo_script as demo
from relavium_lsp.llm.cassette import RecordingProvider
from relavium_lsp.llm.offline import OFFLINE_CASSETTE_NAME
from relavium_lsp.llm.openai.provider import OpenAICompatibleProvider
from relavium_lsp.llm.seam import LlmChunk, LlmMessage, LlmRequest, StopChunk, ToolSpec
from relavium_lsp.testing.loopback import LoopbackServer, ScriptedResponse
from relavium_lsp.testing.wire_scripts import ScriptedToolCall, openai_stream

_SYSTEM = "You are Relavium, a careful coding assistant working inside the user's editor."
_TOOLS = (
    ToolSpec(
        name="read_file",
        description="Read a text file of the workspace.",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    ),
    ToolSpec(
        name="edit_file",
        description="Replace exact text in a file of the workspace.",
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                        "required": ["old", "new"],
                    },
                },
            },
            "required": ["path", "edits"],
        },
    ),
)


def _words(text: str, per_piece: int = 4) -> list[str]:
    """Split text into streaming-sized pieces that concatenate back to it exactly."""
    words = text.split(" ")
    groups = [" ".join(words[i : i + per_piece]) for i in range(0, len(words), per_piece)]
    return [group + (" " if index < len(groups) - 1 else "") for index, group in enumerate(groups)]


def _scripted_responses() -> list[ScriptedResponse]:
    read_args = json.dumps({"path": demo.DEMO_SOURCE_PATH})
    edit_args = json.dumps({"path": demo.DEMO_SOURCE_PATH, "edits": [demo.DEMO_EDIT]})
    plan_args = json.dumps({"plan": demo.plan_entries(0)})
    search_args = json.dumps({"pattern": demo.SEARCH_PATTERN, "glob": "*.py"})
    done_args = json.dumps({"plan": demo.plan_entries(len(demo.PLAN_STEPS))})
    return [
        openai_stream(text=_words(demo.SELECTION_ANSWER), usage=(412, 71), model=OFFLINE_MODEL_ID),
        openai_stream(
            text=_words(demo.PLAN_PREAMBLE),
            tool_calls=[
                ScriptedToolCall(demo.PLAN_CALL_ID, "update_plan", plan_args),
                ScriptedToolCall(demo.SEARCH_CALL_ID, "search_files", search_args),
            ],
            usage=(436, 52),
            model=OFFLINE_MODEL_ID,
        ),
        openai_stream(
            tool_calls=[ScriptedToolCall(demo.READ_CALL_ID, "read_file", read_args)],
            usage=(471, 18),
            model=OFFLINE_MODEL_ID,
        ),
        openai_stream(
            text=_words(demo.CHANGE_PREAMBLE),
            tool_calls=[ScriptedToolCall(demo.EDIT_CALL_ID, "edit_file", edit_args, pieces=6)],
            usage=(512, 84),
            model=OFFLINE_MODEL_ID,
        ),
        openai_stream(
            tool_calls=[ScriptedToolCall(demo.PLAN_DONE_CALL_ID, "update_plan", done_args)],
            usage=(618, 40),
            model=OFFLINE_MODEL_ID,
        ),
        openai_stream(text=_words(demo.CHANGE_SUMMARY), usage=(672, 46), model=OFFLINE_MODEL_ID),
    ]


def _user(text: str) -> LlmMessage:
    return LlmMessage(role="user", content=(TextPart(text=text),))


def _request(messages: Sequence[LlmMessage]) -> LlmRequest:
    return LlmRequest(
        model=OFFLINE_MODEL_ID, system=_SYSTEM, messages=tuple(messages), tools=_TOOLS
    )


async def _call(provider: RecordingProvider, messages: Sequence[LlmMessage]) -> list[LlmChunk]:
    chunks = [chunk async for chunk in provider.stream(_request(messages))]
    if not isinstance(chunks[-1], StopChunk):
        raise RuntimeError(f"recording failed: {chunks[-1]!r}")
    return chunks


def _assistant(chunks: Sequence[LlmChunk]) -> LlmMessage:
    text = "".join(getattr(chunk, "text", "") for chunk in chunks if chunk.type == "text_delta")
    calls = [
        ToolCallPart(id=chunk.id, name=chunk.name, args=chunk.args)
        for chunk in chunks
        if chunk.type == "tool_call_end"
    ]
    parts: list[TextPart | ToolCallPart] = [TextPart(text=text)] if text else []
    return LlmMessage(role="assistant", content=(*parts, *calls))


def _tool_result(call_id: str, result: str) -> LlmMessage:
    return LlmMessage(role="tool", content=(ToolResultPart(tool_call_id=call_id, result=result),))


async def record(path: Path) -> int:
    """Play the demo conversation through the real adapter and write the cassette."""
    with LoopbackServer() as server:
        server.script(*_scripted_responses())
        async with httpx.AsyncClient() as client:
            inner = OpenAICompatibleProvider(
                "offline", base_url=f"{server.url}/v1", api_key=None, client=client, timeout_s=10
            )
            provider = RecordingProvider(inner, path)
            history = [_user(demo.ASK_ABOUT_SELECTION)]
            history.append(_assistant(await _call(provider, history)))
            history.append(_user(demo.ASK_FOR_CHANGE))
            history.append(_assistant(await _call(provider, history)))
            history.append(_tool_result(demo.PLAN_CALL_ID, "Plan updated."))
            history.append(_tool_result(demo.SEARCH_CALL_ID, f"{demo.DEMO_SOURCE_PATH}:1: def"))
            history.append(_assistant(await _call(provider, history)))
            history.append(_tool_result(demo.READ_CALL_ID, demo.DEMO_SOURCE))
            history.append(_assistant(await _call(provider, history)))
            history.append(_tool_result(demo.EDIT_CALL_ID, f"Edited {demo.DEMO_SOURCE_PATH}."))
            history.append(_assistant(await _call(provider, history)))
            history.append(_tool_result(demo.PLAN_DONE_CALL_ID, "Plan updated."))
            await _call(provider, history)
    return len(provider.calls)


def default_path() -> Path:
    """Where the bundled cassette lives in a source checkout."""
    return Path(
        str(resources.files("relavium_lsp.llm").joinpath("cassettes", OFFLINE_CASSETTE_NAME))
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=default_path(), help="cassette to write")
    arguments = parser.parse_args(argv)
    count = asyncio.run(record(arguments.output))
    print(f"recorded {count} calls to {arguments.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
