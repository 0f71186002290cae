"""``streamGenerateContent`` responses → seam chunks, as SSE (``alt=sse``) or a JSON array.

Each response chunk holds ``candidates[0].content.parts``:

- ``{"text": …}`` → text; with ``"thought": true`` → reasoning;
- ``{"functionCall": {"name", "args", "id"?}}`` → one whole tool call (start and end);
- a ``thoughtSignature`` on any part → an empty reasoning delta whose signature (tagged as
  Gemini's) remembers the part it belongs to — ``call:<id>`` for a function call, ``text``
  for anything else — so :mod:`relavium_lsp.llm.gemini.wire` can put it back there.

``finishReason`` ends the answer: ``STOP`` (``tool_use`` when calls were made),
``MAX_TOKENS`` → ``length``; ``SAFETY``, ``RECITATION``, ``BLOCKLIST``,
``PROHIBITED_CONTENT``, ``SPII`` and friends → a ``content_filter`` error naming the
reason and the blocked categories; ``MALFORMED_FUNCTION_CALL`` → a ``bad_request`` error
saying the model wrote a call it could not parse. A prompt blocked outright
(``promptFeedback.blockReason``) is a ``content_filter`` error too. Usage:
``promptTokenCount`` is the whole prompt, ``cachedContentTokenCount`` the part read from
the (implicit or explicit) cache, and the output is ``candidatesTokenCount`` plus
``thoughtsTokenCount`` (thoughts are billed as output). The stop chunk is sent when the
body ends, so usage that arrives with or after the finish reason is counted.
"""

from __future__ import annotations

from typing import Any

import msgspec

from relavium_lsp.contracts.events import TokenUsage
from relavium_lsp.llm.gemini.wire import TEXT_ANCHOR, signature_payload
from relavium_lsp.llm.http.http_call import in_stream_error
from relavium_lsp.llm.http.json_events import INCOMPLETE, JsonEventDecoder
from relavium_lsp.llm.http.redaction import user_safe_detail
from relavium_lsp.llm.http.sse import EventData
from relavium_lsp.llm.http.wire_common import checked_tool_call_id, checked_tool_name
from relavium_lsp.llm.reasoning_state import GEMINI, tagged
from relavium_lsp.llm.seam import (
    LlmChunk,
    LlmStopReason,
    ReasoningDelta,
    StopChunk,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
)

_BLOCKED_REASONS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
_MALFORMED_CALL = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"})


# The typed fast path: most chunks hold one candidate with one text part and nothing else.
# They are decoded into these (usage kept as raw bytes, read only when needed) instead of
# dicts, the shape checked by the decoder itself: a chunk that does not fit — several
# candidates or parts, a finish reason, an error, no text — is refused and goes the general
# way, and so does a part that also holds a thought, a signature or a call.
class _Part(msgspec.Struct, gc=False):
    text: str
    thought: Any = None
    thoughtSignature: Any = None
    functionCall: Any = None


class _Content(msgspec.Struct, gc=False):
    parts: tuple[_Part]  # exactly one


class _Candidate(msgspec.Struct, gc=False):
    content: _Content
    finishReason: None = None


class _Chunk(msgspec.Struct, gc=False):
    candidates: tuple[_Candidate]  # exactly one
    usageMetadata: msgspec.Raw = msgspec.Raw()
    promptFeedback: None = None
    error: None = None


_decode_chunk = msgspec.json.Decoder(_Chunk).decode


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def usage_from(raw: Any) -> TokenUsage | None:
    """``usageMetadata`` as seam usage (thoughts are output; cached tokens are cache reads)."""
    if not isinstance(raw, dict):
        return None
    cached = _count(raw.get("cachedContentTokenCount"))
    prompt = _count(raw.get("promptTokenCount")) + _count(raw.get("toolUsePromptTokenCount"))
    return TokenUsage(
        input_tokens=max(prompt, cached),
        output_tokens=_count(raw.get("candidatesTokenCount"))
        + _count(raw.get("thoughtsTokenCount")),
        cache_read_tokens=cached,
    )


