"""The ``relavium-lsp`` command line."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import cast

from relavium_lsp import __version__

# Subcommand modules under relavium_lsp.commands, in the order --help lists them.
COMMAND_MODULES: tuple[str, ...] = ("serve", "keys", "sessions")

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="relavium-lsp",
        description="Multi-turn AI agent chat sessions inside the editor, over LSP.",
    )
    parser.add_argument("--version", action="version", version=f"relavium-lsp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"relavium_lsp.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    handler = cast("Handler | None", getattr(arguments, "handler", None))
    if handler is None:
        parser.print_help()
        return 0
    return handler(arguments)
