"""The ``relavium-lsp`` command line."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import cast

from relavium_lsp import __version__
from relavium_lsp.commands.startup import gc_paused

# Subcommand modules under relavium_lsp.commands, in the order --help lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "serve",
    "acp",
    "keys",
    "sessions",
    "demo",
    "doctor",
    "recover",
)

Handler = Callable[[argparse.Namespace], int]

# Linux and macOS. Windows lacks the POSIX interfaces the server is built on (pseudo-terminals
# and process groups for the agent's commands, fcntl file locks), so there the command line
# stops before importing any of them, with one sentence instead of a traceback
# (docs/design.md §4.5).
UNSUPPORTED_PLATFORM = "relavium-lsp runs on Linux and macOS; on Windows, run it inside WSL."


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand (or just ``only``) registered.

    Registering a subcommand imports its module, and some pull in the whole engine; an
    editor starting ``serve`` should not wait for modules it will never use.
    """
    parser = argparse.ArgumentParser(
        prog="relavium-lsp",
        description="Multi-turn AI agent chat sessions inside the editor, over LSP.",
    )
    parser.add_argument("--version", action="version", version=f"relavium-lsp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else (only,):
        module = importlib.import_module(f"relavium_lsp.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    if sys.platform == "win32":
        print(UNSUPPORTED_PLATFORM, file=sys.stderr)
        return 2
    arguments_given = list(sys.argv[1:] if argv is None else argv)
    chosen = arguments_given[0] if arguments_given else None
    # Building the parser imports the chosen command's module (for `serve`, pygls and
    # lsprotocol): start-up work, done without the cyclic GC (see commands.startup).
    with gc_paused():
        parser = build_parser(chosen if chosen in COMMAND_MODULES else None)
        arguments = parser.parse_args(arguments_given)
    handler = cast("Handler | None", getattr(arguments, "handler", None))
    if handler is None:
        parser.print_help()
        return 0
    return handler(arguments)
