--- relavium.nvim: AI agent chat sessions from relavium-lsp, over Neovim's LSP client.
---
--- `require('relavium').setup{...}` starts the server for the workspace root and attaches
--- it to the workspace's file buffers; the functions below back the `:Relavium*` commands.
--- See `:help relavium`.
local M = {}

local initialized = false

local function ensure_setup()
  if not initialized then
    M.setup({})
  end
end

--- Configure the plugin and start the server (see `:help relavium-setup`).
function M.setup(options)
  local config = require('relavium.config')
  local client = require('relavium.client')
  local context = require('relavium.context')
  config.apply(options)
  initialized = true
  local group = vim.api.nvim_create_augroup('relavium', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'FileType' }, {
    group = group,
    callback = function(event)
      client.attach(event.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorMoved' }, {
    group = group,
    callback = function()
      context.schedule_update()
    end,
  })
  local _, message = client.start()
  if message then
    vim.notify('relavium: ' .. message, vim.log.levels.WARN)
    return
  end
  context.send_now(vim.api.nvim_get_current_buf(), nil)
end

--- The `agent=… model=…` words of `:RelaviumChat` (a bare word is the agent).
function M.parse_chat_args(args)
  local parsed = {}
  for word in (args or ''):gmatch('%S+') do
    local key, value = word:match('^(%a+)=(.+)$')
    if key == 'agent' or key == 'model' then
      parsed[key] = value
    elseif not key then
      parsed.agent = word
    end
  end
  return parsed
end

--- `:RelaviumChat [agent=…] [model=…]`: a new chat split with a new session.
function M.chat(args)
  ensure_setup()
  local parsed = M.parse_chat_args(args)
  local on_started = nil
  if parsed.model then
    on_started = function(chat)
      require('relavium.chat_actions').set_model(chat, parsed.model)
    end
  end
  return require('relavium.chat').open(parsed.agent, on_started)
end

--- `:RelaviumSetup`: set up a real model (see `:help :RelaviumSetup`).
function M.setup_model(done)
  ensure_setup()
  require('relavium.model_setup').run(done)
end

--- `:RelaviumModel [model]`: switch the current chat's model (a picker without an argument).
function M.model(model)
  ensure_setup()
  local chat = require('relavium.chat').current()
  local actions = require('relavium.chat_actions')
  if model and model ~= '' then
    actions.set_model(chat, model)
  else
    actions.pick_model(chat)
  end
end

--- `:RelaviumAgent [agent]`: a new chat with an agent (a picker without an argument).
function M.agent(agent)
  ensure_setup()
  if agent and agent ~= '' then
    return require('relavium.chat').open(agent)
  end
  require('relavium.chat_actions').pick_agent()
end

--- `:RelaviumRetry` / `:RelaviumEdit`: the last message again / edited, in a fork before it.
function M.retry()
  ensure_setup()
  require('relavium.chat_actions').retry(require('relavium.chat').current())
end

function M.edit()
  ensure_setup()
  require('relavium.chat_actions').edit(require('relavium.chat').current())
end

--- `:RelaviumCompose`: a composer for the current chat (@file, #selection, /commands).
function M.compose()
  ensure_setup()
  local chat = require('relavium.chat').current() or require('relavium.chat').open(nil)
  return require('relavium.compose').open(chat)
end

--- `:RelaviumYank`: yank the code block under the cursor (or the last one) of the chat.
function M.yank()
  return require('relavium.chat_actions').yank_code_block(require('relavium.chat').current())
end

--- `:RelaviumSend {text}`: send in the current chat (one is opened when needed).
function M.send(text)
  ensure_setup()
  return require('relavium.chat').send(text)
end

--- `:'<,'>RelaviumAsk {text}`: ask about lines `first`..`last` of the current file.
function M.ask(text, first, last)
  ensure_setup()
  return require('relavium.context').ask(text, first, last)
end

--- `:RelaviumAbort`: abort the current chat's running turn.
function M.abort()
  ensure_setup()
  require('relavium.chat').abort()
end

--- `:RelaviumOutput [callId]`: the live output of the latest (or that) command.
function M.output(call_id)
  ensure_setup()
  return require('relavium.output').open(call_id)
end

--- `:RelaviumMemory`: the workspace's long-term memory in a buffer (`:w` saves it).
function M.memory()
  ensure_setup()
  return require('relavium.memory').open()
end

function M.memory_proposals()
  ensure_setup()
  return require('relavium.memory_proposals').open()
end

--- `:RelaviumSessions`: search this workspace's sessions and resume one.
function M.sessions()
  ensure_setup()
  require('relavium.sessions').pick()
end

--- `:RelaviumSessionList`: a list of this workspace's sessions that updates by itself.
function M.session_list()
  ensure_setup()
  return require('relavium.session_list').open()
end

--- `:RelaviumResume {id}`: reopen a session with its transcript.
function M.resume(session_id)
  ensure_setup()
  return require('relavium.sessions').resume(session_id)
end

--- `:RelaviumExport [workflow|jsonl]`: export the current chat's session to a new buffer.
function M.export(export_format)
  ensure_setup()
  require('relavium.sessions').export(export_format)
end

--- `:RelaviumReplay [auto|recorded|live|mixed {tool}…]`: replay the chat's session from its
--- recordings into a new session, opened in a chat.
function M.replay(args)
  ensure_setup()
  require('relavium.sessions').replay(args)
end

--- `:RelaviumRewind [message]`: rewind files and conversation to before a turn.
function M.rewind(to_sequence)
  ensure_setup()
  require('relavium.rewind').pick(tonumber(to_sequence))
end

--- `:RelaviumChanges [message]`: review the files a turn changed (quickfix list, diffs,
--- keep / undo per file).
function M.changes(user_sequence)
  ensure_setup()
  require('relavium.review').open(tonumber(user_sequence))
end

--- Stop the server; `on_stopped()` runs when its process has exited.
function M.stop(on_stopped)
  require('relavium.client').stop(on_stopped)
end

--- The chat of the current buffer (or the last one used), or nil.
function M.current_chat()
  return require('relavium.chat').current()
end

return M
