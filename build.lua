-- The plugin's build step: installs or upgrades the relavium-lsp server it needs (the same
-- version, from this directory) with uv, else pipx, else a private virtualenv.
-- lazy.nvim runs this file by itself after it installs or updates the plugin; other managers
-- run `:RelaviumInstall` (`:help relavium-install`).
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local task = dofile(root .. '/lua/relavium/install.lua').run({ root = root, yield = true })
if not task.ok then
  error('relavium: ' .. task.message)
end
print('relavium: ' .. task.message)
