"""Keeping tool text small: what the model gets back, and what events show.

- :func:`bound_output` caps a result at 50 KB / 2,000 lines as head + marker + tail; the
  marker names the artifact holding the full text so ``read_tool_output`` can page it.
- :func:`sanitize_input` is the ``toolInput`` of ``agent:tool_call``: long strings cut,
  file contents and bodies reduced to length + head, credentials redacted, depth bounded.
- :func:`summarize_output` is the ``outputSummary`` of ``agent:tool_result``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

MAX_RESULT_BYTES = 50 * 1024
MAX_RESULT_LINES = 2_000
SUMMARY_CHARS = 300
EVENT_STRING_CHARS = 200
EVENT_HEAD_CHARS = 80
_MARKER_RESERVE = 400
_MAX_DEPTH = 4
_MAX_ITEMS = 32


@dataclass(frozen=True)
class BoundedText:
    """A result as handed to the model; ``artifact_id`` is set when text was omitted."""

    text: str
    artifact_id: str | None = None


def exceeds_bounds(text: str) -> bool:
    """Whether ``text`` is over the byte or line cap."""
    return text.count("\n") + 1 > MAX_RESULT_LINES or len(text.encode("utf-8")) > MAX_RESULT_BYTES


def _head(data: bytes, max_lines: int, max_bytes: int) -> bytes:
    end = 0
    for _ in range(max_lines):
        newline = data.find(b"\n", end)
        if newline == -1:
            end = len(data)
            break
        end = newline + 1
    if end > max_bytes:
        # Prefer whole lines; a single over-long line is cut mid-line.
        cut = data.rfind(b"\n", 0, max_bytes)
        end = cut + 1 if cut != -1 else max_bytes
    return data[:end]


def _tail(data: bytes, max_lines: int, max_bytes: int) -> bytes:
    start = len(data)
    search_end = len(data) - 1 if data.endswith(b"\n") else len(data)
    for _ in range(max_lines):
        newline = data.rfind(b"\n", 0, search_end)
        if newline == -1:
            start = 0
            break
        start = newline + 1
        search_end = newline
    if len(data) - start > max_bytes:
        cut = data.find(b"\n", len(data) - max_bytes)
        start = cut + 1 if cut != -1 and cut + 1 < len(data) else len(data) - max_bytes
    return data[start:]


def head_and_tail(text: str, artifact_id: str) -> str:
    """Head + marker + tail of ``text`` within the caps (cuts never split a UTF-8 char)."""
    data = text.encode("utf-8")
    budget = (MAX_RESULT_BYTES - _MARKER_RESERVE) // 2
    line_budget = (MAX_RESULT_LINES - 1) // 2
    head = _head(data, line_budget, budget)
    tail = _tail(data[len(head) :], line_budget, budget)
    omitted = data[len(head) : len(data) - len(tail)]
    omitted_lines = omitted.count(b"\n")
    first_omitted_line = head.count(b"\n")
    total_lines = data.count(b"\n") + 1
    marker = (
        f"[... {omitted_lines:,} lines / {len(omitted):,} bytes omitted. The full output "
        f"({total_lines:,} lines) is artifact {artifact_id}: call read_tool_output "
        f'{{"artifactId": "{artifact_id}", "offset": {first_omitted_line}}} to read on ...]'
    )
    head_text = head.decode("utf-8", errors="ignore")
    tail_text = tail.decode("utf-8", errors="ignore")
    separator = "" if head_text.endswith("\n") or not head_text else "\n"
    return f"{head_text}{separator}{marker}\n{tail_text}"


async def bound_output(text: str, save_artifact: Callable[[str], Awaitable[str]]) -> BoundedText:
    """Return ``text`` unchanged when small; else save it and return a bounded preview."""
    if not exceeds_bounds(text):
        return BoundedText(text)
    artifact_id = await save_artifact(text)
    return BoundedText(head_and_tail(text, artifact_id), artifact_id)


def truncate_bytes(text: str, limit: int = MAX_RESULT_BYTES) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes; says whether anything was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def _short(text: str) -> str:
    if len(text) <= EVENT_STRING_CHARS:
        return text
    return f"{text[:EVENT_STRING_CHARS]}… [{len(text):,} chars]"


def _summarize_field(value: Any) -> Any:
    if isinstance(value, str):
        head = value[:EVENT_HEAD_CHARS]
        return {"length": len(value), "head": head + ("…" if len(value) > len(head) else "")}
    return _sanitize(value, 0)


def _sanitize(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return _short(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth >= _MAX_DEPTH:
        return "[nested value omitted]"
    if isinstance(value, dict):
        items = list(value.items())
        cleaned = {
            _short(str(key)): (
                "[redacted]" if _is_credential_key(str(key)) else _sanitize(item, depth + 1)
            )
            for key, item in items[:_MAX_ITEMS]
        }
        if len(items) > _MAX_ITEMS:
            cleaned["…"] = f"{len(items) - _MAX_ITEMS} more keys omitted"
        return cleaned
    if isinstance(value, list | tuple):
        cleaned_list = [_sanitize(item, depth + 1) for item in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            cleaned_list.append(f"… {len(value) - _MAX_ITEMS} more items omitted")
        return cleaned_list
    return _short(repr(value))


_CREDENTIAL_WORDS = ("authorization", "cookie", "token", "secret", "password", "api-key", "apikey")


def _is_credential_key(key: str) -> bool:
    lowered = key.lower().replace("_", "-")
    return any(word in lowered for word in _CREDENTIAL_WORDS)


def sanitize_input(
    args: dict[str, Any],
    *,
    summarized: frozenset[str] = frozenset(),
    redacted: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The event-safe view of a call's arguments (see the module doc)."""
    cleaned: dict[str, Any] = {}
    for index, (key, value) in enumerate(args.items()):
        if index >= _MAX_ITEMS:
            cleaned["…"] = f"{len(args) - _MAX_ITEMS} more keys omitted"
            break
        name = _short(str(key))
        if key in redacted or _is_credential_key(str(key)):
            cleaned[name] = "[redacted]"
        elif key in summarized:
            cleaned[name] = _summarize_field(value)
        else:
            cleaned[name] = _sanitize(value, 1)
    return cleaned


def summarize_output(text: str) -> str:
    """A few hundred characters of a result for the ``agent:tool_result`` event."""
    if len(text) <= SUMMARY_CHARS:
        return text
    return f"{text[:SUMMARY_CHARS]}… [{len(text):,} chars]"
