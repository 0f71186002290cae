"""Builders for the cloud platforms' streams, to script a :class:`LoopbackServer` with.

Each emits what the real API sends, in its real framing: OpenAI Responses SSE events
(``response.created`` … ``response.completed``), Gemini ``streamGenerateContent`` chunks
(SSE or one JSON array), Bedrock ConverseStream events and Claude-on-Bedrock ``chunk``
events in binary ``application/vnd.amazon.eventstream`` messages, and Azure's Chat
Completions extras (the opening chunk with ``prompt_filter_results``, per-chunk
``content_filter_results``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relavium_lsp.llm.bedrock.eventstream import encode_message
from relavium_lsp.testing.loopback import Ending, ScriptedResponse
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, ScriptedToolCall, _split, sse

EVENTSTREAM_HEADERS = {"content-type": "application/vnd.amazon.eventstream"}
JSON_HEADERS = {"content-type": "application/json"}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- OpenAI Responses ----------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedReasoning:
    """A Responses reasoning item: summary parts streamed, then the encrypted content."""

    summary: Sequence[str]
    encrypted_content: str = "gAAAAB-encrypted"
    id: str = "rs_1"


def responses_events(
    *,
    reasoning: Sequence[ScriptedReasoning] = (),
    text: Sequence[str] = (),
    tool_calls: Sequence[ScriptedToolCall] = (),
    usage: tuple[int, int] = (20, 9),
    cached: int = 0,
    reasoning_tokens: int = 0,
    status: str = "completed",
    model: str = "gpt-5",
) -> list[bytes]:
    """The SSE events of one streamed response (``status``: completed, incomplete, failed)."""
    events: list[bytes] = []
    response: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    number = 0

    def emit(kind: str, **fields: Any) -> None:
        nonlocal number
        events.append(sse(_json({"type": kind, "sequence_number": number, **fields}), event=kind))
        number += 1

    emit("response.created", response=response)
    emit("response.in_progress", response=response)
    output = 0
    for item in reasoning:
        emit(
            "response.output_item.added",
            output_index=output,
            item={"id": item.id, "type": "reasoning", "summary": []},
        )
        for index, part in enumerate(item.summary):
            emit(
                "response.reasoning_summary_part.added",
                item_id=item.id,
                output_index=output,
                summary_index=index,
                part={"type": "summary_text", "text": ""},
            )
            for piece in _split(part, 3):
                emit(
                    "response.reasoning_summary_text.delta",
                    item_id=item.id,
                    output_index=output,
                    summary_index=index,
                    delta=piece,
                )
            emit(
                "response.reasoning_summary_text.done",
                item_id=item.id,
                output_index=output,
                summary_index=index,
                text=part,
            )
        done = {
            "id": item.id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": part} for part in item.summary],
            "encrypted_content": item.encrypted_content,
        }
        emit("response.output_item.done", output_index=output, item=done)
        output += 1
    if text:
        message = {
            "id": "msg_1",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        emit("response.output_item.added", output_index=output, item=message)
        for piece in text:
            emit(
                "response.output_text.delta",
                item_id="msg_1",
                output_index=output,
                content_index=0,
                delta=piece,
            )
        emit(
            "response.output_text.done",
            item_id="msg_1",
            output_index=output,
            content_index=0,
            text="".join(text),
        )
        emit(
            "response.output_item.done",
            output_index=output,
            item={**message, "status": "completed"},
        )
        output += 1
    for call in tool_calls:
        item_id = f"fc_{call.id}"
        call_item: dict[str, Any] = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call.id,
            "name": call.name,
        }
        emit("response.output_item.added", output_index=output, item=call_item)
        for piece in _split(call.arguments, call.pieces):
            emit(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=output,
                delta=piece,
            )
        emit(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=output,
            arguments=call.arguments,
        )
        emit(
            "response.output_item.done",
            output_index=output,
            item={**call_item, "status": "completed", "arguments": call.arguments},
        )
        output += 1
    final: dict[str, Any] = {
        **response,
        "status": status,
        "usage": {
            "input_tokens": usage[0],
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage[1],
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": usage[0] + usage[1],
        },
    }
    if status == "incomplete":
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    if status == "failed":
        final["error"] = {"code": "server_error", "message": "The model failed."}
    emit(f"response.{status}", response=final)
    return events


def responses_stream(*, ending: Ending = "complete", **options: Any) -> ScriptedResponse:
    """A 200 streamed response (options as for :func:`responses_events`)."""
    return ScriptedResponse(headers=SSE_HEADERS, body=responses_events(**options), ending=ending)


# -- Gemini --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedGeminiCall:
    """A Gemini function call (whole, as Gemini sends it), with an optional thought signature."""

    name: str
    args: Mapping[str, Any]
    signature: str | None = None


def gemini_chunks(
    *,
    thoughts: Sequence[str] = (),
    text: Sequence[str] = (),
    calls: Sequence[ScriptedGeminiCall] = (),
    text_signature: str | None = None,
    finish: str | None = "STOP",
    usage: tuple[int, int] = (30, 12),
    thoughts_tokens: int = 0,
    cached: int = 0,
    safety: Sequence[Mapping[str, Any]] = (),
    finish_message: str | None = None,
) -> list[dict[str, Any]]:
    """The response chunks of one ``streamGenerateContent`` answer, in order."""
    chunks: list[dict[str, Any]] = []
    metadata: dict[str, Any] = {
        "promptTokenCount": usage[0],
        "candidatesTokenCount": usage[1],
        "totalTokenCount": usage[0] + usage[1] + thoughts_tokens,
    }
    if thoughts_tokens:
        metadata["thoughtsTokenCount"] = thoughts_tokens
    if cached:
        metadata["cachedContentTokenCount"] = cached

    def chunk(parts: list[dict[str, Any]], **candidate: Any) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0, **candidate}],
            "usageMetadata": metadata,
            "modelVersion": "gemini-2.5-pro",
            "responseId": "gemini-loopback",
        }

    chunks.extend(chunk([{"text": piece, "thought": True}]) for piece in thoughts)
    chunks.extend(chunk([{"text": piece}]) for piece in text)
    for call in calls:
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": dict(call.args)}}
        if call.signature:
            part["thoughtSignature"] = call.signature
        chunks.append(chunk([part]))
    closing: dict[str, Any] = {}
    if finish is not None:
        closing["finishReason"] = finish
    if safety:
        closing["safetyRatings"] = [dict(rating) for rating in safety]
    if finish_message:
        closing["finishMessage"] = finish_message
    last: list[dict[str, Any]] = [{"text": ""}]
    if text_signature:
        last[0]["thoughtSignature"] = text_signature
    chunks.append(chunk(last, **closing))
    return chunks


def gemini_stream(
    *, framing: str = "sse", ending: Ending = "complete", **options: Any
) -> ScriptedResponse:
    """A 200 answer in SSE (``alt=sse``) or as the JSON array Gemini sends without it."""
    chunks = gemini_chunks(**options)
    if framing == "sse":
        return ScriptedResponse(
            headers=SSE_HEADERS, body=[sse(_json(c)) for c in chunks], ending=ending
        )
    pieces = [("[" if index == 0 else ",\r\n") + _json(c) for index, c in enumerate(chunks)]
    body = [piece.encode() for piece in pieces] + [b"]"]
    return ScriptedResponse(headers=JSON_HEADERS, body=body, ending=ending)


def google_error(
    status: int, code: str, message: str, *, details: Sequence[Mapping[str, Any]] = ()
) -> ScriptedResponse:
    """A Google API error body (``error.code``, ``status``, ``details``)."""
    error = {
        "error": {
            "code": status,
            "message": message,
            "status": code,
            "details": [dict(d) for d in details],
        }
    }
    return ScriptedResponse(status=status, headers=JSON_HEADERS, body=_json(error).encode())


# -- Bedrock -------------------------------------------------------------------------------


def bedrock_event(event_type: str, payload: Mapping[str, Any]) -> bytes:
    """One ``event`` message of an event stream."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, _json(dict(payload)).encode())


