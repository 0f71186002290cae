--- Chats: one buffer per session, fed by the session's ordered event stream.
---
--- A chat is created first (so the user sees something at once) and bound to its session
--- when `startSession` / `resumeSession` answers. Events that arrive before that answer (the
--- server announces `session:started` before it replies) wait in a small orphan buffer.
---
--- A message is never dropped: one sent before the session exists or while a turn runs is
--- queued, shown under the chat as queued, and sent when the turn ends (however it ends).
local chat_buffer = require('relavium.chat_buffer')
local client = require('relavium.client')
local config = require('relavium.config')
local format = require('relavium.format')
local output = require('relavium.output')
local protocol = require('relavium.protocol')
local render = require('relavium.render')
local sequencer = require('relavium.sequencer')
local ui = require('relavium.ui')

local M = {}

local MAX_ORPHAN_EVENTS = 2000
-- A running turn that has been quiet this long is checked against the event log (a lost
-- last event would otherwise leave it running forever); the wait doubles up to the maximum.
local QUIET_CHECK_MS = 2000
local MAX_QUIET_CHECK_MS = 30000
local uv = vim.uv or vim.loop

local chats_by_session = {}
local chats_by_buffer = {}
local orphans = {} -- session id -> events seen before any chat was bound to it
local orphan_count = 0
local last_used = nil

local Chat = {}
Chat.__index = Chat

local function forget(chat)
  chats_by_buffer[chat.buffer.bufnr] = nil
  if chat.session_id and chats_by_session[chat.session_id] == chat then
    chats_by_session[chat.session_id] = nil
  end
  if last_used == chat then
    last_used = nil
  end
end

local function prompt_and_send(chat)
  vim.ui.input({ prompt = 'You: ' }, function(text)
    if text and text ~= '' then
      M.send(text, chat)
    end
  end)
end

local function new_chat(label)
  local chat = setmetatable({
    buffer = chat_buffer.new(label),
    session_id = nil,
    agent = nil,
    busy = false,
    queued = {}, -- { text, attachments } sent before the session existed or while a turn ran
    total_cost = 0,
    completed_turns = 0,
  }, Chat)
  render.reset_turn(chat)
  local bufnr = chat.buffer.bufnr
  chats_by_buffer[bufnr] = chat
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = bufnr,
    callback = function()
      forget(chat)
    end,
  })
  if config.options.mappings then
    vim.keymap.set('n', '<CR>', function()
      prompt_and_send(chat)
    end, { buffer = bufnr, desc = 'Relavium: send a message' })
    vim.keymap.set('n', 'i', function()
      require('relavium.compose').open(chat)
    end, { buffer = bufnr, desc = 'Relavium: compose a message (@file, #selection, /commands)' })
    vim.keymap.set('n', 'yc', function()
      require('relavium.chat_actions').yank_code_block(chat)
    end, { buffer = bufnr, desc = 'Relavium: yank the code block under (or above) the cursor' })
    vim.keymap.set('n', '<C-c>', function()
      M.abort(chat)
    end, { buffer = bufnr, desc = 'Relavium: abort the running turn' })
  end
  last_used = chat
  return chat
end

local function fetch_backlog(session_id)
  return function(after, limit, done)
    client.request(protocol.SESSION_EVENTS, {
      sessionId = session_id,
      afterSequence = after,
      limit = limit,
    }, function(err, result)
      if err or type(result) ~= 'table' or type(result.events) ~= 'table' then
        done(nil)
      else
        done(result.events)
      end
    end)
  end
end

--- Bind the chat to its session and start applying events after `last_sequence`.
function Chat:bind(session_id, agent, last_sequence)
  self.session_id = session_id
  self.agent = agent
  chats_by_session[session_id] = self
  self.sequencer = sequencer.new(function(event)
    local turn = self.turn
    render.event(self, event)
    output.on_event(event)
    if event.type == protocol.EVENT_TYPE.SESSION_TURN_COMPLETED then
      ui.cancel_approvals(session_id) -- a question of the ended turn waits for nothing now
      if turn.tools_ran and turn.user_sequence then
        -- "2 files changed +5 −1" under the turn, before the next queued message
        require('relavium.review').summarize(self, turn.user_sequence, function()
          M.send_queued(self)
        end)
      else
        M.send_queued(self)
      end
    end
  end, fetch_backlog(session_id))
  for _, event in ipairs(orphans[session_id] or {}) do
    self.sequencer:accept(event)
  end
  orphan_count = orphan_count - #(orphans[session_id] or {})
  orphans[session_id] = nil
  self.sequencer:start(last_sequence)
  M.send_queued(self)
end

local function keep_orphan(event)
  if orphan_count >= MAX_ORPHAN_EVENTS then
    orphans = {}
    orphan_count = 0
  end
  local list = orphans[event.sessionId] or {}
  orphans[event.sessionId] = list
  table.insert(list, event)
  orphan_count = orphan_count + 1
end

--- `relavium/sessionEvent` handler: route the envelope to its chat's sequencer.
function M.on_session_event(event)
  if type(event) ~= 'table' or type(event.sessionId) ~= 'string' then
    return
  end
  local chat = chats_by_session[event.sessionId]
  if chat and chat.sequencer then
    chat.last_event_at = uv.now()
    if chat.buffer:is_valid() then
      chat.sequencer:accept(event)
    end
  else
    keep_orphan(event) -- its chat is still waiting for startSession / resumeSession
  end
end

