"""pygls internals we rely on, for want of a public way (see the package docstring)."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygls.client import JsonRPCClient
    from pygls.server import JsonRPCServer


def use_stop_event(server: JsonRPCServer, stop_event: threading.Event) -> None:
    """Make ``server.shutdown()`` set ``stop_event``, the one our stdio loop watches.

    pygls's own ``start_io`` creates that event on the server and ``shutdown()`` sets it; we
    serve stdio with our own framer (``server/stdio.py``), and pygls offers no argument or
    setter to hand it the event.
    """
    server._stop_event = stop_event


def client_process(client: JsonRPCClient) -> asyncio.subprocess.Process | None:
    """The server process a pygls client started with ``start_io`` (None before that).

    pygls keeps it without a public accessor; the demo needs it for the process id, the
    server's stderr and ending a server that does not exit.
    """
    return client._server
