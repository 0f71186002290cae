"""A small MCP server for the tests, written with the official SDK's server side (MCPServer).

Run as ``python probe_server.py [--marker FILE] [--http] [--token TOKEN] [--host-name NAME]``:

- stdio by default; with ``--http`` it serves Streamable HTTP on 127.0.0.1 (a free port,
  printed as ``PORT <n>`` on stdout) and refuses every request whose ``Authorization`` is not
  ``Bearer <TOKEN>``; with ``--host-name NAME`` it accepts only requests whose ``Host`` is
  that name (the SDK's DNS-rebinding check), so a test can prove which name a client sent;
- ``--marker FILE`` appends one line to FILE when the process starts, so a test can prove a
  server's command did (or did not) run.

Tools: ``echo`` (readOnlyHint), ``add``, ``pid``, ``env_names``, ``crash`` (the process
exits), ``hang`` (never returns; records its cancellation), ``hang_started`` and
``cancellations`` (wait until a hang call runs / was cancelled), ``picture`` (an image and an
embedded resource), ``big`` (a long text), ``garbage`` (junk on stdout and terminal codes on
stderr), ``huge`` (megabytes of text), ``noisy`` (many stderr lines). Prompt: ``review``.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import EmbeddedResource, ImageContent, TextResourceContents, ToolAnnotations

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)

server = MCPServer("probe", version="1.0")
cancelled = anyio.Event()
hanging = anyio.Event()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def env_names() -> list[str]:
    """The names of the environment variables the server was started with."""
    return sorted(os.environ)


@server.tool()
def crash() -> str:
    """Exit the server process at once."""
    print("probe: crashing on request", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never return (until cancelled)."""
    hanging.set()
    try:
        await anyio.sleep_forever()
    finally:
        cancelled.set()
        print("probe: hang was cancelled", file=sys.stderr, flush=True)
    return "unreachable"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def hang_started() -> bool:
    """Whether a hang call is running (waits up to 60 s for one)."""
    with anyio.move_on_after(60):
        await hanging.wait()
    return hanging.is_set()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def cancellations() -> bool:
    """Whether a hanging call was cancelled (waits up to 60 s for it)."""
    with anyio.move_on_after(60):
        await cancelled.wait()
    return cancelled.is_set()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def picture() -> list[ImageContent | EmbeddedResource]:
    """A picture and a note."""
    return [
        ImageContent(data=base64.b64encode(PIXEL).decode(), mime_type="image/png"),
        EmbeddedResource(
            resource=TextResourceContents(uri="memo://note", text="a note about the picture")
        ),
    ]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def big(lines: int) -> str:
    """Many numbered lines."""
    return "\n".join(f"line {number}" for number in range(lines))


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def garbage() -> str:
    """Write junk between the protocol's lines on stdout (and terminal codes on stderr)."""
    os.write(1, b'\x1b[31mnot json\x1b[0m\n[1,2,3]\n{"not": "jsonrpc"}\n')
    os.write(2, b"\x1b[2Jcleared\rFAKE 2026 ERROR forged line\x07\n")
    return "after the junk"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def huge(megabytes: int) -> str:
    """A text of the given size."""
    return "x" * (megabytes * 1024 * 1024)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def noisy(lines: int) -> int:
    """Write many lines to stderr."""
    for number in range(lines):
        os.write(2, f"noise {number}\n".encode())
    return lines


@server.prompt()
def review(topic: str) -> str:
    """Ask for a review of a topic."""
    return f"Please review {topic} carefully."


def _serve_http(token: str, host_name: str | None) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

    security = TransportSecuritySettings(allowed_hosts=[f"{host_name}:*"]) if host_name else None
    app = server.streamable_http_app(transport_security=security)

    def guarded(inner: ASGIApp) -> ASGIApp:
        async def guard(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                headers = dict(scope["headers"])
                if headers.get(b"authorization") != f"Bearer {token}".encode():
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"unauthorized"})
                    return
            await inner(scope, receive, send)

        return guard

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(guarded(app), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marker")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--token", default="")
    parser.add_argument("--host-name")
    options = parser.parse_args()
    if options.marker:
        with open(options.marker, "a", encoding="utf-8") as marker:
            marker.write(f"started {os.getpid()}\n")
    print("probe: ready", file=sys.stderr, flush=True)
    if options.http:
        _serve_http(options.token, options.host_name)
    else:
        server.run()


if __name__ == "__main__":
    main()