--- The server exited (`restarted`: a new one was started in its place): a turn still
--- running in a chat will never complete, and its questions wait for nothing.
function M.on_server_exit(restarted)
  ui.cancel_approvals(nil)
  for _, chat in pairs(chats_by_buffer) do
    if chat.busy and chat.buffer:is_valid() then
      render.turn_stopped(chat, restarted)
      M.send_queued(chat)
    end
  end
end

--- The chat of the current buffer, else the one used last.
function M.current()
  local chat = chats_by_buffer[vim.api.nvim_get_current_buf()]
  if chat then
    return chat
  end
  if last_used and last_used.buffer:is_valid() then
    return last_used
  end
  return nil
end

--- The chat bound to a session, if any.
function M.for_session(session_id)
  return chats_by_session[session_id]
end

--- Open a chat split and start a session with `agent` (default: the `agent` option);
--- `on_started(chat)` runs once the session exists.
function M.open(agent, on_started)
  local chat = new_chat('new')
  chat.buffer:show(config.options.chat_split, config.options.chat_size)
  render.notice(chat, 'starting a session…')
  local params = { source = 'neovim' }
  params.agentRef = (agent and agent ~= '') and agent or config.options.agent
  local started = require('relavium.broad_dir').start_session(params, function(err, result)
    if err or type(result) ~= 'table' then
      render.request_error(chat, err or { message = 'no result' })
      return
    end
    chat.buffer:clear()
    render.header(chat, result)
    chat.model = result.model
    chat:bind(result.sessionId, result.agentRef, 0)
    if on_started then
      on_started(chat)
    end
  end)
  if not started then
    render.notice(chat, '✗ the relavium server could not be started')
  end
  return chat
end

-- While `chat.busy`: after each quiet period, fetch what the log holds past the last event.
local function watch_turn(chat)
  if chat.watch then
    return
  end
  local timer = uv.new_timer()
  chat.watch = timer
  local wait = QUIET_CHECK_MS
  local function check()
    if not chat.busy or not chat.buffer:is_valid() then
      timer:stop()
      timer:close()
      chat.watch = nil
      return
    end
    if uv.now() - (chat.last_event_at or 0) >= wait then
      chat.sequencer:refresh()
      wait = math.min(wait * 2, MAX_QUIET_CHECK_MS)
    end
    timer:start(wait, 0, vim.schedule_wrap(check))
  end
  timer:start(wait, 0, vim.schedule_wrap(check))
end

local function show_queue(chat)
  local lines = {}
  for _, message in ipairs(chat.queued) do
    table.insert(lines, '◦ queued: ' .. format.one_line(message.text, 200))
  end
  chat.buffer:set_footer(lines)
end

local function dispatch(chat, text, attachments)
  render.user_message(chat, text)
  chat.busy = true
  chat.last_user = { text = text }
  local params = { sessionId = chat.session_id, text = text, wait = false }
  if attachments and #attachments > 0 then
    params.attachments = attachments
    render.notice(chat, require('relavium.compose').attachment_summary(attachments))
  end
  -- `wait = false`: the server answers once the turn has started; the turn then streams in
  -- as events and ends with `session:turn_completed` (no request stays open for a turn).
  client.request(protocol.SEND_MESSAGE, params,
    function(err, result)
      if not chat.buffer:is_valid() then
        return
      end
      if err then
        chat.busy = false
        render.request_error(chat, err)
        M.send_queued(chat)
      elseif chat.busy then
        watch_turn(chat)
      end
    end)
end

--- Send the oldest queued message of `chat` when it can be sent now.
function M.send_queued(chat)
  if chat.busy or not chat.session_id or #chat.queued == 0 or not chat.buffer:is_valid() then
    return
  end
  local message = table.remove(chat.queued, 1)
  show_queue(chat)
  dispatch(chat, message.text, message.attachments)
end

--- Send `text` in `chat` (default: the current chat, opening one when there is none), with
--- optional `attachments` (content parts: the composer's @file / #selection context). While
--- the session is starting or a turn runs, the message waits in the chat's queue.
function M.send(text, chat, attachments)
  chat = chat or M.current() or M.open(nil)
  last_used = chat
  table.insert(chat.queued, { text = text, attachments = attachments })
  show_queue(chat)
  M.send_queued(chat)
  return chat
end

--- Abort the running turn of `chat` (default: the current chat).
function M.abort(chat)
  chat = chat or M.current()
  if not chat or not chat.session_id then
    vim.notify('relavium: no chat session to abort', vim.log.levels.WARN)
    return
  end
  client.request(protocol.ABORT_TURN, { sessionId = chat.session_id }, function(err, result)
    if err then
      render.request_error(chat, err)
    elseif type(result) == 'table' and not result.aborted then
      vim.notify('relavium: no turn is running', vim.log.levels.INFO)
    end
  end)
end

--- A chat for an existing session, bound after its transcript has been rendered by `fill`.
--- `fill(chat, done)` must call `done(last_event_sequence)`.
function M.open_existing(session_id, fill)
  local existing = chats_by_session[session_id]
  if existing and existing.buffer:is_valid() then
    existing.buffer:show(config.options.chat_split, config.options.chat_size)
    last_used = existing
    return existing
  end
  local chat = new_chat(session_id:sub(1, 8))
  chat.buffer:show(config.options.chat_split, config.options.chat_size)
  render.notice(chat, 'resuming ' .. session_id .. '…')
  -- Claim the id now so live events wait in the sequencer, not among the orphans.
  chats_by_session[session_id] = chat
  fill(chat, function(agent, last_event_sequence)
    chat:bind(session_id, agent, last_event_sequence)
  end)
  return chat
end

return M
