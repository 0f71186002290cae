"""The ``relavium-lsp`` command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from relavium_lsp import __version__


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser; each subcommand registers itself here."""
    parser = argparse.ArgumentParser(
        prog="relavium-lsp",
        description="Multi-turn AI agent chat sessions inside the editor, over LSP.",
    )
    parser.add_argument("--version", action="version", version=f"relavium-lsp {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    if arguments.command is None:
        parser.print_help()
        return 0
    return 0
