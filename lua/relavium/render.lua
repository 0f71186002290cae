--- From session events and stored messages to chat-buffer lines.
---
--- Layout: a `## You` block per user message (`## from <agent> · session <id>` for a peer
--- message), a `## <agent>` block per assistant turn whose text streams in as it arrives, tool
--- calls / results / reasoning as folded blocks, and one `──` line when a turn completes (stop
--- reason, tokens, cost) or an error line with its code.
---
--- A turn that ends without finishing its work says so where the work was shown: aborted,
--- its `## You` heading gets `· cancelled`; a tool call that got no result is marked
--- `· cancelled` (abort) or `· interrupted` (the server went away); a question still waiting
--- for the user is marked `· Cancelled` (docs/design.md §4.4).
local format = require('relavium.format')
local peer = require('relavium.peer')
local plan = require('relavium.plan')
local protocol = require('relavium.protocol')

local EVENT = protocol.EVENT_TYPE
local PART = protocol.CONTENT_PART_TYPE
local ROLE = protocol.MESSAGE_ROLE

local M = {}

local function assistant_label(chat)
  return '## ' .. format.one_line(chat.agent or 'assistant', 80)
end

--- Start the assistant's part of the turn once, on its first output.
local function ensure_assistant_header(chat)
  local turn = chat.turn
  if not turn.header_shown then
    turn.header_shown = true
    chat.buffer:append_lines({ '', assistant_label(chat) })
    chat.block = 'header'
  end
end

local function begin_text(chat)
  ensure_assistant_header(chat)
  if chat.block ~= 'text' then
    -- text starts on a fresh line: right under the header, or after a blank one
    chat.buffer:append_lines(chat.block == 'header' and { '' } or { '', '' })
    chat.block = 'text'
  end
end

