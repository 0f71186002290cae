"""Every Lua example of the README and `:help relavium` runs as written on a fresh install.

"Fresh" is a new HOME with no relavium configuration (so no agent but the default one) and
the server installed the way the README's Install section says (`relavium-lsp` on PATH).
Each example then has to end in a working chat: one turn on the offline model.

Plugin-manager specs run under small stand-ins that do what the manager does with them —
GitHub is out of reach here, so a stand-in "clones" by copying the repository: lazy.nvim
runs the plugin's `build.lua` in a coroutine, puts the directory on the runtimepath, sources
its `plugin/` files and calls `require(main).setup(opts)`; packer adds the package, runs
`run` and then `config`; `vim.pack.add` (Neovim 0.12, so a stand-in on 0.7 and 0.11) adds
the package. Other examples run with the plugin already in a `pack/*/start` directory.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from relavium_lsp import __version__
from tests.e2e.lsp_harness import make_git_workspace
from tests.e2e.neovim.install_helpers import TOOL_ENV, clone_plugin, offline_turn_works, path_with
from tests.e2e.neovim.nvim_harness import REPO, Neovim, neovim

README_LUA = re.compile(r"^```lua\n(.*?)^```", re.MULTILINE | re.DOTALL)
HELP_EXAMPLE = re.compile(r"^>(\w*)\n(.*?)^<", re.MULTILINE | re.DOTALL)
# What the plugin managers do with a spec, reduced to what touches the plugin.
STAND_INS = r"""
local source = ...
local data = vim.fn.stdpath('data')
local function clone(name, parent)
  local dir = parent .. '/' .. name
  vim.fn.mkdir(parent, 'p')
  vim.fn.system({ 'cp', '-R', source, dir })
  assert(vim.v.shell_error == 0, 'copy failed')
  return dir
end
local function source_plugin_files(dir)
  for _, file in ipairs(vim.fn.glob(dir .. '/plugin/**/*.lua', true, true)) do
    vim.cmd('source ' .. vim.fn.fnameescape(file))
  end
end
_G.lazy_install = function(spec)
  local name = spec[1]:match('/(.+)$')
  local dir = clone(name, data .. '/lazy')
  local build = loadfile(dir .. '/build.lua')
  local co = coroutine.create(build)
  while coroutine.status(co) ~= 'dead' do
    local ok, problem = coroutine.resume(co)
    if not ok then error(problem) end
    vim.wait(20)  -- lazy.nvim resumes its tasks on later ticks of the event loop
  end
  vim.opt.runtimepath:prepend(dir)
  source_plugin_files(dir)
  if spec.opts then require(spec.main).setup(spec.opts) end
  if spec.config then spec.config() end
end
_G.use = function(spec)
  local name = spec[1]:match('/(.+)$')
  clone(name, data .. '/site/pack/packer/opt')
  vim.cmd('packadd ' .. name)
  if spec.run then vim.cmd(spec.run:sub(2)) end
  if spec.config then spec.config() end
end
if not vim.pack then
  vim.pack = { add = function(specs)
    for _, url in ipairs(specs) do
      local name = url:match('([^/]+)$')
      clone(name, data .. '/site/pack/core/opt')
      vim.cmd('packadd ' .. name)
    end
  end }
end
"""


def _readme_examples() -> list[str]:
    return README_LUA.findall((REPO / "README.md").read_text(encoding="utf-8"))


def _help_examples() -> list[str]:
    examples = []
    for language, body in HELP_EXAMPLE.findall((REPO / "doc" / "relavium.txt").read_text("utf-8")):
        assert language == "lua", f"an example the test cannot run: >{language}\n{body}"
        examples.append("\n".join(line.removeprefix("    ") for line in body.splitlines()) + "\n")
    return examples


def _examples() -> list[str]:
    unique: dict[str, str] = {}
    for example in _readme_examples() + _help_examples():
        unique.setdefault(example.strip(), example)
    return list(unique.values())


def _kind(example: str) -> str:
    code = "\n".join(line for line in example.splitlines() if not line.startswith("--"))
    if code.lstrip().startswith("return {"):
        return "lazy"
    if code.lstrip().startswith("use("):
        return "packer"
    return "vim.pack" if "vim.pack.add" in code else "setup"


def test_the_examples_cover_every_install_route() -> None:
    assert sorted({_kind(example) for example in _examples()}) == [
        "lazy",
        "packer",
        "setup",
        "vim.pack",
    ]
    assert len(_help_examples()) >= 4 and len(_readme_examples()) >= 4


def _run_example(nvim: Neovim, example: str, kind: str) -> None:
    if kind == "lazy":
        nvim.lua("lazy_install(loadstring(...)())", example)
    else:
        nvim.lua("assert(loadstring(...))()", example)


@pytest.mark.parametrize("example", _examples(), ids=lambda example: _kind(example))
def test_the_example_runs_as_written_on_a_fresh_install(tmp_path: Path, example: str) -> None:
    workspace = make_git_workspace(tmp_path / "repo")
    home = tmp_path / "home"
    source = clone_plugin(tmp_path / "clone" / "relavium-lsp")
    kind = _kind(example)
    if kind == "setup":  # the plugin is installed; the example is the user's configuration
        clone_plugin(home / "xdg-data" / "nvim" / "site" / "pack" / "relavium" / "start" / "rl")
    path = path_with(tmp_path, "relavium-lsp", "uv")  # after the README's install step
    with neovim(workspace, home, path=path, env=TOOL_ENV, packages=True) as nvim:
        nvim.lua(STAND_INS, str(source))
        _run_example(nvim, example, kind)
        offline_turn_works(nvim)
        command = nvim.lua("return require('relavium.client').get().config.cmd")
    if kind in ("lazy", "packer"):  # their build step installed the server with uv
        installed = json.loads((home / "xdg-data/nvim/relavium/server.json").read_text("utf-8"))
        assert installed["method"] == "uv" and installed["version"] == __version__
        assert command == [installed["command"], "serve"]
        assert Path(installed["command"]).is_relative_to(home)
    else:
        assert command == [str(tmp_path / "bin" / "relavium-lsp"), "serve"]
