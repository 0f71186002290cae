"""`:RelaviumMemory`: the workspace memory in a `relavium://memory` buffer whose `:w` saves it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.lsp_harness import make_git_workspace
from tests.e2e.neovim.nvim_harness import Neovim, neovim

STATE = """
local memory = require('relavium.memory').state()
local bufnr = memory.bufnr
local err = memory.last_error
return {
  name = vim.api.nvim_buf_get_name(bufnr),
  buftype = vim.api.nvim_buf_get_option(bufnr, 'buftype'),
  filetype = vim.api.nvim_buf_get_option(bufnr, 'filetype'),
  modified = vim.api.nvim_buf_get_option(bufnr, 'modified'),
  lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
  revision = memory.revision,
  error = err and err.data and err.data.code or vim.NIL,
}
"""

# Another window's save, through the same server (the server announces it like any other).
SAVE_ELSEWHERE = """
local text, base = ...
T.saved = nil
require('relavium.client').request(require('relavium.protocol').SET_WORKSPACE_MEMORY,
  { workingDir = require('relavium.client').root(), text = text, baseRevision = base },
  function(err, result) T.saved = result or err end)
"""

STORED = """
T.stored = nil
require('relavium.client').request(require('relavium.protocol').GET_WORKSPACE_MEMORY,
  { workingDir = require('relavium.client').root() },
  function(err, result) T.stored = result or err end)
vim.wait(30000, function() return T.stored ~= nil end, 10)
return T.stored
"""


def _state(nvim: Neovim) -> dict[str, Any]:
    return dict(nvim.lua(STATE))


def _set_lines(nvim: Neovim, lines: list[str]) -> None:
    nvim.lua(
        "vim.api.nvim_buf_set_lines(require('relavium.memory').state().bufnr, 0, -1, false, ...)",
        lines,
    )


def test_memory_buffer_saves_follows_and_refuses_a_stale_save(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    with neovim(workspace, tmp_path / "home") as nvim:
        nvim.setup()
        nvim.api.command("RelaviumMemory")
        nvim.wait_until("require('relavium.memory').state().workspace ~= nil", "the memory")
        state = _state(nvim)
        assert state["name"].endswith("relavium://memory")
        assert (state["buftype"], state["filetype"]) == ("acwrite", "markdown")
        assert state["lines"] == [""] and state["revision"] == 0 and not state["modified"]

        # :w saves through the server.
        _set_lines(nvim, ["## Build", "- run make test"])
        nvim.api.command("write")
        nvim.wait_until("require('relavium.memory').state().revision == 1", "the first save")
        assert not _state(nvim)["modified"]
        stored = nvim.lua(STORED)
        assert stored["text"] == "## Build\n- run make test\n" and stored["revision"] == 1

        # Saved elsewhere: the unmodified buffer follows the new revision by itself.
        nvim.lua(SAVE_ELSEWHERE, "## Build\n- run make unit\n", 1)
        nvim.wait_until("require('relavium.memory').state().revision == 2", "the new revision")
        nvim.wait_until(
            "vim.api.nvim_buf_get_lines(require('relavium.memory').state().bufnr, 1, 2, false)[1]"
            " == '- run make unit'",
            "the buffer to reload",
        )

        # An edit here while another window saves: :w is refused, the edit stays.
        _set_lines(nvim, ["## Build", "- my edit"])
        nvim.lua(SAVE_ELSEWHERE, "## Build\n- their edit\n", 2)
        nvim.wait_until("T.saved ~= nil and T.saved.revision == 3", "the other save")
        nvim.api.command("write")
        nvim.wait_until(
            "require('relavium.memory').state().last_error ~= nil", "the stale save's refusal"
        )
        state = _state(nvim)
        assert state["error"] == "memory_conflict"
        assert state["modified"] and state["lines"] == ["## Build", "- my edit"]
        assert state["revision"] == 2
        assert "changed in another window" in nvim.messages()

        # :e! loads the newest revision; saving on top of it works.
        nvim.api.command("edit!")
        nvim.wait_until("require('relavium.memory').state().revision == 3", "the reload")
        assert _state(nvim)["lines"] == ["## Build", "- their edit"]
        _set_lines(nvim, ["## Build", "- their edit", "- my edit"])
        nvim.api.command("write")
        nvim.wait_until("require('relavium.memory').state().revision == 4", "the merged save")
        assert nvim.lua(STORED)["text"] == "## Build\n- their edit\n- my edit\n"
        # :RelaviumMemory again goes back to the same buffer.
        again = nvim.lua("return require('relavium').memory()")
        assert again == nvim.lua("return require('relavium.memory').state().bufnr")


CHECKPOINT = """
T.checkpoint = nil
require('relavium.client').request(require('relavium.protocol').CHECKPOINT_SESSION,
  { sessionId = T.chat().session_id },
  function(err, result) T.checkpoint = result or err end)
vim.wait(60000, function() return T.checkpoint ~= nil end, 10)
return T.checkpoint
"""


def test_a_checkpoints_memory_proposal_is_reviewed_and_accepted(tmp_path: Path) -> None:
    """Issue 35: the offline model's checkpoint proposes notes; they reach the memory only
    when the user accepts them in `:RelaviumMemoryProposals` (`a` on the proposal)."""
    workspace = make_git_workspace(tmp_path / "repo")
    with neovim(workspace, tmp_path / "home") as nvim:
        nvim.setup(agent="relavium-default")
        nvim.api.command("RelaviumChat")
        nvim.api.command("RelaviumSend remember the pelican rule")
        nvim.wait_for_turns(1)
        checkpoint = nvim.lua(CHECKPOINT)
        assert isinstance(checkpoint.get("memoryProposalId"), str), checkpoint
        assert nvim.lua(STORED)["revision"] == 0  # proposed, not written

        nvim.api.command("RelaviumMemoryProposals")
        nvim.wait_until(
            "#require('relavium.memory_proposals').state().ids > 0", "the proposal to be listed"
        )
        lines = nvim.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
        assert lines[0].startswith("# Proposal " + checkpoint["memoryProposalId"])
        assert "+## Offline model notes" in lines
        nvim.lua("vim.api.nvim_win_set_cursor(0, {1, 0})")
        nvim.api.feedkeys("a", "x", False)
        nvim.wait_until(
            "require('relavium.memory_proposals').state().last_decision == 'accepted'",
            "the accept",
        )
        stored = nvim.lua(STORED)
        assert stored["revision"] == 1 and "pelican rule" in stored["text"]