-- Returns the number of the block's first line.
local function append_block(chat, lines, kind)
  ensure_assistant_header(chat)
  local first = chat.buffer:append_lines(lines, #lines > 1 and 'block' or nil)
  chat.block = kind
  return first
end

--- A new turn begins (our own send, or another client's).
function M.reset_turn(chat)
  chat.turn = {
    header_shown = false,
    cost = 0,
    priced = true,
    user_line = nil, -- the line of this turn's `## You` heading
    open_calls = {}, -- callId -> first line of a tool call that has no result yet
    approvals = {}, -- callId -> line of a question still waiting for the user
    answered = {}, -- callId -> true once the user answered it
  }
  chat.block = nil
end

--- The user's message, rendered when it is sent; `heading` replaces `## You` (a peer's).
function M.user_message(chat, text, heading)
  M.reset_turn(chat)
  local lines = { '', heading or '## You' }
  vim.list_extend(lines, format.lines(text))
  chat.turn.user_line = chat.buffer:append_lines(lines) + 1
  chat.block = 'user'
end

--- The user answered the question about call `call_id`.
function M.approval_answered(chat, call_id, decision, tool_id)
  chat.turn.approvals[call_id] = nil
  chat.turn.answered[call_id] = true
  M.notice(chat, string.format('  → %s %s', decision, format.one_line(tool_id, 80)))
end

-- Label what the ending turn left unfinished: tool calls without a result get `call_label`,
-- questions nobody answered `· Cancelled`.
local function mark_unfinished(chat, call_label)
  local turn = chat.turn
  for _, lnum in pairs(turn.open_calls) do
    chat.buffer:mark(lnum, ' · ' .. call_label)
  end
  for _, lnum in pairs(turn.approvals) do
    chat.buffer:mark(lnum, ' · Cancelled')
  end
  turn.open_calls = {}
  turn.approvals = {}
end

--- A one-line notice (errors of requests, status changes).
function M.notice(chat, text)
  chat.buffer:append_lines({ format.one_line(text, 1000) })
  chat.block = 'notice'
end

local function error_line(error_info)
  -- a JSON-RPC error carries its stable code in `data.code`; a turn's error in `code`
  local code = (type(error_info.data) == 'table' and error_info.data.code) or error_info.code
  local line = string.format('✗ error [%s]: %s', tostring(code or protocol.ERROR_CODE.INTERNAL),
    format.one_line(error_info.message or 'unknown error', 500))
  if error_info.retryable then
    line = line .. ' (retryable)'
  end
  return line
end

--- A failed request (JSON-RPC error) shown in the chat with its `data.code`.
function M.request_error(chat, err)
  chat.buffer:append_lines({ error_line(err) })
  chat.block = 'notice'
end

local handlers = {}

handlers[EVENT.SESSION_TURN_STARTED] = function(chat, event)
  if chat.block ~= 'user' then
    M.reset_turn(chat) -- a turn this client did not start (another editor, a replay)
  end
  if chat.last_user and event.userMessageSequence then
    chat.last_user.sequence = event.userMessageSequence -- what :RelaviumRetry / Edit fork before
  end
  chat.turn.user_sequence = event.userMessageSequence
  chat.busy = true -- also a turn another window runs: a message sent meanwhile waits for it
end

handlers[EVENT.AGENT_TOKEN] = function(chat, event)
  if event.model then
    chat.turn.model = event.model
  end
  begin_text(chat)
  chat.buffer:stream(event.token or '', false)
end

handlers[EVENT.AGENT_REASONING] = function(chat, event)
  if chat.block ~= 'reasoning' then
    append_block(chat, { '▸ thinking', '    ' }, 'reasoning')
  end
  chat.buffer:stream((event.text or ''):gsub('\n', '\n    '), true)
end

handlers[EVENT.AGENT_TOOL_CALL] = function(chat, event)
  chat.tool_names = chat.tool_names or {}
  if type(event.callId) == 'string' then
    chat.tool_names[event.callId] = event.toolId
  end
  local lines = {
    string.format('▸ %s %s', format.one_line(event.toolId, 80),
      format.tool_input_summary(event.toolInput)),
    '    call ' .. format.one_line(event.callId, 200),
  }
  vim.list_extend(lines, format.tool_input_lines(event.toolInput))
  local first = append_block(chat, lines, 'tool')
  if type(event.callId) == 'string' then
    chat.turn.open_calls[event.callId] = first
  end
end

handlers[EVENT.AGENT_APPROVAL_REQUESTED] = function(chat, event)
  local line = append_block(chat, {
    string.format('? approval: %s (%s) %s', format.one_line(event.toolId, 80),
      format.one_line(event.action, 40), format.one_line(format.preview_target(event.preview))),
  }, 'tool')
  local call_id = event.callId
  if type(call_id) == 'string' and not chat.turn.answered[call_id] then
    chat.turn.approvals[call_id] = line
  end
end

handlers[EVENT.AGENT_TOOL_RESULT] = function(chat, event)
  local turn = chat.turn
  turn.tools_ran = turn.tools_ran or event.success == true
  if type(event.callId) == 'string' then
    turn.open_calls[event.callId] = nil
    local question = turn.approvals[event.callId]
    if question and event.errorCode == protocol.ERROR_CODE.CANCELLED then
      chat.buffer:mark(question, ' · Cancelled') -- aborted while it waited for the user
    end
    turn.approvals[event.callId] = nil
  end
  local status = event.success and '✓' or '✗'
  local header = string.format('◂ %s %s %s', format.one_line(event.toolId, 80), status,
    format.duration(event.durationMs))
  if event.errorCode then
    header = header .. ' [' .. format.one_line(event.errorCode, 40) .. ']'
  end
  local lines = { header }
  vim.list_extend(lines, format.body(event.outputSummary or ''))
  -- The change a file tool made (cut by the server with a `[... diff cut …]` line): shown
  -- even when nobody was asked about it ("always allow").
  local diff = event.diff
  if type(diff) == 'table' and type(diff.unified) == 'string' and diff.unified ~= '' then
    vim.list_extend(lines, format.body((diff.unified:gsub('\n$', ''))))
  end
  append_block(chat, lines, 'tool')
end

handlers[EVENT.AGENT_PLAN_UPDATED] = function(chat, event)
  append_block(chat, plan.lines(event.entries, event.explanation), 'tool')
end

handlers[EVENT.COST_UPDATED] = function(chat, event)
  local turn = chat.turn
  turn.cost = turn.cost + (event.costMicrocents or 0)
  turn.priced = turn.priced and event.priced ~= false
  chat.total_cost = event.cumulativeCostMicrocents or chat.total_cost
end

handlers[EVENT.SESSION_TURN_COMPLETED] = function(chat, event)
  local turn = chat.turn
  local used = event.tokensUsed or {}
  local aborted = event.stopReason == protocol.STOP_REASON.ABORTED
  if aborted and turn.user_line then
    chat.buffer:mark(turn.user_line, ' · cancelled')
  end
  mark_unfinished(chat, aborted and 'cancelled' or 'interrupted')
  local lines = { '' }
  if event.error then
    table.insert(lines, error_line(event.error))
  end
  -- The model that answered (after a switch, or a fallback) settles with the turn.
  if turn.model then
    chat.model = turn.model
  end
  table.insert(lines, string.format('── %s · %s in / %s out tokens · %s · total %s · %s ──',
    format.one_line(event.stopReason, 40), format.tokens(used.inputTokens),
    format.tokens(used.outputTokens), format.cost(turn.cost, turn.priced),
    format.cost(chat.total_cost or 0, turn.priced), format.one_line(chat.model or 'default model', 80)))
  chat.buffer:append_lines(lines)
  chat.block = nil
  chat.completed_turns = (chat.completed_turns or 0) + 1
  chat.busy = false
  M.reset_turn(chat)
end

--- The server went away during the turn: it will never complete.
function M.turn_stopped(chat, restarted)
  mark_unfinished(chat, 'interrupted')
  chat.buffer:append_lines({ '', restarted
    and '✗ The server restarted — this turn was stopped · :RelaviumRetry sends it again'
    or '✗ The server stopped — this turn was stopped · :RelaviumRetry starts it and sends again' })
  chat.block = nil
  chat.busy = false
  M.reset_turn(chat)
end

handlers[EVENT.SESSION_COMPACTING] = function(chat, event)
  M.notice(chat, '… compacting the history (' .. tostring(event.reason) .. ')')
end

local function compaction_done(chat, event, verb)
  -- inside a turn (reason context_window) it also says what left the model's view
  local cleared = ''
  if event.clearedToolResults or event.summarizedMessages then
    cleared = string.format(', %d tool outputs cleared, %d messages summarised',
      event.clearedToolResults or 0, event.summarizedMessages or 0)
  end
  M.notice(chat, string.format('── %s: %d → %d messages, %s → %s tokens%s ──', verb,
    event.messagesBefore or 0, event.messagesAfter or 0, format.tokens(event.tokensBefore),
    format.tokens(event.tokensAfter), cleared))
end

handlers[EVENT.SESSION_COMPACTED] = function(chat, event)
  compaction_done(chat, event, 'compacted')
end

handlers[EVENT.SESSION_TRIMMED] = function(chat, event)
  compaction_done(chat, event, 'trimmed')
end

handlers[EVENT.SESSION_BUDGET_WARNING] = function(chat, event)
  M.notice(chat, string.format('! budget: spent %s of %s', format.cost(event.spentMicrocents),
    format.cost(event.limitMicrocents)))
end

handlers[EVENT.SESSION_EXPORTED] = function(chat, event)
  M.notice(chat, '── exported (' .. tostring(event.format) .. ') to '
    .. format.one_line(event.workflowPath) .. ' ──')
end

handlers[EVENT.SESSION_CHANGES_REVIEWED] = function(chat, event)
  local paths = type(event.paths) == 'table' and event.paths or {}
  M.notice(chat, string.format('  %s %s (the turn of message %s)',
    event.decision == protocol.REVIEW_DECISION.UNDO and '⟲ undone:' or '✓ kept:',
    format.one_line(table.concat(paths, ', '), 300), tostring(event.userSequence)))
end

--- How a replay went, said once per chat (from its event, or from its audit row when the
--- chat was opened after the replay ended).
function M.replay_summary(chat, mode, turns, verdict, recorded, live)
  if chat.replay_reported then
    return false
  end
  chat.replay_reported = true
  M.notice(chat, string.format('── replay (%s): %s turn(s), %s; tool calls: %s recorded, %s run again ──',
    tostring(mode), tostring(turns), verdict, tostring(recorded), tostring(live)))
  return true
end

handlers[EVENT.SESSION_REPLAY_COMPLETED] = function(chat, event)
  local report = type(event.report) == 'table' and event.report or {}
  local differences = type(report.differences) == 'table' and report.differences or {}
  local verdict = report.matches and 'identical to the original'
    or (#differences .. ' difference(s)')
  if report.stopped then
    verdict = verdict .. ', stopped before its last turn'
  end
  if M.replay_summary(chat, report.mode, report.turnsReplayed, verdict,
      report.recordedToolCalls, report.liveToolCalls) then
    for _, difference in ipairs(differences) do
      M.notice(chat, '  - ' .. format.one_line(tostring(difference), 300))
    end
  end
end

handlers[EVENT.SESSION_CANCELLED] = function(chat)
  M.notice(chat, '── session ended ──')
end

--- Render one session event (unknown types are ignored: newer servers may add some).
function M.event(chat, event)
  local handler = handlers[event.type]
  if handler then
    handler(chat, event)
  end
end

--- The header of a chat: agent, model, session and context.
function M.header(chat, info)
  local context = info.context or {}
  chat.working_dir = context.workingDir -- what the server's relative paths are relative to
  local where = format.one_line(context.workingDir or '')
  if context.gitRef then
    where = where .. ' (' .. format.one_line(context.gitRef, 80) .. ')'
  end
  if context.activeFile then
    where = where .. ' · ' .. format.one_line(context.activeFile)
    local selection = context.selection
    if type(selection) == 'table' and selection.startLine then
      where = where .. string.format(':%d-%d', selection.startLine, selection.endLine)
    end
  end
  local lines = {
    string.format('Relavium · agent %s · model %s', format.one_line(info.agentRef or '?', 80),
      format.one_line(info.model or 'default', 80)),
    'session ' .. format.one_line(info.sessionId or '?', 80) .. (info.title and
      (' · ' .. format.one_line(info.title, 120)) or ''),
    where,
  }
  chat.buffer:append_lines(lines)
  chat.block = nil
end

local function text_of(parts)
  local texts = {}
  for _, part in ipairs(parts or {}) do
    if part.type == PART.TEXT then
      table.insert(texts, part.text)
    end
  end
  return table.concat(texts, '')
end

--- One stored message of a transcript (resume): same layout as the live stream.
function M.message(chat, message)
  local role = message.role
  if role == ROLE.USER then
    local text = text_of(message.content)
    chat.last_user = { text = text, sequence = message.sequenceNumber }
    -- another session's agent sent it: say who, so it is not mistaken for the user's own
    local origin, body = peer.origin(text, message.agentSlug)
    if origin then
      M.user_message(chat, body, format.one_line(peer.heading(origin), 200))
    else
      M.user_message(chat, text)
    end
    return
  end
  if role == ROLE.ASSISTANT and message.modelId then
    chat.model = message.modelId
  end
  if role == ROLE.SYSTEM then
    if message.compaction then
      M.notice(chat, string.format('── earlier messages compacted (through #%d) ──',
        message.compaction.droppedThroughSequence or 0))
    elseif message.interruption then
      local reason = message.interruption.reason
      if reason == 'error' or reason == 'aborted' then
        M.notice(chat, '── this turn stopped after changing files; kept (rewind it to undo) ──')
      else
        M.notice(chat, '── a turn was interrupted here ──')
      end
    end
    return
  end
  for _, part in ipairs(message.content or {}) do
    if part.type == PART.TEXT then
      handlers[EVENT.AGENT_TOKEN](chat, { token = part.text })
    elseif part.type == PART.REASONING then
      handlers[EVENT.AGENT_REASONING](chat, { text = part.redacted and '(redacted)' or part.text })
    elseif part.type == PART.TOOL_CALL then
      handlers[EVENT.AGENT_TOOL_CALL](chat, { toolId = part.name, callId = part.id,
        toolInput = part.args })
    elseif part.type == PART.TOOL_RESULT then
      local name = (chat.tool_names or {})[part.toolCallId] or part.toolCallId
      append_block(chat, vim.list_extend({ string.format('◂ %s %s',
        format.one_line(name, 200), part.isError and '✗' or '✓') },
        format.body(part.result or '')), 'tool')
    elseif part.type == PART.MEDIA then
      append_block(chat, { '[media ' .. format.one_line(part.mimeType or '', 80) .. ' '
        .. format.one_line(part.name or '', 120) .. ']' }, 'tool')
    end
  end
end

return M
