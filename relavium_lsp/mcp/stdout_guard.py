"""Between a stdio MCP server's stdout and the SDK: bounded lines, only JSON-RPC (issue 35).

The SDK reads a server's stdout line by line into memory, however long the line, and logs
any line it cannot parse, verbatim, with a traceback. A 50 MB result took a minute and
225 MB of memory before our caps saw it; a server printing garbage on stdout filled the log
with it. So a stdio server runs behind this small program:

    python -I -S stdout_guard.py MAX_BYTES COMMAND ARGS...

It starts the server with our stdin and stderr, and copies the server's stdout to ours one
line at a time:

- a line longer than ``MAX_BYTES`` is read past, never held; when the start of it names a
  request ``id``, an error response for that id takes its place (the call fails at once,
  saying the result was too large) — otherwise it is dropped;
- a line that is not a JSON-RPC 2.0 object is dropped and described on stderr (escaped and
  cut, like every stderr line: :mod:`relavium_lsp.mcp.connection` logs stderr);
- everything else passes unchanged.

It exits with the server's status. It imports only the standard library (no site packages:
a few milliseconds to start).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from typing import IO

_CHUNK = 64 * 1024
# How much of an over-long line is kept to find its id.
_HEAD_BYTES = 64 * 1024
_SHOWN_CHARS = 200
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_PLAIN_VALUE = re.compile(rb'\s*:\s*(-?[0-9]{1,19}(?![0-9.eE])|"(?:[^"\\]|\\.)*")')


def shown(data: bytes) -> str:
    """The start of ``data`` for a log line: control characters escaped, cut."""
    text = data[: _SHOWN_CHARS * 4].decode("utf-8", "replace")[:_SHOWN_CHARS]
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def top_level_id(head: bytes) -> int | str | None:
    """The ``id`` member of the JSON object ``head`` starts, if it comes early enough."""
    depth = 0
    for token in _TOKEN.finditer(head):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and text == b'"id"':
            value = _PLAIN_VALUE.match(head, token.end())
            if value is not None:
                decoded = json.loads(value.group(1))
                return decoded if isinstance(decoded, int | str) else None
    return None


def too_large(request_id: int | str, limit: int) -> bytes:
    """The error response that stands for an over-long result."""
    error = {
        "code": -32603,
        "message": f"the server's answer was larger than {limit:,} bytes; it was left out",
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"


def accepted(line: bytes) -> bool:
    """Whether a complete line is a JSON-RPC 2.0 object (what the SDK may read)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0"


def relay(source: IO[bytes], sink: IO[bytes], limit: int) -> None:
    """Copy ``source`` to ``sink`` line by line under the rules of the module doc."""
    line = bytearray()
    overflowing = False
    while chunk := source.read1(_CHUNK):  # type: ignore[attr-defined]
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start : len(chunk) if end < 0 else end]
            start = len(chunk) if end < 0 else end + 1
            if not overflowing:
                line += piece
                if len(line) > limit:
                    overflowing, line = True, line[:_HEAD_BYTES]
            if end >= 0:
                finish(bytes(line), overflowing, sink, limit)
                line, overflowing = bytearray(), False
    if line:
        finish(bytes(line), overflowing, sink, limit)


def finish(line: bytes, overflowing: bool, sink: IO[bytes], limit: int) -> None:
    """Pass, replace or drop one complete line."""
    if overflowing:
        request_id = top_level_id(line)
        note = f"id {request_id!r}" if request_id is not None else "no id found"
        complain(f"a message of over {limit:,} bytes was left out ({note}): {shown(line)}")
        if request_id is not None:
            sink.write(too_large(request_id, limit))
            sink.flush()
        return
    if not line.strip():
        return
    if not accepted(line):
        complain(f"{len(line):,} bytes on stdout that are not a JSON-RPC message: {shown(line)}")
        return
    sink.write(line + b"\n")
    sink.flush()


def complain(text: str) -> None:
    """One line on stderr (logged by the client, escaped and rate-limited)."""
    sys.stderr.write(f"[relavium stdout guard] {text}\n")
    sys.stderr.flush()


def main(argv: list[str]) -> int:
    """Run the server in ``argv[1:]`` behind the guard; its exit status."""
    limit, command = int(argv[0]), argv[1:]
    try:
        server = subprocess.Popen(command, stdout=subprocess.PIPE)
    except OSError as error:
        complain(f"{command[0]}: {error.strerror}")
        return 127
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, lambda n, _frame: server.send_signal(n))
    assert server.stdout is not None
    sink = os.fdopen(sys.stdout.fileno(), "wb", buffering=0, closefd=False)
    pump = threading.Thread(target=relay, args=(server.stdout, sink, limit), daemon=True)
    pump.start()
    code = server.wait()
    pump.join()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