def _blocked_categories(ratings: Any) -> list[str]:
    if not isinstance(ratings, list):
        return []
    return sorted(
        str(rating.get("category", "")).removeprefix("HARM_CATEGORY_").lower()
        for rating in ratings
        if isinstance(rating, dict) and rating.get("blocked") is True
    )


class GeminiDecoder(JsonEventDecoder):
    """Gemini response chunks → seam chunks (see the module docstring).

    ``framing`` is ``"sse"`` (``alt=sse``) or ``"json"``: the default framing, one JSON
    array whose elements arrive as the model writes them.
    """

    def __init__(
        self, provider_id: str, secret: str | None, *, framing: str = "sse", **options: Any
    ) -> None:
        super().__init__(provider_id, secret, **options)
        self._framing = framing
        self._array = JsonArrayElements()
        self._usage_raw: msgspec.Raw | dict[str, Any] | None = None
        self._finish: str | None = None
        self._made_calls = False
        self._next_index = 0

    @property
    def usage(self) -> TokenUsage:
        """Tokens reported so far (each chunk repeats the running totals)."""
        raw = self._usage_raw
        if isinstance(raw, msgspec.Raw):
            try:
                raw = self._loads(bytes(raw))
            except ValueError:
                raw = None
        return usage_from(raw) or TokenUsage()

    def _text(self, data: EventData) -> str | None:
        """The text of a chunk holding one text part and nothing else, its usage kept."""
        try:
            chunk = _decode_chunk(data)
        except ValueError:  # another shape, or not JSON: the general path reads it
            return None
        part = chunk.candidates[0].content.parts[0]
        if (
            part.thought is not None
            or part.thoughtSignature is not None
            or part.functionCall is not None
        ):
            return None
        if chunk.usageMetadata:
            self._usage_raw = chunk.usageMetadata
        return part.text

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete."""
        if self._framing == "sse" or self.ended:
            return super().feed(data)
        chunks = self._events(self._array.feed(data))
        if self._array.broken and not self.ended:
            self.ended = True
            chunks.append(self.failure("unknown", "the provider sent a malformed stream event"))
        return chunks

    def finish(self) -> list[LlmChunk]:
        """End of body: the stop chunk when a finish reason arrived, else an error."""
        if self._framing == "sse" or self.ended:
            return super().finish()
        self.ended = True
        return self._at_end()

    def _at_end(self) -> list[LlmChunk]:
        if self._finish is None:
            return [self.failure("transport", INCOMPLETE)]
        stop: LlmStopReason = "length" if self._finish == "MAX_TOKENS" else "stop"
        if stop == "stop" and self._made_calls:
            stop = "tool_use"
        return [StopChunk(stop_reason=stop, usage=self.usage)]

    def _event(self, payload: dict[str, Any]) -> list[LlmChunk]:
        if isinstance(payload.get("error"), dict):
            return [in_stream_error(self._provider_id, payload, self._secret, self.usage)]
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage_raw = usage
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = str(feedback["blockReason"])
            categories = _blocked_categories(feedback.get("safetyRatings"))
            return [self._blocked("the prompt", reason, categories)]
        candidates = payload.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(candidate, dict):
            return []
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        chunks = [
            chunk for part in parts or [] if isinstance(part, dict) for chunk in self._part(part)
        ]
        finish = candidate.get("finishReason")
        if isinstance(finish, str) and finish and finish != "FINISH_REASON_UNSPECIFIED":
            chunks.extend(self._finished(finish, candidate))
        return chunks

    def _part(self, part: dict[str, Any]) -> list[LlmChunk]:
        chunks: list[LlmChunk] = []
        anchor = TEXT_ANCHOR
        call = part.get("functionCall")
        text = part.get("text")
        if isinstance(call, dict):
            raw_name, raw_id, args = call.get("name"), call.get("id"), call.get("args")
            name, name_error = checked_tool_name(raw_name if isinstance(raw_name, str) else "")
            call_id = checked_tool_call_id(raw_id if isinstance(raw_id, str) else "")
            index = self._next_index
            self._next_index += 1
            self._made_calls = True
            anchor = f"call:{call_id}"
            error = (
                None
                if args is None or isinstance(args, dict)
                else "arguments must be a JSON object"
            )
            chunks.append(ToolCallStart(index=index, id=call_id, name=name))
            chunks.append(
                ToolCallEnd(
                    index=index,
                    id=call_id,
                    name=name,
                    args=args if isinstance(args, dict) else {},
                    args_error=name_error or error,
                )
            )
        elif isinstance(text, str) and text:
            chunks.append(
                ReasoningDelta(text=text) if part.get("thought") is True else TextDelta(text=text)
            )
        signature = part.get("thoughtSignature")
        if isinstance(signature, str) and signature:
            kept = tagged(GEMINI, signature_payload(anchor, signature))
            chunks.append(ReasoningDelta(text="", signature=kept))
        return chunks

    def _finished(self, finish: str, candidate: dict[str, Any]) -> list[LlmChunk]:
        self._finish = finish
        if finish in _BLOCKED_REASONS:
            categories = _blocked_categories(candidate.get("safetyRatings"))
            return [self._blocked("the answer", finish, categories)]
        if finish in _MALFORMED_CALL:
            said = candidate.get("finishMessage")
            detail = (
                user_safe_detail(said, [self._secret], limit=200) if isinstance(said, str) else ""
            )
            message = (
                f"{self._provider_id}: the model wrote a function call that could not be "
                f"parsed ({finish})"
            )
            return [self.failure("bad_request", f"{message}: {detail}" if detail else message)]
        return []

    def _blocked(self, what: str, reason: str, categories: list[str]) -> LlmChunk:
        named = f" ({', '.join(categories)})" if categories else ""
        return self.failure(
            "content_filter",
            f"{self._provider_id}: Gemini blocked {what}: {reason.lower()}{named}",
        )


class JsonArrayElements:
    """Cuts the elements of a streamed JSON array (``[{…}, {…}]``) out of its bytes.

    Elements are found by bracket depth outside strings, so nothing is parsed twice; each
    complete element's bytes are handed on as they close. ``broken`` is set when the bytes
    cannot be a JSON array of objects.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._scanned = 0
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._opened = False
        self.broken = False

    def feed(self, data: bytes) -> list[bytes]:
        """Every element these bytes complete."""
        if self.broken:
            return []
        self._pending += data
        found: list[bytes] = []
        buffer = self._pending
        start = 0
        index = self._scanned
        while index < len(buffer):
            byte = buffer[index]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif byte == 0x5C:  # backslash
                    self._escaped = True
                elif byte == 0x22:  # quote
                    self._in_string = False
            elif byte == 0x22:
                self._in_string = True
            elif byte in (0x7B, 0x5B):  # { [
                if not self._opened:
                    if byte != 0x5B:
                        self.broken = True
                        return found
                    self._opened = True
                    start = index + 1
                else:
                    if self._depth == 0:
                        start = index
                    self._depth += 1
            elif byte in (0x7D, 0x5D):  # } ]
                if self._depth == 0:
                    start = index + 1  # the array's own closing bracket
                else:
                    self._depth -= 1
                    if self._depth == 0:
                        found.append(bytes(buffer[start : index + 1]))
                        start = index + 1
            elif self._depth == 0 and byte not in b" \t\r\n,":
                self.broken = True
                return found
            index += 1
        if self._depth == 0 and not self._in_string:
            del buffer[:index]
            self._scanned = 0
        else:
            del buffer[:start]
            self._scanned = index - start
        return found