def bedrock_exception(exception_type: str, message: str) -> bytes:
    """One ``exception`` message (``throttlingException``, ``validationException``, …)."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, _json({"message": message}).encode())


@dataclass(frozen=True)
class ScriptedConverseReasoning:
    """A Converse reasoning block: text pieces, then a signature (or redacted content)."""

    pieces: Sequence[str] = ()
    signature: str | None = "sig-converse"
    redacted: str | None = None


def converse_events(
    *,
    reasoning: Sequence[ScriptedConverseReasoning] = (),
    text: Sequence[str] = (),
    tool_calls: Sequence[ScriptedToolCall] = (),
    stop_reason: str | None = None,
    usage: tuple[int, int] = (40, 15),
    cache: tuple[int, int] = (0, 0),
    metadata: bool = True,
) -> list[bytes]:
    """The event-stream messages of one ConverseStream answer."""
    events = [bedrock_event("messageStart", {"role": "assistant"})]
    index = 0
    for block in reasoning:
        for piece in block.pieces:
            events.append(
                bedrock_event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}},
                )
            )
        if block.signature:
            events.append(
                bedrock_event(
                    "contentBlockDelta",
                    {
                        "contentBlockIndex": index,
                        "delta": {"reasoningContent": {"signature": block.signature}},
                    },
                )
            )
        if block.redacted:
            events.append(
                bedrock_event(
                    "contentBlockDelta",
                    {
                        "contentBlockIndex": index,
                        "delta": {"reasoningContent": {"redactedContent": block.redacted}},
                    },
                )
            )
        events.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    if text:
        for piece in text:
            events.append(
                bedrock_event(
                    "contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}}
                )
            )
        events.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    for call in tool_calls:
        start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
        events.append(
            bedrock_event("contentBlockStart", {"contentBlockIndex": index, "start": start})
        )
        for piece in _split(call.arguments, call.pieces):
            events.append(
                bedrock_event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}},
                )
            )
        events.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    reason = stop_reason or ("tool_use" if tool_calls else "end_turn")
    events.append(bedrock_event("messageStop", {"stopReason": reason}))
    if metadata:
        counts = {
            "inputTokens": usage[0],
            "outputTokens": usage[1],
            "totalTokens": sum(usage) + sum(cache),
            "cacheReadInputTokens": cache[0],
            "cacheWriteInputTokens": cache[1],
        }
        events.append(bedrock_event("metadata", {"usage": counts, "metrics": {"latencyMs": 321}}))
    return events


def invoke_events(messages_events: Sequence[bytes]) -> list[bytes]:
    """Claude's Messages SSE events wrapped as Bedrock ``chunk`` events (base64 ``bytes``)."""
    wrapped = []
    for event in messages_events:
        data = b"".join(line[6:] for line in event.split(b"\n") if line.startswith(b"data: "))
        payload = {"bytes": base64.b64encode(data).decode(), "p": "abcdefghij"}
        wrapped.append(bedrock_event("chunk", payload))
    return wrapped


