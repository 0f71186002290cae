"""Record any provider's chunk streams to a JSON file and replay them offline.

File format (``relavium-cassette/1``), written with sorted keys so re-recording the same
conversation gives the same bytes::

    {"format": "relavium-cassette/1",
     "calls": [{"request": {"key": …, "model": …, "prompt": …, "tools_called": […],
                            "tools_offered": […], "message_count": …},
                "chunks": [{"type": "text_delta", "text": "…"}, …, {"type": "stop", …}]}]}

A request is summarised, never stored whole: no system prompt, no tool results, and nothing
from the provider (no key, no header) — the provider object is the only thing that knows
those. Replay matching (``match="key"``, the default) uses the *conversation position*: the
latest user prompt (whitespace- and case-normalised) plus the names of the tools called
since it. That survives a different workspace path in the system prompt or different file
contents in a tool result, so a recorded demo replays on any machine. The first recorded
call with the same prompt wins; failing that, one whose prompt is contained in the request's
(an engine may append context to the user's words). Repeats of one position are served in
recorded order, then the last one again. ``match="sequence"`` instead replays calls strictly
in order, whatever is asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from relavium_lsp.atomic_write import atomic_write_text
from relavium_lsp.contracts.content import TextPart, ToolCallPart
from relavium_lsp.errors import ProviderSetupError
from relavium_lsp.llm.catalog import context_window_for
from relavium_lsp.llm.seam import (
    ErrorChunk,
    LlmChunk,
    LlmError,
    LlmRequest,
    Provider,
    ProviderCapabilities,
    StopChunk,
)
from relavium_lsp.llm.streams import close_stream

CASSETTE_FORMAT = "relavium-cassette/1"
_CHUNKS: TypeAdapter[list[LlmChunk]] = TypeAdapter(list[LlmChunk])

Unmatched = Literal["error"] | Callable[[LlmRequest], Sequence[LlmChunk]]


class CassetteError(ProviderSetupError):
    """A cassette file cannot be used; the message says where and why."""


def _normalize(text: str) -> str:
    return " ".join(text.lower().split())


def summarize_request(request: LlmRequest) -> dict[str, Any]:
    """The part of a request a cassette keeps, including its matching ``key``."""
    prompt = ""
    latest_user = -1
    for position, message in enumerate(request.messages):
        if message.role == "user":
            texts = [part.text for part in message.content if isinstance(part, TextPart)]
            if texts:
                prompt = "\n".join(texts)
                latest_user = position
    tools_called = [
        part.name
        for message in request.messages[latest_user + 1 :]
        if message.role == "assistant"
        for part in message.content
        if isinstance(part, ToolCallPart)
    ]
    fingerprint = json.dumps([_normalize(prompt), tools_called], ensure_ascii=False)
    return {
        "key": hashlib.sha256(fingerprint.encode()).hexdigest()[:16],
        "model": request.model,
        "prompt": prompt,
        "tools_called": tools_called,
        "tools_offered": sorted(spec.name for spec in request.tools),
        "message_count": len(request.messages),
    }


@dataclass(frozen=True)
class RecordedCall:
    """One recorded model call: its request summary and every chunk it streamed."""

    request: dict[str, Any]
    chunks: tuple[LlmChunk, ...]

    def to_json(self) -> dict[str, Any]:
        """The call as it is stored in a cassette file."""
        return {
            "request": self.request,
            "chunks": [chunk.model_dump(mode="json") for chunk in self.chunks],
        }


def dump_cassette(calls: Sequence[RecordedCall]) -> str:
    """A cassette document, deterministic for the same calls."""
    document = {"format": CASSETTE_FORMAT, "calls": [call.to_json() for call in calls]}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _validation_reason(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(item) for item in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _load_call(position: int, raw: Any) -> RecordedCall:
    where = f"calls[{position}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    request = raw.get("request")
    if not isinstance(request, dict):
        raise ValueError(f"{where}.request must be an object")
    if not isinstance(request.get("prompt"), str) or not isinstance(
        request.get("tools_called"), list
    ):
        raise ValueError(f"{where}.request needs a string 'prompt' and a list 'tools_called'")
    try:
        chunks = tuple(_CHUNKS.validate_python(raw.get("chunks")))
    except ValidationError as exc:
        raise ValueError(f"{where}.chunks.{_validation_reason(exc)}") from None
    finals = [i for i, chunk in enumerate(chunks) if isinstance(chunk, StopChunk | ErrorChunk)]
    if finals != [len(chunks) - 1]:
        raise ValueError(f"{where}.chunks must end with exactly one 'stop' or 'error' chunk")
    return RecordedCall(request=request, chunks=chunks)


def load_cassette(
    source: Path | Mapping[str, Any], *, name: str | None = None
) -> list[RecordedCall]:
    """Read and validate a cassette; :class:`CassetteError` explains what is wrong."""
    label = name or (source.name if isinstance(source, Path) else "cassette")
    try:
        if isinstance(source, Path):
            document: Any = json.loads(source.read_text(encoding="utf-8"))
        else:
            document = source
        if not isinstance(document, dict):
            raise ValueError("the document must be a JSON object")
        if document.get("format") != CASSETTE_FORMAT:
            raise ValueError(
                f"unsupported format {str(document.get('format'))[:60]!r} "
                f"(expected {CASSETTE_FORMAT!r})"
            )
        calls = document.get("calls")
        if not isinstance(calls, list):
            raise ValueError("'calls' must be a list")
        return [_load_call(position, raw) for position, raw in enumerate(calls)]
    except OSError as exc:
        raise CassetteError(f"cassette {label}: cannot be read ({exc.strerror})") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError too
        raise CassetteError(f"cassette {label} is malformed: {exc}") from None


class RecordingProvider:
    """Wraps a provider and appends every completed call to a cassette file.

    The file is rewritten atomically after each call, so an interrupted recording leaves
    a valid cassette of the calls that completed. Calls that were cancelled midway are not
    recorded (they could not be replayed faithfully).
    """

    def __init__(self, inner: Provider, path: Path, *, append: bool = False) -> None:
        self.provider_id = inner.provider_id
        self.capabilities: ProviderCapabilities = inner.capabilities
        self._inner = inner
        self._path = path
        self.calls: list[RecordedCall] = load_cassette(path) if append and path.exists() else []

    def context_window(self, model: str) -> int:
        """The wrapped provider's answer."""
        return self._inner.context_window(model)

    async def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Pass the inner stream through, recording it once it is complete."""
        summary = summarize_request(request)
        collected: list[LlmChunk] = []
        chunks = self._inner.stream(request)
        try:
            async for chunk in chunks:
                collected.append(chunk)
                if isinstance(chunk, StopChunk | ErrorChunk):
                    self.calls.append(RecordedCall(request=summary, chunks=tuple(collected)))
                    document = dump_cassette(self.calls)
                    await asyncio.to_thread(atomic_write_text, self._path, document)
                yield chunk
        finally:
            await close_stream(chunks)


def _unmatched_error(provider_id: str) -> Callable[[LlmRequest], Sequence[LlmChunk]]:
    def answer(request: LlmRequest) -> Sequence[LlmChunk]:
        message = f"{provider_id}: the cassette has no recorded call for this request"
        return [ErrorChunk(error=LlmError(kind="bad_request", message=message))]

    return answer


class CassetteProvider:
    """Replays recorded calls deterministically; never touches the network."""

    def __init__(
        self,
        provider_id: str,
        source: Path | Mapping[str, Any],
        *,
        on_unmatched: Unmatched = "error",
        match: Literal["key", "sequence"] = "key",
        context_window: int | None = None,
        pace_s: float = 0.0,
    ) -> None:
        self.provider_id = provider_id
        # Seconds between replayed chunks; 0 replays as fast as the consumer reads.
        self._pace_s = pace_s
        self.capabilities = ProviderCapabilities(
            streaming=True, tools=True, reasoning=True, needs_key=False, key_env_var=None
        )
        self.calls = load_cassette(source)
        self._match = match
        self._unmatched = _unmatched_error(provider_id) if on_unmatched == "error" else on_unmatched
        self._context_window = context_window
        self._next_in_sequence = 0
        self._uses: dict[tuple[int, ...], int] = {}

    def context_window(self, model: str) -> int:
        """The configured window, else the catalog's."""
        return self._context_window or context_window_for(model)

    def _candidates(self, summary: dict[str, Any]) -> tuple[int, ...]:
        prompt = _normalize(summary["prompt"])
        same_position = [
            position
            for position, call in enumerate(self.calls)
            if call.request["tools_called"] == summary["tools_called"]
        ]
        exact = [p for p in same_position if _normalize(self.calls[p].request["prompt"]) == prompt]
        if exact:
            return tuple(exact)
        for position in same_position:
            recorded = _normalize(self.calls[position].request["prompt"])
            if recorded and recorded in prompt:
                return tuple(
                    p
                    for p in same_position
                    if _normalize(self.calls[p].request["prompt"]) == recorded
                )
        return ()

    def _select(self, request: LlmRequest) -> RecordedCall | None:
        if self._match == "sequence":
            if self._next_in_sequence >= len(self.calls):
                return None
            self._next_in_sequence += 1
            return self.calls[self._next_in_sequence - 1]
        candidates = self._candidates(summarize_request(request))
        if not candidates:
            return None
        used = self._uses.get(candidates, 0)
        self._uses[candidates] = used + 1
        return self.calls[candidates[min(used, len(candidates) - 1)]]

    async def stream(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Replay the matching call's chunks (or the unmatched answer)."""
        call = self._select(request)
        chunks = call.chunks if call is not None else tuple(self._unmatched(request))
        for chunk in chunks:
            # Hand control back between chunks, as a network stream would, so cancelling
            # a replay lands between chunks exactly like cancelling a live call.
            await asyncio.sleep(self._pace_s)
            yield chunk
