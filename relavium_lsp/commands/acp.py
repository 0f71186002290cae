"""``relavium-lsp acp``: run as an Agent Client Protocol agent over stdio (Zed, JetBrains, …)."""

from __future__ import annotations

import argparse
import asyncio

from relavium_lsp.commands import Subcommands
from relavium_lsp.logs import configure_logging
from relavium_lsp.paths import ensure_private_dir, relavium_home


def register(subparsers: Subcommands) -> None:
    """Add the ``acp`` subcommand."""
    parser = subparsers.add_parser(
        "acp", help="run as an Agent Client Protocol agent over stdio (Zed, JetBrains, …)"
    )
    parser.add_argument("--log-level", help="file log level (default INFO)")
    parser.add_argument(
        "--history-path", metavar="PATH", help="the history database (default: in RELAVIUM_HOME)"
    )
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Serve one client until it closes stdin."""
    from relavium_lsp.acp.stdio import serve_stdio

    configure_logging(ensure_private_dir(relavium_home()), arguments.log_level)
    asyncio.run(serve_stdio(history_path=arguments.history_path))
    return 0
