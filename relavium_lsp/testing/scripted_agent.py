"""A scripted agent behind a :class:`~relavium_lsp.testing.loopback.LoopbackServer`.

It answers OpenAI Chat Completions requests the way a model working through a task does:
each turn call gets the plan's next :class:`Step` (tool calls, text, or an HTTP error), while
calls that ask for a summary — compaction, between turns or inside one — get a short summary
and do not advance the plan. Every request body is kept (``requests``; ``summaries`` for the
summary calls), and each answer reports as its prompt tokens a count derived from the body
the server received (about four bytes a token), as a real provider reports what it counted.

.. code-block:: python

    agent = ScriptedAgent([Step(calls=[("read_file", {"path": "a.py"})]), Step(text="done")])
    with LoopbackServer(agent) as server:
        ...  # an OpenAI-compatible provider with base_url=server.url + "/v1"
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from relavium_lsp.testing.loopback import ReceivedRequest, ScriptedResponse
from relavium_lsp.testing.wire_scripts import ScriptedToolCall, openai_stream

SUMMARY_MARKER = "You are compacting"
DEFAULT_SUMMARY = "Worked through the files so far; nothing is left open but the plan's next step."


@dataclass(frozen=True)
class Step:
    """One answer of the agent: tool calls (name, arguments), text, or a scripted response."""

    calls: Sequence[tuple[str, dict[str, Any]]] = ()
    text: str = ""
    response: ScriptedResponse | None = None


@dataclass
class ScriptedAgent:
    """A loopback responder playing ``steps`` in order (see the module doc)."""

    steps: Iterable[Step]
    summary: str = DEFAULT_SUMMARY
    # Answers summary calls instead of ``summary`` (e.g. an error, to exercise a fallback).
    summary_response: ScriptedResponse | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._steps = iter(self.steps)
        self._lock = threading.Condition()
        self._calls = 0

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` turn calls (not summaries) arrived; ``False`` at the timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.requests) >= count, timeout)

    def wait_for_summaries(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` summary calls arrived; ``False`` at the timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.summaries) >= count, timeout)

    def __call__(self, received: ReceivedRequest) -> ScriptedResponse:
        """Answer one request (called on the loopback server's thread)."""
        body = received.json()
        prompt_tokens = max(1, len(received.body) // 4)
        with self._lock:
            if _asks_for_summary(body):
                self.summaries.append(body)
                self._lock.notify_all()
                if self.summary_response is not None:
                    return self.summary_response
                return openai_stream(text=[self.summary], usage=(prompt_tokens, 40))
            self.requests.append(body)
            self._lock.notify_all()
            step = next(self._steps, Step(text="(the script has ended)"))
            if step.response is not None:
                return step.response
            calls = []
            for name, args in step.calls:
                self._calls += 1
                calls.append(ScriptedToolCall(f"call-{self._calls}", name, json.dumps(args)))
        text = [step.text] if step.text else []
        return openai_stream(text=text, tool_calls=calls, usage=(prompt_tokens, 30))


def _asks_for_summary(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    content = first.get("content") if first.get("role") == "system" else None
    return isinstance(content, str) and content.startswith(SUMMARY_MARKER)
