"""Azure's content filters, named in the errors they cause.

Azure runs its own filters (``hate``, ``sexual``, ``violence``, ``self_harm``, ``jailbreak``,
``protected_material_text``, …) around every deployment. A prompt they stop is an HTTP 400
whose ``innererror.content_filter_result`` says which filter; an answer they stop streams
``finish_reason: "content_filter"`` with ``content_filter_results`` beside it. Both become
a ``content_filter`` error that names the filters, so the user knows what to change.
Azure's other stream extras — an opening chunk with empty ``choices`` and
``prompt_filter_results``, ``content_filter_results`` on every chunk — carry nothing else
and the Chat Completions decoder already passes them by.
"""

from __future__ import annotations

from typing import Any

import httpx

from relavium_lsp.llm.http_call import CallTarget, error_from_status
from relavium_lsp.llm.json_codec import loads
from relavium_lsp.llm.openai_stream import ChatCompletionsDecoder
from relavium_lsp.llm.responses.stream import ResponsesDecoder
from relavium_lsp.llm.seam import ErrorChunk, LlmChunk, LlmError, StopChunk
from relavium_lsp.llm.sse import EventData

_FILTERED = b'"filtered":true'


def filters_that_fired(results: Any) -> list[str]:
    """The names of the filters a ``content_filter_result(s)`` object marks as filtered."""
    if not isinstance(results, dict):
        return []
    names = []
    for name, verdict in results.items():
        if isinstance(verdict, dict) and verdict.get("filtered") is True:
            severity = verdict.get("severity")
            names.append(f"{name} ({severity})" if isinstance(severity, str) else str(name))
    return sorted(names)


def _stopped(provider_id: str, names: list[str], what: str) -> LlmError:
    named = ", ".join(names) if names else "a filter Azure did not name"
    return LlmError(
        kind="content_filter",
        message=(
            f"{provider_id}: Azure's content filter stopped {what}: {named}. Rephrase the "
            "request, or ask the deployment's owner about its content filter settings."
        ),
    )


def explain_azure_status(
    target: CallTarget, status: int, headers: httpx.Headers, body: bytes
) -> LlmError:
    """The shared mapping, but a filtered prompt names the filters that stopped it."""
    error = error_from_status(target, status, headers, body)
    if error.kind != "content_filter" and status != 400:
        return error
    try:
        payload = loads(body)
    except ValueError:
        return error
    inner = payload.get("error", {}).get("innererror") if isinstance(payload, dict) else None
    results = inner.get("content_filter_result") if isinstance(inner, dict) else None
    names = filters_that_fired(results)
    if not names and error.kind != "content_filter":
        return error
    return _stopped(target.provider_id, names, "the prompt").model_copy(update={"status": status})


class AzureChatDecoder(ChatCompletionsDecoder):
    """Chat Completions from Azure: a filtered answer is an error naming the filter.

    The filters' verdicts ride on the event that finishes the answer. The decoder keeps the
    last bytes it read (bounded) and, only when an answer ends by the content filter, reads
    the verdicts out of that event; other events cost nothing more.
    """

    _KEPT = 64 * 1024

    def __init__(self, provider_id: str, secret: str | None, **options: Any) -> None:
        super().__init__(provider_id, secret, **options)
        self._recent = bytearray()

    def feed(self, data: bytes) -> list[LlmChunk]:
        """The chunks these bytes complete (a filtered answer named)."""
        self._recent += data
        if len(self._recent) > 2 * self._KEPT:
            del self._recent[: -self._KEPT]
        return self._named(super().feed(data))

    def finish(self) -> list[LlmChunk]:
        """End of body, with a filtered answer named as in :meth:`feed`."""
        return self._named(super().finish())

    def _filters(self) -> list[str]:
        """The filters the last filtered event names (from the bytes kept)."""
        recent = bytes(self._recent)
        at = recent.rfind(_FILTERED)
        if at < 0:
            return []
        start = recent.rfind(b"data:", 0, at)
        end = recent.find(b"\n", at)
        try:
            payload = loads(recent[start + 5 : end if end >= 0 else None].strip())
        except ValueError:
            return []
        choices = payload.get("choices") if isinstance(payload, dict) else None
        names: list[str] = []
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict):
                names.extend(filters_that_fired(choice.get("content_filter_results")))
        return sorted(set(names))

    def _named(self, chunks: list[LlmChunk]) -> list[LlmChunk]:
        final = chunks[-1] if chunks else None
        if isinstance(final, StopChunk) and final.stop_reason == "content_filter":
            error = _stopped(self._provider_id, self._filters(), "the answer")
            return [*chunks[:-1], ErrorChunk(error=error, usage=final.usage)]
        return chunks


class AzureResponsesDecoder(ResponsesDecoder):
    """Responses from Azure: an answer the filter stopped is an error saying so."""

    def payload(self, data: EventData) -> list[LlmChunk]:
        """One event's chunks; a filtered answer's stop becomes an error naming the filter."""
        chunks = super().payload(data)
        final = chunks[-1] if chunks else None
        if isinstance(final, StopChunk) and final.stop_reason == "content_filter":
            parsed = loads(data)
            response = parsed.get("response") if isinstance(parsed, dict) else None
            names = filters_that_fired(
                response.get("content_filter_results") if isinstance(response, dict) else None
            )
            error = _stopped(self._provider_id, names, "the answer")
            return [*chunks[:-1], ErrorChunk(error=error, usage=final.usage)]
        return chunks
