"""Throttled, capped ``agent:tool_output`` events for one call's terminal output.

Every event is written to the durable log, so a command that prints megabytes must not
write megabytes of events: text is gathered and sent at most once per ``interval_s`` (the
first piece at once, so a client sees the command start), and after ``max_bytes`` one last
event says the live view stops there (the kept output still reaches the result).
"""

from __future__ import annotations

import asyncio

from relavium_lsp.contracts.terminal import AgentToolOutput
from relavium_lsp.tools.base import EventSink

STREAM_INTERVAL_S = 0.1
STREAM_MAX_BYTES = 256 * 1024


class OutputStream:
    """Collects a call's output and emits it as throttled ``agent:tool_output`` events."""

    def __init__(
        self,
        emit: EventSink,
        tool_id: str,
        call_id: str,
        *,
        interval_s: float = STREAM_INTERVAL_S,
        max_bytes: int = STREAM_MAX_BYTES,
    ) -> None:
        self._emit = emit
        self._tool_id = tool_id
        self._call_id = call_id
        self._interval_s = interval_s
        self._budget = max_bytes
        self._pending: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._sent_any = False
        self.stopped = False

    def write(self, text: str) -> None:
        """Take a piece of output; it is sent now or with the next interval's batch."""
        if self.stopped or not text:
            return
        self._pending.append(text)
        if not self._sent_any:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._interval_s, self.flush)

    def flush(self) -> None:
        """Send what is pending (called by the timer, and once more when the call ends)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.stopped or not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        encoded = text.encode("utf-8")
        truncated = len(encoded) >= self._budget
        if truncated:
            text = encoded[: self._budget].decode("utf-8", "ignore")
            text += "\n[... live output stops here; the result keeps the rest ...]\n"
            self.stopped = True
        self._budget -= len(encoded)
        self._sent_any = True
        self._emit(
            AgentToolOutput(
                tool_id=self._tool_id, call_id=self._call_id, text=text, truncated=truncated
            )
        )

    def close(self) -> None:
        """Send the last batch and stop."""
        self.flush()
        self.stopped = True
