"""Anthropic's prompt-cache billing, simulated: which prompt tokens a request reads or writes.

The rules, as Anthropic documents them: a prompt is the sequence ``tools → system →
messages``, cut into content blocks. A block carrying ``cache_control`` is a breakpoint; the
prefix ending there is written to the cache (billed as a cache write) unless it is already
there. A request reads the longest cached prefix that ends at one of its breakpoints or at
one of the 20 block boundaries before each breakpoint (billed as cache reads). Prefixes
shorter than the model's minimum (1,024 tokens) are never cached. Everything else is
ordinary input. Entries live five minutes; a simulated session is far shorter, so they do
not expire here.

Token counts are estimated (four characters of the block's JSON per token); what matters
for a comparison is that the same estimate is used with and without breakpoints.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from relavium_lsp.testing.loopback import ReceivedRequest, Responder, ScriptedResponse
from relavium_lsp.testing.wire_scripts import SSE_HEADERS, anthropic_events

MINIMUM_CACHEABLE_TOKENS = 1_024
LOOKBACK_BLOCKS = 20


@dataclass(frozen=True)
class CacheBill:
    """How one request's prompt tokens are billed."""

    uncached: int
    cache_read: int
    cache_write: int

    @property
    def prompt(self) -> int:
        """Every prompt token, however billed."""
        return self.uncached + self.cache_read + self.cache_write


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = list(body.get("tools") or [])
    system = body.get("system")
    if isinstance(system, str):
        blocks.append({"type": "text", "text": system})
    elif isinstance(system, list):
        blocks.extend(system)
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            blocks.append({"role": message.get("role"), **block})
    return blocks


def _tokens(block: dict[str, Any]) -> int:
    stripped = {key: value for key, value in block.items() if key != "cache_control"}
    return max(1, len(json.dumps(stripped, sort_keys=True)) // 4)


@dataclass
class PromptCache:
    """One account's cache: prefix digests written so far."""

    written: set[str] = field(default_factory=set)

    def bill(self, body: dict[str, Any]) -> CacheBill:
        """Bill one Messages request and remember what it wrote."""
        blocks = _blocks(body)
        digests: list[str] = []
        running = hashlib.sha256()
        totals: list[int] = []
        total = 0
        for block in blocks:
            stripped = {key: value for key, value in block.items() if key != "cache_control"}
            running.update(json.dumps(stripped, sort_keys=True).encode())
            digests.append(running.copy().hexdigest())
            total += _tokens(block)
            totals.append(total)
        breakpoints = [i for i, block in enumerate(blocks) if "cache_control" in block]
        read_end = -1
        for point in breakpoints:
            for candidate in range(point, max(-1, point - LOOKBACK_BLOCKS - 1), -1):
                if digests[candidate] in self.written and candidate > read_end:
                    read_end = candidate
                    break
        read = totals[read_end] if read_end >= 0 else 0
        write_end = read_end
        for point in breakpoints:
            if totals[point] >= MINIMUM_CACHEABLE_TOKENS:
                self.written.add(digests[point])
                write_end = max(write_end, point)
        write = totals[write_end] - read if write_end > read_end else 0
        return CacheBill(uncached=total - read - write, cache_read=read, cache_write=write)


def user_turn(number: int) -> str:
    """The scripted user's message for turn ``number`` of a long coding session."""
    return (
        f"Turn {number}: please look at module_{number % 7}.py and explain what the function "
        f"handle_{number} does with its arguments, then suggest one small improvement. "
        + "Keep the answer focused on behaviour, not style. "
        * 3
    )


def model_reply(number: int) -> str:
    """The scripted model's answer for turn ``number``."""
    return (
        f"handle_{number} validates its input, looks the record up and returns a summary. "
        + f"A small improvement: return early when the record is missing (turn {number}). " * 6
    )


def billing_responder(cache: PromptCache, bills: list[CacheBill]) -> Responder:
    """A loopback responder that answers every Messages call, billing its prompt via ``cache``.

    Each answer is the scripted reply for the turn (counted from the user messages) with the
    usage the real API would report: uncached input, cache reads and cache writes.
    """

    def respond(request: ReceivedRequest) -> ScriptedResponse:
        body = request.json()
        bill = cache.bill(body)
        bills.append(bill)
        turn = sum(1 for message in body["messages"] if message["role"] == "user")
        reply = model_reply(turn)
        events = anthropic_events(
            text=[reply],
            usage=(bill.uncached, max(1, len(reply) // 4)),
            cache=(bill.cache_read, bill.cache_write),
        )
        return ScriptedResponse(headers=SSE_HEADERS, body=events)

    return respond
