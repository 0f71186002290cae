--- `:RelaviumRewind [message]`: put the files the agent changed (and the conversation) back
--- to before one of the current chat's turns.
---
--- The server restores files through workspace/applyEdit, so each restored buffer can be
--- undone with `u`; files the user changed after the agent are reported, never overwritten.
--- The conversation continues in a fork of the session, opened as a new chat.
local chat_module = require('relavium.chat')
local client = require('relavium.client')
local format = require('relavium.format')
local protocol = require('relavium.protocol')
local render = require('relavium.render')

local M = {}

--- One line per turn in the picker: its message number, when, and the files it changed.
function M.describe(turn)
  local names = {}
  for _, file in ipairs(turn.files or {}) do
    table.insert(names, file.created and (file.path .. ' (new)') or file.path)
  end
  return string.format('before message %d · %s · %s', turn.userSequence or 0,
    format.one_line(turn.timestamp or '', 25), format.one_line(table.concat(names, ', '), 120))
end

--- What a rewind did, as the lines shown in the chat.
function M.summary(result, to_sequence)
  local lines = { string.format('⟲ rewound to before message %d', to_sequence) }
  local function list(label, items)
    if items and #items > 0 then
      table.insert(lines, string.format('  %s: %s', label, table.concat(items, ', ')))
    end
  end
  list('restored', result.restored)
  list('deleted', result.deleted)
  for _, problem in ipairs(result.conflicts or {}) do
    table.insert(lines, string.format('  conflict: %s %s', problem.path, problem.reason))
  end
  for _, problem in ipairs(result.failed or {}) do
    table.insert(lines, string.format('  not restored: %s (%s)', problem.path, problem.reason))
  end
  return lines
end

--- Rewind the chat's session to before message `to_sequence`.
function M.rewind(chat, to_sequence)
  client.request(protocol.REWIND, { sessionId = chat.session_id, toSequence = to_sequence },
    function(err, result)
      if err or type(result) ~= 'table' then
        render.request_error(chat, err or { message = 'no result' })
        return
      end
      for _, line in ipairs(M.summary(result, to_sequence)) do
        render.notice(chat, line)
      end
      if result.sessionId and result.sessionId ~= chat.session_id then
        render.notice(chat, '  the conversation continues in session ' .. result.sessionId)
        require('relavium.sessions').resume(result.sessionId)
      end
    end)
end

--- Pick a turn of the current chat (or take `to_sequence`) and rewind to before it.
function M.pick(to_sequence)
  local chat = chat_module.current()
  if not chat or not chat.session_id then
    vim.notify('relavium: no chat session to rewind', vim.log.levels.WARN)
    return
  end
  if to_sequence then
    M.rewind(chat, to_sequence)
    return
  end
  client.request(protocol.LIST_CHECKPOINTS, { sessionId = chat.session_id },
    function(err, result)
      if err or type(result) ~= 'table' then
        render.request_error(chat, err or { message = 'no result' })
        return
      end
      local turns = {}
      for index = #(result.checkpoints or {}), 1, -1 do
        table.insert(turns, result.checkpoints[index]) -- newest first
      end
      if #turns == 0 then
        vim.notify('relavium: no turn of this chat changed files (use :RelaviumRewind {message})',
          vim.log.levels.INFO)
        return
      end
      vim.ui.select(turns, {
        prompt = 'Rewind files and conversation to',
        kind = 'relavium_rewind',
        format_item = M.describe,
      }, function(choice)
        if choice then
          M.rewind(chat, choice.userSequence)
        end
      end)
    end)
end

return M
