"""One module per ``relavium-lsp`` subcommand; each exposes ``register(subparsers)``.

``register`` adds its parser and sets ``handler`` (a function taking the parsed arguments and
returning an exit code) with ``parser.set_defaults(handler=...)``.
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol


class Subcommands(Protocol):
    """What ``register`` gets: the object ``ArgumentParser.add_subparsers`` returns."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """Add one subcommand's parser."""
        ...
