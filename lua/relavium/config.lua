--- Setup options: defaults, validation, and the default server command.
local M = {}

local APPROVAL_POLICIES = { ask = true, auto_edits = true, never_ask = true }
local SPLITS = { vertical = true, horizontal = true, tab = true, current = true }

--- The defaults documented in `:help relavium-setup`.
M.defaults = {
  cmd = nil, -- resolved by relavium.server when not given
  cmd_env = nil,
  root = nil, -- workspace root; default: git root of the working directory, else the cwd
  agent = nil, -- default agent for new chats (initializationOptions.defaultAgent)
  approval = nil, -- 'ask' | 'auto_edits' | 'never_ask' (initializationOptions.approval)
  history_path = nil,
  chat_split = 'vertical',
  chat_size = nil, -- columns (vertical) or lines (horizontal) of the chat split
  editor_state_debounce_ms = 150,
  approval_timeout_ms = 300000,
  transcript_limit = 1000,
  mappings = true,
  show_diffs = true, -- open a file change's diff in a split while its approval is asked
  workspace_venv = nil, -- <root>/.venv's server: nil = when trusted (0.9+), true, false
  allow_broad_working_dir = false, -- start sessions at / or home without asking
}

M.options = vim.deepcopy(M.defaults)

local function one_of(allowed, name)
  return function(value)
    return value == nil or allowed[value] == true, name
  end
end

-- option = the types it may have, or a check returning (ok, what it expects); every option
-- may be nil. (vim.validate's table form is deprecated from 0.11, its new form missing in 0.7.)
local OPTION_TYPES = {
  cmd = { 'table', 'string' },
  cmd_env = { 'table' },
  root = { 'string' },
  agent = { 'string' },
  approval = one_of(APPROVAL_POLICIES, 'ask | auto_edits | never_ask'),
  history_path = { 'string' },
  chat_split = one_of(SPLITS, 'vertical | horizontal | tab | current'),
  chat_size = { 'number' },
  editor_state_debounce_ms = { 'number' },
  approval_timeout_ms = { 'number' },
  transcript_limit = { 'number' },
  mappings = { 'boolean' },
  show_diffs = { 'boolean' },
  workspace_venv = { 'boolean' },
  allow_broad_working_dir = { 'boolean' },
}

local function check_option(key, value)
  local expected = OPTION_TYPES[key]
  if type(expected) == 'function' then
    local ok, what = expected(value)
    if not ok then
      return string.format('%s: expected %s, got %s', key, what, vim.inspect(value))
    end
  elseif value ~= nil and not vim.tbl_contains(expected, type(value)) then
    return string.format('%s: expected %s, got %s', key, table.concat(expected, '|'), type(value))
  end
  return nil
end

--- Merge user options over the defaults (unknown keys are an error, like the server's configs).
function M.apply(user)
  user = user or {}
  for key, value in pairs(user) do
    if OPTION_TYPES[key] == nil then
      error(string.format('relavium.setup: unknown option %q', key), 3)
    end
    local problem = check_option(key, value)
    if problem then
      error('relavium.setup: ' .. problem, 3)
    end
  end
  local merged = vim.tbl_extend('force', vim.deepcopy(M.defaults), user)
  if type(merged.cmd) == 'string' then
    merged.cmd = vim.split(merged.cmd, '%s+', { trimempty = true })
  end
  M.options = merged
  return merged
end

--- initializationOptions sent to the server (docs/design.md §4).
function M.initialization_options()
  local options = { clientName = 'neovim' }
  options.defaultAgent = M.options.agent
  options.approval = M.options.approval
  options.historyPath = M.options.history_path
  return options
end

return M
