--- The agent's plan (`update_plan`) as a checklist block in the chat buffer.
---
--- Each `agent:plan_updated` appends the whole list as a folded block (`[x]` done, `[~]` in
--- progress, `[ ]` to do); resuming a session shows the plan `resumeSession` returned.
local format = require('relavium.format')
local protocol = require('relavium.protocol')

local STATUS = protocol.PLAN_STATUS
local MARKS = {
  [STATUS.COMPLETED] = '[x]',
  [STATUS.IN_PROGRESS] = '[~]',
  [STATUS.PENDING] = '[ ]',
}

local M = {}

--- The checklist lines for a list of plan entries (the first line summarises progress).
function M.lines(entries, explanation)
  entries = type(entries) == 'table' and entries or {}
  if #entries == 0 then
    return { '▸ plan cleared' }
  end
  local done = 0
  for _, entry in ipairs(entries) do
    if entry.status == STATUS.COMPLETED then
      done = done + 1
    end
  end
  local lines = { string.format('▸ plan %d/%d done', done, #entries) }
  if type(explanation) == 'string' and explanation ~= '' then
    table.insert(lines, '    ' .. format.one_line(explanation, 500))
  end
  for _, entry in ipairs(entries) do
    local mark = MARKS[entry.status] or '[ ]'
    local priority = entry.priority == protocol.PLAN_PRIORITY.HIGH and ' (high)' or ''
    table.insert(lines, string.format('    %s %s%s', mark, format.one_line(entry.content, 500),
      priority))
  end
  return lines
end

--- Show a resumed session's plan below its transcript (nothing when there is none).
function M.show(chat, entries)
  if type(entries) ~= 'table' or #entries == 0 then
    return
  end
  local lines = M.lines(entries)
  chat.buffer:append_lines({ '' })
  chat.buffer:append_lines(lines, #lines > 1 and 'block' or nil)
  chat.block = nil
end

return M
