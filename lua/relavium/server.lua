--- Which relavium-lsp the plugin starts (`:help relavium-server`; docs/design.md §4.5), first
--- found wins:
---
--- 1. the `cmd` option;
--- 2. the server `:RelaviumInstall` (or the plugin manager's build step) installed;
--- 3. `relavium-lsp` on PATH;
--- 4. the workspace's own `<root>/.venv/bin/relavium-lsp`, only when you trust it. A cloned
---    repository's `.venv` is code you have not read, so it never runs implicitly: Neovim 0.9+
---    asks once through |vim.secure.read()| (and remembers the answer in its trust database);
---    older versions use it only with the `workspace_venv = true` option.
local config = require('relavium.config')
local install = require('relavium.install')

local M = {}

local SUBCOMMAND = 'serve'

local function workspace_venv(root)
  local executable = root .. '/.venv/bin/relavium-lsp'
  if vim.fn.executable(executable) ~= 1 then
    return nil, nil
  end
  local choice = config.options.workspace_venv
  if choice == false then
    return nil, executable .. ' is not used (workspace_venv = false)'
  end
  if choice == true then
    return executable, nil
  end
  if vim.secure and vim.secure.read then
    if vim.secure.read(executable) then
      return executable, nil
    end
    return nil, executable .. ' is not used: it is not trusted (:help relavium-trust)'
  end
  return nil,
    executable .. ' is not used: this Neovim cannot ask whether to trust it; set '
      .. 'workspace_venv = true in setup() if you do (:help relavium-trust)'
end

--- The server command for `root` and where it came from (`option`, `installed`, `path`,
--- `workspace`); nil and a message saying what to do when there is none.
function M.command(root)
  if config.options.cmd then
    return config.options.cmd, 'option'
  end
  local record = install.read_record()
  if record and vim.fn.executable(record.command) == 1 then
    return { record.command, SUBCOMMAND }, 'installed'
  end
  if vim.fn.executable('relavium-lsp') == 1 then
    return { vim.fn.exepath('relavium-lsp'), SUBCOMMAND }, 'path'
  end
  local executable, refused = workspace_venv(root)
  if executable then
    return { executable, SUBCOMMAND }, 'workspace'
  end
  local message = 'relavium-lsp not found: run :RelaviumInstall, or set `cmd` in setup()'
  if refused then
    message = message .. '; ' .. refused
  end
  return nil, message
end

--- The same program with other arguments (`--version`, `doctor --json`): the command up to
--- its `serve`; nil when a custom command has no `serve`.
function M.with_arguments(command, arguments)
  for index = #command, 1, -1 do
    if command[index] == SUBCOMMAND then
      local argv = vim.list_slice(command, 1, index - 1)
      return vim.list_extend(argv, arguments)
    end
  end
  return nil
end

return M
