--- Finding, resuming and exporting sessions.
local chat_module = require('relavium.chat')
local client = require('relavium.client')
local config = require('relavium.config')
local format = require('relavium.format')
local plan = require('relavium.plan')
local protocol = require('relavium.protocol')
local render = require('relavium.render')
local ui = require('relavium.ui')

local M = {}

local TRANSCRIPT_PAGE = 100

-- Page backwards through the transcript until it is complete or `limit` messages are held;
-- `done(messages_oldest_first, truncated)` or `done(nil, nil, err)`.
local function load_transcript(session_id, limit, done)
  local collected = {}
  local function page(before)
    local params = { sessionId = session_id, limit = math.min(TRANSCRIPT_PAGE, limit) }
    params.beforeSequence = before
    client.request(protocol.GET_TRANSCRIPT, params, function(err, result)
      if err or type(result) ~= 'table' then
        done(nil, nil, err or { message = 'no transcript' })
        return
      end
      local messages = result.messages or {}
      -- pages come oldest first; earlier pages go in front
      local merged = vim.list_extend(vim.list_extend({}, messages), collected)
      collected = merged
      if result.hasMore and #messages > 0 and #collected < limit then
        page(messages[1].sequenceNumber)
      else
        done(collected, result.hasMore and #messages > 0)
      end
    end)
  end
  page(nil)
end

--- Resume a session into a chat: reload it on the server, render its transcript, then
--- follow its live events from the server's last event sequence.
function M.resume(session_id)
  if type(session_id) ~= 'string' or session_id == '' then
    vim.notify('relavium: :RelaviumResume needs a session id', vim.log.levels.ERROR)
    return nil
  end
  return chat_module.open_existing(session_id, function(chat, bind)
    client.request(protocol.RESUME_SESSION, { sessionId = session_id }, function(err, resumed)
      if err or type(resumed) ~= 'table' then
        render.request_error(chat, err or { message = 'no result' })
        return
      end
      local record = resumed.session or {}
      chat.agent = record.agentSlug
      load_transcript(session_id, config.options.transcript_limit, function(messages, truncated,
                                                                            load_err)
        chat.buffer:clear()
        render.header(chat, {
          agentRef = record.agentSlug,
          model = record.modelId,
          sessionId = record.id or session_id,
          title = record.title,
          context = record.context,
        })
        if load_err then
          render.request_error(chat, load_err)
          messages = resumed.messages or {}
        end
        if truncated then
          render.notice(chat, '── earlier messages not shown ──')
        end
        for _, message in ipairs(messages) do
          render.message(chat, message)
        end
        plan.show(chat, resumed.plan)
        render.notice(chat, '')
        render.notice(chat, '── resumed ──')
        if record.status == 'streaming' or record.status == 'awaiting_approval' then
          -- Another window runs a turn: it streams in here; sending waits until it ends.
          render.notice(chat, '── a turn is running in another window ──')
        end
        render.reset_turn(chat)
        bind(record.agentSlug, resumed.lastEventSequence or 0)
        if type(record.source) == 'table' and record.source.kind == 'replay' then
          M.show_finished_replay(chat, session_id)
        end
      end)
    end)
  end)
end

--- A replay session opened after its replay ended says how it went, from its audit row
--- (one still running says so itself with its `session:replay_completed` event; the row is
--- written before that event, so one of the two always shows).
function M.show_finished_replay(chat, replay_session_id)
  client.request(protocol.LIST_REPLAYS, { sessionId = replay_session_id }, function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    for _, row in ipairs(result.replays or {}) do
      if row.replaySessionId == replay_session_id and row.status ~= 'running' then
        local verdict = row.status == 'matched' and 'identical to the original'
          or row.status == 'stopped' and 'stopped before its last turn'
          or (tostring(row.differences) .. ' difference(s)')
        render.replay_summary(chat, row.mode, row.turnsReplayed, verdict, row.recordedToolCalls,
          row.liveToolCalls)
      end
    end
  end)
end

--- One line describing a session (the picker's items and the session list's lines).
function M.describe(session)
  local label = session.title or session.preview or '(untitled)'
  return string.format('%s · %s · %s · %d messages · %s', format.one_line(label, 60),
    format.one_line(session.agentRef, 40), format.one_line(session.status, 20),
    session.messageCount or 0, format.one_line(session.updatedAt or '', 40))
end

--- Ask for a search text, list matching sessions of this workspace, resume the chosen one.
function M.pick()
  vim.ui.input({ prompt = 'Search sessions (empty for all): ' }, function(query)
    if query == nil then
      return
    end
    local params = { workspace = client.root(), limit = 100 }
    if query ~= '' then
      params.query = query
    end
    client.request(protocol.LIST_SESSIONS, params, function(err, result)
      if err or type(result) ~= 'table' then
        vim.notify('relavium: ' .. ((err and err.message) or 'listSessions failed'),
          vim.log.levels.ERROR)
        return
      end
      local sessions = result.sessions or {}
      if #sessions == 0 then
        vim.notify('relavium: no sessions found', vim.log.levels.INFO)
        return
      end
      local tree = require('relavium.session_tree')
      -- Delegated children right under the session that started them.
      vim.ui.select(tree.nest(sessions), {
        prompt = 'Resume a Relavium session',
        kind = 'relavium_session',
        format_item = function(entry)
          return tree.prefix(entry.depth) .. M.describe(entry.session)
        end,
      }, function(choice)
        if choice then
          M.resume(choice.session.id)
        end
      end)
    end)
  end)
end

--- Export the current chat's session (`workflow` YAML by default) into a new unnamed
--- buffer: the server opens it through `relavium/openUntitled`, else the result's text is.
function M.export(export_format)
  local chat = chat_module.current()
  if not chat or not chat.session_id then
    vim.notify('relavium: no chat session to export', vim.log.levels.WARN)
    return
  end
  export_format = (export_format and export_format ~= '') and export_format or 'workflow'
  client.request(protocol.EXPORT_SESSION, {
    sessionId = chat.session_id,
    format = export_format,
    open = true,
  }, function(err, result)
    if err or type(result) ~= 'table' then
      render.request_error(chat, err or { message = 'no result' })
      return
    end
    if not result.opened then
      ui.open_scratch(result.content or '', export_format == 'jsonl' and 'jsonl' or 'yaml',
        result.suggestedPath)
    end
  end)
end

--- Replay the current chat's session against its recordings into a new session, and open
--- that one in a chat (its turns stream like any chat's). `args`: a tool replay mode
--- (`auto` by default, `recorded`, `live`, or `mixed` followed by the tools to run again).
function M.replay(args)
  local chat = chat_module.current()
  if not chat or not chat.session_id then
    vim.notify('relavium: no chat session to replay', vim.log.levels.WARN)
    return
  end
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  local params = { sessionId = chat.session_id, toolReplayMode = words[1] or 'auto' }
  if #words > 1 then
    params.liveTools = { unpack(words, 2) }
  end
  client.request(protocol.REPLAY_SESSION, params, function(err, result)
    if err or type(result) ~= 'table' then
      render.request_error(chat, err or { message = 'no result' })
      return
    end
    M.resume(result.replaySessionId)
  end)
end

return M