def eventstream_response(
    events: Sequence[bytes], *, ending: Ending = "complete"
) -> ScriptedResponse:
    """A 200 event-stream answer, one message per chunked piece."""
    return ScriptedResponse(headers=EVENTSTREAM_HEADERS, body=list(events), ending=ending)


def bedrock_error(status: int, error_type: str, message: str) -> ScriptedResponse:
    """A Bedrock HTTP error (``x-amzn-ErrorType`` and a ``message`` body)."""
    headers = {
        **JSON_HEADERS,
        "x-amzn-errortype": f"{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/",
    }
    return ScriptedResponse(
        status=status, headers=headers, body=_json({"message": message}).encode()
    )


# -- Azure OpenAI --------------------------------------------------------------------------

_SAFE = {"filtered": False, "severity": "safe"}


def azure_chat_events(
    *,
    text: Sequence[str] = (),
    filtered: Mapping[str, str] | None = None,
    usage: tuple[int, int] = (18, 6),
) -> list[bytes]:
    """Azure's Chat Completions stream: the prompt-filter chunk, text, then a finish."""
    results = {name: dict(_SAFE) for name in ("hate", "self_harm", "sexual", "violence")}
    opening = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": results}],
    }
    events = [sse(_json(opening))]
    base = {
        "id": "chatcmpl-azure",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-2024-11-20",
        "system_fingerprint": "fp_azure",
    }
    for piece in text:
        choice = {
            "content_filter_results": results,
            "delta": {"content": piece},
            "finish_reason": None,
            "index": 0,
        }
        events.append(sse(_json({**base, "choices": [choice]})))
    verdicts = dict(results)
    for name, severity in (filtered or {}).items():
        verdicts[name] = {"filtered": True, "severity": severity}
    finish = "content_filter" if filtered else "stop"
    events.append(
        sse(
            _json(
                {
                    **base,
                    "choices": [
                        {
                            "content_filter_results": verdicts,
                            "delta": {},
                            "finish_reason": finish,
                            "index": 0,
                        }
                    ],
                }
            )
        )
    )
    counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    events.append(sse(_json({**base, "choices": [], "usage": counts})))
    events.append(b"data: [DONE]\n\n")
    return events


def azure_prompt_filtered(filters: Mapping[str, Mapping[str, Any]]) -> ScriptedResponse:
    """Azure's HTTP 400 for a prompt its content filter stopped."""
    error = {
        "error": {
            "message": (
                "The response was filtered due to the prompt triggering Azure OpenAI's "
                "content management policy."
            ),
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {name: dict(v) for name, v in filters.items()},
            },
        }
    }
    return ScriptedResponse(status=400, headers=JSON_HEADERS, body=_json(error).encode())
