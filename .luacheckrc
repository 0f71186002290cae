-- luacheck configuration for the plugin (`luacheck lua plugin` from the repository root).
std = 'luajit'
globals = { 'vim' } -- the plugin sets vim.g / vim.bo fields
max_line_length = 100
