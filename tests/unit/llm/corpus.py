"""The recorded-stream corpus (``tests/fixtures/streams``): loading, framing, an oracle, checks.

The oracle reads a whole recording the simple way — every event parsed at once, no
incremental state — and says what any correct adapter must deliver: the text, the reasoning,
the tool calls by name and the final usage. The adapters are checked against it.
"""

from __future__ import annotations

import base64
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
)

_GENERATED_ID = re.compile(r"call_[0-9a-f]{24}")
CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
READ_SIZE = 7


@dataclass(frozen=True)
class Recording:
    """One manifest entry with its bytes framed as the HTTP body a server would send."""

    file: str
    adapter: str
    framing: str
    source: str
    licence: str
    expect_stop: str | None
    body: bytes
    expect_error: str | None = None
    lines: tuple[str, ...] = ()

    @property
    def payloads(self) -> list[dict[str, Any]]:
        """Every JSON event payload in order (``[DONE]`` left out)."""
        if self.adapter in CLOUD_ADAPTERS:
            return [json.loads(line) for line in self.lines]
        found: list[dict[str, Any]] = []
        for block in self.body.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(
                line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")
            )
            if data and data != "[DONE]":
                found.append(json.loads(data))
        return found


CLOUD_ADAPTERS = ("responses", "gemini", "bedrock")


