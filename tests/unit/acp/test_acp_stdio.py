"""stdout belongs to the protocol: stray prints and children's output go to stderr."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from relavium_lsp.cli import build_parser
from relavium_lsp.commands import acp as acp_command


def test_reserved_stdout_carries_only_protocol_bytes() -> None:
    script = textwrap.dedent(
        """
        import os, subprocess, sys
        from relavium_lsp.acp.stdio import reserve_stdout
        protocol = reserve_stdout()
        print("stray print")
        subprocess.run([sys.executable, "-c", "print('child output')"], check=True)
        os.write(1, b"raw fd write\\n")
        protocol.write(b'{"jsonrpc":"2.0"}\\n')
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, check=True, timeout=60
    )
    assert done.stdout == b'{"jsonrpc":"2.0"}\n'
    for text in (b"stray print", b"child output", b"raw fd write"):
        assert text in done.stderr


def test_the_acp_subcommand_is_registered() -> None:
    arguments = build_parser().parse_args(["acp", "--history-path", "/tmp/h.db"])
    assert arguments.handler is acp_command.run
    assert arguments.history_path == "/tmp/h.db"
