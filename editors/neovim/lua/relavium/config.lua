--- Setup options: defaults, validation, and the default server command.
local M = {}

local APPROVAL_POLICIES = { ask = true, auto_edits = true, never_ask = true }
local SPLITS = { vertical = true, horizontal = true, tab = true, current = true }

--- The defaults documented in `:help relavium-setup`.
M.defaults = {
  cmd = nil, -- resolved by M.server_command() when not given
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
}

M.options = vim.deepcopy(M.defaults)

local KNOWN_OPTIONS = {}
for _, key in ipairs({
  'cmd', 'cmd_env', 'root', 'agent', 'approval', 'history_path', 'chat_split', 'chat_size',
  'editor_state_debounce_ms', 'approval_timeout_ms', 'transcript_limit', 'mappings',
}) do
  KNOWN_OPTIONS[key] = true
end

local function one_of(allowed, name)
  return function(value)
    return value == nil or allowed[value] == true, name
  end
end

--- Merge user options over the defaults (unknown keys are an error, like the server's configs).
function M.apply(user)
  user = user or {}
  for key in pairs(user) do
    if not KNOWN_OPTIONS[key] then
      error(string.format('relavium.setup: unknown option %q', key), 3)
    end
  end
  vim.validate({
    cmd = { user.cmd, { 'table', 'string' }, true },
    cmd_env = { user.cmd_env, 'table', true },
    root = { user.root, 'string', true },
    agent = { user.agent, 'string', true },
    approval = { user.approval, one_of(APPROVAL_POLICIES, 'ask | auto_edits | never_ask') },
    history_path = { user.history_path, 'string', true },
    chat_split = { user.chat_split, one_of(SPLITS, 'vertical | horizontal | tab | current') },
    chat_size = { user.chat_size, 'number', true },
    editor_state_debounce_ms = { user.editor_state_debounce_ms, 'number', true },
    approval_timeout_ms = { user.approval_timeout_ms, 'number', true },
    transcript_limit = { user.transcript_limit, 'number', true },
    mappings = { user.mappings, 'boolean', true },
  })
  local merged = vim.tbl_extend('force', vim.deepcopy(M.defaults), user)
  if type(merged.cmd) == 'string' then
    merged.cmd = vim.split(merged.cmd, '%s+', { trimempty = true })
  end
  M.options = merged
  return merged
end

--- The server command: the `cmd` option, else `relavium-lsp serve` on PATH, else the
--- workspace's own virtualenv (`<root>/.venv/bin/relavium-lsp serve`). Nil when none exists.
function M.server_command(root)
  if M.options.cmd then
    return M.options.cmd
  end
  if vim.fn.executable('relavium-lsp') == 1 then
    return { 'relavium-lsp', 'serve' }
  end
  local local_venv = root .. '/.venv/bin/relavium-lsp'
  if vim.fn.executable(local_venv) == 1 then
    return { local_venv, 'serve' }
  end
  return nil
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
