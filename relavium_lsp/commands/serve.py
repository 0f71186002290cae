"""``relavium-lsp serve``: run the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import logging
import sys

from relavium_lsp.commands import Subcommands
from relavium_lsp.commands.startup import gc_paused
from relavium_lsp.paths import ensure_private_dir, relavium_home


def register(subparsers: Subcommands) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser("serve", help="run the language server (stdio by default)")
    parser.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (for debugging)"
    )
    parser.add_argument("--log-level", help="file log level (default INFO)")
    parser.set_defaults(handler=run)


def announce_tcp_lifecycle() -> None:
    """In TCP mode stderr is a terminal, not the protocol: say when the port is really open.

    pygls logs ``Serving on (host, port)`` once the socket is bound; showing its server
    lifecycle lines lets a person (or a test) connect without guessing.
    """
    handler = logging.StreamHandler()
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("relavium-lsp: %(message)s"))
    lifecycle = logging.getLogger("pygls.server")
    lifecycle.setLevel(logging.INFO)
    lifecycle.addHandler(handler)


# How long a thread may hold the GIL while another waits (CPython's default is 5 ms). The
# event loop shares the interpreter with the store's worker thread and pygls' pool; a token
# ready to go out should not wait behind a whole default slice of their Python work (issue 25).
GIL_SWITCH_INTERVAL_S = 0.0005


def run(arguments: argparse.Namespace) -> int:
    """Start serving until the client exits."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    home = relavium_home()
    # Everything up to serving is start-up: no cyclic GC, its objects frozen (cold start).
    # Every pygls and lsprotocol import happens here, not when this module loads.
    with gc_paused():
        from relavium_lsp.logs import configure_logging
        from relavium_lsp.server.app import create_server
        from relavium_lsp.server.stdio import start_framed_io

        configure_logging(ensure_private_dir(home), arguments.log_level)
        server = create_server()
    if arguments.tcp:
        host, _, port = str(arguments.tcp).rpartition(":")
        if not host or not port.isdigit():
            raise SystemExit("--tcp expects HOST:PORT, e.g. 127.0.0.1:2087")
        announce_tcp_lifecycle()
        server.start_tcp(host, int(port))
    else:
        # Not pygls's start_io: its reader trusts Content-Length and cannot resynchronise.
        start_framed_io(server)
    return 0
