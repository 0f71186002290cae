"""``relavium-lsp demo``: drive a real server over LSP through one scripted chat session.

Needs no API key, no network and no keychain: the session runs on the bundled offline model
in a throw-away sample workspace, and everything it stores lives in the demo home
(``~/.relavium-demo`` unless ``--home`` says otherwise), never in ``~/.relavium``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from relavium_lsp.commands import Subcommands
from relavium_lsp.demo.render import Console, Style
from relavium_lsp.demo.run import DemoOptions, run_demo
from relavium_lsp.demo.workspace import (
    DEMO_LOG_NAME,
    DemoPaths,
    WorkspaceSetupError,
    default_demo_home,
    prepare_demo_home,
)
from relavium_lsp.logs import configure_logging
from relavium_lsp.paths import ensure_private_dir

INTERRUPTED_STATUS = 130


def register(subparsers: Subcommands) -> None:
    """Add the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo",
        help="run a scripted chat session against a real server (offline, no key needed)",
        description=(
            "Start `relavium-lsp serve`, drive it over LSP like an editor through one chat "
            "session on the bundled offline model (context, streaming, an approved edit, "
            "resume from a second server, search, export), then print a summary."
        ),
    )
    parser.add_argument(
        "--home",
        metavar="DIR",
        type=Path,
        help="where the demo keeps its data and sample workspace (default: ~/.relavium-demo)",
    )
    parser.add_argument(
        "--reset", action="store_true", help="delete the demo home first (forget earlier runs)"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour output (auto: only on a terminal, and never when NO_COLOR is set)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for each server answer (default 60)",
    )
    parser.add_argument("--log-level", help="log level of the demo and its servers (default INFO)")
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    """Run the demo; exit status 0 only if every step succeeded."""
    home = (arguments.home or default_demo_home()).expanduser().absolute()
    paths = DemoPaths(home=home)
    console = Console(sys.stdout, Style.for_stream(sys.stdout, arguments.color))
    if arguments.timeout <= 0:
        console.fail("--timeout must be a positive number of seconds")
        return 2
    try:
        deleted = prepare_demo_home(paths, reset=arguments.reset)
    except (WorkspaceSetupError, OSError) as error:
        console.fail(f"cannot use the demo home {home}: {error}")
        return 1
    configure_logging(
        ensure_private_dir(paths.data),
        arguments.log_level,
        stderr_level=logging.CRITICAL,
        file_name=DEMO_LOG_NAME,
    )
    console.write(
        console.style.paint("Relavium demo", "bold") + " — an editor session over LSP, "
        "on the bundled offline model (no key, no network)"
    )
    console.field("demo home", f"{home}  (your ~/.relavium is not touched)")
    if deleted:
        console.ok("--reset: deleted the data of earlier demo runs")
    options = DemoOptions(
        paths=paths,
        timeout_s=arguments.timeout,
        log_level=arguments.log_level,
    )
    try:
        return asyncio.run(run_demo(options, console))
    except KeyboardInterrupt:
        console.fail("interrupted")
        return INTERRUPTED_STATUS