def frame(adapter: str, framing: str, raw: bytes) -> bytes:
    """The HTTP body for a recording, exactly as its source's harness frames it."""
    if framing == "sse":
        return raw
    if framing == "eventstream-base64":
        return base64.b64decode(raw)
    lines = [line for line in raw.decode("utf-8").split("\n") if line.strip()]
    if adapter == "responses":
        return "".join(
            f"event: {json.loads(line)['type']}\ndata: {line}\n\n" for line in lines
        ).encode()
    if adapter == "gemini":
        return "".join(f"data: {line}\n\n" for line in lines).encode()
    if adapter == "bedrock":
        from relavium_lsp.llm.bedrock.eventstream import encode_message

        frames = []
        for line in lines:
            ((kind, payload),) = json.loads(line).items()
            headers = {
                ":event-type": kind,
                ":content-type": "application/json",
                ":message-type": "event",
            }
            frames.append(encode_message(headers, json.dumps(payload).encode()))
        return b"".join(frames)
    if adapter == "anthropic":
        events = [f"event: {json.loads(line)['type']}\ndata: {line}\n\n" for line in lines]
        return "".join(events).encode()
    return ("".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n").encode()


def recordings() -> list[Recording]:
    """Every manifest entry, in manifest order."""
    manifest = tomllib.loads((CORPUS / "MANIFEST.toml").read_text())
    found = []
    for entry in manifest["stream"]:
        raw = (CORPUS / entry["file"]).read_bytes()
        lines: tuple[str, ...] = ()
        if entry["framing"] == "jsonl":
            lines = tuple(line for line in raw.decode("utf-8").split("\n") if line.strip())
        found.append(
            Recording(
                file=entry["file"],
                adapter=entry["adapter"],
                framing=entry["framing"],
                source=entry["source"],
                licence=entry["licence"],
                expect_stop=entry.get("expect_stop"),
                expect_error=entry.get("expect_error"),
                body=frame(entry["adapter"], entry["framing"], raw),
                lines=lines,
            )
        )
    return found


@dataclass
class Outcome:
    """What a response delivered, in a form the oracle and the adapters can both state."""

    text: str = ""
    reasoning: str = ""
    tools: tuple[str, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0


def _part_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_part_text(item) for item in value)
    if isinstance(value, dict):
        return _part_text(value.get("text", value.get("thinking", "")))
    return ""


def _openai_oracle(payloads: list[dict[str, Any]]) -> Outcome:
    outcome = Outcome()
    names: dict[object, str] = {}
    for position, payload in enumerate(payloads):
        usage = payload.get("usage")
        if isinstance(usage, dict):
            details = usage.get("prompt_tokens_details") or {}
            outcome.input_tokens = usage.get("prompt_tokens", 0)
            outcome.output_tokens = usage.get("completion_tokens", 0)
            outcome.cache_read_tokens = details.get("cached_tokens", 0)
        for choice in payload.get("choices", []):
            delta = choice.get("delta") or {}
            outcome.reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
            content = delta.get("content")
            for part in content if isinstance(content, list) else [content]:
                if isinstance(part, dict) and part.get("type") == "thinking":
                    outcome.reasoning += _part_text(part)
                else:
                    outcome.text += _part_text(part)
            outcome.text += delta.get("refusal") or ""
            for number, call in enumerate(delta.get("tool_calls") or []):
                key = call.get("index", (position, number))
                name = (call.get("function") or {}).get("name")
                if name and key not in names:
                    names[key] = name
    outcome.tools = tuple(names.values())
    return outcome


def _anthropic_oracle(payloads: list[dict[str, Any]]) -> Outcome:
    outcome = Outcome()
    tools: list[str] = []
    usage: dict[str, int] = {}
    for payload in payloads:
        kind = payload.get("type")
        if kind == "message_start":
            usage.update(payload["message"].get("usage") or {})
        elif kind == "message_delta":
            usage.update(payload.get("usage") or {})
        elif kind == "content_block_start" and payload["content_block"]["type"] == "tool_use":
            tools.append(payload["content_block"]["name"])
        elif kind == "content_block_delta":
            delta = payload["delta"]
            outcome.text += delta.get("text", "") if delta["type"] == "text_delta" else ""
            outcome.reasoning += (
                delta.get("thinking", "") if delta["type"] == "thinking_delta" else ""
            )
    cached = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    outcome.input_tokens = usage.get("input_tokens", 0) + cached + written
    outcome.output_tokens = usage.get("output_tokens", 0)
    outcome.cache_read_tokens = cached
    outcome.tools = tuple(tools)
    return outcome


def _responses_oracle(payloads: list[dict[str, Any]]) -> Outcome:
    outcome = Outcome()
    tools: list[str] = []
    parts: list[tuple[str, int]] = []
    for payload in payloads:
        kind = payload.get("type")
        if kind == "response.output_text.delta":
            outcome.text += payload["delta"]
        elif kind == "response.reasoning_summary_text.delta":
            where = (payload["item_id"], payload["summary_index"])
            if parts and parts[-1] != where and parts[-1][0] == where[0]:
                outcome.reasoning += "\n\n"
            parts.append(where)
            outcome.reasoning += payload["delta"]
        elif kind == "response.output_item.added" and payload["item"]["type"] == "function_call":
            tools.append(payload["item"]["name"])
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            usage = payload["response"].get("usage") or {}
            outcome.input_tokens = usage.get("input_tokens", 0)
            outcome.output_tokens = usage.get("output_tokens", 0)
            outcome.cache_read_tokens = (usage.get("input_tokens_details") or {}).get(
                "cached_tokens", 0
            )
            break
        elif kind == "error":
            break
    outcome.tools = tuple(tools)
    return outcome


def _gemini_oracle(payloads: list[dict[str, Any]]) -> Outcome:
    outcome = Outcome()
    tools: list[str] = []
    for payload in payloads:
        for candidate in payload.get("candidates", [])[:1]:
            for part in (candidate.get("content") or {}).get("parts", []):
                if "functionCall" in part:
                    tools.append(part["functionCall"]["name"])
                elif part.get("thought"):
                    outcome.reasoning += part.get("text", "")
                else:
                    outcome.text += part.get("text", "")
        usage = payload.get("usageMetadata")
        if usage:
            outcome.input_tokens = usage.get("promptTokenCount", 0) + usage.get(
                "toolUsePromptTokenCount", 0
            )
            outcome.output_tokens = usage.get("candidatesTokenCount", 0) + usage.get(
                "thoughtsTokenCount", 0
            )
            outcome.cache_read_tokens = usage.get("cachedContentTokenCount", 0)
    outcome.tools = tuple(tools)
    return outcome


def _bedrock_oracle(payloads: list[dict[str, Any]]) -> Outcome:
    outcome = Outcome()
    tools: list[str] = []
    for payload in payloads:
        ((kind, event),) = payload.items()
        if kind == "contentBlockDelta":
            delta = event["delta"]
            outcome.text += delta.get("text", "")
            outcome.reasoning += (delta.get("reasoningContent") or {}).get("text", "")
        elif kind == "contentBlockStart" and "toolUse" in event.get("start", {}):
            tools.append(event["start"]["toolUse"]["name"])
        elif kind == "metadata":
            usage = event.get("usage") or {}
            cached = usage.get("cacheReadInputTokens", 0)
            outcome.input_tokens = (
                usage.get("inputTokens", 0) + cached + usage.get("cacheWriteInputTokens", 0)
            )
            outcome.output_tokens = usage.get("outputTokens", 0)
            outcome.cache_read_tokens = cached
    outcome.tools = tuple(tools)
    return outcome


def oracle(recording: Recording) -> Outcome:
    """What the recording delivers, read the simple way."""
    oracles = {
        "anthropic": _anthropic_oracle,
        "responses": _responses_oracle,
        "gemini": _gemini_oracle,
        "bedrock": _bedrock_oracle,
    }
    return oracles.get(recording.adapter, _openai_oracle)(recording.payloads)


def outcome_of(chunks: Sequence[LlmChunk]) -> Outcome:
    """What an adapter delivered."""
    final = chunks[-1]
    assert isinstance(final, StopChunk | ErrorChunk)
    return Outcome(
        text="".join(c.text for c in chunks if isinstance(c, TextDelta)),
        reasoning="".join(c.text for c in chunks if isinstance(c, ReasoningDelta)),
        tools=tuple(c.name for c in chunks if isinstance(c, ToolCallEnd)),
        input_tokens=final.usage.input_tokens,
        output_tokens=final.usage.output_tokens,
        cache_read_tokens=final.usage.cache_read_tokens,
    )


def assert_stream_invariants(chunks: Sequence[LlmChunk]) -> None:
    """The seam's promises: one final chunk, last; every started call ends; honest retries."""
    finals = [c for c in chunks if isinstance(c, StopChunk | ErrorChunk)]
    assert len(finals) == 1, finals
    assert chunks[-1] is finals[0]
    started = [c.index for c in chunks if isinstance(c, ToolCallStart)]
    ended = [c.index for c in chunks if isinstance(c, ToolCallEnd)]
    assert set(started) <= set(ended), (started, ended)
    assert len(ended) == len(set(ended)), ended
    final = finals[0]
    if isinstance(final, ErrorChunk) and final.error.retryable:
        delivered = [c for c in chunks[:-1] if not isinstance(c, StopChunk | ErrorChunk)]
        assert not delivered, delivered


def without_generated_ids(chunks: Sequence[LlmChunk]) -> list[dict[str, Any]]:
    """Chunks as data, with call ids the adapter had to invent made comparable."""
    dumped = []
    for chunk in chunks:
        data = chunk.model_dump()
        if str(data.get("id", "")).startswith("call_") and len(str(data["id"])) == 29:
            data["id"] = "<generated>"
        if data.get("signature"):  # a Gemini signature names the (generated) call it belongs to
            data["signature"] = _GENERATED_ID.sub("<generated>", data["signature"])
        dumped.append(data)
    return dumped
