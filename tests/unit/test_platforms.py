"""Linux and macOS run the server; on Windows every command stops with one sentence.

The Windows run is simulated: ``sys.platform`` says ``win32`` and the POSIX-only modules the
server uses (``fcntl``, ``pty``, ``termios``) cannot be imported, as on Windows. A command
that imported any of them before the check would end in an ImportError traceback instead.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from relavium_lsp.cli import COMMAND_MODULES, UNSUPPORTED_PLATFORM

AS_ON_WINDOWS = """
import runpy, sys
sys.platform = "win32"
for name in ("fcntl", "pty", "termios"):
    sys.modules[name] = None  # `import fcntl` now raises ImportError, as on Windows
sys.argv = ["relavium-lsp", *sys.argv[1:]]
runpy.run_module("relavium_lsp", run_name="__main__")
"""


@pytest.mark.parametrize("arguments", [[name] for name in COMMAND_MODULES] + [[], ["--version"]])
def test_every_command_stops_on_windows_with_one_sentence(arguments: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", AS_ON_WINDOWS, *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == UNSUPPORTED_PLATFORM + "\n"
    assert result.stdout == ""


def test_the_sentence_names_the_supported_platforms_and_the_way_out() -> None:
    assert UNSUPPORTED_PLATFORM.count(". ") == 0 and UNSUPPORTED_PLATFORM.endswith(".")
    assert "Linux and macOS" in UNSUPPORTED_PLATFORM and "WSL" in UNSUPPORTED_PLATFORM


def test_this_platform_runs_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "relavium_lsp", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and result.stdout.startswith("relavium-lsp ")
