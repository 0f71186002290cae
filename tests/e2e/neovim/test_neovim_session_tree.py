"""Delegated child sessions are nested under their parent in Neovim's session lists."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.lsp_harness import make_git_workspace
from tests.e2e.neovim.nvim_harness import neovim

NEST = """
local tree = require('relavium.session_tree')
local sessions = {
  { id = 'child', parentSessionId = 'parent' },
  { id = 'other' },
  { id = 'grandchild', parentSessionId = 'child' },
  { id = 'parent' },
  { id = 'orphan', parentSessionId = 'gone' },
  { id = 'a', parentSessionId = 'b' },
  { id = 'b', parentSessionId = 'a' },
}
local out = {}
for _, entry in ipairs(tree.nest(sessions)) do
  table.insert(out, tree.prefix(entry.depth) .. entry.session.id)
end
return out
"""


def test_children_are_listed_under_their_parent(tmp_path: Path) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    with neovim(workspace, tmp_path / "home") as nvim:
        lines = nvim.lua(NEST)
    assert lines[:5] == ["other", "parent", "  ↳ child", "    ↳ grandchild", "orphan"]
    assert lines[5:] == ["a", "  ↳ b"]  # a cycle (a damaged history) still lists each once
